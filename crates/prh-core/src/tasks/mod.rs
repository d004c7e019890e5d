//! **Wing `tasks`**: what `prh-native train` trains — a text JEPA (good / bad views,
//! next-token) on a corpus, a scene-world JEPA (image or caption), and the exported bundle
//! of a trained text encoder. Each is a [`crate::train::TrainTask`]. Also the work that
//! runs the other wings on a burn backend: pretrained checkpoints (`pretrained`) and the
//! metrics' kernel pass on a GPU (`gram_device`).
//! May use: every wing below it (`linalg` .. `train`).

pub mod bundle;
pub mod decoder;
pub mod gram_device;
pub mod pretrained;
pub mod scene;
pub mod text;

use serde::{Deserialize, Serialize};

use crate::Result;
use crate::config::parse_toml;

/// Which model a `prh-native train` config trains; the rest of the file is read by that
/// task's config type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TaskKind {
    /// A text encoder on a corpus ([`TrainConfig`]).
    #[default]
    Text,
    /// The scene world's image JEPA ([`crate::tasks::scene::SceneTrainConfig`]).
    SceneImage,
    /// The scene world's caption JEPA ([`crate::tasks::scene::SceneTrainConfig`]).
    SceneCaption,
    /// A text-only caption decoder of a trained caption JEPA
    /// ([`crate::tasks::decoder::DecoderTrainConfig`]).
    SceneDecoder,
}

/// The `[task]` section every training config shares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct TaskConfig {
    /// `text` (default), `scene-image`, `scene-caption` or `scene-decoder`.
    pub kind: TaskKind,
}

/// Reads only `task.kind` of a config (after `overrides`), so the caller can pick the
/// config type that parses the rest.
pub fn task_kind(source: &str, text: &str, overrides: &[String]) -> Result<TaskKind> {
    /// Every other section is ignored here (its own type checks it).
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Peek {
        task: TaskConfig,
    }
    Ok(parse_toml::<Peek>(source, text, overrides)?.task.kind)
}
