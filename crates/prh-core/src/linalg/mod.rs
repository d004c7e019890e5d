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

/// Symmetric eigendecomposition A = U diag(lambda) U^T, sorted by decreasing lambda.
///
/// Only the lower triangle of `a` is read (A is assumed symmetric).
///
/// # Shapes
/// `a [n, n]` -> values `[n]`, vectors `[n, n]`
pub fn sym_eigen(a: MatRef<'_, f64>) -> Result<SymEigen> {
    if a.nrows() != a.ncols() {
        return Err(Error::invalid(format!(
            "eigendecomposition needs a square matrix, got [{}, {}]",
            a.nrows(),
            a.ncols()
        )));
    }
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::evd::{self, ComputeEigenvectors};
    let n = a.nrows();
    // faer's solver called directly (what `self_adjoint_eigen` wraps) so that the
    // eigenvectors are written once into the matrix returned and reversed in place, instead
    // of being copied into a second n x n matrix (results bit-identical; ~2 % of the time at
    // n = 1,000-2,000, docs/benchmarks.md).
    let par = faer::get_global_parallelism();
    let mut u = Mat::<f64>::zeros(n, n);
    let mut s = faer::diag::Diag::<f64>::zeros(n);
    let mut scratch = MemBuffer::new(evd::self_adjoint_evd_scratch::<f64>(
        n,
        ComputeEigenvectors::Yes,
        par,
        Default::default(),
    ));
    evd::self_adjoint_evd(
        a,
        s.as_mut(),
        Some(u.as_mut()),
        par,
        MemStack::new(&mut scratch),
        Default::default(),
    )
    .map_err(|e| Error::Numerical(format!("symmetric eigendecomposition failed: {e:?}")))?;
    // faer returns ascending order; the paper's "top-d" convention wants descending.
    for j in 0..n / 2 {
        faer::perm::swap_cols_idx(u.as_mut(), j, n - 1 - j);
    }
    let values: Vec<f64> = (0..n).rev().map(|j| s[j]).collect();
    Ok(SymEigen { values, vectors: u })
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
    if a.nrows() != a.ncols() {
        return Err(Error::invalid(format!(
            "eigenvalues need a square matrix, got [{}, {}]",
            a.nrows(),
            a.ncols()
        )));
    }
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

/// Thin SVD of `a`.
///
/// # Shapes
/// `a [m, n]` -> u `[m, r]`, s `[r]`, v `[n, r]` with r = min(m, n)
pub fn svd(a: MatRef<'_, f64>) -> Result<Svd> {
    let dec = a
        .thin_svd()
        .map_err(|e| Error::Numerical(format!("SVD failed: {e:?}")))?;
    let r = a.nrows().min(a.ncols());
    let sd = dec.S();
    Ok(Svd {
        u: dec.U().to_owned(),
        s: (0..r).map(|j| sd[j]).collect(),
        v: dec.V().to_owned(),
    })
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

    #[test]
    fn eigen_is_descending_and_reconstructs() {
        let a = Mat::from_fn(4, 4, |i, j| 1.0 / (1.0 + i as f64 + j as f64));
        let e = sym_eigen(a.as_ref()).unwrap();
        assert!(e.values.windows(2).all(|w| w[0] >= w[1]));
        let lam = Mat::from_fn(4, 4, |i, j| if i == j { e.values[i] } else { 0.0 });
        let rec = &e.vectors * &lam * e.vectors.transpose();
        assert!((&rec - &a).norm_l2() < 1e-12);
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
