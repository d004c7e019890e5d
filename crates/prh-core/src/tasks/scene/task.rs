//! One generic scene-world JEPA task: views of the scene world from a
//! [`SceneViewSampler`], embedded by an encoder that observes them one way (pictures,
//! captions or symbols: a [`SceneObserver`]), trained by the shared loop with the
//! configured JEPA loss. The three observers differ only in what the encoder sees.
//!
//! Each training step: (1) the seeded batch of `views` views of `batch` sampled states,
//! (2) every view of the (shard's) states embedded in one forward pass and split back
//! per view, (3-4) the loss (invariance to the views' mean + lambda SIGReg, or the
//! spectral loss) by [`jepa_loss`] (whole batch) or the data-parallel reduction
//! ([`ShardLoss::Jepa`], every view global).

use burn::module::AutodiffModule;
use burn::prelude::*;
use burn::tensor::backend::AutodiffBackend;

use crate::Result;
use crate::models::image_encoder::{
    ImageEncoder, ImageEncoderConfig, caption_tensors, embed_in_chunks_async, solve_head,
};
use crate::models::symbolic_encoder::{
    SymbolicEncoder, SymbolicEncoderConfig, code_len, codes_tensor,
};
use crate::models::text_encoder::{EncoderSpec, TextEncoder};
use crate::rng::{Stream, generator};
use crate::scene::theory::TheoryProbe;
use crate::scene::{Modality, SceneView, SceneWorld};
use crate::text::tokenizer::TextTokenizer;
use crate::theory::view_kind::ViewKind;
use crate::train::config::LossConfig;
use crate::train::data_parallel::{Shard, ShardLoss, ShardOutput, check_split};
use crate::train::{StepOutput, TrainTask, jepa_loss};

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

/// How a scene encoder observes views: the model it trains and one batched forward pass.
pub trait SceneObserver {
    /// The encoder, on any backend.
    type Model<B: Backend>: Module<B>;

    /// The encoder with fresh weights (burn's initialisers, seeded by the loop).
    fn init<B: Backend>(&self, device: &B::Device) -> Result<Self::Model<B>>;

    /// Embeds `views` in one pass; and the items processed (pictures, tokens with
    /// padding, or codes), which the loop reports as throughput.
    ///
    /// # Shapes
    /// `views [n]` -> `[n, d]`
    fn forward<B: Backend>(
        &self,
        model: &Self::Model<B>,
        views: &[SceneView],
        device: &B::Device,
    ) -> Result<(Tensor<B, 2>, usize)>;

    /// The embedding of `views` that evaluations and inference read: [`Self::forward`],
    /// unless training optimises something else (the picture encoder's wide output before
    /// its closed-form head).
    ///
    /// # Shapes
    /// `views [n]` -> `[n, d]`
    fn embed<B: Backend>(
        &self,
        model: &Self::Model<B>,
        views: &[SceneView],
        device: &B::Device,
    ) -> Result<Tensor<B, 2>> {
        Ok(self.forward(model, views, device)?.0)
    }

    /// What happens to the trained encoder when its run is complete (the picture
    /// encoder's closed-form head); by default nothing.
    fn finish<B: AutodiffBackend>(
        &self,
        model: Self::Model<B>,
        _sampler: &SceneViewSampler,
        _seed: u64,
    ) -> Result<Self::Model<B>>
    where
        Self::Model<B>: AutodiffModule<B, InnerModule = Self::Model<B::InnerBackend>>,
    {
        Ok(model)
    }
}

/// Pictures: the patch encoder on rendered 32x32 images (one item per picture).
pub struct Pixels {
    /// Encoder sizes.
    pub model: ImageEncoderConfig,
}

impl SceneObserver for Pixels {
    type Model<B: Backend> = ImageEncoder<B>;

    fn init<B: Backend>(&self, device: &B::Device) -> Result<ImageEncoder<B>> {
        self.model.init(device)
    }

    fn forward<B: Backend>(
        &self,
        model: &ImageEncoder<B>,
        views: &[SceneView],
        device: &B::Device,
    ) -> Result<(Tensor<B, 2>, usize)> {
        Ok((model.embed_rendered(views, true, device), views.len()))
    }

    fn embed<B: Backend>(
        &self,
        model: &ImageEncoder<B>,
        views: &[SceneView],
        device: &B::Device,
    ) -> Result<Tensor<B, 2>> {
        Ok(model.embed_rendered(views, false, device))
    }

    fn finish<B: AutodiffBackend>(
        &self,
        model: ImageEncoder<B>,
        sampler: &SceneViewSampler,
        seed: u64,
    ) -> Result<ImageEncoder<B>>
    where
        ImageEncoder<B>: AutodiffModule<B, InnerModule = ImageEncoder<B::InnerBackend>>,
    {
        solve_head(model, &self.model, &sampler.world, sampler.kind, seed)
    }
}

/// Captions: the shared BERT-style text encoder on tokenised captions, padded to the
/// batch's longest (items: tokens, padding included).
pub struct Captions {
    /// Encoder sizes (its `projector_dim` is the embedding width d).
    pub spec: EncoderSpec,
    /// Caption tokenizer.
    pub tokenizer: TextTokenizer,
}

impl SceneObserver for Captions {
    type Model<B: Backend> = TextEncoder<B>;

    fn init<B: Backend>(&self, device: &B::Device) -> Result<TextEncoder<B>> {
        self.spec.init(device)
    }

    fn forward<B: Backend>(
        &self,
        model: &TextEncoder<B>,
        views: &[SceneView],
        device: &B::Device,
    ) -> Result<(Tensor<B, 2>, usize)> {
        let (ids, pad) = caption_tensors::<B>(&self.tokenizer, views, device)?;
        let items = ids.dims()[0] * ids.dims()[1];
        Ok((model.embed(ids, pad), items))
    }
}

/// Symbols: the MLP head on one-hot codes of what each view shows (one item per view).
pub struct Symbols {
    /// Encoder sizes.
    pub model: SymbolicEncoderConfig,
    /// The world whose factors and nuisances the codes enumerate.
    pub world: SceneWorld,
    /// Whose nuisance the codes carry.
    pub modality: Modality,
}

impl SceneObserver for Symbols {
    type Model<B: Backend> = SymbolicEncoder<B>;

    fn init<B: Backend>(&self, device: &B::Device) -> Result<SymbolicEncoder<B>> {
        self.model
            .init(code_len(&self.world, self.modality), device)
    }

    fn forward<B: Backend>(
        &self,
        model: &SymbolicEncoder<B>,
        views: &[SceneView],
        device: &B::Device,
    ) -> Result<(Tensor<B, 2>, usize)> {
        let x = codes_tensor::<B>(&self.world, self.modality, views, device);
        Ok((model.forward(x), views.len()))
    }
}

/// The scene-world JEPA as a [`TrainTask`]: views from a [`SceneViewSampler`], one
/// forward per batch through the observer's encoder, the configured JEPA loss.
pub struct SceneJepaTask<O: SceneObserver> {
    /// Where the views come from.
    pub sampler: SceneViewSampler,
    /// What the encoder sees, and the encoder.
    pub observer: O,
    /// Loss settings (kind, lambda, slices, quadrature).
    pub loss: LossConfig,
    /// Run seed (views and SIGReg directions).
    pub seed: u64,
    /// The prediction each evaluation compares the encoder with (none: no evaluation).
    pub probe: Option<TheoryProbe>,
}

impl<O: SceneObserver> SceneJepaTask<O> {
    /// Stages 1-2 for `shard` of step `step`'s batch: every view of the shard's states
    /// embedded in one pass and split back per view; and the items processed.
    ///
    /// # Shapes
    /// -> `V` x `[n_k, d]` (`n_k` = the shard's states)
    fn forward_views<B: Backend>(
        &self,
        model: &O::Model<B>,
        step: usize,
        shard: Shard,
        device: &B::Device,
    ) -> Result<(Vec<Tensor<B, 2>>, usize)> {
        let batch = shard_views(self.sampler.batch(self.seed, step), shard);
        let flat: Vec<SceneView> = batch.iter().flatten().copied().collect();
        let (z, items) = self.observer.forward(model, &flat, device)?; // (V n_k, d)
        Ok((split_views(z, batch.len()), items))
    }
}

impl<B: AutodiffBackend, O: SceneObserver> TrainTask<B> for SceneJepaTask<O>
where
    O::Model<B>: AutodiffModule<B, InnerModule = O::Model<B::InnerBackend>>,
{
    type Model = O::Model<B>;

    fn init_model(&self, device: &B::Device) -> Result<O::Model<B>> {
        self.observer.init(device)
    }

    fn step(
        &mut self,
        model: &O::Model<B>,
        step: usize,
        device: &B::Device,
    ) -> Result<StepOutput<B>> {
        let (views, items) = self.forward_views(model, step, Shard::WHOLE, device)?;
        // 3-4. Invariance to the mean of the views + lambda SIGReg (or the spectral loss).
        let loss = jepa_loss(&views, views.len(), &self.loss, self.seed, step, device)?;
        Ok(loss.into_step_output(items))
    }

    /// Stages 1-2 of [`TrainTask::step`] on the shard's states (every view of states
    /// `k, k + W, ...` of the batch).
    fn shard_step(
        &self,
        model: &O::Model<B>,
        step: usize,
        shard: Shard,
        device: &B::Device,
    ) -> Result<ShardOutput<B>> {
        check_split(shard.count, self.sampler.batch)?;
        let (views, items) = self.forward_views(model, step, shard, device)?;
        Ok(ShardOutput {
            loss: ShardLoss::Jepa {
                n_global: views.len(),
                views,
                loss: self.loss.clone(),
                seed: self.seed,
            },
            items,
        })
    }

    /// `cka_to_theory` and `sin_theta_to_theory` of the frozen encoder ([`TheoryProbe`]).
    async fn evaluate(
        &mut self,
        model: &O::Model<B::InnerBackend>,
        _step: usize,
    ) -> Result<Vec<(String, f64)>> {
        let Some(probe) = &self.probe else {
            return Ok(Vec::new());
        };
        let device = model.devices().into_iter().next().unwrap_or_default();
        let rows = embed_in_chunks_async(&probe.views, |chunk| {
            self.observer.embed(model, chunk, &device)
        })
        .await?;
        probe.score(&rows)
    }

    fn finish(&self, model: O::Model<B>, _device: &B::Device) -> Result<O::Model<B>> {
        self.observer.finish(model, &self.sampler, self.seed)
    }
}

/// Keeps `shard`'s states of a `[V][n]` batch of views: `[V][n / W]`
/// ([`Shard::WHOLE`] keeps all).
fn shard_views(batch: Vec<Vec<SceneView>>, shard: Shard) -> Vec<Vec<SceneView>> {
    batch.into_iter().map(|views| shard.take(views)).collect()
}

/// Embeddings of `v` views stored view-major, split per view.
///
/// # Shapes
/// `z [V n, d]` -> `V` x `[n, d]`
fn split_views<B: Backend>(z: Tensor<B, 2>, v: usize) -> Vec<Tensor<B, 2>> {
    let n = z.dims()[0] / v.max(1);
    (0..v).map(|j| z.clone().narrow(0, j * n, n)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::backend::NdArray;

    /// The sampler's batch is view-major (`views` lists of `batch` views), sample i of every
    /// list observes one state, bad views of a sample share its modelled nuisance, and no
    /// two views share the unmodelled per-view randomness (style).
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
                let same_u = b.iter().all(|v| v[i].nuisance == b[0][i].nuisance);
                if kind == ViewKind::Bad {
                    assert!(same_u, "bad views share the rendering's nuisance");
                }
                let mut styles: Vec<u64> = b.iter().map(|v| v[i].style_seed).collect();
                styles.sort_unstable();
                styles.dedup();
                assert_eq!(styles.len(), 3, "every view draws its own style");
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
        let mut task = SceneJepaTask {
            sampler: SceneViewSampler {
                world,
                modality: Modality::Image,
                kind: ViewKind::Good,
                views: 2,
                batch: 8,
            },
            observer: Pixels {
                model: ImageEncoderConfig {
                    out_dim: 8,
                    ..Default::default()
                },
            },
            loss: LossConfig::default(),
            seed: 1,
            probe: None,
        };
        let dev = Default::default();
        let model = <SceneJepaTask<Pixels> as TrainTask<B>>::init_model(&task, &dev).unwrap();
        let out = task.step(&model, 0, &dev).unwrap();
        let loss = crate::train::scalar(out.loss.clone());
        assert!(loss.is_finite() && loss > 0.0, "loss {loss}");
        assert_eq!(out.items, 16);
        let grads = out.loss.backward();
        let grads = burn::optim::GradientsParams::from_grads(grads, &model);
        assert!(!grads.is_empty(), "no parameter has a gradient");
    }
}
