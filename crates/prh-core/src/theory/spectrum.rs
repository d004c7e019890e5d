//! The spectrum of K and the optimal representation (paper §2): eigenvalues in decreasing
//! order, the trivial pair (1, sqrt(p)), spectral gaps, and F = D^-1/2 U_d.
//!
//! Under whitened second-order anti-collapse the optimal d-dimensional encoder is
//! f*(z) = Q (D^-1/2 U_d)[z, :] for any orthogonal Q; it is unique up to Q exactly when
//! the gap after the d-th eigenvalue is positive. The trivial eigenvector sqrt(p) gives the
//! constant function D^-1/2 sqrt(p) = 1, which carries no information about z, so reports
//! offer both conventions: the top d *with* it and the top d *after* it (`skip_trivial`).

use crate::linalg::{Matrix, sym_eigen};
use crate::theory::kernel::Kernel;
use crate::{Error, Result};
use serde::Serialize;

/// Eigenvalues within this distance of the top one are treated as the eigenvalue-1 space
/// when placing sqrt(p) (the solver's backward error is ~n * 1e-16, far below).
pub(crate) const TRIVIAL_TOL: f64 = 1e-9;

/// Full eigendecomposition of K with the trivial pair identified.
#[derive(Debug, Clone)]
pub struct Spectrum {
    /// Eigenvalues, decreasing: `values[0] >= values[1] >= ...`.
    pub values: Vec<f64>,
    /// Orthonormal eigenvectors as columns `[n, n]`, column j for `values[j]`. Each
    /// non-trivial column is signed so that its largest-magnitude entry is positive.
    pub vectors: Matrix,
    /// p `[n]`, the marginal K was built from.
    pub p: Vec<f64>,
    /// Index of the column equal to sqrt(p) (always 0: it is placed first in the
    /// eigenvalue-1 space, which is the top of a spectrum contained in [-1, 1]).
    pub trivial_index: usize,
}

/// Eigenvalues and gaps in a serialisable form, for reports and the browser.
#[derive(Debug, Clone, Serialize)]
pub struct SpectrumSummary {
    /// Eigenvalues, decreasing.
    pub eigenvalues: Vec<f64>,
    /// Index of the trivial eigenpair.
    pub trivial_index: usize,
    /// lambda_d - lambda_{d+1} (1-based), top d including the trivial pair; None if d >= n.
    pub gap_with_trivial: Option<f64>,
    /// lambda_{d+1} - lambda_{d+2} (1-based), top d after the trivial pair; None if d + 1 >= n.
    pub gap_without_trivial: Option<f64>,
}

impl Spectrum {
    /// Eigendecomposition K = U diag(lambda) U^T (faer, via [`sym_eigen`]), then the
    /// eigenvalue-1 space is re-based so its first vector is exactly sqrt(p): with several
    /// components (several eigenvalues 1) the solver returns an arbitrary basis of that
    /// space, in which no single column is sqrt(p). Fails if sqrt(p) is not in that space
    /// to 1e-6 (K not built from a joint with marginal p).
    ///
    /// # Shapes
    /// kernel `[n, n]` -> values `[n]`, vectors `[n, n]`
    pub fn new(kernel: &Kernel) -> Result<Spectrum> {
        let n = kernel.n();
        let eig = sym_eigen(kernel.k.as_ref())?;
        let (values, mut u) = (eig.values, eig.vectors);
        let s = kernel.sqrt_p();
        let s_norm = s.iter().map(|x| x * x).sum::<f64>().sqrt();
        let s: Vec<f64> = s.iter().map(|x| x / s_norm).collect();
        let t = values
            .iter()
            .take_while(|&&v| v >= values[0] - TRIVIAL_TOL)
            .count();
        // Columns 0..t span the top eigenspace; check sqrt(p) lies in it.
        let coef: Vec<f64> = (0..t)
            .map(|j| (0..n).map(|i| u[(i, j)] * s[i]).sum())
            .collect();
        let captured: f64 = coef.iter().map(|c| c * c).sum::<f64>();
        if (1.0 - captured).abs() > 1e-6 {
            return Err(Error::Numerical(format!(
                "sqrt(p) is not an eigenvector for the top eigenvalue {} (captured {captured}); is Pi a joint with marginal p?",
                values[0]
            )));
        }
        // New basis of the top space whose first vector is sqrt(p): with c = V^T s / |V^T s|
        // (V = the t top columns) and the Householder reflector H = I - 2 v v^T / v^T v,
        // v = c + sign(c_1) e_1, H maps e_1 to -sign(c_1) c, so the first column of V H is
        // ±V c = ±sqrt(p) (up to round-off; set exactly below) and the other t - 1 columns
        // stay an orthonormal basis of the rest of the space. O(n t), so a kernel that is the
        // identity (t = n) costs no more than a matrix-vector product.
        let cn = captured.sqrt();
        let mut v: Vec<f64> = coef.iter().map(|c| c / cn).collect();
        v[0] += if v[0] >= 0.0 { 1.0 } else { -1.0 };
        let vv: f64 = v.iter().map(|x| x * x).sum(); // >= 2: never divides by ~0
        for i in 0..n {
            let uv: f64 = (0..t).map(|j| u[(i, j)] * v[j]).sum();
            for j in 0..t {
                u[(i, j)] -= 2.0 / vv * uv * v[j];
            }
            u[(i, 0)] = s[i];
        }
        sign_columns(&mut u, 1);
        // Identify the trivial column by its overlap with sqrt(p) rather than assuming it.
        let overlap = |j: usize| (0..n).map(|i| u[(i, j)] * s[i]).sum::<f64>().abs();
        let trivial_index = (0..n).fold(0, |b, j| if overlap(j) > overlap(b) { j } else { b });
        Ok(Spectrum {
            values,
            vectors: u,
            p: kernel.p.clone(),
            trivial_index,
        })
    }

    /// Number of states n.
    pub fn n(&self) -> usize {
        self.values.len()
    }

    /// First column of the top-d window: 0, or the column after the trivial pair.
    fn start(&self, skip_trivial: bool) -> usize {
        if skip_trivial {
            self.trivial_index + 1
        } else {
            0
        }
    }

    /// Column range of the top-d window, or an error if fewer than d columns remain.
    pub fn window(&self, d: usize, skip_trivial: bool) -> Result<std::ops::Range<usize>> {
        let s = self.start(skip_trivial);
        if d == 0 || s + d > self.n() {
            return Err(Error::invalid(format!(
                "dimension d = {d} is out of range: {} states{} leave 1..={} eigenvectors",
                self.n(),
                if skip_trivial {
                    " without the trivial pair"
                } else {
                    ""
                },
                self.n() - s
            )));
        }
        Ok(s..s + d)
    }

    /// Spectral gap after the window: lambda_last - lambda_next; None when nothing follows.
    pub fn gap(&self, d: usize, skip_trivial: bool) -> Result<Option<f64>> {
        let w = self.window(d, skip_trivial)?;
        Ok(self
            .values
            .get(w.end)
            .map(|next| self.values[w.end - 1] - next))
    }

    /// U_d: the window's eigenvectors as columns.
    ///
    /// # Shapes
    /// -> `[n, d]`
    pub fn top(&self, d: usize, skip_trivial: bool) -> Result<Matrix> {
        let w = self.window(d, skip_trivial)?;
        Ok(self.vectors.subcols(w.start, d).to_owned())
    }

    /// The optimal representation F = D^-1/2 U_d: row z is the embedding of state z
    /// (whitened under p: sum_z p(z) F_z F_z^T = I_d).
    ///
    /// # Shapes
    /// -> `[n, d]`
    pub fn embedding(&self, d: usize, skip_trivial: bool) -> Result<Matrix> {
        let u = self.top(d, skip_trivial)?;
        Ok(Matrix::from_fn(self.n(), d, |i, j| {
            u[(i, j)] / self.p[i].sqrt()
        }))
    }

    /// Eigenvalues and both gap conventions for `d`.
    pub fn summary(&self, d: usize) -> SpectrumSummary {
        let gap_at = |last: usize| match (self.values.get(last), self.values.get(last + 1)) {
            (Some(a), Some(b)) => Some(a - b),
            _ => None,
        };
        SpectrumSummary {
            eigenvalues: self.values.clone(),
            trivial_index: self.trivial_index,
            gap_with_trivial: if d == 0 { None } else { gap_at(d - 1) },
            gap_without_trivial: gap_at(self.trivial_index + d),
        }
    }
}

/// Signs columns `from..` of `u` so that each one's largest-magnitude entry (the first, on
/// ties) is positive: eigenvectors are defined up to sign, and a fixed convention makes
/// figures and exports reproducible across solvers.
///
/// # Shapes
/// `u [n, m]`
pub(crate) fn sign_columns(u: &mut Matrix, from: usize) {
    for j in from..u.ncols() {
        // Column slices: per-entry indexing with its bounds checks was most of the cost of
        // this pass in the browser.
        let col = u.col_as_slice_mut(j);
        let (imax, _) = col
            .iter()
            .enumerate()
            .fold((0, 0.0f64), |(bi, bv), (i, x)| {
                if x.abs() > bv { (i, x.abs()) } else { (bi, bv) }
            });
        if col.get(imax).is_some_and(|&x| x < 0.0) {
            col.iter_mut().for_each(|x| *x = -*x);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theory::pair_graph::{from_adjacency, random_pi};
    use faer::Mat;

    fn spectrum_of_adjacency(a: &Matrix) -> Spectrum {
        let pi = from_adjacency(a.as_ref()).unwrap();
        Spectrum::new(&Kernel::new(pi.as_ref()).unwrap()).unwrap()
    }

    #[test]
    fn disjoint_cliques_have_eigenvalue_one_k_times_and_trivial_first() {
        // Three cliques K_3, K_4, K_5 (no self-loops): K = blocks (J - I)/(m - 1), so the
        // eigenvalues are 1 (x3) and -1/(m-1) (x m-1 per clique).
        let sizes = [3usize, 4, 5];
        let block: Vec<usize> = sizes
            .iter()
            .enumerate()
            .flat_map(|(b, &m)| std::iter::repeat_n(b, m))
            .collect();
        let n = block.len();
        let a = Mat::from_fn(n, n, |i, j| {
            if i != j && block[i] == block[j] {
                1.0
            } else {
                0.0
            }
        });
        let sp = spectrum_of_adjacency(&a);
        let mut expect = vec![1.0; 3];
        for m in sizes {
            expect.extend(std::iter::repeat_n(-1.0 / (m as f64 - 1.0), m - 1));
        }
        expect.sort_by(|x, y| y.total_cmp(x));
        for (a, b) in sp.values.iter().zip(&expect) {
            assert!((a - b).abs() < 1e-12, "{:?}", sp.values);
        }
        assert_eq!(sp.trivial_index, 0);
        let s: Vec<f64> = sp.p.iter().map(|x| x.sqrt()).collect();
        for (i, si) in s.iter().enumerate() {
            assert!((sp.vectors[(i, 0)] - si).abs() < 1e-12);
        }
        // The re-based eigenvalue-1 space stays orthonormal.
        let u = sp.top(3, false).unwrap();
        assert!((u.transpose() * &u - Mat::<f64>::identity(3, 3)).norm_l2() < 1e-12);
        assert_eq!(
            sp.gap(3, false).unwrap().map(|g| (g - 1.25).abs() < 1e-12),
            Some(true)
        );
        assert_eq!(
            sp.gap(2, true).unwrap().map(|g| (g - 1.25).abs() < 1e-12),
            Some(true)
        );
    }

    #[test]
    fn identity_kernel_keeps_an_orthonormal_basis_with_sqrt_p_first() {
        // Pi = diag(p): K = I, every eigenvalue is 1 and the whole space must be re-based.
        let n = 200;
        let w: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64).collect();
        let total: f64 = w.iter().sum();
        let pi = Mat::from_fn(n, n, |i, j| if i == j { w[i] / total } else { 0.0 });
        let sp = Spectrum::new(&Kernel::new(pi.as_ref()).unwrap()).unwrap();
        assert_eq!(sp.trivial_index, 0);
        assert!((0..n).all(|i| (sp.vectors[(i, 0)] - sp.p[i].sqrt()).abs() < 1e-15));
        let gram = sp.vectors.transpose() * &sp.vectors;
        assert!((gram - Mat::<f64>::identity(n, n)).norm_l2() < 1e-12);
    }

    #[test]
    fn cycle_eigenvalues_are_cosines() {
        let n = 9;
        let a = Mat::from_fn(n, n, |i, j| {
            if (i + 1) % n == j || (j + 1) % n == i {
                1.0
            } else {
                0.0
            }
        });
        let sp = spectrum_of_adjacency(&a);
        let mut expect: Vec<f64> = (0..n)
            .map(|j| (2.0 * std::f64::consts::PI * j as f64 / n as f64).cos())
            .collect();
        expect.sort_by(|x, y| y.total_cmp(x));
        for (a, b) in sp.values.iter().zip(&expect) {
            assert!((a - b).abs() < 1e-12);
        }
    }

    #[test]
    fn complete_graph_has_one_then_minus_one_over_n_minus_one() {
        let n = 6;
        let a = Mat::from_fn(n, n, |i, j| if i != j { 1.0 } else { 0.0 });
        let sp = spectrum_of_adjacency(&a);
        assert!((sp.values[0] - 1.0).abs() < 1e-12);
        assert!(
            sp.values[1..]
                .iter()
                .all(|v| (v + 1.0 / (n as f64 - 1.0)).abs() < 1e-12)
        );
        assert_eq!(
            sp.summary(1)
                .gap_with_trivial
                .map(|g| (g - 1.2).abs() < 1e-12),
            Some(true)
        );
    }

    #[test]
    fn embedding_is_whitened_under_p_and_orthogonal_to_constants() {
        let pi = random_pi(15, 0.5, 11);
        let sp = Spectrum::new(&Kernel::new(pi.as_ref()).unwrap()).unwrap();
        let f = sp.embedding(4, true).unwrap();
        let cov = Mat::from_fn(4, 4, |a, b| {
            (0..15)
                .map(|i| sp.p[i] * f[(i, a)] * f[(i, b)])
                .sum::<f64>()
        });
        assert!((cov - Mat::<f64>::identity(4, 4)).norm_l2() < 1e-12);
        for j in 0..4 {
            assert!((0..15).map(|i| sp.p[i] * f[(i, j)]).sum::<f64>().abs() < 1e-12);
        }
        let with = sp.embedding(1, false).unwrap();
        assert!(
            (0..15).all(|i| (with[(i, 0)] - 1.0).abs() < 1e-12),
            "trivial column gives the constant 1"
        );
        assert!(sp.window(15, true).is_err() && sp.window(0, false).is_err());
    }
}
