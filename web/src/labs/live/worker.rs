//! The live lab's training, off the main thread: `train-worker.js` loads the page's own
//! module in a web worker and calls [`prh_live`] for each command; the worker keeps one
//! [`LiveRun`] between commands. [`Trainer`] is the page's handle on that worker.

use crate::widgets::clock::now_ms;
use crate::widgets::worker;
use prh_core::backend::CpuTrain;
use prh_core::experiments::demo::CurvePoint;
use prh_core::experiments::live::LiveRun;
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
}

thread_local! {
    /// The worker's run (a worker is single-threaded).
    static RUN: RefCell<Option<LiveRun>> = const { RefCell::new(None) };
}

fn kind_of(s: &str) -> Result<ViewKind, String> {
    match s {
        "good" => Ok(ViewKind::Good),
        "bad" => Ok(ViewKind::Bad),
        _ => Err(format!("views must be good or bad, got {s}")),
    }
}

/// Runs one command on the worker's [`LiveRun`] and returns the frame.
fn run(cmd: Command) -> Result<Frame, String> {
    let t0 = now_ms();
    let device = Default::default();
    RUN.with(|cell| {
        let mut slot = cell.borrow_mut();
        let mut toml = None;
        let steps = match cmd {
            Command::Start {
                small,
                kind,
                loss,
                seed,
            } => {
                let loss = match loss.as_str() {
                    "spectral" => LossKind::Spectral,
                    "sigreg" => LossKind::Sigreg,
                    _ => return Err(format!("loss must be spectral or sigreg, got {loss}")),
                };
                let live = LiveRun::new(small, kind_of(&kind)?, loss, seed, 0)
                    .map_err(|e| e.to_string())?;
                toml = Some([
                    live.config_toml(0).map_err(|e| e.to_string())?,
                    live.config_toml(1).map_err(|e| e.to_string())?,
                ]);
                *slot = Some(live);
                0
            }
            Command::Advance { steps } => steps,
            Command::Views { kind } => {
                let live = slot.as_mut().ok_or("no run: start one first")?;
                live.set_views(kind_of(&kind)?).map_err(|e| e.to_string())?;
                0
            }
        };
        let live = slot.as_mut().ok_or("no run: start one first")?;
        let f = live
            .advance::<CpuTrain>(steps, POINTS, &device)
            .map_err(|e| e.to_string())?;
        let [a, b] = f.encoders;
        Ok(Frame {
            steps: live.steps_done(),
            budget: live.budget(),
            finished: live.finished(),
            curves: [a.curve, b.curve],
            points: [a.points, b.points],
            predicted: f.predicted,
            ms: now_ms() - t0,
            toml,
        })
    })
}

/// Called by `train-worker.js` with a command as JSON; returns the frame as JSON.
#[wasm_bindgen]
pub fn prh_live(cmd: &str) -> Result<String, JsValue> {
    let cmd: Command = serde_json::from_str(cmd).map_err(|e| JsValue::from_str(&e.to_string()))?;
    let frame = run(cmd).map_err(|e| JsValue::from_str(&e))?;
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
