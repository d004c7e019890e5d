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
use burn::optim::{AdamWState, LearningRate, SimpleOptimizer};
#[cfg(all(feature = "flex", not(target_arch = "wasm32")))]
use burn::tensor::DType;
use burn::tensor::Tensor;
use burn::tensor::backend::{AutodiffBackend, Backend};

pub use crate::backend::adamw_kernel::Hyper;

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
            return match crate::backend::flex_ops::adamw_step(&self.hyper, lr, tensor, grad, state)
            {
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
        use crate::train::checkpoint::{record_from_bytes, record_to_bytes};
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
