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
//!    ([`crate::sigreg::ecf_sums`], `[views, slices, knots]` numbers per device), for a
//!    per-token mean (next-token) the sum and count. The loss is then exactly the
//!    single-device loss of the whole batch (design option (a) of docs/scaling.md);
//! 5. **backward** per replica of a surrogate whose gradient is that replica's share of
//!    the global loss's gradient: the global ECF enters as a constant, so
//!    `d loss / d C_k = d loss / d C` (the chain rule through a sum);
//! 6. **gradient reduction** with burn's own pieces: `GradientsParams::to_device` moves
//!    each replica's gradients to the main device, `GradientsAccumulator` sums them.
//!
//! The caller then clips and steps the main model once; the next step forks again.
//! Replicas run one after the other from this thread (GPU kernels queue asynchronously
//! per device; no host threads, so the code also runs in the browser build).

use burn::module::{Module, ModuleVisitor, Param};
use burn::optim::{GradientsAccumulator, GradientsParams};
use burn::prelude::*;
use burn::tensor::backend::AutodiffBackend;

use crate::config::LossConfig;
use crate::sigreg::{Quadrature, SigregTensors, ecf_sums, random_directions, sigreg_from_ecf};
use crate::train::{TrainTask, scalar};
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

/// The result of one data-parallel step, before clipping and the optimiser.
pub struct ParallelStep {
    /// The batch loss (equal to the single-device loss of the same batch).
    pub loss: f64,
    /// Named loss terms of the batch.
    pub terms: Vec<(&'static str, f64)>,
    /// Tokens processed by all shards.
    pub items: usize,
    /// Mean per-dimension std of the embeddings over the batch (JEPA only).
    pub embedding_std: Option<f64>,
    /// Gradients of the batch loss, summed over replicas, on `devices[0]`.
    pub grads: GradientsParams,
}

/// Checks that `w` replicas can split a batch of `batch` groups evenly.
///
/// Errors name `run.data_parallel` and `views.batch_size`.
pub fn check_split(w: usize, batch: usize) -> Result<()> {
    if w == 0 {
        return Err(Error::invalid(
            "run.data_parallel = 0: expected at least 1 (the number of model replicas)",
        ));
    }
    if !batch.is_multiple_of(w) {
        return Err(Error::invalid(format!(
            "run.data_parallel = {w} does not divide views.batch_size = {batch}: each replica \
             takes batch_size / data_parallel groups"
        )));
    }
    Ok(())
}

/// One data-parallel step of `task` at `step` on `devices` (stages in the module docs):
/// the batch loss and its gradient `sum_k grad_k` on `devices[0]`.
///
/// # Shapes
/// `devices`: `W >= 1` devices (repeated entries put several replicas on one device).
pub fn parallel_step<B: AutodiffBackend, T: TrainTask<B>>(
    task: &mut T,
    model: &T::Model,
    step: usize,
    devices: &[B::Device],
) -> Result<ParallelStep> {
    let w = devices.len();
    let Some(main) = devices.first() else {
        return Err(Error::invalid("data-parallel step: no devices"));
    };
    // 1. Replicas, each with its own graph. burn initialises parameters lazily, and a
    // clone of a lazy parameter draws its own values on first use: materialise the model
    // first (in visiting order, which for prh's encoders is the order in which the
    // single-device forward first touches them, so a fresh run draws the same weights),
    // so that every replica forks the same weights.
    model.visit(&mut Materialise);
    let replicas: Vec<T::Model> = devices.iter().map(|d| model.clone().fork(d)).collect();
    // 2-3. Shards and forward.
    let mut outs = Vec::with_capacity(w);
    for (k, (r, d)) in replicas.iter().zip(devices).enumerate() {
        outs.push(task.shard_step(r, step, Shard { index: k, count: w }, d)?);
    }
    let items = outs.iter().map(|o| o.items).sum();
    // 4. Batch statistics and each replica's surrogate loss.
    let losses: Vec<ShardLoss<B>> = outs.into_iter().map(|o| o.loss).collect();
    let combined = if matches!(losses.first(), Some(ShardLoss::Jepa { .. })) {
        combine_jepa(losses, step, devices)?
    } else {
        combine_mean(losses)?
    };
    // 5-6. Backward per replica; gradients moved to the main device and summed.
    let mut acc = GradientsAccumulator::<T::Model>::new();
    for (surrogate, replica) in combined.surrogates.into_iter().zip(&replicas) {
        let grads = GradientsParams::from_grads(surrogate.backward(), replica);
        acc.accumulate::<B>(model, grads.to_device(main, replica));
    }
    Ok(ParallelStep {
        loss: combined.loss,
        terms: combined.terms,
        items,
        embedding_std: combined.embedding_std,
        grads: acc.grads(),
    })
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

/// The JEPA batch loss from shard pieces, exactly [`crate::train::jepa_loss`] on the
/// concatenated batch:
///
/// `invariance = sum_k sum_{v,i,e} (z - c)^2 / (V N d)`;
/// `SIGReg = mean_v SIGReg(ECF_v)` with `ECF_v = sum_k (C_kv, S_kv) / N`;
/// surrogate of replica `k`: `sum_{v,i,e}(z - c)^2 / (V N d) + lambda sum_v
/// <G_C,v, C_kv> + <G_S,v, S_kv>`, with the constants
/// `G_C = 2 w_j (cos_mean - phi_j) / (V M)`, `G_S = 2 w_j sin_mean / (V M)`
/// (`d SIGReg / d C_kv`), so `sum_k grad(surrogate_k) = grad(loss)`.
fn combine_jepa<B: AutodiffBackend>(
    losses: Vec<ShardLoss<B>>,
    step: usize,
    devices: &[B::Device],
) -> Result<Combined<B>> {
    let main = &devices[0];
    let mut shards = Vec::with_capacity(losses.len());
    let mut settings = None;
    for l in losses {
        let ShardLoss::Jepa {
            views,
            n_global,
            loss,
            seed,
        } = l
        else {
            return Err(Error::invalid(
                "data-parallel step: shards of different kinds",
            ));
        };
        if views.is_empty() || n_global == 0 || n_global > views.len() {
            return Err(Error::invalid(format!(
                "data-parallel step: {} views with n_global = {n_global}",
                views.len()
            )));
        }
        settings = Some((n_global, loss, seed, views.len(), views[0].dims()[1]));
        shards.push(views);
    }
    let Some((n_global, loss, seed, v, d)) = settings else {
        return Err(Error::invalid("data-parallel step: no shards"));
    };
    let q = Quadrature::new(loss.t_max, loss.knots)?;
    let dirs = random_directions(d, loss.slices, seed, step as u64);
    let st_main = SigregTensors::<B>::new(&dirs, d, &q, main);
    // Per shard: invariance sum, ECF sums per view, column sums for the std guard.
    struct Pieces<B: Backend> {
        inv_sum: Tensor<B, 1>,
        ecf: Vec<(Tensor<B, 2>, Tensor<B, 2>)>,
    }
    let (mut n, mut pieces) = (0usize, Vec::with_capacity(shards.len()));
    let mut inv_total = Tensor::<B, 1>::zeros([1], main);
    let mut ecf_total: Vec<(Tensor<B, 2>, Tensor<B, 2>)> = Vec::new();
    let (mut col_sum, mut col_sq) = (Tensor::<B, 1>::zeros([d], main), Tensor::zeros([d], main));
    for (views, device) in shards.into_iter().zip(devices) {
        if views.iter().any(|z| z.dims()[1] != d) {
            return Err(Error::invalid(
                "data-parallel step: shards disagree on the embedding width",
            ));
        }
        let nk = views[0].dims()[0];
        n += nk;
        let st = SigregTensors::<B>::new(&dirs, d, &q, device);
        let stacked = Tensor::stack::<3>(views.clone(), 0); // (V, n_k, D)
        let centre = stacked.clone().narrow(0, 0, n_global).mean_dim(0); // (1, n_k, D)
        let inv_sum = (stacked.clone() - centre).powi_scalar(2).sum();
        let flat = stacked.reshape([v * nk, d]).detach().to_device(main);
        col_sum = col_sum + flat.clone().sum_dim(0).squeeze_dim::<1>(0);
        col_sq = col_sq + flat.powi_scalar(2).sum_dim(0).squeeze_dim::<1>(0);
        inv_total = inv_total + constant(&inv_sum, main);
        let ecf: Vec<_> = views.into_iter().map(|z| ecf_sums(z, &st)).collect();
        for (j, (c, s)) in ecf.iter().enumerate() {
            let (c, s) = (constant(c, main), constant(s, main));
            match ecf_total.get_mut(j) {
                Some((ct, sn)) => {
                    *ct = ct.clone() + c;
                    *sn = sn.clone() + s;
                }
                None => ecf_total.push((c, s)),
            }
        }
        pieces.push(Pieces { inv_sum, ecf });
    }
    // The batch loss, as jepa_loss computes it on the whole batch.
    let scale = (v * n * d) as f64;
    let invariance = scalar(inv_total.div_scalar(scale));
    let means: Vec<(Tensor<B, 2>, Tensor<B, 2>)> = ecf_total
        .into_iter()
        .map(|(c, s)| (c.div_scalar(n as f64), s.div_scalar(n as f64)))
        .collect();
    let sigreg = means
        .iter()
        .map(|(c, s)| scalar(sigreg_from_ecf(c.clone(), s.clone(), n, &st_main)))
        .sum::<f64>()
        / v as f64;
    let total = invariance + loss.lambda * sigreg;
    // Bessel-corrected variance per dimension over all V*N rows (as Tensor::var).
    let rows = (v * n) as f64;
    let mean = col_sum.div_scalar(rows);
    let var = (col_sq - mean.clone().powi_scalar(2).mul_scalar(rows)).div_scalar(rows - 1.0);
    let embedding_std = scalar(var.clamp_min(0.0).sqrt().mean());
    // d SIGReg / d C_kv and d SIGReg / d S_kv, constants shared by all replicas.
    let w_row = st_main.w.clone().transpose(); // (1, K)
    let coef = 2.0 / (v * loss.slices) as f64;
    let grads: Vec<(Tensor<B, 2>, Tensor<B, 2>)> = means
        .into_iter()
        .map(|(c, s)| {
            let gc = (c - st_main.phi.clone()) * w_row.clone();
            let gs = s * w_row.clone();
            (gc.mul_scalar(coef), gs.mul_scalar(coef))
        })
        .collect();
    let surrogates = pieces
        .into_iter()
        .zip(devices)
        .map(|(p, device)| {
            let mut sig = Tensor::<B, 1>::zeros([1], device);
            for ((c, s), (gc, gs)) in p.ecf.into_iter().zip(&grads) {
                sig = sig + (c * constant(gc, device)).sum() + (s * constant(gs, device)).sum();
            }
            p.inv_sum.div_scalar(scale) + sig.mul_scalar(loss.lambda)
        })
        .collect();
    Ok(Combined {
        loss: total,
        terms: vec![("invariance", invariance), ("sigreg", sigreg)],
        embedding_std: Some(embedding_std),
        surrogates,
    })
}

/// A per-item mean from shard sums: `loss = sum_k sum_k / sum_k count_k`; the surrogate of
/// replica `k` is `sum_k / sum_k count_k` (its exact share of the gradient).
fn combine_mean<B: AutodiffBackend>(losses: Vec<ShardLoss<B>>) -> Result<Combined<B>> {
    let mut parts = Vec::with_capacity(losses.len());
    let mut term = "loss";
    for l in losses {
        let ShardLoss::Mean { name, sum, count } = l else {
            return Err(Error::invalid(
                "data-parallel step: shards of different kinds",
            ));
        };
        term = name;
        parts.push((sum, count));
    }
    let count: usize = parts.iter().map(|p| p.1).sum();
    if count == 0 {
        return Err(Error::invalid(
            "data-parallel step: no items to average in the batch",
        ));
    }
    let total = parts
        .iter()
        .map(|(s, _)| scalar(s.clone().detach()))
        .sum::<f64>()
        / count as f64;
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
