//! AdamW's compute kernel: its hyper-parameters and the fused per-element update on host
//! slices that [`crate::backend::flex_ops::adamw_step`] runs on burn-flex tensors. The
//! optimiser itself (burn's `SimpleOptimizer`, the checkpoint record) is
//! `crate::train::adamw`; the formula is stated there.

use burn::optim::AdamWConfig;
#[cfg(all(feature = "flex", not(target_arch = "wasm32")))]
use burn::{
    optim::{AdamWState, LearningRate},
    tensor::{Tensor, backend::Backend},
};

/// AdamW's hyper-parameters (burn's `AdamWConfig` keeps its fields private).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hyper {
    /// First-moment decay β1.
    pub beta_1: f32,
    /// Second-moment decay β2.
    pub beta_2: f32,
    /// ε added to the square root of the second moment.
    pub epsilon: f32,
    /// Decoupled weight decay λ (the step multiplies weights by 1 − lr λ).
    pub weight_decay: f32,
}

impl Hyper {
    /// burn's config with these hyper-parameters (and burn's defaults otherwise).
    pub fn burn_config(&self) -> AdamWConfig {
        AdamWConfig::new()
            .with_beta_1(self.beta_1)
            .with_beta_2(self.beta_2)
            .with_epsilon(self.epsilon)
            .with_weight_decay(self.weight_decay)
    }
}

/// The fused update on host slices, in burn's operation order (see the module doc).
/// `time` is the step count after this update (1 on the first); `first` says that `m` and
/// `v` hold no state yet (they are then overwritten, as burn initialises them from `g`).
///
/// # Shapes
/// `p`, `g`, `m`, `v` all `[n]`.
#[cfg(all(feature = "flex", not(target_arch = "wasm32")))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn fused_update(
    hyper: &Hyper,
    lr: LearningRate,
    time: usize,
    first: bool,
    p: &mut [f32],
    g: &[f32],
    m: &mut [f32],
    v: &mut [f32],
) {
    let (b1, b2) = (hyper.beta_1, hyper.beta_2);
    let (f1, f2) = (1.0 - b1, 1.0 - b2);
    // burn: `div_scalar(1f32 - beta.powi(t))`, `add_scalar(epsilon)`, `mul_scalar(lr)`
    // and `mul_scalar(1.0 - lr * weight_decay)` with f64 scalars converted to f32.
    let c1 = 1f32 - b1.powi(time as i32);
    let c2 = 1f32 - b2.powi(time as i32);
    let eps = hyper.epsilon;
    let lr32 = lr as f32;
    let decay_rate = lr * hyper.weight_decay as f64;
    let keep = (1.0 - decay_rate) as f32;
    let body = |p: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32]| {
        for (((p, &g), m), v) in p.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
            if first {
                *m = g * f1;
                *v = (g * g) * f2;
            } else {
                *m = *m * b1 + g * f1;
                *v = *v * b2 + (g * g) * f2;
            }
            let delta = (*m / c1) / ((*v / c2).sqrt() + eps);
            let decayed = if decay_rate == 0.0 { *p } else { *p * keep };
            *p = decayed - delta * lr32;
        }
    };
    #[cfg(feature = "cpu-fast")]
    {
        use rayon::prelude::*;
        const CHUNK: usize = 1 << 14;
        if p.len() > 2 * CHUNK {
            p.par_chunks_mut(CHUNK)
                .zip(g.par_chunks(CHUNK))
                .zip(m.par_chunks_mut(CHUNK))
                .zip(v.par_chunks_mut(CHUNK))
                .for_each(|(((p, g), m), v)| body(p, g, m, v));
            return;
        }
    }
    body(p, g, m, v)
}

/// burn's state for the fused step's result.
#[cfg(all(feature = "flex", not(target_arch = "wasm32")))]
pub(crate) fn state<B: Backend, const D: usize>(
    time: usize,
    moment_1: Tensor<B, D>,
    moment_2: Tensor<B, D>,
) -> AdamWState<B, D> {
    AdamWState {
        momentum: burn::optim::AdaptiveMomentumState {
            time,
            moment_1,
            moment_2,
            max_moment_2: None,
        },
    }
}
