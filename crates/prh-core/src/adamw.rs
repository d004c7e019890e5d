//! AdamW (decoupled weight decay), as burn's `AdamW` with the same state and checkpoint
//! record, computed in one fused pass per parameter tensor on burn-flex.
//!
//! Why: burn's AdamW is ~10 tensor operations per parameter (moments, bias corrections,
//! square root, division, decay, update), each a pass over memory: ~3.6 % of a bert-s step
//! on one thread, and on the calling thread while rayon's workers wait with `cpu-fast`
//! (docs/benchmarks.md, "Training throughput"). The fused loop does the same f32
//! operations in the same order per element, so its results are bit-identical to burn's
//! (the tests compare them); other backends, and the AMSGrad / cautious-decay variants,
//! use burn's AdamW itself.
//!
//! Per element, at step t (t = 1 on the first step, where m = v = 0 before the update):
//! `m <- β1 m + (1 − β1) g`, `v <- β2 v + (1 − β2) g²`,
//! `p <- p (1 − lr λ) − lr (m / (1 − β1^t)) / (sqrt(v / (1 − β2^t)) + ε)`.

use burn::module::AutodiffModule;
use burn::optim::adaptor::OptimizerAdaptor;
use burn::optim::{AdamWConfig, AdamWState, LearningRate, SimpleOptimizer};
#[cfg(all(feature = "flex", not(target_arch = "wasm32")))]
use burn::tensor::DType;
use burn::tensor::Tensor;
use burn::tensor::backend::{AutodiffBackend, Backend};

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

/// burn's AdamW with a fused step on burn-flex; built by [`init`].
#[derive(Clone)]
pub struct AdamW {
    burn: burn::optim::AdamW,
    hyper: Hyper,
}

/// The optimizer for a module `M` on the training backend `B`: burn's AdamW with these
/// hyper-parameters (no AMSGrad, no cautious decay, no clipping of its own), and the same
/// checkpoint record as `AdamWConfig::init`'s.
pub fn init<B: AutodiffBackend, M: AutodiffModule<B>>(
    hyper: Hyper,
) -> OptimizerAdaptor<AdamW, M, B> {
    OptimizerAdaptor::from(AdamW::new(hyper))
}

impl AdamW {
    /// The optimizer with these hyper-parameters.
    pub fn new(hyper: Hyper) -> Self {
        let burn = hyper.burn_config().build();
        Self { burn, hyper }
    }

    /// Its hyper-parameters.
    pub fn hyper(&self) -> Hyper {
        self.hyper
    }
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

impl<B: Backend> SimpleOptimizer<B> for AdamW {
    type State<const D: usize> = AdamWState<B, D>;

    fn step<const D: usize>(
        &self,
        lr: LearningRate,
        tensor: Tensor<B, D>,
        grad: Tensor<B, D>,
        state: Option<Self::State<D>>,
    ) -> (Tensor<B, D>, Option<Self::State<D>>) {
        #[cfg(all(feature = "flex", not(target_arch = "wasm32")))]
        if tensor.dtype() == DType::F32 && grad.dtype() == DType::F32 {
            return match crate::flex_ops::adamw_step(&self.hyper, lr, tensor, grad, state) {
                Ok((t, s)) => (t, Some(s)),
                Err((tensor, grad, state)) => self.burn.step(lr, tensor, grad, state),
            };
        }
        self.burn.step(lr, tensor, grad, state)
    }

    fn to_device<const D: usize>(state: Self::State<D>, device: &B::Device) -> Self::State<D> {
        <burn::optim::AdamW as SimpleOptimizer<B>>::to_device(state, device)
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

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::Distribution;

    const HYPER: Hyper = Hyper {
        beta_1: 0.9,
        beta_2: 0.95,
        epsilon: 1e-8,
        weight_decay: 0.05,
    };

    /// Four steps of ours and of burn's AdamW from the same parameter and gradients:
    /// parameters and both moments are bit-identical (on burn-flex this compares the
    /// fused loop with burn's tensor ops), with and without weight decay, for a tensor
    /// large enough to be split into chunks with `cpu-fast`.
    fn bit_identical_to_burn<B: Backend>() {
        let device = Default::default();
        for weight_decay in [0.05, 0.0] {
            let hyper = Hyper {
                weight_decay,
                ..HYPER
            };
            let ours = AdamW::new(hyper);
            let theirs = hyper.burn_config().build();
            let p0 = Tensor::<B, 2>::random([70, 1000], Distribution::Normal(0.0, 1.0), &device);
            let (mut p1, mut p2) = (p0.clone(), p0);
            let (mut s1, mut s2) = (None, None);
            for step in 0..4 {
                let g = Tensor::<B, 2>::random([70, 1000], Distribution::Normal(0.0, 1.0), &device);
                let lr = 1e-2 / (step + 1) as f64;
                (p1, s1) = SimpleOptimizer::step(&ours, lr, p1, g.clone(), s1);
                (p2, s2) = SimpleOptimizer::step(&theirs, lr, p2, g, s2);
                assert_eq!(p1.to_data(), p2.to_data(), "parameters, step {step}");
                let (a, b) = (s1.clone().unwrap().momentum, s2.clone().unwrap().momentum);
                assert_eq!(a.time, b.time);
                assert_eq!(a.moment_1.into_data(), b.moment_1.into_data());
                assert_eq!(a.moment_2.into_data(), b.moment_2.into_data());
            }
        }
    }

    #[cfg(feature = "flex")]
    #[test]
    fn fused_step_is_bit_identical_to_burns_on_flex() {
        bit_identical_to_burn::<burn::backend::Flex>();
    }

    #[test]
    fn other_backends_use_burns_step() {
        bit_identical_to_burn::<burn::backend::NdArray>();
    }

    /// A checkpoint record of burn's own AdamW loads into this optimizer, which then
    /// continues exactly as burn's does (so its moments and step count were restored:
    /// from a fresh state the next step would differ). Runs saved before this optimizer
    /// existed resume.
    fn resumes_burns_record<AB: AutodiffBackend>() {
        use crate::checkpoint::{record_from_bytes, record_to_bytes};
        use burn::nn::{Linear, LinearConfig};
        use burn::optim::{GradientsParams, Optimizer};
        let device = Default::default();
        let grads = |m: &Linear<AB>| {
            let x = Tensor::<AB, 2>::ones([4, 3], &device);
            GradientsParams::from_grads(m.forward(x).powi_scalar(2).sum().backward(), m)
        };
        let model: Linear<AB> = LinearConfig::new(3, 2).init(&device);
        let mut burn_opt = HYPER.burn_config().init::<AB, Linear<AB>>();
        let model = burn_opt.step(1e-2, model.clone(), grads(&model));
        let bytes = record_to_bytes::<AB, _>(burn_opt.to_record()).unwrap();
        let mut ours = init::<AB, Linear<AB>>(HYPER);
        ours = ours.load_record(record_from_bytes::<AB, _>(&bytes, &device).unwrap());
        let a = burn_opt.step(1e-2, model.clone(), grads(&model));
        let b = ours.step(1e-2, model.clone(), grads(&model));
        assert_eq!(a.weight.val().into_data(), b.weight.val().into_data());
        let fresh = init::<AB, Linear<AB>>(HYPER).step(1e-2, model.clone(), grads(&model));
        assert_ne!(a.weight.val().into_data(), fresh.weight.val().into_data());
    }

    #[test]
    fn resumes_burns_record_on_ndarray() {
        resumes_burns_record::<burn::backend::Autodiff<burn::backend::NdArray>>();
    }

    #[cfg(feature = "flex")]
    #[test]
    fn resumes_burns_record_on_flex() {
        resumes_burns_record::<burn::backend::Autodiff<burn::backend::Flex>>();
    }
}
