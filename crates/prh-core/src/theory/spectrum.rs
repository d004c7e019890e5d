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
use crate::theory::top_eigen::{TopEigenParams, sym_eigen_top};
use crate::{Error, Result};
use serde::Serialize;

/// How [`Spectrum::compute`] finds K's eigenpairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Solver {
    /// Every eigenpair: faer's dense divide-and-conquer decomposition, ~9 n^3 flops.
    Full,
    /// Only the top `count` eigenpairs: block Lanczos ([`sym_eigen_top`]), ~2 n^2 flops per
    /// product A x and a few hundred products when the top is separated from the rest
    /// (measured 4x faster than [`Solver::Full`] at n = 1,000-2,000 for the top 3). The block
    /// size is raised to `count`, so an eigenvalue repeated up to `count` times is found in
    /// full (module docs of [`crate::theory::top_eigen`]).
    Top(usize),
    /// [`Solver::Top`] within a budget of n products A x (at 2 n^2 flops each, matrix-vector
    /// speed, about what the ~9 n^3 of the full decomposition cost at matmul speed), and
    /// [`Solver::Full`] when it fails: when the top eigenvalues crowd together (Lanczos then
    /// needs many products) or the top eigenvalue's space is larger than the count.
    /// [`Spectrum::is_complete`] tells which ran. Worst case about twice the full
    /// decomposition's time, instead of ~10x (a ring's kernel at n = 2,000).
    Auto(usize),
}

/// Eigenvalues within this distance of the top one are treated as the eigenvalue-1 space
/// when placing sqrt(p) (the solver's backward error is ~n * 1e-16, far below).
pub(crate) const TRIVIAL_TOL: f64 = 1e-9;

/// Eigendecomposition of K with the trivial pair identified: every eigenpair
/// ([`Spectrum::new`]) or the top m of them ([`Spectrum::compute`] with [`Solver::Top`]);
/// [`Spectrum::is_complete`] tells which.
#[derive(Debug, Clone)]
pub struct Spectrum {
    /// Eigenvalues, decreasing: `values[0] >= values[1] >= ...` (the top m of K's n when
    /// the spectrum is partial).
    pub values: Vec<f64>,
    /// Orthonormal eigenvectors as columns `[n, m]` (m = n when complete), column j for
    /// `values[j]`. Each non-trivial column is signed so that its largest-magnitude entry
    /// is positive.
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
    /// Eigenvalues, decreasing (the computed top m for a partial spectrum).
    pub eigenvalues: Vec<f64>,
    /// Index of the trivial eigenpair.
    pub trivial_index: usize,
    /// lambda_d - lambda_{d+1} (1-based), top d including the trivial pair; None if d >= n
    /// (or, for a partial spectrum, if lambda_{d+1} was not computed: ask for d + 2 pairs to
    /// have both gaps).
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
        Spectrum::compute(kernel, Solver::Full)
    }

    /// [`Spectrum::new`] with a choice of solver. With [`Solver::Top`]`(m)` only the top m
    /// eigenpairs are found (m is capped at n); the trivial pair is placed the same way,
    /// which needs the eigenvalue-1 space to fit inside the m found: if all m values are
    /// ~1 the space may be larger and this fails, asking for more pairs or the full solver.
    /// Eigenvalues then agree with the full decomposition to ~1e-10 * max |lambda| (the
    /// Lanczos residual tolerance), eigenvectors to that over the gap to the rest.
    ///
    /// # Shapes
    /// kernel `[n, n]` -> values `[m]`, vectors `[n, m]` (m = n for [`Solver::Full`])
    pub fn compute(kernel: &Kernel, solver: Solver) -> Result<Spectrum> {
        let n = kernel.n();
        let (values, u) = match solver {
            Solver::Auto(m) if m < n => {
                return Spectrum::top_within(kernel, m, n)
                    .or_else(|_| Spectrum::compute(kernel, Solver::Full));
            }
            Solver::Top(m) if m < n => return Spectrum::top_within(kernel, m, 0),
            _ => {
                let eig = sym_eigen(kernel.k.as_ref())?;
                (eig.values, eig.vectors)
            }
        };
        Spectrum::placed(kernel, values, u)
    }

    /// The top `m` < n pairs by block Lanczos, within `max_products` products (0: no
    /// limit), the trivial pair placed.
    fn top_within(kernel: &Kernel, m: usize, max_products: usize) -> Result<Spectrum> {
        let params = TopEigenParams {
            block: TopEigenParams::default().block.max(m),
            max_products,
            ..TopEigenParams::default()
        };
        let top = sym_eigen_top(kernel.k.as_ref(), m, params)?;
        Spectrum::placed(kernel, top.values, top.vectors)
    }

    /// Eigenpairs of K (decreasing `values`, vectors `[n, m]`) with the eigenvalue-1 space
    /// re-based so its first vector is sqrt(p), and the other columns signed.
    fn placed(kernel: &Kernel, values: Vec<f64>, mut u: Matrix) -> Result<Spectrum> {
        let n = kernel.n();
        let m = values.len();
        let s = kernel.sqrt_p();
        let s_norm = s.iter().map(|x| x * x).sum::<f64>().sqrt();
        let s: Vec<f64> = s.iter().map(|x| x / s_norm).collect();
        let t = values
            .iter()
            .take_while(|&&v| v >= values[0] - TRIVIAL_TOL)
            .count();
        if t == m && m < n {
            return Err(Error::Numerical(format!(
                "all {m} eigenvalues found are the top one ({}): its eigenspace may be larger than {m}, so sqrt(p) cannot be placed; ask for more eigenpairs or use the full solver",
                values[0]
            )));
        }
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
        let trivial_index = (0..m).fold(0, |b, j| if overlap(j) > overlap(b) { j } else { b });
        Ok(Spectrum {
            values,
            vectors: u,
            p: kernel.p.clone(),
            trivial_index,
        })
    }

    /// Number of states n (the size of K, whether or not every eigenpair was found).
    pub fn n(&self) -> usize {
        self.p.len()
    }

    /// Number m of eigenpairs found: n when complete.
    pub fn computed(&self) -> usize {
        self.values.len()
    }

    /// Whether every eigenpair of K was found.
    pub fn is_complete(&self) -> bool {
        self.computed() == self.n()
    }

    /// The eigenpairs a window ending at column `end` needs: `end` of them, and one more
    /// for the gap after it unless the window reaches n. The count to give
    /// [`Solver::Top`] for d columns is `needed(d + skip_trivial as usize, n)`.
    pub fn needed(end: usize, n: usize) -> usize {
        (end + 1).min(n)
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
        if !self.is_complete() && s + d >= self.computed() {
            // A partial spectrum must also hold the value after the window (its gap).
            return Err(Error::invalid(format!(
                "dimension d = {d} needs {} eigenpairs{}, but only the top {} of {} were computed; compute more or use the full solver",
                Spectrum::needed(s + d, self.n()),
                if skip_trivial {
                    " counting the trivial pair"
                } else {
                    ""
                },
                self.computed(),
                self.n()
            )));
        }
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

    /// Adjacency of disjoint cliques of the given sizes (no self-loops).
    fn cliques(sizes: &[usize]) -> Matrix {
        let block: Vec<usize> = sizes
            .iter()
            .enumerate()
            .flat_map(|(b, &m)| std::iter::repeat_n(b, m))
            .collect();
        let n = block.len();
        Mat::from_fn(n, n, |i, j| {
            if i != j && block[i] == block[j] {
                1.0
            } else {
                0.0
            }
        })
    }

    /// Adjacency of the n-cycle.
    fn cycle(n: usize) -> Matrix {
        Mat::from_fn(n, n, |i, j| {
            if (i + 1) % n == j || (j + 1) % n == i {
                1.0
            } else {
                0.0
            }
        })
    }

    fn spectrum_of_adjacency(a: &Matrix) -> Spectrum {
        let pi = from_adjacency(a.as_ref()).unwrap();
        Spectrum::new(&Kernel::new(pi.as_ref()).unwrap()).unwrap()
    }

    #[test]
    fn disjoint_cliques_have_eigenvalue_one_k_times_and_trivial_first() {
        // Three cliques K_3, K_4, K_5 (no self-loops): K = blocks (J - I)/(m - 1), so the
        // eigenvalues are 1 (x3) and -1/(m-1) (x m-1 per clique).
        let sizes = [3usize, 4, 5];
        let sp = spectrum_of_adjacency(&cliques(&sizes));
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

    /// The top-m solver against the full decomposition on a random kernel (n = 300):
    /// eigenvalues to 1e-9 (the Lanczos residual tolerance 1e-10 times max |lambda| = 1
    /// bounds each error by the residual, Parlett Thm 11.7.1), the window's subspace to a
    /// sin-theta of 1e-6 (residual over the gap), the trivial pair placed the same way, and
    /// the same signed embedding F.
    #[test]
    fn top_solver_matches_the_full_decomposition() {
        let pi = random_pi(300, 0.05, 7);
        let k = Kernel::new(pi.as_ref()).unwrap();
        let full = Spectrum::compute(&k, Solver::Full).unwrap();
        let (d, m) = (4, Spectrum::needed(4 + 1, 300));
        assert_eq!(m, 6);
        let top = Spectrum::compute(&k, Solver::Top(m)).unwrap();
        assert!(full.is_complete() && !top.is_complete());
        assert_eq!((top.n(), top.computed(), top.vectors.ncols()), (300, 6, 6));
        for (a, b) in top.values.iter().zip(&full.values) {
            assert!((a - b).abs() < 1e-9, "{a} vs {b}");
        }
        assert_eq!(top.trivial_index, 0);
        assert!((0..300).all(|i| (top.vectors[(i, 0)] - top.p[i].sqrt()).abs() < 1e-12));
        for skip in [false, true] {
            let (gt, gf) = (top.gap(d, skip).unwrap(), full.gap(d, skip).unwrap());
            assert!((gt.unwrap() - gf.unwrap()).abs() < 1e-9);
            let (ut, uf) = (top.top(d, skip).unwrap(), full.top(d, skip).unwrap());
            let resid = &ut - &uf * (uf.transpose() * &ut);
            assert!(resid.norm_l2() < 1e-6, "sin-theta {}", resid.norm_l2());
            let (ft, ff) = (
                top.embedding(d, skip).unwrap(),
                full.embedding(d, skip).unwrap(),
            );
            assert!((ft - ff).norm_max() < 1e-5);
        }
        let (st, sf) = (top.summary(d), full.summary(d));
        assert_eq!(st.eigenvalues.len(), 6);
        assert!((st.gap_without_trivial.unwrap() - sf.gap_without_trivial.unwrap()).abs() < 1e-9);
        // A window that needs values beyond those found is refused, not answered wrongly.
        let e = top.window(5, true).unwrap_err().to_string();
        assert!(e.contains("only the top 6 of 300"), "{e}");
        assert!(top.window(5, false).is_ok() && top.window(6, false).is_err());
        // Asking for every pair is the full decomposition.
        let all = Spectrum::compute(&k, Solver::Top(500)).unwrap();
        assert!(all.is_complete());
    }

    /// `Solver::Auto`: Lanczos where the top is separated (four cliques: partial), the
    /// full decomposition where the top eigenvalues crowd together (a 600-cycle: cosines
    /// 1, 0.99995, 0.99995, ... need more than n products) or the top eigenspace does
    /// not fit; the values are right either way.
    #[test]
    fn auto_solver_falls_back_to_the_full_decomposition() {
        // Four cliques: eigenvalue 1 four times, then nothing above 0 (a wide gap).
        let k = Kernel::new(
            from_adjacency(cliques(&[40, 60, 80, 100]).as_ref())
                .unwrap()
                .as_ref(),
        )
        .unwrap();
        let auto = Spectrum::compute(&k, Solver::Auto(6)).unwrap();
        assert!(!auto.is_complete() && auto.computed() == 6);
        let full = Spectrum::compute(&k, Solver::Full).unwrap();
        for (a, b) in auto.values.iter().zip(&full.values) {
            assert!((a - b).abs() < 1e-9);
        }
        let k = Kernel::new(from_adjacency(cycle(600).as_ref()).unwrap().as_ref()).unwrap();
        let full = Spectrum::compute(&k, Solver::Full).unwrap();
        let auto = Spectrum::compute(&k, Solver::Auto(5)).unwrap();
        assert!(auto.is_complete(), "the cycle's crowded top fell back");
        assert_eq!(auto.values, full.values);
        let e = Spectrum::compute(&k, Solver::Top(5));
        // Unbudgeted Lanczos still converges (slowly) to the same values.
        for (a, b) in e.unwrap().values.iter().zip(&full.values) {
            assert!((a - b).abs() < 1e-9);
        }
        let cliques = Kernel::new(
            from_adjacency(cliques(&[5, 8, 11]).as_ref())
                .unwrap()
                .as_ref(),
        )
        .unwrap();
        assert!(
            Spectrum::compute(&cliques, Solver::Auto(2))
                .unwrap()
                .is_complete()
        );
    }

    /// Three disjoint cliques: eigenvalue 1 three times. Five pairs find all three copies
    /// (the block grows to the count) and place sqrt(p) first; two pairs cannot hold the
    /// eigenvalue-1 space and fail with a message instead of a wrong trivial pair.
    #[test]
    fn top_solver_finds_a_repeated_top_eigenvalue_or_refuses() {
        let (a, n) = (cliques(&[5, 8, 11]), 24);
        let k = Kernel::new(from_adjacency(a.as_ref()).unwrap().as_ref()).unwrap();
        let top = Spectrum::compute(&k, Solver::Top(5)).unwrap();
        assert!(
            top.values[..3].iter().all(|v| (v - 1.0).abs() < 1e-9),
            "{:?}",
            top.values
        );
        assert!(top.values[3] < 0.0);
        assert!((0..n).all(|i| (top.vectors[(i, 0)] - top.p[i].sqrt()).abs() < 1e-12));
        let e = Spectrum::compute(&k, Solver::Top(2))
            .unwrap_err()
            .to_string();
        assert!(e.contains("eigenspace may be larger"), "{e}");
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
        let sp = spectrum_of_adjacency(&cycle(n));
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
