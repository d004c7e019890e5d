//! A JEPA run on the scene world (paper §3–4 with pixels or captions, issue 7): its typed
//! config, the task it builds, training through the shared loop and embedding. This is
//! what `prh-native train` runs when a config says `[task] kind = "scene-image"` or
//! `"scene-caption"`, and what `prh-native demo` runs four times, so the image JEPA has
//! one way to be configured.
//!
//! ```text
//! $ prh-native train --config configs/image-good.toml --out runs/image-good
//! $ prh-native train --config configs/image-good.toml --out runs/ig --set run.stop_at=100
//! $ prh-native train --resume runs/ig        # continues exactly
//! ```
//!
//! Sections: `[task]`, `[run]` (`objective = "good" | "bad"` picks the views), `[loss]`
//! and `[optim]` are the text config's own types with the same defaults; `[world]`,
//! `[views]`, `[image]` and `[caption]` are the scene's. Every field has a default, so a
//! file names only what it changes; unknown keys are errors naming the nearest valid key.

pub mod task;

use serde::{Deserialize, Serialize};

use crate::config::parse_toml;
use crate::models::image_encoder::{
    ImageEncoder, ImageEncoderConfig, closed_form_head, embed_captions, embed_views,
};
use crate::models::symbolic_encoder::{SymbolicEncoder, SymbolicEncoderConfig, embed_symbols};
use crate::models::text_encoder::{EncoderSpec, TextEncoder};
use crate::scene::theory::TheoryProbe;
use crate::scene::{Modality, SceneConfig, SceneView, SceneWorld};
use crate::tasks::TaskConfig;
use crate::tasks::TaskKind;
use crate::text::tokenizer::TextTokenizer;
use crate::theory::view_kind::ViewKind;
use crate::train::checkpoint::Checkpoint;
use crate::train::config::OptimConfig;
use crate::train::config::RunConfig;
use crate::train::config::{LossConfig, LossKind};
use crate::train::data_parallel::check_split;
use crate::train::{RunSink, train_on_devices};
use crate::{Error, Result};
use burn::module::AutodiffModule;
use burn::prelude::Backend;
use burn::tensor::backend::AutodiffBackend;
use task::{Captions, Pixels, SceneJepaTask, SceneViewSampler, Symbols};

/// What the encoder observes of a view (`views.observation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Observation {
    /// The modality's rendering: a 32x32 picture (`scene-image`) or a caption
    /// (`scene-caption`).
    #[default]
    Rendered,
    /// A one-hot code of what the view shows ([`crate::models::symbolic_encoder`]), from which the
    /// predicted representation is linear: tests objective and optimiser without the
    /// encoder's feature learning.
    Symbolic,
}

impl Observation {
    /// The config spelling.
    pub fn name(self) -> &'static str {
        match self {
            Observation::Rendered => "rendered",
            Observation::Symbolic => "symbolic",
        }
    }
}

/// How views are drawn (paper §3: good = two renderings of one state, bad = two
/// corruptions of one rendering; which one is `run.objective`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SceneViewsConfig {
    /// `rendered` (pictures or captions) or `symbolic` (one-hot codes of the views).
    pub observation: Observation,
    /// Views per state (all global: each is pulled to their mean).
    pub views: usize,
    /// States per batch.
    pub batch_size: usize,
}

impl Default for SceneViewsConfig {
    fn default() -> Self {
        Self {
            observation: Observation::Rendered,
            views: 4,
            batch_size: 64,
        }
    }
}

/// The caption encoder (the shared BERT-style [`crate::models::text_encoder::TextEncoder`], mean
/// pooling, a projector to `out_dim`) and its tokenizer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CaptionConfig {
    /// Transformer width.
    pub d_model: usize,
    /// Transformer layers (0: a bag of embeddings, the token and position embeddings
    /// layer-normalised, mean-pooled and projected).
    pub layers: usize,
    /// Attention heads (must divide `d_model`).
    pub heads: usize,
    /// Feed-forward width.
    pub d_ff: usize,
    /// Longest caption in tokens (learned positions; the grammar's captions are shorter).
    pub max_len: usize,
    /// Embedding width after the projector (0: the world's d).
    pub out_dim: usize,
    /// Existing `tokenizer.json` to load ("" = build
    /// [`crate::scene::render_text::caption_tokenizer`]'s).
    pub tokenizer: String,
}

impl Default for CaptionConfig {
    fn default() -> Self {
        Self {
            d_model: 64,
            layers: 2,
            heads: 4,
            d_ff: 128,
            max_len: 24,
            out_dim: 0,
            tokenizer: String::new(),
        }
    }
}

/// The whole configuration of a scene JEPA run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SceneTrainConfig {
    /// `scene-image` or `scene-caption`.
    pub task: TaskConfig,
    /// Run length, seed, objective (`good` / `bad` views) and logging cadence.
    pub run: RunConfig,
    /// The scene world (sizes, visibilities, seed).
    pub world: SceneConfig,
    /// View sampling.
    pub views: SceneViewsConfig,
    /// Image encoder sizes (`scene-image`).
    pub image: ImageEncoderConfig,
    /// Caption encoder sizes and tokenizer (`scene-caption`).
    pub caption: CaptionConfig,
    /// Symbol encoder sizes (`views.observation = "symbolic"`, either modality).
    pub symbolic: SymbolicEncoderConfig,
    /// JEPA loss (invariance + lambda SIGReg).
    pub loss: LossConfig,
    /// AdamW and its schedule.
    pub optim: OptimConfig,
}

impl Default for SceneTrainConfig {
    fn default() -> Self {
        Self {
            task: TaskConfig {
                kind: TaskKind::SceneImage,
            },
            run: RunConfig::default(),
            world: SceneConfig::default(),
            views: SceneViewsConfig::default(),
            image: ImageEncoderConfig::default(),
            caption: CaptionConfig::default(),
            symbolic: SymbolicEncoderConfig::default(),
            loss: LossConfig::default(),
            optim: OptimConfig::default(),
        }
    }
}

impl SceneTrainConfig {
    /// Parses TOML text (`source` names it in errors) after `overrides` (`key.path=value`),
    /// fills the `out_dim = 0` widths with the world's d, and validates.
    pub fn from_toml(source: &str, text: &str, overrides: &[String]) -> Result<Self> {
        let mut cfg: SceneTrainConfig = parse_toml(source, text, overrides)?;
        cfg.resolve();
        cfg.validate(source)?;
        Ok(cfg)
    }

    /// Replaces `out_dim = 0` by d, so the saved config states the width used.
    pub fn resolve(&mut self) {
        let d = self.d();
        if self.image.out_dim == 0 {
            self.image.out_dim = d;
        }
        if self.caption.out_dim == 0 {
            self.caption.out_dim = d;
        }
        if self.symbolic.out_dim == 0 {
            self.symbolic.out_dim = d;
        }
    }

    /// The resolved config as TOML (saved in each run folder and checkpoint).
    pub fn to_toml(&self) -> Result<String> {
        crate::config::to_toml(self)
    }

    /// Representation dimension d = sum_f (|values of f| - 1): the single-factor
    /// directions, the top of the good-view spectrum (paper §2).
    pub fn d(&self) -> usize {
        self.world
            .cardinality
            .iter()
            .map(|c| c.saturating_sub(1))
            .sum()
    }

    /// The modality the task observes.
    pub fn modality(&self) -> Result<Modality> {
        match self.task.kind {
            TaskKind::SceneImage => Ok(Modality::Image),
            TaskKind::SceneCaption => Ok(Modality::Text),
            TaskKind::Text => Err(Error::invalid(
                "task.kind = \"text\" is read by config::TrainConfig, not the scene config",
            )),
            TaskKind::SceneDecoder => Err(Error::invalid(
                "task.kind = \"scene-decoder\" is read by tasks::decoder::DecoderTrainConfig, not the \
                 scene JEPA config",
            )),
        }
    }

    /// Good or bad views, from `run.objective`.
    pub fn view_kind(&self) -> Result<ViewKind> {
        match self.run.objective {
            kind @ (ViewKind::Good | ViewKind::Bad) => Ok(kind),
            ViewKind::NextToken => Err(Error::invalid(
                "run.objective: scene tasks are JEPAs, expected `good` or `bad`",
            )),
        }
    }

    /// Checks what serde cannot: task and objective, the world, positive sizes.
    pub fn validate(&self, source: &str) -> Result<()> {
        let bad = |field: &str, msg: String| Err(Error::format(source, field, msg));
        if let Err(e) = self.modality() {
            return bad("task.kind", e.to_string());
        }
        if let Err(e) = self.view_kind() {
            return bad("run.objective", e.to_string());
        }
        if let Err(e) = SceneWorld::new(self.world.clone()) {
            return bad("world", e.to_string());
        }
        if let Err(e) = self.run.check_plateau() {
            return bad("run.plateau_tol", e);
        }
        if self.run.steps == 0 {
            return bad("run.steps", "expected at least 1".into());
        }
        if self.views.views < 2 {
            return bad(
                "views.views",
                "expected at least 2 (the invariance term pulls views together)".into(),
            );
        }
        if self.views.batch_size < 2 {
            return bad(
                "views.batch_size",
                "expected at least 2 (SIGReg needs a batch)".into(),
            );
        }
        if self.loss.slices == 0 || self.loss.knots < 2 {
            return bad("loss.slices", "expected slices >= 1 and knots >= 2".into());
        }
        if let Err(e) = check_split(self.run.data_parallel, self.views.batch_size) {
            return bad("run.data_parallel", e.to_string());
        }
        if self.views.observation == Observation::Symbolic {
            if self.symbolic.hidden == 0 || self.symbolic.out_dim == 0 {
                return bad("symbolic", "expected hidden and out_dim >= 1".into());
            }
            return Ok(());
        }
        match self.modality()? {
            Modality::Image => {
                if let Err(e) = self.image.check() {
                    return bad("image", e.to_string());
                }
                if self.image.features > 0 && self.loss.kind != LossKind::Spectral {
                    return bad(
                        "image.features",
                        format!(
                            "a closed-form head (features = {}) is the spectral loss's \
                             minimiser; with loss.kind = {:?} set image.features = 0",
                            self.image.features, self.loss.kind
                        ),
                    );
                }
            }
            Modality::Text => {
                let c = &self.caption;
                if c.heads == 0 || !c.d_model.is_multiple_of(c.heads) {
                    return bad(
                        "caption.heads",
                        "d_model must be a positive multiple of heads".into(),
                    );
                }
                if c.d_ff == 0 || c.out_dim == 0 || c.max_len < 4 {
                    return bad(
                        "caption",
                        "expected d_ff, out_dim >= 1 and max_len >= 4 (layers = 0: a bag of embeddings)".into(),
                    );
                }
            }
        }
        Ok(())
    }

    /// The scene world the config describes.
    pub fn build_world(&self) -> Result<SceneWorld> {
        SceneWorld::new(self.world.clone())
    }

    /// The view sampler of this run's modality and view kind.
    pub fn sampler(&self, world: &SceneWorld) -> Result<SceneViewSampler> {
        Ok(SceneViewSampler {
            world: world.clone(),
            modality: self.modality()?,
            kind: self.view_kind()?,
            views: self.views.views,
            batch: self.views.batch_size,
        })
    }

    /// What the run's evaluations compare the encoder with: the predicted F of its
    /// modality and view kind in dimension d ([`TheoryProbe`]).
    pub fn probe(&self, world: &SceneWorld) -> Result<TheoryProbe> {
        TheoryProbe::new(
            world,
            self.modality()?,
            self.view_kind()?,
            self.d(),
            self.run.seed,
        )
    }

    /// The image JEPA task (pictures) of this config.
    pub fn image_task(&self, world: &SceneWorld) -> Result<SceneJepaTask<Pixels>> {
        Ok(SceneJepaTask {
            sampler: self.sampler(world)?,
            observer: Pixels {
                model: self.image.clone(),
            },
            loss: self.loss.clone(),
            seed: self.run.seed,
            probe: Some(self.probe(world)?),
        })
    }

    /// The caption encoder's architecture for a vocabulary of `vocab` tokens.
    pub fn caption_spec(&self, vocab: usize) -> EncoderSpec {
        let c = &self.caption;
        EncoderSpec {
            vocab,
            d_model: c.d_model,
            layers: c.layers,
            heads: c.heads,
            d_ff: c.d_ff,
            max_len: c.max_len,
            cls_pooling: false,
            projector_dim: c.out_dim,
            dropout: 0.0,
            causal: false,
        }
    }

    /// The caption JEPA task of this config with `tokenizer`.
    pub fn caption_task(
        &self,
        world: &SceneWorld,
        tokenizer: &TextTokenizer,
    ) -> Result<SceneJepaTask<Captions>> {
        Ok(SceneJepaTask {
            sampler: self.sampler(world)?,
            observer: Captions {
                spec: self.caption_spec(tokenizer.vocab_size()),
                tokenizer: tokenizer.clone(),
            },
            loss: self.loss.clone(),
            seed: self.run.seed,
            probe: Some(self.probe(world)?),
        })
    }

    /// The symbol JEPA task of this config.
    pub fn symbolic_task(&self, world: &SceneWorld) -> Result<SceneJepaTask<Symbols>> {
        Ok(SceneJepaTask {
            sampler: self.sampler(world)?,
            observer: Symbols {
                model: self.symbolic.clone(),
                world: world.clone(),
                modality: self.modality()?,
            },
            loss: self.loss.clone(),
            seed: self.run.seed,
            probe: Some(self.probe(world)?),
        })
    }

    /// Whether a checkpoint written under `other` has this config's architecture (burn's
    /// record loading panics on a mismatch, so this is checked first).
    pub fn same_model(&self, other: &SceneTrainConfig) -> bool {
        let observation = self.views.observation;
        self.task == other.task
            && observation == other.views.observation
            && match (observation, self.task.kind) {
                (Observation::Symbolic, _) => {
                    self.symbolic == other.symbolic
                        && self.world.cardinality == other.world.cardinality
                        && self.world.nuisance == other.world.nuisance
                }
                (_, TaskKind::SceneCaption) => self.caption == other.caption,
                _ => self.image == other.image,
            }
    }

    /// Whether the run needs the caption tokenizer (a caption encoder of rendered text).
    pub fn needs_tokenizer(&self) -> bool {
        self.task.kind == TaskKind::SceneCaption && self.views.observation == Observation::Rendered
    }
}

/// The states a run's embeddings export holds: for every state z (in
/// [`SceneWorld::state`]'s order), one uncorrupted rendering of modality `m` with its
/// nuisance drawn from q_m, seeded.
pub fn export_views(world: &SceneWorld, m: Modality, seed: u64) -> Vec<SceneView> {
    let (image, text) = crate::scene::theory::paired_views(world, seed);
    match m {
        Modality::Image => image,
        Modality::Text => text,
    }
}

/// A trained (or freshly loaded) scene encoder of either modality (boxed: the two
/// differ in size by kilobytes).
#[derive(Debug)]
pub enum SceneModel<B: Backend> {
    /// The image JEPA's patch encoder.
    Image(Box<ImageEncoder<B>>),
    /// The caption JEPA's text encoder, with the tokenizer it reads.
    Caption(Box<(TextEncoder<B>, TextTokenizer)>),
    /// A symbol encoder of either modality, with the world and modality that code views.
    Symbolic(Box<(SymbolicEncoder<B>, SceneWorld, Modality)>),
}

impl<B: Backend> SceneModel<B> {
    /// Embeds views of the model's modality (inference, chunks of 256).
    ///
    /// # Shapes
    /// `views [n]` -> `n` rows of `out_dim` f64
    pub fn embed(&self, views: &[SceneView], device: &B::Device) -> Result<Vec<Vec<f64>>> {
        match self {
            SceneModel::Image(m) => embed_views(m, views, device),
            SceneModel::Caption(c) => embed_captions(&c.0, &c.1, views, device),
            SceneModel::Symbolic(s) => embed_symbols(&s.0, &s.1, s.2, views, device),
        }
    }
}

/// The run's encoder as initialised, before any training (the random-init baseline):
/// the backend seeded as [`train_scene`] seeds it, so it is the first step's model.
/// Rendered captions need their `tokenizer`.
pub fn untrained_model<B: Backend>(
    cfg: &SceneTrainConfig,
    world: &SceneWorld,
    tokenizer: Option<&TextTokenizer>,
    device: &B::Device,
) -> Result<SceneModel<B>> {
    let seed = crate::rng::derive_seed(cfg.run.seed, crate::rng::Stream::Init, 0);
    crate::backend::seeded::<B, _>(device, seed, || init_model(cfg, world, tokenizer, device))
}

/// [`untrained_model`]'s initialisation once the backend is seeded, every weight drawn
/// ([`crate::backend::materialise`]).
fn init_model<B: Backend>(
    cfg: &SceneTrainConfig,
    world: &SceneWorld,
    tokenizer: Option<&TextTokenizer>,
    device: &B::Device,
) -> Result<SceneModel<B>> {
    use crate::backend::materialise;
    let m = cfg.modality()?;
    if cfg.views.observation == Observation::Symbolic {
        let model = cfg
            .symbolic
            .init(crate::models::symbolic_encoder::code_len(world, m), device)?;
        materialise(&model);
        return Ok(SceneModel::Symbolic(Box::new((model, world.clone(), m))));
    }
    match m {
        Modality::Image => {
            let mut model = cfg.image.init(device)?;
            materialise(&model);
            // The untrained encoder is finished as a trained one is (its closed-form head
            // on the initial features), so the baseline differs by the training alone.
            if cfg.image.features > 0 {
                let head =
                    closed_form_head(&model, &cfg.image, world, cfg.view_kind()?, cfg.run.seed)?;
                model = model.with_head(&head);
            }
            Ok(SceneModel::Image(Box::new(model)))
        }
        Modality::Text => {
            let tok = tokenizer
                .ok_or_else(|| Error::invalid("the caption encoder needs its tokenizer"))?;
            let model = cfg.caption_spec(tok.vocab_size()).init(device)?;
            materialise(&model);
            Ok(SceneModel::Caption(Box::new((model, tok.clone()))))
        }
    }
}

/// The encoder of a scene run's model record `record` (a checkpoint's `model` bytes,
/// written under `cfg`) on an inference backend; rendered captions need the run's
/// `tokenizer`. The caller checks that the record was written for `cfg`'s model
/// ([`SceneTrainConfig::same_model`]).
pub fn load_model<B: Backend>(
    cfg: &SceneTrainConfig,
    world: &SceneWorld,
    tokenizer: Option<&TextTokenizer>,
    record: &[u8],
    device: &B::Device,
) -> Result<SceneModel<B>> {
    use crate::train::checkpoint::module_from_bytes;
    if cfg.modality()? == Modality::Image && cfg.views.observation != Observation::Symbolic {
        let m = load_image_record::<B>(&cfg.image, record, device)?;
        if cfg.image.features > 0 && !m.has_head() {
            return Err(Error::invalid(
                "this image run has not finished: its encoder is trained at image.features \
                 wide and gets its closed-form head when training ends; resume the run \
                 (prh-native train --resume) to finish it",
            ));
        }
        return Ok(SceneModel::Image(Box::new(m)));
    }
    Ok(match untrained_model::<B>(cfg, world, tokenizer, device)? {
        SceneModel::Image(m) => {
            SceneModel::Image(Box::new(module_from_bytes::<B, _>(*m, record, device)?))
        }
        SceneModel::Caption(c) => {
            let (m, tok) = *c;
            SceneModel::Caption(Box::new((
                module_from_bytes::<B, _>(m, record, device)?,
                tok,
            )))
        }
        SceneModel::Symbolic(s) => {
            let (m, w, modality) = *s;
            let m = module_from_bytes::<B, _>(m, record, device)?;
            SceneModel::Symbolic(Box::new((m, w, modality)))
        }
    })
}

/// The picture encoder in a model record written under `config`: a solved head is loaded
/// when the record holds one ([`ImageEncoder::has_head`]). Records written before the
/// spectrum branch and the head existed end where those two optional fields begin;
/// appending two `None` tags decodes them as encoders with neither (bincode reads a record
/// from the front and ignores what follows it, so current records decode as they are).
fn load_image_record<B: Backend>(
    config: &ImageEncoderConfig,
    record: &[u8],
    device: &B::Device,
) -> Result<ImageEncoder<B>> {
    use crate::train::checkpoint::module_from_bytes;
    let mut bytes = record.to_vec();
    bytes.extend([0u8, 0u8]);
    let m = module_from_bytes::<B, _>(config.init_for_record(device)?, &bytes, device)?;
    if m.has_spectrum() != (config.spectrum > 0) {
        return Err(Error::invalid(format!(
            "the image encoder's record {} a spectrum branch but its config has \
             image.spectrum = {}",
            if m.has_spectrum() { "has" } else { "has no" },
            config.spectrum
        )));
    }
    if m.mlp_inputs() != config.mlp_inputs() {
        return Err(Error::invalid(format!(
            "the image encoder's record reads {} inputs into its MLP but its config \
             (image.patch = {}, image.patch_dim = {}, image.spectrum = {}, image.pool = {}) \
             needs {}",
            m.mlp_inputs(),
            config.patch,
            config.patch_dim,
            config.spectrum,
            config.pool,
            config.mlp_inputs()
        )));
    }
    Ok(m)
}

/// What [`train_scene`] returns.
#[derive(Debug)]
pub struct SceneTrained<B: Backend> {
    /// The frozen (inference) model.
    pub model: SceneModel<B>,
    /// Steps done in total (including those before a resume).
    pub steps: usize,
    /// Last logged total loss.
    pub last_loss: f64,
    /// The run's probe of the prediction ([`SceneTrainConfig::probe`]), handed back so
    /// the final comparison does not solve K again.
    pub probe: Option<TheoryProbe>,
}

/// Trains `cfg`'s JEPA (image or caption, good or bad views) through the shared loop
/// ([`train_on_devices`]: invariance + lambda SIGReg, AdamW, clipping, guards) with one
/// model replica per entry of `devices` (`run.data_parallel` of them, as for text runs),
/// from `resume` if given; metrics and checkpoints (carrying `cfg.to_toml()`) go to
/// `sink`. The caption task needs its `tokenizer`.
pub fn train_scene<B: AutodiffBackend>(
    cfg: &SceneTrainConfig,
    world: &SceneWorld,
    tokenizer: Option<&TextTokenizer>,
    resume: Option<&Checkpoint>,
    sink: &mut dyn RunSink,
    devices: &[B::Device],
) -> Result<SceneTrained<B::InnerBackend>> {
    let toml = cfg.to_toml()?;
    if cfg.views.observation == Observation::Symbolic {
        let mut task = cfg.symbolic_task(world)?;
        let out = train_on_devices::<B, _>(
            &mut task, &cfg.run, &cfg.optim, &toml, resume, sink, devices,
        )?;
        return Ok(SceneTrained {
            model: SceneModel::Symbolic(Box::new((
                out.model.valid(),
                world.clone(),
                cfg.modality()?,
            ))),
            steps: out.steps,
            last_loss: out.last_loss,
            probe: task.probe.take(),
        });
    }
    match cfg.modality()? {
        Modality::Image => {
            let mut task = cfg.image_task(world)?;
            let out = train_on_devices::<B, _>(
                &mut task, &cfg.run, &cfg.optim, &toml, resume, sink, devices,
            )?;
            Ok(SceneTrained {
                model: SceneModel::Image(Box::new(out.model.valid())),
                steps: out.steps,
                last_loss: out.last_loss,
                probe: task.probe.take(),
            })
        }
        Modality::Text => {
            let tok =
                tokenizer.ok_or_else(|| Error::invalid("the caption JEPA needs its tokenizer"))?;
            let mut task = cfg.caption_task(world, tok)?;
            let out = train_on_devices::<B, _>(
                &mut task, &cfg.run, &cfg.optim, &toml, resume, sink, devices,
            )?;
            Ok(SceneTrained {
                model: SceneModel::Caption(Box::new((out.model.valid(), tok.clone()))),
                steps: out.steps,
                last_loss: out.last_loss,
                probe: task.probe.take(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_resolve_the_width_to_d_and_round_trip() {
        let c = SceneTrainConfig::from_toml("t", "[task]\nkind = \"scene-image\"\n", &[]).unwrap();
        // The demo world: 4 x 4 x 3 x 4 values, d = 3 + 3 + 2 + 3.
        assert_eq!((c.d(), c.image.out_dim, c.caption.out_dim), (11, 11, 11));
        assert_eq!(c.loss, LossConfig::default());
        let back = SceneTrainConfig::from_toml("t", &c.to_toml().unwrap(), &[]).unwrap();
        assert_eq!(back, c);
        let q = SceneTrainConfig::from_toml(
            "t",
            "[task]\nkind = \"scene-caption\"\n[world]\ncardinality = [3, 3, 2, 4]\n",
            &["run.objective=bad".into(), "caption.out_dim=5".into()],
        )
        .unwrap();
        assert_eq!((q.d(), q.caption.out_dim, q.image.out_dim), (8, 5, 8));
        assert_eq!(q.modality().unwrap(), Modality::Text);
        assert_eq!(q.view_kind().unwrap(), ViewKind::Bad);
        assert_eq!(q.caption_spec(100).projector_dim, 5);
    }

    #[test]
    fn errors_name_the_field() {
        let err = |text: &str| {
            SceneTrainConfig::from_toml("img.toml", text, &[])
                .unwrap_err()
                .to_string()
        };
        let e = err("[task]\nkind = \"scene-image\"\n[image]\npatchh = 2\n");
        assert!(
            e.contains("img.toml") && e.contains("did you mean `patch`?"),
            "{e}"
        );
        let e = err("[task]\nkind = \"scene-image\"\n[image]\npatch = 5\n");
        assert!(e.contains("image") && e.contains("divide"), "{e}");
        let e = err("[task]\nkind = \"scene-image\"\n[run]\nobjective = \"next-token\"\n");
        assert!(e.contains("run.objective"), "{e}");
        let e = err("[task]\nkind = \"text\"\n");
        assert!(e.contains("task.kind"), "{e}");
        let e = err("[task]\nkind = \"scene-image\"\n[world]\ncardinality = [9, 3, 2, 4]\n");
        assert!(e.contains("world"), "{e}");
        let e = err("[task]\nkind = \"scene-image\"\n[views]\nviews = 1\n");
        assert!(e.contains("views.views"), "{e}");
    }

    #[test]
    fn same_model_compares_the_trained_architecture_only() {
        let a = SceneTrainConfig::from_toml("t", "", &[]).unwrap();
        let mut b = a.clone();
        b.optim.lr *= 2.0;
        b.caption.d_model = 32;
        assert!(a.same_model(&b), "image runs ignore the caption section");
        b.image.hidden = 64;
        assert!(!a.same_model(&b));
    }

    /// Records round-trip: a record of the layout before the spectrum branch (bytes as
    /// old run folders and browser exports hold them) loads into the current encoder with
    /// equal embeddings; a solved head survives its record, a record without one (an
    /// unfinished run) loads without it, and an old record is refused where the config
    /// asks for the spectrum branch.
    #[test]
    fn image_records_load_across_layouts_and_keep_the_head() {
        use crate::measure::view_spectrum::SpectralHead;
        use crate::scene::render_image::render;
        use crate::train::checkpoint::module_to_bytes;
        use burn::backend::NdArray;
        use burn::nn::{LayerNorm, Linear};
        /// The layout of records written before 3 December 2026.
        #[derive(burn::module::Module, Debug)]
        struct Legacy<B: Backend> {
            patch_embed: Linear<B>,
            fc1: Linear<B>,
            norm: LayerNorm<B>,
            fc2: Linear<B>,
            patch: usize,
        }
        let dev = Default::default();
        let imgs: Vec<Vec<f32>> = (0..4)
            .map(|i| render(&SceneView::full([i, 1, 2, i], 0, i as u64), true))
            .collect();
        let embed = |m: &ImageEncoder<NdArray>| m.forward_inputs(m.inputs(&imgs, &dev)).into_data();
        let plain = ImageEncoderConfig {
            out_dim: 5,
            ..Default::default()
        };
        let m = plain.init::<NdArray>(&dev).unwrap();
        // burn draws weights lazily: draw them now, or the record's clone draws its own.
        crate::backend::materialise::<NdArray, _>(&m);
        // The current record of a plain encoder, cut before its two option tags, is
        // byte for byte an old record of the same weights.
        let current = module_to_bytes::<NdArray, _>(&m).unwrap();
        let old_bytes = current[..current.len() - 2].to_vec();
        let loaded = load_image_record::<NdArray>(&plain, &old_bytes, &dev).unwrap();
        assert_eq!(embed(&loaded), embed(&m));
        assert_eq!(
            embed(&load_image_record::<NdArray>(&plain, &current, &dev).unwrap()),
            embed(&m)
        );
        // ... as the old layout itself reads and writes it back.
        use burn::nn::{LayerNormConfig, LinearConfig};
        let legacy = Legacy::<NdArray> {
            patch_embed: LinearConfig::new(48, 32).init(&dev),
            fc1: LinearConfig::new(64 * 32, 128).init(&dev),
            norm: LayerNormConfig::new(128).init(&dev),
            fc2: LinearConfig::new(128, 5).init(&dev),
            patch: 4,
        };
        let legacy =
            crate::train::checkpoint::module_from_bytes::<NdArray, _>(legacy, &old_bytes, &dev)
                .unwrap();
        assert_eq!(module_to_bytes::<NdArray, _>(&legacy).unwrap(), old_bytes);

        let wide = ImageEncoderConfig {
            out_dim: 3,
            spectrum: 8,
            features: 6,
            head_pairs: 12,
            ..Default::default()
        };
        let m = wide.init::<NdArray>(&dev).unwrap();
        crate::backend::materialise::<NdArray, _>(&m);
        let unfinished = module_to_bytes::<NdArray, _>(&m).unwrap();
        assert!(
            !load_image_record::<NdArray>(&wide, &unfinished, &dev)
                .unwrap()
                .has_head()
        );
        let head = SpectralHead {
            weight: crate::linalg::Matrix::from_fn(6, 3, |i, j| (i * 3 + j) as f64 * 0.1 - 0.4),
            bias: vec![0.1, -0.2, 0.3],
            values: vec![0.9, 0.8, 0.7],
        };
        let finished = m.with_head(&head);
        let bytes = module_to_bytes::<NdArray, _>(&finished).unwrap();
        let loaded = load_image_record::<NdArray>(&wide, &bytes, &dev).unwrap();
        assert!(loaded.has_head());
        assert_eq!(embed(&loaded), embed(&finished));
        assert_eq!(
            loaded.forward_inputs(loaded.inputs(&imgs, &dev)).dims(),
            [4, 3]
        );
        let err = load_image_record::<NdArray>(&wide, &old_bytes, &dev).unwrap_err();
        assert!(err.to_string().contains("image.spectrum = 8"), "{err}");

        // The pooled summary (image.pool) adds inputs, not bytes of its own: a pooled
        // record loads back to the same embeddings, and read with pool = false it is
        // refused by name instead of failing inside a matrix product.
        let pooled = ImageEncoderConfig {
            pool: true,
            ..wide.clone()
        };
        let m = pooled.init::<NdArray>(&dev).unwrap();
        crate::backend::materialise::<NdArray, _>(&m);
        let finished = m.with_head(&head);
        let bytes = module_to_bytes::<NdArray, _>(&finished).unwrap();
        let loaded = load_image_record::<NdArray>(&pooled, &bytes, &dev).unwrap();
        assert_eq!(embed(&loaded), embed(&finished));
        let err = load_image_record::<NdArray>(&wide, &bytes, &dev).unwrap_err();
        assert!(err.to_string().contains("image.pool = false"), "{err}");
    }
}
