//! The checkpoint lab's embedding on its two burn backends ([`crate::widgets::webgpu`]:
//! WebGPU when the browser offers an adapter, else the CPU backend).
//!
//! WebGPU cannot block: results are read back with `into_data_async`, so embedding here
//! is an async twin of
//! `prh_core::tasks::text::embed_texts` (same tokenisation, padding and pooled
//! representation, awaited read-back).

use burn::tensor::backend::Backend;
use prh_core::backend::burn;
use prh_core::models::text_encoder::{EncoderSpec, TextEncoder};
use prh_core::tasks::text::{padded_tensors, tokenize_batch};
use prh_core::text::tokenizer::TextTokenizer;
use prh_core::text::views::Padded;

pub use crate::widgets::webgpu::{Gpu, Which, webgpu_device};

/// Pads a batch to exactly `[rows, len]`. Extra columns are padding (masked, so attention
/// and pooling ignore them); extra rows hold one unmasked token and are dropped after the
/// forward pass. On WebGPU every new tensor shape costs kernel compilation and autotuning,
/// so one fixed shape per batch is much faster than the CPU path's shortest padding.
///
/// # Shapes
/// `p [n, l]` -> `[rows, len]` with rows >= n, len >= l.
fn fixed_shape(p: &Padded, rows: usize, len: usize, pad_id: u32) -> Padded {
    let (rows, len) = (rows.max(p.n), len.max(p.len));
    let mut ids = vec![i64::from(pad_id); rows * len];
    let mut pad = vec![true; rows * len];
    for r in 0..rows {
        for c in 0..len {
            if r < p.n && c < p.len {
                ids[r * len + c] = p.ids[r * p.len + c];
                pad[r * len + c] = p.pad[r * p.len + c];
            } else if r >= p.n && c == 0 {
                pad[r * len] = false;
            }
        }
    }
    Padded {
        ids,
        pad,
        n: rows,
        len,
    }
}

/// Embeds `texts` on backend `B`: tokenise, truncate to the context (leaving room for
/// [CLS] when the model uses it, `prh_core::tasks::text::tokenize_batch`), pad, take
/// [`TextEncoder::represent`] (the pooled last hidden state), and read each batch back
/// asynchronously. `fixed`: pad every batch to `[batch, max_len]` ([`fixed_shape`], for
/// WebGPU); otherwise to the batch's longest text as `prh_core::tasks::text::embed_texts`
/// does. Also returns each text's token count before the cut, so the page can say which
/// texts were cut.
///
/// # Shapes
/// `texts` n strings -> (row-major `[n, d_model]`, `[n]` token counts)
pub async fn embed<B: Backend>(
    model: &TextEncoder<B>,
    spec: &EncoderSpec,
    tok: &TextTokenizer,
    texts: &[String],
    (batch, fixed): (usize, bool),
    device: &burn::tensor::Device<B>,
) -> Result<(Vec<f32>, Vec<usize>), String> {
    let mut out = Vec::with_capacity(texts.len() * spec.d_model);
    let mut tokens = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(batch.max(1)) {
        let (mut padded, counts) = tokenize_batch(tok, spec, chunk).map_err(|e| e.to_string())?;
        tokens.extend(counts);
        if fixed {
            padded = fixed_shape(&padded, batch.max(1), spec.max_len, tok.pad);
        }
        let (i, p) = padded_tensors::<B>(&padded, device);
        let z = model
            .represent(i, p)
            .into_data_async()
            .await
            .map_err(|e| format!("reading the embeddings back: {e:?}"))?;
        // Only the batch's own rows (fixed-shape batches carry filler rows).
        out.extend(z.iter::<f32>().take(chunk.len() * spec.d_model));
    }
    Ok((out, tokens))
}
