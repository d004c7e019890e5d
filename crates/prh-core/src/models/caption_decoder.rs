//! A text decoder conditioned on one embedding (paper §6, "captioning by one fitted
//! rotation"): a small autoregressive transformer that writes a caption from a caption
//! JEPA's embedding. It is trained on text only; at captioning time the embedding comes
//! from the *image* encoder through a fitted map.
//!
//! ```text
//! c = sqrt(e) z / ||z||                      the conditioning, z [e] (unit scale, see below)
//! x_0 = W_c c + b_c,  x_t = E_tok[y_t]        a prefix token, then the caption's tokens
//! H = LN(causal Transformer(x + E_pos))       pre-LN, causal attention (ClipCap's prefix)
//! p(y_{t+1} | c, y_1..y_t) = softmax(W_lm H_t)   y_{L+1} = [SEP] ends the caption
//! ```
//!
//! Why the row normalisation: the map from image embeddings is a rotation (or a linear
//! map) fitted on a few pairs, and the two encoders' scales differ by a constant the
//! rotation cannot absorb; dividing by the norm makes the decoder read the direction only,
//! which is what the theorem identifies (up to the rotation).

use burn::nn::attention::generate_autoregressive_mask;
use burn::nn::transformer::{TransformerEncoder, TransformerEncoderConfig};
use burn::nn::{Embedding, EmbeddingConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::activation::log_softmax;
use serde::{Deserialize, Serialize};

use crate::models::transformer::{RowMasks, encoder_rows};
use crate::{Error, Result};

/// The decoder's architecture (the `[decoder]` section's sizes plus the vocabulary and the
/// conditioning width, both taken from the encoder it decodes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecoderSpec {
    /// Vocabulary size (the caption encoder's tokenizer).
    pub vocab: usize,
    /// Width of the conditioning embedding (the caption encoder's output width).
    pub cond_dim: usize,
    /// Transformer width.
    pub d_model: usize,
    /// Transformer layers (causal).
    pub layers: usize,
    /// Attention heads (must divide `d_model`).
    pub heads: usize,
    /// Feed-forward width.
    pub d_ff: usize,
    /// Longest caption in tokens (learned positions: `max_len + 1` with the prefix).
    pub max_len: usize,
}

impl DecoderSpec {
    /// A freshly initialised decoder on `device`.
    pub fn init<B: Backend>(&self, device: &B::Device) -> Result<CaptionDecoder<B>> {
        if self.heads == 0 || !self.d_model.is_multiple_of(self.heads) {
            return Err(Error::invalid(format!(
                "decoder: d_model {} must be a positive multiple of heads {}",
                self.d_model, self.heads
            )));
        }
        if self.vocab == 0 || self.cond_dim == 0 || self.d_ff == 0 || self.max_len == 0 {
            return Err(Error::invalid(format!(
                "decoder: expected vocab, cond_dim, d_ff and max_len >= 1, got {self:?}"
            )));
        }
        let d = self.d_model;
        Ok(CaptionDecoder {
            cond: LinearConfig::new(self.cond_dim, d).init(device),
            tokens: EmbeddingConfig::new(self.vocab, d).init(device),
            positions: EmbeddingConfig::new(self.max_len + 1, d).init(device),
            blocks: TransformerEncoderConfig::new(d, self.d_ff, self.heads, self.layers)
                .with_dropout(0.0)
                .with_norm_first(true)
                .init(device),
            norm: LayerNormConfig::new(d).init(device),
            head: LinearConfig::new(d, self.vocab).init(device),
            max_len: self.max_len,
        })
    }
}

/// The decoder (see the module doc for its equations).
#[derive(Module, Debug)]
pub struct CaptionDecoder<B: Backend> {
    cond: Linear<B>,
    tokens: Embedding<B>,
    positions: Embedding<B>,
    blocks: TransformerEncoder<B>,
    norm: LayerNorm<B>,
    head: Linear<B>,
    max_len: usize,
}

/// The decoder's conditioning of embedding rows: `c = sqrt(e) z / ||z||` (rows of norm
/// sqrt(e), so each coordinate has unit scale; a zero row stays zero).
///
/// # Shapes
/// `rows [n][e]` -> `[n][e]`
pub fn condition(rows: &[Vec<f64>]) -> Vec<Vec<f64>> {
    rows.iter()
        .map(|z| {
            let norm = z.iter().map(|x| x * x).sum::<f64>().sqrt();
            let scale = if norm > 0.0 {
                (z.len() as f64).sqrt() / norm
            } else {
                0.0
            };
            z.iter().map(|x| x * scale).collect()
        })
        .collect()
}

/// Conditioning rows as a tensor.
///
/// # Shapes
/// `rows [n][e]` -> `[n, e]`
pub fn cond_tensor<B: Backend>(rows: &[Vec<f64>], device: &B::Device) -> Tensor<B, 2> {
    let e = rows.first().map_or(0, Vec::len);
    let flat: Vec<f32> = rows.iter().flatten().map(|&x| x as f32).collect();
    Tensor::from_data(TensorData::new(flat, [rows.len(), e]), device)
}

impl<B: Backend> CaptionDecoder<B> {
    /// Longest caption the decoder writes.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// Next-token logits at every position: position 0 (the prefix) predicts the first
    /// token, position t the token after `ids[:, t-1]`.
    ///
    /// # Shapes
    /// `cond [n, e]` (already [`condition`]ed), `ids [n, L]`, `pad [n, L]` (true = padding)
    /// -> `[n, L + 1, vocab]`; L <= max_len.
    pub fn logits(
        &self,
        cond: Tensor<B, 2>,
        ids: Tensor<B, 2, Int>,
        pad: Tensor<B, 2, Bool>,
    ) -> Tensor<B, 3> {
        let [n, l] = ids.dims();
        let device = cond.device();
        let prefix = self.cond.forward(cond).unsqueeze_dim::<3>(1); // [n, 1, d]
        let x = if l == 0 {
            prefix
        } else {
            Tensor::cat(vec![prefix, self.tokens.forward(ids)], 1)
        };
        let len = l + 1;
        let pos = Tensor::<B, 1, Int>::arange(0..len as i64, &device)
            .unsqueeze::<2>()
            .expand([n, len]);
        let x = x + self.positions.forward(pos);
        let d = x.dims()[2];
        // The prefix is never padding.
        let prefix_pad =
            Tensor::<B, 2, Bool>::from_data(TensorData::new(vec![false; n], [n, 1]), &device);
        let pad = Tensor::cat(vec![prefix_pad, pad], 1);
        let causal = generate_autoregressive_mask::<B>(n, len, &device);
        let masks = RowMasks::for_encoder(&self.blocks, pad, Some(causal));
        let rows = self
            .norm
            .forward(encoder_rows(&self.blocks, x.reshape([n * len, d]), &masks));
        let logits = self.head.forward(rows);
        let vocab = logits.dims()[1];
        logits.reshape([n, len, vocab])
    }

    /// Teacher-forced negative log-likelihood summed over real target tokens:
    /// `-sum_i sum_{t <= L_i} log p(y_{i,t+1} | c_i, y_{i,1..t})` with `y_{i, L_i + 1} =
    /// end`, and the number of targets it sums (for the mean).
    ///
    /// # Shapes
    /// `cond [n, e]`, `captions [n]` (token ids, each at most max_len) -> (`[1]`, count)
    pub fn nll(
        &self,
        cond: Tensor<B, 2>,
        captions: &[Vec<u32>],
        pad_id: u32,
        end_id: u32,
    ) -> Result<(Tensor<B, 1>, usize)> {
        let device = cond.device();
        let n = captions.len();
        let l = captions.iter().map(Vec::len).max().unwrap_or(0);
        if l > self.max_len {
            return Err(Error::invalid(format!(
                "decoder: a caption of {l} tokens is longer than decoder.max_len = {}",
                self.max_len
            )));
        }
        let (mut ids, mut pad, mut tgt, mut keep) = (vec![], vec![], vec![], vec![]);
        for c in captions {
            for t in 0..l {
                ids.push(i64::from(*c.get(t).unwrap_or(&pad_id)));
                pad.push(t >= c.len());
            }
            for t in 0..=l {
                let y = match t.cmp(&c.len()) {
                    std::cmp::Ordering::Less => c[t],
                    std::cmp::Ordering::Equal => end_id,
                    std::cmp::Ordering::Greater => pad_id,
                };
                tgt.push(i64::from(y));
                keep.push(if t <= c.len() { 1.0f32 } else { 0.0 });
            }
        }
        let count = keep.iter().filter(|k| **k > 0.0).count();
        let ids = Tensor::<B, 2, Int>::from_data(TensorData::new(ids, [n, l]), &device);
        let pad = Tensor::<B, 2, Bool>::from_data(TensorData::new(pad, [n, l]), &device);
        let tgt = Tensor::<B, 2, Int>::from_data(TensorData::new(tgt, [n, l + 1]), &device);
        let keep = Tensor::<B, 2>::from_data(TensorData::new(keep, [n, l + 1]), &device);
        let logp = log_softmax(self.logits(cond, ids, pad), 2)
            .gather(2, tgt.unsqueeze_dim::<3>(2))
            .squeeze_dim::<2>(2); // [n, L + 1]
        Ok(((logp * keep).sum().neg(), count))
    }

    /// Writes one caption per conditioning row: beam search of width `beam` (1 = greedy)
    /// over `log p(y | c)`, each hypothesis ending at `end_id` or after max_len tokens; the
    /// highest total log-probability wins (no length normalisation: the grammar's
    /// captions differ by at most a few tokens). Returns token ids without the end token.
    ///
    /// # Shapes
    /// `cond [n][e]` (already [`condition`]ed) -> `n` token sequences
    pub fn generate(
        &self,
        cond: &[Vec<f64>],
        beam: usize,
        end_id: u32,
        device: &B::Device,
    ) -> Result<Vec<Vec<u32>>> {
        let beam = beam.max(1);
        let mut out = Vec::with_capacity(cond.len());
        for chunk in cond.chunks(64) {
            out.extend(self.beam_chunk(chunk, beam, end_id, device)?);
        }
        Ok(out)
    }

    /// [`Self::generate`] for one chunk of rows: every live hypothesis of every row in
    /// one forward pass per step (finished ones are carried over, not re-run).
    fn beam_chunk(
        &self,
        cond: &[Vec<f64>],
        beam: usize,
        end_id: u32,
        device: &B::Device,
    ) -> Result<Vec<Vec<u32>>> {
        /// One partial caption: its tokens (never the end token), log-probability and
        /// whether it has ended.
        #[derive(Clone)]
        struct Hyp {
            tokens: Vec<u32>,
            logp: f64,
            done: bool,
        }
        let n = cond.len();
        let start = Hyp {
            tokens: vec![],
            logp: 0.0,
            done: false,
        };
        let mut beams: Vec<Vec<Hyp>> = vec![vec![start]; n];
        for t in 0..=self.max_len {
            // Live hypotheses all hold exactly t tokens.
            let live: Vec<(usize, usize)> = beams
                .iter()
                .enumerate()
                .flat_map(|(i, b)| {
                    b.iter()
                        .enumerate()
                        .filter(|(_, h)| !h.done)
                        .map(move |(j, _)| (i, j))
                })
                .collect();
            if live.is_empty() {
                break;
            }
            let m = live.len();
            let conds: Vec<Vec<f64>> = live.iter().map(|&(i, _)| cond[i].clone()).collect();
            let ids: Vec<i64> = live
                .iter()
                .flat_map(|&(i, j)| beams[i][j].tokens.iter().map(|&x| i64::from(x)))
                .collect();
            let ids = Tensor::<B, 2, Int>::from_data(TensorData::new(ids, [m, t]), device);
            let pad = Tensor::<B, 2, Bool>::from_data(
                TensorData::new(vec![false; m * t], [m, t]),
                device,
            );
            let logits = self.logits(cond_tensor::<B>(&conds, device), ids, pad);
            let vocab = logits.dims()[2];
            let logp: Vec<f32> = log_softmax(logits.narrow(1, t, 1).reshape([m, vocab]), 1)
                .into_data()
                .to_vec()
                .map_err(|e| Error::invalid(format!("decoder logits: {e:?}")))?;
            let mut next: Vec<Vec<Hyp>> = beams
                .iter()
                .map(|b| b.iter().filter(|h| h.done).cloned().collect())
                .collect();
            for (r, &(i, j)) in live.iter().enumerate() {
                let h = &beams[i][j];
                let row = &logp[r * vocab..(r + 1) * vocab];
                let mut order: Vec<usize> = (0..vocab).collect();
                order.sort_by(|&a, &b| row[b].total_cmp(&row[a]).then(a.cmp(&b)));
                for &v in order.iter().take(beam) {
                    let ended = v as u32 == end_id;
                    let mut tokens = h.tokens.clone();
                    if !ended {
                        tokens.push(v as u32);
                    }
                    next[i].push(Hyp {
                        tokens,
                        logp: h.logp + f64::from(row[v]),
                        // After max_len tokens the caption ends whatever comes next.
                        done: ended || t == self.max_len,
                    });
                }
            }
            for b in &mut next {
                b.sort_by(|x, y| y.logp.total_cmp(&x.logp));
                b.truncate(beam);
            }
            beams = next;
        }
        Ok(beams
            .into_iter()
            .map(|b| b.into_iter().next().map(|h| h.tokens).unwrap_or_default())
            .collect())
    }
}
