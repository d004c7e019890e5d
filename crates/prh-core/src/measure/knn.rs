//! Nearest-neighbour alignment (paper §5: mutual k-NN, k = 10, on WIT-1024), with the
//! conventions of the PRH benchmark (Huh et al. 2024, `metrics.py`): neighbours come from
//! the Gram matrix X X^T of the (normalised) features with the diagonal excluded, ordered
//! by decreasing similarity.

use crate::linalg::{Matrix, levenshtein};
use crate::measure::calibration::shuffled_scores;
use crate::measure::cka::check_square;
use crate::{Error, Result};
use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use std::cmp::Ordering;

/// Gram matrix G = X X^T (inner products of rows).
///
/// # Shapes
/// `x [n, d]` -> `[n, n]`
pub fn gram(x: MatRef<'_, f64>) -> Matrix {
    x * x.transpose()
}

/// The k nearest neighbours of every row, closest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Knn {
    /// Number of rows N.
    pub n: usize,
    /// Neighbours per row k.
    pub k: usize,
    /// Flat `[n, k]`: `idx[i * k + r]` is the (r+1)-th neighbour of row i.
    pub idx: Vec<usize>,
}

impl Knn {
    /// Neighbour list of row `i` (closest first).
    pub fn row(&self, i: usize) -> &[usize] {
        &self.idx[i * self.k..(i + 1) * self.k]
    }

    /// The neighbour lists of B' = B[perm] (row i of B' is row perm[i] of B) without
    /// recomputing anything: N_{B'}(i) = perm^{-1}(N_B(perm[i])).
    pub fn permuted(&self, perm: &[usize]) -> Knn {
        let mut inv = vec![0; perm.len()];
        for (i, &p) in perm.iter().enumerate() {
            inv[p] = i;
        }
        let mut idx = Vec::with_capacity(self.idx.len());
        for &p in perm {
            idx.extend(self.row(p).iter().map(|&j| inv[j]));
        }
        Knn {
            n: self.n,
            k: self.k,
            idx,
        }
    }
}

/// Bytes of similarity values the blockwise routines hold at once (64 MiB): large enough
/// for efficient matrix products (retrieval's blocks of whole rows are still ~80 rows at
/// N = 100k; the tiles of the k-NN lists and the kernel pass stop at [`TILE_MAX`] anyway),
/// small next to the feature matrices themselves once N is in the tens of thousands.
pub const BLOCK_BYTES: usize = 64 << 20;

/// Rows per block: the most rows of `values_per_row` f64 values that fit in `budget` bytes,
/// at least 1.
pub fn rows_per_block(values_per_row: usize, budget: usize) -> usize {
    (budget / (8 * values_per_row.max(1))).max(1)
}

/// A block of Gram rows, transposed so each Gram row is one contiguous column:
/// `dst[(j, r)] = x_j . y_r`, i.e. column r of `dst` is row r of Y X^T, on `par`'s threads
/// (faer splits the output, not the sum over d, so every thread count gives the same bits;
/// `gram_blocks`' test checks it).
///
/// # Shapes
/// `x [n, d]`, `y [b, d]` -> `dst [n, b]`
pub fn gram_block_into(dst: MatMut<'_, f64>, x: MatRef<'_, f64>, y: MatRef<'_, f64>, par: Par) {
    matmul(dst, Accum::Replace, x, y.transpose(), 1.0, par);
}

/// Every row's top-k (the diagonal left out or allowed) over the columns offered so far,
/// which arrive in ascending column order (so an equal value never displaces an earlier
/// index: ties go to the lower index, as [`top_k_row`] does on whole rows), and per row
/// the count of columns outside the list whose value equals the k-th (a tie at the
/// boundary).
pub(crate) struct Lists {
    pub(crate) k: usize,
    /// Whether a row's own column is left out (the PRH lists) or allowed.
    exclude_self: bool,
    /// Flat `[n, k]` indices and values, best first.
    pub(crate) idx: Vec<usize>,
    pub(crate) vals: Vec<f64>,
    /// Entries filled per row (k once k columns were offered).
    filled: Vec<usize>,
    /// Columns outside the full list equal to its k-th value.
    pub(crate) eq_out: Vec<usize>,
}

impl Lists {
    pub(crate) fn new(n: usize, k: usize, exclude_self: bool) -> Self {
        Lists {
            k,
            exclude_self,
            idx: vec![0; n * k],
            vals: vec![f64::NEG_INFINITY; n * k],
            filled: vec![0; n],
            eq_out: vec![0; n],
        }
    }

    /// Offers row `i` the columns `j0 + c` with values `vals[c]`, skipping column `skip`.
    /// The scan compares each value with the row's k-th only; the rare candidates are
    /// inserted.
    fn scan(&mut self, i: usize, vals: &[f64], j0: usize, skip: Option<usize>) {
        let k = self.k;
        let mut kth = if self.filled[i] == k {
            self.vals[i * k + k - 1]
        } else {
            f64::NAN
        };
        for (c, &v) in vals.iter().enumerate() {
            // `kth` is NaN while the list is not full: every column is a candidate then.
            if v < kth {
                continue;
            }
            let j = j0 + c;
            if Some(j) == skip {
                continue;
            }
            self.offer(i, j, v);
            if self.filled[i] == k {
                kth = self.vals[i * k + k - 1];
            }
        }
    }

    /// Offers column j with value v to row i's list.
    fn offer(&mut self, i: usize, j: usize, v: f64) {
        let k = self.k;
        let f = self.filled[i];
        let (bi, bv) = (
            &mut self.idx[i * k..(i + 1) * k],
            &mut self.vals[i * k..(i + 1) * k],
        );
        if f == k {
            match v.total_cmp(&bv[k - 1]) {
                Ordering::Less => return,
                Ordering::Equal => {
                    self.eq_out[i] += 1;
                    return;
                }
                Ordering::Greater => {}
            }
        }
        // First slot holding a strictly smaller value: equal values stay ahead (lower index).
        let pos = bv[..f]
            .iter()
            .position(|w| w.total_cmp(&v) == Ordering::Less)
            .unwrap_or(f);
        let evicted = bv[k - 1];
        let end = f.min(k - 1);
        bi.copy_within(pos..end, pos + 1);
        bv.copy_within(pos..end, pos + 1);
        bi[pos] = j;
        bv[pos] = v;
        if f < k {
            self.filled[i] = f + 1;
        } else if bv[k - 1].total_cmp(&evicted) == Ordering::Equal {
            // The evicted column left the list at the (unchanged) k-th value.
            self.eq_out[i] += 1;
        } else {
            // The k-th rose above every column outside the list.
            self.eq_out[i] = 0;
        }
    }
}

/// Rows i0..i0+ri against columns j0..j0+rj of a symmetric kernel (j0 >= i0).
pub(crate) struct Tile {
    pub(crate) i0: usize,
    pub(crate) ri: usize,
    pub(crate) j0: usize,
    pub(crate) rj: usize,
}

/// The tiles of side `tile` covering the upper triangle of an `[n, n]` symmetric kernel,
/// row tile by row tile, each against itself and the column tiles after it: the order in
/// which every row meets its columns in ascending order ([`offer_tile`]).
pub(crate) fn upper_tiles(n: usize, tile: usize) -> impl Iterator<Item = Tile> {
    (0..n).step_by(tile).flat_map(move |i0| {
        (i0..n).step_by(tile).map(move |j0| Tile {
            i0,
            ri: tile.min(n - i0),
            j0,
            rj: tile.min(n - j0),
        })
    })
}

/// Offers a Gram tile to `lists`: `g`'s column r (rows 0..rj) holds G[i0 + r, J], given
/// to row i0 + r; off the diagonal, its transpose (into `tr`) gives G[j, I] to the rows j of
/// J. Tiles taken in [`upper_tiles`] order hand every row its columns in ascending order.
///
/// # Shapes
/// `g`, `tr` `[T, T]` with T >= ri, rj
pub(crate) fn offer_tile(g: &Matrix, tr: &mut Matrix, t: &Tile, lists: &mut [&mut Lists]) {
    for r in 0..t.ri {
        let i = t.i0 + r;
        let col = &g.col_as_slice(r)[..t.rj];
        for l in lists.iter_mut() {
            let skip = l.exclude_self.then_some(i);
            l.scan(i, col, t.j0, skip);
        }
    }
    if t.i0 != t.j0 {
        tr.as_mut()
            .submatrix_mut(0, 0, t.ri, t.rj)
            .copy_from(g.as_ref().submatrix(0, 0, t.rj, t.ri).transpose());
        for c in 0..t.rj {
            let col = &tr.col_as_slice(c)[..t.ri];
            for l in lists.iter_mut() {
                // Off the diagonal no column is the row's own.
                l.scan(t.j0 + c, col, t.i0, None);
            }
        }
    }
}

/// The largest tile side [`knn_blocked`] and the kernel pass use: T x T f64 buffers of
/// 2 MiB stay within a core's L2 + the shared L3 while a tile is reduced.
pub(crate) const TILE_MAX: usize = 512;

/// The tile side for `buffers` `[T, T]` f64 buffers within `budget` bytes: at most
/// [`TILE_MAX`], at least 1.
pub(crate) fn tile_side(buffers: usize, budget: usize) -> usize {
    let per_value = 8 * buffers.max(1);
    ((budget / per_value) as f64)
        .sqrt()
        .floor()
        .clamp(1.0, TILE_MAX as f64) as usize
}

/// Appends the top-k of one similarity row to `idx` (and the similarities to `vals`):
/// decreasing value under `f64::total_cmp`, ties to the lower index, `skip` (the row's own
/// index, when the diagonal is excluded) left out. One insertion pass, O(n + k * inserts):
/// scanning j upwards, an equal value never displaces an earlier index.
pub(crate) fn top_k_row(
    row: &[f64],
    k: usize,
    skip: Option<usize>,
    idx: &mut Vec<usize>,
    vals: &mut Vec<f64>,
) {
    let start = idx.len();
    let mut filled = 0usize;
    idx.resize(start + k, 0);
    vals.resize(start + k, 0.0);
    let (bi, bv) = (&mut idx[start..], &mut vals[start..]);
    for (j, &v) in row.iter().enumerate() {
        if Some(j) == skip || (filled == k && v.total_cmp(&bv[k - 1]) != Ordering::Greater) {
            continue;
        }
        // First slot holding a strictly smaller value: equal values stay ahead (lower index).
        let pos = bv[..filled]
            .iter()
            .position(|w| w.total_cmp(&v) == Ordering::Less)
            .unwrap_or(filled);
        let end = filled.min(k - 1);
        bi.copy_within(pos..end, pos + 1);
        bv.copy_within(pos..end, pos + 1);
        bi[pos] = j;
        bv[pos] = v;
        filled = (filled + 1).min(k);
    }
}

fn check_k(n: usize, k: usize, exclude_self: bool) -> Result<()> {
    let avail = if exclude_self { n.saturating_sub(1) } else { n };
    if k == 0 || k > avail {
        return Err(Error::invalid(format!(
            "k = {k} neighbours needs 1 <= k <= {avail} (N = {n})"
        )));
    }
    Ok(())
}

/// Top-k of each row of a similarity matrix: N(i) = argtop-k_{j} G_ij, optionally with
/// j = i excluded (PRH fills the diagonal with -1e8). Ties go to the lower index, which
/// makes the result deterministic (torch's argsort leaves them unspecified).
///
/// # Shapes
/// `g [n, n]` -> `Knn [n, k]`
pub fn knn_from_gram(g: MatRef<'_, f64>, k: usize, exclude_self: bool) -> Result<Knn> {
    let n = g.nrows();
    if g.ncols() != n {
        return Err(Error::invalid(format!(
            "k-NN needs a square Gram matrix, got [{n}, {}]",
            g.ncols()
        )));
    }
    check_k(n, k, exclude_self)?;
    let (mut idx, mut vals) = (Vec::with_capacity(n * k), Vec::with_capacity(n * k));
    let mut row = vec![0.0; n];
    for i in 0..n {
        row.iter_mut().enumerate().for_each(|(j, r)| *r = g[(i, j)]);
        top_k_row(&row, k, exclude_self.then_some(i), &mut idx, &mut vals);
    }
    Ok(Knn { n, k, idx })
}

/// The same neighbour lists as `knn_from_gram(gram(x), ..)` without the `[n, n]` Gram
/// matrix: G = X X^T is formed in tiles of its upper triangle ([`BLOCK_BYTES`] at most),
/// each serving its rows and, transposed, its columns (half the products of whole rows),
/// and reduced at once to running top-k lists, so memory is O(n d + n k). Also returns the
/// similarities G_{i, N(i)_r}. The Gram products use faer's global parallelism.
///
/// # Shapes
/// `x [n, d]` -> `Knn [n, k]`, similarities `[n * k]`
pub fn knn_from_features(
    x: MatRef<'_, f64>,
    k: usize,
    exclude_self: bool,
) -> Result<(Knn, Vec<f64>)> {
    knn_blocked(x, k, exclude_self, BLOCK_BYTES)
}

/// [`knn_from_features`] with an explicit budget in bytes for its two tile buffers (tests
/// use tiny ones).
pub fn knn_blocked(
    x: MatRef<'_, f64>,
    k: usize,
    exclude_self: bool,
    budget: usize,
) -> Result<(Knn, Vec<f64>)> {
    let n = x.nrows();
    check_k(n, k, exclude_self)?;
    let tile = tile_side(2, budget).min(n);
    let (mut g, mut tr) = (Matrix::zeros(tile, tile), Matrix::zeros(tile, tile));
    let mut lists = Lists::new(n, k, exclude_self);
    let par = faer::get_global_parallelism();
    for t in upper_tiles(n, tile) {
        gram_block_into(
            g.as_mut().submatrix_mut(0, 0, t.rj, t.ri),
            x.subrows(t.j0, t.rj),
            x.subrows(t.i0, t.ri),
            par,
        );
        offer_tile(&g, &mut tr, &t, &mut [&mut lists]);
    }
    let Lists { idx, vals, .. } = lists;
    Ok((Knn { n, k, idx }, vals))
}

fn check_pair(a: &Knn, b: &Knn) -> Result<()> {
    if a.n != b.n || a.k != b.k {
        return Err(Error::invalid(format!(
            "k-NN lists differ in shape: [{}, {}] vs [{}, {}]",
            a.n, a.k, b.n, b.k
        )));
    }
    Ok(())
}

/// Mutual k-NN alignment: (1/N) sum_i |N_A(i) ∩ N_B(i)| / k, in [0, 1]; about k/(N-1)
/// for unrelated representations (PRH `mutual_knn`).
///
/// # Shapes
/// `a [n, k]`, `b [n, k]` -> scalar
pub fn mutual_knn(a: &Knn, b: &Knn) -> Result<f64> {
    check_pair(a, b)?;
    // stamp[j] == i + 1 marks j as a neighbour of i in A: O(N k) overall.
    let mut stamp = vec![0usize; a.n];
    let mut hits = 0usize;
    for i in 0..a.n {
        for &j in a.row(i) {
            stamp[j] = i + 1;
        }
        hits += b.row(i).iter().filter(|&&j| stamp[j] == i + 1).count();
    }
    Ok(hits as f64 / (a.n * a.k) as f64)
}

/// Similarities closer than this are one value in [`expected_mutual_knn`] and in
/// retrieval ranks ([`crate::measure::retrieval::ranks`]). Why: embeddings computed in closed
/// form (the theorem's F, whose rows repeat a few factor blocks) have many similarities that
/// are equal in exact arithmetic and differ by rounding (~1e-15), and which of them lands
/// above the other changes with the CPU's SIMD kernels. An absolute 1e-9 on cosine
/// similarities in [-1, 1] is far above that rounding and far below the gaps of learned
/// embeddings, whose near-ties at 1e-9 are rare (about n^2 1e-9 per ranking).
pub const TIE_TOL: f64 = 1e-9;

/// Mutual k-NN in expectation over independent, uniformly random tie-breaks of each
/// side's k-NN lists, from two similarity (Gram) matrices with the diagonal excluded:
/// (1/N) sum_i E|N_A(i) ∩ N_B(i)| / k. For row i of one side, with v its k-th largest
/// similarity, S = {j : s_ij > v + tol} (surely in the list), T = {j : |s_ij - v| <= tol}
/// (the tie at the boundary) and r = k - |S| places drawn uniformly from T:
/// E|N_A ∩ N_B| = |S_A ∩ S_B| + |S_A ∩ T_B| r_B/|T_B| + |T_A ∩ S_B| r_A/|T_A| +
/// |T_A ∩ T_B| r_A r_B / (|T_A| |T_B|).
/// Without ties (|T| = r = 1) this is [`mutual_knn`] of the lists exactly; with ties it is
/// the value every tie-break averages to, so rounding cannot move it ([`TIE_TOL`]).
///
/// # Shapes
/// `ga [n, n]`, `gb [n, n]` -> scalar in [0, 1]
pub fn expected_mutual_knn(
    ga: MatRef<'_, f64>,
    gb: MatRef<'_, f64>,
    k: usize,
    tol: f64,
) -> Result<f64> {
    let n = check_square(ga, gb)?;
    check_k(n, k, true)?;
    if !(tol >= 0.0 && tol.is_finite()) {
        return Err(Error::invalid(format!(
            "tie tolerance must be finite and >= 0, got {tol}"
        )));
    }
    // Row i's chance that each j is in its list under a random tie-break: 1 if surely, r/|T|
    // if in the boundary tie, 0 if not.
    let inclusion = |g: MatRef<'_, f64>, i: usize, w: &mut [f64]| -> Result<()> {
        let mut row: Vec<f64> = (0..n).filter(|&j| j != i).map(|j| g[(i, j)]).collect();
        if row.iter().any(|v| !v.is_finite()) {
            return Err(Error::invalid(format!(
                "expected mutual k-NN: row {i} has a non-finite similarity"
            )));
        }
        let (_, &mut v, _) = row.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
        // `row` holds the same similarities (reordered by the selection; counts ignore order).
        let sure = row.iter().filter(|&&s| s > v + tol).count();
        // v itself is tied, so tied >= 1 and sure <= k - 1.
        let tied = row.iter().filter(|&&s| (s - v).abs() <= tol).count();
        let p = (k - sure) as f64 / tied as f64;
        for (j, w) in w.iter_mut().enumerate() {
            let s = g[(i, j)];
            *w = if j == i {
                0.0
            } else if s > v + tol {
                1.0
            } else if (s - v).abs() <= tol {
                p
            } else {
                0.0
            };
        }
        Ok(())
    };
    let (mut wa, mut wb) = (vec![0.0; n], vec![0.0; n]);
    let mut total = 0.0;
    for i in 0..n {
        inclusion(ga, i, &mut wa)?;
        inclusion(gb, i, &mut wb)?;
        total += wa.iter().zip(&wb).map(|(a, b)| a * b).sum::<f64>();
    }
    Ok(total / (n * k) as f64)
}

/// Cycle k-NN: the fraction of i such that some B-neighbour j of i has i among its
/// A-neighbours, (1/N) sum_i 1[∃ j ∈ N_B(i): i ∈ N_A(j)] (PRH `cycle_knn`, computed there
/// as `knn_A[knn_B]`).
///
/// # Shapes
/// `a [n, k]`, `b [n, k]` -> scalar
pub fn cycle_knn(a: &Knn, b: &Knn) -> Result<f64> {
    check_pair(a, b)?;
    let hits = (0..a.n)
        .filter(|&i| b.row(i).iter().any(|&j| a.row(j).contains(&i)))
        .count();
    Ok(hits as f64 / a.n as f64)
}

/// Length of the longest common subsequence of two sequences (classic O(|x| |y|) DP).
pub fn lcs_length(x: &[usize], y: &[usize]) -> usize {
    let mut prev = vec![0usize; y.len() + 1];
    let mut cur = vec![0usize; y.len() + 1];
    for &xi in x {
        for (j, &yj) in y.iter().enumerate() {
            cur[j + 1] = if xi == yj {
                prev[j] + 1
            } else {
                prev[j + 1].max(cur[j])
            };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[y.len()]
}

/// LCS k-NN: mean over i of LCS(N_A(i), N_B(i)) of the *ordered* neighbour lists, in
/// [0, k] (PRH `lcs_knn`, not divided by k).
///
/// # Shapes
/// `a [n, k]`, `b [n, k]` -> scalar
pub fn lcs_knn(a: &Knn, b: &Knn) -> Result<f64> {
    check_pair(a, b)?;
    let total: usize = (0..a.n).map(|i| lcs_length(a.row(i), b.row(i))).sum();
    Ok(total as f64 / a.n as f64)
}

/// Edit-distance k-NN: 1 - (1/N) sum_i lev(N_A(i), N_B(i)) / k over the *ordered*
/// neighbour lists, in [0, 1] (PRH `edit_distance_knn`); 1 when the lists agree in order.
///
/// # Shapes
/// `a [n, k]`, `b [n, k]` -> scalar
pub fn edit_distance_knn(a: &Knn, b: &Knn) -> Result<f64> {
    check_pair(a, b)?;
    let total: usize = (0..a.n).map(|i| levenshtein(a.row(i), b.row(i))).sum();
    Ok(1.0 - total as f64 / (a.n * a.k) as f64)
}

/// Permutation null of mutual k-NN: the score of A against B with B's rows shuffled
/// (the pairing destroyed, each geometry intact), over `shuffles` seeded permutations.
/// Returns (mean, population std); the mean is about k/(N-1).
///
/// # Shapes
/// `a [n, k]`, `b [n, k]` -> (scalar, scalar)
pub fn mutual_knn_null(a: &Knn, b: &Knn, shuffles: usize, seed: u64) -> Result<(f64, f64)> {
    check_pair(a, b)?;
    if shuffles == 0 {
        return Err(Error::invalid(
            "the permutation null needs at least one shuffle",
        ));
    }
    let scores = shuffled_scores(b.n, shuffles, seed, |perm| mutual_knn(a, &b.permuted(perm)))?;
    let mean = scores.iter().sum::<f64>() / shuffles as f64;
    let var = scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / shuffles as f64;
    Ok((mean, var.sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn points(n: usize, d: usize, seed: u64) -> Matrix {
        use rand::Rng;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        Mat::from_fn(n, d, |_, _| rng.random::<f64>() - 0.5)
    }

    #[test]
    fn identical_inputs_score_one() {
        let x = points(40, 5, 1);
        let a = knn_from_gram(gram(x.as_ref()).as_ref(), 10, true).unwrap();
        assert_eq!(mutual_knn(&a, &a).unwrap(), 1.0);
        assert_eq!(cycle_knn(&a, &a).unwrap(), 1.0);
        assert_eq!(lcs_knn(&a, &a).unwrap(), 10.0);
        assert!((0..40).all(|i| !a.row(i).contains(&i)));
    }

    #[test]
    fn knn_order_and_ties() {
        // Row 0 sees 9 (itself), 7, 7, 1: without self the order is 1, 2 (tie broken by index).
        let g = Mat::from_fn(4, 4, |i, j| {
            if i == 0 {
                [9.0, 7.0, 7.0, 1.0][j]
            } else {
                -((i as f64) - j as f64).abs()
            }
        });
        let a = knn_from_gram(g.as_ref(), 2, true).unwrap();
        assert_eq!(a.row(0), &[1, 2]);
        let b = knn_from_gram(g.as_ref(), 2, false).unwrap();
        assert_eq!(b.row(0), &[0, 1]);
        assert!(knn_from_gram(g.as_ref(), 4, true).is_err());
    }

    #[test]
    fn blockwise_knn_equals_dense() {
        // 37 rows in tiles of 5 (two [5, 5] buffers; 37 = 7 * 5 + 2): the last tile is
        // partial; then on 0/1 features, where most similarities tie (ties go to the lower
        // index on both paths).
        let x = points(37, 6, 4);
        let ones = Matrix::from_fn(37, 3, |i, j| f64::from(((i * 7 + j * 3) % 5 < 2) as u8));
        assert_eq!(tile_side(2, 2 * 5 * 5 * 8), 5);
        for (x, exclude) in [(&x, true), (&x, false), (&ones, true), (&ones, false)] {
            let g = gram(x.as_ref());
            let dense = knn_from_gram(g.as_ref(), 7, exclude).unwrap();
            let (blocked, sims) = knn_blocked(x.as_ref(), 7, exclude, 2 * 5 * 5 * 8).unwrap();
            assert_eq!(dense, blocked);
            for i in 0..37 {
                for (r, &j) in blocked.row(i).iter().enumerate() {
                    assert!((sims[i * 7 + r] - g[(i, j)]).abs() < 1e-12);
                }
            }
        }
        assert_eq!(rows_per_block(37, 5 * 37 * 8), 5);
        assert_eq!(rows_per_block(37, 1), 1);
    }

    #[test]
    fn lcs_closed_forms() {
        assert_eq!(lcs_length(&[1, 2, 3, 4], &[2, 4, 3]), 2);
        assert_eq!(lcs_length(&[1, 2, 3], &[1, 2, 3]), 3);
        assert_eq!(lcs_length(&[1, 2], &[3, 4]), 0);
    }

    #[test]
    fn levenshtein_closed_forms() {
        // kitten -> sitting: 3 (two substitutions, one insertion).
        let w = |s: &str| s.bytes().map(usize::from).collect::<Vec<_>>();
        assert_eq!(levenshtein(&w("kitten"), &w("sitting")), 3);
        assert_eq!(levenshtein(&w("flaw"), &w("lawn")), 2);
        assert_eq!(levenshtein(&[], &[1, 2, 3]), 3);
        assert_eq!(levenshtein(&[1, 2, 3], &[1, 2, 3]), 0);
        // A rotation of the list by one: delete the head, append it: 2.
        assert_eq!(levenshtein(&[1, 2, 3, 4], &[2, 3, 4, 1]), 2);
        let a = Knn {
            n: 2,
            k: 3,
            idx: vec![1, 2, 3, 0, 2, 3],
        };
        let b = Knn {
            n: 2,
            k: 3,
            idx: vec![1, 2, 3, 3, 2, 0],
        };
        // Row 0 agrees (0), row 1 reversed (2): 1 - 2 / 6.
        assert!((edit_distance_knn(&a, &b).unwrap() - (1.0 - 2.0 / 6.0)).abs() < 1e-15);
    }

    #[test]
    fn permuted_matches_recomputed() {
        let x = points(30, 4, 2);
        let a = knn_from_gram(gram(x.as_ref()).as_ref(), 5, true).unwrap();
        let perm: Vec<usize> = (0..30).map(|i| (i * 7 + 3) % 30).collect();
        let xp = Mat::from_fn(30, 4, |i, j| x[(perm[i], j)]);
        let ap = knn_from_gram(gram(xp.as_ref()).as_ref(), 5, true).unwrap();
        assert_eq!(a.permuted(&perm), ap);
    }

    #[test]
    fn null_is_near_chance() {
        let x = points(200, 8, 3);
        let a = knn_from_gram(gram(x.as_ref()).as_ref(), 10, true).unwrap();
        let (mean, std) = mutual_knn_null(&a, &a, 50, 7).unwrap();
        // Chance k/(N-1) = 0.0503; the mean of 50 shuffles sits within a few of its std errors.
        assert!((mean - 10.0 / 199.0).abs() < 0.01, "{mean}");
        assert!(std > 0.0 && std < 0.02, "{std}");
    }

    /// Rows of 0/1 features: integer similarities, so ties everywhere.
    fn tied_gram(n: usize, seed: u64) -> Matrix {
        use rand::Rng;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x = Mat::from_fn(n, 3, |_, _| f64::from(rng.random::<bool>()));
        gram(x.as_ref())
    }

    /// Every neighbour set a tie-break can give row i: all k-subsets of the other columns
    /// that no strictly larger value is left out of (brute force over bit masks).
    fn every_tie_break(g: &Matrix, i: usize, k: usize) -> Vec<u32> {
        let n = g.nrows();
        (0u32..1 << n)
            .filter(|m| m.count_ones() as usize == k && m & (1 << i) == 0)
            .filter(|m| {
                let worst_in = (0..n)
                    .filter(|j| m & (1 << j) != 0)
                    .map(|j| g[(i, j)])
                    .fold(f64::INFINITY, f64::min);
                (0..n)
                    .filter(|&j| j != i && m & (1 << j) == 0)
                    .all(|j| g[(i, j)] <= worst_in)
            })
            .collect()
    }

    #[test]
    fn expected_mutual_knn_is_mutual_knn_without_ties() {
        let (a, b) = (points(60, 4, 3), points(60, 6, 4));
        let (ga, gb) = (gram(a.as_ref()), gram(b.as_ref()));
        for k in [1, 5, 10] {
            let lists = mutual_knn(
                &knn_from_gram(ga.as_ref(), k, true).unwrap(),
                &knn_from_gram(gb.as_ref(), k, true).unwrap(),
            )
            .unwrap();
            let expected = expected_mutual_knn(ga.as_ref(), gb.as_ref(), k, TIE_TOL).unwrap();
            assert_eq!(expected, lists, "k = {k}");
        }
    }

    /// The closed form against the mean over every pair of tie-breaks (A's and B's drawn
    /// independently), on integer similarities full of ties. Tolerance 1e-12 (the
    /// enumeration sums a few hundred fractions).
    #[test]
    fn expected_mutual_knn_averages_every_tie_break() {
        let (n, k) = (9, 3);
        for seed in 0..6 {
            let (ga, gb) = (tied_gram(n, 2 * seed), tied_gram(n, 2 * seed + 1));
            let brute: f64 = (0..n)
                .map(|i| {
                    let (sa, sb) = (every_tie_break(&ga, i, k), every_tie_break(&gb, i, k));
                    let both: u32 = sa
                        .iter()
                        .flat_map(|x| sb.iter().map(move |y| (x & y).count_ones()))
                        .sum();
                    f64::from(both) / (sa.len() * sb.len()) as f64
                })
                .sum::<f64>()
                / (n * k) as f64;
            let closed = expected_mutual_knn(ga.as_ref(), gb.as_ref(), k, TIE_TOL).unwrap();
            assert!(
                (closed - brute).abs() < 1e-12,
                "seed {seed}: {closed} vs {brute}"
            );
        }
    }

    /// Rounding-sized noise (1e-13) on tied similarities moves the lists' mutual k-NN (the
    /// tie-break follows the noise) but not the expectation.
    #[test]
    fn expected_mutual_knn_ignores_rounding() {
        use rand::Rng;
        let (n, k) = (40, 5);
        let (ga, gb) = (tied_gram(n, 7), tied_gram(n, 8));
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let noisy = |g: &Matrix, rng: &mut ChaCha8Rng| {
            let e = Mat::from_fn(n, n, |_, _| 1e-13 * (rng.random::<f64>() - 0.5));
            Mat::from_fn(n, n, |i, j| g[(i, j)] + e[(i, j)] + e[(j, i)])
        };
        let exact = expected_mutual_knn(ga.as_ref(), gb.as_ref(), k, TIE_TOL).unwrap();
        let lists = |a: &Matrix, b: &Matrix| {
            mutual_knn(
                &knn_from_gram(a.as_ref(), k, true).unwrap(),
                &knn_from_gram(b.as_ref(), k, true).unwrap(),
            )
            .unwrap()
        };
        let mut moved = false;
        for _ in 0..5 {
            let (na, nb) = (noisy(&ga, &mut rng), noisy(&gb, &mut rng));
            assert_eq!(
                expected_mutual_knn(na.as_ref(), nb.as_ref(), k, TIE_TOL).unwrap(),
                exact
            );
            moved |= lists(&na, &nb) != lists(&ga, &gb);
        }
        assert!(
            moved,
            "the noise never changed a tie-break: the test shows nothing"
        );
        assert!(expected_mutual_knn(ga.as_ref(), gb.as_ref(), 0, TIE_TOL).is_err());
        assert!(expected_mutual_knn(ga.as_ref(), gb.as_ref(), k, f64::NAN).is_err());
    }
}
