//! burn's transformer encoder, run on token rows: the same modules and parameters as
//! `burn::nn::transformer::TransformerEncoder` (so checkpoints are unchanged), the same
//! arithmetic, but every `Linear` sees a 2-D `[n L, d]` input instead of `[n, L, d]`.
//!
//! Why: burn 0.21 runs a linear layer on a 3-D input as a batched matmul, one `[L, d_in] x
//! [d_in, d_out]` product per sequence, and its backward computes the weight gradient as
//! `n` per-sequence `d_in x d_out` matrices that are materialised and then summed. For
//! bert-s (64 sequences of 16 tokens, d_ff = 1536) that is a 150 MB temporary per FFN
//! layer and was ~45 % of a CPU training step (`perf record`, docs/benchmarks.md,
//! "Training throughput"). On 2-D rows the forward is one `[n L, d_in] x [d_in, d_out]`
//! matmul and the weight gradient one `[d_in, n L] x [n L, d_out]` matmul, as in PyTorch.
//! Attention itself still works per sequence and head (`[n, h, L, L]` scores).

use burn::nn::Linear;
use burn::nn::activation::Activation;
use burn::nn::transformer::{PositionWiseFeedForward, TransformerEncoder, TransformerEncoderLayer};
use burn::prelude::*;
use burn::tensor::activation::{quiet_softmax, softmax};

/// The attention mask of one forward pass as an additive score bias, built once and
/// shared by every layer and head.
///
/// burn's attention writes `min_float` into masked scores with `mask_fill`; on a `[n, 1, 1,
/// L]` mask broadcast over heads burn-flex first materialises the mask (and again for the
/// backward), which was ~4 % of a tiny model's step. Adding `min_float` instead gives the
/// same softmax: a masked key's weight `exp(s + min_float - max)` underflows to exactly 0
/// in f32 either way (min_float = -1e4), and the gradient passes through the addition
/// unchanged. The two differ only for a row whose every key is masked (an all-padding
/// sequence), whose pooled embedding is zero in both cases.
///
/// The bias is stored per (sequence, query, key), contiguous, and the scores are laid out
/// head-major (`[h, n, L, L]`), so adding it is one row `[n L L]` shared by every head:
/// the broadcast that burn-flex runs as a vectorised loop (its generic strided broadcast,
/// for the bias of shape `[n, 1, 1, L]`, was ~5 % of a tiny step).
pub struct RowMasks<B: Backend> {
    /// `min_float` at masked (sequence, query, key) positions, else 0: `[1, n L L]`.
    bias: Tensor<B, 2>,
    /// Sequences n of the forward pass (the rows are `n L` tokens).
    n: usize,
    /// Tokens L per sequence.
    l: usize,
}

impl<B: Backend> RowMasks<B> {
    /// The bias of a padding mask `[n, L]` and an optional attention mask `[n, L, L]`
    /// (true = masked), with `min_float` the encoder's masked-score value.
    pub fn new(pad: Tensor<B, 2, Bool>, attn: Option<Tensor<B, 3, Bool>>, min_float: f64) -> Self {
        let [n, l] = pad.dims();
        let pad = pad.float().mul_scalar(min_float).reshape([n, 1, l]);
        // Materialised over queries (a broadcast add onto zeros), once per forward.
        let full = match attn {
            Some(a) => a.float().mul_scalar(min_float) + pad,
            None => Tensor::zeros([n, l, l], &pad.device()) + pad,
        };
        Self {
            bias: full.reshape([1, n * l * l]),
            n,
            l,
        }
    }

    /// [`Self::new`] with the masked-score value of `encoder`'s attention layers.
    pub fn for_encoder(
        encoder: &TransformerEncoder<B>,
        pad: Tensor<B, 2, Bool>,
        attn: Option<Tensor<B, 3, Bool>>,
    ) -> Self {
        let min_float = encoder.layers.first().map_or(-1.0e4, |l| l.mha.min_float);
        Self::new(pad, attn, min_float)
    }
}

/// `TransformerEncoder::forward` on rows: `x_{k+1} = layer_k(x_k)` for every layer.
///
/// # Shapes
/// `x` `[n L, d]` with n and L those of `masks` (sequence-major rows: row `i L + t` is
/// token `t` of sequence `i`) -> `[n L, d]`.
pub fn encoder_rows<B: Backend>(
    encoder: &TransformerEncoder<B>,
    mut x: Tensor<B, 2>,
    masks: &RowMasks<B>,
) -> Tensor<B, 2> {
    for layer in &encoder.layers {
        x = layer_rows(layer, x, masks);
    }
    x
}

/// One layer, as `TransformerEncoderLayer::forward`: with `norm_first` (pre-LN),
/// `x + MHA(LN_2(x))`, then `x + FFN(LN_1(x))`; otherwise (post-LN)
/// `LN_1(x + MHA(x))`, then `LN_2(x + FFN(x))`. Dropout on both residual branches.
///
/// # Shapes
/// `x` `[n L, d]` (n, L of `masks`) -> `[n L, d]`.
pub fn layer_rows<B: Backend>(
    layer: &TransformerEncoderLayer<B>,
    x: Tensor<B, 2>,
    masks: &RowMasks<B>,
) -> Tensor<B, 2> {
    let branch = if layer.norm_first {
        layer.norm_2.forward(x.clone())
    } else {
        x.clone()
    };
    let mut x = x + layer.dropout.forward(attention_rows(layer, branch, masks));
    let branch = if layer.norm_first {
        layer.norm_1.forward(x.clone())
    } else {
        x = layer.norm_1.forward(x);
        x.clone()
    };
    let mut x = x + layer
        .dropout
        .forward(feed_forward_rows(&layer.pwff, branch));
    if !layer.norm_first {
        x = layer.norm_2.forward(x);
    }
    x
}

/// The position-wise feed-forward block, as `PositionWiseFeedForward::forward`:
/// `W_2 dropout(act(W_1 x + b_1)) + b_2`, with GELU (the default activation) through
/// [`crate::backend::gelu::gelu`] (the same function, computed faster on the CPU backends).
///
/// # Shapes
/// `x` `[n L, d]` -> `[n L, d]`.
pub(crate) fn feed_forward_rows<B: Backend>(
    ff: &PositionWiseFeedForward<B>,
    x: Tensor<B, 2>,
) -> Tensor<B, 2> {
    let x = ff.linear_inner.forward(x);
    let x = match &ff.activation {
        Activation::Gelu(_) => crate::backend::gelu::gelu(x),
        other => other.forward(x),
    };
    ff.linear_outer.forward(ff.dropout.forward(x))
}

/// Multi-head self-attention, as `MultiHeadAttention::forward`:
/// `W_o concat_h softmax(mask(Q_h K_h^T / sqrt(d_k))) V_h` with `Q = x W_q + b_q` etc.
/// Masked scores get the module's `min_float` (not -inf) added ([`RowMasks`] says why
/// that equals burn's `mask_fill`); dropout acts on the scores before the softmax, as
/// burn does.
///
/// # Shapes
/// `x` `[n L, d]` (n, L of `masks`) -> `[n L, d]`.
pub(crate) fn attention_rows<B: Backend>(
    layer: &TransformerEncoderLayer<B>,
    x: Tensor<B, 2>,
    masks: &RowMasks<B>,
) -> Tensor<B, 2> {
    let (n, l) = (masks.n, masks.l);
    let mha = &layer.mha;
    let (h, dk) = (mha.n_heads, mha.d_k);
    // Head-major layout (see [`RowMasks`]): [n L, d] -> [n, L, h, d_k] -> `axes`.
    let heads = |lin: &Linear<B>, x: Tensor<B, 2>, axes| {
        permute(lin.forward(x).reshape([n, l, h, dk]), axes)
    };
    let q = heads(&mha.query, x.clone(), [2, 0, 1, 3]); // [h, n, L, d_k]
    // K^T is materialised directly, so its gradient arrives contiguous.
    let k_t = heads(&mha.key, x.clone(), [2, 0, 3, 1]); // [h, n, d_k, L]
    let v = heads(&mha.value, x, [2, 0, 1, 3]); // [h, n, L, d_k]
    let scores = q.matmul(k_t).div_scalar((dk as f32).sqrt()); // [h, n, L, L]
    let scores = mha.dropout.forward(scores).reshape([h, n * l * l]) + masks.bias.clone();
    let scores = scores.reshape([h, n, l, l]);
    let weights = if mha.quiet_softmax {
        quiet_softmax(scores, 3)
    } else {
        softmax(scores, 3)
    };
    // [h, n, L, d_k] -> [n, L, h, d_k] -> [n L, d]
    let context = permute(weights.matmul(v), [1, 2, 0, 3]).reshape([n * l, h * dk]);
    mha.output.forward(context)
}

/// `x.permute(axes)`, materialised by row copies on burn-flex
/// ([`crate::backend::flex_ops::permute`]), a strided view elsewhere.
fn permute<B: Backend>(x: Tensor<B, 4>, axes: [usize; 4]) -> Tensor<B, 4> {
    #[cfg(all(feature = "flex", not(target_arch = "wasm32")))]
    let x = match crate::backend::flex_ops::permute(x, axes) {
        Ok(y) => return y,
        Err(x) => x,
    };
    x.permute(axes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::backend::{Autodiff, NdArray};
    use burn::nn::attention::generate_autoregressive_mask;
    use burn::nn::transformer::{TransformerEncoderConfig, TransformerEncoderInput};
    use burn::tensor::Distribution;

    const N: usize = 3;
    const L: usize = 5;
    const D: usize = 8;

    /// A 2-layer encoder (d = 8, 2 heads, d_ff = 16) and a random `[n, L, d]` input.
    fn fixture<B: Backend>(norm_first: bool) -> (TransformerEncoder<B>, Tensor<B, 3>) {
        let device = Default::default();
        let enc = TransformerEncoderConfig::new(D, 16, 2, 2)
            .with_dropout(0.0)
            .with_norm_first(norm_first)
            .init::<B>(&device);
        let x = Tensor::<B, 3>::random([N, L, D], Distribution::Normal(0.0, 1.0), &device);
        (enc, x)
    }

    /// burn's own forward and [`encoder_rows`] on the same encoder and input, with padded
    /// keys (sequence 1 has two padding positions, sequence 2 one) and optionally a causal
    /// mask: `(burn, rows)`, both `[n, L, d]`.
    fn both<B: Backend>(
        enc: &TransformerEncoder<B>,
        x: Tensor<B, 3>,
        causal: bool,
    ) -> (Tensor<B, 3>, Tensor<B, 3>) {
        let device = x.device();
        let pad = Tensor::<B, 2, Bool>::from_data(
            [
                [false, false, false, false, false],
                [false, false, false, true, true],
                [false, false, false, false, true],
            ],
            &device,
        );
        let mask_attn = causal.then(|| generate_autoregressive_mask::<B>(N, L, &device));
        let mut input = TransformerEncoderInput::new(x.clone()).mask_pad(pad.clone());
        if let Some(m) = &mask_attn {
            input = input.mask_attn(m.clone());
        }
        let want = enc.forward(input);
        let masks = RowMasks::for_encoder(enc, pad, mask_attn);
        let got = encoder_rows(enc, x.reshape([N * L, D]), &masks).reshape([N, L, D]);
        (want, got)
    }

    /// (max |a - b|, max |a|).
    fn max_diff<B: Backend, const K: usize>(a: Tensor<B, K>, b: Tensor<B, K>) -> (f32, f32) {
        let scale = a.clone().abs().max().into_scalar().elem::<f32>();
        ((a - b).abs().max().into_scalar().elem::<f32>(), scale)
    }

    /// Outputs agree to f32 rounding: 1e-4 (measured here on ndarray: exactly equal,
    /// outputs of size ~3; other backends may block matmuls differently), while ignoring
    /// the mask fails both tests (checked by hand) and a swapped norm moves outputs by O(1).
    #[test]
    fn rows_match_burns_encoder() {
        for norm_first in [true, false] {
            for causal in [false, true] {
                let (enc, x) = fixture::<NdArray>(norm_first);
                let (want, got) = both(&enc, x, causal);
                let (diff, scale) = max_diff(want, got);
                assert!(
                    scale > 0.1,
                    "degenerate reference output (max |y| = {scale})"
                );
                assert!(
                    diff < 1e-4,
                    "norm_first {norm_first} causal {causal}: diff {diff}"
                );
            }
        }
    }

    /// The gradients of `sum(y * t)` with respect to the input (through every layer's
    /// attention, FFN and norms) and to the first FFN weight are the same through both:
    /// the point of the rows layout is a cheaper backward, so it must be the same backward.
    ///
    /// On burn-flex when it is built, where the rows path runs the custom GELU and
    /// permute ops of [`crate::backend::flex_ops`] and burn's encoder its own ops.
    #[test]
    fn rows_gradients_match_burns_encoder() {
        #[cfg(feature = "flex")]
        type AB = Autodiff<burn::backend::Flex>;
        #[cfg(not(feature = "flex"))]
        type AB = Autodiff<NdArray>;
        for norm_first in [true, false] {
            for causal in [false, true] {
                let (enc, x) = fixture::<AB>(norm_first);
                let x = x.require_grad();
                let t = Tensor::<AB, 3>::random([N, L, D], Distribution::Default, &x.device());
                let (want, got) = both(&enc, x.clone(), causal);
                let g_want = (want * t.clone()).sum().backward();
                let g_got = (got * t).sum().backward();
                let w = &enc.layers[0].pwff.linear_inner.weight;
                let grads = [
                    (
                        "input",
                        x.grad(&g_want).unwrap().flatten::<1>(0, 2),
                        x.grad(&g_got).unwrap().flatten::<1>(0, 2),
                    ),
                    (
                        "FFN weight",
                        w.grad(&g_want).unwrap().flatten::<1>(0, 1),
                        w.grad(&g_got).unwrap().flatten::<1>(0, 1),
                    ),
                ];
                for (name, a, b) in grads {
                    let (diff, scale) = max_diff(a, b);
                    assert!(scale > 1e-3, "{name}: degenerate gradient (max {scale})");
                    assert!(
                        diff < 1e-4 * scale.max(1.0),
                        "norm_first {norm_first} causal {causal}: {name} grad differs by {diff}"
                    );
                }
            }
        }
    }
}
