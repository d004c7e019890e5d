//! The scene world's image encoder (paper §3–4 with pixels instead of tokens): a small
//! patch encoder, and the batching of the scene's pictures and captions for the encoders
//! that read them. The task that trains them on views of the world is
//! `crate::tasks::scene::task` (one generic scene JEPA whose observer is the pictures,
//! the captions or the symbols), so the two modalities differ only in what they observe.
//!
//! Architecture: a ViT-style patch embedding (4x4 patches, one shared linear map) and an
//! MLP over the concatenated patches (no global pooling: the object's position is a state
//! factor). A CNN was tried first: burn-ndarray's convolutions ran at ~25 images/s on
//! the 2-core CPU here, too slow for a demo of a few minutes; this runs on matrix
//! products only.

use burn::nn::{LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::prelude::*;

use crate::backend::gelu::gelu;
use crate::models::text_encoder::TextEncoder;
use crate::scene::SceneView;
use crate::scene::render_image::{IMAGE_LEN, IMAGE_SIZE, render};
use crate::scene::render_text::caption;
use crate::text::tokenizer::TextTokenizer;
use crate::text::views::pad_rows;
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
        self.forward_patches(x.reshape([n, gh * gw, c * p * p]))
    }

    /// [`ImageEncoder::forward`] from the images already cut into patches
    /// ([`patches_tensor`], which does it on the host: burn-flex's 6-D permutation walks
    /// element by element, ~15 % of an image JEPA step).
    ///
    /// # Shapes
    /// `patches [n, (32 / patch)^2, 3 patch^2]` -> `[n, out_dim]`
    pub fn forward_patches(&self, x: Tensor<B, 3>) -> Tensor<B, 2> {
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

/// Rendered images cut into `patch` x `patch` patches on the host, centred as
/// [`images_tensor`] centres them: row-major patches, each channel-major `(c, y, x)`,
/// exactly the layout [`ImageEncoder::forward`] builds with a reshape and a permutation.
///
/// # Shapes
/// `images`: n buffers of `[3 * 32 * 32]` -> `[n, (32 / patch)^2, 3 patch^2]`
pub fn patches_tensor<B: Backend>(
    images: &[Vec<f32>],
    patch: usize,
    device: &B::Device,
) -> Tensor<B, 3> {
    let (n, p, g) = (images.len(), patch, IMAGE_SIZE / patch);
    let plane = IMAGE_SIZE * IMAGE_SIZE;
    let mut flat = Vec::with_capacity(n * IMAGE_LEN);
    for im in images {
        for (gy, gx) in (0..g).flat_map(|gy| (0..g).map(move |gx| (gy, gx))) {
            for c in 0..3 {
                for y in 0..p {
                    let row = c * plane + (gy * p + y) * IMAGE_SIZE + gx * p;
                    flat.extend(im[row..row + p].iter().map(|x| (x - 0.5) / 0.25));
                }
            }
        }
    }
    Tensor::<B, 1>::from_floats(flat.as_slice(), device).reshape([n, g * g, 3 * p * p])
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
    embed_in_chunks(views, |chunk| {
        let imgs: Vec<Vec<f32>> = chunk.iter().map(|v| render(v, true)).collect();
        Ok(model.forward_patches(patches_tensor::<B>(&imgs, model.patch, device)))
    })
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
    embed_in_chunks(views, |chunk| {
        let (ids, pad) = caption_tensors::<B>(tokenizer, chunk, device)?;
        Ok(model.embed(ids, pad))
    })
}

/// Embeds scene views for inference in chunks of 256 (bounding the batch's memory):
/// `forward` embeds one chunk, and its rows are read back as f64. Every scene encoder's
/// inference (pictures, captions, symbols, and the training tasks' evaluations) goes
/// through here.
///
/// # Shapes
/// `views [n]`, `forward: [c] -> [c, d]` -> `n` rows of `d`
pub fn embed_in_chunks<B: Backend>(
    views: &[SceneView],
    mut forward: impl FnMut(&[SceneView]) -> Result<Tensor<B, 2>>,
) -> Result<Vec<Vec<f64>>> {
    let mut out = Vec::with_capacity(views.len());
    for chunk in views.chunks(256) {
        out.extend(rows_f64(forward(chunk)?)?);
    }
    Ok(out)
}

/// Reads a `[n, d]` tensor back as rows of f64.
pub fn rows_f64<B: Backend>(z: Tensor<B, 2>) -> Result<Vec<Vec<f64>>> {
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

    /// The host's patches are the layout `forward` builds on the device.
    #[test]
    fn host_patches_equal_the_devices_reshape_and_permute() {
        let dev = Default::default();
        for patch in [4, 8] {
            let m = ImageEncoderConfig {
                out_dim: 5,
                patch,
                ..Default::default()
            }
            .init::<NdArray>(&dev)
            .unwrap();
            let imgs: Vec<Vec<f32>> = (0..3)
                .map(|i| render(&SceneView::full([i, 1, 2, i], 0, i as u64), true))
                .collect();
            let a = m.forward(images_tensor::<NdArray>(&imgs, &dev));
            let b = m.forward_patches(patches_tensor::<NdArray>(&imgs, patch, &dev));
            a.into_data()
                .assert_approx_eq::<f32>(&b.into_data(), burn::tensor::Tolerance::absolute(1e-6));
        }
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
}
