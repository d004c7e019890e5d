//! Two JEPAs that train in pieces while someone watches (the playground's live lab,
//! issue 21): the demo's symbol encoders — one per modality, trained *separately* — on the
//! demo's scene world, advanced a few steps at a time so a page can draw between pieces,
//! pause, resume, or start over with other views.
//!
//! Each piece is the shared training loop ([`train_scene`]) resumed from the previous
//! piece's in-memory checkpoint and stopped early with `run.stop_at`, which leaves the
//! learning-rate schedule and the plateau rule as in one uninterrupted run: the pieces
//! add up to exactly the run `prh-native train --config` does with [`LiveRun::config_toml`]
//! on the same backend (test: `pieces_equal_one_run`). Browser-safe: no files, no clocks,
//! one replica (no threads).

use crate::linalg::{self, Matrix};
use crate::scene::theory::TheoryProbe;
use crate::scene::{Modality, SceneWorld};
use crate::tasks::scene::{Observation, SceneTrainConfig, train_scene};
use crate::theory::view_kind::ViewKind;
use crate::train::MemorySink;
use crate::train::checkpoint::Checkpoint;
use crate::train::config::LossKind;
use crate::{Error, Result};
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

/// One encoder's run: its config, its memory sink (records, latest checkpoint) and probe.
struct Encoder {
    cfg: SceneTrainConfig,
    sink: MemorySink,
    probe: TheoryProbe,
    done: usize,
    finished: bool,
}

/// A pair of symbol encoders on the demo's world (seed `seed`), trained piece by piece.
pub struct LiveRun {
    world: SceneWorld,
    encoders: [Encoder; 2],
    /// The step budget a run starts with (also what a change of views adds).
    budget: usize,
}

impl LiveRun {
    /// The demo's symbolic image and caption runs for `kind` views and `loss`, with one
    /// replica each and an evaluation every [`EVAL_EVERY`] steps, on the demo's world
    /// (192 states, d = 11) or, `small`, the quick demo's (72 states, d = 8); `budget`
    /// caps the steps (0: 2,000, the demo's; the plateau rule usually stops earlier).
    pub fn new(
        small: bool,
        kind: ViewKind,
        loss: LossKind,
        seed: u64,
        budget: usize,
    ) -> Result<LiveRun> {
        let demo = if small {
            DemoConfig::quick(seed)
        } else {
            DemoConfig::full(seed)
        };
        let budget = if budget > 0 { budget } else { 2000 };
        let world = SceneWorld::new(demo.image.world.clone())?;
        let make = |m: Modality| -> Result<Encoder> {
            let mut cfg = demo.run_config(m, kind, loss, Observation::Symbolic);
            // The browser has no threads: one replica (the batch loss is the same, to
            // float rounding, as the demo's two; crate::train::data_parallel).
            cfg.run.data_parallel = 1;
            cfg.run.eval_every = EVAL_EVERY;
            cfg.run.log_every = EVAL_EVERY;
            cfg.run.steps = budget;
            // The full demo's plateau rule (the quick demo's window of 10 is for tests).
            cfg.run.plateau_window = 50;
            let probe = cfg.probe(&world)?;
            Ok(Encoder {
                cfg,
                sink: MemorySink::default(),
                probe,
                done: 0,
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
            e.cfg.run.objective = kind;
            e.probe = e.cfg.probe(&self.world)?;
            e.cfg.run.steps = e.done + self.budget;
            e.finished = false;
            for (_, ck) in &mut e.sink.checkpoints {
                ck.meta.plateau = Default::default();
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
        [self.encoders[0].done, self.encoders[1].done]
    }

    /// Whether both encoders have stopped (plateau or budget).
    pub fn finished(&self) -> bool {
        self.encoders.iter().all(|e| e.finished)
    }

    /// Trains each unfinished encoder `steps` more steps (fewer at the end of its budget
    /// or on its plateau) on `device`, and returns what to draw (`max_points` rows).
    pub fn advance<B: AutodiffBackend>(
        &mut self,
        steps: usize,
        max_points: usize,
        device: &B::Device,
    ) -> Result<LiveFrame> {
        let mut frame = LiveFrame::default();
        for (i, e) in self.encoders.iter_mut().enumerate() {
            if !e.finished && steps > 0 {
                let mut cfg = e.cfg.clone();
                cfg.run.stop_at = (e.done + steps).min(cfg.run.steps);
                // Cloned: the loop takes the sink mutably while it reads the checkpoint.
                let resume: Option<Checkpoint> = latest(&e.sink).cloned();
                let trained = train_scene::<B>(
                    &cfg,
                    &self.world,
                    None,
                    resume.as_ref(),
                    &mut e.sink,
                    std::slice::from_ref(device),
                )?;
                let stopped = latest(&e.sink).is_some_and(|c| c.meta.plateau.stopped_at.is_some());
                e.finished = stopped || trained.steps >= cfg.run.steps || trained.steps == e.done;
                e.done = trained.steps;
                let rows = trained.model.embed(&e.probe.views, device)?;
                let x = linalg::from_rows(&rows)?;
                let (pts, pred) = turned_onto_f(&x, &e.probe, max_points)?;
                frame.encoders[i].points = pts;
                frame.predicted[i] = pred;
            }
            frame.encoders[i].curve = curve(&e.sink);
            frame.encoders[i].finished = e.finished;
        }
        Ok(frame)
    }
}

/// The sink's latest checkpoint, if any.
fn latest(sink: &MemorySink) -> Option<&Checkpoint> {
    sink.checkpoints
        .iter()
        .find(|(n, _)| n == "latest")
        .map(|(_, c)| c)
}

/// The evaluation records of a sink as a curve.
fn curve(sink: &MemorySink) -> Vec<CurvePoint> {
    sink.records
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
    use crate::backend::CpuTrain;

    /// Three pieces of 20 steps give the same records and weights as one run of 60 (the
    /// training loop resumed from memory; same backend, bit for bit).
    #[test]
    fn pieces_equal_one_run() {
        let device = Default::default();
        let mut live = LiveRun::new(true, ViewKind::Good, LossKind::Spectral, 0, 60).unwrap();
        let mut frame = LiveFrame::default();
        for _ in 0..3 {
            frame = live.advance::<CpuTrain>(20, 50, &device).unwrap();
        }
        assert_eq!(live.steps_done(), [60, 60]);
        assert!(live.finished());
        // One run of the image encoder's config, uninterrupted.
        let cfg = SceneTrainConfig::from_toml("live", &live.config_toml(0).unwrap(), &[]).unwrap();
        let mut sink = MemorySink::default();
        train_scene::<CpuTrain>(&cfg, &live.world, None, None, &mut sink, &[device]).unwrap();
        let whole = curve(&sink);
        assert_eq!(whole.len(), frame.encoders[0].curve.len());
        for (a, b) in whole.iter().zip(&frame.encoders[0].curve) {
            assert_eq!(a.step, b.step);
            assert!(
                (a.cka_to_theory - b.cka_to_theory).abs() < 1e-9,
                "{a:?} vs {b:?}"
            );
            assert!(
                (a.loss - b.loss).abs() < 1e-9 * a.loss.abs().max(1.0),
                "{a:?} vs {b:?}"
            );
        }
        assert_eq!(frame.encoders[0].points.len(), 50);
        assert_eq!(frame.predicted[0].len(), 50);
    }

    /// Good views with the spectral loss: the curve climbs towards F and the turned
    /// embeddings land near F's points.
    #[test]
    fn good_views_approach_the_prediction() {
        let device = Default::default();
        let mut live = LiveRun::new(true, ViewKind::Good, LossKind::Spectral, 0, 300).unwrap();
        let mut frame = LiveFrame::default();
        while !live.finished() {
            frame = live.advance::<CpuTrain>(100, 400, &device).unwrap();
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
}
