//! The text-only caption decoder (paper §6's captioner, issue 23): `[task] kind =
//! "scene-decoder"` trains a [`CaptionDecoder`] to write the caption whose embedding a
//! frozen, separately trained text encoder (`decoder.encoder_run`) gives it. It never sees
//! a picture (or another language): at captioning time
//! ([`crate::experiments::captioner`]) the embedding comes from the other modality's
//! encoder through one fitted map.
//!
//! ```text
//! $ prh-native train --config configs/caption-decoder.toml \
//!       --set decoder.encoder_run=runs/demo/spectral_good_text --out runs/decoder-good
//! ```
//!
//! Where the captions come from is a [`CaptionSource`]: the scene world's renderer
//! ([`SceneCaptions`]: each step draws states from p(z) and renders each as an
//! uncorrupted caption, its template from q_text and its synonyms at random, embedded by
//! the frozen scene caption encoder) or a text corpus ([`CorpusCaptions`]: Multi30k's
//! English captions, embedded once by a frozen text JEPA). Each step adds Gaussian noise of
//! std `decoder.noise` to the [`condition`]ed embeddings (CapDec's noise injection, Nukrai
//! et al. 2022: it makes the decoder tolerant of the small misfit of a map from another
//! modality) and minimises the teacher-forced cross-entropy of the caption's tokens and
//! the end token.

use serde::{Deserialize, Serialize};

use crate::config::parse_toml;
use crate::models::caption_decoder::{CaptionDecoder, DecoderSpec, cond_tensor, condition};
use crate::rng::{Stream, generator, standard_normal};
use crate::scene::render_text::{caption, parse_caption};
use crate::scene::{Modality, SceneView, SceneWorld};
use crate::tasks::TaskConfig;
use crate::tasks::TaskKind;
use crate::tasks::scene::SceneModel;
use crate::text::caption_scores::{bleu, words};
use crate::text::tokenizer::TextTokenizer;
use crate::train::config::{OptimConfig, RunConfig};
use crate::train::{StepOutput, TrainTask};
use crate::{Error, Result};
use burn::prelude::Backend;
use burn::tensor::backend::AutodiffBackend;
use rand::Rng;

/// The `[decoder]` section: which encoder it decodes, its sizes and its training batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DecoderConfig {
    /// Run folder of the frozen caption encoder (`prh-native train` or `demo` output, a
    /// `scene-caption` run); the decoder run records its checkpoint's step and checksum.
    pub encoder_run: String,
    /// Transformer width.
    pub d_model: usize,
    /// Causal transformer layers.
    pub layers: usize,
    /// Attention heads (must divide `d_model`).
    pub heads: usize,
    /// Feed-forward width.
    pub d_ff: usize,
    /// Longest caption in tokens.
    pub max_len: usize,
    /// Captions per step.
    pub batch_size: usize,
    /// Std of the Gaussian noise added to each coordinate of the conditioning (whose
    /// coordinates have unit scale) during training; 0 = none.
    pub noise: f64,
    /// Beam width of the captions written at evaluation (1 = greedy).
    pub beam: usize,
}

impl Default for DecoderConfig {
    fn default() -> Self {
        Self {
            encoder_run: String::new(),
            d_model: 64,
            layers: 2,
            heads: 4,
            d_ff: 128,
            max_len: 24,
            batch_size: 64,
            noise: 0.1,
            beam: 3,
        }
    }
}

/// The whole configuration of a decoder run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DecoderTrainConfig {
    /// `scene-decoder`.
    pub task: TaskConfig,
    /// Run length, seed, logging, evaluation and checkpoint cadence (`objective` unused).
    pub run: RunConfig,
    /// The encoder decoded and the decoder's sizes.
    pub decoder: DecoderConfig,
    /// AdamW and its schedule.
    pub optim: OptimConfig,
}

impl Default for DecoderTrainConfig {
    fn default() -> Self {
        Self {
            task: TaskConfig {
                kind: TaskKind::SceneDecoder,
            },
            run: RunConfig::default(),
            decoder: DecoderConfig::default(),
            optim: OptimConfig::default(),
        }
    }
}

impl DecoderTrainConfig {
    /// Parses TOML text (`source` names it in errors) after `overrides`, and validates.
    pub fn from_toml(source: &str, text: &str, overrides: &[String]) -> Result<Self> {
        let cfg: DecoderTrainConfig = parse_toml(source, text, overrides)?;
        cfg.validate(source)?;
        Ok(cfg)
    }

    /// The config as TOML (saved in the run folder and its checkpoints).
    pub fn to_toml(&self) -> Result<String> {
        crate::config::to_toml(self)
    }

    /// Checks what serde cannot.
    pub fn validate(&self, source: &str) -> Result<()> {
        let bad = |field: &str, msg: &str| Err(Error::format(source, field, msg));
        let d = &self.decoder;
        if self.task.kind != TaskKind::SceneDecoder {
            return bad("task.kind", "expected \"scene-decoder\"");
        }
        if d.encoder_run.is_empty() {
            return bad(
                "decoder.encoder_run",
                "expected the run folder of a trained caption encoder (a scene-caption run), \
                 e.g. --set decoder.encoder_run=runs/demo/spectral_good_text",
            );
        }
        if d.heads == 0 || !d.d_model.is_multiple_of(d.heads) {
            return bad(
                "decoder.heads",
                "d_model must be a positive multiple of heads",
            );
        }
        if d.d_ff == 0 || d.max_len < 4 || d.batch_size == 0 || d.beam == 0 {
            return bad(
                "decoder",
                "expected d_ff, batch_size, beam >= 1 and max_len >= 4",
            );
        }
        if !(d.noise >= 0.0 && d.noise.is_finite()) {
            return bad("decoder.noise", "expected a finite std >= 0");
        }
        if self.run.steps == 0 {
            return bad("run.steps", "expected at least 1");
        }
        if self.run.data_parallel != 1 {
            return bad(
                "run.data_parallel",
                "the decoder trains on one replica: expected 1",
            );
        }
        if let Err(e) = self.run.check_plateau() {
            return bad("run.plateau_tol", &e);
        }
        Ok(())
    }

    /// The decoder's architecture for a `vocab`-token tokenizer and `cond_dim`-wide
    /// embeddings.
    pub fn spec(&self, vocab: usize, cond_dim: usize) -> DecoderSpec {
        let d = &self.decoder;
        DecoderSpec {
            vocab,
            cond_dim,
            d_model: d.d_model,
            layers: d.layers,
            heads: d.heads,
            d_ff: d.d_ff,
            max_len: d.max_len,
        }
    }
}

/// Which encoder checkpoint a decoder was trained on (`encoder.json` in its run folder):
/// a caption request with another encoder is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EncoderFingerprint {
    /// The encoder's run folder as configured.
    pub run: String,
    /// Its checkpoint's step.
    pub step: usize,
    /// Its checkpoint's CRC-32 (model and optimiser records).
    pub crc32: u32,
    /// Its embedding width.
    pub dim: usize,
}

impl EncoderFingerprint {
    /// Whether this is the fingerprint of the checkpoint at `step` with checksum `crc32`
    /// (a decoder decodes only the encoder checkpoint it was trained on).
    pub fn is_checkpoint(&self, step: usize, crc32: u32) -> bool {
        (self.step, self.crc32) == (step, crc32)
    }
}

/// Where a decoder's training captions and their frozen embeddings come from.
pub trait CaptionSource<I: Backend> {
    /// The tokenizer of the captions (the encoder's).
    fn tokenizer(&self) -> &TextTokenizer;
    /// Step `step`'s `n` captions as token ids, with their [`condition`]ed embeddings.
    ///
    /// # Shapes
    /// -> (`n` token sequences, `[n][e]`)
    #[allow(clippy::type_complexity)]
    fn batch(
        &self,
        seed: u64,
        step: usize,
        n: usize,
        device: &I::Device,
    ) -> Result<(Vec<Vec<u32>>, Vec<Vec<f64>>)>;
    /// Scores of the decoder's greedy captions of the evaluation set.
    fn evaluate(
        &self,
        decoder: &CaptionDecoder<I>,
        device: &I::Device,
    ) -> Result<Vec<(String, f64)>>;
    /// The evaluation score that selects the best checkpoint.
    fn best_metric(&self) -> &'static str;
}

/// The scene world's captions, embedded by a frozen scene caption encoder (on the
/// inference backend `I`); evaluated on the encoder's export captions (one per state).
pub struct SceneCaptions<I: Backend> {
    /// The frozen caption encoder (a scene-caption run's model).
    pub encoder: SceneModel<I>,
    /// The world of the encoder's run.
    pub world: SceneWorld,
    /// The caption tokenizer (the encoder's own for rendered captions).
    pub tokenizer: TextTokenizer,
    /// The evaluation set: one uncorrupted caption per state and its conditioning.
    eval: (Vec<SceneView>, Vec<Vec<f64>>),
}

impl<I: Backend> SceneCaptions<I> {
    /// The captions of `world` embedded by `encoder`, evaluated on the export captions of
    /// a run seeded `seed` ([`crate::tasks::scene::export_views`]).
    pub fn new(
        encoder: SceneModel<I>,
        world: SceneWorld,
        tokenizer: TextTokenizer,
        seed: u64,
        device: &I::Device,
    ) -> Result<Self> {
        let views = crate::tasks::scene::export_views(
            &world,
            Modality::Text,
            crate::scene::theory::paired_seed(seed),
        );
        let cond = condition(&encoder.embed(&views, device)?);
        Ok(Self {
            encoder,
            world,
            tokenizer,
            eval: (views, cond),
        })
    }

    /// Step `step`'s views: `n` uncorrupted text views of states drawn from p(z)
    /// (template from q_text, synonyms from the style seed), seeded by (seed, step).
    pub fn views(&self, seed: u64, step: usize, n: usize) -> Vec<SceneView> {
        let mut rng = generator(seed, Stream::Views, step as u64);
        (0..n)
            .map(|_| {
                let z = self.world.sample_state(&mut rng);
                let u = self.world.sample_nuisance(Modality::Text, &mut rng);
                SceneView::full(z, u, rng.random())
            })
            .collect()
    }
}

impl<I: Backend> CaptionSource<I> for SceneCaptions<I> {
    fn tokenizer(&self) -> &TextTokenizer {
        &self.tokenizer
    }

    fn batch(
        &self,
        seed: u64,
        step: usize,
        n: usize,
        device: &I::Device,
    ) -> Result<(Vec<Vec<u32>>, Vec<Vec<f64>>)> {
        let views = self.views(seed, step, n);
        let cond = condition(&self.encoder.embed(&views, device)?);
        let tokens = views
            .iter()
            .map(|v| self.tokenizer.encode(&caption(v)))
            .collect::<Result<_>>()?;
        Ok((tokens, cond))
    }

    /// Captions written from the *caption* encoder's embeddings (what the decoder is
    /// trained on): per-factor and all-factor accuracy of the parsed captions.
    fn evaluate(
        &self,
        decoder: &CaptionDecoder<I>,
        device: &I::Device,
    ) -> Result<Vec<(String, f64)>> {
        let (views, cond) = &self.eval;
        let captions = write_captions(decoder, &self.tokenizer, cond, 1, device)?;
        let acc = attribute_accuracy(views, &captions);
        let names = ["shape", "colour", "size", "position", "all"];
        Ok(names
            .iter()
            .zip(acc)
            .map(|(n, a)| (format!("caption_{n}"), a))
            .collect())
    }

    fn best_metric(&self) -> &'static str {
        "caption_all"
    }
}

/// A text corpus's captions (every caption of every training group, up to the decoder's
/// max_len tokens), embedded once by a frozen text JEPA; evaluated by corpus BLEU-4 of the
/// greedy captions of the evaluation groups' first captions against their other captions.
pub struct CorpusCaptions {
    /// The encoder's tokenizer.
    pub tokenizer: TextTokenizer,
    /// Training captions as token ids.
    captions: Vec<Vec<u32>>,
    /// Their conditioned embeddings.
    cond: Vec<Vec<f64>>,
    /// Evaluation: conditioning of each group's first caption, and the group's other
    /// captions as word lists.
    #[allow(clippy::type_complexity)]
    eval: (Vec<Vec<f64>>, Vec<Vec<Vec<String>>>),
}

impl CorpusCaptions {
    /// From training captions (token ids and their embeddings, row by row) and the
    /// evaluation groups (first caption's embedding, the others' texts). Captions over
    /// `max_len` tokens are left out (the decoder writes at most that many).
    pub fn new(
        tokenizer: TextTokenizer,
        train: Vec<(Vec<u32>, Vec<f64>)>,
        eval: Vec<(Vec<f64>, Vec<String>)>,
        max_len: usize,
    ) -> Result<Self> {
        let (captions, rows): (Vec<_>, Vec<_>) = train
            .into_iter()
            .filter(|(t, _)| t.len() <= max_len)
            .unzip();
        if captions.is_empty() {
            return Err(Error::invalid(format!(
                "decoder: no training caption of at most decoder.max_len = {max_len} tokens"
            )));
        }
        let (er, refs): (Vec<_>, Vec<_>) = eval
            .into_iter()
            .map(|(z, refs)| (z, refs.iter().map(|r| words(r)).collect::<Vec<_>>()))
            .unzip();
        Ok(Self {
            tokenizer,
            captions,
            cond: condition(&rows),
            eval: (condition(&er), refs),
        })
    }

    /// Training captions kept.
    pub fn len(&self) -> usize {
        self.captions.len()
    }

    /// Whether no caption was kept (never: [`Self::new`] refuses that).
    pub fn is_empty(&self) -> bool {
        self.captions.is_empty()
    }
}

impl<I: Backend> CaptionSource<I> for CorpusCaptions {
    fn tokenizer(&self) -> &TextTokenizer {
        &self.tokenizer
    }

    fn batch(
        &self,
        seed: u64,
        step: usize,
        n: usize,
        _device: &I::Device,
    ) -> Result<(Vec<Vec<u32>>, Vec<Vec<f64>>)> {
        let mut rng = generator(seed, Stream::Views, step as u64);
        let picks: Vec<usize> = (0..n)
            .map(|_| rng.random_range(0..self.captions.len()))
            .collect();
        Ok((
            picks.iter().map(|&i| self.captions[i].clone()).collect(),
            picks.iter().map(|&i| self.cond[i].clone()).collect(),
        ))
    }

    fn evaluate(
        &self,
        decoder: &CaptionDecoder<I>,
        device: &I::Device,
    ) -> Result<Vec<(String, f64)>> {
        let (cond, refs) = &self.eval;
        let caps = write_captions(decoder, &self.tokenizer, cond, 1, device)?;
        let cands: Vec<Vec<String>> = caps.iter().map(|c| words(c)).collect();
        Ok(vec![("caption_bleu4".into(), bleu(&cands, refs)[3])])
    }

    fn best_metric(&self) -> &'static str {
        "caption_bleu4"
    }
}

/// The decoder as a training task: a caption source and the decoder's settings.
pub struct DecoderTask<S> {
    /// Captions and their frozen embeddings.
    pub source: S,
    /// The decoder's architecture.
    pub spec: DecoderSpec,
    /// Batch, noise and beam.
    pub cfg: DecoderConfig,
    /// The run seed.
    pub seed: u64,
    /// The best checkpoint's metric (the source's).
    best: &'static str,
}

impl<S> DecoderTask<S> {
    /// The task of `cfg` on `source`, whose embeddings are `dim` wide.
    pub fn new<I: Backend>(cfg: &DecoderTrainConfig, source: S, dim: usize) -> Self
    where
        S: CaptionSource<I>,
    {
        Self {
            spec: cfg.spec(source.tokenizer().vocab_size(), dim),
            best: source.best_metric(),
            source,
            cfg: cfg.decoder.clone(),
            seed: cfg.run.seed,
        }
    }
}

/// Greedy / beam captions of conditioning rows as text (the tokenizer's decoding).
///
/// # Shapes
/// `cond [n][e]` -> `n` captions
pub fn write_captions<B: Backend>(
    decoder: &CaptionDecoder<B>,
    tokenizer: &TextTokenizer,
    cond: &[Vec<f64>],
    beam: usize,
    device: &B::Device,
) -> Result<Vec<String>> {
    decoder
        .generate(cond, beam, tokenizer.sep, device)?
        .iter()
        .map(|ids| tokenizer.decode(ids))
        .collect()
}

/// Per factor, the share of `captions` that name the true value of `views[i]`'s state,
/// and (last) the share naming all four right: `[shape, colour, size, position, all]`.
pub fn attribute_accuracy(views: &[SceneView], captions: &[String]) -> [f64; 5] {
    let mut right = [0usize; 5];
    for (v, c) in views.iter().zip(captions) {
        let parsed = parse_caption(c);
        let ok: Vec<bool> = (0..4).map(|f| parsed[f] == Some(v.state[f])).collect();
        for f in 0..4 {
            right[f] += usize::from(ok[f]);
        }
        right[4] += usize::from(ok.iter().all(|&b| b));
    }
    let n = views.len().max(1) as f64;
    right.map(|r| r as f64 / n)
}

impl<B: AutodiffBackend, S: CaptionSource<B::InnerBackend>> TrainTask<B> for DecoderTask<S> {
    type Model = CaptionDecoder<B>;

    fn init_model(&self, device: &B::Device) -> Result<CaptionDecoder<B>> {
        self.spec.init(device)
    }

    fn step(
        &mut self,
        model: &CaptionDecoder<B>,
        step: usize,
        device: &B::Device,
    ) -> Result<StepOutput<B>> {
        // 1. Captions and their frozen embeddings (no gradient reaches the encoder).
        let (tokens, mut cond) = self
            .source
            .batch(self.seed, step, self.cfg.batch_size, device)?;
        if self.cfg.noise > 0.0 {
            let mut rng = generator(self.seed ^ 0xdec0de, Stream::Views, step as u64);
            for x in cond.iter_mut().flatten() {
                *x += self.cfg.noise * standard_normal(&mut rng);
            }
        }
        // 2-3. Teacher-forced cross-entropy, the mean over target tokens.
        let tok = self.source.tokenizer();
        let (nll, count) = model.nll(cond_tensor::<B>(&cond, device), &tokens, tok.pad, tok.sep)?;
        let loss = nll.div_scalar(count.max(1) as f64);
        Ok(StepOutput {
            terms: vec![("ce", loss.clone())],
            loss,
            items: count,
            embedding_std: None,
        })
    }

    async fn evaluate(
        &mut self,
        model: &CaptionDecoder<B::InnerBackend>,
        _step: usize,
    ) -> Result<Vec<(String, f64)>> {
        let device = burn::module::Module::devices(model)
            .into_iter()
            .next()
            .unwrap_or_default();
        self.source.evaluate(model, &device)
    }

    fn best_metric(&self) -> Option<&str> {
        Some(self.best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_errors_name_the_field() {
        let err = |sets: &[&str]| {
            let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
            DecoderTrainConfig::from_toml("d.toml", "[task]\nkind = \"scene-decoder\"\n", &sets)
                .unwrap_err()
                .to_string()
        };
        assert!(err(&[]).contains("decoder.encoder_run"));
        let e = err(&["decoder.encoder_run=r", "decoder.heads=3"]);
        assert!(e.contains("d.toml") && e.contains("decoder.heads"), "{e}");
        let e = err(&["decoder.encoder_run=r", "run.data_parallel=2"]);
        assert!(e.contains("run.data_parallel"), "{e}");
        let ok = DecoderTrainConfig::from_toml(
            "d.toml",
            "[task]\nkind = \"scene-decoder\"\n[decoder]\nencoder_run = \"r\"\n",
            &[],
        )
        .unwrap();
        let back = DecoderTrainConfig::from_toml("d", &ok.to_toml().unwrap(), &[]).unwrap();
        assert_eq!(back, ok);
    }

    #[test]
    fn attribute_accuracy_counts_each_factor() {
        let v = [
            SceneView::full([0, 1, 2, 3], 0, 0),
            SceneView::full([1, 1, 0, 0], 0, 0),
        ];
        let c = [
            "a large green circle in the southeast".to_string(),
            "a small green circle in the northwest".to_string(),
        ];
        let acc = attribute_accuracy(&v, &c);
        assert_eq!(acc, [0.5, 1.0, 1.0, 1.0, 0.5]);
    }
}
