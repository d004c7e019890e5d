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

use crate::backend::Devices;
use crate::output::write_file;
use crate::run_folder::{Request, RunFolder, read_tokenizer};
use anyhow::{Context, Result};
use prh_core::backend::burn::prelude::Backend;
use prh_core::backend::burn::tensor::backend::AutodiffBackend;
use prh_core::scene::SceneWorld;
use prh_core::scene::render_text::caption_tokenizer;
use prh_core::scene::theory::{LearnedVsTheory, TheoryProbe, describe_shares, paired_seed};
use prh_core::tasks::scene::{
    SceneModel, SceneTrainConfig, SceneTrained, export_views, train_scene,
};
use prh_core::text::tokenizer::TextTokenizer;
use std::path::{Path, PathBuf};

/// Trains the scene run `request` asks for (stages in [`prh_core::train`]) into its run
/// folder.
pub fn train<B: AutodiffBackend>(request: &Request, devices: Devices<B>) -> Result<()> {
    let folder = request.open::<SceneTrainConfig>()?;
    let out = run_in_folder::<B>(&folder, devices, None)?;
    eprintln!(
        "done: {} steps, last loss {:.4}; run folder {}",
        out.trained.steps,
        out.trained.last_loss,
        folder.dir.display()
    );
    let vs = &out.vs_theory;
    eprintln!(
        "against the predicted F: CKA {:.3}, sin-theta {:.3}; eigenspaces of K held (of F's): {}",
        vs.cka,
        vs.sin_theta_op,
        describe_shares(&vs.eigenspaces)
    );
    Ok(())
}

/// One scene run in its folder: writes the resolved config (and the caption tokenizer),
/// trains from the folder's checkpoint on one device per `run.data_parallel` replica, and
/// exports the states' embeddings. `label` names the progress bar (the demo runs four;
/// default: the folder's name).
pub fn run_in_folder<B: AutodiffBackend>(
    folder: &RunFolder<SceneTrainConfig>,
    devices: Devices<B>,
    label: Option<&str>,
) -> Result<SceneRun<B::InnerBackend>> {
    let (cfg, dir) = (&folder.cfg, &folder.dir);
    std::fs::create_dir_all(dir.join("checkpoints"))
        .with_context(|| format!("creating {}", dir.join("checkpoints").display()))?;
    let world = cfg.build_world()?;
    let modality = cfg.modality()?;
    let tokenizer = if cfg.needs_tokenizer() {
        Some(caption_tokenizer_for(cfg, &world, dir, folder.restart)?)
    } else {
        None
    };
    folder.write("config.toml", cfg.to_toml()?.as_bytes())?;
    if let Some(tok) = &tokenizer {
        folder.write("tokenizer.json", tok.to_json()?.as_bytes())?;
    }
    let mut sink = folder.sink(&cfg.run, label, cfg.views.batch_size)?;
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
        folder.resume.as_ref(),
        &mut sink,
        &devices.replicas(cfg.run.data_parallel),
    )?;
    sink.progress.finish();
    write_embeddings(dir, cfg, &world, &out.model, &devices.main())?;
    let probe = match &out.probe {
        Some(probe) => probe,
        None => &cfg.probe(&world)?,
    };
    let vs_theory = write_theory(dir, probe, &out.model, &devices.main())?;
    Ok(SceneRun {
        trained: out,
        vs_theory,
    })
}

/// A finished scene run: the trained model and where it stands against the prediction.
pub struct SceneRun<B: Backend> {
    /// What training returned.
    pub trained: SceneTrained<B>,
    /// The final model against F on the probe's renderings (`theory.json`).
    pub vs_theory: LearnedVsTheory,
}

/// `theory.json`: the final model against the predicted F on the renderings its
/// evaluations used (the run's `probe`, [`SceneTrainConfig::probe`]): CKA, sin-theta,
/// principal angles and which of K's eigenspaces it holds
/// ([`prh_core::scene::theory::eigenspace_shares`]).
fn write_theory<B: Backend>(
    dir: &Path,
    probe: &TheoryProbe,
    model: &SceneModel<B>,
    device: &B::Device,
) -> Result<LearnedVsTheory> {
    let vs = probe.compare(&model.embed(&probe.views, device)?)?;
    write_file(
        &dir.join("theory.json"),
        serde_json::to_string_pretty(&vs)? + "\n",
    )?;
    Ok(vs)
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
    if restart && own.exists() {
        read_tokenizer(&own)
    } else if !cfg.caption.tokenizer.is_empty() {
        read_tokenizer(&PathBuf::from(&cfg.caption.tokenizer))
    } else {
        Ok(caption_tokenizer(world)?)
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
    write_file(&ids_path, ids)
}
