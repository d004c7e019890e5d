//! Linear assignment (the Hungarian algorithm): the projection of a soft correspondence
//! onto permutations, and the Frank–Wolfe direction of FAQ in [`crate::measure::matching`]
//! (paper §5, pair-free matching).

use crate::{Error, Result};
use faer::MatRef;

/// Linear assignment σ = argmax_σ Σ_i S[i, σ(i)] by the Hungarian algorithm with
/// shortest augmenting paths and potentials (Kuhn–Munkres, Jonker–Volgenant style),
/// O(n^3). Hand-written: none of the workspace's crates provides it.
///
/// # Shapes
/// `score [n, n]` -> `perm [n]`
pub fn linear_assignment(score: MatRef<'_, f64>) -> Result<Vec<usize>> {
    let n = score.nrows();
    if score.ncols() != n {
        return Err(Error::invalid(format!(
            "assignment needs a square matrix, got [{n}, {}]",
            score.ncols()
        )));
    }
    if (0..n).any(|i| (0..n).any(|j| !score[(i, j)].is_finite())) {
        return Err(Error::Numerical(
            "assignment scores contain NaN or Inf".into(),
        ));
    }
    // Minimise cost = -score; arrays are 1-based with index 0 as the virtual start.
    let cost = |i: usize, j: usize| -score[(i - 1, j - 1)];
    let (mut u, mut v) = (vec![0.0; n + 1], vec![0.0; n + 1]);
    let (mut p, mut way) = (vec![0usize; n + 1], vec![0usize; n + 1]);
    for i in 1..=n {
        p[0] = i;
        let mut j0 = 0;
        let mut minv = vec![f64::INFINITY; n + 1];
        let mut used = vec![false; n + 1];
        loop {
            used[j0] = true;
            let (i0, mut delta, mut j1) = (p[j0], f64::INFINITY, 0);
            for j in 1..=n {
                if !used[j] {
                    let cur = cost(i0, j) - u[i0] - v[j];
                    if cur < minv[j] {
                        minv[j] = cur;
                        way[j] = j0;
                    }
                    if minv[j] < delta {
                        delta = minv[j];
                        j1 = j;
                    }
                }
            }
            for j in 0..=n {
                if used[j] {
                    u[p[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            j0 = j1;
            if p[j0] == 0 {
                break;
            }
        }
        loop {
            let j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
    let mut perm = vec![0; n];
    for j in 1..=n {
        perm[p[j] - 1] = j - 1;
    }
    Ok(perm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::Matrix;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn assignment_matches_brute_force() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for n in 1..=6 {
            let s = Matrix::from_fn(n, n, |_, _| rng.random::<f64>());
            let got = linear_assignment(s.as_ref()).unwrap();
            let value = |p: &[usize]| p.iter().enumerate().map(|(i, &j)| s[(i, j)]).sum::<f64>();
            let mut best = f64::NEG_INFINITY;
            let mut idx: Vec<usize> = (0..n).collect();
            permute_all(&mut idx, 0, &mut |p| best = best.max(value(p)));
            assert!((value(&got) - best).abs() < 1e-12, "n = {n}");
        }
    }

    fn permute_all(v: &mut Vec<usize>, k: usize, f: &mut dyn FnMut(&[usize])) {
        if k == v.len() {
            return f(v);
        }
        for i in k..v.len() {
            v.swap(k, i);
            permute_all(v, k + 1, f);
            v.swap(k, i);
        }
    }
}
