//! A finite world (paper §2): states Z with probabilities p(z), which states a positive pair
//! may connect (the world's *affinity* W), and the modalities that render the states.
//!
//! Modelling choice (used by [`crate::theory::pair_graph`]): a modality renders a state z together
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
use serde::Deserialize;

mod presets;
pub use presets::{Preset, PresetSpec, grid_shape};

/// One modality of a finite world: the nuisances a rendering may carry and their
/// probabilities q(u) (the scene world names its two modalities with [`crate::scene::Modality`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ModalitySpec {
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
    pub modalities: Vec<ModalitySpec>,
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
        modalities: Vec<ModalitySpec>,
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

    /// Number of states |Z|.
    pub fn n(&self) -> usize {
        self.names.len()
    }

    /// The modality with index `m`, or an error naming the valid ones.
    pub fn modality(&self, m: usize) -> Result<&ModalitySpec> {
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

fn normalise_modality(world: &str, m: ModalitySpec) -> Result<ModalitySpec> {
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
    Ok(ModalitySpec {
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
            None => vec![ModalitySpec {
                name: "obs".into(),
                nuisances: vec!["-".into()],
                q: vec![1.0],
            }],
            Some(ms) => ms
                .into_iter()
                .map(|m| {
                    let q = m.q.unwrap_or_else(|| vec![1.0; m.nuisances.len()]);
                    ModalitySpec {
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
