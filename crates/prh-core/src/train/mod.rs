//! **Wing `train`** (paper §4): the loop, the [`TrainTask`] trait, the JEPA losses
//! (SIGReg, spectral contrastive), data-parallel replicas, AdamW, the schedule and
//! checkpoints. Knows no task: tasks plug in through [`TrainTask`].
//! May use: `linalg`, `theory`, `scene`, `backend`, `models`.
//!
//! The training loop shared by every JEPA of prh (paper section 4, "Recipe"): text
//! encoders (good / bad views, next-token) and the scene demo's image encoder.
//!
//! # How to plug a model in
//!
//! Implement [`TrainTask`] for your task and call [`train`]:
//!
//! ```ignore
//! use prh_core::train::{train, jepa_loss, JepaLoss, StepOutput, TrainTask, RunSink, MemorySink};
//!
//! struct MyTask { /* data, view sampler, config ... */ }
//! impl<B: AutodiffBackend> TrainTask<B> for MyTask {
//!     type Model = MyEncoder<B>;                        // any #[derive(Module)]
//!     fn init_model(&self, device: &B::Device) -> Result<MyEncoder<B>> { .. }
//!     fn step(&mut self, model: &MyEncoder<B>, step: usize, device: &B::Device)
//!         -> Result<StepOutput<B>> {
//!         // 1. views: draw them from crate::rng::generator(seed, Stream::Views, step)
//!         // 2. forward: one [n, d] embedding per view, globals first
//!         let views: Vec<Tensor<B, 2>> = ...;
//!         // 3-4. invariance + lambda * SIGReg (directions resampled per step, seeded)
//!         let l: JepaLoss<B> = jepa_loss(&views, n_global, &loss_cfg, seed, step, device)?;
//!         Ok(l.into_step_output(tokens_in_this_step))
//!     }
//! }
//! let summary = train::<Autodiff<NdArray>, _>(&mut task, &cfg.run, &cfg.optim,
//!     &cfg.to_toml()?, None, &mut sink, &device)?;
//! ```
//!
//! [`train`] owns everything else, in numbered stages per step: (1-3) the task's views,
//! forward and losses, (4) NaN / collapse guard, (5) backward, (6) global gradient-norm
//! clipping, (7) AdamW step at the warmup+cosine rate, (8) metrics line, evaluation,
//! `best` / `latest` checkpoints through a [`RunSink`] (files natively, memory in the
//! browser). With `run.data_parallel = W > 1`, stages 1-5 run on `W` model replicas, each
//! on its shard of the batch, and their gradients are summed on the main device
//! ([`crate::train::data_parallel`], [`train_on_devices`]); the loss is still the whole batch's.
//! Resuming from a [`Checkpoint`] continues bit-exactly on CPU because every
//! random draw is a function of `(seed, stream, step)` ([`crate::rng`]) and the schedule
//! is a function of the step.

pub mod adamw;
pub mod checkpoint;
pub mod config;
pub mod data_parallel;
pub mod schedule;
pub mod sigreg;
pub mod spectral_loss;

use burn::module::{AutodiffModule, ModuleVisitor, Param};
use burn::optim::{GradientsParams, Optimizer};
use burn::prelude::*;
use burn::tensor::backend::AutodiffBackend;

use crate::rng::{Stream, derive_seed};
use crate::train::checkpoint::{
    Checkpoint, Plateau, module_from_bytes, module_to_bytes, record_from_bytes, record_to_bytes,
};
use crate::train::config::LossConfig;
use crate::train::config::LossKind;
use crate::train::config::OptimConfig;
use crate::train::config::RunConfig;
use crate::train::data_parallel::{Nodes, Shard, ShardOutput, parallel_step};
use crate::train::schedule::WarmupCosine;
use crate::train::sigreg::{Quadrature, SigregTensors, random_directions, sigreg_tensor};
use crate::train::spectral_loss::spectral_loss;
use crate::{Error, Result};

/// What one step of a task computed (stages 1-3).
pub struct StepOutput<B: Backend> {
    /// The differentiable total loss, `[1]`.
    pub loss: Tensor<B, 1>,
    /// Named loss terms to log (`[1]` each), e.g. `invariance`, `sigreg`, `ce`.
    pub terms: Vec<(&'static str, Tensor<B, 1>)>,
    /// Tokens (or patches) processed this step, for throughput.
    pub items: usize,
    /// Mean per-dimension std of the embeddings across the batch, for the collapse guard.
    pub embedding_std: Option<Tensor<B, 1>>,
}

/// A model plus its data: what [`train`] optimises.
pub trait TrainTask<B: AutodiffBackend> {
    /// The module trained.
    type Model: AutodiffModule<B>;
    /// A freshly initialised model (the backend is seeded from the run seed beforehand).
    fn init_model(&self, device: &B::Device) -> Result<Self::Model>;
    /// Stages 1-3 of step `step`: views, forward, losses.
    fn step(
        &mut self,
        model: &Self::Model,
        step: usize,
        device: &B::Device,
    ) -> Result<StepOutput<B>>;
    /// Work of a data-parallel step that needs `&mut self` (loading step `step`'s batch
    /// from a stream), done once on the calling thread before the replicas' forwards
    /// ([`TrainTask::shard_step`], which may run on several threads at once).
    fn prepare_step(&mut self, _step: usize) -> Result<()> {
        Ok(())
    }
    /// Stages 1-2 for one data-parallel worker ([`crate::train::data_parallel`]): the views of
    /// `shard`'s part of step `step`'s batch (drawn from the same seeded stream as the
    /// whole batch) and their forward pass on `device`, as loss pieces that combine into
    /// the whole batch's loss. [`TrainTask::prepare_step`] has run for `step`; the
    /// replicas call this concurrently, hence `&self`. Tasks without one refuse
    /// `run.data_parallel > 1`.
    fn shard_step(
        &self,
        _model: &Self::Model,
        _step: usize,
        shard: Shard,
        _device: &B::Device,
    ) -> Result<ShardOutput<B>> {
        Err(Error::invalid(format!(
            "run.data_parallel = {}: this task has no data-parallel step (the text JEPA and \
             next-token tasks have one); set run.data_parallel = 1",
            shard.count
        )))
    }
    /// Optional evaluation of the frozen model; named scores (higher is better for
    /// [`TrainTask::best_metric`]). Async so that a task can await its read-backs on
    /// WebGPU in a browser; the loop awaits it on the one thread it runs on, so the
    /// future need not be `Send`.
    #[allow(async_fn_in_trait)]
    async fn evaluate(
        &mut self,
        _model: &<Self::Model as AutodiffModule<B>>::InnerModule,
        _step: usize,
    ) -> Result<Vec<(String, f64)>> {
        Ok(Vec::new())
    }
    /// The evaluation score that selects the `best` checkpoint, if any.
    fn best_metric(&self) -> Option<&str> {
        None
    }
    /// The model once its run is complete (its last step done, or its plateau reached),
    /// before the last evaluation and checkpoint: a closed-form last layer, say. Called
    /// again on a complete run that is resumed (so it must be deterministic); by default
    /// the model as trained.
    fn finish(&self, model: Self::Model, _device: &B::Device) -> Result<Self::Model> {
        Ok(model)
    }
}

/// Where a run's outputs go: files natively (`native/src/cmd/train.rs`), memory in tests
/// and the browser ([`MemorySink`]).
pub trait RunSink {
    /// Seconds since an arbitrary origin (wall clock; only used for throughput).
    fn now(&self) -> f64;
    /// Appends one metrics record (one JSON line).
    fn log(&mut self, record: &serde_json::Value) -> Result<()>;
    /// Stores a checkpoint under `name` (`latest` or `best`), atomically.
    fn save(&mut self, name: &str, checkpoint: &Checkpoint) -> Result<()>;
    /// Progress report after each step (progress bar or log line).
    fn progress(&mut self, _step: usize, _total: usize, _loss: f64) {}
    /// Whether the loop should write checkpoints here at all (false: records only, as the
    /// browser's live lab, which keeps its [`TrainState`] in memory).
    fn keeps_checkpoints(&self) -> bool {
        true
    }
}

/// A [`RunSink`] that keeps everything in memory (tests, browser).
#[derive(Debug, Default)]
pub struct MemorySink {
    /// Metrics records in order.
    pub records: Vec<serde_json::Value>,
    /// Last checkpoint saved under each name.
    pub checkpoints: Vec<(String, Checkpoint)>,
}

impl RunSink for MemorySink {
    fn now(&self) -> f64 {
        0.0
    }
    fn log(&mut self, record: &serde_json::Value) -> Result<()> {
        self.records.push(record.clone());
        Ok(())
    }
    fn save(&mut self, name: &str, checkpoint: &Checkpoint) -> Result<()> {
        self.checkpoints.retain(|(n, _)| n != name);
        self.checkpoints
            .push((name.to_string(), checkpoint.clone()));
        Ok(())
    }
}

/// What [`train`] returns.
#[derive(Debug, Clone)]
pub struct TrainSummary<M> {
    /// The trained model.
    pub model: M,
    /// Steps done in total (including those before a resume).
    pub steps: usize,
    /// Last logged total loss.
    pub last_loss: f64,
    /// Best evaluation score, if evaluated.
    pub best: Option<f64>,
}

/// The JEPA losses of one step.
pub struct JepaLoss<B: Backend> {
    /// The loss optimised, `[1]`: `invariance + lambda * sigreg` (`loss.kind = "sigreg"`)
    /// or the spectral loss `-2 positive + 2 mean + second_moment` (`"spectral"`).
    pub total: Tensor<B, 1>,
    /// Named terms to log, `[1]` each: `invariance` (mean over views of
    /// `||z_v - mean_g z_g||^2 / d`, always), then `sigreg`, or `positive`, `mean` and
    /// `second_moment` ([`crate::train::spectral_loss::SpectralLoss`]).
    pub terms: Vec<(&'static str, Tensor<B, 1>)>,
    /// Mean per-dimension std of the embeddings over the batch, `[1]`.
    pub embedding_std: Tensor<B, 1>,
}

impl<B: Backend> JepaLoss<B> {
    /// Packs the losses as a [`StepOutput`] processing `items` tokens.
    pub fn into_step_output(self, items: usize) -> StepOutput<B> {
        StepOutput {
            loss: self.total,
            terms: self.terms,
            items,
            embedding_std: Some(self.embedding_std),
        }
    }
}

/// The JEPA loss on the embeddings of `V` views (the first `n_global` are global), by
/// `loss.kind`:
///
/// - `sigreg` (LeJEPA, paper section 4): `c = mean_{g < n_global} z_g`;
///   `invariance = mean_v mean_i ||z_v,i - c_i||^2 / d`; `SIGReg = mean_v SIGReg(z_v)` with
///   `loss.slices` directions drawn from the seeded stream at `step`;
///   `total = invariance + loss.lambda * SIGReg`.
/// - `spectral` (the theorem's objective, [`crate::train::spectral_loss`]): every pair of the `V`
///   views of a row is a positive pair, rows are independent draws;
///   `total = -2 E[z^T z+] + 2 ||E z||^2 + E[(z^T z')^2]`, estimated without bias.
///
/// # Shapes
/// `views`: `V` tensors `[n, d]` -> scalars `[1]`.
pub fn jepa_loss<B: Backend>(
    views: &[Tensor<B, 2>],
    n_global: usize,
    loss: &LossConfig,
    seed: u64,
    step: usize,
    device: &B::Device,
) -> Result<JepaLoss<B>> {
    let JepaPieces { stacked, sq_dev } = jepa_pieces("jepa_loss", views, n_global)?;
    let [v, n, d] = stacked.dims();
    let invariance = sq_dev.mean();
    let embedding_std = stacked.clone().reshape([v * n, d]).var(0).sqrt().mean();
    let (total, mut terms) = match loss.kind {
        LossKind::Sigreg => {
            let st = sigreg_tensors(loss, d, seed, step, device)?;
            let sig = views
                .iter()
                .map(|z| sigreg_tensor(z.clone(), &st))
                .reduce(|a, b| a + b);
            // Invariant: `views` is non-empty (checked above), so the reduction has a value.
            let sigreg = sig
                .unwrap_or_else(|| Tensor::zeros([1], device))
                .div_scalar(v as f64);
            let total = invariance.clone() + sigreg.clone().mul_scalar(loss.lambda);
            (total, vec![("sigreg", sigreg)])
        }
        LossKind::Spectral => {
            let s = spectral_loss(stacked)?;
            (
                s.total,
                vec![
                    ("positive", s.positive),
                    ("mean", s.mean),
                    ("second_moment", s.second),
                ],
            )
        }
    };
    terms.insert(0, ("invariance", invariance));
    Ok(JepaLoss {
        total,
        terms,
        embedding_std,
    })
}

/// What every JEPA loss starts from (see [`jepa_pieces`]).
pub(crate) struct JepaPieces<B: Backend> {
    /// The views stacked, `[V, n, d]`.
    pub stacked: Tensor<B, 3>,
    /// `(z_v - c)^2` with `c` the mean of the global views, `[V, n, d]`.
    pub sq_dev: Tensor<B, 3>,
}

/// The pieces shared by [`jepa_loss`] and the data-parallel reduction
/// (`crate::train::data_parallel`): the stacked views and their squared deviations from
/// `c = mean_{g < n_global} z_g`.
///
/// Errors, naming `what`: no views, `n_global` outside `1..=V`, views of different shapes.
///
/// # Shapes
/// `views`: `V` tensors `[n, d]` -> `stacked`, `sq_dev` `[V, n, d]`.
pub(crate) fn jepa_pieces<B: Backend>(
    what: &str,
    views: &[Tensor<B, 2>],
    n_global: usize,
) -> Result<JepaPieces<B>> {
    if views.is_empty() || n_global == 0 || n_global > views.len() {
        return Err(Error::invalid(format!(
            "{what}: {} views with n_global = {n_global}",
            views.len()
        )));
    }
    let [n, d] = views[0].dims();
    if let Some(z) = views.iter().find(|z| z.dims() != [n, d]) {
        return Err(Error::invalid(format!(
            "{what}: views of different shapes ({:?} and {:?})",
            [n, d],
            z.dims()
        )));
    }
    let stacked = Tensor::stack::<3>(views.to_vec(), 0); // (V, n, d)
    let centre = stacked.clone().narrow(0, 0, n_global).mean_dim(0); // (1, n, d)
    let sq_dev = (stacked.clone() - centre).powi_scalar(2);
    Ok(JepaPieces { stacked, sq_dev })
}

/// SIGReg's directions (drawn from the seeded stream at `step`) and quadrature for
/// embeddings of width `d`, on `device`.
pub(crate) fn sigreg_tensors<B: Backend>(
    loss: &LossConfig,
    d: usize,
    seed: u64,
    step: usize,
    device: &B::Device,
) -> Result<SigregTensors<B>> {
    let q = Quadrature::new(loss.t_max, loss.knots)?;
    let dirs = random_directions(d, loss.slices, seed, step as u64);
    Ok(SigregTensors::<B>::new(&dirs, d, &q, device))
}

/// Reads a `[1]` tensor as f64 (one device sync).
pub fn scalar<B: Backend>(t: Tensor<B, 1>) -> f64 {
    t.into_scalar().elem::<f64>()
}

/// Reads `[1]` tensors as f64 in one transaction, awaiting the device: a backend that
/// cannot block (WebGPU in a browser) is read this way, and every other backend gives the
/// same values as [`scalar`] on each tensor.
pub async fn scalars_async<B: Backend>(tensors: Vec<Tensor<B, 1>>) -> Result<Vec<f64>> {
    let mut tr = burn::tensor::Transaction::default();
    for t in tensors {
        tr = tr.register(t);
    }
    let data = tr
        .execute_async()
        .await
        .map_err(|e| Error::Numerical(format!("reading the step's losses back: {e:?}")))?;
    data.into_iter()
        .map(|d| {
            d.iter::<f64>()
                .next()
                .ok_or_else(|| Error::Numerical("reading the step's losses back: empty".into()))
        })
        .collect()
}

/// Sums squared gradients of every float parameter on the device.
struct GradSquares<'a, B: AutodiffBackend> {
    grads: &'a GradientsParams,
    acc: Option<Tensor<B::InnerBackend, 1>>,
}

impl<B: AutodiffBackend> ModuleVisitor<B> for GradSquares<'_, B> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        if let Some(g) = self.grads.get::<B::InnerBackend, D>(param.id) {
            let s = g.powi_scalar(2).sum();
            self.acc = Some(match self.acc.take() {
                Some(a) => a + s,
                None => s,
            });
        }
    }
}

/// Multiplies every gradient by a constant.
struct GradScale<'a> {
    grads: &'a mut GradientsParams,
    factor: f64,
}

impl<B: AutodiffBackend> ModuleVisitor<B> for GradScale<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        if let Some(g) = self.grads.remove::<B::InnerBackend, D>(param.id) {
            self.grads
                .register::<B::InnerBackend, D>(param.id, g.mul_scalar(self.factor));
        }
    }
}

/// Global gradient-norm clipping (as PyTorch's `clip_grad_norm_`): with
/// `g = sqrt(sum_p ||grad_p||^2)`, scales every gradient by `max_norm / g` when
/// `g > max_norm` (`max_norm <= 0` disables). Returns `g` before clipping.
///
/// burn's own `GradientClipping::Norm` clips each parameter separately; the paper's
/// recipe (and PyTorch's) clips the global norm, hence this visitor.
pub fn clip_global_norm<B: AutodiffBackend, M: AutodiffModule<B>>(
    model: &M,
    grads: &mut GradientsParams,
    max_norm: f64,
) -> Result<f64> {
    crate::backend::read_now(
        "clipping the gradient norm",
        clip_global_norm_async::<B, M>(model, grads, max_norm),
    )?
}

/// [`clip_global_norm`], awaiting the norm's read-back (WebGPU in a browser cannot block).
pub async fn clip_global_norm_async<B: AutodiffBackend, M: AutodiffModule<B>>(
    model: &M,
    grads: &mut GradientsParams,
    max_norm: f64,
) -> Result<f64> {
    let mut sq = GradSquares::<B> { grads, acc: None };
    model.visit(&mut sq);
    let norm = match sq.acc {
        Some(a) => scalars_async(vec![a]).await?[0].sqrt(),
        None => 0.0,
    };
    if max_norm > 0.0 && norm > max_norm && norm.is_finite() {
        let mut scale = GradScale {
            grads,
            factor: max_norm / norm,
        };
        model.visit::<GradScale<'_>>(&mut scale);
    }
    Ok(norm)
}

/// Stops training on a non-finite loss or collapsed embeddings (mean std below
/// `collapse_std`), naming the step.
fn guard(step: usize, loss: f64, std: Option<f64>, collapse_std: f64) -> Result<()> {
    if !loss.is_finite() {
        return Err(Error::Numerical(format!(
            "step {step}: loss is {loss}; training stopped, the last good checkpoint is kept"
        )));
    }
    if let Some(s) = std.filter(|s| *s < collapse_std) {
        return Err(Error::Numerical(format!(
            "step {step}: embeddings collapsed (mean std {s:.3e} < run.collapse_std {collapse_std:.1e}); \
             training stopped, the last good checkpoint is kept"
        )));
    }
    Ok(())
}

/// Runs `run.steps` optimiser steps of `task` (stages in the module docs), starting
/// from `resume` if given. `config_toml` is stored in every checkpoint. With
/// `run.data_parallel = W > 1` the `W` replicas all live on `device` (the CPU backend
/// has one device); [`train_on_devices`] spreads them over several.
///
/// Errors (after keeping the last good checkpoint untouched): a non-finite loss or
/// gradient norm, or embeddings whose mean std fell below `run.collapse_std`.
#[allow(clippy::too_many_arguments)]
pub fn train<B: AutodiffBackend, T: TrainTask<B> + Sync>(
    task: &mut T,
    run: &RunConfig,
    optim: &OptimConfig,
    config_toml: &str,
    resume: Option<&Checkpoint>,
    sink: &mut dyn RunSink,
    device: &B::Device,
) -> Result<TrainSummary<T::Model>> {
    let devices = vec![device.clone(); run.data_parallel.max(1)];
    train_on_devices(task, run, optim, config_toml, resume, sink, &devices)
}

/// [`train`] with one model replica per entry of `devices` (data-parallel when there are
/// several: [`crate::train::data_parallel`]). `devices[0]` holds the model, the optimiser state
/// and the checkpoints; `devices.len()` must equal `run.data_parallel`.
///
/// With one device the step is the single-device step (stages 1-5 in the module docs);
/// with `W` it is [`parallel_step`]: the same batch loss, its gradient summed over the
/// replicas by burn's `GradientsParams::to_device` + `GradientsAccumulator`, then one
/// clipped AdamW step.
#[allow(clippy::too_many_arguments)]
pub fn train_on_devices<B: AutodiffBackend, T: TrainTask<B> + Sync>(
    task: &mut T,
    run: &RunConfig,
    optim: &OptimConfig,
    config_toml: &str,
    resume: Option<&Checkpoint>,
    sink: &mut dyn RunSink,
    devices: &[B::Device],
) -> Result<TrainSummary<T::Model>> {
    train_on_nodes(task, run, optim, config_toml, resume, sink, devices, None)
}

/// [`train_on_devices`] as one node of a multi-node run ([`Nodes`]; `None`: this process
/// alone): every node runs the same loop on its shards of each batch, the batch
/// statistics and gradients are summed over the nodes
/// ([`crate::train::data_parallel`]), so each node's model follows the single-process
/// run. Only node 0 evaluates; whether a node saves checkpoints is its `sink`'s choice
/// (prh-native: node 0 writes them, once).
///
/// The loop itself is [`train_state`], run to completion here (a backend's read-backs
/// block natively; in a browser only the CPU backend's complete at once, and WebGPU
/// needs [`train_state`] awaited).
#[allow(clippy::too_many_arguments)]
pub fn train_on_nodes<B: AutodiffBackend, T: TrainTask<B> + Sync>(
    task: &mut T,
    run: &RunConfig,
    optim: &OptimConfig,
    config_toml: &str,
    resume: Option<&Checkpoint>,
    sink: &mut dyn RunSink,
    devices: &[B::Device],
    nodes: Option<&dyn Nodes<B::InnerBackend>>,
) -> Result<TrainSummary<T::Model>> {
    check_devices::<B>(run, devices, nodes.is_some())?;
    let state = TrainState::new(task, run, optim, resume, &devices[0])?;
    let state = crate::backend::read_now(
        "training",
        train_state(state, task, run, optim, config_toml, sink, devices, nodes),
    )??;
    Ok(TrainSummary {
        model: state.model,
        steps: state.step,
        last_loss: state.last_loss,
        best: state.best,
    })
}

/// One device per replica, and replicas or nodes only where the backend allows them.
fn check_devices<B: AutodiffBackend>(
    run: &RunConfig,
    devices: &[B::Device],
    multi_node: bool,
) -> Result<()> {
    if run.data_parallel == 0 || devices.len() != run.data_parallel {
        return Err(Error::invalid(format!(
            "run.data_parallel = {}: expected at least 1, and one device per replica \
             ({} device(s) given)",
            run.data_parallel,
            devices.len()
        )));
    }
    data_parallel::check_backend::<B>(&devices[0], devices.len(), multi_node)
}

/// The AdamW of a model `M` on `B` (burn's adaptor around prh's fused AdamW).
type Adam<B, M> = burn::optim::adaptor::OptimizerAdaptor<crate::train::adamw::AdamW, M, B>;

/// A run between two calls of the loop: the model, its optimiser state, the steps done,
/// the best evaluation so far and the plateau rule's windows. What a [`Checkpoint`]
/// stores, kept in memory instead: the browser's live lab holds one between the pieces
/// it trains (a WebGPU model cannot be written to bytes without blocking), and
/// [`train_on_nodes`] builds one per call.
pub struct TrainState<B: AutodiffBackend, M: AutodiffModule<B>> {
    /// The model being trained.
    pub model: M,
    optimizer: Adam<B, M>,
    /// Steps done (including those before a resume).
    pub step: usize,
    /// Best evaluation score so far, if evaluated.
    pub best: Option<f64>,
    /// The plateau rule's state.
    pub plateau: Plateau,
    /// The last step's total loss (NaN before the first step of this state).
    pub last_loss: f64,
}

impl<B: AutodiffBackend, M: AutodiffModule<B>> TrainState<B, M> {
    /// `task`'s model, freshly initialised from `run.seed` on `device`, with a fresh
    /// AdamW of `optim`'s moments, or both as stored in `resume`.
    pub fn new<T: TrainTask<B, Model = M>>(
        task: &T,
        run: &RunConfig,
        optim: &OptimConfig,
        resume: Option<&Checkpoint>,
        device: &B::Device,
    ) -> Result<Self> {
        let mut model =
            crate::backend::seeded::<B, _>(device, derive_seed(run.seed, Stream::Init, 0), || {
                let model = task.init_model(device)?;
                crate::backend::materialise::<B, _>(&model);
                Ok::<_, Error>(model)
            })?;
        let mut optimizer = crate::train::adamw::init::<B, M>(crate::train::adamw::Hyper {
            beta_1: optim.beta1 as f32,
            beta_2: optim.beta2 as f32,
            epsilon: 1e-8,
            weight_decay: optim.weight_decay as f32,
        });
        let (mut step, mut best, mut plateau) = (0, None, Plateau::default());
        if let Some(ck) = resume {
            model = module_from_bytes::<B, _>(model, &ck.model, device)?;
            optimizer = optimizer.load_record(record_from_bytes::<B, _>(&ck.optim, device)?);
            step = ck.meta.step;
            best = ck.meta.best;
            plateau = ck.meta.plateau.clone();
        }
        Ok(TrainState {
            model,
            optimizer,
            step,
            best,
            plateau,
            last_loss: f64::NAN,
        })
    }

    /// The state as a checkpoint of a run with `seed` and `config_toml` (reads every
    /// weight back, so it blocks: not for WebGPU in a browser).
    pub fn checkpoint(&self, seed: u64, config_toml: &str) -> Result<Checkpoint> {
        let m = module_to_bytes::<B, _>(&self.model)?;
        let o = record_to_bytes::<B, _>(self.optimizer.to_record())?;
        let mut ck = Checkpoint::new(self.step, seed, config_toml.to_string(), self.best, m, o);
        ck.meta.plateau = self.plateau.clone();
        Ok(ck)
    }
}

/// The training loop: steps `state.step .. run.steps` of `task` (stages in the module
/// docs; `run.stop_at` ends this call early without changing the schedule), returning
/// the state it reached. Every read-back is awaited, so it runs on WebGPU in a browser;
/// [`train_on_nodes`] runs it to completion natively. `config_toml` is stored in every
/// checkpoint; a sink whose [`RunSink::keeps_checkpoints`] is false gets none.
///
/// Errors (after keeping the last good checkpoint untouched): a non-finite loss or
/// gradient norm, or embeddings whose mean std fell below `run.collapse_std`. The state is
/// consumed then: go on from the last checkpoint, or start again.
#[allow(clippy::too_many_arguments)]
pub async fn train_state<B: AutodiffBackend, T: TrainTask<B> + Sync>(
    mut state: TrainState<B, T::Model>,
    task: &mut T,
    run: &RunConfig,
    optim: &OptimConfig,
    config_toml: &str,
    sink: &mut dyn RunSink,
    devices: &[B::Device],
    nodes: Option<&dyn Nodes<B::InnerBackend>>,
) -> Result<TrainState<B, T::Model>> {
    check_devices::<B>(run, devices, nodes.is_some())?;
    let lead = nodes.is_none_or(|n| n.node().index == 0);
    let device = &devices[0];
    let start = state.step;
    let sched = WarmupCosine {
        peak: optim.lr,
        floor: optim.min_lr,
        warmup: optim.warmup_steps,
        total: run.steps,
    };
    let (mut t_mark, mut items_since) = (sink.now(), 0usize);
    // `stop_at` ends this invocation early (with a checkpoint) without changing the schedule.
    let mut end = if run.stop_at > 0 {
        run.stop_at.min(run.steps)
    } else {
        run.steps
    };
    // A run that stopped on its plateau is finished: resuming it trains no further.
    if let Some(stopped) = state.plateau.stopped_at {
        end = stopped.min(end);
    }
    for step in start..end {
        let TrainState {
            mut model,
            mut optimizer,
            ..
        } = state;
        // 1-5. Views, forward and losses (the task's part), guards, backward.
        let (loss, terms, std, mut grads) = if devices.len() == 1 && nodes.is_none() {
            let out = task.step(&model, step, device)?;
            items_since += out.items;
            // 4. Guards. The loss is read before backward so a NaN never reaches the weights.
            let names: Vec<&str> = out.terms.iter().map(|(k, _)| *k).collect();
            let mut read = vec![out.loss.clone()];
            read.extend(out.embedding_std.clone());
            read.extend(out.terms.into_iter().map(|(_, t)| t));
            let values = scalars_async(read).await?;
            let loss = values[0];
            let std = out.embedding_std.as_ref().map(|_| values[1]);
            let first_term = 1 + usize::from(std.is_some());
            guard(step, loss, std, run.collapse_std)?;
            let terms: Vec<(&str, f64)> = names
                .into_iter()
                .zip(values[first_term..].iter().copied())
                .collect();
            // 5. Backward.
            let grads = GradientsParams::from_grads(out.loss.backward(), &model);
            (loss, terms, std, grads)
        } else {
            // W replicas: shard forwards, batch statistics, backward per replica, gradients
            // summed on devices[0]. The guards run before the optimiser touches the weights.
            let p = parallel_step(task, &model, step, devices, nodes)?;
            items_since += p.items;
            guard(step, p.loss, p.embedding_std, run.collapse_std)?;
            (p.loss, p.terms, p.embedding_std, p.grads)
        };
        // 6. Global gradient-norm clipping.
        let grad_norm = clip_global_norm_async::<B, _>(&model, &mut grads, optim.grad_clip).await?;
        if !grad_norm.is_finite() {
            return Err(Error::Numerical(format!(
                "step {step}: gradient norm is {grad_norm}; training stopped, the last good checkpoint is kept"
            )));
        }
        // 7. AdamW step at the scheduled rate.
        let lr = sched.lr(step);
        model = optimizer.step(lr, model, grads);
        let done = step + 1;
        sink.progress(done, run.steps, loss);
        // 8. Metrics, evaluation, checkpoints; the plateau rule may end the run here.
        let converged = state.plateau.push(
            done,
            loss,
            run.plateau_window,
            run.plateau_patience,
            run.plateau_tol,
        );
        let is_last = done == run.steps || converged;
        if is_last {
            model = task.finish(model, device)?;
        }
        state = TrainState {
            model,
            optimizer,
            step: done,
            last_loss: loss,
            ..state
        };
        let eval_now = is_last || (run.eval_every > 0 && done % run.eval_every == 0);
        let mut eval = Vec::new();
        if eval_now && lead {
            eval = task.evaluate(&state.model.valid(), done).await?;
        }
        if done % run.log_every.max(1) == 0 || is_last || !eval.is_empty() {
            let now = sink.now();
            let dt = (now - t_mark).max(1e-9);
            let mut rec =
                serde_json::json!({ "step": done, "loss": loss, "lr": lr, "grad_norm": grad_norm });
            if let Some(obj) = rec.as_object_mut() {
                if converged {
                    obj.insert("plateau".into(), serde_json::json!(true));
                }
                for (k, v) in &terms {
                    obj.insert((*k).to_string(), serde_json::json!(v));
                }
                if let Some(s) = std {
                    obj.insert("embedding_std".into(), serde_json::json!(s));
                }
                obj.insert("items".into(), serde_json::json!(items_since));
                obj.insert(
                    "items_per_s".into(),
                    serde_json::json!(items_since as f64 / dt),
                );
                if !eval.is_empty() {
                    let e: serde_json::Map<String, serde_json::Value> = eval
                        .iter()
                        .map(|(k, v)| (k.clone(), serde_json::json!(v)))
                        .collect();
                    obj.insert("eval".into(), serde_json::Value::Object(e));
                }
            }
            sink.log(&rec)?;
            (t_mark, items_since) = (now, 0);
        }
        if let Some(name) = task.best_metric() {
            let score = eval.iter().find(|(k, _)| k == name).map(|(_, v)| *v);
            if let Some(s) = score.filter(|s| state.best.is_none_or(|b| *s > b)) {
                state.best = Some(s);
                if sink.keeps_checkpoints() {
                    sink.save("best", &state.checkpoint(run.seed, config_toml)?)?;
                }
            }
        }
        if sink.keeps_checkpoints()
            && (is_last || done == end || done % run.checkpoint_every.max(1) == 0)
        {
            sink.save("latest", &state.checkpoint(run.seed, config_toml)?)?;
        }
        if converged {
            end = done;
            break;
        }
    }
    // A run resumed after it was complete trains no further; it is finished again (the
    // training model's structure has no place for what finishing added to the record).
    if start >= end && (start >= run.steps || state.plateau.stopped_at.is_some()) {
        state.model = task.finish(state.model, device)?;
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{generator, standard_normal};
    use burn::backend::{Autodiff, NdArray};
    use burn::nn::{Linear, LinearConfig};

    type AB = Autodiff<NdArray>;

    /// A linear encoder on noisy copies of fixed points: the smallest JEPA.
    #[derive(Module, Debug)]
    struct Lin<B: Backend> {
        lin: Linear<B>,
    }

    struct Toy {
        points: Vec<f64>, // (32, 6)
        loss: LossConfig,
    }

    impl TrainTask<AB> for Toy {
        type Model = Lin<AB>;
        fn init_model(&self, device: &burn::tensor::Device<AB>) -> Result<Lin<AB>> {
            Ok(Lin {
                lin: LinearConfig::new(6, 4).init(device),
            })
        }
        fn step(
            &mut self,
            model: &Lin<AB>,
            step: usize,
            device: &burn::tensor::Device<AB>,
        ) -> Result<StepOutput<AB>> {
            let mut rng = generator(3, Stream::Views, step as u64);
            let views: Vec<Tensor<AB, 2>> = (0..4)
                .map(|_| {
                    let x: Vec<f64> = self
                        .points
                        .iter()
                        .map(|p| p + 0.3 * standard_normal(&mut rng))
                        .collect();
                    model
                        .lin
                        .forward(Tensor::from_data(TensorData::new(x, [32, 6]), device))
                })
                .collect();
            Ok(jepa_loss(&views, 2, &self.loss, 3, step, device)?.into_step_output(32 * 4))
        }
    }

    fn toy() -> Toy {
        let mut rng = generator(9, Stream::Init, 0);
        let points = (0..32 * 6).map(|_| standard_normal(&mut rng)).collect();
        Toy {
            points,
            loss: LossConfig {
                slices: 16,
                ..LossConfig::default()
            },
        }
    }

    fn cfgs(steps: usize) -> (RunConfig, OptimConfig) {
        let run = RunConfig {
            steps,
            log_every: 1,
            checkpoint_every: 3,
            ..RunConfig::default()
        };
        let optim = OptimConfig {
            lr: 1e-2,
            warmup_steps: 2,
            ..OptimConfig::default()
        };
        (run, optim)
    }

    fn losses(sink: &MemorySink) -> Vec<(f64, f64, f64, f64)> {
        let f = |r: &serde_json::Value, k: &str| r[k].as_f64().unwrap();
        sink.records
            .iter()
            .map(|r| (f(r, "step"), f(r, "loss"), f(r, "lr"), f(r, "grad_norm")))
            .collect()
    }

    // Exact resume (interrupt after a checkpoint, resume, compare every loss) is tested in
    // tests/resume_exact.rs, in a process of its own: burn's init RNG is process-wide and
    // the other unit tests here draw from it on other threads.

    #[test]
    fn loss_falls_and_clipping_bounds_the_step() {
        let device = Default::default();
        let (run, optim) = cfgs(40);
        let mut sink = MemorySink::default();
        let s = train::<AB, _>(&mut toy(), &run, &optim, "", None, &mut sink, &device).unwrap();
        let l = losses(&sink);
        let first: f64 = l[..5].iter().map(|r| r.1).sum::<f64>() / 5.0;
        let last: f64 = l[35..].iter().map(|r| r.1).sum::<f64>() / 5.0;
        assert!(last < 0.8 * first, "loss {first} -> {last}");
        assert_eq!(s.steps, 40);
    }

    #[test]
    fn jepa_loss_refuses_bad_views_with_an_error() {
        let device = Default::default();
        let z = |n| Tensor::<AB, 2>::ones([n, 3], &device);
        let cfg = LossConfig::default();
        let err = |views: &[Tensor<AB, 2>], g| match jepa_loss(views, g, &cfg, 0, 0, &device) {
            Ok(_) => panic!("accepted"),
            Err(e) => e.to_string(),
        };
        let e = err(&[z(4), z(5)], 2);
        assert!(
            e.contains("jepa_loss: views of different shapes ([4, 3] and [5, 3])"),
            "{e}"
        );
        let e = err(&[z(4), z(4)], 3);
        assert!(e.contains("jepa_loss: 2 views with n_global = 3"), "{e}");
        assert!(err(&[], 1).contains("0 views"));
    }

    #[test]
    fn global_clipping_scales_to_max_norm() {
        let device = Default::default();
        let model: Lin<AB> = Lin {
            lin: LinearConfig::new(3, 2).init(&device),
        };
        let x = Tensor::<AB, 2>::ones([4, 3], &device).mul_scalar(10.0);
        let loss = model.lin.forward(x).powi_scalar(2).sum();
        let mut grads = GradientsParams::from_grads::<AB, _>(loss.backward(), &model);
        let g0 = clip_global_norm::<AB, _>(&model, &mut grads, 0.5).unwrap();
        assert!(g0 > 0.5);
        let g1 = clip_global_norm::<AB, _>(&model, &mut grads, 0.0).unwrap();
        assert!((g1 - 0.5).abs() < 1e-5, "{g1}");
    }
}
