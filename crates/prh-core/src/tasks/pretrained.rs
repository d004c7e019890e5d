//! Pretrained encoders in, no Python: a Hugging Face checkpoint folder as published
//! (`config.json`, `model.safetensors`, and `tokenizer.json` for text or
//! `preprocessor_config.json` for images; sentence-transformers folders add `modules.json`
//! and `1_Pooling/config.json`) becomes an encoder that embeds texts or images into the
//! files prh measures (paper §5: the representations whose alignment is compared).
//!
//! Two outputs, as the platonic-rep benchmark uses them:
//! - [`Pretrained::embed`]: one vector per input `[N, H]`, the pooled last hidden state
//!   (after the final layer norm for ViT / DINOv2, as HF's `last_hidden_state`; L2-normalised
//!   when a sentence-transformers `Normalize` module says so) — what `SentenceTransformer.
//!   encode` or HF's pooled CLS gives;
//! - [`Pretrained::features`]: `[N, L + 1, H]`, every hidden state pooled (HF's
//!   `output_hidden_states`: the embeddings' output, then each layer's), the input of the
//!   layer search in `prh-native metrics`.
//!
//! Pooling: text — the mean over real tokens `sum_t m_t h_t / sum_t m_t` (the default, and
//! what sentence-transformers' mean pooling computes) or the first (`[CLS]`) token; images
//! — the CLS token (the default) or the mean over patch tokens.
//!
//! Everything reads bytes ([`PretrainedFiles`]), so the browser's checkpoint lab loads the
//! same folders; [`PretrainedFiles::read_dir`] is the native wrapper.

use burn::prelude::*;
use std::collections::BTreeMap;

use crate::formats::features::Features;
use crate::formats::hf::{HfConfig, SentencePooling, TensorTable};
use crate::formats::image::ImageProcessor;
use crate::models::hf::{HfBert, HfVit};
use crate::models::text_encoder::Pooling;
use crate::progress::{OnTick, tick};
use crate::text::tokenizer::TextTokenizer;
use crate::{Error, Result};

/// The files of one checkpoint folder, by path relative to it.
#[derive(Debug, Clone, Default)]
pub struct PretrainedFiles {
    /// The folder's name, for error messages.
    pub folder: String,
    /// Relative path -> bytes.
    pub files: BTreeMap<String, Vec<u8>>,
}

/// The files a checkpoint folder may hold that [`Pretrained`] reads.
pub const KNOWN_FILES: [&str; 7] = [
    "config.json",
    "model.safetensors",
    "tokenizer.json",
    "preprocessor_config.json",
    "modules.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
];

impl PretrainedFiles {
    /// Reads the files of [`KNOWN_FILES`] that exist in `dir` (and the pooling module
    /// `modules.json` names, if it is not `1_Pooling`).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read_dir(dir: &std::path::Path) -> Result<Self> {
        if !dir.is_dir() {
            return Err(Error::format(
                dir,
                "folder",
                "not a folder: expected a Hugging Face checkpoint folder (config.json, \
                 model.safetensors, tokenizer.json or preprocessor_config.json)",
            ));
        }
        let mut files = BTreeMap::new();
        let mut wanted: Vec<String> = KNOWN_FILES.iter().map(|s| s.to_string()).collect();
        if let Ok(m) = std::fs::read_to_string(dir.join("modules.json"))
            && let Ok(list) = serde_json::from_str::<Vec<serde_json::Value>>(&m)
        {
            for module in list {
                if let Some(p) = module.get("path").and_then(|p| p.as_str())
                    && !p.is_empty()
                {
                    wanted.push(format!("{p}/config.json"));
                }
            }
        }
        for rel in wanted {
            let path = dir.join(&rel);
            if path.is_file() {
                let bytes = std::fs::read(&path).map_err(|e| Error::Io {
                    path: path.clone(),
                    source: e,
                })?;
                files.insert(rel, bytes);
            }
        }
        Ok(Self {
            folder: dir.display().to_string(),
            files,
        })
    }

    fn text(&self, rel: &str) -> Result<Option<String>> {
        match self.files.get(rel) {
            None => Ok(None),
            Some(b) => String::from_utf8(b.clone())
                .map(Some)
                .map_err(|_| Error::format(self.path(rel), rel, "not UTF-8 text: expected JSON")),
        }
    }

    fn path(&self, rel: &str) -> String {
        format!("{}/{rel}", self.folder)
    }

    fn need(&self, rel: &str, why: &str) -> Result<&[u8]> {
        self.files.get(rel).map(Vec::as_slice).ok_or_else(|| {
            let hint = if rel == "model.safetensors" {
                " (pytorch_model.bin is a Python pickle and is not read; sharded \
                 model-0000x-of-0000y files are not supported)"
            } else {
                ""
            };
            Error::format(
                self.path(rel),
                rel,
                format!("missing: expected it {why}{hint}"),
            )
        })
    }
}

/// A pretrained text encoder (BERT family) with its tokenizer.
pub struct PretrainedText<B: Backend> {
    model: HfBert<B>,
    tokenizer: TextTokenizer,
    /// How [`Pretrained::embed`] and [`Pretrained::features`] pool tokens.
    pub pooling: Pooling,
    /// L2-normalise [`Pretrained::embed`]'s vectors (a sentence-transformers `Normalize`).
    pub normalize: bool,
    /// Longest input in tokens, special tokens included (longer texts are truncated).
    pub max_len: usize,
}

/// A pretrained image encoder (ViT or DINOv2) with its image processor.
pub struct PretrainedImage<B: Backend> {
    model: HfVit<B>,
    processor: ImageProcessor,
    /// How the CLS / patch states are pooled.
    pub pooling: Pooling,
}

/// An encoder loaded from a checkpoint folder.
pub enum Pretrained<B: Backend> {
    /// A text encoder: inputs are texts .
    Text(Box<PretrainedText<B>>),
    /// An image encoder: inputs are PNG or JPEG files.
    Image(Box<PretrainedImage<B>>),
}

/// One input: a text, or an image file's name and bytes.
pub enum Input<'a> {
    /// A text.
    Text(&'a str),
    /// An image file (name for errors, bytes).
    Image(&'a str, &'a [u8]),
}

impl<B: Backend> Pretrained<B> {
    /// Loads a checkpoint folder. `pooling` overrides the default (text: the
    /// sentence-transformers pooling if there is one, else mean; images: CLS).
    pub fn load(
        files: &PretrainedFiles,
        pooling: Option<Pooling>,
        dev: &B::Device,
    ) -> Result<Self> {
        if pooling == Some(Pooling::Last) {
            return Err(Error::invalid(
                "pooling `last` reads a causal model's final token; BERT and ViT checkpoints \
                 are bidirectional: use mean or cls",
            ));
        }
        let config_text = files
            .text("config.json")?
            .ok_or_else(|| Error::format(files.path("config.json"), "config.json", "missing"))?;
        let config = HfConfig::from_json(&files.path("config.json"), &config_text)?;
        let weights = files.need("model.safetensors", "beside config.json")?;
        let table = TensorTable::from_bytes(&files.path("model.safetensors"), weights)?;
        match config {
            HfConfig::Bert(c) => {
                let read = |rel: &str| files.text(rel).ok().flatten();
                let st = SentencePooling::from_folder(&files.folder, &read)?;
                let tok_bytes = files.need(
                    "tokenizer.json",
                    "for a text encoder (the fast \
                    tokenizer file; a vocab.txt alone is not read)",
                )?;
                let mut max_len = c.max_positions;
                if let Some(sb) = files.text("sentence_bert_config.json")? {
                    let v: serde_json::Value = serde_json::from_str(&sb).map_err(|e| {
                        Error::format(
                            files.path("sentence_bert_config.json"),
                            "json",
                            e.to_string(),
                        )
                    })?;
                    if let Some(m) = v.get("max_seq_length").and_then(|m| m.as_u64()) {
                        max_len = max_len.min(m.max(2) as usize);
                    }
                }
                let tokenizer =
                    TextTokenizer::from_bytes(&files.path("tokenizer.json"), tok_bytes)?
                        .for_pretrained(max_len)?;
                if tokenizer.vocab_size() > c.vocab_size {
                    return Err(Error::format(
                        files.path("tokenizer.json"),
                        "model.vocab",
                        format!(
                            "{} tokens, but config.json's vocab_size is {}: the tokenizer \
                             belongs to another model",
                            tokenizer.vocab_size(),
                            c.vocab_size
                        ),
                    ));
                }
                let model = HfBert::load(&c, table, dev)?;
                let default = match st {
                    Some(p) if !p.mean => Pooling::Cls,
                    _ => Pooling::Mean,
                };
                Ok(Pretrained::Text(Box::new(PretrainedText {
                    model,
                    tokenizer,
                    pooling: pooling.unwrap_or(default),
                    normalize: st.is_some_and(|p| p.normalize),
                    max_len,
                })))
            }
            HfConfig::Vit(c) => {
                let pre = files.text("preprocessor_config.json")?.ok_or_else(|| {
                    Error::format(
                        files.path("preprocessor_config.json"),
                        "preprocessor_config.json",
                        "missing: expected it for an image encoder (the resize and \
                         normalisation the model was trained with)",
                    )
                })?;
                let processor =
                    ImageProcessor::from_json(&files.path("preprocessor_config.json"), &pre)?;
                let model = HfVit::load(&c, table, dev)?;
                Ok(Pretrained::Image(Box::new(PretrainedImage {
                    model,
                    processor,
                    pooling: pooling.unwrap_or(Pooling::Cls),
                })))
            }
        }
    }

    /// Width H of the vectors.
    pub fn width(&self) -> usize {
        match self {
            Pretrained::Text(t) => t.model.config.hidden_size,
            Pretrained::Image(i) => i.model.config.hidden_size,
        }
    }

    /// Hidden states L + 1.
    pub fn states(&self) -> usize {
        1 + match self {
            Pretrained::Text(t) => t.model.config.num_layers,
            Pretrained::Image(i) => i.model.config.num_layers,
        }
    }

    /// One line for humans: architecture, sizes, pooling.
    pub fn describe(&self) -> String {
        let (kind, pool, norm) = match self {
            Pretrained::Text(t) => ("bert", t.pooling, t.normalize),
            Pretrained::Image(i) => (
                match i.model.config.kind {
                    crate::formats::hf::VitKind::Vit => "vit",
                    crate::formats::hf::VitKind::Dinov2 => "dinov2",
                },
                i.pooling,
                false,
            ),
        };
        let pool = match pool {
            Pooling::Mean => "mean",
            Pooling::Cls => "cls",
            Pooling::Last => "last",
        };
        format!(
            "{kind} ({} layers, width {}), pooling {pool}{}",
            self.states() - 1,
            self.width(),
            if norm { ", L2-normalised" } else { "" }
        )
    }

    /// Whether inputs are texts (else image files).
    pub fn is_text(&self) -> bool {
        matches!(self, Pretrained::Text(_))
    }

    /// One vector per input (see the module docs), `batch` inputs per forward pass;
    /// ticks phase `"inputs"` after each batch.
    ///
    /// # Shapes
    /// N inputs -> `Features [N, 1, H]`.
    pub fn embed(&self, inputs: &[Input], batch: usize, progress: OnTick<'_>) -> Result<Features> {
        self.run(inputs, batch, false, progress)
    }

    /// Every hidden state pooled (see the module docs).
    ///
    /// # Shapes
    /// N inputs -> `Features [N, L + 1, H]`.
    pub fn features(
        &self,
        inputs: &[Input],
        batch: usize,
        progress: OnTick<'_>,
    ) -> Result<Features> {
        self.run(inputs, batch, true, progress)
    }

    fn run(
        &self,
        inputs: &[Input],
        batch: usize,
        all_states: bool,
        progress: OnTick<'_>,
    ) -> Result<Features> {
        if inputs.is_empty() {
            return Err(Error::invalid("no inputs to embed".to_string()));
        }
        let (h, layers) = (self.width(), if all_states { self.states() } else { 1 });
        let mut data = Vec::with_capacity(inputs.len() * layers * h);
        let mut done = 0;
        for chunk in inputs.chunks(batch.max(1)) {
            let pooled = match self {
                Pretrained::Text(t) => t.pooled(chunk, all_states)?,
                Pretrained::Image(i) => i.pooled(chunk, all_states)?,
            };
            // [states][n, H] -> rows i, then state l.
            let n = chunk.len();
            let host: Vec<Vec<f32>> = pooled
                .into_iter()
                .map(|p| {
                    p.into_data()
                        .convert::<f32>()
                        .into_vec()
                        .map_err(|e| Error::Numerical(format!("reading embeddings back: {e:?}")))
                })
                .collect::<Result<_>>()?;
            for i in 0..n {
                for s in &host {
                    data.extend(s[i * h..(i + 1) * h].iter().map(|&x| f64::from(x)));
                }
            }
            done += n;
            tick(progress, "inputs", done, inputs.len());
        }
        Features::new("embeddings", inputs.len(), layers, h, data)
    }
}

fn expect_text<'a>(input: &'a Input) -> Result<&'a str> {
    match input {
        Input::Text(t) => Ok(t),
        Input::Image(name, _) => Err(Error::invalid(format!(
            "{name}: an image given to a text encoder: expected texts"
        ))),
    }
}

impl<B: Backend> PretrainedText<B> {
    /// Pooled states of one batch: the last state (normalised if asked) or all L + 1.
    fn pooled(&self, chunk: &[Input], all_states: bool) -> Result<Vec<Tensor<B, 2>>> {
        let dev = self.model.device();
        let ids: Vec<Vec<u32>> = chunk
            .iter()
            .map(|x| self.tokenizer.encode_with_specials(expect_text(x)?))
            .collect::<Result<_>>()?;
        let (n, t) = (
            ids.len(),
            ids.iter().map(Vec::len).max().unwrap_or(1).max(1),
        );
        let mut flat = vec![i64::from(self.tokenizer.pad); n * t];
        let mut real = vec![0.0f32; n * t];
        for (i, row) in ids.iter().enumerate() {
            for (j, &id) in row.iter().enumerate() {
                flat[i * t + j] = i64::from(id);
                real[i * t + j] = 1.0;
            }
        }
        let ids = Tensor::<B, 2, Int>::from_data(TensorData::new(flat, [n, t]), &dev);
        let m = Tensor::<B, 2>::from_data(TensorData::new(real, [n, t]), &dev);
        let pad = m.clone().equal_elem(0.0);
        let states = self.model.hidden_states(ids, pad)?;
        let pool = |s: Tensor<B, 3>| -> Tensor<B, 2> {
            let h = s.dims()[2];
            match self.pooling {
                // `last` is refused at load.
                Pooling::Cls | Pooling::Last => s.slice([0..n, 0..1, 0..h]).reshape([n, h]),
                Pooling::Mean => {
                    let w = m.clone().reshape([n, t, 1]);
                    let sum = (s * w).sum_dim(1).reshape([n, h]);
                    sum / m.clone().sum_dim(1).clamp_min(1e-9)
                }
            }
        };
        if all_states {
            return Ok(states.into_iter().map(pool).collect());
        }
        let last = pool(states.into_iter().last().expect("L + 1 >= 1 states"));
        Ok(vec![if self.normalize { l2_rows(last) } else { last }])
    }
}

impl<B: Backend> PretrainedImage<B> {
    /// Pooled states of one batch: the final-normed last state, or all L + 1 (before the
    /// final norm, as HF's `hidden_states`).
    fn pooled(&self, chunk: &[Input], all_states: bool) -> Result<Vec<Tensor<B, 2>>> {
        let dev = self.model.device();
        let mut pixels = Vec::new();
        let mut size = None;
        for x in chunk {
            let Input::Image(name, bytes) = x else {
                return Err(Error::invalid(
                    "a text given to an image encoder: expected PNG or JPEG files".to_string(),
                ));
            };
            let (p, hi, wi) = self.processor.preprocess(name, bytes)?;
            match size {
                None => size = Some((hi, wi)),
                Some(s) if s != (hi, wi) => {
                    return Err(Error::invalid(format!(
                        "{name}: preprocessed to {hi}x{wi}, other images of the batch to \
                         {}x{}: use batch 1 with a processor that keeps aspect ratios",
                        s.0, s.1
                    )));
                }
                Some(_) => {}
            }
            pixels.extend(p);
        }
        let (hi, wi) = size.expect("a batch has at least one image");
        let n = chunk.len();
        let c = self.model.config.num_channels;
        let x = Tensor::<B, 4>::from_data(TensorData::new(pixels, [n, c, hi, wi]), &dev);
        let mut states = self.model.hidden_states(x)?;
        if !all_states {
            let last = states.pop().expect("L + 1 >= 1 states");
            states = vec![self.model.final_norm(last)];
        }
        let pool = |s: Tensor<B, 3>| -> Tensor<B, 2> {
            let [n, l, h] = s.dims();
            match self.pooling {
                // `last` is refused at load.
                Pooling::Cls | Pooling::Last => s.slice([0..n, 0..1, 0..h]).reshape([n, h]),
                Pooling::Mean => s.slice([0..n, 1..l, 0..h]).mean_dim(1).reshape([n, h]),
            }
        };
        Ok(states.into_iter().map(pool).collect())
    }
}

/// `x_i / max(||x_i||, 1e-12)` per row, as `torch.nn.functional.normalize`.
///
/// # Shapes
/// `[n, H]` -> `[n, H]`.
fn l2_rows<B: Backend>(x: Tensor<B, 2>) -> Tensor<B, 2> {
    let norm = x.clone().powi_scalar(2).sum_dim(1).sqrt().clamp_min(1e-12);
    x / norm
}
