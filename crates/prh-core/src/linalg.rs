//! Dense linear algebra shared by the theory and measurement code: conversions between
//! row-major buffers and faer matrices, symmetric eigendecomposition and SVD.
//!
//! faer is used because it also compiles to wasm32, so the browser runs the same solver.

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
    let n = a.nrows();
    let evd = a
        .self_adjoint_eigen(Side::Lower)
        .map_err(|e| Error::Numerical(format!("symmetric eigendecomposition failed: {e:?}")))?;
    // faer returns ascending order; the paper's "top-d" convention wants descending.
    let s = evd.S();
    let u = evd.U();
    let values: Vec<f64> = (0..n).rev().map(|j| s[j]).collect();
    let vectors = Mat::from_fn(n, n, |i, j| u[(i, n - 1 - j)]);
    Ok(SymEigen { values, vectors })
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
/// # Shapes
/// `a [m, n]` -> scalar
pub fn op_norm(a: MatRef<'_, f64>) -> Result<f64> {
    if a.nrows() == 0 || a.ncols() == 0 {
        return Ok(0.0);
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
    fn row_major_round_trip() {
        let data: Vec<f64> = (0..6).map(|x| x as f64).collect();
        let m = from_row_major(2, 3, &data).unwrap();
        assert_eq!(m[(1, 0)], 3.0);
        assert_eq!(to_row_major(m.as_ref()), data);
        assert!(from_row_major(2, 2, &data).is_err());
    }
}
