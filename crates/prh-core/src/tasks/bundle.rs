//! The exported text-encoder bundle the web app loads: one `.safetensors` file.
//!
//! - tensors: every float parameter of the [`TextEncoder`], f32, named by its module
//!   path (`blocks.layers.0.mha.query.weight`, ...), so the file is readable by any
//!   safetensors tool;
//! - metadata (`__metadata__`): `format = "prh-text-encoder"`, `version = "1"`,
//!   `spec` (the [`EncoderSpec`] as JSON), `tokenizer` (the whole `tokenizer.json`), and
//!   `config` (the run's resolved TOML, for provenance).
//!
//! Everything is bytes in, bytes out ([`write_bundle`], [`read_bundle`]), so the browser
//! loads a bundle without a file system. Written by hand on top of the `safetensors`
//! crate because burn-store's safetensors support would add a dependency with native-only
//! features; the module visitor/mapper below is all it takes.

use std::collections::HashMap;

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::prelude::*;
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};

use crate::models::text_encoder::{EncoderSpec, TextEncoder};
use crate::text::tokenizer::TextTokenizer;
use crate::{Error, Result};

/// Bundle format name stored in the metadata.
pub const BUNDLE_FORMAT: &str = "prh-text-encoder";
/// Bundle format version stored in the metadata.
pub const BUNDLE_VERSION: &str = "1";

/// Collects `(path, shape, f32 values)` of every float parameter.
struct Collect {
    path: Vec<String>,
    out: Vec<(String, Vec<usize>, Vec<f32>)>,
}

impl<B: Backend> ModuleVisitor<B> for Collect {
    fn enter_module(&mut self, name: &str, _container_type: &str) {
        self.path.push(name.to_string());
    }
    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.pop();
    }
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        let t = param.val();
        let shape = t.dims().to_vec();
        let values: Vec<f32> = t.into_data().iter::<f32>().collect();
        self.out.push((self.path.join("."), shape, values));
    }
}

/// Replaces every float parameter by the tensor of the same path.
struct Load<'a, B: Backend> {
    path: Vec<String>,
    tensors: &'a HashMap<String, (Vec<usize>, Vec<f32>)>,
    device: B::Device,
    errors: Vec<String>,
    loaded: usize,
}

impl<B: Backend> ModuleMapper<B> for Load<'_, B> {
    fn enter_module(&mut self, name: &str, _container_type: &str) {
        self.path.push(name.to_string());
    }
    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.pop();
    }
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<B, D>>) -> Param<Tensor<B, D>> {
        let name = self.path.join(".");
        let (id, tensor, mapper) = param.consume();
        let value = match self.tensors.get(&name) {
            Some((shape, v)) if shape.as_slice() == tensor.dims().as_slice() => {
                self.loaded += 1;
                Tensor::from_data(TensorData::new(v.clone(), shape.clone()), &self.device)
            }
            Some((shape, _)) => {
                self.errors.push(format!(
                    "{name}: shape {shape:?}, model expects {:?}",
                    tensor.dims()
                ));
                tensor
            }
            None => {
                self.errors.push(format!("{name}: missing"));
                tensor
            }
        };
        Param::from_mapped_value(id, value, mapper)
    }
}

/// Serialises `model` with its spec, tokenizer and config into bundle bytes.
pub fn write_bundle<B: Backend>(
    model: &TextEncoder<B>,
    spec: &EncoderSpec,
    tokenizer: &TextTokenizer,
    config_toml: &str,
) -> Result<Vec<u8>> {
    let mut c = Collect {
        path: Vec::new(),
        out: Vec::new(),
    };
    model.visit(&mut c);
    let bytes: Vec<(String, Vec<usize>, Vec<u8>)> = c
        .out
        .into_iter()
        .map(|(n, s, v)| (n, s, v.iter().flat_map(|x| x.to_le_bytes()).collect()))
        .collect();
    let views = bytes
        .iter()
        .map(|(n, s, b)| Ok((n.clone(), TensorView::new(Dtype::F32, s.clone(), b)?)))
        .collect::<std::result::Result<Vec<_>, safetensors::SafeTensorError>>()
        .map_err(|e| Error::invalid(format!("bundle tensors: {e}")))?;
    let spec_json =
        serde_json::to_string(spec).map_err(|e| Error::invalid(format!("bundle spec: {e}")))?;
    let meta = HashMap::from([
        ("format".to_string(), BUNDLE_FORMAT.to_string()),
        ("version".to_string(), BUNDLE_VERSION.to_string()),
        ("spec".to_string(), spec_json),
        ("tokenizer".to_string(), tokenizer.to_json()?),
        ("config".to_string(), config_toml.to_string()),
    ]);
    safetensors::serialize(views, Some(meta)).map_err(|e| Error::invalid(format!("bundle: {e}")))
}

/// A lower bound on the parameters of an encoder of `spec`: token and position
/// embeddings plus, per layer, attention (`4 d^2`) and feed-forward (`2 d d_ff`) weights
/// (biases and norms left out); `None` when it overflows.
fn min_params(spec: &EncoderSpec) -> Option<usize> {
    let d = spec.d_model;
    let embeddings = spec.vocab.checked_add(spec.max_len)?.checked_mul(d)?;
    let per_layer = d
        .checked_mul(d)?
        .checked_mul(4)?
        .checked_add(d.checked_mul(spec.d_ff)?.checked_mul(2)?)?;
    embeddings.checked_add(per_layer.checked_mul(spec.layers)?)
}

/// A loaded bundle.
pub struct Bundle<B: Backend> {
    /// The encoder, ready to embed.
    pub model: TextEncoder<B>,
    /// Its architecture.
    pub spec: EncoderSpec,
    /// Its tokenizer.
    pub tokenizer: TextTokenizer,
    /// The training run's resolved config (TOML).
    pub config: String,
}

/// Loads bundle bytes (`source` names them in errors), checking format, version, and
/// that every parameter is present with the right shape.
pub fn read_bundle<B: Backend>(
    source: &str,
    bytes: &[u8],
    device: &B::Device,
) -> Result<Bundle<B>> {
    let (_, header) = SafeTensors::read_metadata(bytes)
        .map_err(|e| Error::format(source, "safetensors", e.to_string()))?;
    let meta = header.metadata().clone().unwrap_or_default();
    let get = |k: &str| {
        meta.get(k)
            .cloned()
            .ok_or_else(|| Error::format(source, format!("__metadata__.{k}"), "missing"))
    };
    if get("format")? != BUNDLE_FORMAT {
        return Err(Error::format(
            source,
            "__metadata__.format",
            format!("expected {BUNDLE_FORMAT}"),
        ));
    }
    let version = get("version")?;
    if version != BUNDLE_VERSION {
        return Err(Error::format(
            source,
            "__metadata__.version",
            format!("expected {BUNDLE_VERSION}, got {version}"),
        ));
    }
    let spec: EncoderSpec = serde_json::from_str(&get("spec")?)
        .map_err(|e| Error::format(source, "__metadata__.spec", e.to_string()))?;
    let tok_json = get("tokenizer")?;
    // tokenizers 0.23.2 panics (`expect("Helper")`, decoders/mod.rs:90) on a JSON syntax
    // error inside the `decoder` object (found by the `bundle` fuzz target): check the
    // syntax first so a corrupted bundle is an error, not a crash of the page.
    serde_json::from_str::<serde::de::IgnoredAny>(&tok_json)
        .map_err(|e| Error::format(source, "__metadata__.tokenizer", e.to_string()))?;
    let tokenizer =
        TextTokenizer::from_bytes(&format!("{source} (tokenizer)"), tok_json.as_bytes())?;
    let st = SafeTensors::deserialize(bytes)
        .map_err(|e| Error::format(source, "safetensors", e.to_string()))?;
    let mut tensors = HashMap::new();
    for (name, view) in st.tensors() {
        if view.dtype() != Dtype::F32 {
            return Err(Error::format(
                source,
                &name,
                format!("expected F32, got {:?}", view.dtype()),
            ));
        }
        let v: Vec<f32> = view
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        tensors.insert(name, (view.shape().to_vec(), v));
    }
    // The spec comes from the file: before building a model from it, check that the
    // file can hold its weights, so a corrupted spec cannot ask for terabytes.
    // burn's layer configs panic on out-of-range values (dropout 5 was found by the
    // `bundle` fuzz target), so range-check what they take.
    if !(0.0..1.0).contains(&spec.dropout) || spec.d_model == 0 || spec.d_ff == 0 {
        return Err(Error::format(
            source,
            "__metadata__.spec",
            format!("{spec:?}: expected 0 <= dropout < 1 and d_model, d_ff >= 1"),
        ));
    }
    let stored: usize = tensors.values().map(|(_, v)| v.len()).sum();
    match min_params(&spec) {
        Some(p) if p <= stored => {}
        need => {
            return Err(Error::format(
                source,
                "__metadata__.spec",
                format!(
                    "{spec:?} needs at least {} parameters, the file stores {stored}",
                    need.map_or("2^64 or more".to_string(), |p| p.to_string())
                ),
            ));
        }
    }
    let fresh = spec.init::<B>(device)?;
    let mut load = Load {
        path: Vec::new(),
        tensors: &tensors,
        device: device.clone(),
        errors: Vec::new(),
        loaded: 0,
    };
    let model = fresh.map(&mut load);
    if !load.errors.is_empty() {
        return Err(Error::format(source, "tensors", load.errors.join("; ")));
    }
    if load.loaded != tensors.len() {
        return Err(Error::format(
            source,
            "tensors",
            format!(
                "{} tensors in file, {} used by the model",
                tensors.len(),
                load.loaded
            ),
        ));
    }
    Ok(Bundle {
        model,
        spec,
        tokenizer,
        config: get("config").unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::text::embed_texts;
    use crate::text::tokenizer::TokenizerConfig;
    use burn::backend::NdArray;

    #[test]
    fn bundle_round_trip_gives_identical_embeddings() {
        let texts: Vec<String> = ["a dog runs", "two cats sleep on a mat", "a red bus"]
            .map(String::from)
            .to_vec();
        let tcfg = TokenizerConfig {
            vocab_size: 60,
            min_frequency: 1,
            ..TokenizerConfig::default()
        };
        let tok = TextTokenizer::train(texts.iter().map(String::as_str), &tcfg).unwrap();
        let spec = EncoderSpec {
            vocab: tok.vocab_size(),
            d_model: 16,
            layers: 1,
            heads: 2,
            d_ff: 32,
            max_len: 10,
            cls_pooling: false,
            projector_dim: 4,
            dropout: 0.0,
            causal: true,
        };
        let device = Default::default();
        let model: TextEncoder<NdArray> = spec.init(&device).unwrap();
        let before = embed_texts(&model, &spec, &tok, &texts, 8, &device).unwrap();
        let bytes = write_bundle(&model, &spec, &tok, "[run]\n").unwrap();
        let b = read_bundle::<NdArray>("m.safetensors", &bytes, &device).unwrap();
        assert_eq!(b.spec, spec);
        let after = embed_texts(&b.model, &b.spec, &b.tokenizer, &texts, 8, &device).unwrap();
        assert_eq!(before, after);
        // A truncated file is refused with its name.
        let e = read_bundle::<NdArray>("m.safetensors", &bytes[..bytes.len() / 2], &device)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("m.safetensors"), "{e}");
    }
}
