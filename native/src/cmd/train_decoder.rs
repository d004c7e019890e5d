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
use crate::run_folder::{
    Request, RunFolder, load_scene, load_text, load_text_model, read_config, read_tokenizer,
    stored_config,
};
use anyhow::{Context, Result, bail};
use prh_core::backend::burn::prelude::Backend;
use prh_core::backend::burn::tensor::backend::AutodiffBackend;
use prh_core::models::caption_decoder::CaptionDecoder;
use prh_core::scene::render_text::caption_tokenizer;
use prh_core::scene::{Modality, SceneView};
use prh_core::tasks::decoder::{
    CaptionSource, CorpusCaptions, DecoderTask, DecoderTrainConfig, EncoderFingerprint,
    SceneCaptions,
};
use prh_core::tasks::text::{TrainConfig, embed_texts};
use prh_core::text::tokenizer::TextTokenizer;
use prh_core::train::TrainTask;
use prh_core::train::checkpoint::{Checkpoint, module_from_bytes};
use prh_core::train::train_on_devices;
use std::path::{Path, PathBuf};

/// Trains the decoder run `request` asks for into its run folder; a text encoder's
/// corpus is read from `data` (`--data`, `PRH_DATA`, ../shared/data).
pub fn train<B: AutodiffBackend>(
    request: &Request,
    data: Option<&Path>,
    devices: Devices<B>,
) -> Result<()> {
    let folder = request.open::<DecoderTrainConfig>()?;
    let (cfg, dir) = (&folder.cfg, &folder.dir);
    std::fs::create_dir_all(dir.join("checkpoints"))
        .with_context(|| format!("creating {}", dir.join("checkpoints").display()))?;
    let device = devices.main();
    let enc_dir = PathBuf::from(&cfg.decoder.encoder_run);
    // A text JEPA's run folder has spec.json; a scene run's does not.
    if enc_dir.join("spec.json").exists() {
        let (source, fp) = corpus_source::<B::InnerBackend>(cfg, &enc_dir, data, &device)?;
        eprintln!(
            "decoding {} (text encoder, d = {}, step {}; {} training captions) into {}",
            enc_dir.display(),
            fp.dim,
            fp.step,
            source.len(),
            dir.display()
        );
        let task = DecoderTask::new::<B::InnerBackend>(cfg, source, fp.dim);
        return train_task::<B, _>(&folder, task, fp, devices);
    }
    let (source, fp) = scene_source::<B::InnerBackend>(cfg, &enc_dir, &device)?;
    eprintln!(
        "decoding {} (caption encoder, d = {}, step {}) into {}",
        enc_dir.display(),
        fp.dim,
        fp.step,
        dir.display()
    );
    let task = DecoderTask::new::<B::InnerBackend>(cfg, source, fp.dim);
    train_task::<B, _>(&folder, task, fp, devices)
}

/// The scene captions of the scene-caption run `enc_dir`, and its fingerprint.
fn scene_source<I: Backend>(
    cfg: &DecoderTrainConfig,
    enc_dir: &Path,
    device: &I::Device,
) -> Result<(SceneCaptions<I>, EncoderFingerprint)> {
    let enc = load_scene::<I>(enc_dir, "decoder.encoder_run", device)?;
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
    let fp = EncoderFingerprint {
        run: cfg.decoder.encoder_run.clone(),
        step: enc.ck.meta.step,
        crc32: enc.ck.meta.crc32,
        dim: enc.model.embed(&[probe], device)?[0].len(),
    };
    let source = SceneCaptions::new(enc.model, enc.world, tokenizer, cfg.run.seed, device)?;
    Ok((source, fp))
}

/// Evaluation groups of a text decoder (first caption in, the others as references).
const EVAL_GROUPS: usize = 200;

/// The corpus captions of the text JEPA run `enc_dir` (its config's training split, e.g.
/// Multi30k English train, all captions; evaluated on the first groups of its eval split),
/// embedded once by its latest checkpoint, and its fingerprint.
fn corpus_source<I: Backend>(
    cfg: &DecoderTrainConfig,
    enc_dir: &Path,
    data: Option<&Path>,
    device: &I::Device,
) -> Result<(CorpusCaptions, EncoderFingerprint)> {
    let (spec, tok, ck) = load_text(enc_dir, "latest")?;
    let model = load_text_model::<I>(&spec, &ck, device)?;
    let stored: TrainConfig = stored_config(&ck, &enc_dir.join("checkpoints/latest.ckpt"))?;
    let train = super::train::load_corpus(&stored, data, false)?
        .context("the encoder's config names no training corpus")?;
    let eval = super::train::load_corpus(&stored, data, true)?.with_context(|| {
        format!(
            "{}: the encoder's config names no eval split (data.eval_split): the decoder is \
             evaluated on it",
            enc_dir.display()
        )
    })?;
    let texts: Vec<String> = train.texts().map(str::to_string).collect();
    let rows = embed_rows(&model, &spec, &tok, &texts, device)?;
    let ids = texts
        .iter()
        .map(|t| tok.encode(t))
        .collect::<prh_core::Result<Vec<_>>>()?;
    let groups: Vec<_> = eval
        .groups
        .iter()
        .filter(|g| g.texts.len() >= 2)
        .take(EVAL_GROUPS)
        .collect();
    let firsts: Vec<String> = groups.iter().map(|g| g.texts[0].clone()).collect();
    let eval_rows = embed_rows(&model, &spec, &tok, &firsts, device)?;
    let eval_set = eval_rows
        .into_iter()
        .zip(&groups)
        .map(|(z, g)| (z, g.texts[1..].to_vec()))
        .collect();
    let fp = EncoderFingerprint {
        run: cfg.decoder.encoder_run.clone(),
        step: ck.meta.step,
        crc32: ck.meta.crc32,
        dim: spec.d_model,
    };
    let source = CorpusCaptions::new(
        tok,
        ids.into_iter().zip(rows).collect(),
        eval_set,
        cfg.decoder.max_len,
    )?;
    Ok((source, fp))
}

/// The text encoder's representation of `texts` (pooled, before any projector: what is
/// compared across languages), one row each.
pub fn embed_rows<I: Backend>(
    model: &prh_core::models::text_encoder::TextEncoder<I>,
    spec: &prh_core::models::text_encoder::EncoderSpec,
    tok: &TextTokenizer,
    texts: &[String],
    device: &I::Device,
) -> Result<Vec<Vec<f64>>> {
    let flat = embed_texts(model, spec, tok, texts, 256, device)?;
    Ok(flat
        .chunks(spec.d_model)
        .map(|r| r.iter().map(|&x| f64::from(x)).collect())
        .collect())
}

/// Writes the folder's config, tokenizer and encoder fingerprint (refusing to continue a
/// decoder of another encoder checkpoint), trains, and reports the final evaluation.
fn train_task<B: AutodiffBackend, S: CaptionSource<B::InnerBackend> + Sync>(
    folder: &RunFolder<DecoderTrainConfig>,
    mut task: DecoderTask<S>,
    fingerprint: EncoderFingerprint,
    devices: Devices<B>,
) -> Result<()> {
    let (cfg, dir) = (&folder.cfg, &folder.dir);
    let fp_path = dir.join("encoder.json");
    if folder.restart && fp_path.exists() {
        let was = read_fingerprint(&fp_path)?;
        if !was.is_checkpoint(fingerprint.step, fingerprint.crc32) {
            bail!(
                "{}: this decoder was trained on {} at step {} (crc {:08x}), but it now holds \
                 step {} (crc {:08x}); start a new decoder run",
                fp_path.display(),
                was.run,
                was.step,
                was.crc32,
                fingerprint.step,
                fingerprint.crc32
            );
        }
    }
    folder.write("config.toml", cfg.to_toml()?.as_bytes())?;
    folder.write(
        "tokenizer.json",
        task.source.tokenizer().to_json()?.as_bytes(),
    )?;
    write_json(&fp_path, &fingerprint)?;
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
    let model = prh_core::backend::burn::module::AutodiffModule::valid(&out.model);
    let eval = prh_core::backend::read_now(
        "evaluating the decoder",
        TrainTask::<B>::evaluate(&mut task, &model, out.steps),
    )??;
    let scores: Vec<String> = eval.iter().map(|(k, v)| format!("{k} {v:.3}")).collect();
    eprintln!(
        "done: {} steps, last loss {:.4}; greedy captions of the encoder's own embeddings: {}; \
         run folder {}",
        out.steps,
        out.last_loss,
        scores.join(", "),
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
    /// The loaded checkpoint's model record (what `caption --export` ships).
    pub record: Vec<u8>,
}

impl<B: Backend> DecoderRun<B> {
    /// Refuses this decoder (loaded from `decoder_run`) unless it was trained on the
    /// encoder checkpoint `ck` of `text_run` (`what`: "encoder", "caption encoder"), with
    /// the command that trains one that is.
    pub fn check_encoder(
        &self,
        decoder_run: &Path,
        text_run: &Path,
        ck: &Checkpoint,
        what: &str,
    ) -> Result<()> {
        let fp = &self.fingerprint;
        if !fp.is_checkpoint(ck.meta.step, ck.meta.crc32) {
            bail!(
                "--decoder-run {} was trained on the {what} {} (step {}, crc {:08x}), not on \
                 --text-run {} (step {}, crc {:08x}): train a decoder on it with --set \
                 decoder.encoder_run={}",
                decoder_run.display(),
                fp.run,
                fp.step,
                fp.crc32,
                text_run.display(),
                ck.meta.step,
                ck.meta.crc32,
                text_run.display()
            );
        }
        Ok(())
    }
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
        record: ck.model,
    })
}
