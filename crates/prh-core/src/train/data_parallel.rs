//! Data-parallel training (docs/scaling.md): `W = run.data_parallel` model replicas, one
//! per device, each computing the losses and gradients of its shard of the step's batch.
//!
//! One step ([`parallel_step`]), called by [`crate::train::train_on_devices`]:
//! 1. **replicas**: the model is forked onto each device (`Module::fork`: a copy with its
//!    own autodiff graph and the same parameter ids), so every replica starts the step
//!    from the weights of the last optimiser step;
//! 2. **shards**: worker `k` takes groups `k, k + W, ...` of the step's batch
//!    ([`Shard`]); the views are drawn from the same seeded stream as on one device, so
//!    the union of the shards is the single-device batch;
//! 3. **forward** on each device ([`TrainTask::shard_step`]);
//! 4. **batch statistics**: the loss's batch-level pieces are summed on the main device
//!    (`devices[0]`): for the JEPA the invariance sum and SIGReg's ECF partial sums
//!    ([`crate::train::sigreg::ecf_sums`], `[views, slices, knots]` numbers per device), for a
//!    per-token mean (next-token) the sum and count. The loss is then exactly the
//!    single-device loss of the whole batch (design option (a) of docs/scaling.md);
//! 5. **backward** per replica of a surrogate whose gradient is that replica's share of
//!    the global loss's gradient: the global ECF enters as a constant, so
//!    `d loss / d C_k = d loss / d C` (the chain rule through a sum);
//! 6. **gradient reduction** with burn's own pieces: `GradientsParams::to_device` moves
//!    each replica's gradients to the main device, `GradientsAccumulator` sums them.
//!
//! The caller then clips and steps the main model once; the next step forks again.
//!
//! **Several nodes** (processes, usually machines; [`Nodes`]): node `r` of `N` runs the
//! same `W` replicas on global shards `r W + k` of `N W`, and two all-reduces per step make
//! it the same step as one process on the whole batch: stage 4's statistics (one flat
//! vector) and stage 6's summed gradients (one flat vector, as PyTorch's DDP buckets
//! them). Every node then clips and steps its own copy of the model with the same
//! gradients, so the copies stay equal without a broadcast. The engine that carries the
//! all-reduce is the caller's (the native binary: burn's collective engine).
//!
//! Stages 3 and 5 run the replicas concurrently, one host thread each ([`on_replicas`]):
//! on the CPU backend that puts `W` cores to work on `W` shards (each replica's ops,
//! element-wise and bookkeeping included, on its own core, rather than one op at a time
//! split across cores); on GPUs each thread feeds its own device's queue. burn's autodiff
//! keeps one graph per replica, each behind its own lock, so the threads do not contend.
//! The combination (stage 4) and the reduction (stage 6) stay on the calling thread and in
//! replica order, so a run is repeatable bit for bit. The browser build has no threads
//! and runs the replicas one after the other.

use burn::module::{Module, ModuleVisitor, Param};
use burn::optim::{GradientsAccumulator, GradientsParams};
use burn::prelude::*;
use burn::tensor::backend::AutodiffBackend;

use crate::train::config::LossConfig;
use crate::train::config::LossKind;
use crate::train::sigreg::{ecf_sums, sigreg_from_ecf};
use crate::train::spectral_loss::{
    SpectralSums, normalisers, spectral_loss_from_sums, spectral_sums,
};
use crate::train::{JepaPieces, TrainTask, jepa_pieces, scalar, sigreg_tensors};
use crate::{Error, Result};

/// Worker `index` of `count`: it takes positions `index, index + count, ...` of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This worker, `0..count`.
    pub index: usize,
    /// Number of workers `W`.
    pub count: usize,
}

impl Shard {
    /// The whole batch (single-device training).
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// This worker's items of a batch, in order: `items[index], items[index + count], ...`.
    /// [`Shard::WHOLE`] returns `items` unchanged.
    ///
    /// # Shapes
    /// `b` items -> `ceil((b - index) / count)` items.
    pub fn take<T>(self, items: Vec<T>) -> Vec<T> {
        if self == Self::WHOLE {
            return items;
        }
        items
            .into_iter()
            .skip(self.index)
            .step_by(self.count.max(1))
            .collect()
    }
}

/// The loss pieces of one shard, before the batch statistics are combined.
pub enum ShardLoss<B: Backend> {
    /// LeJEPA's loss on `V` views of the shard (`[n_k, d]` each, the first `n_global`
    /// global), with the loss settings and seed that [`crate::train::jepa_loss`] takes.
    Jepa {
        /// `V` embeddings `[n_k, d]`, globals first.
        views: Vec<Tensor<B, 2>>,
        /// Number of global views.
        n_global: usize,
        /// Invariance / SIGReg settings.
        loss: LossConfig,
        /// Run seed (SIGReg directions are drawn from it at the step).
        seed: u64,
    },
    /// A mean over items (next-token cross-entropy over real targets): the shard's sum
    /// and item count; the batch value is `sum_k sum / sum_k count`.
    Mean {
        /// Name of the logged term (`ce`).
        name: &'static str,
        /// Sum over this shard's items, `[1]`.
        sum: Tensor<B, 1>,
        /// Number of items summed.
        count: usize,
    },
}

/// What [`TrainTask::shard_step`] returns for one worker.
pub struct ShardOutput<B: Backend> {
    /// The shard's loss pieces.
    pub loss: ShardLoss<B>,
    /// Tokens processed by this shard.
    pub items: usize,
}

/// The result of one data-parallel step, before clipping and the optimiser (with
/// [`Nodes`], of the whole step over all nodes).
pub struct ParallelStep {
    /// The batch loss (equal to the single-device loss of the same batch).
    pub loss: f64,
    /// Named loss terms of the batch.
    pub terms: Vec<(&'static str, f64)>,
    /// Tokens processed by all shards (of all nodes).
    pub items: usize,
    /// Mean per-dimension std of the embeddings over the batch (JEPA only).
    pub embedding_std: Option<f64>,
    /// Gradients of the batch loss, summed over replicas, on `devices[0]`.
    pub grads: GradientsParams,
}

/// The nodes of a multi-node run, seen from one of them: this process is node
/// `node().index` of `node().count`, each node running its own replicas; the all-reduce
/// sums over all nodes. Implemented by the caller (prh-native: burn-collective over the
/// network), so prh-core needs no networking.
pub trait Nodes<B: Backend>: Sync {
    /// This node (`index`) of `count` nodes.
    fn node(&self) -> Shard;
    /// `sum over nodes of x`, element-wise, the same result on every node. Every node calls
    /// it the same number of times with the same lengths, in the same order.
    ///
    /// # Shapes
    /// `[n]` -> `[n]`.
    fn all_reduce_sum(&self, x: Tensor<B, 1>) -> Result<Tensor<B, 1>>;
}

/// `parts` summed over all nodes in one all-reduce (flattened, concatenated, summed and
/// split back; detached: every use is a constant), or unchanged with no `nodes`.
///
/// # Shapes
/// `[n_i]` each -> `[n_i]` each.
fn node_sum<B: AutodiffBackend>(
    nodes: Option<&dyn Nodes<B::InnerBackend>>,
    parts: Vec<Tensor<B, 1>>,
) -> Result<Vec<Tensor<B, 1>>> {
    let Some(nodes) = nodes else {
        return Ok(parts);
    };
    let lens: Vec<usize> = parts.iter().map(|p| p.dims()[0]).collect();
    let flat = Tensor::cat(parts.into_iter().map(|p| p.detach().inner()).collect(), 0);
    let total = Tensor::<B, 1>::from_inner(nodes.all_reduce_sum(flat)?);
    let mut at = 0;
    Ok(lens
        .into_iter()
        .map(|n| {
            at += n;
            total.clone().narrow(0, at - n, n)
        })
        .collect())
}

/// `(C, S)` pairs `[a, b]` summed over all nodes (see [`node_sum`]).
fn node_sum_pairs<B: AutodiffBackend>(
    nodes: Option<&dyn Nodes<B::InnerBackend>>,
    pairs: Vec<(Tensor<B, 2>, Tensor<B, 2>)>,
) -> Result<Vec<(Tensor<B, 2>, Tensor<B, 2>)>> {
    if nodes.is_none() {
        return Ok(pairs);
    }
    let dims: Vec<[usize; 2]> = pairs.iter().map(|(c, _)| c.dims()).collect();
    let flat = pairs
        .into_iter()
        .flat_map(|(c, s)| [c.reshape([-1]), s.reshape([-1])])
        .collect();
    let mut summed = node_sum(nodes, flat)?.into_iter();
    dims.into_iter()
        .map(|d| match (summed.next(), summed.next()) {
            (Some(c), Some(s)) => Ok((c.reshape(d), s.reshape(d))),
            _ => Err(Error::invalid(
                "multi-node step: ECF sums lost in the all-reduce",
            )),
        })
        .collect()
}

/// Collects every float parameter's gradient, flattened, in visiting order.
struct GradFlatten<'a, B: AutodiffBackend> {
    grads: &'a GradientsParams,
    flat: Vec<Tensor<B::InnerBackend, 1>>,
}

impl<B: AutodiffBackend> ModuleVisitor<B> for GradFlatten<'_, B> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        if let Some(g) = self.grads.get::<B::InnerBackend, D>(param.id) {
            self.flat.push(g.reshape([-1]));
        }
    }
}

/// Replaces every float parameter's gradient with its slice of `total`, in visiting order.
struct GradUnflatten<'a, B: AutodiffBackend> {
    grads: &'a mut GradientsParams,
    total: Tensor<B::InnerBackend, 1>,
    at: usize,
}

impl<B: AutodiffBackend> ModuleVisitor<B> for GradUnflatten<'_, B> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        if let Some(g) = self.grads.remove::<B::InnerBackend, D>(param.id) {
            let dims = g.dims();
            let n = g.shape().num_elements();
            let part = self.total.clone().narrow(0, self.at, n);
            self.at += n;
            self.grads
                .register::<B::InnerBackend, D>(param.id, part.reshape(dims));
        }
    }
}

/// Stage 6 across nodes: every gradient of `model` in `grads`, and `items`, summed over
/// all nodes in one all-reduce (the gradients flattened into one vector in the model's
/// visiting order, which is the same on every node). Returns the nodes' total `items`.
pub fn sum_grads_over_nodes<B: AutodiffBackend, M: burn::module::AutodiffModule<B>>(
    nodes: &dyn Nodes<B::InnerBackend>,
    model: &M,
    grads: &mut GradientsParams,
    items: usize,
) -> Result<usize> {
    let mut flatten = GradFlatten::<B> {
        grads,
        flat: Vec::new(),
    };
    model.visit(&mut flatten);
    let mut flat = flatten.flat;
    let Some(device) = flat.first().map(|t| t.device()) else {
        return Err(Error::invalid(
            "multi-node step: the model has no gradients",
        ));
    };
    let n: usize = flat.iter().map(|t| t.dims()[0]).sum();
    // The item count rides along (exact in f32 below 2^24 per step).
    flat.push(Tensor::from_floats([items as f32], &device));
    let total = nodes.all_reduce_sum(Tensor::cat(flat, 0))?;
    let items = total
        .clone()
        .narrow(0, n, 1)
        .into_scalar()
        .elem::<f64>()
        .round() as usize;
    let mut unflatten = GradUnflatten::<B> {
        grads,
        total,
        at: 0,
    };
    model.visit(&mut unflatten);
    Ok(items)
}

/// Checks that `w` replicas can split a batch of `batch` groups evenly.
///
/// Errors name `run.data_parallel` and `views.batch_size`.
pub fn check_split(w: usize, batch: usize) -> Result<()> {
    if w == 0 {
        return Err(Error::invalid(
            "run.data_parallel = 0: expected at least 1 (the number of model replicas; 1 = one device)",
        ));
    }
    if !batch.is_multiple_of(w) {
        return Err(Error::invalid(format!(
            "run.data_parallel = {w}: {w} replicas do not divide views.batch_size = {batch}: \
             each replica takes batch_size / data_parallel groups"
        )));
    }
    Ok(())
}

/// One data-parallel step of `task` at `step` on `devices` (stages in the module docs):
/// the batch loss and its gradient `sum_k grad_k` on `devices[0]`.
///
/// # Shapes
/// `devices`: `W >= 1` devices (repeated entries put several replicas on one device).
pub fn parallel_step<B: AutodiffBackend, T: TrainTask<B> + Sync>(
    task: &mut T,
    model: &T::Model,
    step: usize,
    devices: &[B::Device],
    nodes: Option<&dyn Nodes<B::InnerBackend>>,
) -> Result<ParallelStep> {
    let w = devices.len();
    let node = nodes.map_or(Shard::WHOLE, |n| n.node());
    let Some(main) = devices.first() else {
        return Err(Error::invalid("data-parallel step: no devices"));
    };
    task.prepare_step(step)?;
    let task: &T = task;
    // 1. Replicas, each with its own graph. burn initialises parameters lazily, and a
    // clone of a lazy parameter draws its own values on first use: materialise the model
    // first (in visiting order, which for prh's encoders is the order in which the
    // single-device forward first touches them, so a fresh run draws the same weights),
    // so that every replica forks the same weights.
    model.visit(&mut Materialise);
    let forks: Vec<(T::Model, &B::Device)> =
        devices.iter().map(|d| (model.clone().fork(d), d)).collect();
    // 2-3. Shards and forward, one thread per replica (each owns its replica there).
    // 4a. Each shard's batch statistics, on its thread.
    let forwarded = on_replicas(forks, |k, (r, d)| {
        let out = task
            .shard_step(
                &r,
                step,
                Shard {
                    index: node.index * w + k,
                    count: node.count * w,
                },
                d,
            )
            .and_then(|o| Ok((reduce_shard(o.loss, step, d)?, o.items)));
        (r, out)
    });
    let (mut replicas, mut reduced, mut items) = (Vec::with_capacity(w), Vec::new(), 0);
    for (r, out) in forwarded {
        let (red, n) = out?;
        replicas.push(r);
        reduced.push(red);
        items += n;
    }
    // 4b. Their combination here: the batch loss and each replica's surrogate loss.
    let combined = combine(reduced, step, devices, nodes)?;
    // 5-6. Backward per replica; gradients moved to the main device and summed.
    let jobs: Vec<(Tensor<B, 1>, T::Model)> =
        combined.surrogates.into_iter().zip(replicas).collect();
    let grads = on_replicas(jobs, |_, (surrogate, replica)| {
        let g = GradientsParams::from_grads(surrogate.backward(), &replica);
        (g, replica)
    });
    let mut acc = GradientsAccumulator::<T::Model>::new();
    for (g, replica) in grads {
        acc.accumulate::<B>(model, g.to_device(main, &replica));
    }
    let mut grads = acc.grads();
    if let Some(nodes) = nodes {
        items = sum_grads_over_nodes::<B, _>(nodes, model, &mut grads, items)?;
    }
    Ok(ParallelStep {
        loss: combined.loss,
        terms: combined.terms,
        items,
        embedding_std: combined.embedding_std,
        grads,
    })
}

/// Refuses a data-parallel or multi-node run (`w > 1` replicas, or `multi_node`) on CUDA,
/// unless `PRH_UNSAFE_CUDA_DATA_PARALLEL=1` (for finding the defect on a GPU machine).
///
/// Measured on an H200 (4 December 2026, burn 0.21 / cubecl 0.10; docs/scaling.md, "On a
/// GPU"): the step's batch loss equals the one-device loss (1e-7), but its gradients do
/// not: gradient norm 43-71 with 2 replicas and 414-694 with 2 nodes, where one device
/// gives 0.20-0.23 on the same batch. The same step equals the one-device step on the CPU
/// backends and on wgpu (Mesa's lavapipe), to 1e-7. Running the replicas in order on one
/// thread, and all-reducing host copies, did not change it; the cause is not found. A
/// run that would train on wrong gradients is refused rather than run.
pub fn check_backend<B: Backend>(device: &B::Device, w: usize, multi_node: bool) -> Result<()> {
    let allowed = std::env::var("PRH_UNSAFE_CUDA_DATA_PARALLEL").is_ok_and(|v| v == "1");
    if refused_on(&B::name(device), w, multi_node, allowed) {
        return Err(Error::invalid(format!(
            "run.data_parallel = {w}{}: data-parallel and multi-node training are refused on \
             CUDA: its gradients were measured wrong on an H200 (gradient norm 43-694 where \
             one device gives 0.2; docs/scaling.md, \"On a GPU\"); train with \
             run.data_parallel = 1 on one GPU, or on --device cpu|wgpu",
            if multi_node { " with --nodes" } else { "" }
        )));
    }
    Ok(())
}

/// [`check_backend`]'s rule: several replicas or nodes on a backend whose burn name says
/// CUDA (`autodiff<cubecl<cuda>>`), not overridden.
fn refused_on(backend: &str, w: usize, multi_node: bool, allowed: bool) -> bool {
    (w > 1 || multi_node) && !allowed && backend.contains("cuda")
}

/// `[f(0, jobs[0]), f(1, jobs[1]), ...]`, the calls running concurrently: on rayon's pool
/// with the `cpu-fast` build (whose gemm and element-wise ops also split over that pool,
/// so nesting them there does not oversubscribe the cores), else on scoped threads, one
/// per job, the first on the calling thread; in order on the calling thread in the
/// browser. A panic in a job is resumed on the calling thread.
pub fn on_replicas<I: Send, O: Send>(jobs: Vec<I>, f: impl Fn(usize, I) -> O + Sync) -> Vec<O> {
    if jobs.len() <= 1 || cfg!(target_arch = "wasm32") {
        return jobs.into_iter().enumerate().map(|(k, j)| f(k, j)).collect();
    }
    #[cfg(all(feature = "cpu-fast", not(target_arch = "wasm32")))]
    {
        use rayon::prelude::*;
        jobs.into_par_iter()
            .enumerate()
            .map(|(k, j)| f(k, j))
            .collect()
    }
    #[cfg(not(all(feature = "cpu-fast", not(target_arch = "wasm32"))))]
    {
        let f = &f;
        std::thread::scope(|scope| {
            let mut jobs = jobs.into_iter().enumerate();
            let first = jobs.next();
            let handles: Vec<_> = jobs.map(|(k, j)| scope.spawn(move || f(k, j))).collect();
            let mut out = Vec::with_capacity(handles.len() + 1);
            out.extend(first.map(|(k, j)| f(k, j)));
            for h in handles {
                match h.join() {
                    Ok(o) => out.push(o),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            out
        })
    }
}

/// Initialises every lazy parameter of a module (`Param::val` stores the value).
struct Materialise;

impl<B: Backend> ModuleVisitor<B> for Materialise {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        let _ = param.val();
    }
    fn visit_int<const D: usize>(&mut self, param: &Param<Tensor<B, D, Int>>) {
        let _ = param.val();
    }
    fn visit_bool<const D: usize>(&mut self, param: &Param<Tensor<B, D, Bool>>) {
        let _ = param.val();
    }
}

/// Batch values plus one differentiable surrogate per replica.
struct Combined<B: Backend> {
    loss: f64,
    terms: Vec<(&'static str, f64)>,
    embedding_std: Option<f64>,
    surrogates: Vec<Tensor<B, 1>>,
}

/// A detached copy of `t` on `device` (a constant of the surrogate losses).
fn constant<B: AutodiffBackend, const D: usize>(
    t: &Tensor<B, D>,
    device: &B::Device,
) -> Tensor<B, D> {
    t.clone().detach().to_device(device)
}

/// One replica's JEPA pieces, reduced on its own thread ([`reduce_shard`]): everything
/// the batch loss needs from the shard, and its differentiable parts for the surrogate.
struct JepaShard<B: Backend> {
    /// Rows `n_k`, views `V`, width `d`, global views.
    n: usize,
    v: usize,
    d: usize,
    n_global: usize,
    /// Loss settings and run seed.
    loss: LossConfig,
    seed: u64,
    /// `sum_{v,i,e} (z - c)^2` over the shard, `[1]` (differentiable).
    inv_sum: Tensor<B, 1>,
    /// The objective's own sums (differentiable).
    sums: ObjectiveSums<B>,
    /// Per-dimension sums of `z` and `z^2` over the shard's `V n_k` rows, `[d]` each
    /// (detached; the collapse guard's std).
    col_sum: Tensor<B, 1>,
    col_sq: Tensor<B, 1>,
}

/// The batch-level sums of each `loss.kind`, over one shard.
enum ObjectiveSums<B: Backend> {
    /// Per view, SIGReg's ECF partial sums `(C, S)`, `[slices, knots]` each.
    Sigreg(Vec<(Tensor<B, 2>, Tensor<B, 2>)>),
    /// The spectral loss's group sums.
    Spectral(SpectralSums<B>),
}

/// A shard's loss pieces after its replica's reductions.
enum Reduced<B: Backend> {
    Jepa(JepaShard<B>),
    Mean {
        name: &'static str,
        sum: Tensor<B, 1>,
        count: usize,
    },
}

/// The per-shard half of the batch statistics (stage 4), on the replica's device and
/// thread: for a JEPA shard of `V` views `[n_k, d]`, the invariance sum
/// `sum_{v,i,e} (z_vie - c_ie)^2` (`c` = mean of the global views), SIGReg's ECF partial
/// sums per view ([`ecf_sums`], with step `step`'s directions) and the column sums of `z`
/// and `z^2`.
fn reduce_shard<B: AutodiffBackend>(
    loss: ShardLoss<B>,
    step: usize,
    device: &B::Device,
) -> Result<Reduced<B>> {
    let (views, n_global, loss, seed) = match loss {
        ShardLoss::Mean { name, sum, count } => return Ok(Reduced::Mean { name, sum, count }),
        ShardLoss::Jepa {
            views,
            n_global,
            loss,
            seed,
        } => (views, n_global, loss, seed),
    };
    let JepaPieces { stacked, sq_dev } = jepa_pieces("data-parallel step", &views, n_global)?;
    let [v, n, d] = stacked.dims();
    let inv_sum = sq_dev.sum();
    let flat = stacked.clone().reshape([v * n, d]).detach();
    let col_sum = flat.clone().sum_dim(0).squeeze_dim::<1>(0);
    let col_sq = flat.powi_scalar(2).sum_dim(0).squeeze_dim::<1>(0);
    let sums = match loss.kind {
        LossKind::Sigreg => {
            let st = sigreg_tensors(&loss, d, seed, step, device)?;
            ObjectiveSums::Sigreg(views.into_iter().map(|z| ecf_sums(z, &st)).collect())
        }
        LossKind::Spectral => ObjectiveSums::Spectral(spectral_sums(stacked)),
    };
    Ok(Reduced::Jepa(JepaShard {
        n,
        v,
        d,
        n_global,
        loss,
        seed,
        inv_sum,
        sums,
        col_sum,
        col_sq,
    }))
}

/// The batch loss and the replicas' surrogates from the reduced shards (in replica
/// order, on the calling thread).
fn combine<B: AutodiffBackend>(
    reduced: Vec<Reduced<B>>,
    step: usize,
    devices: &[B::Device],
    nodes: Option<&dyn Nodes<B::InnerBackend>>,
) -> Result<Combined<B>> {
    let mixed = || Error::invalid("data-parallel step: shards of different kinds");
    if matches!(reduced.first(), Some(Reduced::Jepa(_))) {
        let shards = reduced
            .into_iter()
            .map(|r| match r {
                Reduced::Jepa(s) => Ok(s),
                Reduced::Mean { .. } => Err(mixed()),
            })
            .collect::<Result<Vec<_>>>()?;
        combine_jepa(shards, step, devices, nodes)
    } else {
        let mut term = "loss";
        let parts = reduced
            .into_iter()
            .map(|r| match r {
                Reduced::Mean { name, sum, count } => {
                    term = name;
                    Ok((sum, count))
                }
                Reduced::Jepa(_) => Err(mixed()),
            })
            .collect::<Result<Vec<_>>>()?;
        combine_mean(term, parts, nodes)
    }
}

/// The JEPA batch loss from the shards' pieces, exactly [`crate::train::jepa_loss`] on
/// the concatenated batch (`invariance = sum_k sum_{v,i,e} (z - c)^2 / (V N d)` for both
/// kinds; the objective's part in [`combine_sigreg`] / [`combine_spectral`]), and one
/// surrogate per replica whose gradients sum to the batch loss's gradient.
fn combine_jepa<B: AutodiffBackend>(
    shards: Vec<JepaShard<B>>,
    step: usize,
    devices: &[B::Device],
    nodes: Option<&dyn Nodes<B::InnerBackend>>,
) -> Result<Combined<B>> {
    let main = &devices[0];
    let Some(first) = shards.first() else {
        return Err(Error::invalid("data-parallel step: no shards"));
    };
    let (v, d, n_global) = (first.v, first.d, first.n_global);
    let loss = first.loss.clone();
    if shards
        .iter()
        .any(|s| (s.v, s.d, s.n_global) != (v, d, n_global) || s.loss != loss)
    {
        return Err(Error::invalid(
            "data-parallel step: shards disagree on the views, the embedding width or the loss",
        ));
    }
    // Sums over shards, on the main device, in replica order.
    let n: usize = shards.iter().map(|s| s.n).sum();
    let mut inv_total = Tensor::<B, 1>::zeros([1], main);
    let (mut col_sum, mut col_sq) = (Tensor::<B, 1>::zeros([d], main), Tensor::zeros([d], main));
    for s in &shards {
        inv_total = inv_total + constant(&s.inv_sum, main);
        col_sum = col_sum + s.col_sum.clone().to_device(main);
        col_sq = col_sq + s.col_sq.clone().to_device(main);
    }
    // Over nodes: the same sums over the whole batch, and its group count.
    let (n, inv_total, col_sum, col_sq) = match nodes {
        None => (n, inv_total, col_sum, col_sq),
        Some(_) => {
            let count = Tensor::<B, 1>::from_floats([n as f32], main);
            let mut t = node_sum(nodes, vec![inv_total, col_sum, col_sq, count])?.into_iter();
            let mut next = || {
                t.next()
                    .ok_or_else(|| Error::invalid("multi-node step: sums lost"))
            };
            let (inv, cs, cq, count) = (next()?, next()?, next()?, next()?);
            (scalar(count).round() as usize, inv, cs, cq)
        }
    };
    let scale = (v * n * d) as f64;
    let invariance = scalar(inv_total.div_scalar(scale));
    // Bessel-corrected variance per dimension over all V*N rows (as Tensor::var).
    let rows = (v * n) as f64;
    let mean = col_sum.div_scalar(rows);
    let var = (col_sq - mean.clone().powi_scalar(2).mul_scalar(rows)).div_scalar(rows - 1.0);
    let embedding_std = scalar(var.clamp_min(0.0).sqrt().mean());
    let seed = first.seed;
    let (inv_parts, objective): (Vec<_>, Vec<_>) =
        shards.into_iter().map(|s| (s.inv_sum, s.sums)).unzip();
    let (total, mut terms, surrogates) = match loss.kind {
        LossKind::Sigreg => {
            let (sigreg, sig_surrogates) =
                combine_sigreg(objective, n, v, d, &loss, seed, step, devices, nodes)?;
            // total = invariance + lambda SIGReg; surrogate_k = inv_k / (V N d) + lambda <G, ECF_k>.
            let surrogates = inv_parts
                .into_iter()
                .zip(sig_surrogates)
                .map(|(inv, sig)| inv.div_scalar(scale) + sig.mul_scalar(loss.lambda))
                .collect();
            (
                invariance + loss.lambda * sigreg,
                vec![("sigreg", sigreg)],
                surrogates,
            )
        }
        // The invariance is only logged: the spectral loss has its own positive term.
        LossKind::Spectral => combine_spectral(objective, n, v, devices, nodes)?,
    };
    terms.insert(0, ("invariance", invariance));
    Ok(Combined {
        loss: total,
        terms,
        embedding_std: Some(embedding_std),
        surrogates,
    })
}

/// Every shard's sums of one loss kind (`pick` returns `None` for the other kind, which
/// the shards of one step never mix).
fn of_kind<B: Backend, T>(
    objective: Vec<ObjectiveSums<B>>,
    pick: impl Fn(ObjectiveSums<B>) -> Option<T>,
) -> Result<Vec<T>> {
    objective
        .into_iter()
        .map(|o| {
            pick(o)
                .ok_or_else(|| Error::invalid("data-parallel step: shards of different loss kinds"))
        })
        .collect()
}

/// SIGReg of the batch from the shards' ECF partial sums, and each replica's SIGReg
/// surrogate:
///
/// `SIGReg = mean_v SIGReg(ECF_v)` with `ECF_v = sum_k (C_kv, S_kv) / N`; surrogate of
/// replica `k`: `sum_v <G_C,v, C_kv> + <G_S,v, S_kv>` with the constants
/// `G_C = 2 w_j (cos_mean - phi_j) / (V M)`, `G_S = 2 w_j sin_mean / (V M)`
/// (`d SIGReg / d C_kv`), so `sum_k grad(surrogate_k) = grad(SIGReg)`.
#[allow(clippy::too_many_arguments)]
fn combine_sigreg<B: AutodiffBackend>(
    objective: Vec<ObjectiveSums<B>>,
    n: usize,
    v: usize,
    d: usize,
    loss: &LossConfig,
    seed: u64,
    step: usize,
    devices: &[B::Device],
    nodes: Option<&dyn Nodes<B::InnerBackend>>,
) -> Result<(f64, Vec<Tensor<B, 1>>)> {
    let main = &devices[0];
    let st_main = sigreg_tensors::<B>(loss, d, seed, step, main)?;
    let shards = of_kind(objective, |o| match o {
        ObjectiveSums::Sigreg(ecf) => Some(ecf),
        ObjectiveSums::Spectral(_) => None,
    })?;
    let mut ecf_total: Vec<(Tensor<B, 2>, Tensor<B, 2>)> = Vec::new();
    for ecf in &shards {
        for (j, (c, sn)) in ecf.iter().enumerate() {
            let (c, sn) = (constant(c, main), constant(sn, main));
            match ecf_total.get_mut(j) {
                Some((ct, st)) => {
                    *ct = ct.clone() + c;
                    *st = st.clone() + sn;
                }
                None => ecf_total.push((c, sn)),
            }
        }
    }
    let means: Vec<(Tensor<B, 2>, Tensor<B, 2>)> = node_sum_pairs(nodes, ecf_total)?
        .into_iter()
        .map(|(c, s)| (c.div_scalar(n as f64), s.div_scalar(n as f64)))
        .collect();
    let sigreg = means
        .iter()
        .map(|(c, s)| scalar(sigreg_from_ecf(c.clone(), s.clone(), n, &st_main)))
        .sum::<f64>()
        / v as f64;
    // d SIGReg / d C_kv and d SIGReg / d S_kv, constants shared by all replicas.
    // (1, K) by reshape, not transpose: the same values in a contiguous layout. The
    // transposed [K, 1] view broadcast against [M, K] is one suspect of the CUDA gradient
    // defect (`check_backend`); this change is not verified on a GPU.
    let w_row = st_main.w.clone().reshape([1, st_main.knots]);
    let coef = 2.0 / (v * loss.slices) as f64;
    let grads: Vec<(Tensor<B, 2>, Tensor<B, 2>)> = means
        .into_iter()
        .map(|(c, s)| {
            let gc = (c - st_main.phi.clone()) * w_row.clone();
            let gs = s * w_row.clone();
            (gc.mul_scalar(coef), gs.mul_scalar(coef))
        })
        .collect();
    let surrogates = shards
        .into_iter()
        .zip(devices)
        .map(|(ecf, device)| {
            let mut sig = Tensor::<B, 1>::zeros([1], device);
            for ((c, s), (gc, gs)) in ecf.into_iter().zip(&grads) {
                sig = sig + (c * constant(gc, device)).sum() + (s * constant(gs, device)).sum();
            }
            sig
        })
        .collect();
    Ok((sigreg, surrogates))
}

/// An objective's batch value, its logged terms and one surrogate per replica.
type ObjectivePart<B> = (f64, Vec<(&'static str, f64)>, Vec<Tensor<B, 1>>);

/// The spectral loss of the batch from the shards' group sums
/// ([`crate::train::spectral_loss`]: every sum is over groups, so the batch's are the shards'
/// totals), its terms, and each replica's surrogate, linear in the shard's sums with the
/// batch's derivatives as constants:
///
/// `surrogate_k = (-2 P_k + 2 (2 <s, s_k> - a_k) + (2 <M, M_k> - b_k)) / c` per term's
/// normaliser, with `s`, `M` the batch totals of `sum_g S_g` and `sum_g M_g`, so
/// `sum_k grad(surrogate_k) = grad(loss)` (`d ||s||^2 / d s_k = 2 s`).
fn combine_spectral<B: AutodiffBackend>(
    objective: Vec<ObjectiveSums<B>>,
    n: usize,
    v: usize,
    devices: &[B::Device],
    nodes: Option<&dyn Nodes<B::InnerBackend>>,
) -> Result<ObjectivePart<B>> {
    let main = &devices[0];
    let shards = of_kind(objective, |o| match o {
        ObjectiveSums::Spectral(s) => Some(s),
        ObjectiveSums::Sigreg(_) => None,
    })?;
    let Some(head) = shards.first() else {
        return Err(Error::invalid("data-parallel step: no shards"));
    };
    let d = head.first.dims()[0];
    let mut total = SpectralSums::<B> {
        groups: n,
        views: v,
        positive: Tensor::zeros([1], main),
        first: Tensor::zeros([d], main),
        second: Tensor::zeros([d, d], main),
        first_within: Tensor::zeros([1], main),
        second_within: Tensor::zeros([1], main),
    };
    for s in &shards {
        total.positive = total.positive + constant(&s.positive, main);
        total.first = total.first + constant(&s.first, main);
        total.second = total.second + constant(&s.second, main);
        total.first_within = total.first_within + constant(&s.first_within, main);
        total.second_within = total.second_within + constant(&s.second_within, main);
    }
    if nodes.is_some() {
        let dd = [d, d];
        let parts = vec![
            total.positive,
            total.first,
            total.second.reshape([-1]),
            total.first_within,
            total.second_within,
        ];
        let mut t = node_sum(nodes, parts)?.into_iter();
        let mut next = || {
            t.next()
                .ok_or_else(|| Error::invalid("multi-node step: sums lost"))
        };
        total.positive = next()?;
        total.first = next()?;
        total.second = next()?.reshape(dd);
        total.first_within = next()?;
        total.second_within = next()?;
    }
    let l = spectral_loss_from_sums(&total)?;
    let (c_pos, c_ind) = normalisers(n, v)?;
    let surrogates = shards
        .into_iter()
        .zip(devices)
        .map(|(s, device)| {
            let first_c = constant(&total.first, device);
            let second_c = constant(&total.second, device);
            let pos = s.positive.div_scalar(c_pos).mul_scalar(-2.0);
            let mean = ((s.first * first_c).sum().mul_scalar(2.0) - s.first_within)
                .div_scalar(c_ind)
                .mul_scalar(2.0);
            let second =
                ((s.second * second_c).sum().mul_scalar(2.0) - s.second_within).div_scalar(c_ind);
            pos + mean + second
        })
        .collect();
    Ok((
        scalar(l.total),
        vec![
            ("positive", scalar(l.positive)),
            ("mean", scalar(l.mean)),
            ("second_moment", scalar(l.second)),
        ],
        surrogates,
    ))
}

/// The per-item mean logged as `term` from shard sums `(sum_k, count_k)`:
/// `loss = sum_k sum_k / sum_k count_k`; the surrogate of replica `k` is
/// `sum_k / sum_k count_k` (its exact share of the gradient).
fn combine_mean<B: AutodiffBackend>(
    term: &'static str,
    parts: Vec<(Tensor<B, 1>, usize)>,
    nodes: Option<&dyn Nodes<B::InnerBackend>>,
) -> Result<Combined<B>> {
    let mut count: usize = parts.iter().map(|p| p.1).sum();
    let mut sum = parts
        .iter()
        .map(|(s, _)| scalar(s.clone().detach()))
        .sum::<f64>();
    if nodes.is_some() {
        let Some(device) = parts.first().map(|(s, _)| s.device()) else {
            return Err(Error::invalid("data-parallel step: no shards"));
        };
        let local = Tensor::<B, 1>::from_floats([sum as f32, count as f32], &device);
        let total = node_sum(nodes, vec![local])?.remove(0);
        let v = total.into_data().convert::<f64>().to_vec::<f64>();
        let Ok(&[s, c]) = v.as_deref() else {
            return Err(Error::invalid(
                "multi-node step: the item sums lost in the all-reduce",
            ));
        };
        (sum, count) = (s, c.round() as usize);
    }
    if count == 0 {
        return Err(Error::invalid(
            "data-parallel step: no items to average in the batch",
        ));
    }
    let total = sum / count as f64;
    let surrogates = parts
        .into_iter()
        .map(|(s, _)| s.div_scalar(count as f64))
        .collect();
    Ok(Combined {
        loss: total,
        terms: vec![(term, total)],
        embedding_std: None,
        surrogates,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_parallel_is_refused_on_cuda_only() {
        let cuda = "autodiff<cubecl<cuda>>";
        assert!(refused_on(cuda, 2, false, false));
        assert!(refused_on(cuda, 1, true, false));
        assert!(
            !refused_on(cuda, 1, false, false),
            "one replica on CUDA trains"
        );
        assert!(!refused_on(cuda, 2, true, true), "the override lets it run");
        for other in [
            "autodiff<cubecl<wgpu<vulkan>>>",
            "autodiff<ndarray>",
            "autodiff<flex>",
        ] {
            assert!(!refused_on(other, 4, true, false), "{other}");
        }
        // The CPU backend's own name passes the check with several replicas and nodes.
        type B = burn::backend::Autodiff<burn::backend::NdArray>;
        assert!(check_backend::<B>(&Default::default(), 3, true).is_ok());
        assert!(B::name(&Default::default()).contains("ndarray"));
    }

    #[test]
    fn shards_partition_the_batch_in_order() {
        let items: Vec<usize> = (0..10).collect();
        assert_eq!(Shard::WHOLE.take(items.clone()), items);
        let a = Shard { index: 0, count: 3 }.take(items.clone());
        let b = Shard { index: 1, count: 3 }.take(items.clone());
        let c = Shard { index: 2, count: 3 }.take(items.clone());
        assert_eq!(
            (a.clone(), b.clone(), c.clone()),
            (vec![0, 3, 6, 9], vec![1, 4, 7], vec![2, 5, 8])
        );
        let mut all: Vec<usize> = [a, b, c].concat();
        all.sort();
        assert_eq!(all, items);
    }

    #[test]
    fn replica_jobs_keep_their_order() {
        let out = on_replicas((0..5).map(|i| i * 10).collect(), |k, j| (k, j + 1));
        assert_eq!(out, vec![(0, 1), (1, 11), (2, 21), (3, 31), (4, 41)]);
        assert_eq!(on_replicas(Vec::<u8>::new(), |_, j| j), Vec::<u8>::new());
    }

    /// The replicas run at the same time: each job hands the other a message and waits
    /// for the other's. Run one after the other, job 0 would wait for a job that has not
    /// started and time out. (rayon's pool, with `cpu-fast`, may run both on one worker.)
    #[cfg(not(feature = "cpu-fast"))]
    #[test]
    fn replica_jobs_run_concurrently() {
        use std::sync::mpsc::channel;
        use std::time::Duration;
        let (to_1, from_0) = channel::<()>();
        let (to_0, from_1) = channel::<()>();
        let jobs = vec![(to_1, from_1), (to_0, from_0)];
        let met = on_replicas(jobs, |_, (tx, rx)| {
            let _ = tx.send(());
            rx.recv_timeout(Duration::from_secs(20)).is_ok()
        });
        assert_eq!(met, vec![true, true]);
    }

    #[test]
    #[should_panic(expected = "replica 1 failed")]
    fn a_panicking_replica_panics_the_caller() {
        on_replicas(vec![0, 1], |k, _| {
            assert!(k != 1, "replica 1 failed");
        });
    }

    #[test]
    fn split_errors_name_the_fields() {
        assert!(check_split(2, 16).is_ok());
        let e = check_split(0, 16).unwrap_err().to_string();
        assert!(e.contains("run.data_parallel"), "{e}");
        let e = check_split(3, 16).unwrap_err().to_string();
        assert!(
            e.contains("run.data_parallel = 3") && e.contains("views.batch_size = 16"),
            "{e}"
        );
    }
}
