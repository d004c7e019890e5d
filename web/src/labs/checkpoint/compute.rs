//! The checkpoint lab's numbers: loading an exported bundle, and embedding texts on
//! WebGPU or the CPU ([`super::backends`]), "auto" measuring both once. No view here.

use super::backends::{self, Gpu, Which};
use crate::widgets::clock::now_ms;
use prh_core::backend::Cpu;
use prh_core::tasks::bundle::{Bundle, read_bundle};
use std::sync::Arc;

/// Where the page's demo bundle lives (the views-multilingual recipe's English encoder,
/// `web/make_demo.sh`).
pub const DEMO_BUNDLE: &str = "assets/demo_model.prh.safetensors";
/// The views-vision experiment's good-view encoder and its ImageNet class vectors
/// (`web/make_demo.sh --vision`).
pub const DEMO_VISION: (&str, &str) = (
    "assets/demo_vision.prh.safetensors",
    "assets/demo_vision.imagenet.safetensors",
);

/// The encoders shipped with the page (`model` in the URL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DemoModel {
    /// [`DEMO_BUNDLE`].
    Demo,
    /// [`DEMO_VISION`]: encoder and ImageNet class vectors.
    Vision,
}

impl DemoModel {
    /// The URL value (`model=`).
    pub fn key(self) -> &'static str {
        match self {
            DemoModel::Demo => "demo",
            DemoModel::Vision => "vision",
        }
    }

    pub fn parse(s: &str) -> Option<DemoModel> {
        [DemoModel::Demo, DemoModel::Vision]
            .into_iter()
            .find(|m| m.key() == s)
    }

    /// The bundle's path under the page.
    pub fn bundle(self) -> &'static str {
        match self {
            DemoModel::Demo => DEMO_BUNDLE,
            DemoModel::Vision => DEMO_VISION.0,
        }
    }

    /// Its class-vector file, if it ships one.
    pub fn classes(self) -> Option<&'static str> {
        match self {
            DemoModel::Demo => None,
            DemoModel::Vision => Some(DEMO_VISION.1),
        }
    }
}

/// Texts per forward pass on the CPU (as `prh-native embed`'s reference values were made).
const BATCH: usize = 16;
/// Texts per forward pass on WebGPU, every batch padded to one shape (fewer, larger
/// dispatches; see `backends::fixed_shape`).
const GPU_BATCH: usize = 64;

/// A loaded bundle: the CPU model, and the bytes to build the WebGPU one from on demand.
pub struct Loaded {
    /// File name.
    pub name: String,
    /// The encoder on the CPU backend.
    pub cpu: Bundle<Cpu>,
    /// The file's bytes.
    bytes: Vec<u8>,
}

/// Embeddings of the typed texts and what they took.
pub struct Embedded {
    /// The texts, one per row.
    pub texts: Vec<String>,
    /// Row-major `[n, d]` embeddings (pooled last hidden state).
    pub rows: Vec<f32>,
    /// Width d.
    pub d: usize,
    /// Milliseconds the embedding itself took (device set-up and model upload excluded).
    pub ms: f64,
    /// The backend that ran.
    pub which: Which,
    /// The WebGPU adapter, or why the CPU ran instead.
    pub note: String,
    /// File name of the encoder that embedded them.
    pub encoder: String,
    /// The encoder's shape in words ("2 layers × width 64, max 32 tokens").
    pub model: String,
    /// Which bundle load made these (the lab counts loads): results of an earlier encoder
    /// are never shown beside a later one's inputs.
    pub bundle_load: u64,
    /// The text box as it was embedded (stale results are marked when it changes).
    pub source_text: String,
    /// Texts longer than the encoder's context: (text index, its token count).
    pub cut: Vec<(usize, usize)>,
    /// Tokens the encoder reads per text (max_len, less one for [CLS] when it uses one).
    pub cap: usize,
}

/// Parses bundle bytes on the CPU backend (after checking they are a safetensors file at
/// all, so another format gets a message that says what it is).
pub fn load(name: &str, bytes: Vec<u8>) -> Result<Arc<Loaded>, String> {
    super::container::check_safetensors(name, &bytes)?;
    let cpu = read_bundle::<Cpu>(name, &bytes, &Default::default()).map_err(|e| e.to_string())?;
    Ok(Arc::new(Loaded {
        name: name.to_string(),
        cpu,
        bytes,
    }))
}

thread_local! {
    /// What "auto" chose after measuring both backends once on this page: the backend,
    /// and the measured milliseconds of WebGPU (warm) and the CPU on those texts.
    static AUTO_CHOICE: std::cell::Cell<Option<(Which, f64, f64)>> = const { std::cell::Cell::new(None) };
}

/// `texts` embedded on the CPU backend: (rows, token counts), milliseconds.
async fn on_cpu(
    loaded: &Loaded,
    texts: &[String],
) -> Result<((Vec<f32>, Vec<usize>), f64), String> {
    let b = &loaded.cpu;
    let t0 = now_ms();
    let out = backends::embed(
        &b.model,
        &b.spec,
        &b.tokenizer,
        texts,
        (BATCH, false),
        &Default::default(),
    )
    .await?;
    Ok((out, now_ms() - t0))
}

/// `texts` embedded on WebGPU, `runs` times (the first pays for kernel compilation and
/// autotuning): the last run's (rows, token counts) and milliseconds, and the model
/// upload's milliseconds.
async fn on_gpu(
    loaded: &Loaded,
    texts: &[String],
    device: &prh_core::backend::burn::tensor::Device<Gpu>,
    runs: usize,
) -> Result<((Vec<f32>, Vec<usize>), f64, f64), String> {
    let t0 = now_ms();
    let gpu = read_bundle::<Gpu>(&loaded.name, &loaded.bytes, device).map_err(|e| e.to_string())?;
    let upload = now_ms() - t0;
    let mut last = None;
    for _ in 0..runs.max(1) {
        let t1 = now_ms();
        let out = backends::embed(
            &gpu.model,
            &gpu.spec,
            &gpu.tokenizer,
            texts,
            (GPU_BATCH, true),
            device,
        )
        .await?;
        last = Some((out, now_ms() - t1));
    }
    let (out, ms) = last.ok_or("no WebGPU run")?;
    Ok((out, ms, upload))
}

/// The non-empty lines of a text box, trimmed: the texts to embed.
pub(super) fn texts_of(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

/// Rows and token counts of an embedding, its milliseconds, the backend that ran and a
/// note saying why that one.
type Ran = ((Vec<f32>, Vec<usize>), f64, Which, String);

/// "auto" with a WebGPU adapter: measures both backends once on the first texts it
/// embeds (WebGPU warm: its first run compiles kernels) and keeps the faster for the rest
/// of the page's life, saying why. A software adapter such as SwiftShader is ~100x slower
/// than the CPU backend, so picking WebGPU because it exists would be the wrong choice
/// there.
async fn auto(
    loaded: &Loaded,
    texts: &[String],
    device: &prh_core::backend::burn::tensor::Device<Gpu>,
    adapter: &str,
) -> Result<Ran, String> {
    Ok(match AUTO_CHOICE.with(std::cell::Cell::get) {
        Some((which, g, c)) => {
            let note = format!(
                "auto: {} (measured once on this page: WebGPU {g:.0} ms vs CPU {c:.0} ms; adapter: {adapter})",
                which.name()
            );
            if which == Which::WebGpu {
                let (out, ms, _) = on_gpu(loaded, texts, device, 1).await?;
                (out, ms, which, note)
            } else {
                let (out, ms) = on_cpu(loaded, texts).await?;
                (out, ms, which, note)
            }
        }
        None => {
            let (g_out, g, _) = on_gpu(loaded, texts, device, 2).await?;
            let (c_out, c) = on_cpu(loaded, texts).await?;
            let which = if g < c { Which::WebGpu } else { Which::Cpu };
            AUTO_CHOICE.with(|a| a.set(Some((which, g, c))));
            let note = format!(
                "auto: measured both on these texts, WebGPU {g:.0} ms (warm) vs CPU {c:.0} ms; using {} from now on (adapter: {adapter})",
                which.name()
            );
            if which == Which::WebGpu {
                (g_out, g, which, note)
            } else {
                (c_out, c, which, note)
            }
        }
    })
}

/// `texts` embedded on the backend `want` asks for ("webgpu", "cpu" or "auto", see
/// [`auto`]); "auto" uses the CPU when there is no WebGPU adapter.
async fn run_backend(loaded: &Loaded, texts: &[String], want: &str) -> Result<Ran, String> {
    let gpu = match want {
        "cpu" => Err("CPU chosen".to_string()),
        _ => backends::webgpu_device().await,
    };
    Ok(match (want, gpu) {
        ("cpu", _) => {
            let (out, ms) = on_cpu(loaded, texts).await?;
            (out, ms, Which::Cpu, "CPU chosen".to_string())
        }
        ("webgpu", Ok((device, adapter))) => {
            let (out, ms, upload) = on_gpu(loaded, texts, &device, 1).await?;
            let note = format!("adapter: {adapter}; model upload {upload:.0} ms");
            (out, ms, Which::WebGpu, note)
        }
        (_, Ok((device, adapter))) => auto(loaded, texts, &device, &adapter.to_string()).await?,
        ("webgpu", Err(e)) => return Err(format!("WebGPU was asked for but is unavailable: {e}")),
        (_, Err(e)) => {
            let (out, ms) = on_cpu(loaded, texts).await?;
            let note = format!("WebGPU unavailable ({e}), fell back to the CPU");
            (out, ms, Which::Cpu, note)
        }
    })
}

/// Embeds the non-empty lines of `text` on the backend `want` asks for ("webgpu", "cpu"
/// or "auto", [`run_backend`]), and says which texts were longer than the context.
pub async fn embed(loaded: Arc<Loaded>, text: String, want: String) -> Result<Embedded, String> {
    let texts = texts_of(&text);
    if texts.is_empty() {
        return Err("type at least one text (one per line)".into());
    }
    let b = &loaded.cpu;
    let ((rows, tokens), ms, which, note) = run_backend(&loaded, &texts, &want).await?;
    let d = rows.len() / texts.len();
    let cap = prh_core::tasks::text::context_tokens(&b.spec);
    let cut = tokens
        .iter()
        .enumerate()
        .filter(|&(_, &t)| t > cap)
        .map(|(i, &t)| (i, t))
        .collect();
    Ok(Embedded {
        texts,
        rows,
        d,
        ms,
        which,
        note,
        encoder: loaded.name.clone(),
        model: format!(
            "{} layers × width {}, max {} tokens",
            b.spec.layers, b.spec.d_model, b.spec.max_len
        ),
        bundle_load: 0,
        source_text: text,
        cut,
        cap,
    })
}
