//! SVCCA (Raghu et al. 2017), as platonic-rep's `metrics.py` computes it with its default
//! `cca_dim = 10`: standardise each feature (centre, divide by its std + 1e-8), keep the
//! top-c left singular vectors U_A, U_B of each side, and average the c canonical
//! correlations between span(U_A) and span(U_B).
//!
//! Exact where platonic-rep is approximate: it takes U from `torch.svd_lowrank` (a
//! randomised range finder) and the correlations from scikit-learn's iterative CCA
//! (NIPALS, tol 1e-6) plus 1e-10 noise. Here U comes from an exact thin SVD and, because
//! U_A and U_B have orthonormal, centred columns, the canonical correlations are exactly
//! the singular values of U_A^T U_B (the cosines of the principal angles between the two
//! subspaces; Björck & Golub 1973), so the score is mean_i sigma_i(U_A^T U_B).

use crate::linalg::{Matrix, svd, sym_eigen};
use crate::{Error, Result};
use faer::MatRef;

/// platonic-rep's default number of SVD directions kept per side.
pub const CCA_DIM: usize = 10;

/// The top-c left singular vectors of the column-standardised features:
/// Z_ij = (X_ij - mean_j) / (std_j + 1e-8) (std with n - 1, as `torch.std`), Z = U S V^T,
/// U[:, :c]. c = min(`dim`, n - 1, d) (centring removes one direction), fewer when Z has
/// fewer numerically non-zero singular values.
///
/// # Shapes
/// `x [n, d]` -> `[n, c]`
pub fn basis(x: MatRef<'_, f64>, dim: usize) -> Result<Matrix> {
    let (n, d) = (x.nrows(), x.ncols());
    if n < 3 || d == 0 || dim == 0 {
        return Err(Error::invalid(format!(
            "SVCCA needs at least 3 samples, 1 feature and cca_dim >= 1, got [{n}, {d}] and cca_dim {dim}"
        )));
    }
    let mut z = x.to_owned();
    for j in 0..d {
        let col = z.col_as_slice_mut(j);
        let mean = col.iter().sum::<f64>() / n as f64;
        let var = col.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let scale = var.sqrt() + 1e-8;
        col.iter_mut().for_each(|v| *v = (*v - mean) / scale);
    }
    let c = dim.min(n - 1).min(d);
    // The top-c left singular vectors from the smaller Gram matrix (O(min(n, d)^2
    // max(n, d)), the cost of one GEMM; a thin SVD of a 100,000 x 768 matrix is several
    // times slower): Z Z^T = U S^2 U^T directly, or Z^T Z = V S^2 V^T and U = Z V S^-1.
    // Directions with sigma below 1e-6 sigma_max (the Gram route resolves no further) are
    // dropped: their U is noise, and they carry no variance to correlate.
    let u = if n <= d {
        let e = sym_eigen((&z * z.transpose()).as_ref())?;
        let keep = kept(&e.values, c);
        e.vectors.subcols(0, keep).to_owned()
    } else {
        let e = sym_eigen((z.transpose() * &z).as_ref())?;
        let keep = kept(&e.values, c);
        let mut u: Matrix = &z * e.vectors.subcols(0, keep);
        for t in 0..keep {
            let s = e.values[t].sqrt();
            u.col_as_slice_mut(t).iter_mut().for_each(|v| *v /= s);
        }
        u
    };
    // All-constant features leave no direction: an empty basis, which scores 0 (the
    // metrics report flags such an input as collapsed).
    Ok(u)
}

/// How many of the leading eigenvalues (squared singular values, decreasing) to keep:
/// at most `c`, each above (1e-6)^2 of the largest.
fn kept(values: &[f64], c: usize) -> usize {
    let top = values.first().copied().unwrap_or(0.0);
    values
        .iter()
        .take(c)
        .take_while(|&&v| top > 0.0 && v > 1e-12 * top)
        .count()
}

/// Mean canonical correlation of two bases with orthonormal centred columns:
/// (1/c) sum_i sigma_i(U_A^T U_B), c = min(c_A, c_B); 0 when either basis is empty.
///
/// # Shapes
/// `ua [n, c_a]`, `ub [n, c_b]` -> scalar in [0, 1]
pub fn from_bases(ua: MatRef<'_, f64>, ub: MatRef<'_, f64>) -> Result<f64> {
    if ua.nrows() != ub.nrows() {
        return Err(Error::invalid(format!(
            "SVCCA bases differ in samples: {} vs {}",
            ua.nrows(),
            ub.nrows()
        )));
    }
    if ua.ncols() == 0 || ub.ncols() == 0 {
        return Ok(0.0);
    }
    let m: Matrix = ua.transpose() * ub;
    let s = svd(m.as_ref())?.s;
    let c = s.len().max(1);
    // Rounding can push a cosine a hair above 1.
    Ok(s.iter().map(|v| v.min(1.0)).sum::<f64>() / c as f64)
}

/// SVCCA similarity of two feature sets with `dim` directions per side
/// (`from_bases(basis(x, dim), basis(y, dim))`).
///
/// # Shapes
/// `x [n, d_x]`, `y [n, d_y]` -> scalar in [0, 1]
pub fn svcca(x: MatRef<'_, f64>, y: MatRef<'_, f64>, dim: usize) -> Result<f64> {
    from_bases(basis(x, dim)?.as_ref(), basis(y, dim)?.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn noise(n: usize, d: usize, seed: u64) -> Matrix {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        Mat::from_fn(n, d, |_, _| rng.random::<f64>() - 0.5)
    }

    #[test]
    fn invariances_and_closed_forms() {
        let x = noise(80, 12, 1);
        // Identical inputs: every canonical correlation is 1.
        assert!((svcca(x.as_ref(), x.as_ref(), 10).unwrap() - 1.0).abs() < 1e-12);
        // An invertible linear map of all 12 features keeps the 10-direction subspace only
        // when nothing is truncated: with dim = d the score is 1 for any invertible map of
        // the centred features (standardisation rescales columns, span unchanged).
        let m = noise(12, 12, 2);
        let y = &x * &m;
        let s = svcca(x.as_ref(), y.as_ref(), 12).unwrap();
        assert!((s - 1.0).abs() < 1e-9, "{s}");
        // Independent noise: far below 1.
        let z = noise(80, 12, 3);
        let s = svcca(x.as_ref(), z.as_ref(), 10).unwrap();
        assert!(s < 0.9 && s > 0.0, "{s}");
        // Two explicit 2-d subspaces of R^4 at principal angles 0 and 60 degrees:
        // mean cosine (1 + 0.5) / 2.
        let (c, s60) = (0.5f64, 0.75f64.sqrt());
        let ua = Mat::from_fn(4, 2, |i, j| {
            [[0.5, 0.5], [0.5, -0.5], [0.5, 0.5], [0.5, -0.5]][i][j]
        });
        let ub = Mat::from_fn(4, 2, |i, j| {
            let e1 = [0.5, 0.5, 0.5, 0.5];
            let q2 = [0.5, -0.5, 0.5, -0.5];
            let p = [0.5, 0.5, -0.5, -0.5]; // orthogonal to both columns of ua
            if j == 0 {
                e1[i]
            } else {
                c * q2[i] + s60 * p[i]
            }
        });
        let v = from_bases(ua.as_ref(), ub.as_ref()).unwrap();
        assert!((v - 0.75).abs() < 1e-12, "{v}");
        assert!(basis(x.subrows(0, 2), 10).is_err());
        // Constant features: no direction, score 0.
        let flat = Mat::from_fn(80, 12, |_, j| j as f64);
        assert_eq!(basis(flat.as_ref(), 10).unwrap().ncols(), 0);
        assert_eq!(svcca(flat.as_ref(), x.as_ref(), 10).unwrap(), 0.0);
    }
}
