//! The live lab's training, off the main thread: `train-worker.js` loads the page's own
//! module in a web worker and awaits [`prh_live`] for each command, one at a time; the
//! worker keeps one [`LiveRun`] between commands, on WebGPU or on the CPU backend
//! ([`Backend`]). [`Trainer`] is the page's handle on that worker.

use crate::widgets::clock::now_ms;
use crate::widgets::webgpu::{self, GpuTrain, Which};
use crate::widgets::worker;
use prh_core::backend::CpuTrain;
use prh_core::backend::burn::tensor::Device;
use prh_core::experiments::demo::CurvePoint;
use prh_core::experiments::live::{LiveFrame, LiveRun};
use prh_core::theory::view_kind::ViewKind;
use prh_core::train::config::LossKind;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

/// The worker script, next to `prh-web.js` (.ci/web.sh and index.html copy it).
const SCRIPT: &str = "./train-worker.js";

/// Steps per piece: one piece per frame the page draws.
pub const PIECE: usize = 25;

/// Rows drawn per scatter.
const POINTS: usize = 300;

/// A command from the page.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "lowercase")]
pub enum Command {
    /// A new pair of encoders.
    Start {
        /// The small world (72 states) or the demo's (192).
        small: bool,
        /// "good" or "bad".
        kind: String,
        /// "spectral" or "sigreg".
        loss: String,
        /// Run seed.
        seed: u64,
        /// "auto" (WebGPU on a hardware adapter, else the CPU), "webgpu" or "cpu".
        backend: String,
    },
    /// Train each encoder `steps` more.
    Advance {
        /// Steps per encoder.
        steps: usize,
    },
    /// Go on with other views.
    Views {
        /// "good" or "bad".
        kind: String,
    },
}

/// What the worker sends back after each command.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Frame {
    /// Steps each encoder has trained (image, caption).
    pub steps: [usize; 2],
    /// The step budget.
    pub budget: usize,
    /// Both encoders stopped (plateau or budget).
    pub finished: bool,
    /// Alignment to the prediction against the step, per encoder.
    pub curves: [Vec<CurvePoint>; 2],
    /// Learned embeddings turned onto F (first two coordinates), per encoder; empty when
    /// the command trained nothing.
    pub points: [Vec<(f64, f64)>; 2],
    /// F's first two coordinates for the same rows.
    pub predicted: [Vec<(f64, f64)>; 2],
    /// Milliseconds the command took in the worker.
    pub ms: f64,
    /// The two runs as TOML (`prh-native train --config`), sent on start.
    pub toml: Option<[String; 2]>,
    /// The backend it trains on ("WebGPU" or "CPU") and why, sent on start.
    pub backend: Option<(String, String)>,
}

/// A live run on one of the page's two backends.
enum Backend {
    /// burn ndarray in WebAssembly.
    Cpu(Box<LiveRun<CpuTrain>>),
    /// burn wgpu on the worker's WebGPU device.
    Gpu(Box<LiveRun<GpuTrain>>, Device<GpuTrain>),
}

impl Backend {
    /// A new run on the backend `want` asks for, and the backend's name with why it was
    /// chosen. Both draw the initial weights on the CPU backend, so they start alike.
    async fn start(
        want: &str,
        (small, kind, loss, seed): (bool, ViewKind, LossKind, u64),
    ) -> Result<(Backend, (String, String)), String> {
        let gpu = match want {
            "cpu" => Err("the CPU was chosen".to_string()),
            "auto" | "webgpu" => webgpu::webgpu_device().await,
            _ => return Err(format!("backend must be auto, webgpu or cpu, got {want}")),
        };
        let (which, why, device) = match gpu {
            Ok((device, adapter)) if want == "webgpu" || !adapter.software => {
                (Which::WebGpu, format!("adapter: {adapter}"), Some(device))
            }
            Ok((_, adapter)) => (
                Which::Cpu,
                format!("auto: the WebGPU adapter is {adapter}, slower than the CPU backend"),
                None,
            ),
            Err(e) if want == "webgpu" => {
                return Err(format!("WebGPU was asked for but is unavailable: {e}"));
            }
            Err(e) if want == "cpu" => (Which::Cpu, e, None),
            Err(e) => (
                Which::Cpu,
                format!("WebGPU unavailable ({e}), the CPU instead"),
                None,
            ),
        };
        let run = match device {
            Some(d) => {
                let live = LiveRun::new::<CpuTrain>(small, kind, loss, seed, 0, &d);
                Backend::Gpu(Box::new(live.map_err(|e| e.to_string())?), d)
            }
            None => Backend::Cpu(Box::new(
                LiveRun::new::<CpuTrain>(small, kind, loss, seed, 0, &Default::default())
                    .map_err(|e| e.to_string())?,
            )),
        };
        Ok((run, (which.name().to_string(), why)))
    }

    /// Trains each encoder `steps` more, awaiting the backend.
    async fn advance(&mut self, steps: usize) -> Result<LiveFrame, String> {
        let r = match self {
            Backend::Cpu(live) => live.advance(steps, POINTS, &Default::default()).await,
            Backend::Gpu(live, device) => live.advance(steps, POINTS, device).await,
        };
        r.map_err(|e| e.to_string())
    }
}

/// Calls `$body` with the run, whichever backend it is on.
macro_rules! on_run {
    ($run:expr, |$live:ident| $body:expr) => {
        match $run {
            Backend::Cpu($live) => $body,
            Backend::Gpu($live, _) => $body,
        }
    };
}

thread_local! {
    /// The worker's run (a worker is single-threaded; `train-worker.js` awaits one command
    /// before it starts the next, and the run is taken out while a command awaits).
    static RUN: RefCell<Option<Backend>> = const { RefCell::new(None) };
}

fn kind_of(s: &str) -> Result<ViewKind, String> {
    match s {
        "good" => Ok(ViewKind::Good),
        "bad" => Ok(ViewKind::Bad),
        _ => Err(format!("views must be good or bad, got {s}")),
    }
}

fn loss_of(s: &str) -> Result<LossKind, String> {
    match s {
        "spectral" => Ok(LossKind::Spectral),
        "sigreg" => Ok(LossKind::Sigreg),
        _ => Err(format!("loss must be spectral or sigreg, got {s}")),
    }
}

/// Runs one command on the worker's run and returns the frame. The run is taken out of
/// [`RUN`] while the command awaits and always put back, also when the command fails.
async fn run(cmd: Command) -> Result<Frame, String> {
    let t0 = now_ms();
    let mut slot = RUN.with(|cell| cell.borrow_mut().take());
    let frame = command(&mut slot, cmd).await;
    RUN.with(|cell| *cell.borrow_mut() = slot);
    frame.map(|f| Frame {
        ms: now_ms() - t0,
        ..f
    })
}

/// [`run`]'s work on the run in `slot` (a start replaces it).
async fn command(slot: &mut Option<Backend>, cmd: Command) -> Result<Frame, String> {
    let (mut toml, mut backend) = (None, None);
    let steps = match cmd {
        Command::Start {
            small,
            kind,
            loss,
            seed,
            backend: want,
        } => {
            let setup = (small, kind_of(&kind)?, loss_of(&loss)?, seed);
            let (run, which) = Backend::start(&want, setup).await?;
            toml = Some(on_run!(&run, |live| [
                live.config_toml(0).map_err(|e| e.to_string())?,
                live.config_toml(1).map_err(|e| e.to_string())?,
            ]));
            backend = Some(which);
            *slot = Some(run);
            0
        }
        Command::Advance { steps } => steps,
        Command::Views { kind } => {
            let run = slot.as_mut().ok_or("no run: start one first")?;
            on_run!(run, |live| live.set_views(kind_of(&kind)?)).map_err(|e| e.to_string())?;
            0
        }
    };
    let live = slot.as_mut().ok_or("no run: start one first")?;
    let f = live.advance(steps).await?;
    let (steps_done, budget, finished) =
        on_run!(&*live, |l| (l.steps_done(), l.budget(), l.finished()));
    let [a, b] = f.encoders;
    Ok(Frame {
        steps: steps_done,
        budget,
        finished,
        curves: [a.curve, b.curve],
        points: [a.points, b.points],
        predicted: f.predicted,
        ms: 0.0,
        toml,
        backend,
    })
}

/// Called by `train-worker.js` with a command as JSON; resolves to the frame as JSON.
#[wasm_bindgen]
pub async fn prh_live(cmd: String) -> Result<String, JsValue> {
    let cmd: Command = serde_json::from_str(&cmd).map_err(|e| JsValue::from_str(&e.to_string()))?;
    let frame = run(cmd).await.map_err(|e| JsValue::from_str(&e))?;
    serde_json::to_string(&frame).map_err(|e| JsValue::from_str(&e.to_string()))
}

/// The page's handle on a training worker; dropping it ends the worker.
pub struct Trainer {
    worker: JsValue,
    _listeners: worker::Listeners,
}

impl Trainer {
    /// Starts a worker; `on_frame` receives each frame (or error) it sends.
    pub fn new(
        mut on_frame: impl FnMut(Result<Frame, String>) + 'static,
    ) -> Result<Trainer, String> {
        let worker = worker::spawn(SCRIPT, "training worker")?;
        let listeners = worker::listen(&worker, "training worker", move |ev| {
            on_frame(match ev {
                worker::Event::Failed(text) => Err(text),
                worker::Event::Message(field) => match (field("frame"), field("error")) {
                    (Some(json), _) => serde_json::from_str(&json).map_err(|e| e.to_string()),
                    (None, Some(e)) => Err(e),
                    _ => Err("the training worker sent an unknown message".into()),
                },
            })
        })?;
        Ok(Trainer {
            worker,
            _listeners: listeners,
        })
    }

    /// Sends a command.
    pub fn send(&self, cmd: &Command) -> Result<(), String> {
        let json = serde_json::to_string(cmd).map_err(|e| e.to_string())?;
        let msg = js_sys::JSON::parse(&json).map_err(|e| format!("{e:?}"))?;
        worker::post(&self.worker, &msg)
    }
}

impl Drop for Trainer {
    fn drop(&mut self) {
        worker::terminate(&self.worker);
    }
}
