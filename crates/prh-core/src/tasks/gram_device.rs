//! The metrics' kernel pass ([`crate::measure::gram_blocks::kernel_pass`]) on a burn
//! backend (`prh-native metrics --device cuda|wgpu|cpu`): the same [`KernelPass`] — top-k
//! lists with their similarities, tie counts, the sums of the centred linear and RBF
//! kernels, the cross sums of every layer pair, the dense kernels when the null needs
//! them — from Gram row blocks computed by the backend's matmul, so that N = 10^6 samples
//! take minutes on a GPU (the CPU pass does the same O(N^2 D) work on the host's cores).
//!
//! For each block of rows I = i0..i0+B (B from the memory budget) and every layer, with
//! the layer centred once (xc_i = x_i - xbar, r_i = x_i . xbar, m = xbar . xbar):
//! - K~[I, :] = Xc_I Xc^T, the centred linear kernel (one GEMM, `[B, N]`), whose entries
//!   are those of the CPU pass's K_ij - r_i - r_j + m without its cancellation;
//! - G[I, :] = K~ + r_I + r^T - m, the Gram rows, for the neighbour lists and the RBF
//!   kernel exp(-max(0, ||x_i||^2 + ||x_j||^2 - 2 G_ij) / (2 sigma^2)) - c (c: the kernel's
//!   mean over the first block's first B columns; HSIC ignores the shift);
//! - the top-(k+2) of each Gram row with the diagonal allowed, by k+2 rounds of a row
//!   argmax and -inf at the winner (burn's `sort`/`topk` read the tensor back to the host
//!   on GPU backends; a row argmax is one reduction on the device): the first k are the
//!   self-allowed list, the first k entries other than i the diagonal-free list, and the
//!   entry after those its tie check;
//! - per-row sums of K~^2, of the RBF kernel and its square, and of K~_a K~_b and R_a R_b
//!   for every layer pair, read back as `[B]` vectors and added up in f64.
//!
//! The diagonal and the row sums of K~ are exact closed forms on the host, in f64:
//! K~_ii = ||xc_i||^2 and sum_j K~_ij = xc_i . sum_j xc_j (zero up to rounding).
//!
//! What differs from the CPU pass: the device works in the backend's float type (f32 for
//! prh's backends), so similarities carry ~1e-7 relative error (more where the backend's
//! matmul rounds its inputs, e.g. to tf32) and two neighbours closer than that may swap
//! places; ties at the k-th neighbour are broken by the backend's argmax, not by row
//! index. The sums are exact to f32 rounding of each row's sum (~1e-6 relative).

use burn::tensor::backend::Backend;
use burn::tensor::{ElementConversion, IndexingUpdateOp, Int, Tensor, TensorData};

use crate::linalg::Matrix;
use crate::measure::gram_blocks::{
    DenseKernels, KernelPass, KernelSums, LayerSums, PairSums, PassOptions, Prep, prep,
};
use crate::measure::knn::Knn;
use crate::progress::{OnTick, tick};
use crate::{Error, Result};

/// Bytes of `[B, N]` f32 buffers one layer holds at once in [`device_pass`]: the Gram rows
/// being searched, K~, the RBF rows, and one temporary of the backend's.
const BUFFERS_PER_LAYER: usize = 4;

/// The rows per block that keep `layers` layers' buffers within `budget` bytes at `n`
/// columns: at least 1, at most `n`.
///
/// # Shapes
/// scalars -> B
pub fn block_rows(n: usize, layers: usize, budget: usize) -> usize {
    let per_row = BUFFERS_PER_LAYER * layers.max(1) * n.max(1) * std::mem::size_of::<f32>();
    (budget / per_row).clamp(1, n.max(1))
}

/// What the device needs of one layer, and what the host keeps of it.
struct DeviceLayer<B: Backend> {
    /// Xc = X - 1 xbar^T on the device, `[n, d]`.
    xc: Tensor<B, 2>,
    /// Xc^T with zero columns up to the padded width, `[d, np]`, contiguous (the GEMM's
    /// right-hand side).
    xct: Tensor<B, 2>,
    /// r_j as a row `[1, np]`, -inf on the padding (so padded Gram entries are -inf and
    /// never win a row argmax).
    r_row: Tensor<B, 2>,
    /// ||x_j||^2 as a row `[1, np]` (0 on the padding).
    sq_row: Tensor<B, 2>,
    /// r_i - m on the host `[n]`.
    r_minus_m: Vec<f64>,
    /// ||x_i||^2 on the host `[n]`.
    sq: Vec<f64>,
}

/// One layer's results so far.
struct LayerAcc {
    idx: Vec<usize>,
    sims: Vec<f64>,
    self_idx: Vec<usize>,
    self_sims: Vec<f64>,
    tied: usize,
    linear: KernelSums,
    rbf: KernelSums,
    dense: Option<DenseKernels>,
    /// The RBF shift, fixed by the first block.
    shift: Option<f64>,
}

/// The centred layer on the device and its host-side constants; the linear kernel's
/// diagonal and row sums (closed forms) go straight into `linear`.
fn upload<B: Backend>(
    x: &Matrix,
    np: usize,
    device: &B::Device,
    linear: &mut KernelSums,
) -> DeviceLayer<B> {
    let (n, d) = (x.nrows(), x.ncols());
    let Prep { xbar, r, m, sq } = prep(x);
    // Xc row-major in f32 for the device, and its column sums (zero up to rounding) for
    // the closed-form row sums of K~.
    let mut colsum = vec![0.0; d];
    let mut rows = vec![0.0f32; n * d];
    for (j, &mean) in xbar.iter().enumerate() {
        for (i, &v) in x.col_as_slice(j).iter().enumerate() {
            let c = v - mean;
            rows[i * d + j] = c as f32;
            colsum[j] += c;
        }
    }
    for (i, out) in linear.rows.iter_mut().enumerate() {
        *out = (0..d)
            .map(|j| x[(i, j)] - xbar[j])
            .zip(&colsum)
            .map(|(c, s)| c * s)
            .sum();
    }
    // K~_ii = ||x_i||^2 - 2 r_i + m, as the host pass forms it.
    linear.diag = sq.iter().zip(&r).map(|(s, ri)| s - 2.0 * ri + m).collect();
    let r_minus_m: Vec<f64> = r.iter().map(|v| v - m).collect();
    let row = |v: &[f64], pad: f32| -> Tensor<B, 2> {
        let mut data: Vec<f32> = v.iter().map(|&x| x as f32).collect();
        data.resize(np, pad);
        Tensor::from_data(TensorData::new(data, [1, np]), device)
    };
    // Xc^T laid out row-major on the host, so the device holds it contiguous.
    let mut cols = vec![0.0f32; d * np];
    for (i, row) in rows.chunks(d).enumerate() {
        for (j, &v) in row.iter().enumerate() {
            cols[j * np + i] = v;
        }
    }
    let xct = Tensor::<B, 2>::from_data(TensorData::new(cols, [d, np]), device);
    DeviceLayer {
        xc: Tensor::<B, 2>::from_data(TensorData::new(rows, [n, d]), device),
        xct,
        r_row: row(&r, f32::NEG_INFINITY),
        sq_row: row(&sq, 0.0),
        r_minus_m,
        sq,
    }
}

/// Row sums of a `[B, np]` block, np = c w, as a `[B, 1]` tensor: the sums of the c
/// chunks of w columns first (a reduction over rows of w, which the device spreads over
/// B c rows instead of B long ones), then of the chunk sums.
///
/// # Shapes
/// `t [B, c w]` -> `[B, 1]`
fn row_sum<B: Backend>(t: Tensor<B, 2>, w: usize) -> Tensor<B, 2> {
    let [bs, np] = t.dims();
    let c = np / w;
    t.reshape([bs * c, w])
        .sum_dim(1)
        .reshape([bs, c])
        .sum_dim(1)
}

/// Row max and its column of a `[B, np]` block, np = c w, by chunks as in [`row_sum`]:
/// each chunk's max and position, then the best chunk (the first of equal maxima).
///
/// # Shapes
/// `t [B, c w]` -> `[B, 1]`, `[B, 1]`
fn row_argmax<B: Backend>(t: Tensor<B, 2>, w: usize) -> (Tensor<B, 2>, Tensor<B, 2, Int>) {
    let [bs, np] = t.dims();
    let c = np / w;
    if c == 1 {
        return t.max_dim_with_indices(1);
    }
    let (v, at) = t.reshape([bs * c, w]).max_dim_with_indices(1);
    let (best, chunk) = v.reshape([bs, c]).max_dim_with_indices(1);
    let within = at.reshape([bs, c]).gather(1, chunk.clone());
    (best, chunk.mul_scalar(w as i64) + within)
}

/// Columns per reduction chunk: whole rows up to 4,096 columns, else 1,024 (N padded to a
/// multiple of it).
pub fn chunk_width(n: usize) -> usize {
    if n <= 4096 { n.max(1) } else { 1024 }
}

/// Wall time of each stage of [`device_pass`], with the device synchronised after each
/// (`PRH_DEVICE_PROFILE=1`; the syncs cost some overlap, so only for finding where the time
/// goes).
#[derive(Default)]
struct Profile {
    on: bool,
    stages: Vec<(&'static str, f64)>,
    last: Option<std::time::Instant>,
}

impl Profile {
    fn new() -> Self {
        Profile {
            on: std::env::var_os("PRH_DEVICE_PROFILE").is_some_and(|v| v != "0"),
            ..Default::default()
        }
    }

    fn mark<B: Backend>(&mut self, stage: &'static str, device: &B::Device) {
        if !self.on {
            return;
        }
        let _ = B::sync(device);
        let now = std::time::Instant::now();
        let dt = self.last.map_or(0.0, |t| (now - t).as_secs_f64());
        self.last = Some(now);
        match self.stages.iter_mut().find(|(s, _)| *s == stage) {
            Some((_, t)) => *t += dt,
            None => self.stages.push((stage, dt)),
        }
    }

    fn report(&self, blocks: usize) {
        if self.on {
            let parts: Vec<String> = self
                .stages
                .iter()
                .map(|(s, t)| format!("{s} {t:.2} s"))
                .collect();
            eprintln!("[device profile] {blocks} blocks: {}", parts.join(", "));
        }
    }
}

/// A host `[B]` column as a device `[B, 1]` tensor.
fn column<B: Backend>(v: &[f64], device: &B::Device) -> Tensor<B, 2> {
    let data: Vec<f32> = v.iter().map(|&x| x as f32).collect();
    Tensor::from_data(TensorData::new(data, [v.len(), 1]), device)
}

/// A `[B, 1]` device tensor read back as f64.
fn read_col<B: Backend>(t: Tensor<B, 2>) -> Vec<f64> {
    t.into_data().iter::<f32>().map(f64::from).collect()
}

/// The kernel pass of [`crate::measure::gram_blocks::kernel_pass`] on backend `B`, in row
/// blocks of at most `budget_bytes` of device buffers (see the module docs for the
/// formulas and what differs from the CPU pass). Ticks phase `"kernels"` per row block.
///
/// # Shapes
/// `a`: La x `[n, da]`, `b`: Lb x `[n, db]` -> per layer `Knn [n, k]` and sums `[n]`, per
/// pair two scalars
pub fn device_pass<B: Backend>(
    device: &B::Device,
    a: &[Matrix],
    b: &[Matrix],
    opts: &PassOptions,
    budget_bytes: usize,
    on_tick: OnTick<'_>,
) -> Result<KernelPass> {
    device_pass_chunked::<B>(device, a, b, opts, (budget_bytes, None), on_tick)
}

/// [`device_pass`] with the reduction chunk width given (`None`: [`chunk_width`]), so that
/// tests reach the padded, chunked reductions at small N.
fn device_pass_chunked<B: Backend>(
    device: &B::Device,
    a: &[Matrix],
    b: &[Matrix],
    opts: &PassOptions,
    (budget_bytes, width): (usize, Option<usize>),
    on_tick: OnTick<'_>,
) -> Result<KernelPass> {
    let layers: Vec<&Matrix> = a.iter().chain(b).collect();
    let n = opts.check(a, b)?;
    let (k, sigma) = (opts.k, opts.rbf_sigma);
    let (nl, s2) = (layers.len(), 2.0 * sigma * sigma);
    let mut accs: Vec<LayerAcc> = (0..nl)
        .map(|_| LayerAcc {
            idx: Vec::with_capacity(n * k),
            sims: Vec::with_capacity(n * k),
            self_idx: Vec::new(),
            self_sims: Vec::new(),
            tied: 0,
            linear: KernelSums {
                rows: vec![0.0; n],
                diag: vec![0.0; n],
                sq: 0.0,
            },
            rbf: KernelSums {
                rows: vec![0.0; n],
                diag: vec![0.0; n],
                sq: 0.0,
            },
            dense: opts.keep_dense.then(|| DenseKernels {
                linear: Matrix::zeros(n, n),
                rbf: Matrix::zeros(n, n),
            }),
            shift: None,
        })
        .collect();
    let w = width.unwrap_or_else(|| chunk_width(n));
    let np = n.div_ceil(w) * w;
    let dev: Vec<DeviceLayer<B>> = layers
        .iter()
        .zip(accs.iter_mut())
        .map(|(x, acc)| upload::<B>(x, np, device, &mut acc.linear))
        .collect();
    // 1 on the real columns, 0 on the padding (the RBF kernel's shift must not reach it).
    let real = {
        let mut m = vec![1.0f32; n];
        m.resize(np, 0.0);
        Tensor::<B, 2>::from_data(TensorData::new(m, [1, np]), device)
    };
    let mut prof = Profile::new();
    prof.mark::<B>("upload", device);
    let mut cross = vec![
        PairSums {
            linear: 0.0,
            rbf: 0.0
        };
        a.len() * b.len()
    ];
    let rows = block_rows(np, nl, budget_bytes).min(n);
    // k + 2 rounds: k self-allowed entries, then room for the diagonal and the tie check.
    let rounds = (k + 2).min(n);
    let blocks = n.div_ceil(rows);
    for (done, i0) in (0..n).step_by(rows).enumerate() {
        let i1 = (i0 + rows).min(n);
        let bs = i1 - i0;
        let mut lin_blocks = Vec::with_capacity(nl);
        let mut rbf_blocks = Vec::with_capacity(nl);
        for (dl, acc) in dev.iter().zip(accs.iter_mut()) {
            let d = dl.xc.dims()[1];
            let xi = dl.xc.clone().slice([i0..i1, 0..d]);
            let lin = xi.matmul(dl.xct.clone());
            prof.mark::<B>("gemm", device);
            let gram = lin.clone() + column::<B>(&dl.r_minus_m[i0..i1], device) + dl.r_row.clone();
            let d2 = (column::<B>(&dl.sq[i0..i1], device) + dl.sq_row.clone()
                - gram.clone().mul_scalar(2.0))
            .clamp_min(0.0);
            let rbf_raw = d2.div_scalar(-s2).exp();
            let c = *acc.shift.get_or_insert_with(|| {
                let cols = bs.min(n);
                let mean = rbf_raw.clone().slice([0..bs, 0..cols]).mean().into_scalar();
                f64::from(mean.elem::<f32>())
            });
            let rbf = rbf_raw.sub_scalar(c) * real.clone();
            prof.mark::<B>("kernels", device);
            add_block_sums(acc, &lin, &rbf, i0, c, w);
            prof.mark::<B>("sums", device);
            if let Some(dk) = &mut acc.dense {
                copy_rows(&mut dk.linear, lin.clone(), i0, n);
                copy_rows(&mut dk.rbf, rbf.clone(), i0, n);
            }
            neighbours(acc, gram, i0, (k, rounds, w), opts.with_self, device)?;
            prof.mark::<B>("top-k", device);
            lin_blocks.push(lin);
            rbf_blocks.push(rbf);
        }
        for (ia, pair) in cross.chunks_mut(b.len()).enumerate() {
            for (jb, s) in pair.iter_mut().enumerate() {
                let jl = a.len() + jb;
                let sum = |x: &Tensor<B, 2>, y: &Tensor<B, 2>| -> f64 {
                    read_col(row_sum(x.clone() * y.clone(), w)).iter().sum()
                };
                s.linear += sum(&lin_blocks[ia], &lin_blocks[jl]);
                s.rbf += sum(&rbf_blocks[ia], &rbf_blocks[jl]);
            }
        }
        prof.mark::<B>("cross", device);
        tick(on_tick, "kernels", done + 1, blocks);
        if (done + 1) % 10 == 0 || done + 1 == blocks {
            prof.report(done + 1);
        }
    }
    let mut out: Vec<LayerSums> = accs
        .into_iter()
        .map(|acc| LayerSums {
            knn: Knn { n, k, idx: acc.idx },
            sims: acc.sims,
            with_self: opts.with_self.then_some((
                Knn {
                    n,
                    k,
                    idx: acc.self_idx,
                },
                acc.self_sims,
            )),
            tied_lists: acc.tied,
            linear: acc.linear,
            rbf: acc.rbf,
            dense: acc.dense,
        })
        .collect();
    let b_out = out.split_off(a.len());
    Ok(KernelPass {
        a: out,
        b: b_out,
        cross,
    })
}

/// Adds one row block's kernel rows to the layer's sums: sum of K~^2 (the linear kernel's
/// diagonal and row sums are closed forms, set by [`upload`]); the RBF kernel's row sums,
/// sum of squares and diagonal exp(0) - c.
fn add_block_sums<B: Backend>(
    acc: &mut LayerAcc,
    lin: &Tensor<B, 2>,
    rbf: &Tensor<B, 2>,
    i0: usize,
    c: f64,
    w: usize,
) {
    let sq = |t: &Tensor<B, 2>| -> f64 { read_col(row_sum(t.clone() * t.clone(), w)).iter().sum() };
    acc.linear.sq += sq(lin);
    acc.rbf.sq += sq(rbf);
    let rows = read_col(row_sum(rbf.clone(), w));
    for (r, v) in rows.into_iter().enumerate() {
        acc.rbf.rows[i0 + r] = v;
        acc.rbf.diag[i0 + r] = 1.0 - c;
    }
}

/// Row block `[B, n]` into rows i0.. of a symmetric `[n, n]` matrix (column i0 + r gets
/// row r, the same numbers by symmetry).
fn copy_rows<B: Backend>(m: &mut Matrix, t: Tensor<B, 2>, i0: usize, n: usize) {
    let bs = t.dims()[0];
    let v: Vec<f32> = t.slice([0..bs, 0..n]).into_data().iter::<f32>().collect();
    for (r, row) in v.chunks(n).enumerate() {
        for (dst, &x) in m.col_as_slice_mut(i0 + r).iter_mut().zip(row) {
            *dst = f64::from(x);
        }
    }
}

/// The top-`rounds` entries of each Gram row by repeated row argmax, each winner set to
/// -inf before the next round; appended to the layer's lists (see the module docs).
fn neighbours<B: Backend>(
    acc: &mut LayerAcc,
    gram: Tensor<B, 2>,
    i0: usize,
    (k, rounds, w): (usize, usize, usize),
    with_self: bool,
    device: &B::Device,
) -> Result<()> {
    let bs = gram.dims()[0];
    let minus_inf = Tensor::<B, 2>::full([bs, 1], f32::NEG_INFINITY, device);
    let (mut vals, mut idxs): (Vec<Tensor<B, 2>>, Vec<Tensor<B, 2, Int>>) = (vec![], vec![]);
    let mut g = gram;
    for round in 0..rounds {
        let (v, i) = row_argmax(g.clone(), w);
        if round + 1 < rounds {
            g = g.scatter(1, i.clone(), minus_inf.clone(), IndexingUpdateOp::Add);
        }
        vals.push(v);
        idxs.push(i);
    }
    drop(g);
    let vals: Vec<f64> = Tensor::cat(vals, 1)
        .into_data()
        .iter::<f32>()
        .map(f64::from)
        .collect();
    let idxs: Vec<i64> = Tensor::cat(idxs, 1).into_data().iter::<i64>().collect();
    for r in 0..bs {
        let i = i0 + r;
        let (v, ix) = (
            &vals[r * rounds..(r + 1) * rounds],
            &idxs[r * rounds..(r + 1) * rounds],
        );
        let mut found = 0;
        let mut kth = f64::NAN;
        let mut next = None;
        for (&val, &j) in v.iter().zip(ix) {
            let j = usize::try_from(j)
                .map_err(|_| Error::invalid(format!("device argmax gave index {j}")))?;
            if j == i {
                continue;
            }
            if found < k {
                acc.idx.push(j);
                acc.sims.push(val);
                kth = val;
                found += 1;
            } else {
                next = Some(val);
                break;
            }
        }
        if found < k {
            return Err(Error::invalid(format!(
                "device top-k found {found} of {k} neighbours for row {i}"
            )));
        }
        if next == Some(kth) {
            acc.tied += 1;
        }
        if with_self {
            acc.self_idx.extend(ix[..k].iter().map(|&j| j as usize));
            acc.self_sims.extend_from_slice(&v[..k]);
        }
    }
    Ok(())
}

#[cfg(all(test, feature = "cpu", not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::backend::Cpu;
    use crate::measure::gram_blocks::kernel_pass;
    use rand::{Rng, SeedableRng};

    fn layer(n: usize, d: usize, seed: u64, mean: f64) -> Matrix {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut x = Matrix::from_fn(n, d, |_, _| rng.random::<f64>() * 2.0 - 1.0 + mean);
        for i in 0..n {
            let norm: f64 = (0..d).map(|j| x[(i, j)] * x[(i, j)]).sum::<f64>().sqrt();
            for j in 0..d {
                x[(i, j)] /= norm;
            }
        }
        x
    }

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs().max(1e-12)
    }

    /// The device pass on burn's CPU backend equals the f64 CPU pass: the same lists (no
    /// near ties at f32 on these inputs), similarities to 1e-6, every sum and HSIC to
    /// 1e-5 relative, in blocks that do not divide N (3 rows per block at N = 61), with
    /// whole-row reductions and with padded chunks.
    #[test]
    fn device_pass_equals_the_cpu_pass() {
        let (n, k) = (61, 5);
        // An offset mean makes the raw-kernel expansion cancel, as real embeddings do.
        let a = vec![layer(n, 12, 1, 0.3), layer(n, 7, 2, 0.0)];
        let b = vec![layer(n, 9, 3, 0.5)];
        let opts = PassOptions {
            k,
            with_self: true,
            rbf_sigma: 0.7,
            block_bytes: 1 << 20,
            keep_dense: true,
        };
        let cpu = kernel_pass(&a, &b, &opts, &mut |_| {}).unwrap();
        let budget = 3 * BUFFERS_PER_LAYER * 3 * n * 4;
        assert_eq!(block_rows(n, 3, budget), 3);
        // Whole rows, and chunks of 8 columns (N padded to 64).
        for chunk in [None, Some(8)] {
            let dev = device_pass_chunked::<Cpu>(
                &Default::default(),
                &a,
                &b,
                &opts,
                (budget, chunk),
                &mut |_| {},
            )
            .unwrap();
            check_equal(&cpu, &dev, n);
        }
    }

    fn check_equal(cpu: &KernelPass, dev: &KernelPass, n: usize) {
        for (c, d) in cpu.a.iter().chain(&cpu.b).zip(dev.a.iter().chain(&dev.b)) {
            assert_eq!(c.knn, d.knn);
            assert_eq!(
                c.with_self.as_ref().unwrap().0,
                d.with_self.as_ref().unwrap().0
            );
            assert_eq!(c.tied_lists, d.tied_lists);
            for (x, y) in c.sims.iter().zip(&d.sims) {
                assert!((x - y).abs() < 1e-6, "{x} vs {y}");
            }
            assert!(rel(d.linear.sq, c.linear.sq) < 1e-5);
            for i in 0..n {
                assert!((c.linear.rows[i] - d.linear.rows[i]).abs() < 1e-9);
                assert!((c.linear.diag[i] - d.linear.diag[i]).abs() < 1e-9);
            }
            // The RBF shifts differ (the CPU's first tile is the whole matrix here), so
            // compare HSIC, which ignores them.
            let hc = crate::measure::gram_blocks::hsic_unbiased_sums(&c.rbf, &c.rbf, c.rbf.sq);
            let hd = crate::measure::gram_blocks::hsic_unbiased_sums(&d.rbf, &d.rbf, d.rbf.sq);
            assert!(rel(hd.unwrap(), hc.unwrap()) < 1e-5);
            let (cd, dd) = (c.dense.as_ref().unwrap(), d.dense.as_ref().unwrap());
            for i in 0..n {
                for j in 0..n {
                    assert!((cd.linear[(i, j)] - dd.linear[(i, j)]).abs() < 1e-6);
                }
            }
        }
        for (c, d) in cpu.cross.iter().zip(&dev.cross) {
            assert!(
                rel(d.linear, c.linear) < 1e-5,
                "{} vs {}",
                d.linear,
                c.linear
            );
        }
        // The RBF cross sums differ by the shifts; biased HSIC does not.
        for (ia, (ca, da)) in cpu.a.iter().zip(&dev.a).enumerate() {
            let (cb, db) = (&cpu.b[0], &dev.b[0]);
            let hc =
                crate::measure::gram_blocks::hsic_biased_sums(&ca.rbf, &cb.rbf, cpu.cross[ia].rbf);
            let hd =
                crate::measure::gram_blocks::hsic_biased_sums(&da.rbf, &db.rbf, dev.cross[ia].rbf);
            assert!(rel(hd, hc) < 1e-5, "{hd} vs {hc}");
        }
    }

    /// Duplicated rows tie at the k-th neighbour: the pass counts the row as tied, as the
    /// CPU pass does (which of the tied neighbours is kept may differ).
    #[test]
    fn device_pass_counts_ties() {
        let n = 20;
        let mut x = layer(n, 6, 4, 0.0);
        for j in 0..6 {
            x[(1, j)] = x[(0, j)];
            x[(2, j)] = x[(0, j)];
        }
        let opts = PassOptions {
            k: 1,
            with_self: false,
            rbf_sigma: 1.0,
            block_bytes: 1 << 20,
            keep_dense: false,
        };
        let xs = [x];
        let cpu = kernel_pass(&xs, &xs, &opts, &mut |_| {}).unwrap();
        let dev = device_pass_chunked::<Cpu>(
            &Default::default(),
            &xs,
            &xs,
            &opts,
            (1 << 20, Some(8)),
            &mut |_| {},
        )
        .unwrap();
        assert!(cpu.a[0].tied_lists >= 3);
        assert_eq!(dev.a[0].tied_lists, cpu.a[0].tied_lists);
        // A sample's copies are its nearest neighbours either way.
        assert!([1, 2].contains(&dev.a[0].knn.row(0)[0]));
    }

    #[test]
    fn block_rows_respects_the_budget() {
        assert_eq!(block_rows(1000, 2, 0), 1);
        assert_eq!(block_rows(1000, 2, 4 * 2 * 1000 * 4 * 10), 10);
        assert_eq!(block_rows(10, 1, usize::MAX), 10);
    }
}
