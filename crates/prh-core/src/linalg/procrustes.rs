//! Orthogonal Procrustes: the rotation Q of the theorem f*_1 = Q f*_2 (paper §2), fitted
//! from paired rows.

use crate::linalg::{Matrix, svd};
use crate::{Error, Result};
use faer::MatRef;

/// A fitted (semi-)orthogonal map and how well it fits.
#[derive(Debug, Clone)]
pub struct Procrustes {
    /// The map Q `[d, e]`: from [`fit`], Q^T Q = I (d >= e) or Q Q^T = I (d < e); from
    /// [`fit_determined`] the same when `rank` = min(d, e), else a partial isometry of
    /// rank `rank` (zero on the directions the pairs leave undetermined).
    pub q: Matrix,
    /// Residual ||A Q - B||_F.
    pub residual: f64,
    /// Residual relative to ||B||_F (0 = exact fit).
    pub relative_residual: f64,
    /// Directions the pairs determine: the rank of A^T B (singular values above
    /// [`DETERMINED_REL`] of the largest). Below min(d, e), [`fit`]'s Q is one of many
    /// equally good maps and [`fit_determined`] keeps only this many directions.
    pub rank: usize,
}

/// Singular values of A^T B at or below this fraction of the largest count as zero: the
/// pairs say nothing about their directions (exactly rank-deficient A^T B, to rounding).
pub const DETERMINED_REL: f64 = 1e-10;

/// Orthogonal Procrustes: Q = argmin_{Q^T Q = I} ||A Q - B||_F.
///
/// With the thin SVD A^T B = U S V^T, Q = U V^T (Schönemann 1966). When d != e the
/// result is the semi-orthogonal map with orthonormal columns (d > e) or rows (d < e).
/// When A^T B has rank r below min(d, e) (fewer pairs than both widths, or all-zero
/// columns) the minimiser is not unique: the singular vectors past r, and so Q's action
/// on them, are whatever the SVD routine returns. Held-out rows mapped by such a Q get
/// an arbitrary part; [`fit_determined`] is the map to use for them.
///
/// # Shapes
/// `a [n, d]`, `b [n, e]` -> `q [d, e]`
pub fn fit(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Result<Procrustes> {
    fit_with(a, b, false)
}

/// The part of the Procrustes map the pairs determine: Q_r = U_r V_r^T over the r
/// singular values of A^T B = U S V^T above [`DETERMINED_REL`] of the largest, i.e. the
/// polar factor of A^T B (A^T B (B^T A A^T B)^{+1/2}), which is unique. Equal to [`fit`]'s
/// Q, to the bit, when r = min(d, e); otherwise a partial isometry that maps each
/// determined direction as every minimiser does and sends the undetermined ones, about
/// which the pairs say nothing, to zero. Every minimiser's A Q equals A Q_r on the fit
/// rows when r = rank(A), so the residual is the same.
///
/// # Shapes
/// `a [n, d]`, `b [n, e]` -> `q [d, e]` of rank r
pub fn fit_determined(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Result<Procrustes> {
    fit_with(a, b, true)
}

fn fit_with(a: MatRef<'_, f64>, b: MatRef<'_, f64>, determined_only: bool) -> Result<Procrustes> {
    if a.nrows() != b.nrows() {
        return Err(Error::invalid(format!(
            "Procrustes needs paired rows: A has {} rows, B has {}",
            a.nrows(),
            b.nrows()
        )));
    }
    if a.nrows() == 0 {
        return Err(Error::invalid("Procrustes needs at least one pair"));
    }
    let m = a.transpose() * b; // [d, e]
    let dec = svd(m.as_ref())?;
    let rank = dec.rank(DETERMINED_REL);
    let q = if determined_only && rank < dec.s.len() {
        dec.u.subcols(0, rank) * dec.v.subcols(0, rank).transpose()
    } else {
        &dec.u * dec.v.transpose()
    };
    let resid = &(a * &q) - b;
    let residual = resid.norm_l2();
    let bn = b.norm_l2();
    Ok(Procrustes {
        relative_residual: if bn > 0.0 { residual / bn } else { residual },
        residual,
        rank,
        q,
    })
}

/// Applies a fitted map: A Q.
///
/// # Shapes
/// `a [n, d]`, `q [d, e]` -> `[n, e]`
pub fn apply(a: MatRef<'_, f64>, q: MatRef<'_, f64>) -> Result<Matrix> {
    if a.ncols() != q.nrows() {
        return Err(Error::invalid(format!(
            "cannot apply a [{}, {}] map to rows of width {}",
            q.nrows(),
            q.ncols(),
            a.ncols()
        )));
    }
    Ok(a * q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;

    fn rotation_3d(t: f64) -> Matrix {
        // Rotation about z then about x: a generic proper rotation.
        let (c, s) = (t.cos(), t.sin());
        let rz = Mat::from_fn(3, 3, |i, j| match (i, j) {
            (0, 0) | (1, 1) => c,
            (0, 1) => -s,
            (1, 0) => s,
            (2, 2) => 1.0,
            _ => 0.0,
        });
        let rx = Mat::from_fn(3, 3, |i, j| match (i, j) {
            (0, 0) => 1.0,
            (1, 1) | (2, 2) => c,
            (1, 2) => -s,
            (2, 1) => s,
            _ => 0.0,
        });
        &rz * &rx
    }

    #[test]
    fn recovers_a_planted_rotation() {
        let a = Mat::from_fn(20, 3, |i, j| {
            ((i * 7 + j * 3) % 11) as f64 - 5.0 + 0.1 * j as f64
        });
        let r = rotation_3d(0.7);
        let b = &a * &r;
        let p = fit(a.as_ref(), b.as_ref()).unwrap();
        assert!((&p.q - &r).norm_l2() < 1e-10);
        assert!(p.relative_residual < 1e-12);
    }

    #[test]
    fn semi_orthogonal_when_widths_differ() {
        let a = Mat::from_fn(10, 4, |i, j| {
            ((i + 2 * j) % 5) as f64 + 0.01 * (i * j) as f64
        });
        let b = Mat::from_fn(10, 2, |i, j| ((3 * i + j) % 4) as f64);
        let p = fit(a.as_ref(), b.as_ref()).unwrap();
        let qtq = p.q.transpose() * &p.q;
        let eye = Mat::<f64>::identity(2, 2);
        assert!((&qtq - &eye).norm_l2() < 1e-10);
        assert!(fit(a.as_ref(), Mat::<f64>::zeros(3, 2).as_ref()).is_err());
    }
}

#[cfg(test)]
mod determined_tests {
    use super::*;

    /// A's rows span e1, e2 of R^4 and B = A R for a rotation R. A^T B = C R with C the
    /// 2x2 Gram block, whose polar factor is P R (P the projector onto e1, e2): R's first
    /// two rows, then zeros. `fit_determined` returns exactly that; `fit` is an orthogonal
    /// completion that agrees on e1, e2.
    #[test]
    fn undetermined_directions_map_to_zero() {
        let a = Matrix::from_fn(10, 4, |i, j| match j {
            0 => (i as f64 * 0.7).sin() + 0.1 * i as f64,
            1 => (i as f64 * 1.3).cos() - 0.05 * i as f64,
            _ => 0.0,
        });
        let r = {
            let (c, s) = (0.6_f64.cos(), 0.6_f64.sin());
            let g = |p: usize, q: usize| {
                Matrix::from_fn(4, 4, |i, j| match (i, j) {
                    _ if i == p && j == p || i == q && j == q => c,
                    _ if i == p && j == q => -s,
                    _ if i == q && j == p => s,
                    _ if i == j => 1.0,
                    _ => 0.0,
                })
            };
            &(&g(0, 2) * &g(1, 3)) * &g(0, 1)
        };
        let b = &a * &r;
        let d = fit_determined(a.as_ref(), b.as_ref()).unwrap();
        let f = fit(a.as_ref(), b.as_ref()).unwrap();
        assert_eq!((d.rank, f.rank), (2, 2));
        for j in 0..4 {
            for i in 0..2 {
                assert!((d.q[(i, j)] - r[(i, j)]).abs() < 1e-10, "row {i}");
                assert!((f.q[(i, j)] - r[(i, j)]).abs() < 1e-10, "row {i}");
            }
            for i in 2..4 {
                assert!(d.q[(i, j)].abs() < 1e-10, "row {i} not zero");
            }
        }
        assert!(d.relative_residual < 1e-10 && f.relative_residual < 1e-10);
    }

    /// Full rank: the determined map is `fit`'s Q to the bit, so every score of a
    /// full-rank fit is unchanged by the choice between them.
    #[test]
    fn full_rank_is_fit_exactly() {
        let a = Matrix::from_fn(30, 5, |i, j| {
            ((i * 7 + j * 3) % 11) as f64 - 5.0 + 0.1 * j as f64
        });
        let b = Matrix::from_fn(30, 3, |i, j| ((3 * i + 5 * j) % 7) as f64 - 3.0);
        let (d, f) = (
            fit_determined(a.as_ref(), b.as_ref()).unwrap(),
            fit(a.as_ref(), b.as_ref()).unwrap(),
        );
        assert_eq!(d.rank, 3);
        assert_eq!(d.q, f.q);
        assert_eq!(d.residual, f.residual);
    }
}

#[cfg(test)]
mod wide_tests {
    use super::*;

    /// Sparse rows wider than the target (TF-IDF terms vs 1,280-d vision rows): many
    /// all-zero columns make A^T B rank-deficient with exact zero rows.
    #[test]
    fn wide_sparse_fit_is_finite() {
        let (n, d, e) = (100, 2048, 1280);
        let a = Matrix::from_fn(n, d, |i, j| {
            if j % 5 == 0 && (i * 31 + j * 7) % 11 == 0 {
                1.0 + (i % 3) as f64
            } else {
                0.0
            }
        });
        let b = Matrix::from_fn(n, e, |i, j| ((i * 13 + j * 17) % 23) as f64 / 23.0 - 0.5);
        let f = fit(a.as_ref(), b.as_ref()).unwrap();
        let bad = (0..d)
            .flat_map(|i| (0..e).map(move |j| (i, j)))
            .filter(|&(i, j)| !f.q[(i, j)].is_finite())
            .count();
        assert_eq!(bad, 0, "non-finite entries in Q");
    }
}
