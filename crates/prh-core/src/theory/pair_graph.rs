//! Positive-pair graphs (paper §2-3): the joint Pi of the two observations of a positive
//! pair, for good views, bad views, next-token-like views and their mixture, and the checks
//! a user-supplied Pi must pass.
//!
//! Observations of modality m are x = (z, u) (state, nuisance), indexed x = z |U| + u.
//! Every view kind is a Kronecker product Pi = A ⊗ B with A over states, B over nuisances:
//!
//! | views | A(z, z') | B(u, u') | what the pair shares |
//! |---|---|---|---|
//! | good | W | q q^T | the state only (independent renderings) |
//! | bad | W | diag(q) | the state and the rendering's nuisance |
//! | next-token | (1 - tau) W + tau p p^T | diag(q) | the nuisance; the state only with prob. 1 - tau |
//! | mix alpha | W | (1 - alpha) q q^T + alpha diag(q) | a fraction alpha of bad pairs |
//!
//! All have the same marginal p(z) q(u), so K = D^-1/2 Pi D^-1/2 factorises as
//! K_A ⊗ K_B: K_B = s s^T (s = sqrt q) for good views keeps eig(K_W) and adds zeros; bad
//! views repeat every eigenvalue of K_W |U| times (the nuisance becomes as "predictable" as
//! the state); the mixture has eig(K_W) ∪ alpha eig(K_W), so alpha interpolates linearly.

use crate::linalg::Matrix;
use crate::theory::world::World;
use crate::{Error, Result};
use faer::MatRef;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How the two views of a positive pair are produced: a [`crate::theory::view_kind::ViewKind`]'s pairs with the
/// theory's parameters (next-token drift, a good/bad mixture), from which [`pair_matrix`]
/// builds Pi.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pairing {
    /// Two independent renderings of (related) states.
    Good,
    /// Two corruptions of one rendering: the pair also shares the nuisance.
    Bad,
    /// Prefix and continuation of one rendering: the nuisance is shared; with probability
    /// `drift` the continuation is about a state drawn from p (co-occurrence only).
    NextToken {
        /// tau in [0, 1].
        drift: f64,
    },
    /// (1 - alpha) Pi_good + alpha Pi_bad: alpha = 0 is good views, alpha = 1 bad views.
    Mix {
        /// alpha in [0, 1].
        alpha: f64,
    },
}

impl Pairing {
    /// Parses `good`, `bad`, `next-token` (uses `drift`) or `mix` (uses `alpha`).
    pub fn parse(kind: &str, alpha: f64, drift: f64) -> Result<Pairing> {
        let v = match kind {
            "good" => Pairing::Good,
            "bad" => Pairing::Bad,
            "next-token" => Pairing::NextToken { drift },
            "mix" => Pairing::Mix { alpha },
            other => {
                return Err(Error::invalid(format!(
                    "unknown views `{other}` (expected good, bad, next-token or mix)"
                )));
            }
        };
        v.check()?;
        Ok(v)
    }

    /// Short label for reports, e.g. `mix(alpha=0.3)`.
    pub fn label(&self) -> String {
        match self {
            Pairing::Good => "good".into(),
            Pairing::Bad => "bad".into(),
            Pairing::NextToken { drift } => format!("next-token(drift={drift})"),
            Pairing::Mix { alpha } => format!("mix(alpha={alpha})"),
        }
    }

    fn check(&self) -> Result<()> {
        match *self {
            Pairing::Mix { alpha: x } | Pairing::NextToken { drift: x }
                if !(0.0..=1.0).contains(&x) =>
            {
                Err(Error::invalid(format!(
                    "{}: the weight must be in [0, 1]",
                    self.label()
                )))
            }
            _ => Ok(()),
        }
    }
}

/// Kronecker product A ⊗ B: (A ⊗ B)[i |B| + k, j |B| + l] = A[i, j] B[k, l].
///
/// # Shapes
/// `a [n, n]`, `b [m, m]` -> `[n m, n m]`
pub fn kron(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Matrix {
    let (bm, bn) = (b.nrows(), b.ncols());
    Matrix::from_fn(a.nrows() * bm, a.ncols() * bn, |r, c| {
        a[(r / bm, c / bn)] * b[(r % bm, c % bn)]
    })
}

/// Pi over the observations Z x U of modality `m` for the given views (table in the module
/// docs). Symmetric, non-negative, sums to 1, row sums p(z) q(u).
///
/// # Shapes
/// world with n states, modality with k nuisances -> `[n k, n k]`
pub fn pair_matrix(world: &World, m: usize, views: Pairing) -> Result<Matrix> {
    views.check()?;
    let q = &world.modality(m)?.q;
    let k = q.len();
    let outer = Matrix::from_fn(k, k, |a, b| q[a] * q[b]);
    let diag = Matrix::from_fn(k, k, |a, b| if a == b { q[a] } else { 0.0 });
    let w = world.affinity.as_ref();
    Ok(match views {
        Pairing::Good => kron(w, outer.as_ref()),
        Pairing::Bad => kron(w, diag.as_ref()),
        Pairing::Mix { alpha } => kron(w, (&outer * (1.0 - alpha) + &diag * alpha).as_ref()),
        Pairing::NextToken { drift } => {
            let p = &world.p;
            let a = Matrix::from_fn(p.len(), p.len(), |i, j| {
                (1.0 - drift) * w[(i, j)] + drift * p[i] * p[j]
            });
            kron(a.as_ref(), diag.as_ref())
        }
    })
}

/// Names of modality `m`'s observations, `state|nuisance`, in [`pair_matrix`]'s order.
///
/// # Shapes
/// -> `[n k]`
pub fn observation_names(world: &World, m: usize) -> Result<Vec<String>> {
    let md = world.modality(m)?;
    Ok(world
        .names
        .iter()
        .flat_map(|z| md.nuisances.iter().map(move |u| format!("{z}|{u}")))
        .collect())
}

/// The state of each observation of modality `m` (x = z |U| + u  ->  z).
///
/// # Shapes
/// -> `[n k]`
pub fn observation_states(world: &World, m: usize) -> Result<Vec<usize>> {
    let k = world.modality(m)?.q.len();
    Ok((0..world.n() * k).map(|x| x / k).collect())
}

/// Pi of an undirected graph: Pi = A / sum(A) for a symmetric non-negative adjacency A
/// (a random walk's edge distribution; K is then the normalised adjacency D^-1/2 A D^-1/2).
///
/// # Shapes
/// `a [n, n]` -> `[n, n]`
pub fn from_adjacency(a: MatRef<'_, f64>) -> Result<Matrix> {
    let total: f64 = (0..a.nrows())
        .map(|i| (0..a.ncols()).map(|j| a[(i, j)]).sum::<f64>())
        .sum();
    if !(total > 0.0 && total.is_finite()) {
        return Err(Error::invalid(format!(
            "adjacency must have a positive finite total weight, got {total}"
        )));
    }
    let pi = Matrix::from_fn(a.nrows(), a.ncols(), |i, j| a[(i, j)] / total);
    check_pi(pi.as_ref(), "adjacency", 1e-12)?;
    Ok(pi)
}

/// A random Pi for tests and benchmarks: each pair (i <= j) is an edge with probability
/// `density` (plus every self-loop), weight ~ Uniform(0, 1), symmetrised and normalised.
///
/// # Shapes
/// -> `[n, n]`
pub fn random_pi(n: usize, density: f64, seed: u64) -> Matrix {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut a = Matrix::zeros(n, n);
    for i in 0..n {
        for j in i..n {
            if i == j || rng.random::<f64>() < density {
                let w = rng.random::<f64>();
                a[(i, j)] = w;
                a[(j, i)] = w;
            }
        }
    }
    let total: f64 = a.col_iter().map(|c| c.iter().sum::<f64>()).sum();
    // Self-loops always get a weight, so total > 0 unless every draw was exactly 0.
    Matrix::from_fn(n, n, |i, j| a[(i, j)] / total.max(f64::MIN_POSITIVE))
}

/// Checks that Pi is a valid positive-pair joint: square, finite, non-negative, symmetric
/// (|Pi_ij - Pi_ji| <= tol), sum within tol * n of 1 (tol scaled by n for round-off of the
/// sum), and every state in some pair (row sum > 0). `origin` names the source in errors.
///
/// # Shapes
/// `pi [n, n]`
pub fn check_pi(pi: MatRef<'_, f64>, origin: &str, tol: f64) -> Result<()> {
    let n = pi.nrows();
    if n == 0 || pi.ncols() != n {
        return Err(Error::format(
            origin,
            "shape",
            format!(
                "expected a non-empty square matrix, got [{}, {}]",
                n,
                pi.ncols()
            ),
        ));
    }
    let mut total = 0.0;
    for i in 0..n {
        let mut row = 0.0;
        for j in 0..n {
            let x = pi[(i, j)];
            if !x.is_finite() || x < 0.0 {
                return Err(Error::format(
                    origin,
                    format!("Pi[{i}, {j}]"),
                    format!("{x} is not a probability (need finite and >= 0)"),
                ));
            }
            if j < i && (x - pi[(j, i)]).abs() > tol {
                return Err(Error::format(
                    origin,
                    "symmetry",
                    format!(
                        "Pi[{i}, {j}] = {x} but Pi[{j}, {i}] = {} (positive pairs are unordered: Pi must equal Pi^T within {tol:e})",
                        pi[(j, i)]
                    ),
                ));
            }
            row += x;
        }
        if row <= 0.0 {
            return Err(Error::format(
                origin,
                format!("row {i}"),
                "sums to 0: state is in no positive pair (p = 0)",
            ));
        }
        total += row;
    }
    if (total - 1.0).abs() > tol * n as f64 {
        return Err(Error::format(
            origin,
            "sum",
            format!(
                "entries sum to {total}, expected 1 (a joint distribution) within {:e}",
                tol * n as f64
            ),
        ));
    }
    Ok(())
}

/// Reads Pi from `.npy` bytes (f32 or f64, C or Fortran order, 2-D square) and checks it
/// with [`check_pi`] at tolerance 1e-10 (f64) or 1e-6 (f32, whose rounding is ~6e-8 per
/// entry). The result is symmetrised exactly and renormalised to sum 1.
///
/// # Shapes
/// file `[n, n]` -> `[n, n]`
pub fn pi_from_npy_bytes(bytes: &[u8], origin: &str) -> Result<Matrix> {
    let npy = npyz::NpyFile::new(bytes)
        .map_err(|e| Error::format(origin, "header", format!("not a .npy file: {e}")))?;
    let shape = npy.shape().to_vec();
    if shape.len() != 2 || shape[0] != shape[1] || shape[0] == 0 {
        return Err(Error::format(
            origin,
            "shape",
            format!("expected a square 2-D matrix [n, n], got {shape:?}"),
        ));
    }
    let n = shape[0] as usize;
    let fortran = matches!(npy.order(), npyz::Order::Fortran);
    let dtype = npy.dtype();
    let type_str = match &dtype {
        npyz::DType::Plain(t) => t.to_string(),
        other => format!("{other:?}"),
    };
    let (values, tol): (Vec<f64>, f64) = match type_str.trim_start_matches(['<', '>', '|', '=']) {
        "f8" => (
            npy.into_vec::<f64>()
                .map_err(|e| Error::format(origin, "data", e.to_string()))?,
            1e-10,
        ),
        "f4" => {
            let v = npy
                .into_vec::<f32>()
                .map_err(|e| Error::format(origin, "data", e.to_string()))?;
            (v.into_iter().map(f64::from).collect(), 1e-6)
        }
        _ => {
            return Err(Error::format(
                origin,
                "dtype",
                format!("expected float32 or float64, got `{type_str}`"),
            ));
        }
    };
    if values.len() != n * n {
        return Err(Error::format(
            origin,
            "data",
            format!("expected {} values, found {}", n * n, values.len()),
        ));
    }
    let pi = Matrix::from_fn(n, n, |i, j| {
        if fortran {
            values[j * n + i]
        } else {
            values[i * n + j]
        }
    });
    check_pi(pi.as_ref(), origin, tol)?;
    let total: f64 = pi.col_iter().map(|c| c.iter().sum::<f64>()).sum();
    Ok(Matrix::from_fn(n, n, |i, j| {
        0.5 * (pi[(i, j)] + pi[(j, i)]) / total
    }))
}

/// Reads and checks Pi from a `.npy` file (native only; see [`pi_from_npy_bytes`]).
#[cfg(not(target_arch = "wasm32"))]
pub fn load_pi_npy(path: &std::path::Path) -> Result<Matrix> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    pi_from_npy_bytes(&bytes, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theory::world::{Preset, PresetSpec};

    fn row_sums(m: &Matrix) -> Vec<f64> {
        (0..m.nrows())
            .map(|i| (0..m.ncols()).map(|j| m[(i, j)]).sum())
            .collect()
    }

    #[test]
    fn every_view_kind_is_a_valid_joint_with_the_same_marginal() {
        let world = World::preset(&PresetSpec {
            preset: Preset::Grid,
            n: 12,
            nuisances: 3,
            ..PresetSpec::default()
        })
        .unwrap();
        let kinds = [
            Pairing::Good,
            Pairing::Bad,
            Pairing::NextToken { drift: 0.3 },
            Pairing::Mix { alpha: 0.4 },
        ];
        let q = &world.modalities[0].q;
        let marginal: Vec<f64> = world
            .p
            .iter()
            .flat_map(|pz| q.iter().map(move |qu| pz * qu))
            .collect();
        for v in kinds {
            let pi = pair_matrix(&world, 0, v).unwrap();
            check_pi(pi.as_ref(), "test", 1e-12).unwrap();
            for (a, b) in row_sums(&pi).iter().zip(&marginal) {
                assert!((a - b).abs() < 1e-15, "{v:?}");
            }
        }
    }

    #[test]
    fn mixture_is_the_convex_combination() {
        let world = World::preset(&PresetSpec {
            preset: Preset::Ring,
            n: 7,
            nuisances: 2,
            ..PresetSpec::default()
        })
        .unwrap();
        let g = pair_matrix(&world, 0, Pairing::Good).unwrap();
        let b = pair_matrix(&world, 0, Pairing::Bad).unwrap();
        let m = pair_matrix(&world, 0, Pairing::Mix { alpha: 0.25 }).unwrap();
        assert!((&m - (&g * 0.75 + &b * 0.25)).norm_l2() < 1e-15);
        assert!(
            (pair_matrix(&world, 0, Pairing::Mix { alpha: 0.0 }).unwrap() - &g).norm_l2() < 1e-15
        );
        assert!(Pairing::parse("mix", 1.5, 0.0).is_err());
        assert!(Pairing::parse("sideways", 0.5, 0.0).is_err());
    }

    #[test]
    fn bad_pi_is_rejected_with_the_reason() {
        let asym = Matrix::from_fn(2, 2, |i, j| [[0.2, 0.3], [0.1, 0.4]][i][j]);
        let msg = check_pi(asym.as_ref(), "a.npy", 1e-10)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("a.npy") && msg.contains("symmetry"), "{msg}");
        let neg = Matrix::from_fn(2, 2, |i, j| [[0.6, -0.1], [-0.1, 0.6]][i][j]);
        assert!(
            check_pi(neg.as_ref(), "n", 1e-10)
                .unwrap_err()
                .to_string()
                .contains("Pi[0, 1]")
        );
        let unnorm = Matrix::from_fn(2, 2, |_, _| 0.5);
        assert!(
            check_pi(unnorm.as_ref(), "s", 1e-10)
                .unwrap_err()
                .to_string()
                .contains("sum to 2")
        );
        let isolated = Matrix::from_fn(2, 2, |i, j| if i == 0 && j == 0 { 1.0 } else { 0.0 });
        assert!(
            check_pi(isolated.as_ref(), "z", 1e-10)
                .unwrap_err()
                .to_string()
                .contains("row 1")
        );
    }

    #[test]
    fn npy_round_trip_f32_and_f64() {
        use npyz::WriterBuilder;
        let pi = random_pi(5, 0.5, 3);
        let mut bytes = Vec::new();
        let mut w = npyz::WriteOptions::new()
            .default_dtype()
            .shape(&[5, 5])
            .writer(&mut bytes)
            .begin_nd()
            .unwrap();
        w.extend(crate::linalg::to_row_major(pi.as_ref())).unwrap();
        w.finish().unwrap();
        let back = pi_from_npy_bytes(&bytes, "mem.npy").unwrap();
        assert!((&back - &pi).norm_l2() < 1e-15);

        let mut bytes = Vec::new();
        let mut w = npyz::WriteOptions::new()
            .default_dtype()
            .shape(&[5, 5])
            .writer(&mut bytes)
            .begin_nd()
            .unwrap();
        w.extend(
            crate::linalg::to_row_major(pi.as_ref())
                .into_iter()
                .map(|x| x as f32),
        )
        .unwrap();
        w.finish().unwrap();
        let back = pi_from_npy_bytes(&bytes, "mem32.npy").unwrap();
        assert!((&back - &pi).norm_l2() < 1e-6);

        let mut bytes = Vec::new();
        let mut w = npyz::WriteOptions::new()
            .default_dtype()
            .shape(&[2, 3])
            .writer(&mut bytes)
            .begin_nd()
            .unwrap();
        w.extend([0.1f64; 6]).unwrap();
        w.finish().unwrap();
        let msg = pi_from_npy_bytes(&bytes, "rect.npy")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("rect.npy") && msg.contains("square"), "{msg}");
    }
}
