//! BERT-style text encoder (paper section 4: BERT-S = 12 layers x 384, BERT-B = 12 x 768).
//!
//! `token embedding + learned position embedding -> pre-LN transformer -> LayerNorm ->
//! pooling (mean over non-pad tokens, or the CLS token) -> optional MLP projector`.
//! The next-token baseline is the same network with causal attention and an LM head;
//! its embedding for alignment is the mean-pooled last hidden state (paper section 3).
//!
//! Built from burn's own modules (`Embedding`, `TransformerEncoder`, `LayerNorm`,
//! `Linear`), generic over the backend `B`, so the same code trains natively and embeds
//! in the browser.

use burn::nn::attention::generate_autoregressive_mask;
use burn::nn::transformer::{TransformerEncoder, TransformerEncoderConfig};
use burn::nn::{
    Embedding, EmbeddingConfig, Gelu, LayerNorm, LayerNormConfig, Linear, LinearConfig,
};
use burn::prelude::*;
use serde::{Deserialize, Serialize};

use crate::models::transformer::{RowMasks, encoder_rows};
use crate::{Error, Result};

/// A named encoder size (`model.size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModelSize {
    /// 2 x 64 (4 heads, d_ff 128): tests and CPU smoke runs.
    Tiny,
    /// BERT-S, 12 x 384 (6 heads, d_ff 1536): the paper's recipe.
    BertS,
    /// BERT-B, 12 x 768 (12 heads, d_ff 3072).
    BertB,
    /// The four size fields of `[model]`.
    Custom,
}

impl std::fmt::Display for ModelSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ModelSize::Tiny => "tiny",
            ModelSize::BertS => "bert-s",
            ModelSize::BertB => "bert-b",
            ModelSize::Custom => "custom",
        })
    }
}

/// How token (or image patch) states become one vector per input: `model.pooling` of a
/// trained encoder, and `--pool` of a pretrained one ([`crate::tasks::pretrained`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pooling {
    /// The mean over real (non-pad) tokens; for images, over patch tokens (CLS excluded).
    Mean,
    /// The first token's state (`[CLS]`).
    Cls,
    /// The last real (non-pad) token's state: the only position of a causal (next-token)
    /// model that has read the whole input, the usual read-out of a language model. Causal
    /// models only (a causal model's first token has read itself alone).
    Last,
}

impl std::str::FromStr for Pooling {
    type Err = crate::Error;
    /// `mean` or `cls`, the names the configs use.
    fn from_str(s: &str) -> crate::Result<Self> {
        match s {
            "mean" => Ok(Pooling::Mean),
            "cls" => Ok(Pooling::Cls),
            "last" => Ok(Pooling::Last),
            other => Err(crate::Error::invalid(format!(
                "pooling `{other}`: expected mean, cls or last"
            ))),
        }
    }
}

/// Encoder architecture (paper section 4: BERT-S = 12 x 384, BERT-B = 12 x 768).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    /// `tiny`, `bert-s`, `bert-b`, or `custom` (then the four size fields below are used).
    pub size: ModelSize,
    /// Width (custom only).
    pub d_model: usize,
    /// Layers (custom only).
    pub layers: usize,
    /// Attention heads (custom only).
    pub heads: usize,
    /// Feed-forward width (custom only).
    pub d_ff: usize,
    /// Maximum tokens per sequence (learned positions).
    pub max_len: usize,
    /// `mean` over non-pad tokens, `cls` (the first token; JEPAs) or `last` (the last
    /// real token; the next-token objective's causal model).
    pub pooling: Pooling,
    /// Output width of a 2-layer MLP projector after pooling (0: no projector).
    pub projector_dim: usize,
    /// Dropout inside the transformer (0 keeps training exactly reproducible).
    pub dropout: f64,
}

impl Default for ModelConfig {
    fn default() -> Self {
        Self {
            size: ModelSize::Tiny,
            d_model: 64,
            layers: 2,
            heads: 4,
            d_ff: 128,
            max_len: 64,
            pooling: Pooling::Mean,
            projector_dim: 0,
            dropout: 0.0,
        }
    }
}

impl ModelConfig {
    /// `(d_model, layers, heads, d_ff)` of the named size.
    pub fn dims(&self) -> (usize, usize, usize, usize) {
        match self.size {
            ModelSize::Tiny => (64, 2, 4, 128),
            ModelSize::BertS => (384, 12, 6, 1536),
            ModelSize::BertB => (768, 12, 12, 3072),
            ModelSize::Custom => (self.d_model, self.layers, self.heads, self.d_ff),
        }
    }
}

/// Everything needed to rebuild an encoder (saved in checkpoints and export bundles).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EncoderSpec {
    /// Vocabulary size (the tokenizer's).
    pub vocab: usize,
    /// Width.
    pub d_model: usize,
    /// Transformer layers.
    pub layers: usize,
    /// Attention heads.
    pub heads: usize,
    /// Feed-forward width.
    pub d_ff: usize,
    /// Maximum sequence length (learned positions).
    pub max_len: usize,
    /// `true`: pool the summary token, the first (CLS) of a bidirectional encoder or the
    /// last real one of a causal model ([`Pooling::Last`]); `false`: mean over non-pad
    /// tokens.
    pub cls_pooling: bool,
    /// Projector output width (0: none).
    pub projector_dim: usize,
    /// Transformer dropout.
    pub dropout: f64,
    /// Causal attention and an LM head (next-token baseline).
    pub causal: bool,
}

impl EncoderSpec {
    /// The spec of `model` for a `vocab`-token tokenizer.
    pub fn from_config(model: &ModelConfig, vocab: usize, causal: bool) -> Result<Self> {
        match (model.pooling, causal) {
            (Pooling::Cls, true) => {
                return Err(Error::invalid(
                    "model.pooling = \"cls\" with the next-token objective: a causal model's \
                     first token has read only itself; use \"last\" (or \"mean\")",
                ));
            }
            (Pooling::Last, false) => {
                return Err(Error::invalid(
                    "model.pooling = \"last\" reads a causal (next-token) model's final \
                     token; a JEPA's bidirectional encoder pools \"mean\" or \"cls\"",
                ));
            }
            _ => {}
        }
        let (d_model, layers, heads, d_ff) = model.dims();
        Ok(Self {
            vocab,
            d_model,
            layers,
            heads,
            d_ff,
            max_len: model.max_len,
            cls_pooling: model.pooling != Pooling::Mean,
            projector_dim: model.projector_dim,
            dropout: model.dropout,
            causal,
        })
    }

    /// Width of [`TextEncoder::embed`]'s output.
    pub fn embed_dim(&self) -> usize {
        if self.projector_dim > 0 {
            self.projector_dim
        } else {
            self.d_model
        }
    }

    /// Builds a freshly initialised encoder on `device`.
    pub fn init<B: Backend>(&self, device: &B::Device) -> Result<TextEncoder<B>> {
        if self.heads == 0 || !self.d_model.is_multiple_of(self.heads) || self.vocab == 0 {
            return Err(Error::invalid(format!(
                "encoder spec: {self:?} (d_model must be a multiple of heads)"
            )));
        }
        // burn's dropout constructor panics outside [0, 1); refuse such a spec here so every
        // caller (configs, bundles, checkpoints) gets an error instead.
        if !(0.0..1.0).contains(&self.dropout) {
            return Err(Error::invalid(format!(
                "encoder spec: dropout {} (expected 0 <= dropout < 1)",
                self.dropout
            )));
        }
        let d = self.d_model;
        let projector = (self.projector_dim > 0).then(|| Projector {
            fc1: LinearConfig::new(d, d).init(device),
            act: Gelu::new(),
            fc2: LinearConfig::new(d, self.projector_dim).init(device),
        });
        Ok(TextEncoder {
            tokens: EmbeddingConfig::new(self.vocab, d).init(device),
            positions: EmbeddingConfig::new(self.max_len, d).init(device),
            blocks: TransformerEncoderConfig::new(d, self.d_ff, self.heads, self.layers)
                .with_dropout(self.dropout)
                .with_norm_first(true)
                .init(device),
            norm: LayerNormConfig::new(d).init(device),
            projector,
            lm_head: self
                .causal
                .then(|| LinearConfig::new(d, self.vocab).init(device)),
            cls_pooling: self.cls_pooling,
            causal: self.causal,
            max_len: self.max_len,
        })
    }
}

/// Two-layer MLP after pooling (`Linear -> GELU -> Linear`).
#[derive(Module, Debug)]
pub struct Projector<B: Backend> {
    fc1: Linear<B>,
    /// Part of the checkpoint layout (the binary record is positional); the forward uses
    /// [`crate::backend::gelu::gelu`], the same function computed faster on the CPU backends.
    act: Gelu,
    fc2: Linear<B>,
}

/// The text encoder.
#[derive(Module, Debug)]
pub struct TextEncoder<B: Backend> {
    tokens: Embedding<B>,
    positions: Embedding<B>,
    blocks: TransformerEncoder<B>,
    norm: LayerNorm<B>,
    projector: Option<Projector<B>>,
    lm_head: Option<Linear<B>>,
    cls_pooling: bool,
    causal: bool,
    max_len: usize,
}

impl<B: Backend> TextEncoder<B> {
    /// Final hidden states `H = LN(Transformer(E_tok[ids] + E_pos[0..L]))`, with padding
    /// keys masked and, if causal, future keys masked.
    ///
    /// # Shapes
    /// `ids` `[n, L]`, `pad` `[n, L]` (true = padding) -> `[n, L, d]`.
    pub fn hidden(&self, ids: Tensor<B, 2, Int>, pad: Tensor<B, 2, Bool>) -> Tensor<B, 3> {
        let (rows, n, l) = self.hidden_rows(ids, pad);
        let d = rows.dims()[1];
        rows.reshape([n, l, d])
    }

    /// [`Self::hidden`] as token rows (row `i L + t` = token `t` of sequence `i`), the
    /// layout the transformer runs in (`transformer.rs` says why).
    ///
    /// # Shapes
    /// `ids` `[n, L]`, `pad` `[n, L]` -> (`[n l, d]`, n, l) with `l = min(L, max_len)`.
    fn hidden_rows(
        &self,
        ids: Tensor<B, 2, Int>,
        pad: Tensor<B, 2, Bool>,
    ) -> (Tensor<B, 2>, usize, usize) {
        let [n, l] = ids.dims();
        let device = ids.device();
        // Sequences longer than the position table are cut (the views already respect it).
        let l = l.min(self.max_len);
        let ids = ids.narrow(1, 0, l);
        let pad = pad.narrow(1, 0, l);
        let pos = Tensor::<B, 1, Int>::arange(0..l as i64, &device)
            .unsqueeze::<2>()
            .expand([n, l]);
        let x = self.tokens.forward(ids) + self.positions.forward(pos); // (n, L, d)
        let d = x.dims()[2];
        if self.blocks.layers.is_empty() {
            // A bag of embeddings (`layers = 0`): no attention, so no masks to build.
            return (self.norm.forward(x.reshape([n * l, d])), n, l);
        }
        let causal = self
            .causal
            .then(|| generate_autoregressive_mask::<B>(n, l, &device));
        let masks = RowMasks::for_encoder(&self.blocks, pad, causal);
        let rows = encoder_rows(&self.blocks, x.reshape([n * l, d]), &masks);
        (self.norm.forward(rows), n, l)
    }

    /// Pools hidden states: CLS (`H[:, 0]`), for a causal model the last real token
    /// (`H[:, t*]`, t* the last t with pad_t false: padding is on the right), or the mean
    /// over non-pad positions, `sum_t H[:, t] (1 - pad_t) / sum_t (1 - pad_t)`.
    ///
    /// # Shapes
    /// `h` `[n, L, d]`, `pad` `[n, L]` -> `[n, d]`.
    pub fn pool(&self, h: Tensor<B, 3>, pad: Tensor<B, 2, Bool>) -> Tensor<B, 2> {
        let [n, l, d] = h.dims();
        if self.cls_pooling && !self.causal {
            return h.narrow(1, 0, 1).reshape([n, d]);
        }
        let keep = pad.narrow(1, 0, l).bool_not().float().unsqueeze_dim::<3>(2); // (n, L, 1)
        if self.cls_pooling {
            // The last kept position: kept at t and not at t + 1 (nothing kept after L).
            let next = Tensor::cat(
                vec![
                    keep.clone().narrow(1, 1, l - 1),
                    keep.zeros_like().narrow(1, 0, 1),
                ],
                1,
            );
            let last = keep.clone() - keep * next;
            // A batched product, as for the mean below.
            return last.swap_dims(1, 2).matmul(h).reshape([n, d]);
        }
        // The mean as one batched product, w^T H with w = keep / count: its backward is a
        // matmul too. Written as (H * keep).sum / count, the backward multiplied two
        // broadcast 3-d gradients element by element on the CPU backend's strided path,
        // ~40 % of a bag-of-embeddings training step (perf, views-vision); the product
        // trains it 1.9x faster, same loss to 4 decimals.
        let count = keep.clone().sum_dim(1).clamp_min(1.0); // (n, 1, 1)
        let w = (keep / count).swap_dims(1, 2); // (n, 1, L)
        w.matmul(h).reshape([n, d])
    }

    /// The embedding used by the JEPA losses and for alignment: pooled hidden state,
    /// through the projector if there is one.
    ///
    /// # Shapes
    /// `ids` `[n, L]`, `pad` `[n, L]` -> `[n, embed_dim]`.
    pub fn embed(&self, ids: Tensor<B, 2, Int>, pad: Tensor<B, 2, Bool>) -> Tensor<B, 2> {
        let h = self.hidden(ids, pad.clone());
        let z = self.pool(h, pad);
        match &self.projector {
            Some(p) => p.fc2.forward(crate::backend::gelu::gelu(p.fc1.forward(z))),
            None => z,
        }
    }

    /// The representation compared across modalities: the pooled hidden state *before*
    /// the projector (mean-pooled last hidden state for the causal baseline).
    ///
    /// # Shapes
    /// `ids` `[n, L]`, `pad` `[n, L]` -> `[n, d_model]`.
    pub fn represent(&self, ids: Tensor<B, 2, Int>, pad: Tensor<B, 2, Bool>) -> Tensor<B, 2> {
        let h = self.hidden(ids, pad.clone());
        self.pool(h, pad)
    }

    /// Next-token logits `H W_lm^T` (causal encoders only).
    ///
    /// # Shapes
    /// `ids` `[n, L]`, `pad` `[n, L]` -> `[n, L, vocab]`.
    pub fn lm_logits(
        &self,
        ids: Tensor<B, 2, Int>,
        pad: Tensor<B, 2, Bool>,
    ) -> Result<Tensor<B, 3>> {
        let head = self
            .lm_head
            .as_ref()
            .ok_or_else(|| Error::invalid("lm_logits: this encoder has no LM head (not causal)"))?;
        let (rows, n, l) = self.hidden_rows(ids, pad);
        let logits = head.forward(rows); // (n l, vocab)
        let vocab = logits.dims()[1];
        Ok(logits.reshape([n, l, vocab]))
    }

    /// Summed next-token negative log-likelihood of the real targets (causal encoders
    /// only): with `h_r` the hidden state at position `t` of sequence `i` and `y_r =
    /// targets[i][t]` for every `t < targets[i].len()`,
    /// `sum_r [logsumexp_v (W h_r + b)_v - (w_{y_r} . h_r + b_{y_r})]`, and the number of
    /// such rows `m`. Equal to the log-softmax of [`Self::lm_logits`] gathered at the
    /// targets and summed over non-pad positions, but only the `m` real rows are
    /// projected to the vocabulary and the target logit is read from `m` rows of `W`:
    /// padding, and the vocabulary-sized scatter of a gather's backward, cost nothing in
    /// the `[m, vocab]` product that dominates a bag-of-embeddings step.
    ///
    /// # Shapes
    /// `ids` `[n, L]`, `pad` `[n, L]`, `targets` n rows of at most `min(L, max_len)` ids
    /// each -> (`[1]`, m).
    pub fn lm_nll(
        &self,
        ids: Tensor<B, 2, Int>,
        pad: Tensor<B, 2, Bool>,
        targets: &[&[u32]],
    ) -> Result<(Tensor<B, 1>, usize)> {
        let head = self
            .lm_head
            .as_ref()
            .ok_or_else(|| Error::invalid("lm_nll: this encoder has no LM head (not causal)"))?;
        let device = ids.device();
        let (rows, n, l) = self.hidden_rows(ids, pad);
        if targets.len() != n {
            return Err(Error::invalid(format!(
                "lm_nll: {} target rows for {n} sequences",
                targets.len()
            )));
        }
        let mut at = Vec::new();
        let mut ys = Vec::new();
        for (i, row) in targets.iter().enumerate() {
            if row.len() > l {
                return Err(Error::invalid(format!(
                    "lm_nll: sequence {i} has {} targets for {l} positions",
                    row.len()
                )));
            }
            at.extend((0..row.len()).map(|t| (i * l + t) as i64));
            ys.extend(row.iter().map(|&y| i64::from(y)));
        }
        let m = at.len();
        if m == 0 {
            return Ok((Tensor::zeros([1], &device), 0));
        }
        let at = Tensor::<B, 1, Int>::from_ints(at.as_slice(), &device);
        let ys = Tensor::<B, 1, Int>::from_ints(ys.as_slice(), &device);
        let h = rows.select(0, at); // (m, d)
        let logits = head.forward(h.clone()); // (m, vocab)
        // logsumexp with the row max as shift; the shift is a constant of the gradient
        // (logsumexp is shift-invariant), so it is detached.
        let shift = logits.clone().detach().max_dim(1); // (m, 1)
        let lse = (logits - shift.clone()).exp().sum_dim(1).log() + shift; // (m, 1)
        // The target logit w_y . h + b_y from the head's rows (weight is [d, vocab]).
        let w_y = head.weight.val().transpose().select(0, ys.clone()); // (m, d)
        let mut picked = (h * w_y).sum_dim(1); // (m, 1)
        if let Some(b) = &head.bias {
            picked = picked + b.val().select(0, ys).unsqueeze_dim::<2>(1);
        }
        Ok(((lse - picked).sum(), m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::backend::NdArray;

    fn spec(causal: bool, cls: bool) -> EncoderSpec {
        EncoderSpec {
            vocab: 30,
            d_model: 16,
            layers: 2,
            heads: 4,
            d_ff: 32,
            max_len: 12,
            cls_pooling: cls,
            projector_dim: 0,
            dropout: 0.0,
            causal,
        }
    }

    fn ids<B: Backend>(rows: &[&[i64]], len: usize) -> (Tensor<B, 2, Int>, Tensor<B, 2, Bool>) {
        let device = Default::default();
        let mut v = Vec::new();
        let mut p = Vec::new();
        for r in rows {
            for i in 0..len {
                v.push(*r.get(i).unwrap_or(&0));
                p.push(i >= r.len());
            }
        }
        (
            Tensor::from_data(TensorData::new(v, [rows.len(), len]), &device),
            Tensor::from_data(TensorData::new(p, [rows.len(), len]), &device),
        )
    }

    #[test]
    fn padding_does_not_change_the_embedding() {
        let device = Default::default();
        let enc: TextEncoder<NdArray> = spec(false, false).init(&device).unwrap();
        let (a, pa) = ids(&[&[5, 6, 7]], 3);
        let (b, pb) = ids(&[&[5, 6, 7]], 8);
        let za = enc.embed(a, pa).into_data().to_vec::<f32>().unwrap();
        let zb = enc.embed(b, pb).into_data().to_vec::<f32>().unwrap();
        let diff = za
            .iter()
            .zip(&zb)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max);
        assert!(diff < 1e-5, "max difference {diff}");
    }

    #[test]
    fn causal_prefix_states_ignore_the_future() {
        let device = Default::default();
        let enc: TextEncoder<NdArray> = spec(true, false).init(&device).unwrap();
        let (a, pa) = ids(&[&[5, 6, 7, 8]], 4);
        let (b, pb) = ids(&[&[5, 6, 9, 10]], 4);
        let ha = enc
            .hidden(a.clone(), pa.clone())
            .narrow(1, 0, 2)
            .into_data()
            .to_vec::<f32>()
            .unwrap();
        let hb = enc
            .hidden(b, pb)
            .narrow(1, 0, 2)
            .into_data()
            .to_vec::<f32>()
            .unwrap();
        let diff = ha
            .iter()
            .zip(&hb)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max);
        assert!(diff < 1e-5, "prefix hidden states changed by {diff}");
        assert_eq!(enc.lm_logits(a, pa).unwrap().dims(), [1, 4, 30]);
    }

    /// `lm_nll` against the reference it replaces (log-softmax of the full logits,
    /// gathered at the targets, summed over non-pad positions), on a ragged batch:
    /// equal to float rounding (1e-4 relative), and so are the gradients of the token
    /// embeddings and the LM head's weight and bias (1e-4 absolute, values of order 1e-2).
    #[test]
    fn lm_nll_equals_the_full_log_softmax() {
        use burn::backend::Autodiff;
        type A = Autodiff<NdArray>;
        let device = Default::default();
        for layers in [0, 2] {
            let mut s = spec(true, false);
            s.layers = layers;
            let enc: TextEncoder<A> = s.init(&device).unwrap();
            let inputs: [&[i64]; 3] = [&[2, 6, 7, 8], &[2, 9], &[2, 11, 12]];
            let targets: [&[u32]; 3] = [&[6, 7, 8, 3], &[9, 4], &[11, 12, 5]];
            let (a, pa) = ids(&inputs, 4);
            let (nll, m) = enc.lm_nll(a.clone(), pa.clone(), &targets).unwrap();
            assert_eq!(m, 9);
            // Reference.
            let logp = burn::tensor::activation::log_softmax(enc.lm_logits(a, pa).unwrap(), 2);
            let mut tg = Vec::new();
            let mut keep = Vec::new();
            for t in targets {
                for j in 0..4 {
                    tg.push(i64::from(*t.get(j).unwrap_or(&0)));
                    keep.push(if j < t.len() { 1.0f32 } else { 0.0 });
                }
            }
            let tg = Tensor::<A, 1, Int>::from_ints(tg.as_slice(), &device).reshape([3, 4, 1]);
            let keep = Tensor::<A, 1>::from_floats(keep.as_slice(), &device).reshape([3, 4]);
            let reference = (logp.gather(2, tg).squeeze_dim::<2>(2) * keep).sum().neg();
            let (x, y) = (nll.clone().into_scalar(), reference.clone().into_scalar());
            assert!(
                (x - y).abs() <= 1e-4 * y.abs(),
                "layers {layers}: {x} vs {y}"
            );
            let (g1, g2) = (nll.backward(), reference.backward());
            let grads = |g: &<A as burn::tensor::backend::AutodiffBackend>::Gradients| {
                let mut out = Vec::new();
                for p in [
                    enc.tokens.weight.val(),
                    enc.lm_head.as_ref().unwrap().weight.val(),
                ] {
                    out.extend(p.grad(g).unwrap().into_data().to_vec::<f32>().unwrap());
                }
                out.extend(
                    enc.lm_head
                        .as_ref()
                        .unwrap()
                        .bias
                        .as_ref()
                        .unwrap()
                        .val()
                        .grad(g)
                        .unwrap()
                        .into_data()
                        .to_vec::<f32>()
                        .unwrap(),
                );
                out
            };
            let (a1, a2) = (grads(&g1), grads(&g2));
            let worst = a1
                .iter()
                .zip(&a2)
                .map(|(p, q)| (p - q).abs())
                .fold(0.0, f32::max);
            assert!(
                worst <= 1e-4,
                "layers {layers}: gradients differ by {worst}"
            );
        }
        let enc: TextEncoder<NdArray> = spec(false, false).init(&device).unwrap();
        let (a, pa) = ids(&[&[2, 6]], 2);
        assert!(enc.lm_nll(a.clone(), pa.clone(), &[&[6, 3]]).is_err());
        let enc: TextEncoder<NdArray> = spec(true, false).init(&device).unwrap();
        assert!(enc.lm_nll(a.clone(), pa.clone(), &[&[6, 3, 4]]).is_err());
        assert!(enc.lm_nll(a, pa, &[]).is_err());
    }

    #[test]
    fn shapes_and_presets() {
        let device = Default::default();
        let mut s = spec(false, true);
        s.projector_dim = 8;
        let enc: TextEncoder<NdArray> = s.init(&device).unwrap();
        let (a, pa) = ids(&[&[2, 6, 7], &[2, 9]], 3);
        assert_eq!(enc.embed(a.clone(), pa.clone()).dims(), [2, 8]);
        assert_eq!(enc.represent(a.clone(), pa.clone()).dims(), [2, 16]);
        assert!(enc.lm_logits(a, pa).is_err());
        let m = ModelConfig {
            size: ModelSize::BertS,
            ..ModelConfig::default()
        };
        let b = EncoderSpec::from_config(&m, 8000, false).unwrap();
        assert_eq!((b.d_model, b.layers, b.heads), (384, 12, 6));
    }

    /// `last` pooling of a causal model is the hidden state at each row's last real token
    /// (exactly: a product with a one-hot), and it does not depend on padding after it.
    #[test]
    fn last_pooling_reads_each_rows_last_real_token() {
        let device = Default::default();
        let enc: TextEncoder<NdArray> = spec(true, true).init(&device).unwrap();
        let (a, pa) = ids(&[&[5, 6, 7, 8], &[5, 9]], 6);
        let h = enc.hidden(a.clone(), pa.clone());
        let pooled = enc.represent(a, pa).into_data().to_vec::<f32>().unwrap();
        let want: Vec<f32> = [(0, 3), (1, 1)]
            .into_iter()
            .flat_map(|(r, t)| {
                h.clone()
                    .narrow(0, r, 1)
                    .narrow(1, t, 1)
                    .into_data()
                    .to_vec::<f32>()
                    .unwrap()
            })
            .collect();
        assert_eq!(pooled, want);
        // Without padding (len 2) the second row pools the same state.
        let (b, pb) = ids(&[&[5, 9]], 2);
        let alone = enc.represent(b, pb).into_data().to_vec::<f32>().unwrap();
        let diff = alone
            .iter()
            .zip(&want[16..])
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max);
        assert!(
            diff < 1e-5,
            "padding changed the last token's state by {diff}"
        );
    }

    /// `cls` with the next-token objective and `last` with a JEPA are refused by name.
    #[test]
    fn pooling_that_reads_nothing_is_refused() {
        let with = |pooling| ModelConfig {
            pooling,
            ..ModelConfig::default()
        };
        let e = EncoderSpec::from_config(&with(Pooling::Cls), 100, true).unwrap_err();
        assert!(e.to_string().contains("model.pooling = \"cls\""), "{e}");
        let e = EncoderSpec::from_config(&with(Pooling::Last), 100, false).unwrap_err();
        assert!(e.to_string().contains("model.pooling = \"last\""), "{e}");
        assert!(
            EncoderSpec::from_config(&with(Pooling::Last), 100, true)
                .unwrap()
                .cls_pooling
        );
        assert_eq!("last".parse::<Pooling>().unwrap(), Pooling::Last);
    }
}
