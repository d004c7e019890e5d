//! The image JEPA of the scene demo (paper §3–4 with pixels instead of tokens): a small
//! patch encoder, and the [`TrainTask`] that feeds it views of the scene world so the shared
//! loop ([`crate::train::train`]) trains it with invariance + SIGReg exactly as it trains
//! the text JEPA.
//!
//! The captions' twin, [`CaptionJepaTask`], trains the shared BERT-style
//! [`crate::models::text_encoder::TextEncoder`] on the same world through the same loop, so the two
//! modalities differ only in what they observe.
//!
//! Architecture: a ViT-style patch embedding (4x4 patches, one shared linear map) and an
//! MLP over the concatenated patches (no global pooling: the object's position is a state
//! factor). A CNN was tried first: burn-ndarray's convolutions ran at ~25 images/s on
//! the 2-core CPU here, too slow for a demo of a few minutes; this runs on matrix
//! products only.

use crate::backend::gelu::gelu;
use burn::module::AutodiffModule;
use burn::nn::{LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::backend::AutodiffBackend;

use crate::models::text_encoder::{EncoderSpec, TextEncoder};
use crate::rng::{Stream, generator};
use crate::scene::render_image::{IMAGE_LEN, IMAGE_SIZE, render};
use crate::scene::render_text::caption;
use crate::scene::theory::TheoryProbe;
use crate::scene::{Modality, SceneView, SceneWorld};
use crate::text::tokenizer::TextTokenizer;
use crate::text::views::pad_rows;
use crate::theory::view_kind::ViewKind;
use crate::train::config::LossConfig;
use crate::train::data_parallel::{Shard, ShardLoss, ShardOutput, check_split};
use crate::train::{StepOutput, TrainTask, jepa_loss};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// Sizes of the image encoder (the `[image]` section of a scene run's config).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ImageEncoderConfig {
    /// Patch side in pixels (the image is cut into (32 / patch)^2 patches).
    pub patch: usize,
    /// Width of each patch's embedding.
    pub patch_dim: usize,
    /// Width of the MLP's hidden layer.
    pub hidden: usize,
    /// Embedding width (0: the world's d, the number of single-factor directions).
    pub out_dim: usize,
}

impl Default for ImageEncoderConfig {
    fn default() -> Self {
        Self {
            patch: 4,
            patch_dim: 32,
            hidden: 128,
            out_dim: 0,
        }
    }
}

/// The patch encoder: `[n, 3, 32, 32]` images -> `[n, out_dim]` embeddings.
#[derive(Module, Debug)]
pub struct ImageEncoder<B: Backend> {
    patch_embed: Linear<B>,
    fc1: Linear<B>,
    norm: LayerNorm<B>,
    fc2: Linear<B>,
    patch: usize,
}

impl ImageEncoderConfig {
    /// Checks the sizes: positive widths, a patch side dividing the 32-pixel image.
    pub fn check(&self) -> Result<()> {
        if self.out_dim == 0 || self.patch_dim == 0 || self.hidden == 0 {
            return Err(Error::invalid(format!(
                "image encoder widths must be positive, got {self:?} (resolve out_dim = 0 first)"
            )));
        }
        if self.patch == 0 || !IMAGE_SIZE.is_multiple_of(self.patch) {
            return Err(Error::invalid(format!(
                "image patch side {} must divide {IMAGE_SIZE}",
                self.patch
            )));
        }
        Ok(())
    }

    /// Initialises the encoder's weights (burn's defaults: Kaiming-uniform).
    pub fn init<B: Backend>(&self, device: &B::Device) -> Result<ImageEncoder<B>> {
        self.check()?;
        let patches = (IMAGE_SIZE / self.patch).pow(2);
        Ok(ImageEncoder {
            patch_embed: LinearConfig::new(3 * self.patch * self.patch, self.patch_dim)
                .init(device),
            fc1: LinearConfig::new(patches * self.patch_dim, self.hidden).init(device),
            norm: LayerNormConfig::new(self.hidden).init(device),
            fc2: LinearConfig::new(self.hidden, self.out_dim).init(device),
            patch: self.patch,
        })
    }
}

impl<B: Backend> ImageEncoder<B> {
    /// f(x) = W2 LN(gelu(W1 flatten(gelu(P patches(x))))): a shared linear map P of each
    /// non-overlapping patch (a stride = kernel convolution, as a ViT's patch embedding),
    /// then an MLP over the concatenated patches, which keeps where each patch is (the
    /// object's position is a state factor). The LayerNorm keeps the output at unit scale
    /// at initialisation: SIGReg's gradient vanishes at a collapsed start.
    ///
    /// # Shapes
    /// `images [n, 3, 32, 32]` -> `[n, out_dim]`
    pub fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        let [n, c, h, w] = images.dims();
        let p = self.patch;
        let (gh, gw) = (h / p, w / p);
        let x = images.reshape([n, c, gh, p, gw, p]); // (n, c, gh, p, gw, p)
        let x = x.permute([0, 2, 4, 1, 3, 5]); // (n, gh, gw, c, p, p)
        let x: Tensor<B, 3> = x.reshape([n, gh * gw, c * p * p]); // (n, patches, c p p)
        let x = gelu(self.patch_embed.forward(x)); // (n, patches, patch_dim)
        let x: Tensor<B, 2> = x.flatten(1, 2); // (n, patches * patch_dim)
        self.fc2
            .forward(self.norm.forward(gelu(self.fc1.forward(x))))
    }
}

/// Stacks rendered images into a batch, centred: (x - 0.5) / 0.25 so pixels are ~unit scale.
///
/// # Shapes
/// `images`: n buffers of `[3 * 32 * 32]` -> `[n, 3, 32, 32]`
pub fn images_tensor<B: Backend>(images: &[Vec<f32>], device: &B::Device) -> Tensor<B, 4> {
    let n = images.len();
    let flat: Vec<f32> = images
        .iter()
        .flat_map(|im| im.iter().map(|x| (x - 0.5) / 0.25))
        .collect();
    debug_assert_eq!(flat.len(), n * IMAGE_LEN);
    Tensor::<B, 1>::from_floats(flat.as_slice(), device).reshape([n, 3, IMAGE_SIZE, IMAGE_SIZE])
}

/// Embeds views in chunks of 256 (inference).
///
/// # Shapes
/// `views [n]` -> `[n, out_dim]`, row-major f64
pub fn embed_views<B: Backend>(
    model: &ImageEncoder<B>,
    views: &[SceneView],
    device: &B::Device,
) -> Result<Vec<Vec<f64>>> {
    let mut out = Vec::with_capacity(views.len());
    for chunk in views.chunks(256) {
        let imgs: Vec<Vec<f32>> = chunk.iter().map(|v| render(v, true)).collect();
        out.extend(rows_f64(model.forward(images_tensor::<B>(&imgs, device)))?);
    }
    Ok(out)
}

/// Views of the scene world for one sample of a JEPA batch: `n` views of one state,
/// good (each its own rendering) or bad (corruptions of one rendering), see
/// [`SceneWorld::sample_views`].
pub struct SceneViewSampler {
    /// The world.
    pub world: SceneWorld,
    /// Which modality's nuisance and visibilities to use.
    pub modality: Modality,
    /// Good or bad views.
    pub kind: ViewKind,
    /// Views per sample (all global: each predicts the mean of all).
    pub views: usize,
    /// Samples per batch.
    pub batch: usize,
}

impl SceneViewSampler {
    /// The batch of step `step` as `views` lists of `batch` views (view-major, as the
    /// loss wants one `[batch, d]` embedding per view); drawn from the seeded stream.
    pub fn batch(&self, seed: u64, step: usize) -> Vec<Vec<SceneView>> {
        let mut rng = generator(seed, Stream::Views, step as u64);
        let mut by_view = vec![Vec::with_capacity(self.batch); self.views];
        for _ in 0..self.batch {
            for (slot, v) in self
                .world
                .sample_views(self.modality, self.kind, self.views, &mut rng)
                .into_iter()
                .enumerate()
            {
                by_view[slot].push(v);
            }
        }
        by_view
    }
}

/// The image JEPA as a [`TrainTask`]: views from a [`SceneViewSampler`], one forward per
/// view, LeJEPA's invariance + lambda SIGReg.
pub struct ImageJepaTask {
    /// Where the views come from.
    pub sampler: SceneViewSampler,
    /// Encoder sizes.
    pub model: ImageEncoderConfig,
    /// Loss settings (lambda, slices, quadrature).
    pub loss: LossConfig,
    /// Run seed (views and SIGReg directions).
    pub seed: u64,
    /// The prediction each evaluation compares the encoder with (none: no evaluation).
    pub probe: Option<TheoryProbe>,
}

impl<B: AutodiffBackend> TrainTask<B> for ImageJepaTask {
    type Model = ImageEncoder<B>;

    fn init_model(&self, device: &B::Device) -> Result<ImageEncoder<B>> {
        self.model.init(device)
    }

    fn step(
        &mut self,
        model: &ImageEncoder<B>,
        step: usize,
        device: &B::Device,
    ) -> Result<StepOutput<B>> {
        let (views, items) = self.forward_views(model, step, Shard::WHOLE, device)?;
        // 3-4. Invariance to the mean of the views + lambda SIGReg.
        let loss = jepa_loss(&views, views.len(), &self.loss, self.seed, step, device)?;
        Ok(loss.into_step_output(items))
    }

    /// Stages 1-2 of [`TrainTask::step`] on the shard's states (every view of states
    /// `k, k + W, ...` of the batch).
    fn shard_step(
        &self,
        model: &ImageEncoder<B>,
        step: usize,
        shard: Shard,
        device: &B::Device,
    ) -> Result<ShardOutput<B>> {
        check_split(shard.count, self.sampler.batch)?;
        let (views, items) = self.forward_views(model, step, shard, device)?;
        Ok(scene_shard_output(views, items, &self.loss, self.seed))
    }

    /// `cka_to_theory` and `sin_theta_to_theory` of the frozen encoder ([`TheoryProbe`]).
    fn evaluate(
        &mut self,
        model: &ImageEncoder<B::InnerBackend>,
        _step: usize,
    ) -> Result<Vec<(String, f64)>> {
        let Some(probe) = &self.probe else {
            return Ok(Vec::new());
        };
        let device = model.devices().into_iter().next().unwrap_or_default();
        probe.score(&embed_views(model, &probe.views, &device)?)
    }
}

impl ImageJepaTask {
    /// Stages 1-2 for `shard` of step `step`'s batch: `views` renderings (good) or
    /// corruptions (bad) per sampled state, all embedded in one pass and split back per
    /// view; and the number of pictures.
    ///
    /// # Shapes
    /// -> `V` x `[n_k, d]` (`n_k` = the shard's states)
    fn forward_views<B: AutodiffBackend>(
        &self,
        model: &ImageEncoder<B>,
        step: usize,
        shard: Shard,
        device: &B::Device,
    ) -> Result<(Vec<Tensor<B, 2>>, usize)> {
        let batch = shard_views(self.sampler.batch(self.seed, step), shard);
        let imgs: Vec<Vec<f32>> = batch.iter().flatten().map(|v| render(v, true)).collect();
        let z = model.forward(images_tensor::<B>(&imgs, device)); // (V n_k, d)
        Ok((split_views(z, batch.len()), imgs.len()))
    }
}

/// Keeps `shard`'s states of a `[V][n]` batch of views: `[V][n / W]`
/// ([`Shard::WHOLE`] keeps all).
pub(crate) fn shard_views(batch: Vec<Vec<SceneView>>, shard: Shard) -> Vec<Vec<SceneView>> {
    batch.into_iter().map(|views| shard.take(views)).collect()
}

/// Embeddings of `v` views stored view-major, split per view.
///
/// # Shapes
/// `z [V n, d]` -> `V` x `[n, d]`
pub(crate) fn split_views<B: Backend>(z: Tensor<B, 2>, v: usize) -> Vec<Tensor<B, 2>> {
    let n = z.dims()[0] / v.max(1);
    (0..v).map(|j| z.clone().narrow(0, j * n, n)).collect()
}

/// A scene task's shard output: its view embeddings, every view global (each is pulled
/// to their mean), and `items` processed.
pub(crate) fn scene_shard_output<B: Backend>(
    views: Vec<Tensor<B, 2>>,
    items: usize,
    loss: &LossConfig,
    seed: u64,
) -> ShardOutput<B> {
    ShardOutput {
        loss: ShardLoss::Jepa {
            n_global: views.len(),
            views,
            loss: loss.clone(),
            seed,
        },
        items,
    }
}

/// Token ids and padding of a batch of captions, ready for the text encoder.
///
/// # Shapes
/// `views [n]` -> ids `[n, L]`, pad `[n, L]` (L = longest caption)
pub fn caption_tensors<B: Backend>(
    tokenizer: &TextTokenizer,
    views: &[SceneView],
    device: &B::Device,
) -> Result<(Tensor<B, 2, Int>, Tensor<B, 2, Bool>)> {
    let rows: Vec<Vec<u32>> = views
        .iter()
        .map(|v| tokenizer.encode(&caption(v)))
        .collect::<Result<_>>()?;
    let refs: Vec<&[u32]> = rows.iter().map(Vec::as_slice).collect();
    let p = pad_rows(&refs, None, tokenizer.pad);
    let ids = Tensor::<B, 2, Int>::from_data(TensorData::new(p.ids, [p.n, p.len]), device);
    let pad = Tensor::<B, 2, Bool>::from_data(TensorData::new(p.pad, [p.n, p.len]), device);
    Ok((ids, pad))
}

/// Embeds views' captions in chunks of 256 (inference).
///
/// # Shapes
/// `views [n]` -> `[n, embed_dim]`, row-major f64
pub fn embed_captions<B: Backend>(
    model: &TextEncoder<B>,
    tokenizer: &TextTokenizer,
    views: &[SceneView],
    device: &B::Device,
) -> Result<Vec<Vec<f64>>> {
    let mut out = Vec::with_capacity(views.len());
    for chunk in views.chunks(256) {
        let (ids, pad) = caption_tensors::<B>(tokenizer, chunk, device)?;
        out.extend(rows_f64(model.embed(ids, pad))?);
    }
    Ok(out)
}

/// The text JEPA on the scene's captions: the shared [`TextEncoder`], views from a
/// [`SceneViewSampler`] over the text modality, the same loss as [`ImageJepaTask`].
pub struct CaptionJepaTask {
    /// Where the views come from (modality Text).
    pub sampler: SceneViewSampler,
    /// Encoder sizes (its `embed_dim` is the embedding width d).
    pub spec: EncoderSpec,
    /// Caption tokenizer.
    pub tokenizer: TextTokenizer,
    /// Loss settings (lambda, slices, quadrature).
    pub loss: LossConfig,
    /// Run seed (views and SIGReg directions).
    pub seed: u64,
    /// The prediction each evaluation compares the encoder with (none: no evaluation).
    pub probe: Option<TheoryProbe>,
}

impl<B: AutodiffBackend> TrainTask<B> for CaptionJepaTask {
    type Model = TextEncoder<B>;

    fn init_model(&self, device: &B::Device) -> Result<TextEncoder<B>> {
        self.spec.init(device)
    }

    fn step(
        &mut self,
        model: &TextEncoder<B>,
        step: usize,
        device: &B::Device,
    ) -> Result<StepOutput<B>> {
        let (views, items) = self.forward_views(model, step, Shard::WHOLE, device)?;
        // 3-4. Invariance to the mean of the views + lambda SIGReg.
        let loss = jepa_loss(&views, views.len(), &self.loss, self.seed, step, device)?;
        Ok(loss.into_step_output(items))
    }

    /// Stages 1-2 of [`TrainTask::step`] on the shard's states (padded to the shard's
    /// longest caption).
    fn shard_step(
        &self,
        model: &TextEncoder<B>,
        step: usize,
        shard: Shard,
        device: &B::Device,
    ) -> Result<ShardOutput<B>> {
        check_split(shard.count, self.sampler.batch)?;
        let (views, items) = self.forward_views(model, step, shard, device)?;
        Ok(scene_shard_output(views, items, &self.loss, self.seed))
    }

    /// `cka_to_theory` and `sin_theta_to_theory` of the frozen encoder ([`TheoryProbe`]).
    fn evaluate(
        &mut self,
        model: &TextEncoder<B::InnerBackend>,
        _step: usize,
    ) -> Result<Vec<(String, f64)>> {
        let Some(probe) = &self.probe else {
            return Ok(Vec::new());
        };
        let device = model.devices().into_iter().next().unwrap_or_default();
        probe.score(&embed_captions(
            model,
            &self.tokenizer,
            &probe.views,
            &device,
        )?)
    }
}

impl CaptionJepaTask {
    /// Stages 1-2 for `shard` of step `step`'s batch: captions of independent renderings
    /// (good) or masked spans of one (bad), embedded in one pass (padded to the longest)
    /// and split back per view; and the tokens processed, padding included.
    ///
    /// # Shapes
    /// -> `V` x `[n_k, d]` (`n_k` = the shard's states)
    fn forward_views<B: AutodiffBackend>(
        &self,
        model: &TextEncoder<B>,
        step: usize,
        shard: Shard,
        device: &B::Device,
    ) -> Result<(Vec<Tensor<B, 2>>, usize)> {
        let batch = shard_views(self.sampler.batch(self.seed, step), shard);
        let flat: Vec<SceneView> = batch.iter().flatten().copied().collect();
        let (ids, pad) = caption_tensors::<B>(&self.tokenizer, &flat, device)?;
        let items = ids.dims()[0] * ids.dims()[1];
        let z = model.embed(ids, pad); // (V n_k, d)
        Ok((split_views(z, batch.len()), items))
    }
}

/// Reads a `[n, d]` tensor back as rows of f64.
pub(crate) fn rows_f64<B: Backend>(z: Tensor<B, 2>) -> Result<Vec<Vec<f64>>> {
    let [_, d] = z.dims();
    let data: Vec<f32> = z
        .into_data()
        .convert::<f32>()
        .into_vec()
        .map_err(|e| Error::Numerical(format!("reading embeddings back: {e:?}")))?;
    Ok(data
        .chunks(d.max(1))
        .map(|r| r.iter().map(|&x| x as f64).collect())
        .collect())
}

/// The inference copy of a trained encoder (no autodiff graph).
pub fn frozen<B: AutodiffBackend>(model: &ImageEncoder<B>) -> ImageEncoder<B::InnerBackend> {
    model.valid()
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::backend::NdArray;

    #[test]
    fn forward_has_the_documented_shape() {
        let dev = Default::default();
        let m = ImageEncoderConfig {
            out_dim: 7,
            ..Default::default()
        }
        .init::<NdArray>(&dev)
        .unwrap();
        let imgs = vec![render(&SceneView::full([0, 1, 2, 3], 0, 1), true); 5];
        let z = m.forward(images_tensor::<NdArray>(&imgs, &dev));
        assert_eq!(z.dims(), [5, 7]);
    }

    /// The position factor survives the architecture: an encoder with random weights maps
    /// one object at two positions to different embeddings (global pooling would not
    /// guarantee that), and the same image to the same embedding.
    #[test]
    fn embeddings_see_position_and_are_deterministic() {
        let dev = Default::default();
        let m = ImageEncoderConfig {
            out_dim: 16,
            ..Default::default()
        }
        .init::<NdArray>(&dev)
        .unwrap();
        let a = SceneView::full([0, 0, 1, 0], 0, 3);
        let b = SceneView::full([0, 0, 1, 3], 0, 3);
        let e = embed_views(&m, &[a, b, a], &dev).unwrap();
        let dist: f64 = e[0].iter().zip(&e[1]).map(|(x, y)| (x - y).powi(2)).sum();
        assert!(dist > 1e-6, "positions indistinguishable: {dist}");
        assert_eq!(e[0], e[2]);
    }

    /// The sampler's batch is view-major (`views` lists of `batch` views), sample i of every
    /// list observes one state, and bad views of a sample share one rendering.
    #[test]
    fn sampler_batches_are_view_major_and_share_what_they_should() {
        use crate::scene::{SceneConfig, SceneWorld};
        let world = SceneWorld::new(SceneConfig::quick(0)).unwrap();
        for kind in [ViewKind::Good, ViewKind::Bad] {
            let s = SceneViewSampler {
                world: world.clone(),
                modality: Modality::Image,
                kind,
                views: 3,
                batch: 5,
            };
            let b = s.batch(7, 2);
            assert_eq!((b.len(), b[0].len()), (3, 5));
            for i in 0..5 {
                assert!(b.iter().all(|v| v[i].state == b[0][i].state));
                let same_render = b.iter().all(|v| v[i].style_seed == b[0][i].style_seed);
                assert_eq!(same_render, kind == ViewKind::Bad);
            }
            assert_eq!(b, s.batch(7, 2), "batches are a function of (seed, step)");
        }
    }

    /// One training step of the image JEPA through the shared loop's loss is finite and
    /// has a gradient.
    #[test]
    fn one_image_jepa_step_is_finite() {
        use crate::scene::{SceneConfig, SceneWorld};
        use burn::backend::Autodiff;
        type B = Autodiff<NdArray>;
        let world = SceneWorld::new(SceneConfig::quick(0)).unwrap();
        let mut task = ImageJepaTask {
            sampler: SceneViewSampler {
                world,
                modality: Modality::Image,
                kind: ViewKind::Good,
                views: 2,
                batch: 8,
            },
            model: ImageEncoderConfig {
                out_dim: 8,
                ..Default::default()
            },
            loss: LossConfig::default(),
            seed: 1,
            probe: None,
        };
        let dev = Default::default();
        let model = <ImageJepaTask as TrainTask<B>>::init_model(&task, &dev).unwrap();
        let out = task.step(&model, 0, &dev).unwrap();
        let loss = crate::train::scalar(out.loss.clone());
        assert!(loss.is_finite() && loss > 0.0, "loss {loss}");
        assert_eq!(out.items, 16);
        let grads = out.loss.backward();
        let g = model.fc2.weight.grad(&grads).unwrap();
        assert!(g.abs().sum().into_scalar() > 0.0);
    }
}
