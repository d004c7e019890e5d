//! The alignment metrics at scale (paper §5, PRH `metrics.py` on N far beyond WIT-1024):
//! one pass over row blocks of every layer's kernels, so no `[n, n]` matrix is ever held.
//!
//! For each block of rows i0..i1 the Gram rows G[i, :] = x_i X^T of every layer are formed
//! ([`crate::measure::knn::BLOCK_BYTES`] at a time) and reduced at once to what the metrics need:
//! - the top-k neighbours of each row (and their similarities, which CKNNA reuses);
//! - for the centred linear kernel K~ = H K H and the RBF kernel, the row sums, diagonal and
//!   sum of squares of each kernel and the sums sum_ij K_ij L_ij over every layer pair.
//!
//! Those sums determine both HSICs of symmetric kernels exactly (see [`hsic_biased_sums`],
//! [`hsic_unbiased_sums`]). Memory is O(L n d + L n k) plus the block; time is the same
//! O(n^2 d) as the dense path. Centring the linear kernel entrywise,
//! K~_ij = K_ij - r_i - r_j + m with r_i = x_i . xbar and m = xbar . xbar, keeps the sums free
//! of the cancellation a raw-kernel expansion would suffer on anisotropic embeddings; the RBF
//! kernel is shifted by a constant (its mean over the first block) for the same reason —
//! biased HSIC ignores constant shifts, and unbiased HSIC ignores both.

use crate::linalg::Matrix;
use crate::measure::knn::{Knn, gram_block_into, rows_per_block, top_k_row};
use crate::progress::{OnTick, tick};
use crate::{Error, Result};

/// The sums of one symmetric kernel K that, with a cross sum against another kernel,
/// determine HSIC.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelSums {
    /// Row sums sum_j K_ij `[n]`.
    pub rows: Vec<f64>,
    /// Diagonal K_ii `[n]`.
    pub diag: Vec<f64>,
    /// sum_ij K_ij^2 (the cross sum of K with itself).
    pub sq: f64,
}

impl KernelSums {
    fn zeros(n: usize) -> Self {
        KernelSums {
            rows: vec![0.0; n],
            diag: vec![0.0; n],
            sq: 0.0,
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Biased HSIC (PRH's, without 1/(n-1)^2) of symmetric K, L from their sums:
/// tr(K H L H) = sum_ij K_ij L_ij - (2/n) (K1).(L1) + (1^T K 1)(1^T L 1) / n^2.
///
/// # Shapes
/// `k`, `l` over n samples, `cross` = sum_ij K_ij L_ij -> scalar
pub fn hsic_biased_sums(k: &KernelSums, l: &KernelSums, cross: f64) -> f64 {
    let n = k.rows.len() as f64;
    let (sk, sl) = (k.rows.iter().sum::<f64>(), l.rows.iter().sum::<f64>());
    cross - 2.0 / n * dot(&k.rows, &l.rows) + sk * sl / (n * n)
}

/// Unbiased HSIC (Song et al. 2012, eq. 5) of symmetric K, L from their sums, with
/// K~ = K off its diagonal: sum_{i != j} K_ij L_ij = cross - sum_i K_ii L_ii,
/// 1^T K~ 1 = sum_i (r_i - K_ii), 1^T K~ L~ 1 = sum_i (r^K_i - K_ii)(r^L_i - L_ii).
///
/// # Shapes
/// `k`, `l` over m >= 4 samples, `cross` = sum_ij K_ij L_ij -> scalar
pub fn hsic_unbiased_sums(k: &KernelSums, l: &KernelSums, cross: f64) -> Result<f64> {
    let m = k.rows.len();
    if m < 4 {
        return Err(Error::invalid(format!(
            "unbiased HSIC needs m >= 4 samples, got {m}"
        )));
    }
    let off =
        |s: &KernelSums| -> Vec<f64> { s.rows.iter().zip(&s.diag).map(|(r, d)| r - d).collect() };
    let (ko, lo) = (off(k), off(l));
    let trace = cross - dot(&k.diag, &l.diag);
    let (ksum, lsum) = (ko.iter().sum::<f64>(), lo.iter().sum::<f64>());
    let mf = m as f64;
    let value = trace + ksum * lsum / ((mf - 1.0) * (mf - 2.0)) - 2.0 * dot(&ko, &lo) / (mf - 2.0);
    Ok(value / (mf * (mf - 3.0)))
}

/// What the pass keeps of one layer.
#[derive(Debug, Clone)]
pub struct LayerSums {
    /// Top-k neighbours, diagonal excluded.
    pub knn: Knn,
    /// Their similarities G_{i, knn(i)_r}, `[n * k]`.
    pub sims: Vec<f64>,
    /// Top-k with the diagonal allowed, and similarities (only when asked for).
    pub with_self: Option<(Knn, Vec<f64>)>,
    /// Rows whose diagonal-free top-k list is ambiguous: some j outside the list (j != i)
    /// has exactly the k-th neighbour's similarity, so the list depends on the index-order
    /// tie-break.
    pub tied_lists: usize,
    /// Sums of the centred linear kernel H X X^T H.
    pub linear: KernelSums,
    /// Sums of the RBF kernel exp(-||x_i - x_j||^2 / (2 sigma^2)) minus a constant.
    pub rbf: KernelSums,
    /// The two kernels whose sums these are, `[n, n]` each (only when asked for: the
    /// permutation null of the kernel metrics needs every entry).
    pub dense: Option<DenseKernels>,
}

/// A layer's centred linear kernel and shifted RBF kernel, exactly as the pass summed them.
#[derive(Debug, Clone)]
pub struct DenseKernels {
    /// H X X^T H.
    pub linear: Matrix,
    /// exp(-||x_i - x_j||^2 / (2 sigma^2)) - c.
    pub rbf: Matrix,
}

/// Cross sums sum_ij K_ij L_ij of one layer pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairSums {
    /// Of the centred linear kernels.
    pub linear: f64,
    /// Of the shifted RBF kernels.
    pub rbf: f64,
}

/// Everything the pass found.
#[derive(Debug, Clone)]
pub struct KernelPass {
    /// One entry per layer of A, then of B.
    pub a: Vec<LayerSums>,
    pub b: Vec<LayerSums>,
    /// `cross[i * b.len() + j]`: layer i of A against layer j of B.
    pub cross: Vec<PairSums>,
}

/// Settings of [`kernel_pass`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PassOptions {
    /// Neighbours per row.
    pub k: usize,
    /// Also keep top-k lists with the diagonal allowed (biased CKNNA).
    pub with_self: bool,
    /// RBF bandwidth sigma.
    pub rbf_sigma: f64,
    /// Bytes of kernel rows held at once (both kernels of every layer together).
    pub block_bytes: usize,
    /// Also keep every layer's two kernels whole (2 L n^2 values).
    pub keep_dense: bool,
}

/// Per-layer constants of the centred linear kernel and the RBF distances.
struct Prep {
    /// r_i = x_i . xbar.
    r: Vec<f64>,
    /// m = xbar . xbar.
    m: f64,
    /// ||x_i||^2.
    sq: Vec<f64>,
}

fn prep(x: &Matrix) -> Prep {
    let (n, d) = (x.nrows(), x.ncols());
    let xbar: Vec<f64> = (0..d)
        .map(|j| x.col_as_slice(j).iter().sum::<f64>() / n as f64)
        .collect();
    let (mut r, mut sq) = (vec![0.0; n], vec![0.0; n]);
    for (j, &mean) in xbar.iter().enumerate() {
        for (i, &v) in x.col_as_slice(j).iter().enumerate() {
            r[i] += v * mean;
            sq[i] += v * v;
        }
    }
    Prep {
        r,
        m: dot(&xbar, &xbar),
        sq,
    }
}

/// One pass over row blocks of the kernels of every layer of A and B (see the module
/// docs). Layers are preprocessed `[n, d]` matrices; all share n. Ticks phase
/// `"kernels"` with the rows done after each block.
///
/// # Shapes
/// `a`: La x `[n, da]`, `b`: Lb x `[n, db]` -> per layer `Knn [n, k]` and sums `[n]`,
/// per pair two scalars
pub fn kernel_pass(
    a: &[Matrix],
    b: &[Matrix],
    opts: &PassOptions,
    on_tick: OnTick<'_>,
) -> Result<KernelPass> {
    let layers: Vec<&Matrix> = a.iter().chain(b).collect();
    let n = layers.first().map_or(0, |x| x.nrows());
    if a.is_empty() || b.is_empty() || layers.iter().any(|x| x.nrows() != n) {
        return Err(Error::invalid(
            "the kernel pass needs at least one layer per side, all with the same N rows",
        ));
    }
    // The diagonal-free lists are always kept, so k <= n - 1 either way.
    if opts.k == 0 || opts.k >= n {
        return Err(Error::invalid(format!(
            "k = {} neighbours needs 1 <= k < N = {n}",
            opts.k
        )));
    }
    let sigma = opts.rbf_sigma;
    if !(sigma > 0.0 && sigma.is_finite()) {
        return Err(Error::invalid(format!(
            "RBF sigma must be positive and finite, got {sigma}"
        )));
    }
    let (k, s2, nl) = (opts.k, 2.0 * sigma * sigma, layers.len());
    let preps: Vec<Prep> = layers.iter().map(|x| prep(x)).collect();
    // Two kernels per layer, n values per row of each.
    let rows_cap = rows_per_block(2 * nl * n, opts.block_bytes).min(n);
    let mut lin: Vec<Matrix> = (0..nl).map(|_| Matrix::zeros(n, rows_cap)).collect();
    let mut rbf: Vec<Matrix> = (0..nl).map(|_| Matrix::zeros(n, rows_cap)).collect();
    let mut out: Vec<LayerSums> = (0..nl)
        .map(|_| LayerSums {
            knn: Knn {
                n,
                k,
                idx: Vec::with_capacity(n * k),
            },
            sims: Vec::with_capacity(n * k),
            with_self: opts.with_self.then(|| {
                let knn = Knn {
                    n,
                    k,
                    idx: Vec::with_capacity(n * k),
                };
                (knn, Vec::with_capacity(n * k))
            }),
            tied_lists: 0,
            linear: KernelSums::zeros(n),
            rbf: KernelSums::zeros(n),
            dense: opts.keep_dense.then(|| DenseKernels {
                linear: Matrix::zeros(n, n),
                rbf: Matrix::zeros(n, n),
            }),
        })
        .collect();
    let mut cross = vec![
        PairSums {
            linear: 0.0,
            rbf: 0.0
        };
        a.len() * b.len()
    ];
    // The RBF shift: the mean of layer t's kernel over the first block.
    let mut shift: Vec<Option<f64>> = vec![None; nl];
    // Threads: faer's global parallelism. Layers run as parallel tasks; each layer's Gram
    // product gets an equal share of the threads beyond one per layer.
    #[cfg(not(target_arch = "wasm32"))]
    let threads = crate::linalg::threads();
    #[cfg(target_arch = "wasm32")]
    let threads = 1;
    let parallel = threads > 1;
    #[cfg(not(target_arch = "wasm32"))]
    let gemm_par = if threads > nl {
        faer::Par::rayon(threads / nl)
    } else {
        faer::Par::Seq
    };
    #[cfg(target_arch = "wasm32")]
    let gemm_par = faer::Par::Seq;
    let ctx = BlockCtx { k, s2, n, gemm_par };
    for i0 in (0..n).step_by(rows_cap) {
        let rows = rows_cap.min(n - i0);
        // Layers are independent within a block: one task each, on rayon's pool when
        // faer's parallelism (`linalg::set_threads`) allows more than one thread. Each
        // task owns its layer's buffers and sums, so the result does not depend on it.
        let jobs = lin
            .iter_mut()
            .zip(rbf.iter_mut())
            .zip(out.iter_mut())
            .zip(shift.iter_mut())
            .zip(layers.iter().zip(&preps));
        let one = |((((lin, rbf), o), shift), (x, p)): LayerJob<'_>| {
            layer_block(&ctx, x, p, i0, rows, lin, rbf, o, shift)
        };
        for_each_maybe_par(jobs, parallel, one);
        let (lin, rbf) = (&lin, &rbf);
        let pair_sums = |(ia, pair): (usize, &mut [PairSums])| {
            for (jb, s) in pair.iter_mut().enumerate() {
                let tb = a.len() + jb;
                for r in 0..rows {
                    s.linear += dot(lin[ia].col_as_slice(r), lin[tb].col_as_slice(r));
                    s.rbf += dot(rbf[ia].col_as_slice(r), rbf[tb].col_as_slice(r));
                }
            }
        };
        let pairs = cross.chunks_mut(b.len()).enumerate();
        for_each_maybe_par(pairs, parallel, pair_sums);
        tick(on_tick, "kernels", i0 + rows, n);
    }
    let b_out = out.split_off(a.len());
    Ok(KernelPass {
        a: out,
        b: b_out,
        cross,
    })
}

impl KernelSums {
    /// The sums of L' = P L P^T, L'_ij = L_{perm_i, perm_j}: rows and diagonal permuted,
    /// the sum of squares unchanged.
    pub fn permuted(&self, perm: &[usize]) -> KernelSums {
        KernelSums {
            rows: perm.iter().map(|&p| self.rows[p]).collect(),
            diag: perm.iter().map(|&p| self.diag[p]).collect(),
            sq: self.sq,
        }
    }
}

impl LayerSums {
    /// What the pass would have kept of the layer with its rows reordered, row i of the
    /// new layer being row perm[i] of this one (the permutation null's B[perm]): lists
    /// relabelled, similarities and kernel sums permuted. The dense kernels are not
    /// copied (use [`permuted_cross`] with the originals).
    ///
    /// # Shapes
    /// `perm [n]` (a permutation of 0..n) -> the same shapes
    pub fn permuted(&self, perm: &[usize]) -> LayerSums {
        let k = self.knn.k;
        let sims = |s: &[f64]| -> Vec<f64> {
            perm.iter()
                .flat_map(|&p| s[p * k..(p + 1) * k].iter().copied())
                .collect()
        };
        LayerSums {
            knn: self.knn.permuted(perm),
            sims: sims(&self.sims),
            with_self: self
                .with_self
                .as_ref()
                .map(|(knn, s)| (knn.permuted(perm), sims(s))),
            tied_lists: self.tied_lists,
            linear: self.linear.permuted(perm),
            rbf: self.rbf.permuted(perm),
            dense: None,
        }
    }
}

/// The cross sum of K against L with L's samples reordered:
/// sum_ij K_ij L_{perm_i, perm_j}, O(n^2) (one gathered pass over L per column of K).
///
/// # Shapes
/// `k [n, n]`, `l [n, n]`, `perm [n]` -> scalar
pub fn permuted_cross(k: &Matrix, l: &Matrix, perm: &[usize]) -> f64 {
    (0..k.ncols())
        .map(|j| {
            let lc = l.col_as_slice(perm[j]);
            k.col_as_slice(j)
                .iter()
                .zip(perm)
                .map(|(&kij, &p)| kij * lc[p])
                .sum::<f64>()
        })
        .sum()
}

/// `f` on every item: on rayon's pool when `parallel` (native builds; the browser has no
/// threads), else in order on this thread.
fn for_each_maybe_par<I>(items: I, parallel: bool, f: impl Fn(I::Item) + Sync + Send)
where
    I: Iterator + Send,
    I::Item: Send,
{
    #[cfg(not(target_arch = "wasm32"))]
    if parallel {
        use rayon::iter::{ParallelBridge, ParallelIterator};
        items.par_bridge().for_each(f);
        return;
    }
    let _ = parallel;
    items.for_each(f);
}

/// One layer's buffers and sums in a block, and its inputs.
type LayerJob<'a> = (
    (
        ((&'a mut Matrix, &'a mut Matrix), &'a mut LayerSums),
        &'a mut Option<f64>,
    ),
    (&'a &'a Matrix, &'a Prep),
);

/// What every layer's share of a block needs besides its own buffers.
struct BlockCtx {
    k: usize,
    /// 2 sigma^2 of the RBF kernel.
    s2: f64,
    n: usize,
    /// Threads of each Gram product.
    gemm_par: faer::Par,
}

/// One layer's share of the block of rows `i0..i0 + rows`: its Gram rows into `lin`
/// (column r is row i0 + r), their top-k lists and ties into `o`, the RBF rows into
/// `rbf`, then both kernels' rows centred / shifted and summed into `o` (the cross sums
/// between layers are the caller's).
///
/// # Shapes
/// `x [n, d]`, `lin`, `rbf` `[n, >= rows]`
#[allow(clippy::too_many_arguments)]
fn layer_block(
    ctx: &BlockCtx,
    x: &Matrix,
    p: &Prep,
    i0: usize,
    rows: usize,
    lin: &mut Matrix,
    rbf: &mut Matrix,
    o: &mut LayerSums,
    shift: &mut Option<f64>,
) {
    let (k, s2, n) = (ctx.k, ctx.s2, ctx.n);
    // (n, rows): column r is Gram row i0 + r.
    gram_block_into(
        lin.as_mut().subcols_mut(0, rows),
        x.as_ref(),
        x.subrows(i0, rows),
        ctx.gemm_par,
    );
    for r in 0..rows {
        let i = i0 + r;
        let g = lin.col_as_slice(r);
        top_k_row(g, k, Some(i), &mut o.knn.idx, &mut o.sims);
        // Tied at the boundary: more values (j != i) equal the k-th similarity
        // than the list holds.
        let kth = o.sims[o.sims.len() - 1];
        let in_list = o.sims[o.sims.len() - k..]
            .iter()
            .filter(|&&v| v == kth)
            .count();
        let equal = g
            .iter()
            .enumerate()
            .filter(|&(j, &v)| j != i && v == kth)
            .count();
        if equal > in_list {
            o.tied_lists += 1;
        }
        if let Some((knn, sims)) = &mut o.with_self {
            top_k_row(g, k, None, &mut knn.idx, sims);
        }
        let (gi, ri) = (p.sq[i], p.r[i]);
        let col = rbf.col_as_slice_mut(r);
        for ((v, &gij), &gj) in col.iter_mut().zip(g).zip(&p.sq) {
            *v = (-(gi + gj - 2.0 * gij).max(0.0) / s2).exp();
        }
        let g = lin.col_as_slice_mut(r);
        for (v, &rj) in g.iter_mut().zip(&p.r) {
            *v = *v - ri - rj + p.m;
        }
    }
    let c = *shift.get_or_insert_with(|| {
        let total: f64 = (0..rows)
            .map(|r| rbf.col_as_slice(r).iter().sum::<f64>())
            .sum();
        total / (rows * n) as f64
    });
    for r in 0..rows {
        let i = i0 + r;
        let col = rbf.col_as_slice_mut(r);
        col.iter_mut().for_each(|v| *v -= c);
        accumulate(&mut o.rbf, i, col);
        accumulate(&mut o.linear, i, lin.col_as_slice(r));
        if let Some(dk) = &mut o.dense {
            // Column i is kernel row i (the kernels are symmetric).
            dk.rbf.col_as_slice_mut(i).copy_from_slice(col);
            dk.linear
                .col_as_slice_mut(i)
                .copy_from_slice(lin.col_as_slice(r));
        }
    }
}

/// Adds row i of a kernel to its sums.
fn accumulate(s: &mut KernelSums, i: usize, row: &[f64]) {
    s.rows[i] = row.iter().sum();
    s.diag[i] = row[i];
    s.sq += dot(row, row);
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn random(n: usize, d: usize, seed: u64) -> Matrix {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        Matrix::from_fn(n, d, |_, _| r.random::<f64>() - 0.5)
    }

    /// The pass on one thread and on rayon's pool (layers as parallel tasks) agree bit
    /// for bit: each task owns one layer's buffers and sums, so no sum changes order.
    /// (Other tests may change faer's global parallelism meanwhile; either setting must
    /// give these same bits, which is the property checked.)
    #[test]
    fn parallel_layers_give_the_sequential_bits() {
        let a = vec![random(203, 7, 1), random(203, 5, 2)];
        let b = vec![random(203, 9, 3)];
        let opts = PassOptions {
            k: 6,
            with_self: true,
            rbf_sigma: 0.8,
            // 2 kernels x 3 layers x 203 values x 8 bytes x 17 rows: 12 blocks.
            block_bytes: 2 * 3 * 203 * 8 * 17,
            keep_dense: false,
        };
        let before = faer::get_global_parallelism();
        // The pass of `a` against `b` on one thread and on `threads`.
        let both = |a: &[Matrix], b: &[Matrix], threads| {
            let run = |par| {
                faer::set_global_parallelism(par);
                kernel_pass(a, b, &opts, &mut |_| {}).unwrap()
            };
            let pair = (run(faer::Par::Seq), run(faer::Par::rayon(threads)));
            faer::set_global_parallelism(before);
            pair
        };
        // Three layers on 2 threads; then one layer a side on 4 threads, where each Gram
        // product runs on 2 of them.
        for (seq, par) in [both(&a, &b, 2), both(&a[..1], &b, 4)] {
            for (x, y) in seq.a.iter().chain(&seq.b).zip(par.a.iter().chain(&par.b)) {
                assert_eq!(x.knn, y.knn);
                assert_eq!(x.sims, y.sims);
                assert_eq!(x.with_self, y.with_self);
                assert_eq!(x.tied_lists, y.tied_lists);
                assert_eq!(x.linear, y.linear);
                assert_eq!(x.rbf, y.rbf);
            }
            assert_eq!(seq.cross, par.cross);
        }
    }
}
