//! `prh-native train` for the scene world's JEPAs (issue 7): the image JEPA and the
//! caption JEPA, run exactly like the text encoders, chosen by the config's
//! `[task] kind = "scene-image" | "scene-caption"`.
//!
//! ```text
//! $ prh-native train --config configs/image-good.toml --out runs/image-good
//! step 10/600 loss 1.0893 4.10 steps/s
//! ...
//! done: 600 steps, last loss 0.1234; run folder runs/image-good
//! $ prh-native train --config configs/image-good.toml --out runs/ig --set run.stop_at=300
//! $ prh-native train --resume runs/ig                        # continues exactly
//! ```
//!
//! Run folder: `config.toml` (resolved), `tokenizer.json` (caption runs),
//! `metrics.jsonl`, `checkpoints/latest.ckpt` (atomic), `embeddings.npy` (one
//! uncorrupted rendering per world state, embedded by the final model, `[n_states, d]`)
//! and `embeddings_ids.txt` (the state of each row: shape colour size position).

use super::train::{Args, FsSink, new_run_dir};
use anyhow::{Context, Result, bail};
use prh_core::backend::burn::prelude::Backend;
use prh_core::backend::burn::tensor::backend::AutodiffBackend;
use prh_core::scene::SceneWorld;
use prh_core::scene::render_text::caption_tokenizer;
use prh_core::scene::theory::paired_seed;
use prh_core::tasks::TaskKind;
use prh_core::tasks::scene::{
    SceneModel, SceneTrainConfig, SceneTrained, export_views, train_scene,
};
use prh_core::tasks::task_kind;
use prh_core::text::tokenizer::TextTokenizer;
use prh_core::train::checkpoint::{Checkpoint, write_atomic};
use std::path::{Path, PathBuf};

/// Whether the run `args` names is a scene task (its config's `task.kind`, after
/// `--set`). Unreadable or malformed configs answer no: the text path reports them.
pub fn is_scene(args: &Args) -> bool {
    let path = match (&args.resume, &args.config) {
        (Some(dir), _) => dir.join("config.toml"),
        (None, Some(p)) => p.clone(),
        (None, None) => return false,
    };
    let Ok(text) = std::fs::read_to_string(&path) else {
        return false;
    };
    matches!(
        task_kind(&path.display().to_string(), &text, &args.set),
        Ok(TaskKind::SceneImage | TaskKind::SceneCaption)
    )
}

/// A config file's text. (An empty file never gets here: its `task.kind` is `text`, so
/// the text trainer reports it.)
fn read_text(p: &Path) -> Result<String> {
    std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))
}

/// The resolved config, run folder and (on `--resume`) checkpoint of a scene run.
fn locate(args: &Args) -> Result<(SceneTrainConfig, PathBuf, Option<Checkpoint>)> {
    if let Some(dir) = &args.resume {
        let p = dir.join("config.toml");
        // A resumed run goes to the end unless told otherwise.
        let sets: Vec<String> = std::iter::once("run.stop_at=0".to_string())
            .chain(args.set.iter().cloned())
            .collect();
        let cfg = SceneTrainConfig::from_toml(&p.display().to_string(), &read_text(&p)?, &sets)?;
        let ck_path = dir.join("checkpoints").join("latest.ckpt");
        if !ck_path.exists() {
            eprintln!(
                "{}: no checkpoint yet (the run stopped before its first one): restarting from \
                 step 0 with the saved config",
                ck_path.display()
            );
            return Ok((cfg, dir.clone(), None));
        }
        let ck = Checkpoint::read(&ck_path)?;
        // burn's record loading panics on another architecture: compare first.
        let source = format!("{} (stored config)", ck_path.display());
        let stored = SceneTrainConfig::from_toml(&source, &ck.meta.config, &[])?;
        if !cfg.same_model(&stored) {
            bail!(
                "{}: checkpoint of another model config: it was written for {:?} / {:?}, but \
                 {} says {:?} / {:?}",
                ck_path.display(),
                stored.task.kind,
                (&stored.image, &stored.caption),
                p.display(),
                cfg.task.kind,
                (&cfg.image, &cfg.caption)
            );
        }
        return Ok((cfg, dir.clone(), Some(ck)));
    }
    let p = args.config.as_ref().context("--config is required")?;
    let cfg = SceneTrainConfig::from_toml(&p.display().to_string(), &read_text(p)?, &args.set)?;
    Ok((cfg, new_run_dir(args, p)?, None))
}

/// Trains the scene run of `args` (stages in [`prh_core::train`]) into its run folder.
pub fn train_on<B: AutodiffBackend>(args: &Args, device: B::Device) -> Result<()> {
    let (cfg, dir, resume) = locate(args)?;
    let out = run_in_folder::<B>(
        &cfg,
        &dir,
        resume.as_ref(),
        args.resume.is_some(),
        &device,
        None,
    )?;
    eprintln!(
        "done: {} steps, last loss {:.4}; run folder {}",
        out.steps,
        out.last_loss,
        dir.display()
    );
    Ok(())
}

/// One scene run in `dir`: writes the resolved config (and the caption tokenizer), trains
/// from `resume` (`restart`: this continues a run, so metrics after its checkpoint are
/// dropped and its own tokenizer is read back), and exports the states' embeddings.
/// `label` names the progress bar (the demo runs four).
pub fn run_in_folder<B: AutodiffBackend>(
    cfg: &SceneTrainConfig,
    dir: &Path,
    resume: Option<&Checkpoint>,
    restart: bool,
    device: &B::Device,
    label: Option<&str>,
) -> Result<SceneTrained<B::InnerBackend>> {
    std::fs::create_dir_all(dir.join("checkpoints"))
        .with_context(|| format!("creating {}", dir.join("checkpoints").display()))?;
    let world = cfg.build_world()?;
    let modality = cfg.modality()?;
    let tokenizer = if cfg.needs_tokenizer() {
        Some(caption_tokenizer_for(cfg, &world, dir, restart)?)
    } else {
        None
    };
    write_atomic(&dir.join("config.toml"), cfg.to_toml()?.as_bytes())?;
    if let Some(tok) = &tokenizer {
        write_atomic(&dir.join("tokenizer.json"), tok.to_json()?.as_bytes())?;
    }
    let start_step = resume.map_or(0, |c| c.meta.step);
    let name = dir
        .file_name()
        .map_or_else(|| "train".into(), |n| n.to_string_lossy().into_owned());
    let mut sink = FsSink::open(
        dir,
        restart,
        start_step,
        &cfg.run,
        label.unwrap_or(&name),
        cfg.views.batch_size,
    )?;
    eprintln!(
        "training the {:?} JEPA on {:?} views ({} world states, d = {}) into {}",
        modality,
        cfg.view_kind()?,
        world.n_states(),
        cfg.d(),
        dir.display()
    );
    let out = train_scene::<B>(
        cfg,
        &world,
        tokenizer.as_ref(),
        resume,
        &mut sink,
        &vec![device.clone(); cfg.run.data_parallel.max(1)],
    )?;
    sink.progress.finish();
    write_embeddings(dir, cfg, &world, &out.model, device)?;
    Ok(out)
}

/// The caption tokenizer: the run's own when it continues, else the configured file,
/// else trained on the grammar's texts.
fn caption_tokenizer_for(
    cfg: &SceneTrainConfig,
    world: &SceneWorld,
    dir: &Path,
    restart: bool,
) -> Result<TextTokenizer> {
    let own = dir.join("tokenizer.json");
    let file = if restart && own.exists() {
        Some(own)
    } else if !cfg.caption.tokenizer.is_empty() {
        Some(PathBuf::from(&cfg.caption.tokenizer))
    } else {
        None
    };
    match file {
        Some(p) => {
            let bytes = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
            Ok(TextTokenizer::from_bytes(&p.display().to_string(), &bytes)?)
        }
        None => Ok(caption_tokenizer(world)?),
    }
}

/// `embeddings.npy` `[n_states, d]` (row i: state i, one uncorrupted rendering drawn as
/// the demo's paired evaluation set draws it) and `embeddings_ids.txt`.
fn write_embeddings<B: Backend>(
    dir: &Path,
    cfg: &SceneTrainConfig,
    world: &SceneWorld,
    model: &SceneModel<B>,
    device: &B::Device,
) -> Result<()> {
    let views = export_views(world, cfg.modality()?, paired_seed(cfg.run.seed));
    let rows = model.embed(&views, device)?;
    let d = rows.first().map_or(0, Vec::len);
    let flat: Vec<f64> = rows.into_iter().flatten().collect();
    let path = dir.join("embeddings.npy");
    prh_core::formats::features::write_npy(&path, &[views.len(), d], &flat)
        .with_context(|| format!("writing {}", path.display()))?;
    let ids: String = views
        .iter()
        .map(|v| world.describe(&v.state).join(" ") + "\n")
        .collect();
    let ids_path = dir.join("embeddings_ids.txt");
    std::fs::write(&ids_path, ids).with_context(|| format!("writing {}", ids_path.display()))
}
