//! The positive-pair kernel K = D^-1/2 Pi D^-1/2 (paper §2), D = diag(p), p = row sums of Pi.
//!
//! K is the operator whose top eigenvectors give the optimal representation: for a
//! function f on states, f^T D^1/2 K D^1/2 f = E_(z,z')~Pi [f(z) f(z')] is the invariance
//! term, and sqrt(p) is always an eigenvector with eigenvalue 1 (K sqrt(p) = D^-1/2 Pi 1 =
//! D^-1/2 p = sqrt(p)). Since Pi is a joint with marginals p, K's spectrum lies in [-1, 1].

use crate::linalg::Matrix;
use crate::{Error, Result};
use faer::MatRef;

/// K together with the marginal p it was normalised by.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// K `[n, n]`, exactly symmetric.
    pub k: Matrix,
    /// p `[n]`: row sums of Pi, all > 0.
    pub p: Vec<f64>,
}

impl Kernel {
    /// K_ij = Pi_ij / sqrt(p_i p_j), p_i = sum_j Pi_ij; Pi is read through (Pi + Pi^T) / 2
    /// so K is exactly symmetric even if Pi carries round-off asymmetry. A state with p = 0
    /// is an error naming it (D^-1/2 does not exist; such a state is in no positive pair).
    ///
    /// # Shapes
    /// `pi [n, n]` -> k `[n, n]`, p `[n]`
    pub fn new(pi: MatRef<'_, f64>) -> Result<Kernel> {
        let n = pi.nrows();
        if n == 0 || pi.ncols() != n {
            return Err(Error::invalid(format!(
                "Pi must be a non-empty square matrix, got [{}, {}]",
                n,
                pi.ncols()
            )));
        }
        let p: Vec<f64> = (0..n)
            .map(|i| (0..n).map(|j| 0.5 * (pi[(i, j)] + pi[(j, i)])).sum())
            .collect();
        if let Some(i) = p.iter().position(|&x| !(x > 0.0 && x.is_finite())) {
            return Err(Error::invalid(format!(
                "state {i} has p = {} (row sum of Pi): it is in no positive pair, so D^-1/2 is undefined; drop it or add a pair",
                p[i]
            )));
        }
        let r: Vec<f64> = p.iter().map(|x| 1.0 / x.sqrt()).collect();
        // (a + b) and r_i r_j are commutative in IEEE arithmetic, so K_ij == K_ji bit for bit.
        let k = Matrix::from_fn(n, n, |i, j| 0.5 * (pi[(i, j)] + pi[(j, i)]) * (r[i] * r[j]));
        Ok(Kernel { k, p })
    }

    /// Number of states n.
    pub fn n(&self) -> usize {
        self.p.len()
    }

    /// sqrt(p), the trivial eigenvector (unit norm since sum p = 1 for a normalised Pi).
    ///
    /// # Shapes
    /// -> `[n]`
    pub fn sqrt_p(&self) -> Vec<f64> {
        self.p.iter().map(|x| x.sqrt()).collect()
    }

    /// E = K_other - K_self, the perturbation the sin-theta bounds are stated in.
    ///
    /// # Shapes
    /// `[n, n]`, `[n, n]` -> `[n, n]`
    pub fn difference(&self, other: &Kernel) -> Result<Matrix> {
        if self.n() != other.n() {
            return Err(Error::invalid(format!(
                "kernels of different sizes cannot be compared: {} vs {} states",
                self.n(),
                other.n()
            )));
        }
        Ok(&other.k - &self.k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::sym_eigen;
    use crate::theory::pair_graph::random_pi;

    #[test]
    fn kernel_is_symmetric_with_spectrum_in_unit_interval_and_sqrt_p_fixed() {
        for seed in 0..20 {
            let pi = random_pi(3 + seed as usize, 0.4, seed);
            let ker = Kernel::new(pi.as_ref()).unwrap();
            assert!((&ker.k - ker.k.transpose()).norm_l2() == 0.0);
            let e = sym_eigen(ker.k.as_ref()).unwrap();
            assert!(e.values[0] <= 1.0 + 1e-12 && *e.values.last().unwrap() >= -1.0 - 1e-12);
            assert!((e.values[0] - 1.0).abs() < 1e-12);
            let s = ker.sqrt_p();
            let ks: Vec<f64> = (0..ker.n())
                .map(|i| (0..ker.n()).map(|j| ker.k[(i, j)] * s[j]).sum())
                .collect();
            for (a, b) in ks.iter().zip(&s) {
                assert!((a - b).abs() < 1e-14);
            }
        }
    }

    #[test]
    fn zero_row_is_a_clear_error() {
        let pi = Matrix::from_fn(3, 3, |i, j| if i < 2 && j < 2 { 0.25 } else { 0.0 });
        let msg = Kernel::new(pi.as_ref()).unwrap_err().to_string();
        assert!(msg.contains("state 2") && msg.contains("p = 0"), "{msg}");
    }
}
