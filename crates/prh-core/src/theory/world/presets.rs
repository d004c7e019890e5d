//! Built-in worlds with a seed (paper §2's finite world, made concrete for teaching):
//! disjoint clusters, a ring, an attribute grid, and two-modality scenes. Each is a state
//! affinity W with a closed-form spectrum, so tests and students can check the solver.

use super::{ModalitySpec, World};
use crate::linalg::Matrix;
use crate::{Error, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The built-in worlds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// Disjoint clusters: a view may move to any state of its own cluster.
    Clusters,
    /// A ring: a view may step to a neighbouring state.
    Ring,
    /// Attribute grid object x colour x count: a view may resample one attribute.
    Grid,
    /// Scenes shape x colour x size, rendered by two modalities (image, text).
    Scenes,
}

impl Preset {
    /// All presets, in the order `--help` lists them.
    pub const ALL: [Preset; 4] = [Preset::Clusters, Preset::Ring, Preset::Grid, Preset::Scenes];

    /// The CLI / URL name of the preset.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Clusters => "clusters",
            Preset::Ring => "ring",
            Preset::Grid => "grid",
            Preset::Scenes => "scenes",
        }
    }

    /// Parses a preset name (as printed by [`Preset::name`]).
    pub fn parse(s: &str) -> Result<Preset> {
        Preset::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Preset::ALL.iter().map(|p| p.name()).collect();
                Error::invalid(format!(
                    "unknown world preset `{s}` (expected one of {})",
                    names.join(", ")
                ))
            })
    }
}

/// Everything that determines a preset world; equal specs give equal worlds.
#[derive(Debug, Clone, PartialEq)]
pub struct PresetSpec {
    /// Which world.
    pub preset: Preset,
    /// Number of states; `grid` and `scenes` round it to a product of three sizes.
    pub n: usize,
    /// Seed for p(z), q(u) and cluster sizes.
    pub seed: u64,
    /// Nuisance values per rendering for single-modality presets (1 = no nuisance).
    pub nuisances: usize,
    /// Number of clusters for `clusters` (default: round(sqrt(n))).
    pub clusters: Option<usize>,
    /// How uneven p and q are: p_i ∝ 1 + skew * (2 U_i - 1), U_i ~ Uniform(0, 1); 0 = uniform.
    pub skew: f64,
    /// rho in [0, 1]: probability that the second view of a pair shows a related state
    /// instead of the same one (cluster mate, ring neighbour, one attribute resampled).
    pub relatedness: f64,
}

impl Default for PresetSpec {
    fn default() -> Self {
        PresetSpec {
            preset: Preset::Clusters,
            n: 12,
            seed: 0,
            nuisances: 2,
            clusters: None,
            skew: 0.5,
            relatedness: 0.5,
        }
    }
}

/// A random distribution of length `n`: w_i = 1 + skew (2 U_i - 1), normalised.
fn skewed_distribution(rng: &mut ChaCha8Rng, n: usize, skew: f64) -> Vec<f64> {
    let w: Vec<f64> = (0..n)
        .map(|_| 1.0 + skew * (2.0 * rng.random::<f64>() - 1.0))
        .collect();
    let s: f64 = w.iter().sum();
    w.into_iter().map(|x| x / s).collect()
}

/// Three sizes whose product is close to `n` (grid shape): a = round(n^(1/3)),
/// b = round(sqrt(n / a)), c = round(n / (a b)), each at least 1.
pub fn grid_shape(n: usize) -> [usize; 3] {
    let nf = n.max(1) as f64;
    let a = (nf.cbrt().round() as usize).max(1);
    let b = ((nf / a as f64).sqrt().round() as usize).max(1);
    let c = ((nf / (a * b) as f64).round() as usize).max(1);
    [a, b, c]
}

/// Names `base[i]`, or `prefix{i}` beyond the list.
fn labels(base: &[&str], prefix: &str, k: usize) -> Vec<String> {
    (0..k)
        .map(|i| {
            base.get(i)
                .map(|s| s.to_string())
                .unwrap_or(format!("{prefix}{i}"))
        })
        .collect()
}

impl World {
    /// Builds a preset world (see [`Preset`]); deterministic in `spec`.
    ///
    /// Affinities (rho = `spec.relatedness`, T the content change of a view):
    /// - clusters: W = (1 - rho) diag(p) + rho sum_C p_C p_C^T / P(C); K_W has eigenvalue 1
    ///   (multiplicity = number of clusters) and 1 - rho.
    /// - ring: W(z, z+1) = (rho / 2) min(p_z, p_z+1), rest on the diagonal; with uniform p
    ///   (skew 0) K_W's eigenvalues are 1 - rho + rho cos(2 pi j / n).
    /// - grid / scenes (p a product over attributes): W = (1 - rho) diag(p) +
    ///   (rho / 3) sum_a p(z) p_a(z'_a) [z'_b = z_b for b != a]; K_W's eigenvalues are
    ///   1 - rho + rho m / 3 for m = 0..3 attributes averaged out.
    pub fn preset(spec: &PresetSpec) -> Result<World> {
        if spec.n == 0 || spec.nuisances == 0 {
            return Err(Error::invalid(
                "a preset world needs n >= 1 states and >= 1 nuisance",
            ));
        }
        if !(0.0..=1.0).contains(&spec.relatedness) || !(0.0..1.0).contains(&spec.skew) {
            return Err(Error::invalid(format!(
                "relatedness must be in [0, 1] (got {}) and skew in [0, 1) (got {})",
                spec.relatedness, spec.skew
            )));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
        let rho = spec.relatedness;
        let one_modality = |rng: &mut ChaCha8Rng| {
            let k = spec.nuisances;
            vec![ModalitySpec {
                name: "obs".into(),
                nuisances: labels(&[], "u", k),
                q: skewed_distribution(rng, k, spec.skew),
            }]
        };
        let name = format!("{}(n={}, seed={})", spec.preset.name(), spec.n, spec.seed);
        match spec.preset {
            Preset::Clusters => {
                let n = spec.n;
                let k = spec
                    .clusters
                    .unwrap_or(((n as f64).sqrt().round() as usize).max(1));
                if k == 0 || k > n {
                    return Err(Error::invalid(format!(
                        "clusters: need 1 <= clusters <= n, got {k} for n = {n}"
                    )));
                }
                // Random cluster sizes >= 1: each state beyond the first k joins a random cluster.
                let mut cluster: Vec<usize> = (0..n)
                    .map(|i| if i < k { i } else { rng.random_range(0..k) })
                    .collect();
                cluster.sort_unstable();
                let p = skewed_distribution(&mut rng, n, spec.skew);
                let mut mass = vec![0.0; k];
                for i in 0..n {
                    mass[cluster[i]] += p[i];
                }
                let w = Matrix::from_fn(n, n, |i, j| {
                    let within = if cluster[i] == cluster[j] {
                        rho * p[i] * p[j] / mass[cluster[i]]
                    } else {
                        0.0
                    };
                    within + if i == j { (1.0 - rho) * p[i] } else { 0.0 }
                });
                let names = (0..n).map(|i| format!("c{}.{i}", cluster[i])).collect();
                let mods = one_modality(&mut rng);
                World::from_affinity(&name, names, w, mods)
            }
            Preset::Ring => {
                let n = spec.n;
                let p = skewed_distribution(&mut rng, n, spec.skew);
                let mut w = Matrix::zeros(n, n);
                for i in 0..n {
                    w[(i, i)] += p[i];
                }
                // A ring of 1 or 2 states has no distinct pair of neighbours on both sides;
                // the edge loop below still keeps row sums equal to p.
                let edges = if n >= 3 { n } else { n - 1 };
                for i in 0..edges {
                    let j = (i + 1) % n;
                    let c = 0.5 * rho * p[i].min(p[j]);
                    w[(i, j)] += c;
                    w[(j, i)] += c;
                    w[(i, i)] -= c;
                    w[(j, j)] -= c;
                }
                let names = (0..n).map(|i| format!("r{i}")).collect();
                let mods = one_modality(&mut rng);
                World::from_affinity(&name, names, w, mods)
            }
            Preset::Grid | Preset::Scenes => {
                let shape = grid_shape(spec.n);
                let (attr_names, mods) = if spec.preset == Preset::Grid {
                    let a = [
                        labels(
                            &["cube", "ball", "cone", "ring", "star", "disk", "cup", "key"],
                            "obj",
                            shape[0],
                        ),
                        labels(
                            &[
                                "red", "green", "blue", "yellow", "black", "white", "pink", "grey",
                            ],
                            "col",
                            shape[1],
                        ),
                        (1..=shape[2]).map(|c| c.to_string()).collect(),
                    ];
                    (a, None)
                } else {
                    let a = [
                        labels(
                            &[
                                "square", "circle", "triangle", "star", "heart", "cross", "moon",
                                "arrow",
                            ],
                            "shape",
                            shape[0],
                        ),
                        labels(
                            &[
                                "red", "green", "blue", "yellow", "purple", "orange", "white",
                                "black",
                            ],
                            "col",
                            shape[1],
                        ),
                        labels(
                            &[
                                "small", "large", "medium", "tiny", "huge", "wide", "tall", "flat",
                            ],
                            "size",
                            shape[2],
                        ),
                    ];
                    (a, Some(()))
                };
                let pa: Vec<Vec<f64>> = shape
                    .iter()
                    .map(|&s| skewed_distribution(&mut rng, s, spec.skew))
                    .collect();
                let mods = match mods {
                    None => one_modality(&mut rng),
                    Some(()) => {
                        let img = labels(&["lit-left", "lit-right", "dim"], "light", 3);
                        let txt = labels(&["plain", "terse", "verbose", "poetic"], "style", 4);
                        vec![
                            ModalitySpec {
                                name: "image".into(),
                                q: skewed_distribution(&mut rng, img.len(), spec.skew),
                                nuisances: img,
                            },
                            ModalitySpec {
                                name: "text".into(),
                                q: skewed_distribution(&mut rng, txt.len(), spec.skew),
                                nuisances: txt,
                            },
                        ]
                    }
                };
                let w = grid_affinity(shape, &pa, rho);
                let n = shape.iter().product();
                let names = (0..n)
                    .map(|z| {
                        let idx = unravel(z, shape);
                        format!(
                            "{}/{}/{}",
                            attr_names[0][idx[0]], attr_names[1][idx[1]], attr_names[2][idx[2]]
                        )
                    })
                    .collect();
                World::from_affinity(&name, names, w, mods)
            }
        }
    }
}

/// Grid index -> attribute indices, first attribute slowest.
fn unravel(z: usize, shape: [usize; 3]) -> [usize; 3] {
    [
        z / (shape[1] * shape[2]),
        (z / shape[2]) % shape[1],
        z % shape[2],
    ]
}

/// W = (1 - rho) diag(p) + (rho / 3) sum_a p(z) p_a(z'_a) [z and z' agree except on a].
fn grid_affinity(shape: [usize; 3], pa: &[Vec<f64>], rho: f64) -> Matrix {
    let n = shape.iter().product();
    let prob = |idx: [usize; 3]| pa[0][idx[0]] * pa[1][idx[1]] * pa[2][idx[2]];
    Matrix::from_fn(n, n, |z, y| {
        let (iz, iy) = (unravel(z, shape), unravel(y, shape));
        let mut w = if z == y { (1.0 - rho) * prob(iz) } else { 0.0 };
        for a in 0..3 {
            let others_agree = (0..3).all(|b| b == a || iz[b] == iy[b]);
            if others_agree {
                w += rho / 3.0 * prob(iz) * pa[a][iy[a]];
            }
        }
        w
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row_sums(w: &Matrix) -> Vec<f64> {
        (0..w.nrows())
            .map(|i| (0..w.ncols()).map(|j| w[(i, j)]).sum())
            .collect()
    }

    #[test]
    fn presets_are_valid_joints_and_deterministic() {
        for preset in Preset::ALL {
            let spec = PresetSpec {
                preset,
                n: 13,
                seed: 7,
                ..PresetSpec::default()
            };
            let w = World::preset(&spec).unwrap();
            let total: f64 = row_sums(&w.affinity).iter().sum();
            assert!((total - 1.0).abs() < 1e-12, "{preset:?}");
            for (a, b) in row_sums(&w.affinity).iter().zip(&w.p) {
                assert!((a - b).abs() < 1e-15);
            }
            assert!(w.affinity.col_iter().all(|c| c.iter().all(|&x| x >= 0.0)));
            let again = World::preset(&spec).unwrap();
            assert_eq!(again.affinity, w.affinity);
            assert_eq!(again.names, w.names);
        }
    }

    #[test]
    fn grid_shape_rounds_to_a_product() {
        assert_eq!(grid_shape(12), [2, 2, 3]);
        assert_eq!(grid_shape(27), [3, 3, 3]);
        assert_eq!(grid_shape(1), [1, 1, 1]);
        let s = World::preset(&PresetSpec {
            preset: Preset::Scenes,
            n: 36,
            ..PresetSpec::default()
        })
        .unwrap();
        assert_eq!(s.n(), 36);
        assert_eq!(s.modalities.len(), 2);
    }
}
