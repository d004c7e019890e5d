//! Custom autodiff ops for burn-flex's training backend (`Autodiff<Flex>`): host kernels
//! with their own backward, where burn-flex's generic ones were the bottleneck of a CPU
//! training step (`perf record`, docs/benchmarks.md, "Training throughput").
//!
//! The model code is generic over `B: Backend`; each function here returns `Err(x)` (the
//! input, untouched) unless `B` is burn-flex's training or inference backend with f32
//! data, and the caller then uses burn's own op. The types are compared by `TypeId` and
//! the tensor moved through `dyn Any`, so no `unsafe` is involved.
//!
//! - [`gelu`]: GELU forward and backward in one vectorised pass each ([`crate::backend::gelu`]).
//! - [`adamw_step`]: AdamW's update in one fused pass per parameter ([`crate::train::adamw`]).
//! - [`permute`]: a 4-D permutation materialised (attention's head split and merge), read
//!   through the input's strides with row copies where the last axis stays. burn-flex's
//!   strided copy (the backward of `reshape(swap_dims(..))`) walks element by element
//!   through a generic iterator: ~5 % of a bert-s step.

use core::any::{Any, TypeId};

use burn::backend::{Autodiff, Flex};
use burn::tensor::{DType, Shape, Tensor, TensorData, TensorPrimitive, backend::Backend};
use burn_autodiff::checkpoint::{base::Checkpointer, strategy::NoCheckpointing};
use burn_autodiff::grads::Gradients;
use burn_autodiff::ops::{Backward, Ops, OpsKind, unary};
use burn_flex::FlexTensor;

use crate::backend::adamw_kernel::Hyper;
use burn::optim::AdamWState;

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
        None => {
            let n = x.layout().num_elements();
            // `to_contiguous` writes a fresh buffer starting at offset 0.
            std::borrow::Cow::Owned(x.to_contiguous().storage::<f32>()[..n].to_vec())
        }
    }
}

fn from_vec(v: Vec<f32>, shape: Shape) -> FlexTensor {
    FlexTensor::from_data(TensorData::new(v, shape))
}

/// GELU on burn-flex (see [`crate::backend::gelu::gelu`]); `Err(x)` on other backends.
///
/// # Shapes
/// `x` any shape -> the same shape.
pub fn gelu<B: Backend, const D: usize>(x: Tensor<B, D>) -> Result<Tensor<B, D>, Tensor<B, D>> {
    on_flex(x, gelu_train, |x| gelu_host(&x))
}

fn gelu_host(x: &FlexTensor) -> FlexTensor {
    let xs = contiguous(x);
    let mut y = vec![0.0f32; xs.len()];
    crate::backend::gelu::gelu_forward(&xs, &mut y);
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
                // Scaled in place when the gradient is a contiguous buffer from offset 0
                // (the usual case; `storage_mut` copies it first if it is shared).
                let mut g = owned_contiguous(grad);
                crate::backend::gelu::gelu_backward(&xs, &mut g.storage_mut::<f32>()[..xs.len()]);
                g
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

/// `x.permute(axes)` as a contiguous tensor, with the inverse permutation (another copy)
/// in the backward; `Err(x)` on other backends.
///
/// # Shapes
/// `x` `[d_0, d_1, d_2, d_3]` -> `[d_axes[0], d_axes[1], d_axes[2], d_axes[3]]`.
pub fn permute<B: Backend>(
    x: Tensor<B, 4>,
    axes: [usize; 4],
) -> Result<Tensor<B, 4>, Tensor<B, 4>> {
    on_flex(x, |x| permute_train(x, axes), |x| permute_host(&x, axes))
}

/// The copy: output element `(i_0, .., i_3)` is input element `i` with `i[axes[k]] = i_k`,
/// read through the input's strides (so a strided input costs nothing extra). When the
/// last axis stays last, the inner loop is a row copy.
fn permute_host(x: &FlexTensor, axes: [usize; 4]) -> FlexTensor {
    let layout = x.layout();
    let dims = layout.shape().dims::<4>();
    let strides = layout.strides();
    let out_dims = axes.map(|a| dims[a]);
    let st = axes.map(|a| strides[a]);
    let src = x.storage::<f32>();
    let base = layout.start_offset() as isize;
    let mut dst = vec![0.0f32; out_dims.iter().product()];
    // One output block per index of the first output axis.
    let block_len = out_dims[1] * out_dims[2] * out_dims[3];
    let block = |i0: usize, out: &mut [f32]| {
        let mut rows = out.chunks_exact_mut(out_dims[3].max(1));
        for i1 in 0..out_dims[1] as isize {
            for i2 in 0..out_dims[2] as isize {
                let row = base + i0 as isize * st[0] + i1 * st[1] + i2 * st[2];
                let Some(out) = rows.next() else { return };
                if st[3] == 1 {
                    let row = row as usize;
                    out.copy_from_slice(&src[row..row + out.len()]);
                } else {
                    for (i3, o) in out.iter_mut().enumerate() {
                        *o = src[(row + i3 as isize * st[3]) as usize];
                    }
                }
            }
        }
    };
    if block_len > 0 {
        #[cfg(feature = "cpu-fast")]
        {
            use rayon::prelude::*;
            dst.par_chunks_mut(block_len)
                .enumerate()
                .for_each(|(i0, out)| block(i0, out));
        }
        #[cfg(not(feature = "cpu-fast"))]
        for (i0, out) in dst.chunks_mut(block_len).enumerate() {
            block(i0, out);
        }
    }
    from_vec(dst, Shape::new(out_dims))
}

fn permute_train(x: Tensor<Train, 4>, axes: [usize; 4]) -> Tensor<Train, 4> {
    /// State: the inverse permutation.
    #[derive(Debug)]
    struct PermuteBackward;
    impl Backward<Flex, 1> for PermuteBackward {
        type State = [usize; 4];
        fn backward(self, ops: Ops<[usize; 4], 1>, grads: &mut Gradients, _: &mut Checkpointer) {
            let inverse = ops.state;
            unary::<Flex, _>(ops.parents, ops.node, grads, |grad| {
                permute_host(&grad, inverse)
            });
        }
    }
    let mut inverse = [0; 4];
    for (k, &a) in axes.iter().enumerate() {
        inverse[a] = k;
    }
    let x = x.into_primitive().tensor();
    let y = match PermuteBackward
        .prepare::<NoCheckpointing>([x.node.clone()])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => prep.finish(inverse, permute_host(&x.primitive, axes)),
        OpsKind::UnTracked(prep) => prep.finish(permute_host(&x.primitive, axes)),
    };
    Tensor::from_primitive(TensorPrimitive::Float(y))
}

/// `x` as a buffer contiguous from offset 0 (the same tensor when it already is one).
fn owned_contiguous(x: FlexTensor) -> FlexTensor {
    match x.layout().contiguous_offsets() {
        Some((0, _)) => x,
        _ => from_vec(contiguous(&x).into_owned(), x.layout().shape().clone()),
    }
}

/// A step's inputs handed back when `B` is not burn-flex.
type AdamWInputs<B, const D: usize> = (Tensor<B, D>, Tensor<B, D>, Option<AdamWState<B, D>>);

/// One AdamW step of a burn-flex parameter in one fused pass ([`crate::train::adamw`], whose
/// `SimpleOptimizer::step` calls this); `Err` hands the inputs back on other backends.
///
/// # Shapes
/// `tensor`, `grad` and the state's moments all of one shape -> the same shape.
pub fn adamw_step<B: Backend, const D: usize>(
    hyper: &Hyper,
    lr: f64,
    tensor: Tensor<B, D>,
    grad: Tensor<B, D>,
    state: Option<AdamWState<B, D>>,
) -> Result<(Tensor<B, D>, AdamWState<B, D>), AdamWInputs<B, D>> {
    if TypeId::of::<B>() != TypeId::of::<Flex>() {
        return Err((tensor, grad, state));
    }
    let flex = |t: Tensor<B, D>| -> FlexTensor {
        cast::<Tensor<B, D>, Tensor<Flex, D>>(t)
            .unwrap_or_else(|_| unreachable!("B is Flex"))
            .into_primitive()
            .tensor()
    };
    let back = |t: FlexTensor| -> Tensor<B, D> {
        cast(Tensor::<Flex, D>::from_primitive(TensorPrimitive::Float(t)))
            .unwrap_or_else(|_| unreachable!("B is Flex"))
    };
    let shape = tensor.shape();
    let n = shape.num_elements();
    let (time, first, m, v) = match state {
        Some(s) => (
            s.momentum.time + 1,
            false,
            flex(s.momentum.moment_1),
            flex(s.momentum.moment_2),
        ),
        None => {
            let zeros = || from_vec(vec![0.0; n], shape.clone());
            (1, true, zeros(), zeros())
        }
    };
    let g = flex(grad);
    let (mut p, mut m, mut v) = (
        owned_contiguous(flex(tensor)),
        owned_contiguous(m),
        owned_contiguous(v),
    );
    crate::backend::adamw_kernel::fused_update(
        hyper,
        lr,
        time,
        first,
        &mut p.storage_mut::<f32>()[..n],
        &contiguous(&g),
        &mut m.storage_mut::<f32>()[..n],
        &mut v.storage_mut::<f32>()[..n],
    );
    Ok((
        back(p),
        crate::backend::adamw_kernel::state(time, back(m), back(v)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::Distribution;

    /// The op equals burn's `permute` in values and in the gradient it passes back, for a
    /// row-copy and a gather permutation and a strided (transposed) input, on the training
    /// and the inference backend; other backends are declined.
    #[test]
    fn permute_is_burns_permute() {
        let device = Default::default();
        for axes in [[2, 0, 1, 3], [2, 0, 3, 1], [1, 2, 0, 3], [3, 2, 1, 0]] {
            for strided in [false, true] {
                let x = Tensor::<Train, 4>::random([2, 3, 4, 5], Distribution::Default, &device)
                    .require_grad();
                // Each side builds its own graph: a backward frees the nodes it walks.
                let make = || {
                    if strided {
                        x.clone().swap_dims(0, 3)
                    } else {
                        x.clone()
                    }
                };
                let xin = make();
                let ours = permute(make(), axes).unwrap_or_else(|_| panic!("declined"));
                let theirs = make().permute(axes);
                assert_eq!(ours.dims(), theirs.dims());
                let w = Tensor::<Train, 4>::random(ours.dims(), Distribution::Default, &device);
                assert_eq!(ours.to_data(), theirs.to_data(), "{axes:?} {strided}");
                let g_ours = x.grad(&(ours * w.clone()).sum().backward()).unwrap();
                let g_theirs = x.grad(&(theirs * w).sum().backward()).unwrap();
                assert_eq!(
                    g_ours.into_data(),
                    g_theirs.into_data(),
                    "{axes:?} {strided}"
                );
                let inner =
                    permute(xin.clone().inner(), axes).unwrap_or_else(|_| panic!("declined"));
                assert_eq!(inner.into_data(), xin.inner().permute(axes).into_data());
            }
        }
        let nd = Tensor::<burn::backend::NdArray, 4>::zeros([1, 2, 3, 4], &Default::default());
        assert!(permute(nd, [0, 2, 1, 3]).is_err());
    }
}
