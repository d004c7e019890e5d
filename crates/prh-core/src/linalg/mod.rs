//! **Wing `linalg`** (the floor): dense helpers on faer, Procrustes, the assignment
//! problem. Owns no paper concept; every other wing may use it.
//! May use: the loose files (`error`, `rng`). No burn. Also home of the one Levenshtein
//! distance (neighbour lists and config-key suggestions both use it).
//!
//! Dense linear algebra shared by the theory and measurement code: conversions between
//! row-major buffers and faer matrices, symmetric eigendecomposition and SVD.
//!
//! faer is used because it also compiles to wasm32, so the browser runs the same solver.

pub mod assignment;
pub mod procrustes;
#[cfg(not(target_arch = "wasm32"))]
mod tridiag;
#[cfg(not(target_arch = "wasm32"))]
mod tridiag_dc;

use crate::{Error, Result};
use faer::{Mat, MatRef, Side};

/// Dense f64 matrix used throughout the theory and measurement code.
pub type Matrix = Mat<f64>;

/// Builds an `[n, d]` matrix from a row-major buffer.
///
/// # Shapes
/// `data [n * d]` -> `[n, d]`
pub fn from_row_major(n: usize, d: usize, data: &[f64]) -> Result<Matrix> {
    if data.len() != n * d {
        return Err(Error::invalid(format!(
            "row-major buffer has {} values, expected n*d = {n}*{d} = {}",
            data.len(),
            n * d
        )));
    }
    Ok(Mat::from_fn(n, d, |i, j| data[i * d + j]))
}

/// Builds an `[n, d]` matrix from `n` rows of `d` values each (`d` of the first row).
///
/// # Shapes
/// `rows [n][d]` -> `[n, d]`
pub fn from_rows(rows: &[Vec<f64>]) -> Result<Matrix> {
    let d = rows.first().map_or(0, Vec::len);
    if let Some((i, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != d) {
        return Err(Error::invalid(format!(
            "row {i} has {} values, row 0 has {d}",
            r.len()
        )));
    }
    Ok(Mat::from_fn(rows.len(), d, |i, j| rows[i][j]))
}

/// Rows `idx` of `m`, in that order (repeats allowed): row i of the result is row
/// `idx[i]` of `m`.
///
/// # Shapes
/// `m [n, d]`, `idx [k]` (each < n) -> `[k, d]`
pub fn select_rows(m: MatRef<'_, f64>, idx: &[usize]) -> Matrix {
    Mat::from_fn(idx.len(), m.ncols(), |i, j| m[(idx[i], j)])
}

/// The rows of a matrix.
///
/// # Shapes
/// `[n, d]` -> `[n][d]`
pub fn to_rows(m: MatRef<'_, f64>) -> Vec<Vec<f64>> {
    (0..m.nrows())
        .map(|i| (0..m.ncols()).map(|j| m[(i, j)]).collect())
        .collect()
}

/// Flattens a matrix into a row-major buffer.
///
/// # Shapes
/// `[n, d]` -> `[n * d]`
pub fn to_row_major(m: MatRef<'_, f64>) -> Vec<f64> {
    let (n, d) = (m.nrows(), m.ncols());
    let mut out = Vec::with_capacity(n * d);
    for i in 0..n {
        for j in 0..d {
            out.push(m[(i, j)]);
        }
    }
    out
}

/// Eigendecomposition of a symmetric matrix, eigenvalues in **decreasing** order.
#[derive(Debug, Clone)]
pub struct SymEigen {
    /// Eigenvalues, `values[0] >= values[1] >= ...`.
    pub values: Vec<f64>,
    /// Orthonormal eigenvectors as columns, column `j` belongs to `values[j]`: `[n, n]`.
    pub vectors: Matrix,
}

/// Refuses a matrix that is not square, naming what needed it.
fn square(a: MatRef<'_, f64>, what: &str) -> Result<()> {
    if a.nrows() != a.ncols() {
        return Err(Error::invalid(format!(
            "{what} needs a square matrix, got [{}, {}]",
            a.nrows(),
            a.ncols()
        )));
    }
    Ok(())
}

/// Symmetric eigendecomposition A = U diag(lambda) U^T, sorted by decreasing lambda.
///
/// Only the lower triangle of `a` is read (A is assumed symmetric).
///
/// # Shapes
/// `a [n, n]` -> values `[n]`, vectors `[n, n]`
pub fn sym_eigen(a: MatRef<'_, f64>) -> Result<SymEigen> {
    let par = faer::get_global_parallelism();
    eigen(a, own_path_pays(a.nrows()), par)
}

/// faer's own symmetric eigendecomposition (`self_adjoint_evd`: its unblocked reduction),
/// sorted like [`sym_eigen`]: the reference `sym_eigen` is tested and benchmarked against
/// (`bench eigen`'s "faer alone" column).
///
/// # Shapes
/// `a [n, n]` -> values `[n]`, vectors `[n, n]`
pub fn sym_eigen_faer(a: MatRef<'_, f64>) -> Result<SymEigen> {
    eigen(a, false, faer::get_global_parallelism())
}

/// Whether prh's path (the blocked reduction `tridiag`, then `tridiag_dc`'s divide and
/// conquer with its SIMD secular equation) beats faer's whole path for an n x n matrix
/// (`bench eigen --sizes 128,256,500,1000,2000`, docs/benchmarks.md, 2 cores). It does from
/// n = 256 on, on one thread and on two (n = 1,000: 0.136 s against faer's 0.167 s on one
/// thread); at n = 128 they are level on one thread and faer's wins on two (0.0017 s
/// against 0.0020 s: the threads' start costs more than this size saves). In the browser
/// (one thread, no SIMD kernel) faer's path stays: prh's is unmeasured there.
fn own_path_pays(n: usize) -> bool {
    !cfg!(target_arch = "wasm32") && n >= 192
}

/// The decomposition behind [`sym_eigen`] and [`sym_eigen_faer`]: faer's three stages,
/// the first two (reduction to tridiagonal form, divide and conquer) replaced by
/// `tridiag` and `tridiag_dc` when `blocked`, written into the matrix returned (no second n x n copy).
fn eigen(a: MatRef<'_, f64>, blocked: bool, par: faer::Par) -> Result<SymEigen> {
    square(a, "eigendecomposition")?;
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::evd::{self, ComputeEigenvectors};
    let n = a.nrows();
    let failed = |e| Error::Numerical(format!("symmetric eigendecomposition failed: {e:?}"));
    let mut u = Mat::<f64>::zeros(n, n);
    let mut s = faer::diag::Diag::<f64>::zeros(n);
    // faer's own scratch for the whole decomposition covers every call below.
    let mut scratch = MemBuffer::new(evd::self_adjoint_evd_scratch::<f64>(
        n,
        ComputeEigenvectors::Yes,
        par,
        Default::default(),
    ));
    let stack = MemStack::new(&mut scratch);
    if blocked {
        blocked_eigen(a, s.as_mut(), u.as_mut(), par, stack).map_err(failed)?;
    } else {
        evd::self_adjoint_evd(
            a,
            s.as_mut(),
            Some(u.as_mut()),
            par,
            stack,
            Default::default(),
        )
        .map_err(failed)?;
    }
    // faer returns ascending order; the paper's "top-d" convention wants descending.
    for j in 0..n / 2 {
        faer::perm::swap_cols_idx(u.as_mut(), j, n - 1 - j);
    }
    let values: Vec<f64> = (0..n).rev().map(|j| s[j]).collect();
    Ok(SymEigen { values, vectors: u })
}

/// The blocked reduction (`tridiag`: half the memory traffic of faer's unblocked one,
/// which bounds it), then faer's divide and conquer on T with the secular equation in
/// SIMD (`tridiag_dc`), then faer's blocked back-transformation u <- Q u; eigenvalues
/// ascending, as faer's.
#[cfg(not(target_arch = "wasm32"))]
fn blocked_eigen(
    a: MatRef<'_, f64>,
    mut s: faer::diag::DiagMut<'_, f64>,
    mut u: faer::MatMut<'_, f64>,
    par: faer::Par,
    stack: &mut faer::dyn_stack::MemStack,
) -> std::result::Result<(), faer::linalg::evd::EvdError> {
    let n = a.nrows();
    let mut work = Mat::<f64>::zeros(n, n);
    work.as_mut().copy_from_triangular_lower(a);
    let t = tridiag::tridiagonalize(work.as_mut(), par);
    let mut values = t.diag;
    tridiag_dc::tridiagonal_evd(&mut values, &t.sub, u.as_mut(), par)?;
    for (i, v) in values.into_iter().enumerate() {
        s[i] = v;
    }
    if n > 1 {
        // Eigenvectors of A = Q (eigenvectors of T); Q leaves row 0 alone.
        let h = householder_factor(work.as_ref(), &t.tau, par);
        faer::linalg::householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(
            work.as_ref().submatrix(1, 0, n - 1, n - 1),
            h.as_ref(),
            faer::Conj::No,
            u.subrows_mut(1, n - 1),
            par,
            stack,
        );
    }
    Ok(())
}

/// The browser has no `tridiag` (its SIMD kernel is native): faer's whole path.
#[cfg(target_arch = "wasm32")]
fn blocked_eigen(
    a: MatRef<'_, f64>,
    s: faer::diag::DiagMut<'_, f64>,
    u: faer::MatMut<'_, f64>,
    par: faer::Par,
    stack: &mut faer::dyn_stack::MemStack,
) -> std::result::Result<(), faer::linalg::evd::EvdError> {
    faer::linalg::evd::self_adjoint_evd(a, s, Some(u), par, stack, Default::default())
}

/// The blocked form of the reflectors `tridiag::tridiagonalize` left in `work` (faer's
/// `householder_factor`: the upper-triangular T of each block of `bs` reflectors, with
/// H_j ... H_{j+bs-1} = I - V T^-1 V^T), built exactly as faer's own tridiagonalisation
/// builds it, so that faer's blocked back-transformation applies Q.
///
/// # Shapes
/// `work [n, n]`, `tau [n - 1]` -> `[bs, n - 1]`
#[cfg(not(target_arch = "wasm32"))]
fn householder_factor(work: MatRef<'_, f64>, tau: &[f64], par: faer::Par) -> Matrix {
    let m = tau.len();
    let bs = faer::linalg::qr::no_pivoting::factor::recommended_block_size::<f64>(m + 1, m + 1);
    let basis = work.submatrix(1, 0, m, m);
    let mut h = Mat::<f64>::zeros(bs, m);
    let mut j = 0;
    while j < m {
        let b = bs.min(m - j);
        let mut block = h.as_mut().submatrix_mut(0, j, b, b);
        for k in 0..b {
            block[(k, k)] = tau[j + k];
        }
        // doc(hidden) in faer 0.24 but public: its own tridiagonalisation's last step.
        faer::linalg::householder::upgrade_householder_factor(
            block,
            basis.submatrix(j, j, m - j, b),
            b,
            1,
            par,
        );
        j += b;
    }
    h
}

/// Eigenvalues only of a symmetric matrix, in **decreasing** order. Skips accumulating the
/// eigenvectors, the larger part of the work of [`sym_eigen`] (Golub & Van Loan §8.3:
/// about 4/3 n^3 flops for the tridiagonal reduction instead of ~9 n^3 with vectors).
///
/// Only the lower triangle of `a` is read (A is assumed symmetric).
///
/// # Shapes
/// `a [n, n]` -> `[n]`
pub fn sym_eigenvalues(a: MatRef<'_, f64>) -> Result<Vec<f64>> {
    square(a, "eigenvalues")?;
    let mut values = a
        .self_adjoint_eigenvalues(Side::Lower)
        .map_err(|e| Error::Numerical(format!("symmetric eigenvalues failed: {e:?}")))?;
    values.reverse();
    Ok(values)
}

/// Sets how many threads faer's dense kernels (eigendecomposition, SVD, matmul) use in
/// this process: 1 runs them sequentially, 0 uses every core (rayon's global pool, the
/// default natively). Native only: the browser build has no threads.
#[cfg(not(target_arch = "wasm32"))]
pub fn set_threads(n: usize) {
    faer::set_global_parallelism(if n == 1 {
        faer::Par::Seq
    } else {
        faer::Par::rayon(n)
    });
}

/// Number of threads faer's dense kernels use now (see [`set_threads`]).
#[cfg(not(target_arch = "wasm32"))]
pub fn threads() -> usize {
    match faer::get_global_parallelism() {
        faer::Par::Seq => 1,
        faer::Par::Rayon(n) => n.get(),
    }
}

/// Thin singular value decomposition A = U diag(s) V^T, s in decreasing order.
#[derive(Debug, Clone)]
pub struct Svd {
    /// Left singular vectors `[m, r]`, r = min(m, n).
    pub u: Matrix,
    /// Singular values `[r]`, decreasing.
    pub s: Vec<f64>,
    /// Right singular vectors `[n, r]`.
    pub v: Matrix,
}

impl Svd {
    /// Numerical rank: how many singular values exceed `rel` times the largest (s is
    /// decreasing, so these are the first `rank` columns of u and v).
    pub fn rank(&self, rel: f64) -> usize {
        let top = self.s.first().copied().unwrap_or(0.0);
        self.s.iter().take_while(|&&v| v > rel * top).count()
    }
}

/// Thin SVD of `a`.
///
/// # Shapes
/// `a [m, n]` -> u `[m, r]`, s `[r]`, v `[n, r]` with r = min(m, n)
pub fn svd(a: MatRef<'_, f64>) -> Result<Svd> {
    let finite = |m: MatRef<'_, f64>| m.col_iter().all(|c| c.iter().all(|x| x.is_finite()));
    if !finite(a) {
        return Err(Error::Numerical(format!(
            "SVD of a [{}, {}] matrix with NaN or Inf entries",
            a.nrows(),
            a.ncols()
        )));
    }
    let thin = |m: MatRef<'_, f64>| -> Result<Svd> {
        let dec = m
            .thin_svd()
            .map_err(|e| Error::Numerical(format!("SVD failed: {e:?}")))?;
        let r = m.nrows().min(m.ncols());
        let sd = dec.S();
        Ok(Svd {
            u: dec.U().to_owned(),
            s: (0..r).map(|j| sd[j]).collect(),
            v: dec.V().to_owned(),
        })
    };
    let ok =
        |d: &Svd| finite(d.u.as_ref()) && finite(d.v.as_ref()) && d.s.iter().all(|x| x.is_finite());
    let dec = thin(a)?;
    if ok(&dec) {
        return Ok(dec);
    }
    // faer 0.24's thin SVD was seen to return NaN on a finite, highly rank-deficient
    // [2048, 1280] matrix (A^T B of 100 paired rows: the views-vision matcher's TF-IDF
    // baseline, one Procrustes round of one random start; also on its transpose), so the
    // Gram route, which needs only a symmetric eigendecomposition and a QR.
    let g = if a.nrows() >= a.ncols() {
        svd_by_gram(a)?
    } else {
        let t = svd_by_gram(a.transpose())?;
        Svd {
            u: t.v,
            s: t.s,
            v: t.u,
        }
    };
    if ok(&g) {
        return Ok(g);
    }
    Err(Error::Numerical(format!(
        "SVD of a finite [{}, {}] matrix returned NaN or Inf (faer's, and the Gram route)",
        a.nrows(),
        a.ncols()
    )))
}

/// Thin SVD of a tall `a` (`p >= q`) through its Gram matrix: A^T A = V diag(s^2) V^T
/// (symmetric eigendecomposition, s decreasing), U_j = A v_j / s_j for s_j > 1e-7 s_0;
/// below that s_j is set to 0 (the Gram matrix squares singular values, so under
/// ~sqrt(eps) s_0 = 1.5e-8 s_0 they are rounding) and the column of U (A v_j ~ 0 there,
/// so any orthonormal completion is exact to that tolerance) starts as a seeded Gaussian
/// vector; then U = the thin Q of that matrix (a
/// Householder QR keeps the columns orthonormal whatever their rank), signs matched to
/// diag(R) so the leading columns stay A v_j / s_j. So U S V^T = A to ~1e-7 relative
/// (exactly rank-deficient matrices, the case it is for, to rounding). [`svd`]'s fallback
/// when faer's SVD returns NaN.
///
/// # Shapes
/// `a [p, q]`, p >= q -> u `[p, q]`, s `[q]`, v `[q, q]`
fn svd_by_gram(a: MatRef<'_, f64>) -> Result<Svd> {
    use rand::SeedableRng;
    use rand_distr::{Distribution, StandardNormal};
    let (p, q) = (a.nrows(), a.ncols());
    let e = sym_eigen((a.transpose() * a).as_ref())?;
    let top = e.values.first().copied().unwrap_or(0.0).max(0.0).sqrt();
    let s: Vec<f64> = e
        .values
        .iter()
        .map(|&l| l.max(0.0).sqrt())
        .map(|x| if x > 1e-7 * top { x } else { 0.0 })
        .collect();
    let av = a * &e.vectors;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5bd);
    let mut raw = Mat::<f64>::zeros(p, q);
    for j in 0..q {
        for i in 0..p {
            raw[(i, j)] = if s[j] > 0.0 {
                av[(i, j)] / s[j]
            } else {
                StandardNormal.sample(&mut rng)
            };
        }
    }
    let qr = raw.qr();
    let mut u = qr.compute_thin_Q();
    let r = qr.thin_R();
    for j in 0..q {
        if r[(j, j)] < 0.0 {
            for i in 0..p {
                u[(i, j)] = -u[(i, j)];
            }
        }
    }
    Ok(Svd { u, s, v: e.vectors })
}

/// Operator (spectral) norm ||A||_2 = largest singular value.
///
/// A square matrix that is exactly symmetric (A_ij == A_ji bit for bit, as kernels and
/// their differences are) takes the cheaper route ||A||_2 = max_i |lambda_i(A)|: symmetric
/// eigenvalues cost about half of the singular values of the same matrix (tridiagonal vs
/// bidiagonal reduction), which is most of an alpha change in the playground.
///
/// # Shapes
/// `a [m, n]` -> scalar
pub fn op_norm(a: MatRef<'_, f64>) -> Result<f64> {
    if a.nrows() == 0 || a.ncols() == 0 {
        return Ok(0.0);
    }
    let n = a.nrows();
    if a.ncols() == n && (0..n).all(|j| (j + 1..n).all(|i| a[(i, j)] == a[(j, i)])) {
        let values = sym_eigenvalues(a)?;
        return Ok(values.iter().fold(0.0, |m: f64, v| m.max(v.abs())));
    }
    let s = a
        .singular_values()
        .map_err(|e| Error::Numerical(format!("singular values failed: {e:?}")))?;
    Ok(s.iter().cloned().fold(0.0, f64::max))
}

/// Frobenius norm ||A||_F = sqrt(sum_ij A_ij^2).
pub fn fro_norm(a: MatRef<'_, f64>) -> f64 {
    a.norm_l2()
}

/// Principal angles between the column spaces of two orthonormal `[n, d]` matrices:
/// cos theta_j = sigma_j(U1^T U2); returns (||sin Theta||_op, ||sin Theta||_F, angles°).
pub fn principal_angles(u1: &Matrix, u2: &Matrix) -> Result<(f64, f64, Vec<f64>)> {
    let s = svd((u1.transpose() * u2).as_ref())?.s;
    let cos: Vec<f64> = s.iter().map(|c| c.clamp(0.0, 1.0)).collect();
    let sin2: Vec<f64> = cos.iter().map(|c| (1.0 - c * c).max(0.0)).collect();
    let op = sin2.iter().cloned().fold(0.0, f64::max).sqrt();
    let fro = sin2.iter().sum::<f64>().sqrt();
    let mut deg: Vec<f64> = cos.iter().map(|c| c.acos().to_degrees()).collect();
    deg.sort_by(|a, b| a.total_cmp(b));
    Ok((op, fro, deg))
}

/// Levenshtein distance between two sequences: the fewest insertions, deletions and
/// substitutions (each cost 1) turning `x` into `y` (torchaudio's `edit_distance`, which
/// platonic-rep calls); classic O(|x| |y|) DP with one row. Used by the edit-distance
/// k-NN metric (neighbour lists) and by config errors' "did you mean" (characters).
pub fn levenshtein<T: PartialEq>(x: &[T], y: &[T]) -> usize {
    let mut row: Vec<usize> = (0..=y.len()).collect();
    for (i, xi) in x.iter().enumerate() {
        // `diag` is D[i][j] (the previous row's entry left of the current column).
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, yj) in y.iter().enumerate() {
            let sub = diag + usize::from(xi != yj);
            diag = row[j + 1];
            row[j + 1] = sub.min(row[j + 1] + 1).min(row[j] + 1);
        }
    }
    row[y.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Gram-route SVD (the fallback when faer's returns NaN) of a rank-deficient tall
    /// matrix like the one it was written for (A^T B of fewer rows than columns):
    /// orthonormal U and V, s decreasing and equal to faer's, U S V^T = A to 1e-9
    /// relative, and tr(A^T U V^T) = the nuclear norm (U V^T is a Procrustes optimum).
    #[test]
    fn gram_svd_matches_faer_on_a_rank_deficient_matrix() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let (n, p, q) = (12, 60, 40);
        let x = Matrix::from_fn(n, p, |_, _| rng.random::<f64>() - 0.5);
        let y = Matrix::from_fn(n, q, |_, _| rng.random::<f64>() - 0.5);
        let a = x.transpose() * &y; // [60, 40], rank 12
        let g = svd_by_gram(a.as_ref()).unwrap();
        let eye = |k: usize| Matrix::identity(k, k);
        assert!(
            (g.u.transpose() * &g.u - eye(q)).norm_l2() < 1e-9,
            "U orthonormal"
        );
        assert!(
            (g.v.transpose() * &g.v - eye(q)).norm_l2() < 1e-9,
            "V orthonormal"
        );
        assert!(g.s.windows(2).all(|w| w[0] >= w[1]), "decreasing");
        let sd = Matrix::from_fn(q, q, |i, j| if i == j { g.s[i] } else { 0.0 });
        let back = &g.u * &sd * g.v.transpose();
        assert!((&back - &a).norm_l2() < 1e-9 * a.norm_l2(), "reconstructs");
        let f = svd(a.as_ref()).unwrap();
        for (x, y) in f.s.iter().zip(&g.s) {
            assert!((x - y).abs() < 1e-8 * f.s[0], "singular values {x} vs {y}");
        }
        let nuc: f64 = f.s.iter().sum();
        let m = a.transpose() * (&g.u * g.v.transpose());
        let tr: f64 = (0..q).map(|i| m[(i, i)]).sum();
        assert!(
            (tr - nuc).abs() < 1e-8 * nuc,
            "trace {tr} vs nuclear norm {nuc}"
        );
    }

    #[test]
    fn eigen_is_descending_and_reconstructs() {
        let a = Mat::from_fn(4, 4, |i, j| 1.0 / (1.0 + i as f64 + j as f64));
        let e = sym_eigen(a.as_ref()).unwrap();
        assert!(e.values.windows(2).all(|w| w[0] >= w[1]));
        let lam = Mat::from_fn(4, 4, |i, j| if i == j { e.values[i] } else { 0.0 });
        let rec = &e.vectors * &lam * e.vectors.transpose();
        assert!((&rec - &a).norm_l2() < 1e-12);
    }

    /// The blocked reduction's decomposition against faer's own (a different reduction,
    /// so equal to rounding, not bit for bit): eigenvalues to 1e-12 of the spectrum's
    /// scale, A U = U diag(lambda) and U^T U = I to 1e-12 n, on sizes across the panel
    /// width (32) and the last panel (96 + 32 rows), and on
    /// matrices whose reflectors are identities (diagonal, zero) or whose eigenvalues
    /// repeat (a block of ones).
    #[test]
    fn blocked_reduction_matches_faer() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut cases: Vec<Matrix> = Vec::new();
        for n in [1, 2, 3, 40, 129, 200, 333] {
            let g = Mat::<f64>::from_fn(n, n, |_, _| rng.random::<f64>() - 0.5);
            cases.push(Mat::from_fn(n, n, |i, j| g[(i, j)] + g[(j, i)]));
        }
        cases.push(Mat::from_fn(
            150,
            150,
            |i, j| if i == j { i as f64 } else { 0.0 },
        ));
        cases.push(Mat::zeros(140, 140));
        cases.push(Mat::from_fn(180, 180, |i, j| {
            if i < 60 && j < 60 { 1.0 } else { 0.0 }
        }));
        for a in cases {
            let n = a.nrows();
            // The blocked path whatever `sym_eigen` would pick for this size, on one
            // thread for the small and two for the larger (the parallel products).
            let par = if n < 200 {
                faer::Par::Seq
            } else {
                faer::Par::rayon(2)
            };
            let ours = eigen(a.as_ref(), true, par).unwrap();
            let theirs = sym_eigen_faer(a.as_ref()).unwrap();
            let scale = theirs.values.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            let tol = 1e-12 * scale * (n as f64).max(1.0);
            for (x, y) in ours.values.iter().zip(&theirs.values) {
                assert!(
                    (x - y).abs() <= tol,
                    "n = {n}: eigenvalue {x} vs faer's {y}"
                );
            }
            let u = ours.vectors.as_ref();
            let lam = Mat::from_fn(n, n, |i, j| if i == j { ours.values[i] } else { 0.0 });
            let residual = (&a * u - u * &lam).norm_max();
            let gram = (u.transpose() * u - Mat::<f64>::identity(n, n)).norm_max();
            assert!(residual <= tol, "n = {n}: |A U - U L| = {residual:e}");
            assert!(
                gram <= 1e-12 * (n as f64).max(1.0),
                "n = {n}: |U^T U - I| = {gram:e}"
            );
        }
    }

    #[test]
    fn svd_reconstructs_and_op_norm_matches() {
        let a = Mat::from_fn(5, 3, |i, j| (i as f64 - 2.0) * 0.3 + (j * j) as f64 * 0.1);
        let d = svd(a.as_ref()).unwrap();
        let s = Mat::from_fn(3, 3, |i, j| if i == j { d.s[i] } else { 0.0 });
        let rec = &d.u * &s * d.v.transpose();
        assert!((&rec - &a).norm_l2() < 1e-12);
        assert!((op_norm(a.as_ref()).unwrap() - d.s[0]).abs() < 1e-12);
    }

    #[test]
    fn eigenvalues_only_and_symmetric_op_norm() {
        // A = H diag(1, -3, 2, 0.5) H with H = I - 2 h h^T / h^T h (orthogonal, symmetric):
        // eigenvalues {2, 1, 0.5, -3} in closed form, ||A||_2 = 3 (the negative one).
        let h = [1.0, -2.0, 0.5, 3.0];
        let hh: f64 = h.iter().map(|x| x * x).sum();
        let q = Mat::from_fn(4, 4, |i, j| f64::from(i == j) - 2.0 * h[i] * h[j] / hh);
        let l = Mat::from_fn(4, 4, |i, j| {
            if i == j {
                [1.0, -3.0, 2.0, 0.5][i]
            } else {
                0.0
            }
        });
        let a = &q * &l * &q;
        let a = Mat::from_fn(4, 4, |i, j| 0.5 * (a[(i, j)] + a[(j, i)]));
        let v = sym_eigenvalues(a.as_ref()).unwrap();
        for (got, want) in v.iter().zip([2.0, 1.0, 0.5, -3.0]) {
            assert!((got - want).abs() < 1e-12, "{v:?}");
        }
        assert!((op_norm(a.as_ref()).unwrap() - 3.0).abs() < 1e-12);
        // Not symmetric: the singular-value route, same closed form for Q L (||Q L|| = 3).
        let ql = &q * &l;
        assert!((op_norm(ql.as_ref()).unwrap() - 3.0).abs() < 1e-12);
        assert!(sym_eigenvalues(ql.subcols(0, 3)).is_err());
    }

    #[test]
    fn row_major_round_trip() {
        let data: Vec<f64> = (0..6).map(|x| x as f64).collect();
        let m = from_row_major(2, 3, &data).unwrap();
        assert_eq!(m[(1, 0)], 3.0);
        assert_eq!(to_row_major(m.as_ref()), data);
        assert!(from_row_major(2, 2, &data).is_err());
    }
}
