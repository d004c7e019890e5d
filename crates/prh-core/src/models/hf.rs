//! Pretrained encoders from Hugging Face checkpoints, as burn models on any backend:
//! BERT-family text encoders and ViT / DINOv2 image encoders, built from the sizes of
//! `config.json` ([`crate::formats::hf::HfConfig`]) and filled from `model.safetensors`
//! ([`crate::formats::hf::TensorTable`], every name and shape checked, nothing left over).
//!
//! The transformer layers are burn's `TransformerEncoderLayer` run on token rows
//! ([`crate::models::transformer::layer_rows`]): the same attention
//! `softmax(Q K^T / sqrt(d_k) + mask) V` and exact GELU as HF's modeling code. Mapping
//! of the layer norms (burn's `layer_rows` applies `norm_2` around attention, `norm_1`
//! around the feed-forward block):
//! - BERT (post-LN): `x = LN_att(x + Att(x))`, `x = LN_out(x + FF(x))`;
//!   `attention.output.LayerNorm` -> `norm_1`, `output.LayerNorm` -> `norm_2`.
//! - ViT (pre-LN): `x = x + Att(LN_before(x))`, `x = x + FF(LN_after(x))`;
//!   `layernorm_before` -> `norm_2`, `layernorm_after` -> `norm_1`.
//! - DINOv2: ViT's pre-LN with layer scale, `x = x + g_1 * Att(N_1(x))`,
//!   `x = x + g_2 * FF(N_2(x))` (`layer_scale{1,2}.lambda1`, elementwise over H).
//!
//! Padding: HF adds `finfo(f32).min` to the scores of masked keys, burn's layer adds its
//! `min_float` (-1e4); both give those keys a softmax weight of exactly 0 in f32.
//!
//! What is returned are the L + 1 hidden states (HF's `output_hidden_states`): the
//! embeddings' output, then each layer's output; for the vision models the final
//! `layernorm` is applied separately ([`HfVit::final_norm`]), as in HF's
//! `last_hidden_state`.

use burn::module::Param;
use burn::nn::transformer::{
    TransformerEncoder, TransformerEncoderConfig, TransformerEncoderLayer,
};
use burn::nn::{Initializer, LayerNorm, LayerNormConfig, Linear};
use burn::prelude::*;

use crate::formats::hf::{BertConfig, HiddenAct, TensorTable, VitConfig, VitKind};
use crate::models::transformer::{RowMasks, attention_rows, feed_forward_rows, layer_rows};
use crate::{Error, Result};

fn tensor1<B: Backend>(
    t: &mut TensorTable,
    name: &str,
    n: usize,
    dev: &B::Device,
) -> Result<Tensor<B, 1>> {
    Ok(Tensor::from_data(
        TensorData::new(t.take(name, &[n])?, [n]),
        dev,
    ))
}

fn tensor2<B: Backend>(
    t: &mut TensorTable,
    name: &str,
    shape: [usize; 2],
    dev: &B::Device,
) -> Result<Tensor<B, 2>> {
    Ok(Tensor::from_data(
        TensorData::new(t.take(name, &shape)?, shape),
        dev,
    ))
}

/// A PyTorch `nn.Linear(d_in, d_out)` named `name`: weight `[d_out, d_in]` (transposed into
/// burn's `[d_in, d_out]`), bias `[d_out]` when `bias`.
fn linear<B: Backend>(
    t: &mut TensorTable,
    name: &str,
    d_in: usize,
    d_out: usize,
    bias: bool,
    dev: &B::Device,
) -> Result<Linear<B>> {
    let w = tensor2::<B>(t, &format!("{name}.weight"), [d_out, d_in], dev)?.transpose();
    let b = if bias {
        Some(Param::from_tensor(tensor1::<B>(
            t,
            &format!("{name}.bias"),
            d_out,
            dev,
        )?))
    } else {
        None
    };
    Ok(Linear {
        weight: Param::from_tensor(w),
        bias: b,
    })
}

/// A PyTorch `nn.LayerNorm(h, eps)` named `name` (weight and bias `[h]`; old BERT files
/// call them `gamma` and `beta`).
fn layer_norm<B: Backend>(
    t: &mut TensorTable,
    name: &str,
    h: usize,
    eps: f64,
    dev: &B::Device,
) -> Result<LayerNorm<B>> {
    let (w, b) = if t.has(&format!("{name}.gamma")) {
        ("gamma", "beta")
    } else {
        ("weight", "bias")
    };
    let mut ln = LayerNormConfig::new(h).with_epsilon(eps).init(dev);
    ln.gamma = Param::from_tensor(tensor1::<B>(t, &format!("{name}.{w}"), h, dev)?);
    ln.beta = Some(Param::from_tensor(tensor1::<B>(
        t,
        &format!("{name}.{b}"),
        h,
        dev,
    )?));
    Ok(ln)
}

/// Names of one transformer layer's tensors in a checkpoint layout.
struct LayerNames {
    /// Attention's q, k, v (`{p}.query` etc.) and output projection.
    q: &'static str,
    k: &'static str,
    v: &'static str,
    o: &'static str,
    /// The norm burn calls `norm_2` (around attention) and `norm_1` (around the FFN).
    norm_att: &'static str,
    norm_ff: &'static str,
    /// Feed-forward in and out.
    ff_in: &'static str,
    ff_out: &'static str,
}

const BERT_LAYER: LayerNames = LayerNames {
    q: "attention.self.query",
    k: "attention.self.key",
    v: "attention.self.value",
    o: "attention.output.dense",
    norm_att: "output.LayerNorm",
    norm_ff: "attention.output.LayerNorm",
    ff_in: "intermediate.dense",
    ff_out: "output.dense",
};

const VIT_LAYER: LayerNames = LayerNames {
    q: "attention.attention.query",
    k: "attention.attention.key",
    v: "attention.attention.value",
    o: "attention.output.dense",
    norm_att: "layernorm_before",
    norm_ff: "layernorm_after",
    ff_in: "intermediate.dense",
    ff_out: "output.dense",
};

const DINOV2_LAYER: LayerNames = LayerNames {
    q: "attention.attention.query",
    k: "attention.attention.key",
    v: "attention.attention.value",
    o: "attention.output.dense",
    norm_att: "norm1",
    norm_ff: "norm2",
    ff_in: "mlp.fc1",
    ff_out: "mlp.fc2",
};

/// Sizes shared by the encoder stacks.
struct StackSpec {
    h: usize,
    ff: usize,
    heads: usize,
    layers: usize,
    eps: f64,
    act: HiddenAct,
    norm_first: bool,
    qkv_bias: bool,
}

/// burn's encoder with every parameter taken from `encoder.layer.{i}.*`.
fn encoder_stack<B: Backend>(
    t: &mut TensorTable,
    s: &StackSpec,
    names: &LayerNames,
    dev: &B::Device,
) -> Result<TransformerEncoder<B>> {
    let act = match s.act {
        HiddenAct::Gelu => burn::nn::activation::ActivationConfig::Gelu,
        HiddenAct::Relu => burn::nn::activation::ActivationConfig::Relu,
    };
    // Zeros: every parameter is replaced below, so skip drawing random ones.
    let mut enc: TransformerEncoder<B> =
        TransformerEncoderConfig::new(s.h, s.ff, s.heads, s.layers)
            .with_dropout(0.0)
            .with_norm_first(s.norm_first)
            .with_layer_norm_eps(s.eps)
            .with_activation(act)
            .with_initializer(Initializer::Zeros)
            .init(dev);
    for (i, layer) in enc.layers.iter_mut().enumerate() {
        let p = |n: &str| format!("encoder.layer.{i}.{n}");
        let mha = &mut layer.mha;
        mha.query = linear(t, &p(names.q), s.h, s.h, s.qkv_bias, dev)?;
        mha.key = linear(t, &p(names.k), s.h, s.h, s.qkv_bias, dev)?;
        mha.value = linear(t, &p(names.v), s.h, s.h, s.qkv_bias, dev)?;
        mha.output = linear(t, &p(names.o), s.h, s.h, true, dev)?;
        layer.norm_2 = layer_norm(t, &p(names.norm_att), s.h, s.eps, dev)?;
        layer.norm_1 = layer_norm(t, &p(names.norm_ff), s.h, s.eps, dev)?;
        layer.pwff.linear_inner = linear(t, &p(names.ff_in), s.h, s.ff, true, dev)?;
        layer.pwff.linear_outer = linear(t, &p(names.ff_out), s.ff, s.h, true, dev)?;
    }
    Ok(enc)
}

/// HF `BertModel`: `E = LN(W_word[ids] + W_pos[0..T] + W_type[0])`, then L post-LN layers.
pub struct HfBert<B: Backend> {
    /// Sizes from config.json.
    pub config: BertConfig,
    word: Tensor<B, 2>,
    position: Tensor<B, 2>,
    token_type0: Tensor<B, 1>,
    norm: LayerNorm<B>,
    encoder: TransformerEncoder<B>,
}

impl<B: Backend> HfBert<B> {
    /// Builds the model from a checkpoint's tensors (bare `BertModel` names, or under
    /// `bert.` as in `BertForMaskedLM` & co.; the heads `cls.*`, `pooler.*` and the integer
    /// buffer `embeddings.position_ids` are known and not used), then refuses any tensor
    /// left over.
    pub fn load(config: &BertConfig, mut t: TensorTable, dev: &B::Device) -> Result<Self> {
        let c = config;
        t.detect_prefix("embeddings.word_embeddings.weight", &["bert.", "model."])?;
        let h = c.hidden_size;
        let word = tensor2(
            &mut t,
            "embeddings.word_embeddings.weight",
            [c.vocab_size, h],
            dev,
        )?;
        let position = tensor2(
            &mut t,
            "embeddings.position_embeddings.weight",
            [c.max_positions, h],
            dev,
        )?;
        let types = tensor2::<B>(
            &mut t,
            "embeddings.token_type_embeddings.weight",
            [c.type_vocab_size, h],
            dev,
        )?;
        let token_type0 = types.slice([0..1, 0..h]).reshape([h]);
        let norm = layer_norm(&mut t, "embeddings.LayerNorm", h, c.layer_norm_eps, dev)?;
        let spec = StackSpec {
            h,
            ff: c.intermediate_size,
            heads: c.num_heads,
            layers: c.num_layers,
            eps: c.layer_norm_eps,
            act: c.act,
            norm_first: false,
            qkv_bias: true,
        };
        let encoder = encoder_stack(&mut t, &spec, &BERT_LAYER, dev)?;
        let pre = t.prefix().to_string();
        let known = [
            format!("{pre}pooler."),
            format!("{pre}embeddings.position_ids"),
        ];
        t.ignore(&[known[0].as_str(), known[1].as_str()]);
        t.ignore(&["cls.", "classifier.", "qa_outputs."]);
        t.finish()?;
        Ok(Self {
            config: c.clone(),
            word,
            position,
            token_type0,
            norm,
            encoder,
        })
    }

    /// The device the weights live on.
    pub fn device(&self) -> B::Device {
        self.word.device()
    }

    /// The L + 1 hidden states of `ids` (HF's `output_hidden_states`).
    ///
    /// # Shapes
    /// `ids [n, T]` token ids, `pad [n, T]` (true at padding; those keys get no attention)
    /// -> L + 1 tensors `[n, T, H]`. T must not exceed `max_position_embeddings`.
    pub fn hidden_states(
        &self,
        ids: Tensor<B, 2, Int>,
        pad: Tensor<B, 2, Bool>,
    ) -> Result<Vec<Tensor<B, 3>>> {
        let [n, l] = ids.dims();
        let h = self.config.hidden_size;
        if l > self.config.max_positions {
            return Err(Error::invalid(format!(
                "{l} tokens: the model has {} position embeddings",
                self.config.max_positions
            )));
        }
        let rows = ids.reshape([n * l]);
        let words = self.word.clone().select(0, rows); // [n T, H]
        let pos = self.position.clone().slice([0..l, 0..h]); // [T, H]
        let pos = pos.reshape([1, l, h]).repeat_dim(0, n).reshape([n * l, h]);
        let x = words + pos + self.token_type0.clone().reshape([1, h]);
        let x = self.norm.forward(x);
        let masks = RowMasks::for_encoder(&self.encoder, pad, None);
        Ok(run_layers(&self.encoder.layers, x, &masks, None, n, l))
    }
}

/// Runs every layer on rows `x [n T, H]`, returning the input and each layer's output as
/// `[n, T, H]`; `scales` (DINOv2) are each layer's `(g_1, g_2)`.
fn run_layers<B: Backend>(
    layers: &[TransformerEncoderLayer<B>],
    mut x: Tensor<B, 2>,
    masks: &RowMasks<B>,
    scales: Option<&[(Tensor<B, 1>, Tensor<B, 1>)]>,
    n: usize,
    l: usize,
) -> Vec<Tensor<B, 3>> {
    let h = x.dims()[1];
    let mut states = vec![x.clone().reshape([n, l, h])];
    for (i, layer) in layers.iter().enumerate() {
        x = match scales {
            None => layer_rows(layer, x, masks),
            Some(s) => {
                let (g1, g2) = (&s[i].0, &s[i].1);
                let a = attention_rows(layer, layer.norm_2.forward(x.clone()), masks);
                let x = x + a * g1.clone().reshape([1, h]);
                let f = feed_forward_rows(&layer.pwff, layer.norm_1.forward(x.clone()));
                x + f * g2.clone().reshape([1, h])
            }
        };
        states.push(x.clone().reshape([n, l, h]));
    }
    states
}

/// HF `ViTModel` or `Dinov2Model`: patches of side P embedded by a linear map (the stride-P
/// convolution), a CLS token in front, position embeddings added, then L pre-LN layers.
pub struct HfVit<B: Backend> {
    /// Sizes from config.json.
    pub config: VitConfig,
    /// Conv weight flattened to `[C P P, H]` (rows in (c, ky, kx) order).
    patch_w: Tensor<B, 2>,
    patch_b: Tensor<B, 1>,
    cls: Tensor<B, 1>,
    /// `[1 + G, H]` over the stored grid G = (S / P)^2 (host copy for interpolation).
    position: Vec<f32>,
    encoder: TransformerEncoder<B>,
    scales: Option<Vec<(Tensor<B, 1>, Tensor<B, 1>)>>,
    final_norm: LayerNorm<B>,
}

impl<B: Backend> HfVit<B> {
    /// Builds the model from a checkpoint's tensors (bare names, or under `vit.` / `dinov2.`
    /// as in the image-classification heads; `classifier.*`, `pooler.*` and DINOv2's
    /// `mask_token`, unused at inference, are known and skipped), then refuses any tensor
    /// left over.
    pub fn load(config: &VitConfig, mut t: TensorTable, dev: &B::Device) -> Result<Self> {
        let c = config;
        t.detect_prefix("embeddings.cls_token", &["vit.", "dinov2."])?;
        let (h, p, ch) = (c.hidden_size, c.patch_size, c.num_channels);
        let grid = (c.image_size / p) * (c.image_size / p);
        let conv = t.take(
            "embeddings.patch_embeddings.projection.weight",
            &[h, ch, p, p],
        )?;
        let patch_w =
            Tensor::<B, 2>::from_data(TensorData::new(conv, [h, ch * p * p]), dev).transpose();
        let patch_b = tensor1(
            &mut t,
            "embeddings.patch_embeddings.projection.bias",
            h,
            dev,
        )?;
        let cls = Tensor::from_data(
            TensorData::new(t.take("embeddings.cls_token", &[1, 1, h])?, [h]),
            dev,
        );
        let position = t.take("embeddings.position_embeddings", &[1, 1 + grid, h])?;
        // Both layouts are pre-LN; only the tensor names differ.
        let names = match c.kind {
            VitKind::Vit => &VIT_LAYER,
            VitKind::Dinov2 => &DINOV2_LAYER,
        };
        let spec = StackSpec {
            h,
            ff: c.intermediate_size,
            heads: c.num_heads,
            layers: c.num_layers,
            eps: c.layer_norm_eps,
            act: c.act,
            norm_first: true,
            qkv_bias: c.qkv_bias,
        };
        let encoder = encoder_stack(&mut t, &spec, names, dev)?;
        let scales = match c.kind {
            VitKind::Vit => None,
            VitKind::Dinov2 => Some(
                (0..c.num_layers)
                    .map(|i| {
                        let mut g = |k: usize| {
                            tensor1::<B>(
                                &mut t,
                                &format!("encoder.layer.{i}.layer_scale{k}.lambda1"),
                                h,
                                dev,
                            )
                        };
                        Ok((g(1)?, g(2)?))
                    })
                    .collect::<Result<Vec<_>>>()?,
            ),
        };
        let final_norm = layer_norm(&mut t, "layernorm", h, c.layer_norm_eps, dev)?;
        let pre = t.prefix().to_string();
        let known = [
            format!("{pre}pooler."),
            format!("{pre}embeddings.mask_token"),
        ];
        t.ignore(&[known[0].as_str(), known[1].as_str(), "classifier."]);
        t.finish()?;
        Ok(Self {
            config: c.clone(),
            patch_w,
            patch_b,
            cls,
            position,
            encoder,
            scales,
            final_norm,
        })
    }

    /// The device the weights live on.
    pub fn device(&self) -> B::Device {
        self.patch_w.device()
    }

    /// The position embeddings for an input of `gh x gw` patches, `[1 + gh gw, H]`: the
    /// stored ones when the grid matches, DINOv2's interpolation otherwise (ViT refuses).
    fn positions(&self, gh: usize, gw: usize, dev: &B::Device) -> Result<Tensor<B, 2>> {
        let c = &self.config;
        let g0 = c.image_size / c.patch_size;
        let h = c.hidden_size;
        let table = if gh == g0 && gw == g0 {
            self.position.clone()
        } else if c.kind == VitKind::Dinov2 {
            interpolate_positions(&self.position, g0, h, gh, gw)
        } else {
            return Err(Error::invalid(format!(
                "a {}x{} input to a ViT trained at {}x{}: expected the image size of \
                 config.json (the image processor's resize gives it)",
                gh * c.patch_size,
                gw * c.patch_size,
                c.image_size,
                c.image_size
            )));
        };
        Ok(Tensor::from_data(
            TensorData::new(table, [1 + gh * gw, h]),
            dev,
        ))
    }

    /// The L + 1 hidden states (before the final layer norm) of a batch of images.
    ///
    /// # Shapes
    /// `pixels [n, C, Hi, Wi]` (Hi, Wi multiples of P) -> L + 1 tensors `[n, 1 + G, H]`,
    /// G = (Hi / P)(Wi / P), token 0 the CLS token, patch `gy * (Wi / P) + gx` after it.
    pub fn hidden_states(&self, pixels: Tensor<B, 4>) -> Result<Vec<Tensor<B, 3>>> {
        let c = &self.config;
        let [n, ch, hi, wi] = pixels.dims();
        let p = c.patch_size;
        if ch != c.num_channels || hi % p != 0 || wi % p != 0 || hi == 0 || wi == 0 {
            return Err(Error::invalid(format!(
                "pixels [{n}, {ch}, {hi}, {wi}]: expected {} channels and sides that are \
                 positive multiples of the patch size {p}",
                c.num_channels
            )));
        }
        let (gh, gw, h) = (hi / p, wi / p, c.hidden_size);
        let dev = pixels.device();
        // [n, C, gh, P, gw, P] -> [n, gh, gw, C, P, P]: one row per patch, (c, ky, kx)
        // order as the conv weight's flattening.
        let patches: Tensor<B, 6> = pixels.reshape([n, ch, gh, p, gw, p]);
        let patches = patches
            .permute([0, 2, 4, 1, 3, 5])
            .reshape([n * gh * gw, ch * p * p]);
        let emb = patches.matmul(self.patch_w.clone()) + self.patch_b.clone().reshape([1, h]);
        let emb = emb.reshape([n, gh * gw, h]);
        let cls = self.cls.clone().reshape([1, 1, h]).repeat_dim(0, n);
        let tokens = Tensor::cat(vec![cls, emb], 1); // [n, 1 + G, H]
        let l = 1 + gh * gw;
        let x = tokens + self.positions(gh, gw, &dev)?.reshape([1, l, h]);
        let pad = Tensor::<B, 2, Int>::zeros([n, l], &dev).bool();
        let masks = RowMasks::for_encoder(&self.encoder, pad, None);
        Ok(run_layers(
            &self.encoder.layers,
            x.reshape([n * l, h]),
            &masks,
            self.scales.as_deref(),
            n,
            l,
        ))
    }

    /// The final `layernorm` (HF's `last_hidden_state` = it applied to the last state).
    ///
    /// # Shapes
    /// `[n, T, H]` -> `[n, T, H]`.
    pub fn final_norm(&self, x: Tensor<B, 3>) -> Tensor<B, 3> {
        self.final_norm.forward(x)
    }
}

/// DINOv2's position embeddings for a `gh x gw` patch grid: the CLS row kept, the stored
/// `g0 x g0` grid of patch rows resized per channel as HF's (transformers 5.x)
/// `Dinov2Embeddings.interpolate_pos_encoding` does, by `torch.nn.functional.interpolate(
/// size=(gh, gw), mode="bicubic", align_corners=False)` in f32 (transformers 4.x passed a
/// `scale_factor` with a +0.1 offset instead, which gives different numbers):
/// per axis `scale = g0 / g_out`, source coordinate `s = scale (o + 1/2) - 1/2` (not
/// clamped), `i0 = min(floor s, g0 - 1)`, `t = clamp(s - i0, 0, 1)`; taps
/// `i0 - 1 ..= i0 + 2` clamped to the grid with Keys' cubic weights (A = -0.75)
/// `[K2(t + 1), K1(t), K1(1 - t), K2(2 - t)]`, `K1(x) = ((A + 2) x - (A + 3)) x^2 + 1`,
/// `K2(x) = ((A x - 5 A) x + 8 A) x - 4 A`; `out = sum_a wy_a (sum_b wx_b in[iy_a, ix_b])`.
///
/// # Shapes
/// `table [1 + g0 g0, H]` -> `[1 + gh gw, H]`.
fn interpolate_positions(table: &[f32], g0: usize, h: usize, gh: usize, gw: usize) -> Vec<f32> {
    let taps = |o: usize, out: usize| -> [(usize, f32); 4] {
        let scale = g0 as f32 / out as f32;
        let s = scale * (o as f32 + 0.5) - 0.5;
        let i0 = (s.floor() as i64).min(g0 as i64 - 1);
        let t = (s - i0 as f32).clamp(0.0, 1.0);
        let a = -0.75f32;
        let k1 = |x: f32| ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
        let k2 = |x: f32| ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
        let w = [k2(t + 1.0), k1(t), k1(1.0 - t), k2(2.0 - t)];
        let idx = |k: i64| (i0 + k).clamp(0, g0 as i64 - 1) as usize;
        [
            (idx(-1), w[0]),
            (idx(0), w[1]),
            (idx(1), w[2]),
            (idx(2), w[3]),
        ]
    };
    let mut out = Vec::with_capacity((1 + gh * gw) * h);
    out.extend_from_slice(&table[..h]);
    let grid = &table[h..];
    for oy in 0..gh {
        let wy = taps(oy, gh);
        for ox in 0..gw {
            let wx = taps(ox, gw);
            for c in 0..h {
                let mut acc = 0.0f32;
                for &(iy, ay) in &wy {
                    let mut row = 0.0f32;
                    for &(ix, ax) in &wx {
                        row += ax * grid[(iy * g0 + ix) * h + c];
                    }
                    acc += ay * row;
                }
                out.push(acc);
            }
        }
    }
    out
}
