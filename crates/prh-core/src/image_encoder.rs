//! The image JEPA of the scene demo (paper §3–4 with pixels instead of tokens): a small
//! CNN encoder, and the [`TrainTask`] that feeds it views of the scene world so the shared
//! loop ([`crate::train::train`]) trains it with invariance + SIGReg exactly as it trains
//! the text JEPA.
//!
//! Architecture: three stride-2 3x3 convolutions (32 -> 16 -> 8 -> 4 pixels) with GELU,
//! flatten (no global pooling: the object's position is a state factor, and pooling would
//! discard it), then a 2-layer MLP to the embedding.

use burn::module::AutodiffModule;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{Linear, LinearConfig, PaddingConfig2d};
use burn::prelude::*;
use burn::tensor::activation::gelu;
use burn::tensor::backend::AutodiffBackend;

use crate::config::LossConfig;
use crate::render_image::{IMAGE_LEN, IMAGE_SIZE, render};
use crate::rng::{Stream, generator};
use crate::scene::{Modality, SceneWorld, View, ViewKind};
use crate::train::{StepOutput, TrainTask, jepa_loss};
use crate::{Error, Result};

/// Sizes of the image encoder.
#[derive(Config, Debug, PartialEq)]
pub struct ImageEncoderConfig {
    /// Channels after the first, second and third convolution.
    #[config(default = "[16, 32, 32]")]
    pub channels: [usize; 3],
    /// Width of the MLP's hidden layer.
    #[config(default = 128)]
    pub hidden: usize,
    /// Embedding width d.
    #[config(default = 16)]
    pub out_dim: usize,
}

/// The CNN encoder: `[n, 3, 32, 32]` images -> `[n, out_dim]` embeddings.
#[derive(Module, Debug)]
pub struct ImageEncoder<B: Backend> {
    conv1: Conv2d<B>,
    conv2: Conv2d<B>,
    conv3: Conv2d<B>,
    fc1: Linear<B>,
    fc2: Linear<B>,
}

impl ImageEncoderConfig {
    /// Initialises the encoder's weights (burn's defaults: Kaiming-uniform).
    pub fn init<B: Backend>(&self, device: &B::Device) -> ImageEncoder<B> {
        let [c1, c2, c3] = self.channels;
        let conv = |i: usize, o: usize| {
            Conv2dConfig::new([i, o], [3, 3])
                .with_stride([2, 2])
                .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                .init(device)
        };
        let side = IMAGE_SIZE / 8;
        ImageEncoder {
            conv1: conv(3, c1),
            conv2: conv(c1, c2),
            conv3: conv(c2, c3),
            fc1: LinearConfig::new(c3 * side * side, self.hidden).init(device),
            fc2: LinearConfig::new(self.hidden, self.out_dim).init(device),
        }
    }
}

impl<B: Backend> ImageEncoder<B> {
    /// f(x) = W2 gelu(W1 flatten(conv3(conv2(conv1(x)))))  (GELU after each convolution).
    ///
    /// # Shapes
    /// `images [n, 3, 32, 32]` -> `[n, out_dim]`
    pub fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        let x = gelu(self.conv1.forward(images)); // (n, c1, 16, 16)
        let x = gelu(self.conv2.forward(x)); // (n, c2, 8, 8)
        let x = gelu(self.conv3.forward(x)); // (n, c3, 4, 4)
        let x: Tensor<B, 2> = x.flatten(1, 3); // (n, c3 * 16)
        self.fc2.forward(gelu(self.fc1.forward(x)))
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
    views: &[View],
    device: &B::Device,
) -> Result<Vec<Vec<f64>>> {
    let mut out = Vec::with_capacity(views.len());
    for chunk in views.chunks(256) {
        let imgs: Vec<Vec<f32>> = chunk.iter().map(|v| render(v, true)).collect();
        let z = model.forward(images_tensor::<B>(&imgs, device));
        let [_, d] = z.dims();
        let data: Vec<f32> = z
            .into_data()
            .convert::<f32>()
            .into_vec()
            .map_err(|e| Error::Numerical(format!("reading image embeddings: {e:?}")))?;
        out.extend(
            data.chunks(d)
                .map(|r| r.iter().map(|&x| x as f64).collect()),
        );
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
    pub fn batch(&self, seed: u64, step: usize) -> Vec<Vec<View>> {
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
}

impl<B: AutodiffBackend> TrainTask<B> for ImageJepaTask {
    type Model = ImageEncoder<B>;

    fn init_model(&self, device: &B::Device) -> Result<ImageEncoder<B>> {
        Ok(self.model.init(device))
    }

    fn step(
        &mut self,
        model: &ImageEncoder<B>,
        step: usize,
        device: &B::Device,
    ) -> Result<StepOutput<B>> {
        // 1. Views: `views` renderings (good) or corruptions (bad) per sampled state.
        let batch = self.sampler.batch(self.seed, step);
        // 2. Forward: all views in one pass, split back per view.
        let n = self.sampler.batch;
        let imgs: Vec<Vec<f32>> = batch.iter().flatten().map(|v| render(v, true)).collect();
        let z = model.forward(images_tensor::<B>(&imgs, device)); // (V n, d)
        let views: Vec<Tensor<B, 2>> = (0..batch.len())
            .map(|v| z.clone().narrow(0, v * n, n))
            .collect();
        // 3-4. Invariance to the mean of the views + lambda SIGReg.
        let loss = jepa_loss(&views, views.len(), &self.loss, self.seed, step, device)?;
        Ok(loss.into_step_output(imgs.len()))
    }
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
        let m = ImageEncoderConfig::new()
            .with_out_dim(7)
            .init::<NdArray>(&dev);
        let imgs = vec![render(&View::full([0, 1, 2, 3], 0, 1), true); 5];
        let z = m.forward(images_tensor::<NdArray>(&imgs, &dev));
        assert_eq!(z.dims(), [5, 7]);
    }

    /// The position factor survives the architecture: an encoder with random weights maps
    /// one object at two positions to different embeddings (global pooling would not
    /// guarantee that), and the same image to the same embedding.
    #[test]
    fn embeddings_see_position_and_are_deterministic() {
        let dev = Default::default();
        let m = ImageEncoderConfig::new().init::<NdArray>(&dev);
        let a = View::full([0, 0, 1, 0], 0, 3);
        let b = View::full([0, 0, 1, 3], 0, 3);
        let e = embed_views(&m, &[a, b, a], &dev).unwrap();
        let dist: f64 = e[0].iter().zip(&e[1]).map(|(x, y)| (x - y).powi(2)).sum();
        assert!(dist > 1e-6, "positions indistinguishable: {dist}");
        assert_eq!(e[0], e[2]);
    }
}
