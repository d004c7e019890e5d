#!/usr/bin/env python3
"""Independent numpy reference for loading Hugging Face checkpoint folders "as published".

Usage:  python3 tests/hf/make_reference.py OUT_DIR [--seed 0]

Needs Python 3.11 with numpy, scipy (erf), transformers (configs, tokenizers and image processors
only; transformers imports and works WITHOUT torch, and torch is not used) and safetensors.numpy.
Deterministic for a given seed; runs in a few seconds.

What it writes
==============
OUT_DIR/
  texts.txt                 6 texts, one per line (uppercase, punctuation, an accented letter,
                            words split into "##" pieces, a wholly unknown word -> [UNK], different lengths)
  manifest.json             every folder: model type, architecture, L, H, heads, files
  bert/                     BertModel            (config.json, model.safetensors, vocab.txt, tokenizer files)
  bert-mlm/                 BertForMaskedLM      (same encoder weights as bert/, "bert." prefix, MLM head)
  minilm-st/                sentence-transformers folder (all-MiniLM-L6-v2 layout) around a BertModel
  vit/                      ViTModel             (config.json, model.safetensors, preprocessor_config.json)
  vit-cls/                  ViTForImageClassification (same weights as vit/, "vit." prefix, classifier)
  dinov2/                   Dinov2Model          (7x7 stored position grid, run on 40x40 = 5x5 patches)
  <folder>/reference/*.npy  expected inputs/outputs (listed below)

config.json files come from the real transformers config classes' save_pretrained; tokenizer.json /
tokenizer_config.json from BertTokenizerFast(...).save_pretrained; preprocessor_config.json from
ViTImageProcessor / BitImageProcessor save_pretrained. Weights are float32 safetensors
(metadata {"format": "pt"}, as save_pretrained writes) with the names and PyTorch shapes that
save_pretrained of the installed transformers writes (nn.Linear weight = [out, in], conv weight =
[out, in, kh, kw]).  See TENSOR NAMES below.

Reference files
---------------
text folders (bert, bert-mlm, minilm-st):
  input_ids.npy      int64 [N, T]     slow python BertTokenizer (BertTokenizerLegacy in transformers 5.x;
                                      vocab.txt, do_lower_case=True), [CLS] ... [SEP], padded with [PAD]=0
                                      to the longest text
  attention_mask.npy int64 [N, T]
  hidden_states.npy  f32 [N, L+1, T, H]  HF output_hidden_states: embeddings output, then every layer output
                                      (token_type_ids all 0; ALL positions, padded ones included)
  mean.npy           f32 [N, L+1, H]  per layer: sum_t(mask*h) / max(sum_t mask, 1e-9)  (CLS and SEP included)
  cls.npy            f32 [N, L+1, H]  token 0 of every hidden state
  pooler_output.npy  f32 [N, H]       tanh(pooler.dense(h_L[:, 0]))          (bert, minilm-st; extra)
  mlm_logits.npy     f32 [N, T, V]    MLM head logits                        (bert-mlm only; extra)
  sentence_embedding.npy f32 [N, H]   (minilm-st only) mean of the last layer / max(||.||_2, 1e-12)
image folders (vit, vit-cls, dinov2):
  pixel_values.npy   f32 [M, 3, S, S] M = 3 standard-normal inputs, S = 32 (vit) / 40 (dinov2)
  hidden_states.npy  f32 [M, L+1, 1+P, H] embeddings output (CLS + patches + position embeddings), then every
                                      layer output, all BEFORE the final `layernorm`
  last_hidden_state.npy f32 [M, 1+P, H]  after the final `layernorm`
  cls.npy            f32 [M, L+1, H]  token 0 of every hidden state
  mean_patch.npy     f32 [M, L+1, H]  mean over tokens 1..P of every hidden state
  pooled_cls.npy     f32 [M, H]       last_hidden_state[:, 0]
  pooled_mean.npy    f32 [M, H]       mean of last_hidden_state[:, 1:]
  pooler_output.npy  f32 [M, H]       tanh(pooler.dense(last_hidden_state[:, 0]))   (vit only; extra)
  logits.npy         f32 [M, 5]       classifier(last_hidden_state[:, 0])            (vit-cls only; extra)
  pos_embed_interp.npy f32 [1+P, H]   the interpolated position embeddings actually added (dinov2 only; extra)

The forward pass
================
An independent numpy re-implementation (float64 arithmetic on the float32 weights, results cast to
float32) of transformers 5.24.0:
  transformers/models/bert/modeling_bert.py      (BertEmbeddings, BertSelfAttention, eager_attention_forward,
                                                  BertSelfOutput, BertIntermediate, BertOutput, BertPooler,
                                                  BertPredictionHeadTransform / BertLMPredictionHead)
  transformers/models/vit/modeling_vit.py        (ViTPatchEmbeddings, ViTEmbeddings, ViTAttention, ViTMLP,
                                                  ViTLayer, ViTModel, ViTPooler, ViTForImageClassification)
  transformers/models/dinov2/modeling_dinov2.py  (Dinov2PatchEmbeddings, Dinov2Embeddings.interpolate_pos_encoding,
                                                  Dinov2Attention, Dinov2LayerScale, Dinov2MLP, Dinov2Layer, Dinov2Model)
  transformers/masking_utils.py (padding mask), transformers/utils/output_capturing.py (hidden_states),
  transformers/modeling_utils.py + core_model_loading.py + conversion_mapping.py (names written by save_pretrained)
and of torch.nn.functional.interpolate(mode="bicubic", align_corners=False, antialias=False) as implemented in
ATen (aten/src/ATen/native/UpSample.h, cpu/UpSampleKernel.cpp).

Notation: Linear(x) = x @ W^T + b (W stored [out, in]).
LN(x) = (x - mean(x)) / sqrt(var(x) + eps) * w + b over the last axis, var = biased (divide by H).
GELU ("gelu" in ACT2FN = GELUActivation = torch.nn.functional.gelu, exact):  gelu(x) = 0.5 x (1 + erf(x / sqrt 2)).
Heads: H features split into nh contiguous blocks of d = H / nh (head h = features [h d, (h+1) d)).
Attention per head: s = (q k^T) * d^-0.5 + m ; p = softmax(s) over keys ; ctx = p v ; heads concatenated back
in the same order.  Padding mask m (BERT only): 0 for keys with attention_mask 1, torch.finfo(float32).min =
-3.4028234663852886e38 for keys with attention_mask 0 (eager_mask in masking_utils; the default sdpa path uses a
boolean mask = -inf; both give exactly zero weight).  Queries at padded positions are computed normally.

BERT (post-LN):
  e  = LN_emb( (word_emb[ids] + type_emb[0]) + pos_emb[0..T-1] )           (eps = layer_norm_eps = 1e-12)
  per layer:  a  = LN_attn( Linear_o(MHA(Linear_q(x), Linear_k(x), Linear_v(x))) + x )
              y  = LN_out( Linear_out( gelu(Linear_int(a)) ) + a )
  hidden_states = [e, y_1, ..., y_L];  pooler = tanh(Linear_pool(y_L[:, 0]))
  MLM head: logits = LN_t(gelu(Linear_t(y_L))) @ word_emb^T + cls.predictions.bias   (decoder tied to
            word embeddings; decoder.bias tied to cls.predictions.bias)
ViT (pre-LN):
  patches = Conv2d(k = stride = patch)(pixels) -> [B, H, gh, gw] -> flatten(2) -> [B, H, gh*gw] -> transpose ->
            token index 1 + i*gw + j for patch row i, column j (column j varies fastest, row-major);
            patch_emb[i, j] = sum_{c,u,v} W[:, c, u, v] * px[c, i*p+u, j*p+v] + b
  e  = concat(cls_token, patches) + position_embeddings   (ViTModel runs only at config.image_size here, no
        interpolation)
  per layer:  h = x + Linear_o(MHA(LN_before(x)));  y = h + fc2(gelu(fc1(LN_after(h))))
  last_hidden_state = LN_final(y_L)  (eps 1e-12);  pooler = tanh(Linear_pool(last[:, 0]));
  ViTForImageClassification logits = classifier(last[:, 0])
DINOv2 (pre-LN + layer scale):
  e  = concat(cls_token, patches) + interpolate_pos_encoding(position_embeddings, 40, 40)
  per layer:  h = x + lambda1_1 * Linear_o(MHA(norm1(x)))      (lambda multiplies the attention output
                                                               after the output projection, before the residual add)
              y = h + lambda1_2 * fc2(gelu(fc1(norm2(h))))
  last_hidden_state = layernorm(y_L)  (eps 1e-6).  Dinov2Model has no pooler weights; its pooler_output = last[:, 0].

DINOv2 position-embedding interpolation (Dinov2Embeddings.interpolate_pos_encoding, transformers 5.24.0)
--------------------------------------------------------------------------------------------------------
  N = position_embeddings.shape[1] - 1 (= 49), n = sqrt(N) (= 7), patch count of the input = 25.
  If patches == N and height == width: use the table unchanged. Otherwise:
  grid = position_embeddings[0, 1:].reshape(n, n, D).permute -> [1, D, n, n]  (row-major: table row r, col c is
         token 1 + r*n + c);
  out  = F.interpolate(grid.float(), size=(H_in // patch, W_in // patch) = (5, 5), mode="bicubic",
         align_corners=False)     # size=, NOT scale_factor; no +0.1 offset; antialias=False (default)
  new  = concat(position_embeddings[:, :1], out.permute(0, 2, 3, 1).reshape(1, 25, D))   (row-major again)
  torch bicubic (no antialias), per axis with in_size, out_size:
    scale = float32(in_size) / out_size        (float32; = 1.4 -> 1.39999998 here)
    src(o) = float32( scale * (o + 0.5) - 0.5 )   (product/sum in double, rounded to float32; NOT clamped at 0)
    i0(o)  = min(floor(src), in_size - 1);   t = clamp(src - i0, 0, 1)
    weights for taps i0-1, i0, i0+1, i0+2 with A = -0.75:
       w0 = K2(t + 1), w1 = K1(t), w2 = K1(1 - t), w3 = K2(2 - t)
       K1(x) = ((A + 2) x - (A + 3)) x^2 + 1           (|x| <= 1)
       K2(x) = ((A x - 5A) x + 8A) x - 4A               (1 < |x| < 2)
    tap indices are CLAMPED to [0, in_size - 1] (border replicate; e.g. here o=0 -> src 0.2 -> taps (0,0,1,2),
    o=4 -> src 5.8 -> taps (4,5,6,6)).
  2-D: out[c, oy, ox] = sum_{a=0..3} wy_a(oy) * ( sum_{b=0..3} wx_b(ox) * in[c, iy_a(oy), ix_b(ox)] )
  (separable; the inner sum is along width, accumulated left to right, in float32 on CPU).
  For 7 -> 5: src = 0.2, 1.6, 3.0, 4.4, 5.8 on both axes.
  Checks: check_interpolation() compares this float32 ATen-order implementation with an independent float64
  textbook 2-D Keys-kernel formula (bicubic_textbook) and with the documented coordinates; once, by hand, it
  was also compared with OpenCV 5.1 cv2.resize(..., INTER_CUBIC) (same A = -0.75, half-pixel mapping,
  replicated border; not a dependency of this script): max |diff| 1.3e-6 on the dinov2 table, <= 1.7e-6 on
  random 7x7 -> 5x5, 3x9, 10x4, 14x14, 6x6.
  Older transformers (e.g. 4.40) instead used scale_factor=((5 + 0.1) / 7) per axis, i.e. kernel
  scale = 1 / float32(5.1 / 7) = 1.3725..., which gives DIFFERENT values; this file follows 5.24.0 (size=).

TENSOR NAMES (transformers 5.24.0, as written by save_pretrained)
=================================================================
In 5.24 the in-memory ViT/DINOv2 modules use renamed attributes (ViT: layers.i.attention.q_proj/k_proj/v_proj/
o_proj, mlp.fc1/fc2; DINOv2: attention.q_proj/...); conversion_mapping.py maps the published names onto them
when loading and save_pretrained reverts the mapping (core_model_loading.revert_weight_conversion), so files
hold the published (legacy) names below.  BERT has no renaming.
BertModel (i = layer):                                                   shape
  embeddings.word_embeddings.weight                                      [V, H]
  embeddings.position_embeddings.weight                                  [max_pos, H]
  embeddings.token_type_embeddings.weight                                [type_vocab, H]
  embeddings.LayerNorm.weight | .bias                                    [H]
  encoder.layer.i.attention.self.query|key|value.weight                  [H, H]   (.bias [H])
  encoder.layer.i.attention.output.dense.weight                          [H, H]   (.bias [H])
  encoder.layer.i.attention.output.LayerNorm.weight | .bias              [H]
  encoder.layer.i.intermediate.dense.weight                              [I, H]   (.bias [I])
  encoder.layer.i.output.dense.weight                                    [H, I]   (.bias [H])
  encoder.layer.i.output.LayerNorm.weight | .bias                        [H]
  pooler.dense.weight                                                    [H, H]   (.bias [H])
  (embeddings.position_ids / token_type_ids are non-persistent buffers: not saved)
BertForMaskedLM: "bert." + every BertModel name except pooler.* (add_pooling_layer=False), plus
  cls.predictions.bias                                                   [V]
  cls.predictions.transform.dense.weight                                 [H, H]   (.bias [H])
  cls.predictions.transform.LayerNorm.weight | .bias                     [H]
  NOT saved: cls.predictions.decoder.weight (tied to bert.embeddings.word_embeddings.weight) and
  cls.predictions.decoder.bias (tied to cls.predictions.bias) -- remove_tied_weights_from_state_dict.
ViTModel:
  embeddings.cls_token                                                   [1, 1, H]
  embeddings.position_embeddings                                         [1, 1+P, H]
  embeddings.patch_embeddings.projection.weight                          [H, C, p, p]  (.bias [H])
  encoder.layer.i.layernorm_before.weight | .bias                        [H]
  encoder.layer.i.attention.attention.query|key|value.weight             [H, H]   (.bias [H], qkv_bias)
  encoder.layer.i.attention.output.dense.weight                          [H, H]   (.bias [H])
  encoder.layer.i.layernorm_after.weight | .bias                         [H]
  encoder.layer.i.intermediate.dense.weight                              [I, H]   (.bias [I])
  encoder.layer.i.output.dense.weight                                    [H, I]   (.bias [H])
  layernorm.weight | .bias                                               [H]
  pooler.dense.weight                                                    [H, H]   (.bias [H])
  (no embeddings.mask_token: only with use_mask_token=True, i.e. ViTForMaskedImageModeling)
ViTForImageClassification: "vit." + ViTModel names without pooler.*, plus classifier.weight [5, H], classifier.bias [5]
Dinov2Model:
  embeddings.cls_token                                                   [1, 1, H]
  embeddings.mask_token                                                  [1, H]   (config.use_mask_token=True default)
  embeddings.position_embeddings                                         [1, 1+49, H]
  embeddings.patch_embeddings.projection.weight                          [H, C, p, p]  (.bias [H])
  encoder.layer.i.norm1.weight | .bias                                   [H]
  encoder.layer.i.attention.attention.query|key|value.weight             [H, H]   (.bias [H])
  encoder.layer.i.attention.output.dense.weight                          [H, H]   (.bias [H])
  encoder.layer.i.layer_scale1.lambda1                                   [H]
  encoder.layer.i.norm2.weight | .bias                                   [H]
  encoder.layer.i.mlp.fc1.weight                                         [4H, H]  (.bias [4H])
  encoder.layer.i.mlp.fc2.weight                                         [H, 4H]  (.bias [H])
  encoder.layer.i.layer_scale2.lambda1                                   [H]
  layernorm.weight | .bias                                               [H]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import warnings

import numpy as np
from scipy.special import erf

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

import transformers  # noqa: E402
from safetensors.numpy import load_file, save_file  # noqa: E402
from transformers import BertConfig, BertTokenizerFast, Dinov2Config, ViTConfig  # noqa: E402

transformers.logging.set_verbosity_error()

TRANSFORMERS_VERSION_FOLLOWED = "5.24.0"
F32_MIN = float(np.finfo(np.float32).min)  # torch.finfo(torch.float32).min, HF's additive mask value

# ----------------------------------------------------------------------------------------------
# fixtures: vocabulary and texts
# ----------------------------------------------------------------------------------------------

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PUNCT = list(".,!?'\":;-()&")
WORDS = [
    "the", "is", "are", "was", "were", "hello", "world", "play", "dog", "cat", "bird", "quick",
    "brown", "fox", "jump", "over", "lazy", "test", "cafe", "au", "lait", "il", "vous", "rain",
    "tree", "house", "green", "in", "it", "on", "and", "of", "to", "we", "you", "this", "that",
    "with", "ok", "yes", "no", "good", "day", "sun", "walk", "read", "book", "red", "blue",
    "small", "big", "very", "not", "loud", "sad", "pla", "happy",
]
PIECES = [
    "##s", "##ing", "##ed", "##er", "##ly", "##es", "##it", "##e", "##y", "##d",
    "##ness", "##ful", "##able", "##r", "##a", "##o", "##i", "##n", "##t",
]
VOCAB = SPECIALS + [chr(c) for c in range(ord("a"), ord("z") + 1)] + PUNCT + WORDS + PIECES
assert len(VOCAB) == len(set(VOCAB))

TEXTS = [
    "Hello world!",
    "The players were playing happily.",
    "Café au lait, s'il vous plaît.",
    "A QUICK brown fox jumped over the lazy dogs; the Xylophone played (loudly) & sadly.",
    "ok",
    "Is it raining in the green tree-house?",
]
UNKNOWN_WORD = "xylophone"  # must tokenise to a single [UNK]

# ----------------------------------------------------------------------------------------------
# numpy building blocks (float64)
# ----------------------------------------------------------------------------------------------


def f64(a):
    return np.asarray(a, dtype=np.float64)


def linear(x, w, b=None):
    y = x @ f64(w).T
    if b is not None:
        y = y + f64(b)
    return y


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * f64(w) + f64(b)


def gelu(x):
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def softmax(s):
    s = s - s.max(-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(-1, keepdims=True)


def mha(x, wq, bq, wk, bk, wv, bv, nh, key_mask=None):
    """x [B, T, H] -> context [B, T, H] (before the output projection). key_mask [B, T] of 0/1."""
    B, T, H = x.shape
    d = H // nh
    q = linear(x, wq, bq).reshape(B, T, nh, d).transpose(0, 2, 1, 3)
    k = linear(x, wk, bk).reshape(B, T, nh, d).transpose(0, 2, 1, 3)
    v = linear(x, wv, bv).reshape(B, T, nh, d).transpose(0, 2, 1, 3)
    s = (q @ k.transpose(0, 1, 3, 2)) * (d ** -0.5)
    if key_mask is not None:
        add = np.where(np.asarray(key_mask)[:, None, None, :] > 0, 0.0, F32_MIN)
        s = s + add
    p = softmax(s)
    ctx = p @ v  # [B, nh, T, d]
    return ctx.transpose(0, 2, 1, 3).reshape(B, T, H)


# ----------------------------------------------------------------------------------------------
# random weights (published layout)
# ----------------------------------------------------------------------------------------------


class Gen:
    def __init__(self, rng):
        self.rng = rng

    def w(self, *shape, std=0.2):
        return (self.rng.standard_normal(shape) * std).astype(np.float32)

    def b(self, *shape, std=0.1):
        return (self.rng.standard_normal(shape) * std).astype(np.float32)

    def ln(self, sd, prefix, h):
        sd[prefix + ".weight"] = (1.0 + 0.1 * self.rng.standard_normal(h)).astype(np.float32)
        sd[prefix + ".bias"] = self.b(h)

    def lin(self, sd, prefix, out_f, in_f, bias=True):
        sd[prefix + ".weight"] = self.w(out_f, in_f)
        if bias:
            sd[prefix + ".bias"] = self.b(out_f)


def bert_state_dict(g, V, H, L, I, max_pos, type_vocab, pooler=True):
    sd = {}
    sd["embeddings.word_embeddings.weight"] = g.w(V, H)
    sd["embeddings.position_embeddings.weight"] = g.w(max_pos, H)
    sd["embeddings.token_type_embeddings.weight"] = g.w(type_vocab, H)
    g.ln(sd, "embeddings.LayerNorm", H)
    for i in range(L):
        p = f"encoder.layer.{i}."
        for n in ("query", "key", "value"):
            g.lin(sd, p + "attention.self." + n, H, H)
        g.lin(sd, p + "attention.output.dense", H, H)
        g.ln(sd, p + "attention.output.LayerNorm", H)
        g.lin(sd, p + "intermediate.dense", I, H)
        g.lin(sd, p + "output.dense", H, I)
        g.ln(sd, p + "output.LayerNorm", H)
    if pooler:
        g.lin(sd, "pooler.dense", H, H)
    return sd


def vit_state_dict(g, H, L, I, C, patch, n_pos, pooler=True):
    sd = {}
    sd["embeddings.cls_token"] = g.w(1, 1, H, std=0.5)
    sd["embeddings.position_embeddings"] = g.w(1, 1 + n_pos, H, std=0.5)
    sd["embeddings.patch_embeddings.projection.weight"] = g.w(H, C, patch, patch, std=0.1)
    sd["embeddings.patch_embeddings.projection.bias"] = g.b(H)
    for i in range(L):
        p = f"encoder.layer.{i}."
        g.ln(sd, p + "layernorm_before", H)
        for n in ("query", "key", "value"):
            g.lin(sd, p + "attention.attention." + n, H, H)
        g.lin(sd, p + "attention.output.dense", H, H)
        g.ln(sd, p + "layernorm_after", H)
        g.lin(sd, p + "intermediate.dense", I, H)
        g.lin(sd, p + "output.dense", H, I)
    g.ln(sd, "layernorm", H)
    if pooler:
        g.lin(sd, "pooler.dense", H, H)
    return sd


def dinov2_state_dict(g, H, L, mlp_ratio, C, patch, n_pos):
    sd = {}
    I = int(H * mlp_ratio)
    sd["embeddings.cls_token"] = g.w(1, 1, H, std=0.5)
    sd["embeddings.mask_token"] = g.w(1, H)  # [1, H] in Dinov2Embeddings (not [1, 1, H])
    sd["embeddings.position_embeddings"] = g.w(1, 1 + n_pos, H, std=0.5)
    sd["embeddings.patch_embeddings.projection.weight"] = g.w(H, C, patch, patch, std=0.1)
    sd["embeddings.patch_embeddings.projection.bias"] = g.b(H)
    for i in range(L):
        p = f"encoder.layer.{i}."
        g.ln(sd, p + "norm1", H)
        for n in ("query", "key", "value"):
            g.lin(sd, p + "attention.attention." + n, H, H)
        g.lin(sd, p + "attention.output.dense", H, H)
        sd[p + "layer_scale1.lambda1"] = (0.5 + 0.1 * g.rng.standard_normal(H)).astype(np.float32)
        g.ln(sd, p + "norm2", H)
        g.lin(sd, p + "mlp.fc1", I, H)
        g.lin(sd, p + "mlp.fc2", H, I)
        sd[p + "layer_scale2.lambda1"] = (0.5 + 0.1 * g.rng.standard_normal(H)).astype(np.float32)
    g.ln(sd, "layernorm", H)
    return sd


def save_weights(sd, folder):
    # save_pretrained writes metadata {"format": "pt"}; all tensors float32, contiguous
    save_file({k: np.ascontiguousarray(v, dtype=np.float32) for k, v in sd.items()},
              os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})


def strip_prefix(sd, prefix):
    return {k[len(prefix):]: v for k, v in sd.items() if k.startswith(prefix)}


# ----------------------------------------------------------------------------------------------
# forwards
# ----------------------------------------------------------------------------------------------


def bert_forward(sd, cfg, input_ids, attention_mask):
    """Returns hidden_states [N, L+1, T, H] (float64). Names are BertModel names (no prefix)."""
    N, T = input_ids.shape
    eps = cfg["layer_norm_eps"]
    nh = cfg["num_attention_heads"]
    word = f64(sd["embeddings.word_embeddings.weight"])
    pos = f64(sd["embeddings.position_embeddings.weight"])
    typ = f64(sd["embeddings.token_type_embeddings.weight"])
    x = word[input_ids] + typ[np.zeros_like(input_ids)]
    x = x + pos[np.arange(T)][None]
    x = layer_norm(x, sd["embeddings.LayerNorm.weight"], sd["embeddings.LayerNorm.bias"], eps)
    hs = [x]
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        a = p + "attention.self."
        ctx = mha(x, sd[a + "query.weight"], sd[a + "query.bias"], sd[a + "key.weight"], sd[a + "key.bias"],
                  sd[a + "value.weight"], sd[a + "value.bias"], nh, key_mask=attention_mask)
        att = linear(ctx, sd[p + "attention.output.dense.weight"], sd[p + "attention.output.dense.bias"])
        att = layer_norm(att + x, sd[p + "attention.output.LayerNorm.weight"],
                         sd[p + "attention.output.LayerNorm.bias"], eps)
        inter = gelu(linear(att, sd[p + "intermediate.dense.weight"], sd[p + "intermediate.dense.bias"]))
        out = linear(inter, sd[p + "output.dense.weight"], sd[p + "output.dense.bias"])
        x = layer_norm(out + att, sd[p + "output.LayerNorm.weight"], sd[p + "output.LayerNorm.bias"], eps)
        hs.append(x)
    return np.stack(hs, axis=1)


def bert_pooler(sd, last):
    return np.tanh(linear(last[:, 0], sd["pooler.dense.weight"], sd["pooler.dense.bias"]))


def bert_mlm_logits(sd_full, cfg, last):
    eps = cfg["layer_norm_eps"]
    t = gelu(linear(last, sd_full["cls.predictions.transform.dense.weight"],
                    sd_full["cls.predictions.transform.dense.bias"]))
    t = layer_norm(t, sd_full["cls.predictions.transform.LayerNorm.weight"],
                   sd_full["cls.predictions.transform.LayerNorm.bias"], eps)
    return t @ f64(sd_full["bert.embeddings.word_embeddings.weight"]).T + f64(sd_full["cls.predictions.bias"])


def patch_embed(px, w, b):
    """Conv2d(kernel = stride = p) + flatten(2).transpose(1, 2). px [B, C, S, S] -> [B, gh*gw, H]."""
    B, C, S, _ = px.shape
    Hd, _, p, _ = w.shape
    g = S // p
    # [B, C, gh, p, gw, p] -> [B, gh, gw, C, p, p]; token = i*gw + j (row-major, column fastest)
    t = f64(px).reshape(B, C, g, p, g, p).transpose(0, 2, 4, 1, 3, 5).reshape(B, g * g, C * p * p)
    return t @ f64(w).reshape(Hd, C * p * p).T + f64(b)


def patch_embed_loops(px, w, b):
    """Literal conv definition, used only to check patch_embed's flattening order."""
    B, C, S, _ = px.shape
    Hd, _, p, _ = w.shape
    g = S // p
    out = np.zeros((B, Hd, g, g))
    for i in range(g):
        for j in range(g):
            win = f64(px[:, :, i * p:(i + 1) * p, j * p:(j + 1) * p])  # [B, C, p, p]
            out[:, :, i, j] = np.einsum("bcuv,ocuv->bo", win, f64(w)) + f64(b)
    return out.reshape(B, Hd, g * g).transpose(0, 2, 1)  # flatten(2).transpose(1, 2)


def vit_like_forward(sd, cfg, px, kind, pos_embed=None):
    """kind 'vit' or 'dinov2'. Returns (hidden_states [M, L+1, 1+P, H], last_hidden_state [M, 1+P, H])."""
    eps = cfg["layer_norm_eps"]
    nh = cfg["num_attention_heads"]
    M = px.shape[0]
    patches = patch_embed(px, sd["embeddings.patch_embeddings.projection.weight"],
                          sd["embeddings.patch_embeddings.projection.bias"])
    cls = np.broadcast_to(f64(sd["embeddings.cls_token"]), (M, 1, patches.shape[-1]))
    x = np.concatenate([cls, patches], axis=1)
    pe = f64(sd["embeddings.position_embeddings"]) if pos_embed is None else f64(pos_embed)
    x = x + pe
    hs = [x]
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        a = p + "attention.attention."
        n1, n2 = ("layernorm_before", "layernorm_after") if kind == "vit" else ("norm1", "norm2")
        h = layer_norm(x, sd[p + n1 + ".weight"], sd[p + n1 + ".bias"], eps)
        ctx = mha(h, sd[a + "query.weight"], sd[a + "query.bias"], sd[a + "key.weight"], sd[a + "key.bias"],
                  sd[a + "value.weight"], sd[a + "value.bias"], nh)
        att = linear(ctx, sd[p + "attention.output.dense.weight"], sd[p + "attention.output.dense.bias"])
        if kind == "dinov2":
            att = att * f64(sd[p + "layer_scale1.lambda1"])
        x = att + x
        h = layer_norm(x, sd[p + n2 + ".weight"], sd[p + n2 + ".bias"], eps)
        if kind == "vit":
            m = linear(gelu(linear(h, sd[p + "intermediate.dense.weight"], sd[p + "intermediate.dense.bias"])),
                       sd[p + "output.dense.weight"], sd[p + "output.dense.bias"])
        else:
            m = linear(gelu(linear(h, sd[p + "mlp.fc1.weight"], sd[p + "mlp.fc1.bias"])),
                       sd[p + "mlp.fc2.weight"], sd[p + "mlp.fc2.bias"])
            m = m * f64(sd[p + "layer_scale2.lambda1"])
        x = m + x
        hs.append(x)
    last = layer_norm(x, sd["layernorm.weight"], sd["layernorm.bias"], eps)
    return np.stack(hs, axis=1), last


# ----------------------------------------------------------------------------------------------
# torch.nn.functional.interpolate(mode="bicubic", align_corners=False, antialias=False) in numpy
# ----------------------------------------------------------------------------------------------

A_CUBIC = np.float32(-0.75)


def _k1(x):  # |x| <= 1, float32 like ATen cubic_convolution1
    x = np.float32(x)
    return np.float32(np.float32(np.float32(np.float32(A_CUBIC + np.float32(2)) * x) - np.float32(A_CUBIC + np.float32(3))) * x * x) + np.float32(1)


def _k2(x):  # 1 < |x| < 2, float32 like ATen cubic_convolution2
    x = np.float32(x)
    A = A_CUBIC
    return np.float32(np.float32(np.float32(np.float32(A * x) - np.float32(np.float32(5) * A)) * x) + np.float32(np.float32(8) * A)) * x - np.float32(np.float32(4) * A)


def cubic_axis(in_size, out_size, scale_factor=None):
    """ATen HelperInterpCubic.compute_indices_weights for one axis (align_corners=False).
    Returns (idx [out, 4] int, w [out, 4] float32, src [out] float32)."""
    if scale_factor is not None and scale_factor > 0:
        scale = np.float32(1.0 / scale_factor)  # compute_scales_value with a user scale
    else:
        scale = np.float32(np.float32(in_size) / np.float32(out_size))
    idx = np.zeros((out_size, 4), dtype=np.int64)
    w = np.zeros((out_size, 4), dtype=np.float32)
    srcs = np.zeros(out_size, dtype=np.float32)
    for o in range(out_size):
        src = np.float32(float(scale) * (o + 0.5) - 0.5)  # area_pixel_compute_source_index(cubic=True)
        i0 = min(int(np.floor(src)), in_size - 1)        # guard_index_and_lambda
        t = np.float32(min(max(np.float32(src - np.float32(i0)), np.float32(0)), np.float32(1)))
        w[o] = [_k2(np.float32(t + np.float32(1))), _k1(t), _k1(np.float32(np.float32(1) - t)),
                _k2(np.float32(np.float32(2) - t))]
        idx[o] = [min(max(i0 - 1 + k, 0), in_size - 1) for k in range(4)]
        srcs[o] = src
    return idx, w, srcs


def torch_bicubic(x, out_h, out_w, scale_factor=None):
    """x [C, in_h, in_w] float32 -> [C, out_h, out_w] float32, float32 accumulation in ATen's order."""
    x = np.asarray(x, dtype=np.float32)
    _, in_h, in_w = x.shape
    sh, sw = (None, None) if scale_factor is None else scale_factor
    iy, wy, _ = cubic_axis(in_h, out_h, sh)
    ix, wx, _ = cubic_axis(in_w, out_w, sw)
    out = np.zeros((x.shape[0], out_h, out_w), dtype=np.float32)
    for oy in range(out_h):
        for ox in range(out_w):
            acc = None
            for a in range(4):
                t = x[:, iy[oy, a], ix[ox, 0]] * wx[ox, 0]
                for b in range(1, 4):
                    t = (t + x[:, iy[oy, a], ix[ox, b]] * wx[ox, b]).astype(np.float32)
                term = (t * wy[oy, a]).astype(np.float32)
                acc = term if acc is None else (acc + term).astype(np.float32)
            out[:, oy, ox] = acc
    return out


def keys_kernel(d, A=-0.75):
    d = np.abs(d)
    return np.where(d <= 1, (A + 2) * d ** 3 - (A + 3) * d ** 2 + 1,
                    np.where(d < 2, A * d ** 3 - 5 * A * d ** 2 + 8 * A * d - 4 * A, 0.0))


def bicubic_textbook(x, out_h, out_w):
    """Independent float64 2-D formula: sum over the 4x4 neighbourhood of W(dy) W(dx) x[clamp, clamp],
    src = (o + 0.5) * in/out - 0.5, W = Keys kernel with A = -0.75."""
    x = f64(x)
    C, in_h, in_w = x.shape
    out = np.zeros((C, out_h, out_w))
    for oy in range(out_h):
        sy = (oy + 0.5) * in_h / out_h - 0.5
        fy = int(np.floor(sy))
        for ox in range(out_w):
            sx = (ox + 0.5) * in_w / out_w - 0.5
            fx = int(np.floor(sx))
            for m in range(-1, 3):
                for n in range(-1, 3):
                    wgt = keys_kernel(sy - (fy + m)) * keys_kernel(sx - (fx + n))
                    out[:, oy, ox] += wgt * x[:, min(max(fy + m, 0), in_h - 1), min(max(fx + n, 0), in_w - 1)]
    return out


def dinov2_interpolate_pos_encoding(pos, num_patches_h, num_patches_w, legacy_v4=False):
    """Dinov2Embeddings.interpolate_pos_encoding. pos [1, 1+N, D] -> [1, 1+gh*gw, D] float32."""
    pos = np.asarray(pos, dtype=np.float32)
    N = pos.shape[1] - 1
    D = pos.shape[2]
    if num_patches_h * num_patches_w == N and num_patches_h == num_patches_w:
        return pos
    n = int(N ** 0.5)
    grid = pos[0, 1:].reshape(n, n, D).transpose(2, 0, 1)  # [D, n, n]
    if legacy_v4:  # transformers <= 4.4x: scale_factor with the +0.1 offset
        sf = (float((num_patches_h + 0.1) / np.sqrt(N)), float((num_patches_w + 0.1) / np.sqrt(N)))
        out = torch_bicubic(grid, int(np.floor(n * sf[0])), int(np.floor(n * sf[1])), scale_factor=sf)
    else:
        out = torch_bicubic(grid, num_patches_h, num_patches_w)
    flat = out.transpose(1, 2, 0).reshape(1, num_patches_h * num_patches_w, D)
    return np.concatenate([pos[:, :1], flat], axis=1)


def check_interpolation(rng):
    g = rng.standard_normal((4, 7, 7)).astype(np.float32)
    # 1. identity size -> exact copy
    assert np.array_equal(torch_bicubic(g, 7, 7), g)
    # 2. separable float32 ATen-order vs textbook 2-D float64 formula (down and up sampling, non-square)
    for oh, ow in ((5, 5), (3, 9), (10, 4), (14, 14)):
        d = np.abs(torch_bicubic(g, oh, ow) - bicubic_textbook(g, oh, ow)).max()
        assert d < 2e-5, (oh, ow, d)
    # 3. constants are preserved (weights sum to 1, clamped borders)
    c = np.full((1, 7, 7), 0.37, dtype=np.float32)
    assert np.abs(torch_bicubic(c, 5, 5) - 0.37).max() < 1e-6
    # 4. source coordinates for 7 -> 5 as documented
    _, _, src = cubic_axis(7, 5)
    assert np.allclose(src, [0.2, 1.6, 3.0, 4.4, 5.8], atol=1e-6), src


# ----------------------------------------------------------------------------------------------
# tokenisation
# ----------------------------------------------------------------------------------------------


def write_tokenizer(folder, vocab_path, max_len):
    from transformers.models.bert.tokenization_bert import load_vocab

    shutil.copy(vocab_path, os.path.join(folder, "vocab.txt"))
    # transformers 5.x: BertTokenizerFast is BertTokenizer (tokenizers backend) and IGNORES vocab_file=...
    # (it silently builds a 5-token vocab); the vocabulary must be passed as vocab=dict.
    tok = BertTokenizerFast(vocab=dict(load_vocab(vocab_path)), do_lower_case=True, model_max_length=max_len)
    assert len(tok) == len(VOCAB)
    tok.save_pretrained(folder)
    # transformers 5.x no longer writes special_tokens_map.json; published BERT repos have it -> write the
    # classic file so the folder looks like what is on the Hub.
    with open(os.path.join(folder, "special_tokens_map.json"), "w") as f:
        json.dump({"cls_token": "[CLS]", "mask_token": "[MASK]", "pad_token": "[PAD]", "sep_token": "[SEP]",
                   "unk_token": "[UNK]"}, f, indent=2)
        f.write("\n")


def tokenize_reference(vocab_path, folder_with_tokenizer_json):
    from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy

    slow = BertTokenizerLegacy(vocab_file=vocab_path, do_lower_case=True)
    enc = slow(TEXTS, padding="longest", add_special_tokens=True)
    ids = np.array(enc["input_ids"], dtype=np.int64)
    mask = np.array(enc["attention_mask"], dtype=np.int64)
    # sanity: the fixture exercises what it claims to
    toks = [slow.tokenize(t) for t in TEXTS]
    flat = [t for ts in toks for t in ts]
    assert any(t.startswith("##") for t in flat), toks
    assert "[UNK]" in slow.tokenize(UNKNOWN_WORD) and len(slow.tokenize(UNKNOWN_WORD)) == 1
    assert "[UNK]" in flat
    assert "cafe" in toks[2], toks[2]  # é -> e (accents stripped because do_lower_case and strip_accents=None)
    assert len(set(mask.sum(1).tolist())) > 1  # padding matters
    assert ids.shape[1] <= 32  # fits sentence_bert_config max_seq_length, no truncation anywhere
    # cross-check against tokenizer.json through the `tokenizers` library (what the Rust side reads)
    import tokenizers

    tj = tokenizers.Tokenizer.from_file(os.path.join(folder_with_tokenizer_json, "tokenizer.json"))
    for r, t in enumerate(TEXTS):
        e = tj.encode(t)
        n = int(mask[r].sum())
        assert e.ids == ids[r, :n].tolist(), (t, e.ids, ids[r, :n])
        assert all(v == 0 for v in ids[r, n:])
    return ids, mask, toks


# ----------------------------------------------------------------------------------------------
# writers
# ----------------------------------------------------------------------------------------------


def save_np(folder, name, arr, dtype):
    os.makedirs(folder, exist_ok=True)
    np.save(os.path.join(folder, name), np.ascontiguousarray(arr, dtype=dtype))
    return name


def masked_mean(hs, mask):
    """hs [N, L+1, T, H], mask [N, T] -> [N, L+1, H] (sentence-transformers mean pooling)."""
    m = mask.astype(np.float64)[:, None, :, None]
    return (hs * m).sum(2) / np.maximum(m.sum(2), 1e-9)


def text_reference(folder, sd, cfg, ids, mask, extra=None):
    ref = os.path.join(folder, "reference")
    hs = bert_forward(sd, cfg, ids, mask)
    files = [save_np(ref, "input_ids.npy", ids, np.int64), save_np(ref, "attention_mask.npy", mask, np.int64),
             save_np(ref, "hidden_states.npy", hs, np.float32),
             save_np(ref, "mean.npy", masked_mean(hs, mask), np.float32),
             save_np(ref, "cls.npy", hs[:, :, 0], np.float32)]
    if extra:
        for name, arr in extra(hs).items():
            files.append(save_np(ref, name, arr, np.float32))
    return hs, files


def image_reference(folder, sd, cfg, px, kind, pos_embed=None, extra=None):
    ref = os.path.join(folder, "reference")
    hs, last = vit_like_forward(sd, cfg, px, kind, pos_embed)
    files = [save_np(ref, "pixel_values.npy", px, np.float32),
             save_np(ref, "hidden_states.npy", hs, np.float32),
             save_np(ref, "last_hidden_state.npy", last, np.float32),
             save_np(ref, "cls.npy", hs[:, :, 0], np.float32),
             save_np(ref, "mean_patch.npy", hs[:, :, 1:].mean(2), np.float32),
             save_np(ref, "pooled_cls.npy", last[:, 0], np.float32),
             save_np(ref, "pooled_mean.npy", last[:, 1:].mean(1), np.float32)]
    if extra:
        for name, arr in extra(hs, last).items():
            files.append(save_np(ref, name, arr, np.float32))
    return hs, last, files


def list_files(folder):
    """Relative paths of all files under folder; empty directories are listed with a trailing '/'."""
    out = []
    for root, dirs, names in os.walk(folder):
        for n in names:
            out.append(os.path.relpath(os.path.join(root, n), folder))
        if not dirs and not names:
            out.append(os.path.relpath(root, folder) + "/")
    return sorted(out)


def names_shapes(folder):
    sd = load_file(os.path.join(folder, "model.safetensors"))
    return {k: list(v.shape) for k, v in sorted(sd.items())}, sd


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    out = os.path.abspath(args.out_dir)
    if os.path.isdir(out):
        for name in ("bert", "bert-mlm", "minilm-st", "vit", "vit-cls", "dinov2"):
            shutil.rmtree(os.path.join(out, name), ignore_errors=True)
    os.makedirs(out, exist_ok=True)
    root_rng = np.random.default_rng(args.seed)
    seeds = root_rng.integers(0, 2**31 - 1, size=8)
    manifest = {"transformers_version_followed": TRANSFORMERS_VERSION_FOLLOWED,
                "transformers_version_installed": transformers.__version__,
                "seed": args.seed, "texts": "texts.txt", "folders": {}}

    with open(os.path.join(out, "texts.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(TEXTS) + "\n")
    vocab_path = os.path.join(out, ".vocab.txt")
    with open(vocab_path, "w", encoding="utf-8") as f:
        f.write("\n".join(VOCAB) + "\n")
    V = len(VOCAB)
    MAXPOS = 64

    # ---------------- bert ----------------
    d = os.path.join(out, "bert")
    os.makedirs(d)
    cfg = BertConfig(vocab_size=V, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=48, max_position_embeddings=MAXPOS, type_vocab_size=2,
                     layer_norm_eps=1e-12, hidden_act="gelu", pad_token_id=0, architectures=["BertModel"])
    cfg.save_pretrained(d)
    bert_sd = bert_state_dict(Gen(np.random.default_rng(seeds[0])), V, 32, 2, 48, MAXPOS, 2, pooler=True)
    save_weights(bert_sd, d)
    write_tokenizer(d, vocab_path, MAXPOS)
    ids, mask, toks = tokenize_reference(vocab_path, d)
    shapes, sd = names_shapes(d)
    cfgd = cfg.to_dict()
    hs_bert, files = text_reference(d, sd, cfgd, ids, mask,
                                    extra=lambda hs: {"pooler_output.npy": bert_pooler(sd, hs[:, -1])})
    manifest["folders"]["bert"] = {"kind": "text", "architecture": "BertModel", "model_type": "bert", "L": 2,
                                   "H": 32, "heads": 4, "intermediate": 48, "vocab_size": V,
                                   "tensors": shapes, "reference": files}
    # padded batch == each text alone (masking check)
    for r in range(len(TEXTS)):
        n = int(mask[r].sum())
        alone = bert_forward(sd, cfgd, ids[r:r + 1, :n], mask[r:r + 1, :n])
        assert np.abs(alone[0] - hs_bert[r, :, :n]).max() < 1e-9
        assert np.abs(masked_mean(alone, mask[r:r + 1, :n])[0] - masked_mean(hs_bert, mask)[r]).max() < 1e-9
    # the additive finfo.min mask is equivalent to -inf (sdpa boolean mask)
    assert np.isfinite(hs_bert).all()

    # ---------------- bert-mlm ----------------
    d = os.path.join(out, "bert-mlm")
    os.makedirs(d)
    cfg_mlm = BertConfig(**{k: v for k, v in cfgd.items() if k not in ("architectures", "transformers_version",
                                                                         "model_type")})
    cfg_mlm.architectures = ["BertForMaskedLM"]
    cfg_mlm.save_pretrained(d)
    g = Gen(np.random.default_rng(seeds[1]))
    mlm_sd = {"bert." + k: v for k, v in bert_sd.items() if not k.startswith("pooler.")}
    mlm_sd["cls.predictions.bias"] = g.b(V)
    g.lin(mlm_sd, "cls.predictions.transform.dense", 32, 32)
    g.ln(mlm_sd, "cls.predictions.transform.LayerNorm", 32)
    save_weights(mlm_sd, d)
    write_tokenizer(d, vocab_path, MAXPOS)
    shapes, sd_full = names_shapes(d)
    enc = strip_prefix(sd_full, "bert.")
    assert set(enc) == set(k for k in bert_sd if not k.startswith("pooler."))
    assert all(np.array_equal(enc[k], bert_sd[k]) for k in enc)
    hs_mlm, files = text_reference(d, enc, cfg_mlm.to_dict(), ids, mask,
                                   extra=lambda hs: {"mlm_logits.npy": bert_mlm_logits(sd_full, cfgd, hs[:, -1])})
    assert np.array_equal(hs_mlm, hs_bert)
    manifest["folders"]["bert-mlm"] = {"kind": "text", "architecture": "BertForMaskedLM", "model_type": "bert",
                                       "L": 2, "H": 32, "heads": 4, "intermediate": 48, "vocab_size": V,
                                       "prefix": "bert.", "tensors": shapes, "reference": files,
                                       "note": "cls.predictions.decoder.weight/bias are tied and not saved"}

    # ---------------- minilm-st ----------------
    d = os.path.join(out, "minilm-st")
    os.makedirs(d)
    cfg_st = BertConfig(vocab_size=V, hidden_size=24, num_hidden_layers=3, num_attention_heads=3,
                        intermediate_size=40, max_position_embeddings=MAXPOS, type_vocab_size=2,
                        layer_norm_eps=1e-12, hidden_act="gelu", pad_token_id=0, architectures=["BertModel"])
    cfg_st.save_pretrained(d)
    save_weights(bert_state_dict(Gen(np.random.default_rng(seeds[2])), V, 24, 3, 40, MAXPOS, 2, pooler=True), d)
    write_tokenizer(d, vocab_path, MAXPOS)
    with open(os.path.join(d, "modules.json"), "w") as f:
        json.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                   {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                   {"idx": 2, "name": "2", "path": "2_Normalize",
                    "type": "sentence_transformers.models.Normalize"}], f, indent=2)
    os.makedirs(os.path.join(d, "1_Pooling"))
    with open(os.path.join(d, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": 24, "pooling_mode_cls_token": False,
                   "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
                   "pooling_mode_mean_sqrt_len_tokens": False, "pooling_mode_weightedmean_tokens": False,
                   "pooling_mode_lasttoken": False, "include_prompt": True}, f, indent=4)
    os.makedirs(os.path.join(d, "2_Normalize"))
    with open(os.path.join(d, "sentence_bert_config.json"), "w") as f:
        json.dump({"max_seq_length": 32, "do_lower_case": False}, f, indent=2)
    with open(os.path.join(d, "config_sentence_transformers.json"), "w") as f:
        json.dump({"__version__": {"sentence_transformers": "3.0.1", "transformers": transformers.__version__,
                                   "pytorch": "2.3.1"},
                   "prompts": {}, "default_prompt_name": None, "similarity_fn_name": "cosine"}, f, indent=2)
    shapes, sd = names_shapes(d)

    def st_extra(hs):
        mean_last = masked_mean(hs, mask)[:, -1]
        emb = mean_last / np.maximum(np.linalg.norm(mean_last, axis=-1, keepdims=True), 1e-12)
        return {"pooler_output.npy": bert_pooler(sd, hs[:, -1]), "sentence_embedding.npy": emb}

    hs_st, files = text_reference(d, sd, cfg_st.to_dict(), ids, mask, extra=st_extra)
    se = np.load(os.path.join(d, "reference", "sentence_embedding.npy"))
    assert np.allclose(np.linalg.norm(se, axis=-1), 1.0, atol=1e-6)
    manifest["folders"]["minilm-st"] = {"kind": "sentence-transformers", "architecture": "BertModel",
                                        "model_type": "bert", "L": 3, "H": 24, "heads": 3, "intermediate": 40,
                                        "vocab_size": V, "pooling": "mean", "normalize": True,
                                        "max_seq_length": 32, "tensors": shapes, "reference": files}
    os.remove(vocab_path)

    # ---------------- vit ----------------
    d = os.path.join(out, "vit")
    os.makedirs(d)
    from transformers import ViTImageProcessor

    vit_kw = dict(image_size=32, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=2,
                  num_attention_heads=4, intermediate_size=48, qkv_bias=True, layer_norm_eps=1e-12,
                  hidden_act="gelu")
    cfg_vit = ViTConfig(**vit_kw, architectures=["ViTModel"])
    cfg_vit.save_pretrained(d)
    vit_sd = vit_state_dict(Gen(np.random.default_rng(seeds[3])), 32, 2, 48, 3, 8, 16, pooler=True)
    save_weights(vit_sd, d)
    ViTImageProcessor(size={"height": 32, "width": 32}, do_resize=True, do_rescale=True, do_normalize=True,
                      image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5]).save_pretrained(d)
    px_vit = np.random.default_rng(seeds[4]).standard_normal((3, 3, 32, 32)).astype(np.float32)
    shapes, sd = names_shapes(d)
    assert np.abs(patch_embed(px_vit, sd["embeddings.patch_embeddings.projection.weight"],
                              sd["embeddings.patch_embeddings.projection.bias"])
                  - patch_embed_loops(px_vit, sd["embeddings.patch_embeddings.projection.weight"],
                                      sd["embeddings.patch_embeddings.projection.bias"])).max() < 1e-9
    hs_vit, last_vit, files = image_reference(
        d, sd, cfg_vit.to_dict(), px_vit, "vit",
        extra=lambda hs, last: {"pooler_output.npy": np.tanh(linear(last[:, 0], sd["pooler.dense.weight"],
                                                                    sd["pooler.dense.bias"]))})
    manifest["folders"]["vit"] = {"kind": "image", "architecture": "ViTModel", "model_type": "vit", "L": 2, "H": 32,
                                  "heads": 4, "intermediate": 48, "image_size": 32, "patch_size": 8,
                                  "input_size": 32, "num_patches": 16, "tensors": shapes, "reference": files}

    # ---------------- vit-cls ----------------
    d = os.path.join(out, "vit-cls")
    os.makedirs(d)
    labels = ["cat", "dog", "bird", "fish", "frog"]
    cfg_cls = ViTConfig(**vit_kw, architectures=["ViTForImageClassification"],
                        id2label={i: n for i, n in enumerate(labels)}, label2id={n: i for i, n in enumerate(labels)})
    cfg_cls.save_pretrained(d)
    g = Gen(np.random.default_rng(seeds[5]))
    cls_sd = {"vit." + k: v for k, v in vit_sd.items() if not k.startswith("pooler.")}
    g.lin(cls_sd, "classifier", 5, 32)
    save_weights(cls_sd, d)
    ViTImageProcessor(size={"height": 32, "width": 32}, do_resize=True, do_rescale=True, do_normalize=True,
                      image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5]).save_pretrained(d)
    shapes, sd_full = names_shapes(d)
    enc = strip_prefix(sd_full, "vit.")
    hs_c, last_c, files = image_reference(
        d, enc, cfg_cls.to_dict(), px_vit, "vit",
        extra=lambda hs, last: {"logits.npy": linear(last[:, 0], sd_full["classifier.weight"],
                                                     sd_full["classifier.bias"])})
    assert np.array_equal(hs_c, hs_vit) and np.array_equal(last_c, last_vit)
    manifest["folders"]["vit-cls"] = {"kind": "image", "architecture": "ViTForImageClassification",
                                      "model_type": "vit", "L": 2, "H": 32, "heads": 4, "intermediate": 48,
                                      "image_size": 32, "patch_size": 8, "input_size": 32, "num_patches": 16,
                                      "prefix": "vit.", "num_labels": 5, "id2label": dict(enumerate(labels)),
                                      "tensors": shapes, "reference": files}

    # ---------------- dinov2 ----------------
    d = os.path.join(out, "dinov2")
    os.makedirs(d)
    from transformers import BitImageProcessor
    from transformers.image_utils import PILImageResampling

    cfg_dino = Dinov2Config(image_size=56, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=2,
                            num_attention_heads=4, mlp_ratio=4, layerscale_value=0.5, use_swiglu_ffn=False,
                            qkv_bias=True, layer_norm_eps=1e-6, hidden_act="gelu", architectures=["Dinov2Model"])
    cfg_dino.save_pretrained(d)
    save_weights(dinov2_state_dict(Gen(np.random.default_rng(seeds[6])), 32, 2, 4, 3, 8, 49), d)
    BitImageProcessor(do_resize=True, size={"shortest_edge": 48}, resample=PILImageResampling.BICUBIC,
                      do_center_crop=True, crop_size={"height": 40, "width": 40}, do_rescale=True,
                      rescale_factor=1 / 255, do_normalize=True, image_mean=[0.485, 0.456, 0.406],
                      image_std=[0.229, 0.224, 0.225], do_convert_rgb=True).save_pretrained(d)
    check_interpolation(np.random.default_rng(seeds[7]))
    shapes, sd = names_shapes(d)
    pos = dinov2_interpolate_pos_encoding(sd["embeddings.position_embeddings"], 5, 5)
    pos_tb = np.concatenate([f64(sd["embeddings.position_embeddings"][:, :1]),
                             bicubic_textbook(sd["embeddings.position_embeddings"][0, 1:].reshape(7, 7, 32)
                                              .transpose(2, 0, 1), 5, 5).transpose(1, 2, 0).reshape(1, 25, 32)], 1)
    assert np.abs(pos - pos_tb).max() < 2e-5
    pos_legacy = dinov2_interpolate_pos_encoding(sd["embeddings.position_embeddings"], 5, 5, legacy_v4=True)
    legacy_diff = float(np.abs(pos_legacy - pos).max())
    px_d = np.random.default_rng(seeds[4] + 1).standard_normal((3, 3, 40, 40)).astype(np.float32)
    hs_d, last_d, files = image_reference(d, sd, cfg_dino.to_dict(), px_d, "dinov2", pos_embed=pos,
                                          extra=lambda hs, last: {"pos_embed_interp.npy": pos[0]})
    manifest["folders"]["dinov2"] = {"kind": "image", "architecture": "Dinov2Model", "model_type": "dinov2", "L": 2,
                                     "H": 32, "heads": 4, "intermediate": 128, "image_size": 56, "patch_size": 8,
                                     "input_size": 40, "num_patches": 25, "stored_pos_grid": [7, 7],
                                     "pos_interp": "bicubic, size=(5,5), align_corners=False, antialias=False",
                                     "max_abs_diff_vs_transformers_4.40_scale_factor_interp": legacy_diff,
                                     "tensors": shapes, "reference": files}

    for name, entry in manifest["folders"].items():
        entry["files"] = list_files(os.path.join(out, name))
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    print(f"wrote {out}: " + ", ".join(manifest["folders"]) + f"; tokens: {toks}")


def forward_pixels(folder, pixels_path, out_path):
    """--forward FOLDER PIXELS.npy OUT.npy: the image model of FOLDER (vit or dinov2, as written
    above) on pixel values [M, 3, S, S] (e.g. an HF image processor's output): writes
    last_hidden_state[:, 0] [M, H] as float32 (the pooled CLS that `prh-native embed` gives)."""
    from safetensors.numpy import load_file
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    sd = load_file(os.path.join(folder, "model.safetensors"))
    for prefix in ("vit.", "dinov2."):
        if any(k.startswith(prefix) for k in sd):
            sd = strip_prefix(sd, prefix)
    px = np.load(pixels_path).astype(np.float32)
    kind = cfg["model_type"]
    pos = None
    if kind == "dinov2":
        p = cfg["patch_size"]
        pos = dinov2_interpolate_pos_encoding(sd["embeddings.position_embeddings"], px.shape[2] // p, px.shape[3] // p)
    _, last = vit_like_forward(sd, cfg, px, kind, pos)
    np.save(out_path, np.asarray(last[:, 0], dtype=np.float32))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--forward":
        forward_pixels(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        main()
