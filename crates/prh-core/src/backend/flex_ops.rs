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
//! - [`ecf_sums`]: SIGReg's characteristic-function sums over every knot from one
//!   `sin_cos` per element ([`crate::train::sigreg`]).

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

/// SIGReg's empirical-characteristic-function sums on burn-flex
/// ([`crate::train::sigreg::ecf_sums`]) in one fused pass; `Err(s)` on other backends.
///
/// `out[r, j] = sum_i cos(t_j s_ir)` and `out[r, knots + j] = sum_i sin(t_j s_ir)` for the
/// equally spaced knots `t_j = j dt`: one `sin_cos` per element and the rest by the angle
/// addition recurrence (`e^{i (j+1) x} = e^{i j x} e^{i x}`, in f64, so the 17 knots cost
/// one transcendental pair instead of 17, and the f64 recurrence's error stays far below
/// f32 rounding). burn-flex evaluates `cos` and `sin` with scalar libm per element in the
/// forward and again in the backward: 95 % of a step of the demo's symbol encoders.
/// Backward: `ds_ir = sum_j t_j (cos(t_j s_ir) g_{r, knots + j} - sin(t_j s_ir) g_rj)`.
///
/// # Shapes
/// `s [n, m]` -> `[m, 2 knots]`
pub fn ecf_sums<B: Backend>(
    s: Tensor<B, 2>,
    dt: f64,
    knots: usize,
) -> Result<Tensor<B, 2>, Tensor<B, 2>> {
    on_flex(s, |s| ecf_train(s, dt, knots), |s| ecf_host(&s, dt, knots))
}

/// `(cos, sin)(dt x)` of every element of `xs`: the first knot's rotation, which the
/// forward computes and the backward reuses.
fn ecf_unit(xs: &[f32], dt: f64) -> (Vec<f64>, Vec<f64>) {
    xs.iter()
        .map(|&x| (f64::from(x) * dt).sin_cos())
        .map(|(s, c)| (c, s))
        .unzip()
}

/// Calls `f(i, j, c, s)` for every row i of the `[n, m]` input and knot j, with
/// `c[r] = cos(t_j x_ir)` and `s[r] = sin(t_j x_ir)` over the row, from the first knot's
/// rotation `(c1, s1)` ([`ecf_unit`]): the knot loop outside and the row inside, so the
/// recurrence and the callers' sums vectorise over r.
fn ecf_rows(
    c1: &[f64],
    s1: &[f64],
    m: usize,
    knots: usize,
    mut f: impl FnMut(usize, usize, &[f64], &[f64]),
) {
    let (mut c, mut sn) = (vec![0.0f64; m], vec![0.0f64; m]);
    for (i, (c1, s1)) in c1
        .chunks_exact(m.max(1))
        .zip(s1.chunks_exact(m.max(1)))
        .enumerate()
    {
        c.fill(1.0);
        sn.fill(0.0);
        for j in 0..knots {
            f(i, j, &c, &sn);
            for (((c, s), &a), &b) in c.iter_mut().zip(sn.iter_mut()).zip(c1).zip(s1) {
                (*c, *s) = (*c * a - *s * b, *s * a + *c * b);
            }
        }
    }
}

/// The forward sums `[m, 2 knots]` from the first knot's rotation of `[n, m]` inputs.
fn ecf_sums_of(c1: &[f64], s1: &[f64], m: usize, knots: usize) -> FlexTensor {
    // Knot-major sums [2 knots, m] (cos then sin), transposed to [m, 2 knots] at the end.
    let mut acc = vec![0.0f64; 2 * knots * m];
    ecf_rows(c1, s1, m, knots, |_, j, c, sn| {
        let (ac, rest) = acc[j * m..].split_at_mut(m);
        ac.iter_mut().zip(c).for_each(|(a, v)| *a += v);
        let as_ = &mut rest[(knots - 1) * m..knots * m];
        as_.iter_mut().zip(sn).for_each(|(a, v)| *a += v);
    });
    let out = (0..m * 2 * knots)
        .map(|e| acc[(e % (2 * knots)) * m + e / (2 * knots)] as f32)
        .collect();
    from_vec(out, Shape::new([m, 2 * knots]))
}

fn ecf_host(s: &FlexTensor, dt: f64, knots: usize) -> FlexTensor {
    let [_, m] = s.layout().shape().dims::<2>();
    let (c1, s1) = ecf_unit(&contiguous(s), dt);
    ecf_sums_of(&c1, &s1, m, knots)
}

fn ecf_train(s: Tensor<Train, 2>, dt: f64, knots: usize) -> Tensor<Train, 2> {
    /// State: the first knot's rotation of every input element, the shape and the knots.
    #[derive(Debug)]
    struct EcfBackward;
    type State = (Vec<f64>, Vec<f64>, Shape, f64, usize);
    impl Backward<Flex, 1> for EcfBackward {
        type State = State;
        fn backward(self, ops: Ops<State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
            let (c1, s1, shape, dt, knots) = ops.state;
            unary::<Flex, _>(ops.parents, ops.node, grads, |grad| {
                let [_, m] = shape.dims::<2>();
                let g = contiguous(&grad);
                // The incoming gradient knot-major with t_j folded in: gt(j)[r] = t_j g[r, j].
                let gt = |j: usize| -> Vec<f64> {
                    let t = (j % knots) as f64 * dt;
                    (0..m)
                        .map(|r| t * f64::from(g[r * 2 * knots + j]))
                        .collect()
                };
                let (gc, gs): (Vec<Vec<f64>>, Vec<Vec<f64>>) =
                    (0..knots).map(|j| (gt(j), gt(knots + j))).unzip();
                let mut ds = vec![0.0f64; c1.len()];
                ecf_rows(&c1, &s1, m, knots, |i, j, c, sn| {
                    let row = &mut ds[i * m..(i + 1) * m];
                    for ((d, (c, s)), (a, b)) in row
                        .iter_mut()
                        .zip(c.iter().zip(sn))
                        .zip(gs[j].iter().zip(&gc[j]))
                    {
                        *d += c * a - s * b;
                    }
                });
                from_vec(ds.into_iter().map(|v| v as f32).collect(), shape)
            });
        }
    }
    let s = s.into_primitive().tensor();
    let shape = s.primitive.layout().shape().clone();
    let [_, m] = shape.dims::<2>();
    let (c1, s1) = ecf_unit(&contiguous(&s.primitive), dt);
    let y = ecf_sums_of(&c1, &s1, m, knots);
    let y = match EcfBackward
        .prepare::<NoCheckpointing>([s.node.clone()])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => prep.finish((c1, s1, shape, dt, knots), y),
        OpsKind::UnTracked(prep) => prep.finish(y),
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

    /// The fused ECF sums equal burn's cos / sin formula (values and the gradient passed
    /// back, to f32 rounding over 17 knots and 50 rows), on a strided input too, on the
    /// training and the inference backend.
    #[test]
    fn ecf_sums_are_burns_cos_and_sin() {
        let device = Default::default();
        let (dt, knots) = (3.0 / 16.0, 17);
        let t = Tensor::<Train, 3>::from_data(
            TensorData::new(
                (0..knots).map(|j| j as f32 * dt as f32).collect(),
                [1, 1, knots],
            ),
            &device,
        );
        for strided in [false, true] {
            let x = Tensor::<Train, 2>::random([50, 8], Distribution::Normal(0.0, 1.5), &device)
                .require_grad();
            let make = || {
                if strided {
                    x.clone().transpose()
                } else {
                    x.clone()
                }
            };
            let ours = ecf_sums(make(), dt, knots).unwrap_or_else(|_| panic!("declined"));
            let arg = make().unsqueeze_dim::<3>(2) * t.clone();
            let theirs = Tensor::cat(
                vec![
                    arg.clone().cos().sum_dim(0).squeeze_dim::<2>(0),
                    arg.sin().sum_dim(0).squeeze_dim::<2>(0),
                ],
                1,
            );
            assert_eq!(ours.dims(), theirs.dims());
            ours.to_data().assert_approx_eq::<f32>(
                &theirs.to_data(),
                burn::tensor::Tolerance::absolute(2e-4),
            );
            let w = Tensor::<Train, 2>::random(ours.dims(), Distribution::Default, &device);
            let g_ours = x.grad(&(ours * w.clone()).sum().backward()).unwrap();
            let g_theirs = x.grad(&(theirs * w).sum().backward()).unwrap();
            g_ours.into_data().assert_approx_eq::<f32>(
                &g_theirs.into_data(),
                burn::tensor::Tolerance::absolute(2e-4),
            );
            let inner = ecf_sums(make().inner(), dt, knots).unwrap_or_else(|_| panic!("declined"));
            assert_eq!(inner.dims(), [if strided { 50 } else { 8 }, 2 * knots]);
        }
        let nd = Tensor::<burn::backend::NdArray, 2>::zeros([2, 3], &Default::default());
        assert!(ecf_sums(nd, dt, knots).is_err());
    }
}
