//! The training loop's config sections (`[run]`, `[loss]`, `[optim]`), shared by every
//! task's config (text and scene runs), and read by [`crate::train::train`].

use serde::{Deserialize, Serialize};

use crate::theory::view_kind::ViewKind;

/// Run length and bookkeeping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunConfig {
    /// Training objective: `good`, `bad` or `next-token`.
    pub objective: ViewKind,
    /// Seed of every random draw (init, views, SIGReg directions).
    pub seed: u64,
    /// Number of optimiser steps.
    pub steps: usize,
    /// Write a metrics line every this many steps.
    pub log_every: usize,
    /// Write the `latest` checkpoint every this many steps (and at the end).
    pub checkpoint_every: usize,
    /// Evaluate alignment every this many steps (0: only at the end, if a target is set).
    pub eval_every: usize,
    /// Stop when the embeddings' mean per-dimension std falls below this (collapse).
    pub collapse_std: f64,
    /// Stop after this many steps with a `latest` checkpoint, as if interrupted; the
    /// schedule still spans `steps` (time-boxed chunks; 0: run to the end).
    pub stop_at: usize,
    /// Data-parallel model replicas `W` (`crate::train::data_parallel`): each step's batch is
    /// split over `W` replicas (devices 0..W-1 on GPU backends, one device on the CPU);
    /// must divide `views.batch_size`. 1: single-device training.
    pub data_parallel: usize,
    /// Stop on a plateau of the loss: compare mean losses of windows of this many steps
    /// (`crate::train::checkpoint::Plateau`); `steps` is then the budget. 0: run all `steps`.
    pub plateau_window: usize,
    /// Windows the plateau rule looks back over (at least 1).
    pub plateau_patience: usize,
    /// The plateau's tolerance: stop when the last `plateau_patience` windows lowered the
    /// best mean loss by less than this share of the drop since the first window.
    pub plateau_tol: f64,
}

impl RunConfig {
    /// The plateau tolerance must lie in (0, 1) when the rule is on.
    pub fn check_plateau(&self) -> std::result::Result<(), String> {
        if self.plateau_window > 0 && !(self.plateau_tol > 0.0 && self.plateau_tol < 1.0) {
            return Err(format!(
                "expected a share in (0, 1) with run.plateau_window = {}, got {}",
                self.plateau_window, self.plateau_tol
            ));
        }
        Ok(())
    }
}

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            objective: ViewKind::Good,
            seed: 0,
            steps: 1000,
            log_every: 10,
            checkpoint_every: 200,
            eval_every: 0,
            collapse_std: 1e-4,
            stop_at: 0,
            data_parallel: 1,
            plateau_window: 0,
            plateau_patience: 4,
            plateau_tol: 0.01,
        }
    }
}

/// Which JEPA objective trains the encoder (`loss.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum LossKind {
    /// LeJEPA's `invariance + lambda * SIGReg`: the paper's training loss. The theorem's
    /// uniqueness proof does not cover it (paper §7).
    #[default]
    Sigreg,
    /// The whitened second-order objective the theorem is proven for: the centred spectral
    /// contrastive loss ([`crate::train::spectral_loss`]), whose optimum spans exactly
    /// F = D^-1/2 U_d. `lambda`, `slices`, `t_max` and `knots` are not used.
    Spectral,
}

impl LossKind {
    /// The config spelling (`sigreg` / `spectral`).
    pub fn name(self) -> &'static str {
        match self {
            LossKind::Sigreg => "sigreg",
            LossKind::Spectral => "spectral",
        }
    }
}

/// JEPA loss: `invariance + lambda * SIGReg` (LeJEPA's convention, lambda multiplies
/// SIGReg), or with `kind = "spectral"` the centred spectral contrastive loss.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LossConfig {
    /// `sigreg` (the paper's LeJEPA loss, default) or `spectral` (the theorem's objective).
    pub kind: LossKind,
    /// SIGReg coefficient (paper: 0.02).
    pub lambda: f64,
    /// Random slices per step.
    pub slices: usize,
    /// Largest Epps–Pulley knot.
    pub t_max: f64,
    /// Number of knots on `[0, t_max]`.
    pub knots: usize,
}

impl Default for LossConfig {
    fn default() -> Self {
        Self {
            kind: LossKind::Sigreg,
            lambda: 0.02,
            slices: 256,
            t_max: 3.0,
            knots: 17,
        }
    }
}

/// AdamW with linear warmup then cosine decay (paper section 4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OptimConfig {
    /// Peak learning rate (paper: 5e-4; 1e-4 for long/large runs).
    pub lr: f64,
    /// Learning rate at the end of the cosine.
    pub min_lr: f64,
    /// Linear warmup steps from 0 to `lr`.
    pub warmup_steps: usize,
    /// Decoupled weight decay (paper: 0.05).
    pub weight_decay: f64,
    /// Clip the global gradient norm to this (0: no clipping).
    pub grad_clip: f64,
    /// Adam beta1.
    pub beta1: f64,
    /// Adam beta2.
    pub beta2: f64,
}

impl Default for OptimConfig {
    fn default() -> Self {
        Self {
            lr: 5e-4,
            min_lr: 0.0,
            warmup_steps: 100,
            weight_decay: 0.05,
            grad_clip: 1.0,
            beta1: 0.9,
            beta2: 0.999,
        }
    }
}
