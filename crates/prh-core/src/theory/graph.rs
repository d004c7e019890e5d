//! A world you draw (paper §2 on a graph a teacher can edit): states joined by weighted
//! positive pairs, and what the theory says about it — Pi, the degrees p, the kernel
//! K = D^-1/2 Pi D^-1/2, its spectrum, the Fiedler vector and the Cheeger bounds.
//!
//! The playground's graph editor and the lesson call [`analyse`] on every edit, so it is
//! one dense eigendecomposition (O(n^3); ~10 ms at 200 states in the browser) plus O(n^2)
//! for the sweep cut. Graphs the theory has nothing to say about are *explained* rather
//! than refused where something can still be shown: isolated states (p = 0, so D^-1/2 does
//! not exist) are left out of the analysis and named; a disconnected graph is analysed
//! (eigenvalue 1 repeats once per component, the gap after the trivial pair is 0, the
//! Cheeger constant is 0) and said to have no unique one-dimensional representation.

use crate::linalg::Matrix;
use crate::theory::kernel::Kernel;
use crate::theory::pair_graph::from_adjacency;
use crate::theory::spectrum::Spectrum;
use crate::theory::world::{Preset, PresetSpec, World};
use crate::{Error, Result};

/// A positive pair between states `a` and `b` (`a == b` is a self-pair: the state paired
/// with itself, which adds to its degree and to K's diagonal) with weight `w > 0`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Edge {
    /// First state.
    pub a: usize,
    /// Second state.
    pub b: usize,
    /// Weight (unnormalised; Pi = A / sum A).
    pub w: f64,
}

/// The graphs the editor opens with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphPreset {
    /// 0 - 1 - ... - (n-1); K's eigenvalues are cos(pi j / (n - 1)).
    Path,
    /// A path closed into a ring; K's eigenvalues are cos(2 pi j / n).
    Cycle,
    /// Two complete graphs of n/2 states joined by one edge: the textbook small Cheeger cut.
    TwoCliques,
    /// A rows x cols lattice (rows = floor(sqrt n)), edges to the right and down.
    Grid,
    /// The state graph of the `scenes` world preset (shape x colour x size, self-pairs on
    /// the diagonal), the world the demo trains on.
    Scenes,
}

impl GraphPreset {
    /// Every preset, in menu order.
    pub const ALL: [GraphPreset; 5] = [
        GraphPreset::Path,
        GraphPreset::Cycle,
        GraphPreset::TwoCliques,
        GraphPreset::Grid,
        GraphPreset::Scenes,
    ];

    /// The preset's key (URLs, menus).
    pub fn name(self) -> &'static str {
        match self {
            GraphPreset::Path => "path",
            GraphPreset::Cycle => "cycle",
            GraphPreset::TwoCliques => "two-cliques",
            GraphPreset::Grid => "grid",
            GraphPreset::Scenes => "scenes",
        }
    }

    /// The preset named `s`, or an error listing the names.
    pub fn parse(s: &str) -> Result<GraphPreset> {
        GraphPreset::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "unknown graph preset '{s}': expected one of path, cycle, two-cliques, grid, scenes"
                ))
            })
    }
}

/// A drawn world: `n` states at `positions` (unit square, for drawing) and weighted pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct Graph {
    /// Where each state is drawn, `[n]` points in [0, 1]^2.
    pub positions: Vec<(f64, f64)>,
    /// Positive pairs, at most one per unordered pair {a, b}.
    pub edges: Vec<Edge>,
}

/// Points on a circle of radius `r` around `(cx, cy)`, starting at the top.
fn circle(n: usize, (cx, cy): (f64, f64), r: f64) -> Vec<(f64, f64)> {
    (0..n)
        .map(|i| {
            let t =
                std::f64::consts::TAU * i as f64 / n.max(1) as f64 - std::f64::consts::FRAC_PI_2;
            (cx + r * t.cos(), cy + r * t.sin())
        })
        .collect()
}

impl Graph {
    /// The preset with `n` states (n >= 2; the scenes world rounds n to a product of three
    /// attribute sizes, so its graph may have a different count).
    pub fn preset(preset: GraphPreset, n: usize) -> Result<Graph> {
        if n < 2 {
            return Err(Error::invalid(format!(
                "a {} graph needs at least 2 states, got {n}",
                preset.name()
            )));
        }
        let unit = |a: usize, b: usize| Edge { a, b, w: 1.0 };
        let g = match preset {
            GraphPreset::Path => Graph {
                positions: (0..n)
                    .map(|i| {
                        let x = 0.05 + 0.9 * i as f64 / (n - 1) as f64;
                        (x, if i % 2 == 0 { 0.45 } else { 0.55 })
                    })
                    .collect(),
                edges: (0..n - 1).map(|i| unit(i, i + 1)).collect(),
            },
            GraphPreset::Cycle => Graph {
                positions: circle(n, (0.5, 0.5), 0.42),
                // Two states: the ring's two edges are the same pair.
                edges: if n == 2 {
                    vec![unit(0, 1)]
                } else {
                    (0..n).map(|i| unit(i, (i + 1) % n)).collect()
                },
            },
            GraphPreset::TwoCliques => {
                let h = n / 2;
                let mut positions = circle(h, (0.24, 0.5), 0.19);
                positions.extend(circle(n - h, (0.76, 0.5), 0.19));
                let mut edges = Vec::new();
                for (lo, hi) in [(0, h), (h, n)] {
                    for a in lo..hi {
                        for b in a + 1..hi {
                            edges.push(unit(a, b));
                        }
                    }
                }
                // The bridge: from the right-most state of the left clique to the left-most
                // of the right one (circle() starts at the top, a quarter turn before them).
                edges.push(unit(h / 4 % h.max(1), h + (3 * (n - h)) / 4 % (n - h)));
                Graph { positions, edges }
            }
            GraphPreset::Grid => {
                let rows = (n as f64).sqrt().floor() as usize;
                let cols = n.div_ceil(rows);
                let at = |i: usize| (i / cols, i % cols);
                let span = |k: usize, m: usize| {
                    if m <= 1 {
                        0.5
                    } else {
                        0.08 + 0.84 * k as f64 / (m - 1) as f64
                    }
                };
                let mut edges = Vec::new();
                for i in 0..n {
                    let (_, c) = at(i);
                    if c + 1 < cols && i + 1 < n {
                        edges.push(unit(i, i + 1));
                    }
                    if i + cols < n {
                        edges.push(unit(i, i + cols));
                    }
                }
                Graph {
                    positions: (0..n)
                        .map(|i| {
                            let (r, c) = at(i);
                            (span(c, cols), span(r, n.div_ceil(cols)))
                        })
                        .collect(),
                    edges,
                }
            }
            GraphPreset::Scenes => {
                let world = World::preset(&PresetSpec {
                    preset: Preset::Scenes,
                    n,
                    ..PresetSpec::default()
                })?;
                Graph::from_affinity(&world.affinity)
            }
        };
        Ok(g)
    }

    /// The graph of a symmetric affinity: one edge per non-zero entry on or above the
    /// diagonal, states on a circle.
    ///
    /// # Shapes
    /// `w [n, n]`
    pub fn from_affinity(w: &Matrix) -> Graph {
        let n = w.nrows();
        let mut edges = Vec::new();
        for a in 0..n {
            for b in a..n {
                if w[(a, b)] > 0.0 {
                    edges.push(Edge { a, b, w: w[(a, b)] });
                }
            }
        }
        Graph {
            positions: circle(n, (0.5, 0.5), 0.42),
            edges,
        }
    }

    /// Number of states.
    pub fn n(&self) -> usize {
        self.positions.len()
    }

    /// Adds a state at `pos`; returns its index.
    pub fn add_state(&mut self, pos: (f64, f64)) -> usize {
        self.positions.push(pos);
        self.positions.len() - 1
    }

    /// Removes state `i` and its pairs; the states after it move down by one.
    pub fn remove_state(&mut self, i: usize) {
        if i >= self.n() {
            return;
        }
        self.positions.remove(i);
        self.edges.retain(|e| e.a != i && e.b != i);
        for e in &mut self.edges {
            e.a -= usize::from(e.a > i);
            e.b -= usize::from(e.b > i);
        }
    }

    /// Sets the weight of the pair {a, b} (adding it if absent); `w <= 0` removes it.
    /// Out-of-range states and non-finite weights are an error naming them.
    pub fn set_pair(&mut self, a: usize, b: usize, w: f64) -> Result<()> {
        let n = self.n();
        if a >= n || b >= n {
            return Err(Error::invalid(format!(
                "pair ({a}, {b}): states are numbered 0..{n}, so both must be below {n}"
            )));
        }
        if !w.is_finite() {
            return Err(Error::invalid(format!(
                "pair ({a}, {b}): weight must be a finite number, got {w}"
            )));
        }
        self.edges.retain(|e| !same_pair(e, a, b));
        if w > 0.0 {
            self.edges.push(Edge { a, b, w });
        }
        Ok(())
    }

    /// The weight of the pair {a, b}, 0 when absent.
    pub fn weight(&self, a: usize, b: usize) -> f64 {
        self.edges
            .iter()
            .find(|e| same_pair(e, a, b))
            .map_or(0.0, |e| e.w)
    }

    /// The symmetric adjacency A: A_ab = A_ba = w for each pair.
    ///
    /// # Shapes
    /// -> `[n, n]`
    pub fn adjacency(&self) -> Matrix {
        let mut a = Matrix::zeros(self.n(), self.n());
        for e in &self.edges {
            a[(e.a, e.b)] = e.w;
            a[(e.b, e.a)] = e.w;
        }
        a
    }

    /// The states in no pair with positive weight (degree 0).
    pub fn isolated(&self) -> Vec<usize> {
        let mut deg = vec![0.0; self.n()];
        for e in &self.edges {
            deg[e.a] += e.w;
            deg[e.b] += e.w;
        }
        // `partial_cmp` so a NaN degree also counts as isolated.
        (0..self.n())
            .filter(|&i| deg[i].partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater))
            .collect()
    }
}

fn same_pair(e: &Edge, a: usize, b: usize) -> bool {
    (e.a == a && e.b == b) || (e.a == b && e.b == a)
}

/// What the theory says about a graph it cannot treat as a plain connected world.
#[derive(Debug, Clone, PartialEq)]
pub enum GraphNote {
    /// These states are in no positive pair: p = 0, D^-1/2 does not exist and the theory
    /// gives them no representation, so they are left out of Pi, K and the spectrum.
    Isolated(Vec<usize>),
    /// The pairs split the states into these components (state indices of the drawn
    /// graph): K's eigenvalue 1 repeats once per component, the gap after the trivial pair
    /// is 0 and the Cheeger constant is 0, so no one-dimensional representation is unique.
    Disconnected(Vec<Vec<usize>>),
}

impl GraphNote {
    /// One plain sentence for a reader (the playground shows it above the figures).
    pub fn explain(&self) -> String {
        match self {
            GraphNote::Isolated(s) => format!(
                "State{} {} {} in no positive pair: p = 0 there, so D^-1/2 is undefined and the theory gives {} no representation. {} left out of Pi, K and the spectrum; connect {} to bring {} back.",
                plural(s.len()),
                list(s),
                if s.len() == 1 { "is" } else { "are" },
                if s.len() == 1 { "it" } else { "them" },
                if s.len() == 1 { "It is" } else { "They are" },
                if s.len() == 1 { "it" } else { "them" },
                if s.len() == 1 { "it" } else { "them" },
            ),
            GraphNote::Disconnected(c) => format!(
                "The pairs split the states into {} components ({}): eigenvalue 1 of K repeats {} times, one constant vector per component. The gap after the trivial pair is 0, so the top eigenvector after it is not unique (any mix of the component indicators is optimal), the Fiedler vector below is one arbitrary choice, and the Cheeger constant is 0. Add a pair between components to make the representation unique again.",
                c.len(),
                c.iter()
                    .map(|s| format!("{{{}}}", list(s)))
                    .collect::<Vec<_>>()
                    .join(", "),
                c.len()
            ),
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn list(s: &[usize]) -> String {
    s.iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Cheeger's inequality for K's graph. With λ2 the second eigenvalue of K (the normalised
/// Laplacian L = I - K has 1 - λ2 as its second-smallest eigenvalue) and the conductance
/// φ(S) = Pi(S, S^c) / min(p(S), p(S^c)), the Cheeger constant h = min_S φ(S) satisfies
/// (1 - λ2) / 2 <= h <= sqrt(2 (1 - λ2)); the sweep cut of the Fiedler vector attains a
/// φ at or below the upper bound (and at or above h).
#[derive(Debug, Clone, PartialEq)]
pub struct Cheeger {
    /// λ2, the second eigenvalue of K.
    pub lambda2: f64,
    /// (1 - λ2) / 2, the lower bound on h.
    pub lower: f64,
    /// sqrt(2 (1 - λ2)), the upper bound on h.
    pub upper: f64,
    /// φ of the best sweep cut of the Fiedler vector (an upper bound on h it attains).
    pub sweep: f64,
    /// That cut's smaller-volume side, as indices of the drawn graph.
    pub cut: Vec<usize>,
}

/// Everything the graph editor shows for one graph.
#[derive(Debug, Clone)]
pub struct GraphAnalysis {
    /// The drawn graph's indices of the analysed states (all but the isolated ones), in
    /// the order of Pi's rows.
    pub states: Vec<usize>,
    /// Pi = A / sum(A) over `states` `[m, m]`.
    pub pi: Matrix,
    /// K and p for that Pi.
    pub kernel: Kernel,
    /// K's spectrum, decreasing, trivial pair first.
    pub spectrum: Spectrum,
    /// The Fiedler vector D^-1/2 u_2 (the random walk's second eigenvector, constant on
    /// nothing but what K cannot separate), scaled to max |x| = 1, per analysed state;
    /// empty for a single state.
    pub fiedler: Vec<f64>,
    /// Cheeger's bounds and the sweep cut; None for a single state.
    pub cheeger: Option<Cheeger>,
    /// What the theory says about this graph beyond the numbers.
    pub notes: Vec<GraphNote>,
}

/// The connected components of `adj` among `states` (indices into `adj`), each sorted.
fn components(adj: &Matrix, states: &[usize]) -> Vec<Vec<usize>> {
    let mut seen = vec![false; adj.nrows()];
    let mut out = Vec::new();
    for &s in states {
        if seen[s] {
            continue;
        }
        seen[s] = true;
        let mut stack = vec![s];
        let mut comp = Vec::new();
        while let Some(v) = stack.pop() {
            comp.push(v);
            for &u in states {
                if !seen[u] && adj[(v, u)] > 0.0 {
                    seen[u] = true;
                    stack.push(u);
                }
            }
        }
        comp.sort_unstable();
        out.push(comp);
    }
    out
}

/// φ(S) = Pi(S, S^c) / min(p(S), p(S^c)) for `in_s[i]` marking the states of S; 0/0 (S
/// empty or everything) is reported as +inf, since such an S is no cut.
///
/// # Shapes
/// `pi [m, m]`, `in_s [m]`
pub fn conductance(pi: &Matrix, in_s: &[bool]) -> f64 {
    let m = pi.nrows();
    let (mut cut, mut vol) = (0.0, 0.0);
    let mut total = 0.0;
    for i in 0..m {
        let row: f64 = (0..m).map(|j| pi[(i, j)]).sum();
        total += row;
        if in_s[i] {
            vol += row;
            cut += (0..m)
                .filter(|&j| !in_s[j])
                .map(|j| pi[(i, j)])
                .sum::<f64>();
        }
    }
    let small = vol.min(total - vol);
    if small > 0.0 {
        cut / small
    } else {
        f64::INFINITY
    }
}

/// Pi, K, the spectrum, the Fiedler vector, Cheeger's bounds and the notes for `g`.
/// Errors (no states, no positive weight, a negative or non-finite weight) say what the
/// theory needs; isolated states and disconnected graphs are analysed with a note.
pub fn analyse(g: &Graph) -> Result<GraphAnalysis> {
    if g.n() == 0 {
        return Err(Error::invalid(
            "the graph has no states: add a state (the theory needs a world to observe)",
        ));
    }
    if let Some(e) = g.edges.iter().find(|e| !(e.w.is_finite() && e.w >= 0.0)) {
        return Err(Error::invalid(format!(
            "pair ({}, {}) has weight {}: weights are how often the pair is drawn, so they must be finite and >= 0",
            e.a, e.b, e.w
        )));
    }
    if let Some(e) = g.edges.iter().find(|e| e.a >= g.n() || e.b >= g.n()) {
        return Err(Error::invalid(format!(
            "pair ({}, {}) names a state beyond the {} drawn",
            e.a,
            e.b,
            g.n()
        )));
    }
    if !g.edges.iter().any(|e| e.w > 0.0) {
        return Err(Error::invalid(
            "every pair has weight 0, so no positive pair is ever drawn: Pi = A / sum(A) does not exist and nothing is learned. Add a pair with a positive weight.",
        ));
    }
    let adj = g.adjacency();
    let isolated = g.isolated();
    let states: Vec<usize> = (0..g.n()).filter(|i| !isolated.contains(i)).collect();
    let m = states.len();
    let sub = Matrix::from_fn(m, m, |i, j| adj[(states[i], states[j])]);
    let pi = from_adjacency(sub.as_ref())?;
    let kernel = Kernel::new(pi.as_ref())?;
    let spectrum = Spectrum::new(&kernel)?;
    let mut notes = Vec::new();
    if !isolated.is_empty() {
        notes.push(GraphNote::Isolated(isolated));
    }
    let comps = components(&adj, &states);
    if comps.len() > 1 {
        notes.push(GraphNote::Disconnected(comps));
    }
    let (fiedler, cheeger) = if m >= 2 {
        let j = spectrum.trivial_index + 1;
        let mut x: Vec<f64> = (0..m)
            .map(|i| spectrum.vectors[(i, j)] / kernel.p[i].sqrt())
            .collect();
        let top = x.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
        if top > 0.0 {
            x.iter_mut().for_each(|v| *v /= top);
        }
        let (sweep, cut) = sweep_cut(&pi, &x);
        let lambda2 = spectrum.values[j];
        let gap = (1.0 - lambda2).max(0.0);
        let cheeger = Cheeger {
            lambda2,
            lower: gap / 2.0,
            upper: (2.0 * gap).sqrt(),
            sweep,
            cut: cut.into_iter().map(|i| states[i]).collect(),
        };
        (x, Some(cheeger))
    } else {
        (Vec::new(), None)
    };
    Ok(GraphAnalysis {
        states,
        pi,
        kernel,
        spectrum,
        fiedler,
        cheeger,
        notes,
    })
}

/// The best prefix cut of the states sorted by `x`: min over k of φ({first k}) in O(m^2),
/// updating the cut weight as each state moves across. Returns φ and the smaller-volume
/// side (indices into `pi`).
///
/// # Shapes
/// `pi [m, m]`, `x [m]`
fn sweep_cut(pi: &Matrix, x: &[f64]) -> (f64, Vec<usize>) {
    let m = pi.nrows();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| x[a].total_cmp(&x[b]).then(a.cmp(&b)));
    let p: Vec<f64> = (0..m).map(|i| (0..m).map(|j| pi[(i, j)]).sum()).collect();
    let total: f64 = p.iter().sum();
    let mut in_s = vec![false; m];
    let (mut cut, mut vol) = (0.0, 0.0);
    let (mut best, mut best_k) = (f64::INFINITY, 0);
    for (k, &v) in order.iter().enumerate().take(m - 1) {
        // v joins S: its pairs to S stop crossing, its pairs to the rest start crossing.
        let to_s: f64 = (0..m).filter(|&j| in_s[j]).map(|j| pi[(v, j)]).sum();
        let to_rest: f64 = (0..m)
            .filter(|&j| !in_s[j] && j != v)
            .map(|j| pi[(v, j)])
            .sum();
        cut += to_rest - to_s;
        vol += p[v];
        in_s[v] = true;
        let small = vol.min(total - vol);
        let phi = if small > 0.0 {
            cut.max(0.0) / small
        } else {
            f64::INFINITY
        };
        if phi < best {
            best = phi;
            best_k = k + 1;
        }
    }
    let side: Vec<usize> = order[..best_k].to_vec();
    let vol_side: f64 = side.iter().map(|&i| p[i]).sum();
    let mut small: Vec<usize> = if vol_side <= total - vol_side {
        side
    } else {
        order[best_k..].to_vec()
    };
    small.sort_unstable();
    (best, small)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    fn values(g: &Graph) -> Vec<f64> {
        analyse(g).unwrap().spectrum.values
    }

    fn close(a: &[f64], b: &[f64], tol: f64) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < tol, "{a:?} vs {b:?}");
        }
    }

    fn sorted_desc(mut v: Vec<f64>) -> Vec<f64> {
        v.sort_by(|a, b| b.total_cmp(a));
        v
    }

    #[test]
    fn cycle_spectrum_is_cosines() {
        for n in [3, 6, 11] {
            let g = Graph::preset(GraphPreset::Cycle, n).unwrap();
            let want = sorted_desc(
                (0..n)
                    .map(|j| (2.0 * PI * j as f64 / n as f64).cos())
                    .collect(),
            );
            close(&values(&g), &want, 1e-12);
        }
        // The lesson's question: the second eigenvalue of a 6-cycle is cos(pi / 3) = 1/2.
        let g = Graph::preset(GraphPreset::Cycle, 6).unwrap();
        assert!((values(&g)[1] - 0.5).abs() < 1e-12);
    }

    #[test]
    fn path_spectrum_is_cosines() {
        for n in [2, 5, 9] {
            let g = Graph::preset(GraphPreset::Path, n).unwrap();
            let want: Vec<f64> = (0..n)
                .map(|j| (PI * j as f64 / (n - 1) as f64).cos())
                .collect();
            close(&values(&g), &want, 1e-12);
        }
    }

    #[test]
    fn complete_graph_spectrum() {
        let n = 7;
        let mut g = Graph {
            positions: vec![(0.0, 0.0); n],
            edges: vec![],
        };
        for a in 0..n {
            for b in a + 1..n {
                g.set_pair(a, b, 2.5).unwrap();
            }
        }
        let mut want = vec![-1.0 / (n - 1) as f64; n];
        want[0] = 1.0;
        close(&values(&g), &want, 1e-12);
    }

    #[test]
    fn grid_and_scenes_presets_are_connected_worlds() {
        for (p, n) in [
            (GraphPreset::Grid, 12),
            (GraphPreset::Grid, 7),
            (GraphPreset::Scenes, 12),
        ] {
            let g = Graph::preset(p, n).unwrap();
            let a = analyse(&g).unwrap();
            assert!(a.notes.is_empty(), "{p:?}: {:?}", a.notes);
            assert!(a.spectrum.values[1] < 1.0 - 1e-9);
        }
        // A 3 x 4 grid is a product of paths: eigenvalues of the normalised adjacency are
        // not simple products (degrees differ), but the count of edges is 3*3 + 2*4.
        assert_eq!(
            Graph::preset(GraphPreset::Grid, 12).unwrap().edges.len(),
            17
        );
    }

    /// min over all non-trivial S of φ(S), by enumeration (n <= 14).
    fn cheeger_constant(pi: &Matrix) -> f64 {
        let m = pi.nrows();
        (1..(1u32 << m) - 1)
            .map(|mask| {
                let s: Vec<bool> = (0..m).map(|i| mask >> i & 1 == 1).collect();
                conductance(pi, &s)
            })
            .fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn cheeger_inequality_holds_and_sweep_is_between() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for trial in 0..40 {
            let n = rng.random_range(3..=10);
            let mut g = Graph::preset(GraphPreset::Cycle, n).unwrap();
            for a in 0..n {
                for b in a..n {
                    if rng.random::<f64>() < 0.3 {
                        g.set_pair(a, b, rng.random::<f64>() * 3.0).unwrap();
                    }
                }
            }
            let an = analyse(&g).unwrap();
            let c = an.cheeger.unwrap();
            let h = cheeger_constant(&an.pi);
            assert!(
                c.lower <= h + 1e-12,
                "trial {trial}: lower {} > h {h}",
                c.lower
            );
            assert!(
                h <= c.sweep + 1e-12,
                "trial {trial}: h {h} > sweep {}",
                c.sweep
            );
            assert!(
                c.sweep <= c.upper + 1e-12,
                "trial {trial}: sweep {} > upper {}",
                c.sweep,
                c.upper
            );
            // The reported cut has the reported conductance.
            let in_s: Vec<bool> = (0..n).map(|i| c.cut.contains(&i)).collect();
            assert!((conductance(&an.pi, &in_s) - c.sweep).abs() < 1e-12);
        }
    }

    #[test]
    fn two_cliques_sweep_finds_the_bridge() {
        let g = Graph::preset(GraphPreset::TwoCliques, 10).unwrap();
        let a = analyse(&g).unwrap();
        let c = a.cheeger.unwrap();
        let side: Vec<usize> = c.cut.clone();
        assert!(
            side == (0..5).collect::<Vec<_>>() || side == (5..10).collect::<Vec<_>>(),
            "{side:?}"
        );
        // Each side has volume 2 * 10 + 1 = 21 (its clique's 10 edges counted from both
        // ends, and the bridge), the cut is the bridge's 1: φ = 1 / 21.
        let total = 2.0 * g.edges.iter().map(|e| e.w).sum::<f64>();
        let vol_half = total / 2.0;
        assert!((c.sweep - (1.0 / vol_half)).abs() < 1e-12, "{}", c.sweep);
        // The Fiedler vector has opposite signs on the two cliques.
        assert!(a.fiedler[..5].iter().all(|&x| x * a.fiedler[0] > 0.0));
        assert!(a.fiedler[5..].iter().all(|&x| x * a.fiedler[0] < 0.0));
    }

    #[test]
    fn isolated_states_are_dropped_and_named() {
        let mut g = Graph::preset(GraphPreset::Cycle, 6).unwrap();
        g.add_state((0.5, 0.5));
        let a = analyse(&g).unwrap();
        assert_eq!(a.states, (0..6).collect::<Vec<_>>());
        assert_eq!(a.notes, vec![GraphNote::Isolated(vec![6])]);
        assert!(
            a.notes[0]
                .explain()
                .contains("State 6 is in no positive pair")
        );
        // Same numbers as the cycle alone.
        close(
            &a.spectrum.values,
            &values(&Graph::preset(GraphPreset::Cycle, 6).unwrap()),
            1e-12,
        );
    }

    #[test]
    fn disconnected_graph_is_explained() {
        let mut g = Graph::preset(GraphPreset::TwoCliques, 8).unwrap();
        let bridge = *g.edges.last().unwrap();
        g.set_pair(bridge.a, bridge.b, 0.0).unwrap();
        let a = analyse(&g).unwrap();
        assert_eq!(
            a.notes,
            vec![GraphNote::Disconnected(vec![
                (0..4).collect(),
                (4..8).collect()
            ])]
        );
        assert!((a.spectrum.values[1] - 1.0).abs() < 1e-9);
        let c = a.cheeger.unwrap();
        assert!(c.sweep.abs() < 1e-12 && c.lower.abs() < 1e-9);
        assert!(a.notes[0].explain().contains("2 components"));
    }

    #[test]
    fn bad_graphs_are_refused_with_the_reason() {
        let empty = Graph {
            positions: vec![],
            edges: vec![],
        };
        assert!(
            analyse(&empty)
                .unwrap_err()
                .to_string()
                .contains("no states")
        );
        let mut g = Graph::preset(GraphPreset::Path, 3).unwrap();
        for e in g.edges.clone() {
            g.set_pair(e.a, e.b, 0.0).unwrap();
        }
        assert!(analyse(&g).unwrap_err().to_string().contains("weight 0"));
        let mut g = Graph::preset(GraphPreset::Path, 3).unwrap();
        g.edges[0].w = -1.0;
        assert!(
            analyse(&g)
                .unwrap_err()
                .to_string()
                .contains("must be finite and >= 0")
        );
        assert!(
            g.set_pair(0, 9, 1.0)
                .unwrap_err()
                .to_string()
                .contains("below 3")
        );
        assert!(g.set_pair(0, 1, f64::NAN).is_err());
        assert!(Graph::preset(GraphPreset::Cycle, 1).is_err());
        assert!(
            GraphPreset::parse("star")
                .unwrap_err()
                .to_string()
                .contains("two-cliques")
        );
    }

    #[test]
    fn editing_keeps_indices_consistent() {
        let mut g = Graph::preset(GraphPreset::Path, 5).unwrap();
        g.remove_state(2);
        assert_eq!(g.n(), 4);
        // 0-1 and 2-3 (the old 3-4) remain.
        assert_eq!(g.weight(0, 1), 1.0);
        assert_eq!(g.weight(2, 3), 1.0);
        assert_eq!(g.weight(1, 2), 0.0);
        g.set_pair(3, 0, 2.0).unwrap();
        assert_eq!(g.weight(0, 3), 2.0);
        g.set_pair(0, 3, 0.5).unwrap();
        assert_eq!(g.edges.iter().filter(|e| same_pair(e, 0, 3)).count(), 1);
        for p in GraphPreset::ALL {
            assert_eq!(GraphPreset::parse(p.name()).unwrap(), p);
        }
    }
}
