//! The alignment metrics at scale (paper §5, PRH `metrics.py` on N far beyond WIT-1024):
//! one pass over tiles of the upper triangle of every layer's kernels, so no `[n, n]`
//! matrix is ever held.
//!
//! For each tile of rows I = i0..i0+T against columns J = j0..j0+T with j0 >= i0, the Gram
//! tile G[J, I] = X_J X_I^T of every layer is formed once (T <= 512, three `[T, T]` buffers
//! per layer within [`crate::measure::knn::BLOCK_BYTES`]) and, since the kernels are
//! symmetric, serves the rows of I and (through its transpose) those of J: half the
//! products of a pass over whole Gram rows. Each tile is reduced at once to what the
//! metrics need:
//! - the top-k neighbours of each row (and their similarities, which CKNNA reuses), kept
//!   as running lists: every row meets its columns in ascending order (the tiles of an
//!   earlier row tile reach it first, through their transposes), so ties still go to the
//!   lower index, exactly as with whole rows;
//! - for the centred linear kernel K~ = H K H and the RBF kernel, the row sums, diagonal and
//!   sum of squares of each kernel and the sums sum_ij K_ij L_ij over every layer pair
//!   (off-diagonal tiles counted twice).
//!
//! Those sums determine both HSICs of symmetric kernels exactly (see [`hsic_biased_sums`],
//! [`hsic_unbiased_sums`]). Memory is O(L n d + L n k) plus the block; time is the same
//! O(n^2 d) as the dense path. Centring the linear kernel entrywise,
//! K~_ij = K_ij - r_i - r_j + m with r_i = x_i . xbar and m = xbar . xbar, keeps the sums free
//! of the cancellation a raw-kernel expansion would suffer on anisotropic embeddings; the RBF
//! kernel is shifted by a constant (its mean over the first tile) for the same reason —
//! biased HSIC ignores constant shifts, and unbiased HSIC ignores both.

use crate::linalg::Matrix;
use crate::measure::knn::{Knn, Lists, Tile, gram_block_into, offer_tile, tile_side, upper_tiles};
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
    /// Bytes of tile buffers held at once (three `[T, T]` f64 buffers per layer; the
    /// tile side T is the largest that fits, at most 512).
    pub block_bytes: usize,
    /// Also keep every layer's two kernels whole (2 L n^2 values).
    pub keep_dense: bool,
}

impl PassOptions {
    /// Checks the options against the layers of a pass (every pass, on the host or a
    /// device): at least one layer per side, all with the same N rows, 1 <= k < N, and a
    /// positive finite RBF sigma. Returns N.
    ///
    /// # Shapes
    /// `a`: La x `[n, da]`, `b`: Lb x `[n, db]` -> n
    pub fn check(&self, a: &[Matrix], b: &[Matrix]) -> Result<usize> {
        let n = a.first().map_or(0, |x| x.nrows());
        if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|x| x.nrows() != n) {
            return Err(Error::invalid(
                "the kernel pass needs at least one layer per side, all with the same N rows",
            ));
        }
        // The diagonal-free lists are always kept, so k <= n - 1 either way.
        if self.k == 0 || self.k >= n {
            return Err(Error::invalid(format!(
                "k = {} neighbours needs 1 <= k < N = {n}",
                self.k
            )));
        }
        let sigma = self.rbf_sigma;
        if !(sigma > 0.0 && sigma.is_finite()) {
            return Err(Error::invalid(format!(
                "RBF sigma must be positive and finite, got {sigma}"
            )));
        }
        Ok(n)
    }
}

/// Per-layer constants of the centred linear kernel and the RBF distances (shared with the
/// device pass, `crate::tasks::gram_device`).
pub(crate) struct Prep {
    /// xbar, the column means `[d]`.
    pub(crate) xbar: Vec<f64>,
    /// r_i = x_i . xbar.
    pub(crate) r: Vec<f64>,
    /// m = xbar . xbar.
    pub(crate) m: f64,
    /// ||x_i||^2.
    pub(crate) sq: Vec<f64>,
}

/// The constants of `x [n, d]`: column means, r, m and the squared row norms.
pub(crate) fn prep(x: &Matrix) -> Prep {
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
        m: dot(&xbar, &xbar),
        xbar,
        r,
        sq,
    }
}

/// One pass over the upper triangle of every layer's kernels, tile by tile (see the module
/// docs): each Gram tile G[J, I] (J at or after I) is formed once and serves the rows of
/// both I and J (the kernels are symmetric), so the pass does half the products of a
/// row-block pass. Layers are preprocessed `[n, d]` matrices; all share n. Ticks phase
/// `"kernels"` after each tile, counting tiles (nt (nt + 1) / 2 of them for nt tiles a
/// side): the first row tile spans the whole triangle's width and the last one tile, so
/// rows would make a bar's rate and ETA wrong by up to 2x.
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
    let n = opts.check(a, b)?;
    let sigma = opts.rbf_sigma;
    let (k, s2, nl) = (opts.k, 2.0 * sigma * sigma, layers.len());
    let preps: Vec<Prep> = layers.iter().map(|x| prep(x)).collect();
    // Three [T, T] buffers per layer (Gram, RBF, transposed Gram).
    let tile = tile_side(3 * nl, opts.block_bytes).min(n);
    let mut bufs: Vec<Buffers> = (0..nl).map(|_| Buffers::new(tile)).collect();
    let mut states: Vec<LayerState> = (0..nl)
        .map(|_| LayerState {
            lists: Lists::new(n, k, true),
            with_self: opts.with_self.then(|| Lists::new(n, k, false)),
            linear: KernelSums::zeros(n),
            rbf: KernelSums::zeros(n),
            dense: opts.keep_dense.then(|| DenseKernels {
                linear: Matrix::zeros(n, n),
                rbf: Matrix::zeros(n, n),
            }),
            shift: None,
        })
        .collect();
    let mut cross = vec![
        PairSums {
            linear: 0.0,
            rbf: 0.0
        };
        a.len() * b.len()
    ];
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
    let ctx = TileCtx { s2, gemm_par };
    let sides = n.div_ceil(tile);
    let (mut done, tiles) = (0, sides * (sides + 1) / 2);
    // Row tile by row tile, each against itself and the column tiles after it.
    for t in upper_tiles(n, tile) {
        // Layers are independent within a tile: one task each, on rayon's pool when
        // faer's parallelism (`linalg::set_threads`) allows more than one thread. Each
        // task owns its layer's buffers and state, so the result does not depend on it.
        let jobs = bufs
            .iter_mut()
            .zip(states.iter_mut())
            .zip(layers.iter().zip(&preps));
        let one = |((buf, st), (x, p)): ((&mut Buffers, &mut LayerState), (&&Matrix, &Prep))| {
            layer_tile(&ctx, x, p, &t, buf, st)
        };
        for_each_maybe_par(jobs, parallel, one);
        // Off-diagonal tiles stand for themselves and their transposes.
        let w = if t.i0 == t.j0 { 1.0 } else { 2.0 };
        let bufs = &bufs;
        let pair_sums = |(ia, pair): (usize, &mut [PairSums])| {
            for (jb, s) in pair.iter_mut().enumerate() {
                let (x, y) = (&bufs[ia], &bufs[a.len() + jb]);
                let (mut lin, mut rbf) = (0.0, 0.0);
                for r in 0..t.ri {
                    lin += dot(
                        &x.lin.col_as_slice(r)[..t.rj],
                        &y.lin.col_as_slice(r)[..t.rj],
                    );
                    rbf += dot(
                        &x.rbf.col_as_slice(r)[..t.rj],
                        &y.rbf.col_as_slice(r)[..t.rj],
                    );
                }
                s.linear += w * lin;
                s.rbf += w * rbf;
            }
        };
        let pairs = cross.chunks_mut(b.len()).enumerate();
        for_each_maybe_par(pairs, parallel, pair_sums);
        done += 1;
        tick(on_tick, "kernels", done, tiles);
    }
    let mut out: Vec<LayerSums> = states.into_iter().map(|st| st.finish(tile)).collect();
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

/// What every layer's share of a tile needs besides its own buffers.
struct TileCtx {
    /// 2 sigma^2 of the RBF kernel.
    s2: f64,
    /// Threads of each Gram product.
    gemm_par: faer::Par,
}

/// One layer's tile buffers, `[T, T]` each: column r holds row i0 + r's entries over J.
struct Buffers {
    /// The Gram tile, then the centred linear kernel's.
    lin: Matrix,
    /// The shifted RBF kernel's tile.
    rbf: Matrix,
    /// The Gram tile transposed (column c: row j0 + c over I), for J's lists.
    tr: Matrix,
}

impl Buffers {
    fn new(t: usize) -> Self {
        Buffers {
            lin: Matrix::zeros(t, t),
            rbf: Matrix::zeros(t, t),
            tr: Matrix::zeros(t, t),
        }
    }
}

/// One layer's state through the pass.
struct LayerState {
    lists: Lists,
    with_self: Option<Lists>,
    linear: KernelSums,
    rbf: KernelSums,
    dense: Option<DenseKernels>,
    /// The RBF shift: the mean of the layer's kernel over the first tile.
    shift: Option<f64>,
}

impl LayerState {
    /// What the pass keeps (the dense kernels' lower triangle mirrored from the upper one
    /// the tiles wrote).
    fn finish(self, tile: usize) -> LayerSums {
        let n = self.linear.rows.len();
        let k = self.lists.k;
        // Lists as the pass keeps them: neighbours and their similarities.
        let knn = |l: Lists| (Knn { n, k, idx: l.idx }, l.vals);
        let tied_lists = self.lists.eq_out.iter().filter(|&&c| c > 0).count();
        let mut dense = self.dense;
        if let Some(dk) = &mut dense {
            // Column i holds rows from its tile's start on; the rows above come from the
            // columns j < that start, whose tiles wrote row i.
            for m in [&mut dk.linear, &mut dk.rbf] {
                for i in 0..n {
                    for j in 0..(i / tile) * tile {
                        let v = m[(i, j)];
                        m[(j, i)] = v;
                    }
                }
            }
        }
        let (knn_lists, sims) = knn(self.lists);
        LayerSums {
            knn: knn_lists,
            sims,
            tied_lists,
            with_self: self.with_self.map(knn),
            linear: self.linear,
            rbf: self.rbf,
            dense,
        }
    }
}

/// One layer's share of a tile: the Gram tile G[J, I] into `buf.lin` (column r is row
/// i0 + r over J), offered to the lists of the rows of I and, off the diagonal, through
/// its transpose to those of J; then the RBF tile, both kernels centred / shifted, and
/// their sums over the tile and (off the diagonal) its transpose (the cross sums between
/// layers are the caller's).
///
/// # Shapes
/// `x [n, d]`, buffers `[T, T]` with T >= ri, rj
fn layer_tile(
    ctx: &TileCtx,
    x: &Matrix,
    p: &Prep,
    t: &Tile,
    buf: &mut Buffers,
    st: &mut LayerState,
) {
    let (i0, ri, j0, rj) = (t.i0, t.ri, t.j0, t.rj);
    gram_block_into(
        buf.lin.as_mut().submatrix_mut(0, 0, rj, ri),
        x.subrows(j0, rj),
        x.subrows(i0, ri),
        ctx.gemm_par,
    );
    let mut lists: Vec<&mut Lists> = std::iter::once(&mut st.lists)
        .chain(st.with_self.as_mut())
        .collect();
    offer_tile(&buf.lin, &mut buf.tr, t, &mut lists);
    let s2 = ctx.s2;
    for r in 0..ri {
        let i = i0 + r;
        // ||x_i||^2 and x_i . xbar against the same of the tile's columns.
        let (sq_i, c_i) = (p.sq[i], p.r[i]);
        let (sq_j, c_j) = (&p.sq[j0..j0 + rj], &p.r[j0..j0 + rj]);
        let g = &buf.lin.col_as_slice(r)[..rj];
        let col = &mut buf.rbf.col_as_slice_mut(r)[..rj];
        for ((v, &gij), &sq) in col.iter_mut().zip(g).zip(sq_j) {
            *v = (-(sq_i + sq - 2.0 * gij).max(0.0) / s2).exp();
        }
        let g = &mut buf.lin.col_as_slice_mut(r)[..rj];
        for (v, &c) in g.iter_mut().zip(c_j) {
            *v = *v - c_i - c + p.m;
        }
    }
    let c = *st.shift.get_or_insert_with(|| {
        let total: f64 = (0..ri)
            .map(|r| buf.rbf.col_as_slice(r)[..rj].iter().sum::<f64>())
            .sum();
        total / (ri * rj) as f64
    });
    for r in 0..ri {
        buf.rbf.col_as_slice_mut(r)[..rj]
            .iter_mut()
            .for_each(|v| *v -= c);
    }
    for (m, sums) in [(&buf.lin, &mut st.linear), (&buf.rbf, &mut st.rbf)] {
        accumulate_tile(sums, m, t);
    }
    if let Some(dk) = &mut st.dense {
        // Column i gets rows J; the lower triangle is mirrored at the end.
        for r in 0..ri {
            let i = i0 + r;
            dk.linear.col_as_slice_mut(i)[j0..j0 + rj]
                .copy_from_slice(&buf.lin.col_as_slice(r)[..rj]);
            dk.rbf.col_as_slice_mut(i)[j0..j0 + rj].copy_from_slice(&buf.rbf.col_as_slice(r)[..rj]);
        }
    }
}

/// Adds a kernel tile (column r: row i0 + r over J) to its sums: row sums of I, and off
/// the diagonal those of J (the transpose's rows) and the squares twice; the diagonal
/// entries from a diagonal tile.
fn accumulate_tile(s: &mut KernelSums, m: &Matrix, t: &Tile) {
    let diagonal = t.i0 == t.j0;
    let mut sq = 0.0;
    for r in 0..t.ri {
        let i = t.i0 + r;
        let col = &m.col_as_slice(r)[..t.rj];
        s.rows[i] += col.iter().sum::<f64>();
        sq += dot(col, col);
        if diagonal {
            s.diag[i] = col[r];
        } else {
            for (acc, &v) in s.rows[t.j0..t.j0 + t.rj].iter_mut().zip(col) {
                *acc += v;
            }
        }
    }
    s.sq += if diagonal { sq } else { 2.0 * sq };
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::measure::knn::top_k_row;
    use rand::{Rng, SeedableRng};

    fn random(n: usize, d: usize, seed: u64) -> Matrix {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        Matrix::from_fn(n, d, |_, _| r.random::<f64>() - 0.5)
    }

    /// The tiles' streaming lists equal the lists of whole Gram rows (ties to the lower
    /// index, the diagonal skipped or allowed) and count the same tied rows, on 0/1
    /// features where most similarities tie, across tiles of 7 rows (61 = 8 * 7 + 5).
    #[test]
    fn tiled_lists_equal_whole_row_lists_with_ties() {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let x = Matrix::from_fn(61, 3, |_, _| f64::from(r.random_range(0..2u8)));
        let y = random(61, 4, 10);
        let k = 5;
        let opts = PassOptions {
            k,
            with_self: true,
            rbf_sigma: 1.0,
            // Three [T, T] buffers per layer, two layers: T = 7.
            block_bytes: 8 * 3 * 2 * 7 * 7,
            keep_dense: true,
        };
        assert_eq!(tile_side(3 * 2, opts.block_bytes), 7);
        let pass = kernel_pass(std::slice::from_ref(&x), &[y], &opts, &mut |_| {}).unwrap();
        let got = &pass.a[0];
        let g = &x * x.transpose();
        let (mut idx, mut vals, mut idx_s, mut vals_s, mut tied) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), 0);
        for i in 0..61 {
            let row: Vec<f64> = (0..61).map(|j| g[(i, j)]).collect();
            top_k_row(&row, k, Some(i), &mut idx, &mut vals);
            top_k_row(&row, k, None, &mut idx_s, &mut vals_s);
            let kth = vals[vals.len() - 1];
            let in_list = vals[vals.len() - k..].iter().filter(|&&v| v == kth).count();
            let equal = (0..61).filter(|&j| j != i && row[j] == kth).count();
            tied += usize::from(equal > in_list);
        }
        assert_eq!(got.knn.idx, idx);
        assert_eq!(got.sims, vals);
        let (ws, ws_vals) = got.with_self.as_ref().unwrap();
        assert_eq!((&ws.idx, ws_vals), (&idx_s, &vals_s));
        assert!(tied > 10, "the features should tie often: {tied}");
        assert_eq!(got.tied_lists, tied);
        // The dense kernels are whole (upper tiles mirrored) and symmetric; within a
        // diagonal tile both entries are computed, in different rounding orders.
        let dk = got.dense.as_ref().unwrap();
        for m in [&dk.linear, &dk.rbf] {
            for i in 0..61 {
                for j in 0..61 {
                    assert!((m[(i, j)] - m[(j, i)]).abs() < 1e-12, "({i}, {j})");
                }
            }
        }
        // Centred linear kernel entries are G_ij - r_i - r_j + m.
        let p = prep(&x);
        assert!((dk.linear[(3, 40)] - (g[(3, 40)] - p.r[3] - p.r[40] + p.m)).abs() < 1e-12);
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
            // Three [T, T] buffers x 3 layers x 8 bytes, T = 20: 11 x 11 tiles, 66 of them
            // in the upper triangle.
            block_bytes: 3 * 3 * 8 * 20 * 20,
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
