//! The spectrum an encoder reaches (paper §2-3), measured from positive pairs alone: which
//! eigen-directions of K a learned representation holds, and with what eigenvalue, with
//! no labels and no second model.
//!
//! Let f be an encoder's features on views and (x, x+) a positive pair. With mu the mean
//! feature, C = Cov(f) and C+ = Cov(f(x), f(x+)) (symmetrised: pairs are exchangeable),
//! the **reached spectrum** is rho_1 >= rho_2 >= ..., the eigenvalues of
//! C^-1/2 C+ C^-1/2: the largest E[g(x) g(x+)] over unit-variance, centred g in span(f),
//! then the next orthogonal to it, and so on (the canonical correlations of f across a
//! positive pair). It is the spectrum of the positive-pair operator (whose non-trivial
//! eigenvalues are K's: the view and state kernels share their non-zero spectrum, see
//! `crate::scene`) restricted to span(f). Hence (Poincaré separation):
//! - rho_i <= lambda_{i+1}(K) for every i (lambda_1 = 1 is the trivial direction that
//!   centring removes), up to sampling error;
//! - rho_i = lambda_{i+1} for i <= j exactly when span(f) holds K's top-j non-trivial
//!   eigenfunctions, so an encoder that reached F reaches K's top d eigenvalues, and a
//!   missing predicted direction shows as a rho below its lambda, at the eigenvalue of
//!   whatever the encoder holds instead (a product of two factors, say).
//! - It is invariant to any invertible linear map of the features (a rotation, a
//!   scaling), as the theorem's identification up to rotation asks.
//!
//! Directions of numerically zero variance (C's eigenvalues below 1e-10 of its largest)
//! are dropped, so a collapsed encoder reports fewer values than its width.

use crate::linalg::{Matrix, sym_eigen};
use crate::{Error, Result};
use faer::MatRef;

/// Relative variance below which a feature direction counts as absent.
const RANK_TOLERANCE: f64 = 1e-10;

/// The reached spectrum of features on `n` positive pairs (row i of `a` and row i of `b`
/// are the two views of pair i), each pair weighted equally. See the module doc.
///
/// # Shapes
/// `a [n, e]`, `b [n, e]` -> at most `e` values, decreasing
pub fn view_spectrum(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Result<Vec<f64>> {
    let n = a.nrows();
    view_spectrum_weighted(a, b, &vec![1.0 / n.max(1) as f64; n])
}

/// [`view_spectrum`] with pair i weighted by `w[i]` (weights summing to 1: a
/// distribution over pairs, e.g. Pi itself over states for an exact check).
///
/// # Shapes
/// `a [n, e]`, `b [n, e]`, `w [n]` -> at most `e` values, decreasing
pub fn view_spectrum_weighted(
    a: MatRef<'_, f64>,
    b: MatRef<'_, f64>,
    w: &[f64],
) -> Result<Vec<f64>> {
    Ok(match pair_operator(a, b, w)? {
        Some(op) => sym_eigen(op.m.as_ref())?.values,
        None => Vec::new(),
    })
}

/// The positive-pair operator of features in whitened coordinates: `m = W^T C+ W` with
/// `W = C^-1/2` on C's range (`[e, r]`, r the directions of non-zero variance) and `mu`
/// the mean feature; `None` when no direction has variance.
struct PairOperator {
    mu: Vec<f64>,
    white: Matrix,
    m: Matrix,
}

fn pair_operator(
    a: MatRef<'_, f64>,
    b: MatRef<'_, f64>,
    w: &[f64],
) -> Result<Option<PairOperator>> {
    let (n, e) = (a.nrows(), a.ncols());
    if b.nrows() != n || b.ncols() != e || w.len() != n {
        return Err(Error::invalid(format!(
            "view spectrum: the two views of each pair need features of one shape and one \
             weight per pair, got [{n}, {e}], [{}, {}] and {} weights",
            b.nrows(),
            b.ncols(),
            w.len()
        )));
    }
    if n < 2 || e == 0 {
        return Err(Error::invalid(format!(
            "view spectrum: needs at least 2 pairs of non-empty features, got {n} pairs of {e}"
        )));
    }
    let finite = (0..n).all(|i| {
        w[i].is_finite()
            && w[i] >= 0.0
            && (0..e).all(|j| a[(i, j)].is_finite() && b[(i, j)].is_finite())
    });
    let total: f64 = w.iter().sum();
    if !finite || total <= 0.0 {
        return Err(Error::invalid(
            "view spectrum: features and weights must be finite, weights non-negative and not all zero",
        ));
    }
    // mu over both views; the pair distribution is symmetric once (a, b) and (b, a) count.
    let mu: Vec<f64> = (0..e)
        .map(|j| (0..n).map(|i| w[i] * (a[(i, j)] + b[(i, j)])).sum::<f64>() / (2.0 * total))
        .collect();
    let sw: Vec<f64> = w.iter().map(|x| (x / total).sqrt()).collect();
    let ac = Matrix::from_fn(n, e, |i, j| sw[i] * (a[(i, j)] - mu[j]));
    let bc = Matrix::from_fn(n, e, |i, j| sw[i] * (b[(i, j)] - mu[j]));
    let (aa, bb, ab) = (
        ac.transpose() * &ac,
        bc.transpose() * &bc,
        ac.transpose() * &bc,
    );
    let c = Matrix::from_fn(e, e, |i, j| 0.5 * (aa[(i, j)] + bb[(i, j)]));
    let cp = Matrix::from_fn(e, e, |i, j| 0.5 * (ab[(i, j)] + ab[(j, i)]));
    operator_from_moments(mu, c, cp, 0.0)
}

/// The whitened pair operator from the moments: `mu [e]`, `c = Cov(f) [e, e]` and
/// `cp = Cov(f(x), f(x+)) [e, e]` (symmetric). `ridge` > 0 whitens with
/// `C + ridge * (tr C / e) * I` instead of C: a shrinkage estimate for features with many
/// rare directions (a bag of words), where C^-1/2 would amplify the noise of terms seen a
/// few times; 0 is the exact operator.
fn operator_from_moments(
    mu: Vec<f64>,
    mut c: Matrix,
    cp: Matrix,
    ridge: f64,
) -> Result<Option<PairOperator>> {
    let e = c.nrows();
    if ridge > 0.0 {
        let shift = ridge * (0..e).map(|i| c[(i, i)]).sum::<f64>() / e as f64;
        for i in 0..e {
            c[(i, i)] += shift;
        }
    }
    // C^-1/2 on C's range: directions of no variance carry no eigen-direction.
    let ev = sym_eigen(c.as_ref())?;
    let top = ev.values[0].max(0.0);
    let keep: Vec<usize> = (0..e)
        .filter(|&k| ev.values[k] > RANK_TOLERANCE * top && top > 0.0)
        .collect();
    if keep.is_empty() {
        return Ok(None);
    }
    let r = keep.len();
    let white = Matrix::from_fn(e, r, |i, c| {
        ev.vectors[(i, keep[c])] / ev.values[keep[c]].sqrt()
    });
    let m = white.transpose() * &cp * &white;
    Ok(Some(PairOperator { mu, white, m }))
}

/// The closed-form minimiser of the spectral loss (`crate::train::spectral_loss`) over
/// affine maps of fixed features: `g(x) = Lambda_d^1/2 U_d^T C^-1/2 (f(x) - mu)`, with
/// `U_d, Lambda_d` the top `d` eigenpairs of `C^-1/2 C+ C^-1/2` (C, C+, mu as in
/// [`view_spectrum`], estimated from the `n` positive pairs; negative eigenvalues clamped
/// to 0). In the features' whitened coordinates the loss of g = A f + c is
/// `||M - G G^T||_F^2 - ||M||_F^2` (M the whitened pair operator), minimised by its top-d
/// eigenvectors scaled by `Lambda^1/2` (Eckart–Young), the scaling the loss gives a free
/// encoder (`F Lambda^1/2 Q`). So g holds the top `d` directions of the reached spectrum:
/// the best any last linear layer on these features can do, with no labels.
///
/// # Shapes
/// `a [n, e]`, `b [n, e]` -> `weight [e, d]`, `bias [d]` (g(x) = f(x) weight + bias),
/// `values [d]`
pub fn spectral_head(a: MatRef<'_, f64>, b: MatRef<'_, f64>, d: usize) -> Result<SpectralHead> {
    let n = a.nrows();
    head_of(
        pair_operator(a, b, &vec![1.0 / n.max(1) as f64; n])?,
        a.ncols(),
        d,
    )
}

/// The top-`d` head of a pair operator over `e` features (see [`spectral_head`]).
fn head_of(op: Option<PairOperator>, e: usize, d: usize) -> Result<SpectralHead> {
    let Some(op) = op else {
        return Err(Error::invalid(
            "spectral head: the features have no variance on these pairs",
        ));
    };
    head_of_operator(op, e, d)
}

fn head_of_operator(op: PairOperator, e: usize, d: usize) -> Result<SpectralHead> {
    let r = op.white.ncols();
    if d == 0 || d > r {
        return Err(Error::invalid(format!(
            "spectral head: d = {d} output directions from features with {r} directions of \
             variance (need 1 <= d <= {r})"
        )));
    }
    let ev = sym_eigen(op.m.as_ref())?;
    let values = ev.values[..d].to_vec();
    let rotate = Matrix::from_fn(r, d, |i, j| ev.vectors[(i, j)] * values[j].max(0.0).sqrt());
    let weight = &op.white * &rotate;
    let bias = (0..d)
        .map(|j| -(0..e).map(|i| op.mu[i] * weight[(i, j)]).sum::<f64>())
        .collect();
    Ok(SpectralHead {
        weight,
        bias,
        values,
    })
}

/// The moments [`spectral_head`] reads, accumulated one positive pair at a time from
/// sparse feature rows, for features too wide or pairs too many to hold as dense `[n, e]`
/// matrices (a bag of words over every caption pair of a corpus). Holds the weighted
/// sums `S = sum_i w_i (a_i + b_i) / 2`, `XX = sum_i w_i (a_i a_i^T + b_i b_i^T) / 2` and
/// `XY = sum_i w_i (a_i b_i^T + b_i a_i^T) / 2`; then `mu = S / W`, `C = XX / W - mu mu^T`,
/// `C+ = XY / W - mu mu^T` (W = sum_i w_i): the same mu, C and C+ as the dense path.
///
/// # Shapes
/// rows: `(column, value)` lists over `e` columns; `XX, XY [e, e]` (memory 16 e^2 bytes)
#[derive(Debug, Clone)]
pub struct PairMoments {
    total: f64,
    sum: Vec<f64>,
    xx: Matrix,
    xy: Matrix,
}

impl PairMoments {
    /// Empty moments over `e` feature columns.
    pub fn new(e: usize) -> Self {
        Self {
            total: 0.0,
            sum: vec![0.0; e],
            xx: Matrix::zeros(e, e),
            xy: Matrix::zeros(e, e),
        }
    }

    /// Feature columns.
    pub fn width(&self) -> usize {
        self.sum.len()
    }

    /// Pairs' total weight so far.
    pub fn total(&self) -> f64 {
        self.total
    }

    /// Adds the positive pair (`a`, `b`) with weight `w` (both orders: pairs are
    /// exchangeable). Cost O(nnz(a)^2 + nnz(b)^2 + nnz(a) nnz(b)).
    pub fn add_sparse(&mut self, a: &[(usize, f64)], b: &[(usize, f64)], w: f64) -> Result<()> {
        let e = self.width();
        let ok = |r: &[(usize, f64)]| r.iter().all(|&(c, v)| c < e && v.is_finite());
        if !(w.is_finite() && w >= 0.0 && ok(a) && ok(b)) {
            return Err(Error::invalid(format!(
                "pair moments: a pair needs finite values in columns below {e} and a finite \
                 non-negative weight (got weight {w})"
            )));
        }
        self.total += w;
        let h = 0.5 * w;
        for row in [a, b] {
            for &(i, x) in row {
                self.sum[i] += h * x;
                for &(j, y) in row {
                    self.xx[(i, j)] += h * x * y;
                }
            }
        }
        for &(i, x) in a {
            for &(j, y) in b {
                self.xy[(i, j)] += h * x * y;
                self.xy[(j, i)] += h * x * y;
            }
        }
        Ok(())
    }

    /// [`spectral_head`] from these moments, whitening with `ridge` shrinkage (0: exact;
    /// see [`PairMoments`] and the ridge of `operator_from_moments`).
    ///
    /// # Shapes
    /// -> `weight [e, d]`, `bias [d]`, `values [d]`
    pub fn spectral_head(&self, d: usize, ridge: f64) -> Result<SpectralHead> {
        self.head(d, ridge, false)
    }

    /// [`PairMoments::spectral_head`] with at most `d` outputs: fewer when the features
    /// have fewer than `d` columns of non-zero variance (a small corpus with a short
    /// vocabulary), instead of an error. The head's width says how many it kept.
    pub fn spectral_head_at_most(&self, d: usize, ridge: f64) -> Result<SpectralHead> {
        self.head(d, ridge, true)
    }

    fn head(&self, d: usize, ridge: f64, at_most: bool) -> Result<SpectralHead> {
        let e = self.width();
        if self.total <= 0.0 || e == 0 {
            return Err(Error::invalid(
                "pair moments: no pairs with positive weight were added",
            ));
        }
        if !(ridge.is_finite() && ridge >= 0.0) {
            return Err(Error::invalid(format!(
                "pair moments: ridge must be finite and >= 0, got {ridge}"
            )));
        }
        let w = self.total;
        let mu: Vec<f64> = self.sum.iter().map(|s| s / w).collect();
        let c = Matrix::from_fn(e, e, |i, j| self.xx[(i, j)] / w - mu[i] * mu[j]);
        let cp = Matrix::from_fn(e, e, |i, j| self.xy[(i, j)] / w - mu[i] * mu[j]);
        let op = operator_from_moments(mu, c, cp, ridge)?.ok_or_else(|| {
            Error::invalid("spectral head: the features have no variance on these pairs")
        })?;
        // With no ridge, only the directions of non-zero variance count; with one, the
        // ridge gives every direction variance, so count those the data has.
        let r = if ridge > 0.0 {
            (0..e)
                .filter(|&i| self.xx[(i, i)] / w - op.mu[i] * op.mu[i] > 0.0)
                .count()
        } else {
            op.white.ncols()
        };
        let d = if at_most { d.min(r.max(1)) } else { d };
        head_of_operator(op, e, d)
    }
}

/// What [`spectral_head`] returns.
#[derive(Debug, Clone)]
pub struct SpectralHead {
    /// `[e, d]`: g(x) = f(x) weight + bias.
    pub weight: Matrix,
    /// `[d]`.
    pub bias: Vec<f64>,
    /// The top d reached eigenvalues the head holds, decreasing.
    pub values: Vec<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::sym_eigenvalues;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A random symmetric joint distribution Pi over `n` states with a positive diagonal.
    fn random_pi(n: usize, seed: u64) -> Matrix {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut p = Matrix::from_fn(n, n, |_, _| rng.random::<f64>().powi(3));
        for i in 0..n {
            p[(i, i)] += 1.0;
        }
        let sym = Matrix::from_fn(n, n, |i, j| p[(i, j)] + p[(j, i)]);
        let s: f64 = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .map(|(i, j)| sym[(i, j)])
            .sum();
        Matrix::from_fn(n, n, |i, j| sym[(i, j)] / s)
    }

    /// K = D^-1/2 Pi D^-1/2's eigenvalues, decreasing.
    fn k_eigenvalues(pi: &Matrix) -> Vec<f64> {
        let n = pi.nrows();
        let p: Vec<f64> = (0..n).map(|i| (0..n).map(|j| pi[(i, j)]).sum()).collect();
        let k = Matrix::from_fn(n, n, |i, j| pi[(i, j)] / (p[i] * p[j]).sqrt());
        sym_eigenvalues(k.as_ref()).unwrap()
    }

    /// Every (state, state) pair weighted by Pi, features given per state.
    fn all_pairs(pi: &Matrix, feat: &Matrix) -> (Matrix, Matrix, Vec<f64>) {
        let (n, e) = (pi.nrows(), feat.ncols());
        let a = Matrix::from_fn(n * n, e, |r, c| feat[(r / n, c)]);
        let b = Matrix::from_fn(n * n, e, |r, c| feat[(r % n, c)]);
        let w = (0..n * n).map(|r| pi[(r / n, r % n)]).collect();
        (a, b, w)
    }

    /// Closed form: one-hot features span every function of the state, so the reached
    /// spectrum is K's whole non-trivial spectrum (to 1e-10).
    #[test]
    fn one_hot_features_reach_ks_spectrum_exactly() {
        let n = 7;
        let pi = random_pi(n, 3);
        let (a, b, w) = all_pairs(&pi, &Matrix::identity(n, n));
        let rho = view_spectrum_weighted(a.as_ref(), b.as_ref(), &w).unwrap();
        let lambda = k_eigenvalues(&pi);
        assert!((lambda[0] - 1.0).abs() < 1e-10);
        assert_eq!(rho.len(), n - 1, "centring removes the trivial direction");
        for (r, l) in rho.iter().zip(&lambda[1..]) {
            assert!((r - l).abs() < 1e-10, "{rho:?} vs {lambda:?}");
        }
    }

    /// Poincaré separation on a random 3-dimensional feature map: rho_i <= lambda_{i+1};
    /// and invariance to an invertible linear map of the features.
    #[test]
    fn restricted_spectrum_interlaces_and_ignores_reparametrisation() {
        let n = 9;
        let pi = random_pi(n, 5);
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let feat = Matrix::from_fn(n, 3, |_, _| rng.random::<f64>() - 0.5);
        let (a, b, w) = all_pairs(&pi, &feat);
        let rho = view_spectrum_weighted(a.as_ref(), b.as_ref(), &w).unwrap();
        let lambda = k_eigenvalues(&pi);
        assert_eq!(rho.len(), 3);
        for i in 0..3 {
            assert!(rho[i] <= lambda[i + 1] + 1e-12, "{rho:?} vs {lambda:?}");
        }
        let m = Matrix::from_fn(3, 3, |i, j| {
            if i == j {
                2.0
            } else {
                0.3 * (i + 2 * j) as f64
            }
        });
        let (am, bm) = (&a * &m, &b * &m);
        let rho2 = view_spectrum_weighted(am.as_ref(), bm.as_ref(), &w).unwrap();
        for (x, y) in rho.iter().zip(&rho2) {
            assert!((x - y).abs() < 1e-9);
        }
    }

    /// Sampled pairs estimate the weighted spectrum (to sampling error), and a feature map
    /// with a constant and a duplicated column drops them instead of dividing by zero.
    #[test]
    fn sampled_pairs_converge_and_dead_directions_are_dropped() {
        let n = 5;
        let pi = random_pi(n, 1);
        let cells: Vec<(usize, usize, f64)> = (0..n * n)
            .map(|r| (r / n, r % n, pi[(r / n, r % n)]))
            .collect();
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let m = 40_000;
        let mut pairs = Vec::with_capacity(m);
        for _ in 0..m {
            let u: f64 = rng.random();
            let mut acc = 0.0;
            let mut pick = cells[cells.len() - 1];
            for &c in &cells {
                acc += c.2;
                if u < acc {
                    pick = c;
                    break;
                }
            }
            pairs.push((pick.0, pick.1));
        }
        // One-hot, plus a constant column and a copy of column 0.
        let feat = |s: usize, c: usize| match c {
            5 => 1.0,
            6 => f64::from(u8::from(s == 0)),
            _ => f64::from(u8::from(s == c)),
        };
        let a = Matrix::from_fn(m, 7, |i, c| feat(pairs[i].0, c));
        let b = Matrix::from_fn(m, 7, |i, c| feat(pairs[i].1, c));
        let rho = view_spectrum(a.as_ref(), b.as_ref()).unwrap();
        let lambda = k_eigenvalues(&pi);
        assert_eq!(rho.len(), n - 1);
        for (r, l) in rho.iter().zip(&lambda[1..]) {
            assert!((r - l).abs() < 0.03, "{rho:?} vs {lambda:?}");
        }
    }

    #[test]
    fn bad_shapes_and_values_are_refused() {
        let a = Matrix::zeros(4, 2);
        let b = Matrix::zeros(3, 2);
        assert!(view_spectrum(a.as_ref(), b.as_ref()).is_err());
        let mut c = Matrix::zeros(4, 2);
        c[(1, 1)] = f64::NAN;
        assert!(
            view_spectrum(a.as_ref(), c.as_ref())
                .unwrap_err()
                .to_string()
                .contains("finite")
        );
        assert_eq!(
            view_spectrum(a.as_ref(), a.as_ref()).unwrap(),
            Vec::<f64>::new()
        );
    }

    /// Closed form: features holding three planted signals whose copies across a pair
    /// correlate 0.9, 0.5 and 0 (plus a mixing map). The head to d = 2 keeps the first
    /// two with their correlations as eigenvalues, its output has covariance
    /// diag(0.9, 0.5) (the loss's Lambda^1/2 scaling) and mean 0, and a d above the
    /// features' rank is refused.
    #[test]
    fn spectral_head_keeps_the_top_pair_directions_scaled_by_lambda() {
        let n = 40_000;
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut normal = || -> f64 {
            let (u, v): (f64, f64) = (rng.random::<f64>().max(1e-300), rng.random());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        };
        let rho: [f64; 3] = [0.9, 0.5, 0.0];
        let mix = Matrix::from_fn(3, 3, |i, j| {
            if i == j {
                1.5
            } else {
                0.4 * (i + j) as f64 - 0.5
            }
        });
        let (mut a, mut b) = (Matrix::zeros(n, 3), Matrix::zeros(n, 3));
        for i in 0..n {
            for (k, r) in rho.iter().enumerate() {
                let shared = normal();
                let (x, y) = (normal(), normal());
                a[(i, k)] = r.sqrt() * shared + (1.0 - r).sqrt() * x;
                b[(i, k)] = r.sqrt() * shared + (1.0 - r).sqrt() * y;
            }
        }
        let (fa, fb) = (&a * &mix, &b * &mix);
        let (fa, fb) = (
            Matrix::from_fn(n, 3, |i, j| fa[(i, j)] + 3.0),
            Matrix::from_fn(n, 3, |i, j| fb[(i, j)] + 3.0),
        );
        let head = spectral_head(fa.as_ref(), fb.as_ref(), 2).unwrap();
        assert!((head.values[0] - 0.9).abs() < 0.02 && (head.values[1] - 0.5).abs() < 0.02);
        let g = Matrix::from_fn(n, 2, |i, j| {
            head.bias[j]
                + (0..3)
                    .map(|k| fa[(i, k)] * head.weight[(k, j)])
                    .sum::<f64>()
        });
        let mean: Vec<f64> = (0..2)
            .map(|j| (0..n).map(|i| g[(i, j)]).sum::<f64>() / n as f64)
            .collect();
        let cov =
            |p: usize, q: usize| (0..n).map(|i| g[(i, p)] * g[(i, q)]).sum::<f64>() / n as f64;
        assert!(mean.iter().all(|m| m.abs() < 0.02), "{mean:?}");
        assert!((cov(0, 0) - 0.9).abs() < 0.03 && (cov(1, 1) - 0.5).abs() < 0.03);
        assert!(cov(0, 1).abs() < 0.03);
        // The head reads the planted signals only: g is a function of columns 0 and 1 of
        // the unmixed features (regress it on the unmixed third signal: ~0).
        let third: f64 = (0..n).map(|i| g[(i, 0)] * a[(i, 2)]).sum::<f64>() / n as f64;
        assert!(third.abs() < 0.03, "{third}");
        let err = spectral_head(fa.as_ref(), fb.as_ref(), 4)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("d = 4") && err.contains("need 1 <= d <= 3"),
            "{err}"
        );
    }

    /// The sparse accumulation is the dense path's estimate: on 300 random sparse pairs
    /// with 6 columns (some never used), the head from [`PairMoments`] equals
    /// [`spectral_head`]'s to 1e-9 (its weights up to each column's sign); a ridge only
    /// shrinks the reached values; bad rows and an empty accumulator are refused.
    #[test]
    fn sparse_moments_give_the_dense_head() {
        let (n, e) = (300, 6);
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let mut row = |shared: &[(usize, f64)]| {
            let mut r: Vec<(usize, f64)> = shared.to_vec();
            r.push((rng.random_range(0..4), rng.random::<f64>()));
            r
        };
        let (mut a, mut b) = (Matrix::zeros(n, e), Matrix::zeros(n, e));
        let mut moments = PairMoments::new(e);
        for i in 0..n {
            let s = [(i % 3, 1.0), (3 + i % 2, 0.5)];
            let (ra, rb) = (row(&s), row(&s));
            for &(c, v) in &ra {
                a[(i, c)] += v;
            }
            for &(c, v) in &rb {
                b[(i, c)] += v;
            }
            moments.add_sparse(&ra, &rb, 1.0).unwrap();
        }
        let dense = spectral_head(a.as_ref(), b.as_ref(), 3).unwrap();
        let sparse = moments.spectral_head(3, 0.0).unwrap();
        for j in 0..3 {
            assert!((dense.values[j] - sparse.values[j]).abs() < 1e-9);
            let sign = (0..e)
                .map(|i| dense.weight[(i, j)] * sparse.weight[(i, j)])
                .sum::<f64>()
                .signum();
            for i in 0..e {
                assert!((dense.weight[(i, j)] - sign * sparse.weight[(i, j)]).abs() < 1e-9);
            }
            assert!((dense.bias[j] - sign * sparse.bias[j]).abs() < 1e-9);
        }
        // 6 columns, 5 with variance (column 5 is never used): at most 5 outputs.
        assert!(moments.spectral_head(6, 0.0).is_err());
        assert_eq!(moments.spectral_head_at_most(9, 0.0).unwrap().bias.len(), 5);
        assert_eq!(moments.spectral_head_at_most(9, 0.1).unwrap().bias.len(), 5);
        let shrunk = moments.spectral_head(3, 0.5).unwrap();
        assert!(shrunk.values[0] < sparse.values[0]);
        let err = moments.add_sparse(&[(6, 1.0)], &[], 1.0).unwrap_err();
        assert!(err.to_string().contains("columns below 6"), "{err}");
        assert!(PairMoments::new(3).spectral_head(1, 0.0).is_err());
        assert!(moments.spectral_head(1, f64::NAN).is_err());
    }
}
