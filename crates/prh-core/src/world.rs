//! A finite world (paper §2): states Z with probabilities p(z), which states a positive pair
//! may connect (the world's *affinity* W), and the modalities that render the states.
//!
//! Modelling choice (used by [`crate::pair_graph`]): a modality renders a state z together
//! with a nuisance u (lighting, wording, ...), drawn independently with probability q(u), so
//! an observation is x = (z, u) and the rendering g(z, u) is injective. The affinity W is the
//! joint over *states* of the two views of a positive pair: W(z, z') = p(z) T(z' | z), where
//! T is a reversible "content change" (a view may show a related state). W is symmetric,
//! non-negative, sums to 1 and its row sums are p. How the *nuisances* of the two views are
//! paired (independent for good views, shared for bad ones) is decided in `pair_graph`,
//! which is why the kernel is taken over observations Z x U, not over Z alone: over Z the
//! good and the bad graph are the same W.
//!
//! ```text
//! prh-native spectral --world grid --n 36 --dim 7 --skip-trivial
//! ```

use crate::linalg::Matrix;
use crate::{Error, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;

/// One modality: the nuisances a rendering may carry and their probabilities q(u).
#[derive(Debug, Clone, PartialEq)]
pub struct Modality {
    /// Name shown in reports (e.g. "image", "text").
    pub name: String,
    /// One name per nuisance value u.
    pub nuisances: Vec<String>,
    /// q(u) > 0, sums to 1; same length as `nuisances`.
    pub q: Vec<f64>,
}

/// A finite world: states, p(z), the affinity W and the modalities.
#[derive(Debug, Clone)]
pub struct World {
    /// Where the world came from (preset name or file).
    pub name: String,
    /// One name per state z.
    pub names: Vec<String>,
    /// p(z) > 0, sums to 1 (the row sums of `affinity`).
    pub p: Vec<f64>,
    /// W `[n, n]`: symmetric, non-negative, sums to 1, row sums p.
    pub affinity: Matrix,
    /// At least one modality.
    pub modalities: Vec<Modality>,
}

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
    /// Builds a world from an affinity W (any positive scale; normalised to sum 1) after
    /// checking it: square, finite, non-negative, symmetric to 1e-9 relative, every state in
    /// some pair (p(z) = sum_z' W(z, z') > 0). Modalities must have q > 0 (normalised).
    ///
    /// # Shapes
    /// `names [n]`, `affinity [n, n]`
    pub fn from_affinity(
        name: &str,
        names: Vec<String>,
        affinity: Matrix,
        modalities: Vec<Modality>,
    ) -> Result<World> {
        let n = names.len();
        if n == 0 || affinity.nrows() != n || affinity.ncols() != n {
            return Err(Error::invalid(format!(
                "world `{name}`: affinity is [{}, {}] for {n} states (need a non-empty square matrix)",
                affinity.nrows(),
                affinity.ncols()
            )));
        }
        let mut total = 0.0;
        let mut max = 0.0f64;
        for i in 0..n {
            for j in 0..n {
                let w = affinity[(i, j)];
                if !w.is_finite() || w < 0.0 {
                    return Err(Error::invalid(format!(
                        "world `{name}`: affinity[{i}, {j}] = {w} (need finite and >= 0)"
                    )));
                }
                total += w;
                max = max.max(w);
            }
        }
        for i in 0..n {
            for j in 0..i {
                if (affinity[(i, j)] - affinity[(j, i)]).abs() > 1e-9 * max {
                    return Err(Error::invalid(format!(
                        "world `{name}`: affinity is not symmetric at ({i}, {j}): {} vs {}",
                        affinity[(i, j)],
                        affinity[(j, i)]
                    )));
                }
            }
        }
        // Symmetrise exactly and normalise, so p is exactly the row sum of what we store.
        let w = Matrix::from_fn(n, n, |i, j| {
            0.5 * (affinity[(i, j)] + affinity[(j, i)]) / total
        });
        let p: Vec<f64> = (0..n).map(|i| (0..n).map(|j| w[(i, j)]).sum()).collect();
        if let Some(i) = p.iter().position(|&x| x <= 0.0) {
            return Err(Error::invalid(format!(
                "world `{name}`: state `{}` is in no positive pair (p = 0); remove it or give it an edge",
                names[i]
            )));
        }
        if modalities.is_empty() {
            return Err(Error::invalid(format!(
                "world `{name}`: needs at least one modality"
            )));
        }
        let mut mods = Vec::with_capacity(modalities.len());
        for m in modalities {
            mods.push(normalise_modality(name, m)?);
        }
        Ok(World {
            name: name.to_string(),
            names,
            p,
            affinity: w,
            modalities: mods,
        })
    }

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
            vec![Modality {
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
                            Modality {
                                name: "image".into(),
                                q: skewed_distribution(&mut rng, img.len(), spec.skew),
                                nuisances: img,
                            },
                            Modality {
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

    /// Number of states |Z|.
    pub fn n(&self) -> usize {
        self.names.len()
    }

    /// The modality with index `m`, or an error naming the valid ones.
    pub fn modality(&self, m: usize) -> Result<&Modality> {
        self.modalities.get(m).ok_or_else(|| {
            let names: Vec<_> = self.modalities.iter().map(|m| m.name.as_str()).collect();
            Error::invalid(format!(
                "world `{}` has modalities [{}]; index {m} is out of range",
                self.name,
                names.join(", ")
            ))
        })
    }

    /// Parses a JSON world description (see [`WorldFile`]); `origin` names the source in errors.
    pub fn from_json(text: &str, origin: &str) -> Result<World> {
        let file: WorldFile = serde_json::from_str(text)
            .map_err(|e| Error::format(origin, "json", format!("not a world description: {e}")))?;
        file.into_world(origin)
    }

    /// Reads a JSON world description from a file (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn load_json(path: &std::path::Path) -> Result<World> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        World::from_json(&text, &path.display().to_string())
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

fn normalise_modality(world: &str, m: Modality) -> Result<Modality> {
    let s: f64 = m.q.iter().sum();
    if m.nuisances.is_empty()
        || m.q.len() != m.nuisances.len()
        || m.q.iter().any(|&x| !(x > 0.0 && x.is_finite()))
    {
        return Err(Error::invalid(format!(
            "world `{world}`, modality `{}`: needs >= 1 nuisance and one q > 0 per nuisance (got {} nuisances, q = {:?})",
            m.name,
            m.nuisances.len(),
            m.q
        )));
    }
    Ok(Modality {
        q: m.q.iter().map(|x| x / s).collect(),
        ..m
    })
}

/// The JSON world format:
/// ```json
/// { "name": "tiny",
///   "states": ["a", "b", "c"],
///   "edges": [["a", "b", 1.0], ["b", "c", 2.0], ["c", "c", 0.5]],
///   "modalities": [{ "name": "text", "nuisances": ["plain", "fancy"], "q": [0.7, 0.3] }] }
/// ```
/// Exactly one of `edges` (state, state, weight >= 0; added symmetrically, a self-loop once)
/// or `affinity` (a full symmetric matrix) gives W up to scale. `modalities` is optional
/// (default: one modality without nuisance); `q` is optional (default uniform).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorldFile {
    /// Display name.
    #[serde(default)]
    pub name: Option<String>,
    /// State names, unique.
    pub states: Vec<String>,
    /// Weighted edges between named states.
    #[serde(default)]
    pub edges: Option<Vec<(String, String, f64)>>,
    /// Full affinity matrix, rows in `states` order.
    #[serde(default)]
    pub affinity: Option<Vec<Vec<f64>>>,
    /// Renderers of the states.
    #[serde(default)]
    pub modalities: Option<Vec<ModalityFile>>,
}

/// A modality in the JSON world format.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModalityFile {
    /// Display name.
    pub name: String,
    /// Nuisance names.
    pub nuisances: Vec<String>,
    /// Optional weights (normalised); default uniform.
    #[serde(default)]
    pub q: Option<Vec<f64>>,
}

impl WorldFile {
    /// Checks the description and builds the world; errors name `origin` and the field.
    pub fn into_world(self, origin: &str) -> Result<World> {
        let n = self.states.len();
        if n == 0 {
            return Err(Error::format(
                origin,
                "states",
                "expected at least one state",
            ));
        }
        let index = |s: &str, field: &str| -> Result<usize> {
            self.states
                .iter()
                .position(|x| x == s)
                .ok_or_else(|| Error::format(origin, field, format!("unknown state `{s}`")))
        };
        for (i, s) in self.states.iter().enumerate() {
            if self.states[..i].contains(s) {
                return Err(Error::format(
                    origin,
                    "states",
                    format!("state `{s}` is listed twice"),
                ));
            }
        }
        let w = match (&self.edges, &self.affinity) {
            (Some(edges), None) => {
                let mut w = Matrix::zeros(n, n);
                for (k, (a, b, weight)) in edges.iter().enumerate() {
                    let field = format!("edges[{k}]");
                    let (i, j) = (index(a, &field)?, index(b, &field)?);
                    if !(weight.is_finite() && *weight >= 0.0) {
                        return Err(Error::format(
                            origin,
                            field,
                            format!("weight {weight} must be finite and >= 0"),
                        ));
                    }
                    w[(i, j)] += weight;
                    if i != j {
                        w[(j, i)] += weight;
                    }
                }
                w
            }
            (None, Some(rows)) => {
                if rows.len() != n || rows.iter().any(|r| r.len() != n) {
                    return Err(Error::format(
                        origin,
                        "affinity",
                        format!("expected a {n} x {n} matrix (one row per state)"),
                    ));
                }
                Matrix::from_fn(n, n, |i, j| rows[i][j])
            }
            _ => {
                return Err(Error::format(
                    origin,
                    "edges/affinity",
                    "give exactly one of `edges` or `affinity`",
                ));
            }
        };
        let modalities = match self.modalities {
            None => vec![Modality {
                name: "obs".into(),
                nuisances: vec!["-".into()],
                q: vec![1.0],
            }],
            Some(ms) => ms
                .into_iter()
                .map(|m| {
                    let q = m.q.unwrap_or_else(|| vec![1.0; m.nuisances.len()]);
                    Modality {
                        name: m.name,
                        nuisances: m.nuisances,
                        q,
                    }
                })
                .collect(),
        };
        let name = self.name.unwrap_or_else(|| origin.to_string());
        World::from_affinity(&name, self.states, w, modalities)
            .map_err(|e| Error::format(origin, "world", e.to_string()))
    }
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

    #[test]
    fn json_world_round_trip_and_errors() {
        let text = r#"{"name":"tiny","states":["a","b","c"],"edges":[["a","b",1],["b","c",2],["c","c",1]]}"#;
        let w = World::from_json(text, "tiny.json").unwrap();
        // Total weight 1 + 1 + 2 + 2 + 1 = 7; p = (1, 3, 3) / 7.
        let expect = [1.0 / 7.0, 3.0 / 7.0, 3.0 / 7.0];
        for (a, b) in w.p.iter().zip(expect) {
            assert!((a - b).abs() < 1e-15);
        }
        let bad = r#"{"states":["a","b"],"edges":[["a","zz",1]]}"#;
        let msg = World::from_json(bad, "bad.json").unwrap_err().to_string();
        assert!(
            msg.contains("bad.json") && msg.contains("edges[0]") && msg.contains("zz"),
            "{msg}"
        );
        let isolated = r#"{"states":["a","b"],"edges":[["a","a",1]]}"#;
        let msg = World::from_json(isolated, "iso.json")
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("iso.json") && msg.contains("`b`") && msg.contains("p = 0"),
            "{msg}"
        );
        let both = r#"{"states":["a"],"edges":[],"affinity":[[1]]}"#;
        assert!(
            World::from_json(both, "x")
                .unwrap_err()
                .to_string()
                .contains("exactly one")
        );
    }
}
