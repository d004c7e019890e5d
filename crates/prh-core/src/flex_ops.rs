//! Custom autodiff ops for burn-flex's training backend (`Autodiff<Flex>`): host kernels
//! with their own backward, where burn-flex's generic ones were the bottleneck of a CPU
//! training step (`perf record`, docs/benchmarks.md, "Training throughput").
//!
//! The model code is generic over `B: Backend`; each function here returns `Err(x)` (the
//! input, untouched) unless `B` is burn-flex's training or inference backend with f32
//! data, and the caller then uses burn's own op. The types are compared by `TypeId` and
//! the tensor moved through `dyn Any`, so no `unsafe` is involved.
//!
//! - [`gelu`]: GELU forward and backward in one vectorised pass each ([`crate::gelu`]).
//! - [`swap_middle`]: `[a, b, c, e] -> [a, c, b, e]` (attention's head split and merge) as
//!   row copies of `e` floats. burn-flex's strided copy (the backward of
//!   `reshape(swap_dims(..))`) walks element by element: ~5 % of a bert-s step.

use core::any::{Any, TypeId};

use burn::backend::{Autodiff, Flex};
use burn::tensor::{DType, Shape, Tensor, TensorData, TensorPrimitive, backend::Backend};
use burn_autodiff::checkpoint::{base::Checkpointer, strategy::NoCheckpointing};
use burn_autodiff::grads::Gradients;
use burn_autodiff::ops::{Backward, Ops, OpsKind, unary};
use burn_flex::FlexTensor;

type Train = Autodiff<Flex>;

/// `t` as a `U`, when `T` and `U` are the same type; `Err(t)` otherwise.
fn cast<T: 'static, U: 'static>(t: T) -> Result<U, T> {
    if TypeId::of::<T>() != TypeId::of::<U>() {
        return Err(t);
    }
    let mut slot = Some(t);
    let u = (&mut slot as &mut dyn Any)
        .downcast_mut::<Option<U>>()
        .and_then(Option::take);
    Ok(u.expect("T and U have the same TypeId"))
}

/// Runs `train` on a burn-flex training tensor or `infer` on a burn-flex inference
/// tensor (both f32), converting back to `B`; `Err(x)` for any other backend or dtype.
fn on_flex<B: Backend, const D: usize, const E: usize>(
    x: Tensor<B, D>,
    train: impl FnOnce(Tensor<Train, D>) -> Tensor<Train, E>,
    infer: impl FnOnce(FlexTensor) -> FlexTensor,
) -> Result<Tensor<B, E>, Tensor<B, D>> {
    if x.dtype() != DType::F32 {
        return Err(x);
    }
    let x = match cast::<Tensor<B, D>, Tensor<Train, D>>(x) {
        Ok(x) => return Ok(cast(train(x)).unwrap_or_else(|_| unreachable!("B is Train"))),
        Err(x) => x,
    };
    match cast::<Tensor<B, D>, Tensor<Flex, D>>(x) {
        Ok(x) => {
            let y = infer(x.into_primitive().tensor());
            let y = Tensor::<Flex, E>::from_primitive(TensorPrimitive::Float(y));
            Ok(cast(y).unwrap_or_else(|_| unreachable!("B is Flex")))
        }
        Err(x) => Err(x),
    }
}

/// `x`'s f32 elements in row-major order (a copy only when `x` is strided).
fn contiguous(x: &FlexTensor) -> std::borrow::Cow<'_, [f32]> {
    match x.as_slice::<f32>() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(
            x.to_contiguous()
                .as_slice::<f32>()
                .map_or_else(Vec::new, <[f32]>::to_vec),
        ),
    }
}

fn from_vec(v: Vec<f32>, shape: Shape) -> FlexTensor {
    FlexTensor::from_data(TensorData::new(v, shape))
}

/// GELU on burn-flex (see [`crate::gelu::gelu`]); `Err(x)` on other backends.
///
/// # Shapes
/// `x` any shape -> the same shape.
pub fn gelu<B: Backend, const D: usize>(x: Tensor<B, D>) -> Result<Tensor<B, D>, Tensor<B, D>> {
    on_flex(x, gelu_train, |x| gelu_host(&x))
}

fn gelu_host(x: &FlexTensor) -> FlexTensor {
    let xs = contiguous(x);
    let mut y = vec![0.0f32; xs.len()];
    crate::gelu::gelu_forward(&xs, &mut y);
    from_vec(y, x.layout().shape().clone())
}

fn gelu_train<const D: usize>(x: Tensor<Train, D>) -> Tensor<Train, D> {
    /// State: the input, whose GELU' scales the incoming gradient.
    #[derive(Debug)]
    struct GeluBackward;
    impl Backward<Flex, 1> for GeluBackward {
        type State = FlexTensor;
        fn backward(self, ops: Ops<FlexTensor, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
            let x = ops.state;
            unary::<Flex, _>(ops.parents, ops.node, grads, |grad| {
                let xs = contiguous(&x);
                let mut g = contiguous(&grad).into_owned();
                crate::gelu::gelu_backward(&xs, &mut g);
                from_vec(g, x.layout().shape().clone())
            });
        }
    }
    let x = x.into_primitive().tensor();
    let y = match GeluBackward
        .prepare::<NoCheckpointing>([x.node.clone()])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => {
            let y = gelu_host(&x.primitive);
            prep.finish(x.primitive, y)
        }
        OpsKind::UnTracked(prep) => prep.finish(gelu_host(&x.primitive)),
    };
    Tensor::from_primitive(TensorPrimitive::Float(y))
}

/// `[a, b, c, e] -> [a, c, b, e]` as a contiguous tensor (`swap_dims(1, 2)` materialised),
/// with the same copy, transposed, in the backward; `Err(x)` on other backends.
///
/// # Shapes
/// `x` `[a, b, c, e]` -> `[a, c, b, e]`.
pub fn swap_middle<B: Backend>(x: Tensor<B, 4>) -> Result<Tensor<B, 4>, Tensor<B, 4>> {
    on_flex(x, swap_middle_train, |x| swap_middle_host(&x))
}

fn swap_middle_host(x: &FlexTensor) -> FlexTensor {
    let dims = x.layout().shape().dims::<4>();
    let [a, b, c, e] = [dims[0], dims[1], dims[2], dims[3]];
    let src = contiguous(x);
    let mut dst = vec![0.0f32; src.len()];
    for i in 0..a {
        for j in 0..b {
            for k in 0..c {
                let s = ((i * b + j) * c + k) * e;
                let d = ((i * c + k) * b + j) * e;
                dst[d..d + e].copy_from_slice(&src[s..s + e]);
            }
        }
    }
    from_vec(dst, Shape::new([a, c, b, e]))
}

fn swap_middle_train(x: Tensor<Train, 4>) -> Tensor<Train, 4> {
    #[derive(Debug)]
    struct SwapBackward;
    impl Backward<Flex, 1> for SwapBackward {
        type State = ();
        fn backward(self, ops: Ops<(), 1>, grads: &mut Gradients, _: &mut Checkpointer) {
            unary::<Flex, _>(ops.parents, ops.node, grads, |grad| swap_middle_host(&grad));
        }
    }
    let x = x.into_primitive().tensor();
    let y = match SwapBackward
        .prepare::<NoCheckpointing>([x.node.clone()])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => prep.finish((), swap_middle_host(&x.primitive)),
        OpsKind::UnTracked(prep) => prep.finish(swap_middle_host(&x.primitive)),
    };
    Tensor::from_primitive(TensorPrimitive::Float(y))
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::Distribution;

    /// The op equals `swap_dims(1, 2)` in values and in the gradient it passes back, on the
    /// training and the inference backend, and declines other backends.
    #[test]
    fn swap_middle_is_swap_dims() {
        let device = Default::default();
        let x =
            Tensor::<Train, 4>::random([2, 3, 4, 5], Distribution::Default, &device).require_grad();
        let w = Tensor::<Train, 4>::random([2, 4, 3, 5], Distribution::Default, &device);
        let ours = swap_middle(x.clone()).unwrap_or_else(|_| panic!("declined Autodiff<Flex>"));
        let theirs = x.clone().swap_dims(1, 2);
        assert_eq!(ours.to_data(), theirs.clone().into_data());
        let g_ours = x.grad(&(ours * w.clone()).sum().backward()).unwrap();
        let g_theirs = x.grad(&(theirs * w).sum().backward()).unwrap();
        assert_eq!(g_ours.into_data(), g_theirs.into_data());
        let inner = swap_middle(x.clone().inner()).unwrap_or_else(|_| panic!("declined Flex"));
        assert_eq!(
            inner.into_data(),
            x.clone().inner().swap_dims(1, 2).into_data()
        );
        let nd = Tensor::<burn::backend::NdArray, 4>::zeros([1, 2, 3, 4], &Default::default());
        assert!(swap_middle(nd).is_err());
    }
}
