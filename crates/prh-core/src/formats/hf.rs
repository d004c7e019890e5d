//! A Hugging Face checkpoint folder as published: `config.json` (the architecture),
//! `model.safetensors` (the weights), and for sentence-transformers folders `modules.json`
//! with `1_Pooling/config.json`. The tokenizer (`tokenizer.json`) is read by
//! [`crate::text::tokenizer`] and the image processor (`preprocessor_config.json`) by
//! [`crate::formats::image`].
//!
//! This module only parses and checks: which architecture, which sizes, which tensors with
//! which shapes. The burn models built from it live in `models::hf`. Everything takes
//! bytes or text, so the browser's checkpoint lab reads the same files.
//!
//! Supported `model_type`s: `bert` (BERT, MiniLM and the sentence-transformers models built
//! on them), `vit` and `dinov2`. Anything else is refused by name.

use crate::formats::tensors::floats;
use crate::{Error, Result};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The activation of the feed-forward blocks (`hidden_act`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HiddenAct {
    /// `"gelu"`: the exact GELU, `x Phi(x) = x (1 + erf(x / sqrt 2)) / 2`.
    Gelu,
    /// `"relu"`: `max(x, 0)`.
    Relu,
}

/// A BERT encoder (`model_type = "bert"`): post-LN transformer over word + absolute
/// position + token-type embeddings (Devlin et al. 2019; HF `BertModel`).
#[derive(Debug, Clone, PartialEq)]
pub struct BertConfig {
    /// Vocabulary size V (rows of `embeddings.word_embeddings.weight`).
    pub vocab_size: usize,
    /// Width H.
    pub hidden_size: usize,
    /// Transformer layers L.
    pub num_layers: usize,
    /// Attention heads (H must be a multiple).
    pub num_heads: usize,
    /// Feed-forward width.
    pub intermediate_size: usize,
    /// Position embeddings, the longest input in tokens.
    pub max_positions: usize,
    /// Token-type (segment) embeddings.
    pub type_vocab_size: usize,
    /// LayerNorm epsilon.
    pub layer_norm_eps: f64,
    /// Feed-forward activation.
    pub act: HiddenAct,
}

/// A vision transformer: HF `ViTModel` (`model_type = "vit"`, Dosovitskiy et al. 2021) or
/// `Dinov2Model` (`"dinov2"`, Oquab et al. 2023: layer scale, and position embeddings
/// interpolated to the input's patch grid).
#[derive(Debug, Clone, PartialEq)]
pub struct VitConfig {
    /// Which layout: ViT (post-`layernorm_before/after` names) or DINOv2.
    pub kind: VitKind,
    /// Width H.
    pub hidden_size: usize,
    /// Transformer layers L.
    pub num_layers: usize,
    /// Attention heads.
    pub num_heads: usize,
    /// Feed-forward width (DINOv2: `hidden_size * mlp_ratio`).
    pub intermediate_size: usize,
    /// The training image side S (the stored position grid is `(S / P)^2`).
    pub image_size: usize,
    /// Patch side P.
    pub patch_size: usize,
    /// Input channels C.
    pub num_channels: usize,
    /// Whether query, key and value have biases.
    pub qkv_bias: bool,
    /// LayerNorm epsilon.
    pub layer_norm_eps: f64,
    /// Feed-forward activation.
    pub act: HiddenAct,
}

/// The two vision-transformer layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VitKind {
    /// HF `ViTModel`.
    Vit,
    /// HF `Dinov2Model`.
    Dinov2,
}

/// The architecture a `config.json` describes.
#[derive(Debug, Clone, PartialEq)]
pub enum HfConfig {
    /// A BERT-family text encoder.
    Bert(BertConfig),
    /// A ViT-family image encoder.
    Vit(VitConfig),
}

fn get<'a>(source: &str, v: &'a Value, key: &str) -> Result<&'a Value> {
    v.get(key)
        .ok_or_else(|| Error::format(source, key, "missing: expected it in a config.json"))
}

fn positive(source: &str, v: &Value, key: &str) -> Result<usize> {
    match get(source, v, key)?.as_u64() {
        Some(n) if (1..=1 << 24).contains(&n) => Ok(n as usize),
        _ => Err(Error::format(
            source,
            key,
            format!("{}: expected an integer from 1 to 2^24", v[key]),
        )),
    }
}

fn positive_or(source: &str, v: &Value, key: &str, default: usize) -> Result<usize> {
    if v.get(key).is_none_or(Value::is_null) {
        Ok(default)
    } else {
        positive(source, v, key)
    }
}

fn float_or(source: &str, v: &Value, key: &str, default: f64) -> Result<f64> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(x) => x
            .as_f64()
            .filter(|f| f.is_finite() && *f > 0.0)
            .ok_or_else(|| Error::format(source, key, format!("{x}: expected a positive number"))),
    }
}

fn bool_or(source: &str, v: &Value, key: &str, default: bool) -> Result<bool> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(x) => x
            .as_bool()
            .ok_or_else(|| Error::format(source, key, format!("{x}: expected true or false"))),
    }
}

fn act(source: &str, v: &Value) -> Result<HiddenAct> {
    match v
        .get("hidden_act")
        .and_then(Value::as_str)
        .unwrap_or("gelu")
    {
        "gelu" => Ok(HiddenAct::Gelu),
        "relu" => Ok(HiddenAct::Relu),
        other => Err(Error::format(
            source,
            "hidden_act",
            format!(
                "`{other}` is not supported: expected \"gelu\" (exact, erf) or \"relu\" \
                 (a tanh-approximated GELU would silently change every activation)"
            ),
        )),
    }
}

impl HfConfig {
    /// Parses a `config.json` (`source` names it in errors) and checks that its sizes are
    /// consistent (width divisible by the heads, image divisible by the patch).
    pub fn from_json(source: &str, text: &str) -> Result<Self> {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| Error::format(source, "config.json", format!("not valid JSON: {e}")))?;
        if !v.is_object() {
            return Err(Error::format(
                source,
                "config.json",
                "expected a JSON object",
            ));
        }
        let model_type = get(source, &v, "model_type")?
            .as_str()
            .ok_or_else(|| Error::format(source, "model_type", "expected a string"))?;
        let cfg = match model_type {
            "bert" => {
                let pet = v
                    .get("position_embedding_type")
                    .and_then(Value::as_str)
                    .unwrap_or("absolute");
                if pet != "absolute" {
                    return Err(Error::format(
                        source,
                        "position_embedding_type",
                        format!("`{pet}` is not supported: expected \"absolute\""),
                    ));
                }
                if bool_or(source, &v, "is_decoder", false)? {
                    return Err(Error::format(
                        source,
                        "is_decoder",
                        "true: expected an encoder (bidirectional attention)",
                    ));
                }
                HfConfig::Bert(BertConfig {
                    vocab_size: positive(source, &v, "vocab_size")?,
                    hidden_size: positive(source, &v, "hidden_size")?,
                    num_layers: positive(source, &v, "num_hidden_layers")?,
                    num_heads: positive(source, &v, "num_attention_heads")?,
                    intermediate_size: positive(source, &v, "intermediate_size")?,
                    max_positions: positive_or(source, &v, "max_position_embeddings", 512)?,
                    type_vocab_size: positive_or(source, &v, "type_vocab_size", 2)?,
                    layer_norm_eps: float_or(source, &v, "layer_norm_eps", 1e-12)?,
                    act: act(source, &v)?,
                })
            }
            "vit" | "dinov2" => {
                let kind = if model_type == "vit" {
                    VitKind::Vit
                } else {
                    VitKind::Dinov2
                };
                let hidden_size = positive(source, &v, "hidden_size")?;
                let intermediate_size = match kind {
                    VitKind::Vit => positive(source, &v, "intermediate_size")?,
                    VitKind::Dinov2 => {
                        if bool_or(source, &v, "use_swiglu_ffn", false)? {
                            return Err(Error::format(
                                source,
                                "use_swiglu_ffn",
                                "true (the SwiGLU feed-forward of DINOv2 giant) is not \
                                 supported: expected false",
                            ));
                        }
                        let ratio = float_or(source, &v, "mlp_ratio", 4.0)?;
                        (hidden_size as f64 * ratio) as usize
                    }
                };
                let eps_default = if kind == VitKind::Vit { 1e-12 } else { 1e-6 };
                HfConfig::Vit(VitConfig {
                    kind,
                    hidden_size,
                    num_layers: positive(source, &v, "num_hidden_layers")?,
                    num_heads: positive(source, &v, "num_attention_heads")?,
                    intermediate_size,
                    image_size: positive_or(source, &v, "image_size", 224)?,
                    patch_size: positive_or(source, &v, "patch_size", 16)?,
                    num_channels: positive_or(source, &v, "num_channels", 3)?,
                    qkv_bias: bool_or(source, &v, "qkv_bias", true)?,
                    layer_norm_eps: float_or(source, &v, "layer_norm_eps", eps_default)?,
                    act: act(source, &v)?,
                })
            }
            other => {
                return Err(Error::format(
                    source,
                    "model_type",
                    format!(
                        "`{other}` is not supported: expected \"bert\" (BERT, MiniLM, \
                         sentence-transformers on BERT), \"vit\" or \"dinov2\""
                    ),
                ));
            }
        };
        let (h, heads) = cfg.width_heads();
        if h % heads != 0 {
            return Err(Error::format(
                source,
                "num_attention_heads",
                format!("{heads} does not divide hidden_size {h}"),
            ));
        }
        if let HfConfig::Vit(c) = &cfg
            && c.image_size % c.patch_size != 0
        {
            return Err(Error::format(
                source,
                "patch_size",
                format!(
                    "{} does not divide image_size {}",
                    c.patch_size, c.image_size
                ),
            ));
        }
        Ok(cfg)
    }

    fn width_heads(&self) -> (usize, usize) {
        match self {
            HfConfig::Bert(c) => (c.hidden_size, c.num_heads),
            HfConfig::Vit(c) => (c.hidden_size, c.num_heads),
        }
    }

    /// Width H of every hidden state.
    pub fn hidden_size(&self) -> usize {
        self.width_heads().0
    }

    /// Transformer layers L (the model has L + 1 hidden states: the embeddings' output,
    /// then one per layer).
    pub fn num_layers(&self) -> usize {
        match self {
            HfConfig::Bert(c) => c.num_layers,
            HfConfig::Vit(c) => c.num_layers,
        }
    }
}

/// How a sentence-transformers folder pools token states into one vector
/// (`1_Pooling/config.json`), and whether a `Normalize` module follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentencePooling {
    /// Mean over the attention mask (`pooling_mode_mean_tokens`), else the first token
    /// (`pooling_mode_cls_token`).
    pub mean: bool,
    /// A `sentence_transformers.models.Normalize` module: L2-normalise the result.
    pub normalize: bool,
}

impl SentencePooling {
    /// Reads `modules.json` and the pooling module's `config.json` (`read` returns a file
    /// of the folder by its relative path, or `None` when absent). `Ok(None)`: not a
    /// sentence-transformers folder.
    pub fn from_folder(
        folder: &str,
        read: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>> {
        let Some(modules) = read("modules.json") else {
            return Ok(None);
        };
        let src = format!("{folder}/modules.json");
        let list: Vec<Value> = serde_json::from_str(&modules)
            .map_err(|e| Error::format(&src, "modules.json", format!("expected a list: {e}")))?;
        let mut pooling = None;
        let mut normalize = false;
        for (i, m) in list.iter().enumerate() {
            let kind = m.get("type").and_then(Value::as_str).unwrap_or("");
            let path = m.get("path").and_then(Value::as_str).unwrap_or("");
            match kind.rsplit('.').next().unwrap_or("") {
                "Transformer" if path.is_empty() => {}
                "Pooling" => pooling = Some(path.to_string()),
                "Normalize" => normalize = true,
                _ => {
                    return Err(Error::format(
                        &src,
                        format!("[{i}].type"),
                        format!(
                            "`{kind}` (path `{path}`) is not supported: expected a Transformer \
                             at the folder's root, then Pooling, then optionally Normalize"
                        ),
                    ));
                }
            }
        }
        let Some(pool_dir) = pooling else {
            return Err(Error::format(
                &src,
                "type",
                "no Pooling module: expected one",
            ));
        };
        let psrc = format!("{folder}/{pool_dir}/config.json");
        let text = read(&format!("{pool_dir}/config.json"))
            .ok_or_else(|| Error::format(&psrc, "config.json", "missing"))?;
        let p: Value = serde_json::from_str(&text)
            .map_err(|e| Error::format(&psrc, "config.json", format!("not valid JSON: {e}")))?;
        let flag = |k: &str| p.get(k).and_then(Value::as_bool).unwrap_or(false);
        let modes: Vec<&str> = [
            "pooling_mode_cls_token",
            "pooling_mode_mean_tokens",
            "pooling_mode_max_tokens",
            "pooling_mode_mean_sqrt_len_tokens",
            "pooling_mode_weightedmean_tokens",
            "pooling_mode_lasttoken",
        ]
        .into_iter()
        .filter(|k| flag(k))
        .collect();
        match modes.as_slice() {
            ["pooling_mode_mean_tokens"] => Ok(Some(Self {
                mean: true,
                normalize,
            })),
            ["pooling_mode_cls_token"] => Ok(Some(Self {
                mean: false,
                normalize,
            })),
            other => Err(Error::format(
                &psrc,
                "pooling_mode_*",
                format!(
                    "{other:?}: expected exactly one of pooling_mode_mean_tokens and \
                     pooling_mode_cls_token"
                ),
            )),
        }
    }
}

/// The tensors of a `model.safetensors`, as f32, taken one by one by name with their shape
/// checked; [`TensorTable::finish`] then refuses any tensor nobody took (a weight the model
/// does not know must never be dropped silently).
pub struct TensorTable {
    source: String,
    /// Name prefix the model's tensors carry (`"bert."` in a `BertForMaskedLM`, `""` in a
    /// `BertModel`).
    prefix: String,
    tensors: BTreeMap<String, (Vec<usize>, Vec<f32>)>,
    taken: BTreeSet<String>,
}

impl TensorTable {
    /// Reads every tensor of a safetensors file (F32, F16, BF16 or F64, converted to f32).
    pub fn from_bytes(source: &str, bytes: &[u8]) -> Result<Self> {
        use safetensors::Dtype;
        let st = safetensors::SafeTensors::deserialize(bytes)
            .map_err(|e| Error::format(source, "header", e.to_string()))?;
        let mut tensors = BTreeMap::new();
        for (name, view) in st.tensors() {
            let data: Vec<f32> = match view.dtype() {
                // Integer buffers (`position_ids`) are not weights; keep their shape only.
                Dtype::I64 | Dtype::I32 => Vec::new(),
                // Rounding the exact f64 to f32 is the one rounding a direct cast makes.
                _ => floats(source, &name, &view)?
                    .into_iter()
                    .map(|x| x as f32)
                    .collect(),
            };
            tensors.insert(name, (view.shape().to_vec(), data));
        }
        Ok(Self {
            source: source.to_string(),
            prefix: String::new(),
            tensors,
            taken: BTreeSet::new(),
        })
    }

    /// The file the tensors came from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Uses `prefix` when `probe` (a tensor every checkpoint of the architecture has) is
    /// stored under it: heads add one (`bert.`, `vit.`), bare models do not.
    pub fn detect_prefix(&mut self, probe: &str, prefixes: &[&str]) -> Result<()> {
        for p in std::iter::once(&"").chain(prefixes) {
            if self.tensors.contains_key(&format!("{p}{probe}")) {
                self.prefix = p.to_string();
                return Ok(());
            }
        }
        Err(Error::format(
            &self.source,
            probe,
            format!(
                "missing (also under the prefixes {prefixes:?}): expected the weights of the \
                 architecture config.json names; the file holds {} tensors, e.g. {:?}",
                self.tensors.len(),
                self.tensors.keys().take(3).collect::<Vec<_>>()
            ),
        ))
    }

    /// The detected name prefix (`""`, `"bert."`...).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Whether the tensor `name` (under the detected prefix) exists.
    pub fn has(&self, name: &str) -> bool {
        self.tensors.contains_key(&format!("{}{name}", self.prefix))
    }

    /// Takes the tensor `name` (under the detected prefix), checking it has `shape`.
    ///
    /// # Shapes
    /// returns the row-major values of `shape` (PyTorch's layout, e.g. `[out, in]` for a
    /// linear weight).
    pub fn take(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
        let full = format!("{}{name}", self.prefix);
        let Some((got, data)) = self.tensors.get_mut(&full) else {
            return Err(Error::format(
                &self.source,
                &full,
                format!("missing: expected a tensor of shape {shape:?}"),
            ));
        };
        if got.as_slice() != shape || data.len() != shape.iter().product::<usize>() {
            return Err(Error::format(
                &self.source,
                &full,
                format!("shape {got:?}: expected {shape:?} (from config.json)"),
            ));
        }
        self.taken.insert(full);
        Ok(std::mem::take(data))
    }

    /// Marks every tensor whose name starts with one of `prefixes` (under no detected
    /// prefix: heads such as `cls.` or `classifier.` sit beside it) as known but unused.
    pub fn ignore(&mut self, prefixes: &[&str]) {
        let names: Vec<String> = self
            .tensors
            .keys()
            .filter(|k| prefixes.iter().any(|p| k.starts_with(p)))
            .cloned()
            .collect();
        self.taken.extend(names);
    }

    /// Refuses the file when a tensor was neither taken nor ignored.
    pub fn finish(self) -> Result<()> {
        let left: Vec<&String> = self
            .tensors
            .keys()
            .filter(|k| !self.taken.contains(*k))
            .collect();
        if left.is_empty() {
            return Ok(());
        }
        Err(Error::format(
            &self.source,
            left[0].as_str(),
            format!(
                "{} tensor(s) this architecture does not have, e.g. {:?}: the checkpoint \
                 does not match its config.json (refused rather than loaded partly)",
                left.len(),
                left.iter().take(5).collect::<Vec<_>>()
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bert_config_and_refusals() {
        let ok = r#"{"model_type":"bert","vocab_size":30,"hidden_size":8,"num_hidden_layers":2,
            "num_attention_heads":2,"intermediate_size":16,"hidden_act":"gelu"}"#;
        let HfConfig::Bert(c) = HfConfig::from_json("c.json", ok).unwrap() else {
            panic!("bert")
        };
        assert_eq!((c.max_positions, c.type_vocab_size), (512, 2));
        assert_eq!(c.layer_norm_eps, 1e-12);
        let bad = |text: &str, field: &str| {
            let e = HfConfig::from_json("c.json", text).unwrap_err().to_string();
            assert!(e.contains("c.json") && e.contains(field), "{e}");
        };
        bad(&ok.replace("\"bert\"", "\"gpt2\""), "model_type");
        bad(&ok.replace("\"gelu\"", "\"gelu_new\""), "hidden_act");
        bad(
            &ok.replace("\"num_attention_heads\":2", "\"num_attention_heads\":3"),
            "num_attention_heads",
        );
        bad(
            &ok.replace("\"hidden_size\":8", "\"hidden_size\":-1"),
            "hidden_size",
        );
        bad(&ok.replace("\"vocab_size\":30,", ""), "vocab_size");
        bad("[1]", "config.json");
    }

    #[test]
    fn table_checks_names_and_shapes() {
        use safetensors::{Dtype, tensor::TensorView};
        let w: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let b: Vec<u8> = [0.5f32, 0.25]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let bytes = safetensors::serialize(
            vec![
                (
                    "bert.a.weight",
                    TensorView::new(Dtype::F32, vec![2, 3], &w).unwrap(),
                ),
                (
                    "cls.bias",
                    TensorView::new(Dtype::F32, vec![2], &b).unwrap(),
                ),
                (
                    "bert.extra",
                    TensorView::new(Dtype::F32, vec![2], &b).unwrap(),
                ),
            ],
            None,
        )
        .unwrap();
        let mut t = TensorTable::from_bytes("m.safetensors", &bytes).unwrap();
        t.detect_prefix("a.weight", &["bert."]).unwrap();
        let e = t.take("a.weight", &[3, 2]).unwrap_err().to_string();
        assert!(e.contains("bert.a.weight") && e.contains("[2, 3]"), "{e}");
        assert_eq!(t.take("a.weight", &[2, 3]).unwrap()[5], 6.0);
        t.ignore(&["cls."]);
        let e = t.finish().unwrap_err().to_string();
        assert!(
            e.contains("bert.extra") && e.contains("m.safetensors"),
            "{e}"
        );
    }
}
