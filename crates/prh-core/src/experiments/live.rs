//! Two JEPAs that train in pieces while someone watches (the playground's live lab,
//! issue 21): the demo's symbol encoders — one per modality, trained *separately* — on the
//! demo's scene world, advanced a few steps at a time so a page can draw between pieces,
//! pause, resume, or start over with other views.
//!
//! Each piece is the shared training loop ([`train_state`]) continued from the previous
//! piece's state in memory and stopped early with `run.stop_at`, which leaves the
//! learning-rate schedule and the plateau rule as in one uninterrupted run: the pieces
//! add up to exactly the run `prh-native train --config` does with [`LiveRun::config_toml`]
//! on the same backend (test: `pieces_equal_one_run`). Every read-back is awaited, so a
//! run trains on WebGPU in a browser as well as on the CPU; the initial weights are drawn
//! on a CPU backend and loaded onto the training one, so every backend starts where
//! `prh-native train` does. Browser-safe: no files, no clocks, one replica (no threads).

use crate::linalg::{self, Matrix};
use crate::models::image_encoder::embed_in_chunks_async;
use crate::models::symbolic_encoder::SymbolicEncoder;
use crate::scene::theory::TheoryProbe;
use crate::scene::{Modality, SceneWorld};
use crate::tasks::scene::task::{SceneJepaTask, SceneObserver, Symbols};
use crate::tasks::scene::{Observation, SceneTrainConfig};
use crate::theory::view_kind::ViewKind;
use crate::train::checkpoint::{Checkpoint, Plateau};
use crate::train::config::LossKind;
use crate::train::{RunSink, TrainState, train_state};
use crate::{Error, Result};
use burn::module::AutodiffModule;
use burn::tensor::backend::AutodiffBackend;

use super::demo::{CurvePoint, DemoConfig};

/// Points to draw, (x, y) each.
pub type Points = Vec<(f64, f64)>;

/// Steps between two evaluations against the prediction (one point of the curve).
pub const EVAL_EVERY: usize = 25;

/// Where one encoder stands after a piece.
#[derive(Debug, Clone, Default)]
pub struct EncoderFrame {
    /// The curve of alignment to the prediction so far (one point per [`EVAL_EVERY`]).
    pub curve: Vec<CurvePoint>,
    /// Whether the plateau rule (or the budget) ended its training.
    pub finished: bool,
    /// Its whitened embeddings of the probe's states turned onto F by the best rotation
    /// (first two coordinates, at most `max_points` rows), for drawing.
    pub points: Points,
}

/// What the page draws after a piece.
#[derive(Debug, Clone, Default)]
pub struct LiveFrame {
    /// Image and caption encoders.
    pub encoders: [EncoderFrame; 2],
    /// F's first two coordinates for the same rows, per modality.
    pub predicted: [Points; 2],
}

/// The live lab's run sink: metrics records only. The run's state stays in memory
/// between pieces ([`TrainState`]), so no checkpoint is written (on WebGPU none could be:
/// writing one reads every weight back synchronously).
#[derive(Debug, Default)]
struct Records(Vec<serde_json::Value>);

impl RunSink for Records {
    fn now(&self) -> f64 {
        0.0
    }
    fn log(&mut self, record: &serde_json::Value) -> Result<()> {
        self.0.push(record.clone());
        Ok(())
    }
    fn save(&mut self, _name: &str, _checkpoint: &Checkpoint) -> Result<()> {
        Ok(())
    }
    fn keeps_checkpoints(&self) -> bool {
        false
    }
}

/// One encoder's run: its config, task (views, loss, probe), records and state.
struct Encoder<B: AutodiffBackend> {
    cfg: SceneTrainConfig,
    task: SceneJepaTask<Symbols>,
    records: Records,
    /// `None` only while a piece trains, or after a piece failed.
    state: Option<TrainState<B, SymbolicEncoder<B>>>,
    finished: bool,
}

impl<B: AutodiffBackend> Encoder<B> {
    /// Steps this encoder has trained (0 while a piece trains or after one failed).
    fn done(&self) -> usize {
        self.state.as_ref().map_or(0, |s| s.step)
    }

    /// The probe the task evaluates against (always set for a live run).
    fn probe(&self) -> Result<&TheoryProbe> {
        self.task
            .probe
            .as_ref()
            .ok_or_else(|| Error::invalid("the live run's task has no probe"))
    }
}

/// A pair of symbol encoders on the demo's world (seed `seed`), trained piece by piece on
/// backend `B`.
pub struct LiveRun<B: AutodiffBackend> {
    world: SceneWorld,
    encoders: [Encoder<B>; 2],
    /// The step budget a run starts with (also what a change of views adds).
    budget: usize,
}

impl<B: AutodiffBackend> LiveRun<B> {
    /// The demo's symbolic image and caption runs for `kind` views and `loss`, with one
    /// replica each and an evaluation every [`EVAL_EVERY`] steps, on the demo's world
    /// (192 states, d = 11) or, `small`, the quick demo's (72 states, d = 8); `budget`
    /// caps the steps (0: 2,000, the demo's; the plateau rule usually stops earlier).
    /// The initial weights are drawn on backend `I` (a CPU backend: the same draws as
    /// `prh-native train`) and loaded onto `device`.
    pub fn new<I: AutodiffBackend>(
        small: bool,
        kind: ViewKind,
        loss: LossKind,
        seed: u64,
        budget: usize,
        device: &B::Device,
    ) -> Result<LiveRun<B>> {
        let demo = if small {
            DemoConfig::quick(seed)
        } else {
            DemoConfig::full(seed)
        };
        let budget = if budget > 0 { budget } else { 2000 };
        let world = SceneWorld::new(demo.image.world.clone())?;
        let make = |m: Modality| -> Result<Encoder<B>> {
            let mut cfg = demo.run_config(m, kind, loss, Observation::Symbolic);
            // The browser has no threads: one replica (the batch loss is the same, to
            // float rounding, as the demo's two; crate::train::data_parallel).
            cfg.run.data_parallel = 1;
            cfg.run.eval_every = EVAL_EVERY;
            cfg.run.log_every = EVAL_EVERY;
            cfg.run.steps = budget;
            // The full demo's plateau rule (the quick demo's window of 10 is for tests).
            cfg.run.plateau_window = 50;
            let task = cfg.symbolic_task(&world)?;
            let toml = cfg.to_toml()?;
            let first = TrainState::<I, SymbolicEncoder<I>>::new(
                &task,
                &cfg.run,
                &cfg.optim,
                None,
                &Default::default(),
            )?
            .checkpoint(cfg.run.seed, &toml)?;
            let state = TrainState::new(&task, &cfg.run, &cfg.optim, Some(&first), device)?;
            Ok(Encoder {
                cfg,
                task,
                records: Records::default(),
                state: Some(state),
                finished: false,
            })
        };
        Ok(LiveRun {
            encoders: [make(Modality::Image)?, make(Modality::Text)?],
            world,
            budget,
        })
    }

    /// Goes on with `kind` views from where the encoders are: each keeps its weights and
    /// optimiser state, its probe becomes `kind`'s prediction, its plateau rule starts
    /// over, and its budget grows by the starting budget from here (so the cosine schedule
    /// stretches: after a change the pieces no longer add up to [`LiveRun::config_toml`]'s
    /// run).
    pub fn set_views(&mut self, kind: ViewKind) -> Result<()> {
        for e in &mut self.encoders {
            if e.cfg.run.objective == kind {
                continue;
            }
            let done = e.done();
            e.cfg.run.objective = kind;
            e.cfg.run.steps = done + self.budget;
            e.task = e.cfg.symbolic_task(&self.world)?;
            e.finished = false;
            if let Some(s) = &mut e.state {
                s.plateau = Plateau::default();
            }
        }
        Ok(())
    }

    /// The TOML of modality `m`'s run (0 image, 1 caption): `prh-native train --config`
    /// with it trains the same run in one go.
    pub fn config_toml(&self, m: usize) -> Result<String> {
        let e = self
            .encoders
            .get(m)
            .ok_or_else(|| Error::invalid(format!("modality {m}: expected 0 or 1")))?;
        e.cfg.to_toml()
    }

    /// The step budget of each encoder.
    pub fn budget(&self) -> usize {
        self.encoders[0].cfg.run.steps
    }

    /// Steps each encoder has trained.
    pub fn steps_done(&self) -> [usize; 2] {
        [self.encoders[0].done(), self.encoders[1].done()]
    }

    /// Whether both encoders have stopped (plateau or budget).
    pub fn finished(&self) -> bool {
        self.encoders.iter().all(|e| e.finished)
    }

    /// Trains each unfinished encoder `steps` more steps (fewer at the end of its budget
    /// or on its plateau) on `device`, and returns what to draw (`max_points` rows).
    /// Awaits every read-back (WebGPU); on the CPU the future completes when first polled.
    pub async fn advance(
        &mut self,
        steps: usize,
        max_points: usize,
        device: &B::Device,
    ) -> Result<LiveFrame> {
        let mut frame = LiveFrame::default();
        for (i, e) in self.encoders.iter_mut().enumerate() {
            if !e.finished && steps > 0 {
                let state = e.state.take().ok_or_else(|| {
                    Error::invalid("this live run failed in an earlier piece: start it again")
                })?;
                let before = state.step;
                let mut run = e.cfg.run.clone();
                run.stop_at = (before + steps).min(run.steps);
                let toml = e.cfg.to_toml()?;
                let devices = std::slice::from_ref(device);
                let state = train_state(
                    state,
                    &mut e.task,
                    &run,
                    &e.cfg.optim,
                    &toml,
                    &mut e.records,
                    devices,
                    None,
                )
                .await?;
                e.finished = state.plateau.stopped_at.is_some()
                    || state.step >= run.steps
                    || state.step == before;
                let model = state.model.valid();
                e.state = Some(state);
                let probe = e.probe()?;
                let rows = embed_in_chunks_async(&probe.views, |chunk| {
                    e.task.observer.embed(&model, chunk, device)
                })
                .await?;
                let x = linalg::from_rows(&rows)?;
                let (pts, pred) = turned_onto_f(&x, probe, max_points)?;
                frame.encoders[i].points = pts;
                frame.predicted[i] = pred;
            }
            frame.encoders[i].curve = curve(&e.records.0);
            frame.encoders[i].finished = e.finished;
        }
        Ok(frame)
    }
}

/// The evaluation records of a run as a curve.
fn curve(records: &[serde_json::Value]) -> Vec<CurvePoint> {
    records
        .iter()
        .filter_map(|r| {
            let e = r.get("eval")?;
            Some(CurvePoint {
                step: r.get("step")?.as_u64()? as usize,
                loss: r.get("loss")?.as_f64()?,
                cka_to_theory: e.get("cka_to_theory")?.as_f64()?,
                sin_theta_to_theory: e.get("sin_theta_to_theory")?.as_f64()?,
            })
        })
        .collect()
}

/// Learned embeddings X of the probe's augmented states, p-weighted, centred and whitened
/// (X_w = (X - mu) C^-1/2 with C = (X - mu)^T diag(p) (X - mu)), then turned onto F by the
/// best rotation (orthogonal Procrustes, [`linalg::procrustes::fit`]): when X spans F's
/// subspace, X_w Q = F exactly (F is whitened under p), so the points land on F's. Returns
/// the first two coordinates of X_w Q and of F for the first `max_points` rows.
///
/// # Shapes
/// `x [n, e]`, F `[n, d]` -> two lists of `min(n, max_points)` points
fn turned_onto_f(x: &Matrix, probe: &TheoryProbe, max_points: usize) -> Result<(Points, Points)> {
    let (n, e) = (x.nrows(), x.ncols());
    let p = &probe.theory.p;
    let f = &probe.theory.f;
    if p.len() != n || f.nrows() != n {
        return Err(Error::invalid(format!(
            "probe has {} states, embeddings have {n} rows",
            p.len()
        )));
    }
    let mu: Vec<f64> = (0..e)
        .map(|j| (0..n).map(|i| p[i] * x[(i, j)]).sum())
        .collect();
    let xc = Matrix::from_fn(n, e, |i, j| x[(i, j)] - mu[j]);
    let c = Matrix::from_fn(e, e, |a, b| {
        (0..n).map(|i| p[i] * xc[(i, a)] * xc[(i, b)]).sum()
    });
    let eig = linalg::sym_eigen(c.as_ref())?;
    let top = eig.values.iter().fold(0.0_f64, |m, v| m.max(*v));
    // C^-1/2 on the directions X uses (a collapsed direction is left at 0, not blown up).
    let inv_sqrt = Matrix::from_fn(e, e, |a, b| {
        (0..e)
            .filter(|&k| eig.values[k] > 1e-10 * top.max(1e-300))
            .map(|k| eig.vectors[(a, k)] * eig.vectors[(b, k)] / eig.values[k].sqrt())
            .sum()
    });
    let xw = &xc * &inv_sqrt;
    // Procrustes needs equal widths: pad the narrower side with zero columns.
    let d = f.ncols();
    let w = e.max(d);
    let pad =
        |m: &Matrix| Matrix::from_fn(n, w, |i, j| if j < m.ncols() { m[(i, j)] } else { 0.0 });
    let (xp, fp) = (pad(&xw), pad(f));
    let q = linalg::procrustes::fit(xp.as_ref(), fp.as_ref())?;
    let turned = linalg::procrustes::apply(xp.as_ref(), q.q.as_ref())?;
    let two = |m: &Matrix| -> Vec<(f64, f64)> {
        (0..n.min(max_points))
            .map(|i| (m[(i, 0)], if m.ncols() > 1 { m[(i, 1)] } else { 0.0 }))
            .collect()
    };
    Ok((two(&turned), two(&fp)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{CpuTrain, read_now};
    use crate::tasks::scene::train_scene;
    use crate::train::MemorySink;

    type Live = LiveRun<CpuTrain>;

    fn live(kind: ViewKind, budget: usize) -> Live {
        Live::new::<CpuTrain>(
            true,
            kind,
            LossKind::Spectral,
            0,
            budget,
            &Default::default(),
        )
        .unwrap()
    }

    fn advance(live: &mut Live, steps: usize, points: usize) -> LiveFrame {
        read_now("test", live.advance(steps, points, &Default::default()))
            .unwrap()
            .unwrap()
    }

    /// Three pieces of 20 steps give the same records and weights as one run of 60 (the
    /// training loop continued in memory; same backend, bit for bit).
    #[test]
    fn pieces_equal_one_run() {
        let device = Default::default();
        let mut live = live(ViewKind::Good, 60);
        let mut frame = LiveFrame::default();
        for _ in 0..3 {
            frame = advance(&mut live, 20, 50);
        }
        assert_eq!(live.steps_done(), [60, 60]);
        assert!(live.finished());
        // One run of the image encoder's config, uninterrupted.
        let cfg = SceneTrainConfig::from_toml("live", &live.config_toml(0).unwrap(), &[]).unwrap();
        let mut sink = MemorySink::default();
        train_scene::<CpuTrain>(&cfg, &live.world, None, None, &mut sink, &[device]).unwrap();
        let whole = curve(&sink.records);
        assert_eq!(whole.len(), frame.encoders[0].curve.len());
        for (a, b) in whole.iter().zip(&frame.encoders[0].curve) {
            assert_eq!(a.step, b.step);
            assert_eq!(a.cka_to_theory, b.cka_to_theory, "{a:?} vs {b:?}");
            assert_eq!(a.loss, b.loss, "{a:?} vs {b:?}");
        }
        assert_eq!(frame.encoders[0].points.len(), 50);
        assert_eq!(frame.predicted[0].len(), 50);
    }

    /// Good views with the spectral loss: the curve climbs towards F and the turned
    /// embeddings land near F's points.
    #[test]
    fn good_views_approach_the_prediction() {
        let mut live = live(ViewKind::Good, 300);
        let mut frame = LiveFrame::default();
        while !live.finished() {
            frame = advance(&mut live, 100, 400);
        }
        for (m, enc) in frame.encoders.iter().enumerate() {
            let first = enc.curve.first().unwrap().cka_to_theory;
            let last = enc.curve.last().unwrap().cka_to_theory;
            assert!(
                last > first && last > 0.8,
                "modality {m}: CKA {first} -> {last}"
            );
            let err: f64 = enc
                .points
                .iter()
                .zip(&frame.predicted[m])
                .map(|(a, b)| (a.0 - b.0).powi(2) + (a.1 - b.1).powi(2))
                .sum::<f64>()
                / enc.points.len() as f64;
            let scale: f64 = frame.predicted[m]
                .iter()
                .map(|b| b.0 * b.0 + b.1 * b.1)
                .sum::<f64>()
                / enc.points.len() as f64;
            assert!(
                err < 0.5 * scale,
                "modality {m}: mean squared distance {err} vs {scale}"
            );
        }
    }

    /// A change of views mid-run keeps the weights and trains on against the new
    /// prediction; the plateau rule starts over and the budget grows.
    #[test]
    fn views_change_mid_run() {
        let mut live = live(ViewKind::Good, 60);
        advance(&mut live, 40, 10);
        live.set_views(ViewKind::Bad).unwrap();
        assert_eq!(live.budget(), 100);
        let frame = advance(&mut live, 20, 10);
        assert_eq!(live.steps_done(), [60, 60]);
        assert!(!live.finished());
        assert_eq!(frame.encoders[0].curve.last().unwrap().step, 50);
    }
}
