//! Blocked Householder tridiagonalisation of a symmetric matrix: A = Q T Q^T, the first
//! step of [`super::sym_eigen`].
//!
//! This is LAPACK's `dsytrd` for the lower triangle (Golub & Van Loan §8.3.1; the blocking
//! of Dongarra, Hammarling & Sorensen 1989, LAPACK's `dlatrd`), written on faer's matmul.
//! faer's own `tridiag_in_place` is unblocked: each of the n - 1 reflectors reads *and
//! writes* the whole trailing triangle (a fused rank-2 update and product). Here a panel of
//! `NB` reflectors is built with only products of the trailing triangle (one read per
//! reflector, [`symv_lower`]), and the triangle is written once per panel by a rank-2 `NB`
//! update (faer's triangular matmul, level 3). That halves the memory traffic of the
//! reduction, which is what bounds it: at n = 1,000 faer's reduction took 0.079 s of its
//! 0.17 s eigendecomposition, LAPACK's blocked one 0.055 s (docs/benchmarks.md).
//!
//! The output is in faer's layout, so faer's tridiagonal divide and conquer (in
//! [`super::tridiag_dc`]'s port) and faer's blocked back-transformation run after it: the reflectors' essential parts below the
//! subdiagonal, H_k = I - v_k v_k^T / tau_k with v_k = [0 (k + 1 times); 1; A[k+2.., k]]
//! (faer's tau, the reciprocal of LAPACK's).

use faer::linalg::householder;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::linalg::matmul::{self};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, ColMut, Mat, MatMut, MatRef, Par};

/// Reflectors per panel (LAPACK's `ilaenv` block size for `dsytrd` is 32 as well).
const NB: usize = 32;
/// Below this many remaining rows the rest is one last panel (no trailing update).
const LAST: usize = 96;
/// Trailing triangles smaller than this many entries are multiplied on one thread (faer's
/// own threshold for its tridiagonalisation, `TridiagParams::par_threshold`).
const PAR_ENTRIES: usize = 192 * 256;
/// Triangles smaller than this many entries get their symmetric product on one thread:
/// below m ~ 1,000 rows the threads' start and the partial sums' reduction (~10 us a
/// call) cost more than the second core saves (measured on 2 cores: m = 700, 32 us on
/// one thread, 38 us on two; m = 1,000, 69 and 58 us).
const SYMV_PAR_ENTRIES: usize = 1000 * 1000 / 2;

/// The tridiagonal T = Q^T A Q and the reflectors of Q, in faer's conventions.
pub(crate) struct Tridiagonal {
    /// T's diagonal, `[n]`.
    pub diag: Vec<f64>,
    /// T's subdiagonal, `[n - 1]` (signed, as LAPACK's `e`).
    pub sub: Vec<f64>,
    /// faer's tau of each reflector, `[n - 1]` (infinite for an identity reflector).
    pub tau: Vec<f64>,
}

/// Reduces the symmetric matrix whose lower triangle is in `a` to tridiagonal form in
/// place: on return `a`'s strictly lower part below the subdiagonal holds the reflectors'
/// essential parts (column k: the entries of v_k below its leading 1), and the returned
/// [`Tridiagonal`] holds T and the taus. The strict upper triangle is neither read nor
/// written.
///
/// # Shapes
/// `a [n, n]` (column-major, as `Mat` stores it) -> diag `[n]`, sub `[n - 1]`, tau `[n - 1]`
pub(crate) fn tridiagonalize(mut a: MatMut<'_, f64>, par: Par) -> Tridiagonal {
    let n = a.nrows();
    assert_eq!(n, a.ncols(), "tridiagonalize: square matrix");
    let mut out = Tridiagonal {
        diag: vec![0.0; n],
        sub: vec![0.0; n.saturating_sub(1)],
        tau: vec![f64::INFINITY; n.saturating_sub(1)],
    };
    let widest = n.min(NB.max(LAST + NB));
    let mut w = Mat::<f64>::zeros(n, widest);
    let mut i = 0;
    while i < n {
        let m = n - i;
        let width = if m > LAST + NB { NB } else { m };
        panel(
            a.rb_mut(),
            w.as_mut().subrows_mut(0, m),
            i,
            width,
            par,
            &mut out,
        );
        let (j, rest) = (i + width, m - width);
        if rest > 0 {
            // A[j.., j..] -= V W^T + W V^T on the lower triangle, V = A[j.., i..j].
            let (left, right) = a.rb_mut().split_at_col_mut(j);
            let v = left.rb().submatrix(j, i, rest, width);
            let wp = w.as_ref().submatrix(width, 0, rest, width);
            let trailing = right.submatrix_mut(j, 0, rest, rest);
            let par = if rest * rest / 2 < PAR_ENTRIES {
                Par::Seq
            } else {
                par
            };
            let mut trailing = trailing;
            for (l, r) in [(v, wp), (wp, v)] {
                triangular::matmul(
                    trailing.rb_mut(),
                    BlockStructure::TriangularLower,
                    Accum::Add,
                    l,
                    BlockStructure::Rectangular,
                    r.transpose(),
                    BlockStructure::Rectangular,
                    -1.0,
                    par,
                );
            }
        }
        // The panel set each reflector's leading entry to 1 for the products: put the
        // subdiagonal back, as faer's layout has it.
        for r in i..j.min(n - 1) {
            a[(r + 1, r)] = out.sub[r];
        }
        for r in i..j {
            out.diag[r] = a[(r, r)];
        }
        i = j;
    }
    out
}

/// One panel (LAPACK's `dlatrd`, lower): reduces columns `i..i + width` of `a` and fills
/// `w[.., ..width]` so that the trailing triangle's update is A -= V W^T + W V^T. Row
/// `c` of `w` is global row `i + c`.
fn panel(
    mut a: MatMut<'_, f64>,
    mut w: MatMut<'_, f64>,
    i: usize,
    width: usize,
    par: Par,
    out: &mut Tridiagonal,
) {
    let n = a.nrows();
    let m = n - i;
    for c in 0..width {
        let r = i + c;
        // Bring column r up to date with the panel's earlier reflectors:
        // A[r.., r] -= A[r.., i..r] W[c, ..c]^T + W[c.., ..c] A[r, i..r]^T.
        if c > 0 {
            let (left, right) = a.rb_mut().split_at_col_mut(r);
            let mut col = right.submatrix_mut(r, 0, n - r, 1);
            let va = left.rb().submatrix(r, i, n - r, c);
            let wr = w.rb().submatrix(c, 0, 1, c);
            let wa = w.rb().submatrix(c, 0, m - c, c);
            let var = left.rb().submatrix(r, i, 1, c);
            matmul::matmul(col.rb_mut(), Accum::Add, va, wr.transpose(), -1.0, Par::Seq);
            matmul::matmul(
                col.rb_mut(),
                Accum::Add,
                wa,
                var.transpose(),
                -1.0,
                Par::Seq,
            );
        }
        if r + 1 >= n {
            continue;
        }
        // The reflector that zeroes A[r+2.., r].
        let (tau_inv, beta) = {
            let col = a.rb_mut().col_mut(r).subrows_mut(r + 1, n - r - 1);
            let (mut head, tail) = col.split_at_row_mut(1);
            let head = &mut head[0];
            let info = householder::make_householder_in_place(head, tail);
            // LAPACK's tau (H = I - tau v v^T) is faer's reciprocal; an identity
            // reflector has faer's tau = inf, LAPACK's 0.
            out.tau[r] = info.tau;
            (info.tau.recip(), *head)
        };
        out.sub[r] = beta;
        a[(r + 1, r)] = 1.0;
        // W[c+1.., c] = tau (A22 v - V (W^T v) - W (V^T v)), then the correction
        // W -= (tau / 2) (W^T v) v that makes the update exactly H A22 H.
        let len = n - r - 1;
        let (left, right) = a.rb_mut().split_at_col_mut(r + 1);
        let v = left.rb().col(r).subrows(r + 1, len);
        let a22 = right.rb().submatrix(r + 1, 0, len, len);
        let (wl, wr) = w.rb_mut().split_at_col_mut(c);
        let mut wc = wr.col_mut(0);
        {
            let (top, bottom) = wc.rb_mut().split_at_row_mut(c + 1);
            let mut y = bottom;
            let par = if len * len / 2 < SYMV_PAR_ENTRIES {
                Par::Seq
            } else {
                par
            };
            symv_lower(a22, v, y.rb_mut(), par);
            if c > 0 {
                let vp = left.rb().submatrix(r + 1, i, len, c);
                let wp = wl.rb().submatrix(c + 1, 0, len, c);
                let mut t = top.subrows_mut(0, c).as_mat_mut();
                let v = v.as_mat();
                let mut y = y.rb_mut().as_mat_mut();
                matmul::matmul(t.rb_mut(), Accum::Replace, wp.transpose(), v, 1.0, Par::Seq);
                matmul::matmul(y.rb_mut(), Accum::Add, vp, t.rb(), -1.0, Par::Seq);
                matmul::matmul(t.rb_mut(), Accum::Replace, vp.transpose(), v, 1.0, Par::Seq);
                matmul::matmul(y.rb_mut(), Accum::Add, wp, t.rb(), -1.0, Par::Seq);
            }
            let mut dot = 0.0;
            for k in 0..len {
                y[k] *= tau_inv;
                dot += y[k] * v[k];
            }
            let alpha = -0.5 * tau_inv * dot;
            for k in 0..len {
                y[k] += alpha * v[k];
            }
        }
    }
}

/// y = A v for the symmetric A whose lower triangle is stored (BLAS `dsymv`, lower):
/// each stored entry is read once and used twice, y_j += A_jj v_j + sum_{i>j} A_ij v_i
/// and y_i += A_ij v_j. With `par` on several threads, columns are split into ranges of
/// equal area, each summed into its own y.
///
/// # Shapes
/// `a [m, m]` (column-major), `v [m]` -> `y [m]`
fn symv_lower(a: MatRef<'_, f64>, v: faer::ColRef<'_, f64>, mut y: ColMut<'_, f64>, par: Par) {
    let m = a.nrows();
    let cols: Vec<&[f64]> = (0..m)
        .map(|j| {
            a.col(j)
                .try_as_col_major()
                .expect("tridiagonalize: column-major storage")
                .as_slice()
        })
        .collect();
    let v: Vec<f64> = (0..m).map(|k| v[k]).collect();
    let threads = match par {
        Par::Seq => 1,
        Par::Rayon(t) => t.get(),
    };
    let mut sum = vec![0.0; m];
    if threads <= 1 {
        symv_columns(&cols, &v, 0, m, &mut sum);
    } else {
        {
            use rayon::prelude::*;
            // Column j holds m - j entries: split the triangle's area evenly.
            let bounds: Vec<usize> = (0..=threads)
                .map(|t| {
                    let f = t as f64 / threads as f64;
                    ((1.0 - (1.0 - f).sqrt()) * m as f64).round() as usize
                })
                .collect();
            let parts: Vec<Vec<f64>> = (0..threads)
                .into_par_iter()
                .map(|t| {
                    let mut part = vec![0.0; m];
                    symv_columns(&cols, &v, bounds[t], bounds[t + 1], &mut part);
                    part
                })
                .collect();
            for part in parts {
                for (s, p) in sum.iter_mut().zip(part) {
                    *s += p;
                }
            }
        }
    }
    for (k, s) in sum.into_iter().enumerate() {
        y[k] = s;
    }
}

/// Columns `from..to` of the lower-stored symmetric product, added into `y`.
fn symv_columns(cols: &[&[f64]], v: &[f64], from: usize, to: usize, y: &mut [f64]) {
    let kernel = SymvColumns {
        cols,
        v,
        from,
        to,
        y,
    };
    pulp::Arch::new().dispatch(kernel);
}

/// Columns `from..to` of the product, summed into `y` ([`symv_columns`]).
struct SymvColumns<'a> {
    cols: &'a [&'a [f64]],
    v: &'a [f64],
    from: usize,
    to: usize,
    y: &'a mut [f64],
}

impl SymvColumns<'_> {
    /// One column at a time, in scalar: only the last 1-3 columns of a range come here.
    #[inline(always)]
    fn run(self) {
        let SymvColumns {
            cols,
            v,
            from,
            to,
            y,
        } = self;
        for j in from..to {
            let col = cols[j];
            let mut dot = 0.0;
            for i in j + 1..v.len() {
                y[i] += col[i] * v[j];
                dot += col[i] * v[i];
            }
            y[j] += col[j] * v[j] + dot;
        }
    }
}

/// The kernel, in pulp's explicit SIMD, compiled for AVX-512, AVX2+FMA and the baseline,
/// one picked at run time (a plain-Rust loop stayed scalar: 17 GB/s of the triangle read
/// in cache, where faer's gemv reads 80; this one reads 60). Four columns at a time share
/// each load of v and each load and store of y: y[r] += sum_k A[r, j+k] v[j+k] and
/// dot_k += A[r, j+k] v[r] over the rows below the 4 x 4 diagonal block, which is summed
/// in scalar.
impl pulp::WithSimd for SymvColumns<'_> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, simd: S) {
        let SymvColumns {
            cols,
            v,
            from,
            to,
            y,
        } = self;
        let m = v.len();
        let mut j = from;
        while j + 4 <= to {
            let c = [cols[j], cols[j + 1], cols[j + 2], cols[j + 3]];
            let mut dots = [0.0f64; 4];
            for k in 0..4 {
                y[j + k] += c[k][j + k] * v[j + k];
                for i in j + k + 1..(j + 4).min(m) {
                    y[i] += c[k][i] * v[j + k];
                    dots[k] += c[k][i] * v[i];
                }
            }
            let r0 = j + 4;
            if r0 < m {
                let (a0, a0t) = S::as_simd_f64s(&c[0][r0..]);
                let (a1, a1t) = S::as_simd_f64s(&c[1][r0..]);
                let (a2, a2t) = S::as_simd_f64s(&c[2][r0..]);
                let (a3, a3t) = S::as_simd_f64s(&c[3][r0..]);
                let (vs, vt) = S::as_simd_f64s(&v[r0..]);
                let (ys, yt) = S::as_mut_simd_f64s(&mut y[r0..]);
                let len = ys.len();
                let (a0, a1, a2, a3, vs) =
                    (&a0[..len], &a1[..len], &a2[..len], &a3[..len], &vs[..len]);
                let b = [
                    simd.splat_f64s(v[j]),
                    simd.splat_f64s(v[j + 1]),
                    simd.splat_f64s(v[j + 2]),
                    simd.splat_f64s(v[j + 3]),
                ];
                let zero = simd.splat_f64s(0.0);
                let mut d = [zero; 4];
                for i in 0..len {
                    let vv = vs[i];
                    let mut yy = ys[i];
                    yy = simd.mul_add_e_f64s(a0[i], b[0], yy);
                    d[0] = simd.mul_add_e_f64s(a0[i], vv, d[0]);
                    yy = simd.mul_add_e_f64s(a1[i], b[1], yy);
                    d[1] = simd.mul_add_e_f64s(a1[i], vv, d[1]);
                    yy = simd.mul_add_e_f64s(a2[i], b[2], yy);
                    d[2] = simd.mul_add_e_f64s(a2[i], vv, d[2]);
                    yy = simd.mul_add_e_f64s(a3[i], b[3], yy);
                    d[3] = simd.mul_add_e_f64s(a3[i], vv, d[3]);
                    ys[i] = yy;
                }
                for k in 0..4 {
                    dots[k] += simd.reduce_sum_f64s(d[k]);
                }
                let tails = [a0t, a1t, a2t, a3t];
                for (t, yv) in yt.iter_mut().enumerate() {
                    for k in 0..4 {
                        *yv += tails[k][t] * v[j + k];
                        dots[k] += tails[k][t] * vt[t];
                    }
                }
            }
            for k in 0..4 {
                y[j + k] += dots[k];
            }
            j += 4;
        }
        // The last 1-3 columns of the range.
        SymvColumns {
            cols,
            v,
            from: j,
            to,
            y,
        }
        .run()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::linalg::householder::apply_block_householder_sequence_on_the_left_in_place_with_conj;

    fn random_symmetric(n: usize, seed: u64) -> Mat<f64> {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let g = Mat::<f64>::from_fn(n, n, |_, _| rng.random::<f64>() - 0.5);
        Mat::from_fn(n, n, |i, j| g[(i, j)] + g[(j, i)])
    }

    /// Q^T A Q = T for the Q the reflectors make (A rebuilt as Q T Q^T), and the symv
    /// kernel against a dense product, on sizes around the panel and crossover widths.
    #[test]
    fn reflectors_rebuild_the_matrix() {
        for (n, threads) in [
            (1, 1),
            (2, 1),
            (5, 1),
            (33, 1),
            (130, 1),
            (131, 2),
            (300, 2),
        ] {
            let a = random_symmetric(n, n as u64);
            let par = if threads == 1 {
                Par::Seq
            } else {
                Par::rayon(threads)
            };
            let mut work = a.clone();
            let t = tridiagonalize(work.as_mut(), par);
            // Q T Q^T: T dense, then Q applied on both sides through faer's blocked
            // back-transformation (the same call `sym_eigen` makes).
            let mut qtq = Mat::<f64>::from_fn(n, n, |i, j| {
                if i == j {
                    t.diag[i]
                } else if i == j + 1 {
                    t.sub[j]
                } else if j == i + 1 {
                    t.sub[i]
                } else {
                    0.0
                }
            });
            if n > 1 {
                let h = super::super::householder_factor(work.as_ref(), &t.tau, Par::Seq);
                let basis = work.as_ref().submatrix(1, 0, n - 1, n - 1);
                let mut buf = faer::dyn_stack::MemBuffer::new(
                    householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<f64>(
                        n - 1,
                        h.nrows(),
                        n,
                    ),
                );
                let stack = faer::dyn_stack::MemStack::new(&mut buf);
                // Q on the left, then transpose: twice gives (Q (Q T)^T)^T = Q T Q^T
                // (T is symmetric, and so is the result, so the last transpose is free).
                for _ in 0..2 {
                    apply_block_householder_sequence_on_the_left_in_place_with_conj(
                        basis,
                        h.as_ref(),
                        faer::Conj::No,
                        qtq.as_mut().subrows_mut(1, n - 1),
                        Par::Seq,
                        stack,
                    );
                    qtq = qtq.transpose().to_owned();
                }
            }
            let err = (&qtq - &a).norm_max();
            assert!(
                err < 1e-12 * (n as f64).max(1.0),
                "n = {n}: |Q T Q^T - A| = {err:e}"
            );
        }
    }

    #[test]
    fn symv_matches_a_dense_product() {
        for (m, threads) in [(1, 1), (7, 1), (9, 1), (64, 2), (257, 2)] {
            let a = random_symmetric(m, 100 + m as u64);
            let v = faer::Col::<f64>::from_fn(m, |k| (k as f64 * 0.37).sin());
            // Only the lower triangle may be read: poison the upper one.
            let mut lower = a.clone();
            for j in 0..m {
                for i in 0..j {
                    lower[(i, j)] = f64::NAN;
                }
            }
            let mut y = faer::Col::<f64>::zeros(m);
            let par = if threads == 1 {
                Par::Seq
            } else {
                Par::rayon(threads)
            };
            symv_lower(lower.as_ref(), v.as_ref(), y.as_mut(), par);
            let want = &a * &v;
            let err = (&y - &want).norm_max();
            assert!(err < 1e-12 * m as f64, "m = {m}: {err:e}");
        }
    }
}
