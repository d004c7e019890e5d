//! `prh-native train` for the text-only caption decoder (issue 23), chosen by the config's
//! `[task] kind = "scene-decoder"`: a decoder of a trained caption JEPA's embeddings.
//!
//! ```text
//! $ prh-native train --config configs/caption-decoder.toml \
//!       --set decoder.encoder_run=runs/demo/spectral_good_text --out runs/decoder-good
//! decoding runs/demo/spectral_good_text (caption encoder, d = 11, step 1400) into runs/decoder-good
//! ...
//! done: 1500 steps, last loss 0.3120; captions of the encoder's own embeddings: all four
//! attributes right 0.995 (shape 1.000, colour 1.000, size 0.995, position 1.000)
//! ```
//!
//! Run folder: `config.toml`, `tokenizer.json` (the encoder's), `encoder.json` (which
//! encoder checkpoint it decodes: `prh-native caption` refuses another), `metrics.jsonl`
//! (with `caption_*` evaluations), `checkpoints/latest.ckpt` and `best.ckpt`.

use crate::backend::Devices;
use crate::output::write_json;
use crate::run_folder::{Request, load_scene, read_config, read_tokenizer, stored_config};
use anyhow::{Context, Result, bail};
use prh_core::backend::burn::prelude::Backend;
use prh_core::backend::burn::tensor::backend::AutodiffBackend;
use prh_core::models::caption_decoder::CaptionDecoder;
use prh_core::scene::render_text::caption_tokenizer;
use prh_core::scene::{Modality, SceneView};
use prh_core::tasks::scene::decoder::{DecoderTask, DecoderTrainConfig, EncoderFingerprint};
use prh_core::text::tokenizer::TextTokenizer;
use prh_core::train::TrainTask;
use prh_core::train::checkpoint::{Checkpoint, module_from_bytes};
use prh_core::train::train_on_devices;
use std::path::{Path, PathBuf};

/// Trains the decoder run `request` asks for into its run folder.
pub fn train<B: AutodiffBackend>(request: &Request, devices: Devices<B>) -> Result<()> {
    let folder = request.open::<DecoderTrainConfig>()?;
    let (cfg, dir) = (&folder.cfg, &folder.dir);
    std::fs::create_dir_all(dir.join("checkpoints"))
        .with_context(|| format!("creating {}", dir.join("checkpoints").display()))?;
    let device = devices.main();
    let enc_dir = PathBuf::from(&cfg.decoder.encoder_run);
    let enc = load_scene::<B::InnerBackend>(&enc_dir, "decoder.encoder_run", &device)?;
    if enc.cfg.modality()? != Modality::Text {
        bail!(
            "decoder.encoder_run {}: an image run; the decoder reads a caption encoder's \
             embeddings (a scene-caption run), it never sees a picture",
            enc_dir.display()
        );
    }
    let tokenizer = match &enc.tokenizer {
        Some(t) => t.clone(),
        None => caption_tokenizer(&enc.world)?,
    };
    let probe = SceneView::full(enc.world.state(0), 0, 0);
    let dim = enc.model.embed(&[probe], &device)?[0].len();
    let fingerprint = EncoderFingerprint {
        run: cfg.decoder.encoder_run.clone(),
        step: enc.ck.meta.step,
        crc32: enc.ck.meta.crc32,
        dim,
    };
    let fp_path = dir.join("encoder.json");
    if folder.restart && fp_path.exists() {
        let was = read_fingerprint(&fp_path)?;
        if (was.step, was.crc32) != (fingerprint.step, fingerprint.crc32) {
            bail!(
                "{}: this decoder was trained on {} at step {} (crc {:08x}), but {} now holds \
                 step {} (crc {:08x}); start a new decoder run",
                fp_path.display(),
                was.run,
                was.step,
                was.crc32,
                enc_dir.display(),
                fingerprint.step,
                fingerprint.crc32
            );
        }
    }
    folder.write("config.toml", cfg.to_toml()?.as_bytes())?;
    folder.write("tokenizer.json", tokenizer.to_json()?.as_bytes())?;
    write_json(&fp_path, &fingerprint)?;
    eprintln!(
        "decoding {} (caption encoder, d = {dim}, step {}) into {}",
        enc_dir.display(),
        enc.ck.meta.step,
        dir.display()
    );
    let mut task = DecoderTask::new(cfg, enc.model, enc.world, tokenizer, dim, &device)?;
    let mut sink = folder.sink(&cfg.run, None, cfg.decoder.batch_size)?;
    let out = train_on_devices::<B, _>(
        &mut task,
        &cfg.run,
        &cfg.optim,
        &cfg.to_toml()?,
        folder.resume.as_ref(),
        &mut sink,
        &devices.replicas(1),
    )?;
    sink.progress.finish();
    let eval = TrainTask::<B>::evaluate(
        &mut task,
        &prh_core::backend::burn::module::AutodiffModule::valid(&out.model),
        out.steps,
    )?;
    let get = |k: &str| eval.iter().find(|(n, _)| n == k).map_or(f64::NAN, |x| x.1);
    eprintln!(
        "done: {} steps, last loss {:.4}; captions of the encoder's own embeddings: all four \
         attributes right {:.3} (shape {:.3}, colour {:.3}, size {:.3}, position {:.3}); run \
         folder {}",
        out.steps,
        out.last_loss,
        get("caption_all"),
        get("caption_shape"),
        get("caption_colour"),
        get("caption_size"),
        get("caption_position"),
        dir.display()
    );
    Ok(())
}

/// Reads a decoder run's `encoder.json`.
fn read_fingerprint(p: &Path) -> Result<EncoderFingerprint> {
    let bytes = std::fs::read(p).with_context(|| format!("reading {}", p.display()))?;
    serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "{}: expected {{\"run\", \"step\", \"crc32\", \"dim\"}} (the encoder a decoder run \
             decodes)",
            p.display()
        )
    })
}

/// A decoder run loaded for captioning.
pub struct DecoderRun<B: Backend> {
    /// Its config.
    pub cfg: DecoderTrainConfig,
    /// Its tokenizer (the encoder's).
    pub tokenizer: TextTokenizer,
    /// The encoder checkpoint it decodes.
    pub fingerprint: EncoderFingerprint,
    /// The decoder (its best checkpoint, else the latest).
    pub decoder: CaptionDecoder<B>,
}

/// Loads the decoder run folder `dir` (`flag` names it in errors).
pub fn load_decoder<B: Backend>(
    dir: &Path,
    flag: &str,
    device: &B::Device,
) -> Result<DecoderRun<B>> {
    let p = dir.join("config.toml");
    if !p.exists() {
        bail!(
            "{flag} {}: {} not found (expected a decoder run folder: prh-native train with \
             task.kind = \"scene-decoder\")",
            dir.display(),
            p.display()
        );
    }
    let cfg = DecoderTrainConfig::from_toml(&p.display().to_string(), &read_config(&p)?, &[])
        .with_context(|| format!("{flag} {}: not a decoder run", dir.display()))?;
    let tokenizer = read_tokenizer(&dir.join("tokenizer.json"))?;
    let fingerprint = read_fingerprint(&dir.join("encoder.json"))?;
    let mut ck_path = dir.join("checkpoints").join("best.ckpt");
    if !ck_path.exists() {
        ck_path = dir.join("checkpoints").join("latest.ckpt");
    }
    if !ck_path.exists() {
        bail!(
            "{flag} {}: {} not found: the decoder has not saved a checkpoint yet",
            dir.display(),
            ck_path.display()
        );
    }
    let ck = Checkpoint::read(&ck_path)?;
    let stored: DecoderTrainConfig = stored_config(&ck, &ck_path)?;
    let spec = cfg.spec(tokenizer.vocab_size(), fingerprint.dim);
    if stored.spec(spec.vocab, spec.cond_dim) != spec {
        bail!(
            "{}: checkpoint of another decoder config than {}",
            ck_path.display(),
            p.display()
        );
    }
    let decoder = module_from_bytes::<B, _>(spec.init::<B>(device)?, &ck.model, device)
        .with_context(|| format!("loading {}", ck_path.display()))?;
    Ok(DecoderRun {
        cfg,
        tokenizer,
        fingerprint,
        decoder,
    })
}
