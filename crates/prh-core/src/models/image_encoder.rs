//! The scene world's image encoder (paper §3–4 with pixels instead of tokens): a small
//! patch encoder, and the batching of the scene's pictures and captions for the encoders
//! that read them. The task that trains them on views of the world is
//! `crate::tasks::scene::task` (one generic scene JEPA whose observer is the pictures,
//! the captions or the symbols), so the two modalities differ only in what they observe.
//!
//! Architecture: a ViT-style patch embedding (4x4 patches, one shared linear map) and an
//! MLP over the concatenated patches (no global pooling: the object's position is a state
//! factor), optionally joined by a translation-invariant branch that reads the picture's
//! amplitude spectrum ([`power_spectrum`], `image.spectrum > 0`). A CNN was tried first:
//! burn-ndarray's convolutions ran at ~25 images/s on the 2-core CPU here, too slow for a
//! demo of a few minutes; this runs on matrix products only.
//!
//! Why the spectrum branch: the patch MLP can represent shape (trained *supervised* it
//! reaches R^2 0.95 for shape), but a JEPA trained on it never finds shape: the object's
//! shape is a few pixels that move with its position, while colour and position are linear
//! in the pixels, so the encoder fills shape's directions with products of the easy
//! factors (docs/results.md, "Why the pixel and caption encoders do not reach F"). The
//! amplitude spectrum of the picture's ink is the same wherever the object sits, so shape
//! and size become a few smooth functions of the input that gradient descent finds. It is
//! a fixed front end (no learned weights, like the fixed first layer of a scattering
//! network); everything after it is learned from positive pairs alone.

use burn::nn::{LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::backend::AutodiffBackend;

use crate::backend::gelu::gelu;
use crate::models::text_encoder::TextEncoder;
use crate::scene::SceneView;
use crate::scene::render_image::{IMAGE_LEN, IMAGE_SIZE, render};
use crate::scene::render_text::caption;
use crate::text::tokenizer::TextTokenizer;
use crate::text::views::pad_rows;
use crate::{Error, Result};
use rustfft::num_complex::Complex32;
use rustfft::{Fft, FftPlanner};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, OnceLock};

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
    /// Width of the spectrum branch, `gelu(W_s a(x))` with a(x) the picture's
    /// [`power_spectrum`] (0: no branch, the patch MLP alone; the default, so that run
    /// folders written before the branch existed load as they were trained).
    pub spectrum: usize,
    /// Width the encoder is *trained* at (0: out_dim, no head). With `features > 0` the
    /// network is trained with a `features`-wide output and, when training ends, a last
    /// linear layer `features -> out_dim` is set to the spectral loss's closed-form
    /// minimiser on those features ([`crate::measure::view_spectrum::spectral_head`],
    /// estimated on `head_pairs` fresh positive pairs). Spectral loss only (the head is
    /// that loss's minimiser). Why: at out_dim = d the 11 outputs fill with products of
    /// colour and position before shape arrives, and trading one for shape is a saddle
    /// that gradient descent leaves slowly; 3d outputs hold every single factor and the
    /// products beside each other, and the head keeps the top d (docs/results.md).
    pub features: usize,
    /// Positive pairs the head is estimated on. Its sampling error shows in the subspace:
    /// 4,096 pairs left sin-theta 0.40 where 16,384 gave 0.20, and in the demo 16,384
    /// left the rendered good-view pairs of world seeds 1-4 at 0.892-0.897 mutual 10-NN
    /// where 65,536 (the default since 7 December) gave 0.899-0.912, for 4-14 s more of a
    /// 60-66 s demo on the 2-core AVX-512 machine (docs/results.md).
    pub head_pairs: usize,
    /// Whether the MLP also reads the mean of the patch embeddings over the picture,
    /// `mean_p gelu(P patch_p)` (a global average pool, as a ViT or CNN ends): a
    /// translation-invariant summary that keeps colour, which the spectrum branch removes
    /// by design (false: the default, so that run folders written before it load as
    /// they were trained).
    pub pool: bool,
}

impl Default for ImageEncoderConfig {
    fn default() -> Self {
        Self {
            patch: 4,
            patch_dim: 32,
            hidden: 128,
            out_dim: 0,
            spectrum: 0,
            features: 0,
            head_pairs: 65536,
            pool: false,
        }
    }
}

/// The patch encoder: `[n, 3, 32, 32]` images -> `[n, out_dim]` embeddings.
///
/// Field order is the record's byte layout (burn's binary records are not
/// self-describing): the two optional parts come last, so a record written before they
/// existed decodes once two `None` tags are appended (`crate::tasks::scene::load_model`).
#[derive(Module, Debug)]
pub struct ImageEncoder<B: Backend> {
    patch_embed: Linear<B>,
    fc1: Linear<B>,
    norm: LayerNorm<B>,
    fc2: Linear<B>,
    patch: usize,
    /// The spectrum branch's layer, [`SPECTRUM_LEN`] -> `spectrum` (absent when 0).
    spectrum_embed: Option<Linear<B>>,
    /// The closed-form last layer `features -> out_dim` (present once solved, see
    /// [`ImageEncoderConfig::features`]).
    head: Option<Linear<B>>,
}

/// Width of the MLP's input: every patch's embedding, the spectrum branch and, with
/// `pool`, the patch embeddings' mean, `(32 / patch)^2 patch_dim + spectrum [+ patch_dim]`
/// (one formula for the config that builds the encoder and the encoder that reads its own
/// layout back).
fn mlp_inputs(patch: usize, patch_dim: usize, spectrum: usize, pool: bool) -> usize {
    let patches = (IMAGE_SIZE / patch.max(1)).pow(2);
    patches * patch_dim + spectrum + usize::from(pool) * patch_dim
}

impl ImageEncoderConfig {
    /// Checks the sizes: positive widths, a patch side dividing the 32-pixel image.
    pub fn check(&self) -> Result<()> {
        if self.out_dim == 0 || self.patch_dim == 0 || self.hidden == 0 {
            return Err(Error::invalid(format!(
                "image encoder widths must be positive, got {self:?} (resolve out_dim = 0 first)"
            )));
        }
        if self.features > 0
            && (self.features < self.out_dim || self.head_pairs < 2 * self.features)
        {
            return Err(Error::invalid(format!(
                "image.features = {} must be 0 (no head) or at least image.out_dim = {}, with \
                 image.head_pairs = {} at least twice it",
                self.features, self.out_dim, self.head_pairs
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

    /// The width the network is trained at: `features`, or `out_dim` without a head.
    pub fn trained_width(&self) -> usize {
        if self.features > 0 {
            self.features
        } else {
            self.out_dim
        }
    }

    /// An encoder whose record may hold a solved head (a finished run's checkpoint): the
    /// head slot is filled with a placeholder that the record replaces (burn drops a
    /// present module that the record lacks, so an unfinished run loads with no head).
    pub fn init_for_record<B: Backend>(&self, device: &B::Device) -> Result<ImageEncoder<B>> {
        let mut m = self.init(device)?;
        if self.features > 0 {
            m.head = Some(LinearConfig::new(self.features, self.out_dim).init(device));
        }
        Ok(m)
    }

    /// Width of the MLP's input this config builds ([`mlp_inputs`]).
    pub fn mlp_inputs(&self) -> usize {
        mlp_inputs(self.patch, self.patch_dim, self.spectrum, self.pool)
    }

    /// Initialises the encoder's weights (burn's defaults: Kaiming-uniform), with no head.
    pub fn init<B: Backend>(&self, device: &B::Device) -> Result<ImageEncoder<B>> {
        self.check()?;
        Ok(ImageEncoder {
            patch_embed: LinearConfig::new(3 * self.patch * self.patch, self.patch_dim)
                .init(device),
            spectrum_embed: (self.spectrum > 0)
                .then(|| LinearConfig::new(SPECTRUM_LEN, self.spectrum).init(device)),
            fc1: LinearConfig::new(self.mlp_inputs(), self.hidden).init(device),
            norm: LayerNormConfig::new(self.hidden).init(device),
            fc2: LinearConfig::new(self.hidden, self.trained_width()).init(device),
            head: None,
            patch: self.patch,
        })
    }
}

/// One batch of pictures as the encoder reads them, built on the host
/// ([`ImageEncoder::inputs`]).
#[derive(Debug, Clone)]
pub struct ImageInputs<B: Backend> {
    /// `[n, (32 / patch)^2, 3 patch^2]`: the centred pixels cut into patches.
    pub patches: Tensor<B, 3>,
    /// `[n, SPECTRUM_LEN]`: each picture's [`spectrum_features`] (`None` without the branch).
    pub spectrum: Option<Tensor<B, 2>>,
}

impl<B: Backend> ImageEncoder<B> {
    /// f(x) = W2 LN(gelu(W1 [flatten(gelu(P patches(x))), gelu(S a(x))])): a shared linear
    /// map P of each non-overlapping patch (a stride = kernel convolution, as a ViT's patch
    /// embedding) and, with a spectrum branch, a linear map S of the picture's amplitude
    /// spectrum a(x) ([`power_spectrum`]), then an MLP over the concatenation, which keeps
    /// where each patch is (the object's position is a state factor). The LayerNorm keeps
    /// the output at unit scale at initialisation: SIGReg's gradient vanishes at a
    /// collapsed start. This entry reads the images back to the host when the encoder has
    /// a spectrum branch (the FFT runs there); training builds [`ImageInputs`] on the host
    /// directly.
    ///
    /// # Shapes
    /// `images [n, 3, 32, 32]` -> `[n, out_dim]`
    pub fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        let [n, c, h, w] = images.dims();
        let p = self.patch;
        let (gh, gw) = (h / p, w / p);
        let spectrum = self.spectrum_embed.as_ref().map(|_| {
            let device = images.device();
            let flat: Vec<f32> = images
                .clone()
                .into_data()
                .convert::<f32>()
                .to_vec()
                .expect("f32 data reads back as f32");
            // Undo images_tensor's centring: the spectrum is of the [0, 1] picture.
            let imgs: Vec<Vec<f32>> = flat
                .chunks(IMAGE_LEN)
                .map(|im| im.iter().map(|x| x * 0.25 + 0.5).collect())
                .collect();
            spectra_tensor::<B>(&imgs, &device)
        });
        let x = images.reshape([n, c, gh, p, gw, p]); // (n, c, gh, p, gw, p)
        let x = x.permute([0, 2, 4, 1, 3, 5]); // (n, gh, gw, c, p, p)
        self.forward_inputs(ImageInputs {
            patches: x.reshape([n, gh * gw, c * p * p]),
            spectrum,
        })
    }

    /// The encoder's inputs for rendered pictures, built on the host: the patches
    /// ([`patches_tensor`]; burn-flex's 6-D permutation walks element by element, ~15 % of
    /// an image JEPA step) and, with a spectrum branch, the spectra ([`spectra_tensor`]).
    ///
    /// # Shapes
    /// `images`: n buffers of `[3 * 32 * 32]` in [0, 1]
    pub fn inputs(&self, images: &[Vec<f32>], device: &B::Device) -> ImageInputs<B> {
        ImageInputs {
            patches: patches_tensor::<B>(images, self.patch, device),
            spectrum: self
                .spectrum_embed
                .as_ref()
                .map(|_| spectra_tensor::<B>(images, device)),
        }
    }

    /// [`ImageEncoder::forward`] from inputs built by [`ImageEncoder::inputs`].
    ///
    /// # Shapes
    /// patches `[n, (32 / patch)^2, 3 patch^2]`, spectrum `[n, SPECTRUM_LEN]` -> `[n, out_dim]`
    pub fn forward_inputs(&self, x: ImageInputs<B>) -> Tensor<B, 2> {
        let z = self.trained_output(x);
        match &self.head {
            Some(head) => head.forward(z),
            None => z,
        }
    }

    /// What training optimises: the network's output before the head,
    /// `W2 LN(gelu(W1 [...]))` (`features` wide when the encoder gets a head).
    ///
    /// # Shapes
    /// patches, spectrum as [`ImageEncoder::forward_inputs`] -> `[n, trained width]`
    pub fn trained_output(&self, x: ImageInputs<B>) -> Tensor<B, 2> {
        let hp = gelu(self.patch_embed.forward(x.patches)); // (n, patches, patch_dim)
        // The mean over patches as a product with a row of 1/P: mean_dim's gradient is a
        // broadcast view, and walking it element by element cost the picture runs ~11% of
        // their time (perf); the product's gradient is a dense product too.
        let pooled: Option<Tensor<B, 2>> = self.pools().then(|| {
            let [n, patches, _] = hp.dims();
            let avg = Tensor::<B, 3>::full([n, 1, patches], 1.0 / patches as f32, &hp.device());
            avg.matmul(hp.clone()).flatten(1, 2) // (n, patch_dim)
        });
        let h: Tensor<B, 2> = hp.flatten(1, 2); // (n, patches * patch_dim)
        let h = match (&self.spectrum_embed, x.spectrum) {
            (Some(s), Some(a)) => Tensor::cat(vec![h, gelu(s.forward(a))], 1),
            _ => h,
        };
        let h = match pooled {
            Some(m) => Tensor::cat(vec![h, m], 1),
            None => h,
        };
        self.fc2
            .forward(self.norm.forward(gelu(self.fc1.forward(h))))
    }

    /// The embeddings of `views`, each rendered afresh ([`render`] with its noise):
    /// [`ImageEncoder::forward_inputs`] (with the head) or, `trained`,
    /// [`ImageEncoder::trained_output`] (what training optimises).
    ///
    /// # Shapes
    /// `views [n]` -> `[n, out_dim]`, or `[n, trained width]` when `trained`
    pub fn embed_rendered(
        &self,
        views: &[SceneView],
        trained: bool,
        device: &B::Device,
    ) -> Tensor<B, 2> {
        let imgs: Vec<Vec<f32>> = views.iter().map(|v| render(v, true)).collect();
        let x = self.inputs(&imgs, device);
        if trained {
            self.trained_output(x)
        } else {
            self.forward_inputs(x)
        }
    }

    /// Whether the closed-form head has been set ([`ImageEncoder::with_head`]).
    pub fn has_head(&self) -> bool {
        self.head.is_some()
    }

    /// Whether the encoder has the spectrum branch.
    pub fn has_spectrum(&self) -> bool {
        self.spectrum_embed.is_some()
    }

    /// Width of the MLP's input as its weights hold it ([`ImageEncoderConfig::mlp_inputs`]
    /// for the config it was built from).
    pub fn mlp_inputs(&self) -> usize {
        self.fc1.weight.dims()[0]
    }

    /// Whether the MLP reads the pooled summary ([`ImageEncoderConfig::pool`]), read off
    /// its input width: a flag field would add a byte to the record and break the loading
    /// of every run folder written before it (records are not self-describing).
    fn pools(&self) -> bool {
        let patch_dim = self.patch_embed.weight.dims()[1];
        let spectrum = self
            .spectrum_embed
            .as_ref()
            .map_or(0, |s| s.weight.dims()[1]);
        self.mlp_inputs() == mlp_inputs(self.patch, patch_dim, spectrum, true)
    }

    /// The encoder with its last layer `g(z) = z weight + bias` set to `head` (weights
    /// `[trained width, out_dim]`, from [`crate::measure::view_spectrum::spectral_head`]).
    pub fn with_head(mut self, head: &crate::measure::view_spectrum::SpectralHead) -> Self {
        let device = self.fc2.weight.device();
        let (e, d) = (head.weight.nrows(), head.weight.ncols());
        let w: Vec<f32> = (0..e)
            .flat_map(|i| (0..d).map(move |j| (i, j)))
            .map(|(i, j)| head.weight[(i, j)] as f32)
            .collect();
        let b: Vec<f32> = head.bias.iter().map(|&x| x as f32).collect();
        self.head = Some(Linear {
            weight: burn::module::Param::from_tensor(
                Tensor::<B, 1>::from_floats(w.as_slice(), &device).reshape([e, d]),
            ),
            bias: Some(burn::module::Param::from_tensor(
                Tensor::<B, 1>::from_floats(b.as_slice(), &device),
            )),
        });
        self
    }
}

/// Highest frequency (cycles per picture, on each axis) the spectrum keeps: above it the
/// pixel noise's flat spectrum outweighs the smallest object's (measured: the spread of
/// one shape's spectra over noise, jitter and lighting, relative to the distance between
/// shapes, is 1.6x better at 8 than with every frequency up to 16).
pub const SPECTRUM_BAND: usize = 8;

/// Values in a picture's amplitude spectrum: frequencies ky in -8..=8 (17 rows) by
/// kx in 0..=8 (9 columns), the half-plane a real picture's spectrum determines.
pub const SPECTRUM_LEN: usize = (2 * SPECTRUM_BAND + 1) * (SPECTRUM_BAND + 1);

/// The 32-point FFT, planned once per process (rustfft plans are `Send + Sync`).
fn fft32() -> &'static Arc<dyn Fft<f32>> {
    static PLAN: OnceLock<Arc<dyn Fft<f32>>> = OnceLock::new();
    PLAN.get_or_init(|| FftPlanner::new().plan_fft_forward(IMAGE_SIZE))
}

/// The translation-invariant summary of a picture that the spectrum branch reads: the
/// normalised low-frequency amplitude spectrum of its ink,
/// `a(k) = sqrt(S P(k) / sum_k' P(k'))`, `P(k) = sum_c |DFT2(x_c - median(x_c))(k)|^2`,
/// over `k = (ky, kx)` with `|ky| <= 8`, `0 <= kx <= 8` ([`SPECTRUM_BAND`]; kx >= 0 is the
/// half-plane a real picture's spectrum determines; S = [`SPECTRUM_LEN`], so the mean of
/// a^2 is 1). The median of a channel is its background (the object covers at most ~17 %
/// of the pixels), so `x_c - median` is the object's ink `(fg_c - bg_c) m(x)` times the
/// lighting, plus pixel noise; a shift of the object is a phase factor of its DFT, so `a`
/// does not change with position (exactly for whole-pixel shifts that do not reach the
/// border), and the normalisation removes colour, background and lighting: `a` depends on
/// the shape's mask m alone, i.e. on shape and size. A picture with no ink gives zeros.
///
/// # Shapes
/// `image [3 * 32 * 32]`, channel-major, values in [0, 1] -> `[SPECTRUM_LEN]`
pub fn power_spectrum(image: &[f32]) -> Vec<f32> {
    debug_assert_eq!(image.len(), IMAGE_LEN);
    let (n, band) = (IMAGE_SIZE, SPECTRUM_BAND);
    let plane = n * n;
    let rows: Vec<usize> = (0..=band).chain(n - band..n).collect(); // ky = 0..8, -8..-1
    let fft = fft32();
    let mut power = vec![0.0f64; SPECTRUM_LEN];
    let mut buf = vec![Complex32::default(); plane];
    let mut column = vec![Complex32::default(); n];
    let mut sorted = vec![0.0f32; plane];
    for c in 0..3 {
        let channel = &image[c * plane..(c + 1) * plane];
        sorted.copy_from_slice(channel);
        let (_, &mut median, _) = sorted.select_nth_unstable_by(plane / 2, f32::total_cmp);
        for (b, &x) in buf.iter_mut().zip(channel) {
            *b = Complex32::new(x - median, 0.0);
        }
        fft.process(&mut buf); // every row (32 consecutive values) at once
        for kx in 0..=band {
            for (y, v) in column.iter_mut().enumerate() {
                *v = buf[y * n + kx];
            }
            fft.process(&mut column);
            for (r, &ky) in rows.iter().enumerate() {
                power[r * (band + 1) + kx] += column[ky].norm_sqr() as f64;
            }
        }
    }
    let total: f64 = power.iter().sum();
    let scale = if total > 0.0 {
        SPECTRUM_LEN as f64 / total
    } else {
        0.0
    };
    power.iter().map(|p| (p * scale).sqrt() as f32).collect()
}

/// The fixed centring of the spectrum branch's input: the mean `mu` of [`power_spectrum`]
/// over every noise-free shape (the four shapes and the hidden-shape ring) at every radius
/// (three sizes and the hidden one), at the picture's centre, and `s`, the root mean over
/// frequencies of their variance. A property of the renderer, not of a world or a run.
/// Why: the amplitudes are positive and their common profile (most ink at low frequencies)
/// is ~92 % of their energy, so uncentred they reach every unit of the branch alike and the
/// differences between shapes are lost at initialisation (measured: a JEPA with the
/// uncentred branch learned no shape at all, the same branch alone did).
fn spectrum_centring() -> &'static (Vec<f32>, f32) {
    static STATS: OnceLock<(Vec<f32>, f32)> = OnceLock::new();
    STATS.get_or_init(|| {
        let mut spectra = Vec::new();
        for shape in 0..5 {
            for size in 0..4 {
                let mut v = SceneView::full([shape.min(3), 0, size.min(2), 0], 0, 0);
                v.visible = [shape < 4, true, size < 3, false];
                spectra.push(power_spectrum(&render(&v, false)));
            }
        }
        let n = spectra.len() as f32;
        let mean: Vec<f32> = (0..SPECTRUM_LEN)
            .map(|k| spectra.iter().map(|a| a[k]).sum::<f32>() / n)
            .collect();
        let var = spectra
            .iter()
            .flat_map(|a| a.iter().zip(&mean).map(|(x, m)| (x - m).powi(2)))
            .sum::<f32>()
            / (n * SPECTRUM_LEN as f32);
        (mean, var.sqrt())
    })
}

/// What the spectrum branch reads: `(a(x) - mu) / s`, the picture's [`power_spectrum`]
/// centred and scaled by the fixed [`spectrum_centring`] (unit variance per frequency on
/// average over the renderer's shapes and sizes).
///
/// # Shapes
/// `image [3 * 32 * 32]` in [0, 1] -> `[SPECTRUM_LEN]`
pub fn spectrum_features(image: &[f32]) -> Vec<f32> {
    let (mean, scale) = spectrum_centring();
    power_spectrum(image)
        .iter()
        .zip(mean)
        .map(|(a, m)| (a - m) / scale)
        .collect()
}

/// Every picture's [`spectrum_features`], stacked.
///
/// # Shapes
/// `images`: n buffers of `[3 * 32 * 32]` in [0, 1] -> `[n, SPECTRUM_LEN]`
pub fn spectra_tensor<B: Backend>(images: &[Vec<f32>], device: &B::Device) -> Tensor<B, 2> {
    let flat: Vec<f32> = images.iter().flat_map(|im| spectrum_features(im)).collect();
    Tensor::<B, 1>::from_floats(flat.as_slice(), device).reshape([images.len(), SPECTRUM_LEN])
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
    embed_in_chunks(
        views,
        |chunk| Ok(model.embed_rendered(chunk, false, device)),
    )
}

/// Sets the closed-form head of a trained encoder configured with `features > 0`
/// ([`ImageEncoderConfig::features`], [`closed_form_head`]); encoders without `features`
/// are returned as they are.
pub fn solve_head<B: AutodiffBackend>(
    model: ImageEncoder<B>,
    config: &ImageEncoderConfig,
    world: &crate::scene::SceneWorld,
    kind: crate::theory::view_kind::ViewKind,
    seed: u64,
) -> Result<ImageEncoder<B>>
where
    ImageEncoder<B>: burn::module::AutodiffModule<B, InnerModule = ImageEncoder<B::InnerBackend>>,
{
    use burn::module::AutodiffModule;
    if config.features == 0 {
        return Ok(model);
    }
    let head = closed_form_head(&model.valid(), config, world, kind, seed)?;
    Ok(model.with_head(&head))
}

/// The closed-form head of `model`'s trained output: `config.head_pairs` positive pairs of
/// `kind` views drawn from `world` with `seed`, embedded by the network without its head,
/// and [`crate::measure::view_spectrum::spectral_head`] of the two views' outputs to
/// `config.out_dim`. Deterministic in (model, world, kind, seed).
pub fn closed_form_head<B: Backend>(
    model: &ImageEncoder<B>,
    config: &ImageEncoderConfig,
    world: &crate::scene::SceneWorld,
    kind: crate::theory::view_kind::ViewKind,
    seed: u64,
) -> Result<crate::measure::view_spectrum::SpectralHead> {
    let device = model.fc2.weight.device();
    let mut rng = crate::rng::generator(seed, crate::rng::Stream::Eval, HEAD_DRAW);
    let (a, b): (Vec<SceneView>, Vec<SceneView>) = (0..config.head_pairs)
        .map(|_| world.sample_pair(crate::scene::Modality::Image, kind, &mut rng))
        .unzip();
    let outputs = |views: &[SceneView]| {
        embed_in_chunks(
            views,
            |chunk| Ok(model.embed_rendered(chunk, true, &device)),
        )
        .and_then(|rows| crate::linalg::from_rows(&rows))
    };
    let (fa, fb) = (outputs(&a)?, outputs(&b)?);
    crate::measure::view_spectrum::spectral_head(fa.as_ref(), fb.as_ref(), config.out_dim)
}

/// The step index of the head's pair draw in the run's evaluation stream (no evaluation
/// draw uses it).
const HEAD_DRAW: u64 = u64::MAX;

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
/// through here or through [`embed_in_chunks_async`].
///
/// # Shapes
/// `views [n]`, `forward: [c] -> [c, d]` -> `n` rows of `d`
pub fn embed_in_chunks<B: Backend>(
    views: &[SceneView],
    forward: impl FnMut(&[SceneView]) -> Result<Tensor<B, 2>>,
) -> Result<Vec<Vec<f64>>> {
    crate::backend::read_now("embedding", embed_in_chunks_async(views, forward))?
}

/// [`embed_in_chunks`], awaiting each chunk's read-back (WebGPU in a browser cannot
/// block).
///
/// # Shapes
/// `views [n]`, `forward: [c] -> [c, d]` -> `n` rows of `d`
pub async fn embed_in_chunks_async<B: Backend>(
    views: &[SceneView],
    mut forward: impl FnMut(&[SceneView]) -> Result<Tensor<B, 2>>,
) -> Result<Vec<Vec<f64>>> {
    let mut out = Vec::with_capacity(views.len());
    for chunk in views.chunks(256) {
        out.extend(rows_f64_async(forward(chunk)?).await?);
    }
    Ok(out)
}

/// Reads a `[n, d]` tensor back as rows of f64.
pub fn rows_f64<B: Backend>(z: Tensor<B, 2>) -> Result<Vec<Vec<f64>>> {
    crate::backend::read_now("reading embeddings back", rows_f64_async(z))?
}

/// [`rows_f64`], awaiting the read-back.
pub async fn rows_f64_async<B: Backend>(z: Tensor<B, 2>) -> Result<Vec<Vec<f64>>> {
    let [_, d] = z.dims();
    let data: Vec<f32> = z
        .into_data_async()
        .await
        .map_err(|e| Error::Numerical(format!("reading embeddings back: {e:?}")))?
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

    /// The host's patches are the layout `forward` builds on the device, and the spectrum
    /// branch reads the same spectra either way.
    #[test]
    fn host_patches_equal_the_devices_reshape_and_permute() {
        let dev = Default::default();
        for (patch, spectrum, pool) in [(4, 0, false), (8, 0, false), (4, 16, false), (4, 16, true)]
        {
            let m = ImageEncoderConfig {
                out_dim: 5,
                patch,
                spectrum,
                pool,
                ..Default::default()
            }
            .init::<NdArray>(&dev)
            .unwrap();
            let imgs: Vec<Vec<f32>> = (0..3)
                .map(|i| render(&SceneView::full([i, 1, 2, i], 0, i as u64), true))
                .collect();
            let a = m.forward(images_tensor::<NdArray>(&imgs, &dev));
            let b = m.forward_inputs(m.inputs(&imgs, &dev));
            assert_eq!(b.dims(), [3, 5]);
            a.into_data()
                .assert_approx_eq::<f32>(&b.into_data(), burn::tensor::Tolerance::absolute(1e-5));
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

    fn spectrum_of(state: [usize; 4], background: usize) -> Vec<f32> {
        power_spectrum(&render(&SceneView::full(state, background, 0), false))
    }

    fn distance(a: &[f32], b: &[f32]) -> f32 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).powi(2))
            .sum::<f32>()
            .sqrt()
    }

    /// Closed forms of the spectrum: mean square 1 (its normalisation); the same for one
    /// shape and size at every position (the four positions are whole-pixel shifts of each
    /// other, 16 px apart), in every colour and on every background (it reads the ink's
    /// mask alone), to float rounding; and far apart for different shapes or sizes.
    #[test]
    fn power_spectrum_sees_shape_and_size_but_not_where_or_what_colour() {
        let base = spectrum_of([1, 0, 1, 0], 0);
        assert_eq!(base.len(), SPECTRUM_LEN);
        let mean_square = base.iter().map(|x| x * x).sum::<f32>() / SPECTRUM_LEN as f32;
        assert!((mean_square - 1.0).abs() < 1e-4, "{mean_square}");
        for position in 1..4 {
            let d = distance(&base, &spectrum_of([1, 0, 1, position], 0));
            assert!(d < 1e-3, "position {position} moved the spectrum by {d}");
        }
        for (colour, background) in [(1, 0), (2, 3), (5, 1), (3, 2)] {
            let d = distance(&base, &spectrum_of([1, colour, 1, 0], background));
            assert!(d < 1e-3, "colour {colour} background {background}: {d}");
        }
        for other in [
            [0, 0, 1, 0],
            [2, 0, 1, 0],
            [3, 0, 1, 0],
            [1, 0, 0, 0],
            [1, 0, 2, 0],
        ] {
            let d = distance(&base, &spectrum_of(other, 0));
            assert!(d > 1.0, "{other:?} is only {d} from the square");
        }
        // A blank picture (no ink at all) has no spectrum to normalise: zeros, not NaN.
        let blank = power_spectrum(&vec![0.3; IMAGE_LEN]);
        assert!(blank.iter().all(|&x| x == 0.0));
    }

    /// With noise, jitter and lighting (the training renderings), one state's spectra stay
    /// closer to each other than to another shape's.
    #[test]
    fn noisy_spectra_of_one_shape_cluster() {
        let spectra = |shape: usize| -> Vec<Vec<f32>> {
            (0..8u64)
                .map(|seed| {
                    let v =
                        SceneView::full([shape, seed as usize % 4, 1, seed as usize % 4], 1, seed);
                    power_spectrum(&render(&v, true))
                })
                .collect()
        };
        let (circle, cross) = (spectra(0), spectra(3));
        let within = distance(&circle[0], &circle[5]).max(distance(&cross[1], &cross[6]));
        let between = distance(&circle[0], &cross[0]).min(distance(&circle[5], &cross[6]));
        assert!(between > 2.0 * within, "within {within}, between {between}");
    }
}
