//! Pair-free matching (paper §5-6: "find the map from unpaired geometry alone, then
//! zero-shot classify"; ImageNet-100 top-5 64.4%). If f*_1 = Q f*_2 (§2), the two
//! similarity matrices C_A = A A^T and C_B = B B^T agree up to a relabelling of the
//! samples, so the correspondence solves the quadratic assignment problem (QAP)
//!
//!   min_σ  GW(σ) = (1/n^2) Σ_ij (C_A[i, j] - C_B[σ(i), σ(j)])^2
//!
//! (the Gromov–Wasserstein loss of the coupling P_σ/n; with unit rows, cosine distances
//! 2 - 2C give the same problem up to a factor 4). Solver, all seeded and deterministic:
//! 1. entropic Gromov–Wasserstein (Peyré, Cuturi & Solomon 2016) with ε annealing,
//!    log-domain Sinkhorn, as a soft initialisation;
//! 2. FAQ (Vogelstein et al. 2015): Frank–Wolfe over doubly stochastic matrices with an
//!    exact line search, from the GW coupling, the barycentre, the pairing of the
//!    points' sorted-similarity signatures and random starts, each projected to a
//!    permutation by the Hungarian algorithm;
//! 3. refinement of each candidate by alternating Procrustes and assignment, also trimmed
//!    (the rotation fitted on the best-fitting fraction of pairs only, from the FAQ
//!    result and from the signature pairing);
//! 4. robust tabu search (Taillard 1991) over pair swaps from the best candidate and from
//!    `tabu_starts` random permutations (n <= `tabu_max_n`): the steepest swap that is not
//!    tabu (forbidden: putting both swapped elements back where they recently were),
//!    unless it beats the best so far. Unlike 2-opt it walks through local optima; on a
//!    planted ImageNet-100 pair whose true pairing is the optimum it recovers it where the
//!    stages above stop at ~2 % (docs/results.md, "pair-free matching: tabu search");
//! 5. 2-opt swaps on the best permutation (n <= `two_opt_max_n`).
//!
//! The lower bound is Hoffman–Wielandt's: GW(σ) >= (1/n^2) Σ_i (λ_i(C_A) - λ_i(C_B))^2.

use crate::linalg::procrustes;
use crate::linalg::{Matrix, select_rows, sym_eigen};
use crate::progress::{OnTick, tick};
use crate::{Error, Result};

pub use crate::linalg::assignment::linear_assignment;
use faer::MatRef;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Solver settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MatchOptions {
    /// Random FAQ starts besides the GW and barycentre starts.
    pub restarts: usize,
    /// Seed of the random starts.
    pub seed: u64,
    /// Annealing steps of entropic GW (ε from `eps_start` to `eps_end`, relative to the
    /// spread of the cost).
    pub gw_steps: usize,
    pub eps_start: f64,
    pub eps_end: f64,
    /// Frank–Wolfe iterations per FAQ run.
    pub faq_iters: usize,
    /// Alternating Procrustes/assignment rounds per candidate (0 disables).
    pub procrustes_rounds: usize,
    /// Rounds of each trimmed Procrustes refinement ([`trimmed_refine`], one per fraction
    /// in [`TRIM_KEEP`] and candidate; 0 disables).
    pub trim_rounds: usize,
    /// Largest n for the O(n^3)-per-sweep 2-opt polish.
    pub two_opt_max_n: usize,
    /// Swaps per tabu search run ([`tabu_search`], O(n^2) each; 0 disables the stage).
    pub tabu_iters: usize,
    /// Tabu runs from random permutations, besides the one from the best candidate.
    pub tabu_starts: usize,
    /// Largest n for the tabu stage.
    pub tabu_max_n: usize,
}

impl Default for MatchOptions {
    fn default() -> Self {
        MatchOptions {
            restarts: 8,
            seed: 0,
            gw_steps: 30,
            eps_start: 0.5,
            eps_end: 0.005,
            faq_iters: 30,
            procrustes_rounds: 10,
            trim_rounds: 30,
            two_opt_max_n: 400,
            tabu_iters: 50_000,
            tabu_starts: 4,
            tabu_max_n: 200,
        }
    }
}

/// A correspondence and its certificate.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchResult {
    /// Row i of A corresponds to row `perm[i]` of B.
    pub perm: Vec<usize>,
    /// GW(σ) = (1/n^2) Σ_ij (C_A[i,j] - C_B[σi, σj])^2 (lower is better).
    pub objective: f64,
    /// Hoffman–Wielandt lower bound on the objective of any permutation.
    pub bound: f64,
    /// Which start produced the returned permutation.
    pub best_start: String,
}

/// GW(σ) = (1/n^2) Σ_ij (C_A[i, j] - C_B[σ(i), σ(j)])^2.
///
/// # Shapes
/// `ca [n, n]`, `cb [n, n]`, `perm [n]` -> scalar
pub fn qap_objective(ca: MatRef<'_, f64>, cb: MatRef<'_, f64>, perm: &[usize]) -> f64 {
    let n = perm.len();
    let mut s = 0.0;
    for i in 0..n {
        for j in 0..n {
            let d = ca[(i, j)] - cb[(perm[i], perm[j])];
            s += d * d;
        }
    }
    s / (n * n) as f64
}

/// GW(σ) of a pairing of two point sets, from their rows: [`qap_objective`] of the
/// similarity matrices C_A = A A^T and C_B = B B^T that [`match_points`] compares (used to
/// score a known pairing, e.g. the truth, beside the one the solver found).
///
/// # Shapes
/// `a [n, d]`, `b [n, e]`, `perm [n]` -> scalar
pub fn pairing_objective(a: MatRef<'_, f64>, b: MatRef<'_, f64>, perm: &[usize]) -> f64 {
    let (ca, cb) = (a * a.transpose(), b * b.transpose());
    qap_objective(ca.as_ref(), cb.as_ref(), perm)
}

/// Hoffman–Wielandt bound: min_σ GW(σ) >= (1/n^2) Σ_i (λ_i(C_A) - λ_i(C_B))^2, both
/// spectra sorted decreasingly (P C_B P^T has C_B's spectrum; the nearest pair of
/// symmetric matrices with given spectra aligns their eigenbases).
///
/// # Shapes
/// `ca [n, n]`, `cb [n, n]` symmetric -> scalar
pub fn eigen_bound(ca: MatRef<'_, f64>, cb: MatRef<'_, f64>) -> Result<f64> {
    let (ea, eb) = (sym_eigen(ca)?, sym_eigen(cb)?);
    let n = ca.nrows();
    let s: f64 = ea
        .values
        .iter()
        .zip(&eb.values)
        .map(|(a, b)| (a - b) * (a - b))
        .sum();
    Ok(s / (n * n) as f64)
}

/// Log-domain Sinkhorn for uniform marginals: T = diag(e^f) exp(G/ε) diag(e^g) with
/// T 1 = 1/n, T^T 1 = 1/n. `f`, `g` are warm-started potentials.
fn sinkhorn_log(g_over_eps: &Matrix, f: &mut [f64], g: &mut [f64], iters: usize) -> Matrix {
    let n = g_over_eps.nrows();
    let log_n = (n as f64).ln();
    // Row-major copy so both half-steps stream through memory.
    let m: Vec<f64> = (0..n)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .map(|(i, j)| g_over_eps[(i, j)])
        .collect();
    let mut buf = vec![0.0; n];
    let lse = |v: &[f64]| {
        let mx = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        mx + v.iter().map(|x| (x - mx).exp()).sum::<f64>().ln()
    };
    for _ in 0..iters {
        for i in 0..n {
            let row = &m[i * n..(i + 1) * n];
            buf.iter_mut()
                .zip(row.iter().zip(g.iter()))
                .for_each(|(b, (x, gj))| *b = x + gj);
            f[i] = -log_n - lse(&buf);
        }
        let mut err = 0.0f64;
        for j in 0..n {
            for i in 0..n {
                buf[i] = m[i * n + j] + f[i];
            }
            let new = -log_n - lse(&buf);
            err = err.max((new - g[j]).abs());
            g[j] = new;
        }
        // Potentials are logs: a change below 1e-7 moves the coupling by < 1e-7 relative.
        if err < 1e-7 {
            break;
        }
    }
    Matrix::from_fn(n, n, |i, j| (m[i * n + j] + f[i] + g[j]).exp())
}

/// Entropic Gromov–Wasserstein coupling with square loss and uniform weights:
/// T_{t+1} = Sinkhorn(cost = -2 C_A T_t C_B, ε_t) (the constant part of the GW gradient
/// only shifts the Sinkhorn potentials), ε_t annealed geometrically.
///
/// # Shapes
/// `ca [n, n]`, `cb [n, n]` -> coupling `[n, n]` with marginals 1/n
pub fn entropic_gw(ca: MatRef<'_, f64>, cb: MatRef<'_, f64>, opts: &MatchOptions) -> Matrix {
    let n = ca.nrows();
    let mut t = Matrix::from_fn(n, n, |_, _| 1.0 / (n * n) as f64);
    let (mut f, mut g) = (vec![0.0; n], vec![0.0; n]);
    let steps = opts.gw_steps.max(1);
    for step in 0..steps {
        let frac = if steps > 1 {
            step as f64 / (steps - 1) as f64
        } else {
            1.0
        };
        let rel = opts.eps_start * (opts.eps_end / opts.eps_start).powf(frac);
        // n C_A T C_B has O(1) entries for a permutation-like T.
        let grad = ca * &t * cb * (2.0 * n as f64);
        let (lo, hi) = grad
            .col_iter()
            .flat_map(|c| c.iter().copied().collect::<Vec<_>>())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                (lo.min(x), hi.max(x))
            });
        let eps = (rel * (hi - lo)).max(1e-12);
        let scaled = Matrix::from_fn(n, n, |i, j| grad[(i, j)] / eps);
        t = sinkhorn_log(&scaled, &mut f, &mut g, 100);
    }
    t
}

/// tr(C_A X C_B Y^T) for symmetric C_A, C_B (the QAP's bilinear form).
fn bilinear(ca: MatRef<'_, f64>, cb: MatRef<'_, f64>, x: &Matrix, y: &Matrix) -> f64 {
    let m = ca * x * cb;
    (0..m.nrows())
        .map(|i| (0..m.ncols()).map(|j| m[(i, j)] * y[(i, j)]).sum::<f64>())
        .sum()
}

fn perm_matrix(perm: &[usize]) -> Matrix {
    let n = perm.len();
    Matrix::from_fn(n, n, |i, j| if perm[i] == j { 1.0 } else { 0.0 })
}

/// FAQ (Vogelstein et al. 2015): maximise tr(C_A P C_B P^T) over doubly stochastic P by
/// Frank–Wolfe: direction Q = argmax_perm <∇, Q> (Hungarian) with ∇ = 2 C_A P C_B, exact
/// line search on the quadratic f(P + α(Q - P)), then the nearest permutation
/// argmax_σ Σ_i P[i, σ(i)].
///
/// # Shapes
/// `ca [n, n]`, `cb [n, n]`, `p0 [n, n]` doubly stochastic -> `perm [n]`
pub fn faq(
    ca: MatRef<'_, f64>,
    cb: MatRef<'_, f64>,
    p0: Matrix,
    iters: usize,
) -> Result<Vec<usize>> {
    let n = ca.nrows();
    let mut p = p0;
    for _ in 0..iters {
        let grad = ca * &p * cb * 2.0;
        let q = perm_matrix(&linear_assignment(grad.as_ref())?);
        let r = &q - &p;
        // f(P + αR) = f(P) + α b + α^2 a with b = <∇, R>, a = tr(C_A R C_B R^T).
        let b: f64 = (0..n)
            .map(|i| (0..n).map(|j| grad[(i, j)] * r[(i, j)]).sum::<f64>())
            .sum();
        let a = bilinear(ca, cb, &r, &r);
        let alpha = if a < 0.0 {
            (-b / (2.0 * a)).clamp(0.0, 1.0)
        } else if a + b > 0.0 {
            1.0
        } else {
            0.0
        };
        if alpha <= 0.0 || b <= 1e-12 {
            break;
        }
        p = &p + &r * alpha;
        if alpha >= 1.0 {
            break; // reached a vertex: a permutation, a fixed point of the next step
        }
    }
    linear_assignment(p.as_ref())
}

/// Alternating Procrustes and assignment: Q = Procrustes(A, B_σ), σ = argmax_σ Σ_i
/// <A_i Q, B_σ(i)>, repeated while the objective improves.
fn procrustes_refine(
    a: MatRef<'_, f64>,
    b: MatRef<'_, f64>,
    ca: MatRef<'_, f64>,
    cb: MatRef<'_, f64>,
    mut perm: Vec<usize>,
    rounds: usize,
) -> Result<Vec<usize>> {
    let mut obj = qap_objective(ca, cb, &perm);
    for _ in 0..rounds {
        let bs = select_rows(b, &perm);
        let fit = procrustes::fit(a, bs.as_ref())?;
        let scores = a * &fit.q * b.transpose();
        let next = linear_assignment(scores.as_ref())?;
        let next_obj = qap_objective(ca, cb, &next);
        if next_obj >= obj - 1e-15 {
            break;
        }
        (perm, obj) = (next, next_obj);
    }
    Ok(perm)
}

/// The fractions of best-fitting pairs [`trimmed_refine`] fits the rotation on, each tried.
pub const TRIM_KEEP: [f64; 3] = [0.1, 0.2, 0.3];

/// Trimmed Procrustes (trimmed ICP, Chetverikov et al. 2002): Q = Procrustes(A, B_σ)
/// on all pairs, then again on the `keep` fraction S of pairs (at least d + 1) with the
/// smallest residuals ||A_i Q - B_σ(i)||^2, then σ = argmax_σ Σ_i <A_i Q, B_σ(i)>;
/// repeated until σ stops changing, for at most `rounds` rounds. Returns the permutation
/// of lowest GW objective among the input and every round's (the iteration is not
/// monotone: a fit on few pairs can step off the truth it reached), so the result is never
/// worse than the input.
///
/// Why: a candidate whose right pairs are a minority consistent with one rotation, the
/// rest near misses (a state with one factor's value changed, as symmetric worlds
/// produce), pulls the all-pairs fit of [`procrustes_refine`] off the true rotation, and
/// the assignment keeps the misses. The right pairs fit best, so a fit on them alone
/// finds the rotation: on the demo's 128-state captioner pool of the spectral good pair
/// the FAQ candidate (45 % right) went to 100 % with keep 0.1 (docs/results.md).
///
/// # Shapes
/// `a [n, d]`, `b [n, e]`, `ca [n, n]`, `cb [n, n]`, `perm [n]` -> `perm [n]`
pub fn trimmed_refine(
    (a, b): (MatRef<'_, f64>, MatRef<'_, f64>),
    (ca, cb): (MatRef<'_, f64>, MatRef<'_, f64>),
    mut perm: Vec<usize>,
    keep: f64,
    rounds: usize,
) -> Result<Vec<usize>> {
    let n = a.nrows();
    let m = ((keep * n as f64).round() as usize).clamp((a.ncols() + 1).min(n), n);
    let mut best = (qap_objective(ca, cb, &perm), perm.clone());
    for _ in 0..rounds {
        let bs = select_rows(b, &perm);
        let q = procrustes::fit(a, bs.as_ref())?.q;
        let fitted = a * &q;
        let mut order: Vec<(f64, usize)> = (0..n)
            .map(|i| {
                let r: f64 = (0..b.ncols())
                    .map(|j| (fitted[(i, j)] - bs[(i, j)]).powi(2))
                    .sum();
                (r, i)
            })
            .collect();
        order.sort_by(|x, y| x.0.total_cmp(&y.0));
        let kept: Vec<usize> = order[..m].iter().map(|&(_, i)| i).collect();
        let kept_b: Vec<usize> = kept.iter().map(|&i| perm[i]).collect();
        let q = procrustes::fit(
            select_rows(a, &kept).as_ref(),
            select_rows(b, &kept_b).as_ref(),
        )?
        .q;
        let scores = a * &q * b.transpose();
        let next = linear_assignment(scores.as_ref())?;
        if next == perm {
            break;
        }
        let obj = qap_objective(ca, cb, &next);
        // No early stop on a stall: the spectral good pair's pool candidate (doc above)
        // went more than 5 rounds without a lower objective before reaching the truth.
        if obj < best.0 {
            best = (obj, next.clone());
        }
        perm = next;
    }
    Ok(best.1)
}

/// Two symmetric n x n matrices in dense row-major storage, for the O(1)-per-entry inner
/// loops of [`two_opt`] and [`tabu_search`] (faer's checked indexing costs several times
/// more there).
struct Qap {
    n: usize,
    a: Vec<f64>,
    b: Vec<f64>,
}

impl Qap {
    fn new(ca: MatRef<'_, f64>, cb: MatRef<'_, f64>) -> Qap {
        let n = ca.nrows();
        let dense = |c: MatRef<'_, f64>| (0..n * n).map(|k| c[(k / n, k % n)]).collect();
        Qap {
            n,
            a: dense(ca),
            b: dense(cb),
        }
    }

    /// Gain in tr(C_A P C_B P^T) (= n^2 / 2 times the fall in GW) of swapping σ(r) and
    /// σ(s), for symmetric C_A = A, C_B = B:
    ///   2 Σ_{k≠r,s} (A_rk - A_sk)(B_{σs σk} - B_{σr σk}) + (A_rr - A_ss)(B_{σs σs} - B_{σr σr}).
    /// O(n).
    fn swap_gain(&self, perm: &[usize], r: usize, s: usize) -> f64 {
        let n = self.n;
        let (pr, ps) = (perm[r], perm[s]);
        let (ar, as_) = (&self.a[r * n..(r + 1) * n], &self.a[s * n..(s + 1) * n]);
        let (br, bs) = (&self.b[pr * n..(pr + 1) * n], &self.b[ps * n..(ps + 1) * n]);
        let mut gain = (ar[r] - as_[s]) * (bs[ps] - br[pr]);
        for (k, &pk) in perm.iter().enumerate() {
            if k != r && k != s {
                gain += 2.0 * (ar[k] - as_[k]) * (bs[pk] - br[pk]);
            }
        }
        gain
    }
}

/// 2-opt: swap σ(r), σ(s) while tr(C_A P C_B P^T) grows (gain of a swap as in
/// [`tabu_search`]).
pub fn two_opt(ca: MatRef<'_, f64>, cb: MatRef<'_, f64>, perm: &mut [usize], max_sweeps: usize) {
    let q = Qap::new(ca, cb);
    let n = perm.len();
    for _ in 0..max_sweeps {
        let mut improved = false;
        for r in 0..n {
            for s in r + 1..n {
                if q.swap_gain(perm, r, s) > 1e-12 {
                    perm.swap(r, s);
                    improved = true;
                }
            }
        }
        if !improved {
            break;
        }
    }
}

/// Robust tabu search (Taillard 1991) for max_σ tr(C_A P_σ C_B P_σ^T), i.e. min GW(σ),
/// from `perm`, which it replaces by the best permutation visited. The gain of swapping
/// σ(r) and σ(s), for symmetric C_A = A, C_B = B, is
///   2 Σ_{k≠r,s} (A_rk - A_sk)(B_{σs σk} - B_{σr σk}) + (A_rr - A_ss)(B_{σs σs} - B_{σr σr}).
/// Each of `iters` steps makes the swap of largest gain (negative ones too: that is how it
/// leaves a local optimum) among those not tabu; a swap is tabu while both σ(s) at r and
/// σ(r) at s were left fewer than a tenure ago (tenure drawn uniformly in [0.9 n, 1.1 n]
/// every 2n steps). Aspiration, which takes precedence: a swap that would beat the best so
/// far, or that puts an element where it has not been for 5 n^2 steps (the long-term
/// diversification of Taillard's robust tabu search). The gains of all pairs are kept in a
/// table updated in O(n^2) per step: after swapping r and s (σ' the new permutation), a
/// pair u, v disjoint from them changes by 2 (α_u - α_v)(β_u - β_v) with
/// α_k = A_rk - A_sk and β_k = B_{σ's σ'k} - B_{σ'r σ'k} (Taillard's update for symmetric
/// matrices); pairs touching r or s are recomputed. Returns the gain of the returned
/// permutation over the start (>= 0).
///
/// # Shapes
/// `ca [n, n]`, `cb [n, n]` symmetric, `perm [n]`
pub fn tabu_search(
    ca: MatRef<'_, f64>,
    cb: MatRef<'_, f64>,
    perm: &mut [usize],
    iters: usize,
    rng: &mut ChaCha8Rng,
) -> f64 {
    let n = perm.len();
    if n < 3 {
        // Fewer than 3 points: 2-opt already tries every permutation.
        two_opt(ca, cb, perm, 2);
        return 0.0;
    }
    let q = Qap::new(ca, cb);
    let mut gain = vec![0.0; n * n];
    for r in 0..n {
        for s in r + 1..n {
            gain[r * n + s] = q.swap_gain(perm, r, s);
        }
    }
    // tabu[i * n + e] - tenure: the step element e last left position i. Staggered
    // starts (Taillard's) keep the long-term aspiration from firing for every pair at
    // once; offset by `base` to stay unsigned.
    let aspiration = 5 * n * n;
    let base = n * n + aspiration;
    let mut tabu: Vec<usize> = (0..n * n).map(|k| base - k).collect();
    let (lo, hi) = ((9 * n / 10).max(1), (11 * n).div_ceil(10).max(2));
    let mut tenure = rng.random_range(lo..=hi);
    let mut cur = perm.to_vec();
    let (mut alpha, mut beta) = (vec![0.0; n], vec![0.0; n]);
    let (mut value, mut best_value) = (0.0f64, 0.0f64);
    for step in base + 1..=base + iters {
        if (step - base).is_multiple_of(2 * n) {
            tenure = rng.random_range(lo..=hi);
        }
        // (aspired, gain) of the pick so far: an aspired swap beats any other.
        let mut pick: Option<(usize, usize)> = None;
        let (mut pick_aspired, mut pick_gain) = (false, f64::NEG_INFINITY);
        for r in 0..n {
            let row = &gain[r * n..(r + 1) * n];
            for s in r + 1..n {
                let g = row[s];
                let (tr, ts) = (tabu[r * n + cur[s]], tabu[s * n + cur[r]]);
                let allowed = tr < step || ts < step;
                let aspired = tr + aspiration < step
                    || ts + aspiration < step
                    || value + g > best_value + 1e-12;
                let better = match (aspired, pick_aspired) {
                    (true, false) => true,
                    (true, true) => g > pick_gain,
                    (false, false) => allowed && g > pick_gain,
                    (false, true) => false,
                };
                if better {
                    (pick, pick_aspired, pick_gain) = (Some((r, s)), aspired, g);
                }
            }
        }
        let Some((r, s)) = pick else { continue };
        tabu[r * n + cur[r]] = step + tenure;
        tabu[s * n + cur[s]] = step + tenure;
        cur.swap(r, s);
        value += pick_gain;
        if value > best_value + 1e-12 {
            best_value = value;
            perm.copy_from_slice(&cur);
        }
        let (cr, cs) = (cur[r], cur[s]);
        for k in 0..n {
            alpha[k] = q.a[r * n + k] - q.a[s * n + k];
            beta[k] = q.b[cs * n + cur[k]] - q.b[cr * n + cur[k]];
        }
        for u in 0..n {
            if u == r || u == s {
                continue;
            }
            let (au, bu) = (alpha[u], beta[u]);
            let row = &mut gain[u * n..(u + 1) * n];
            for v in u + 1..n {
                if v != r && v != s {
                    row[v] += 2.0 * (au - alpha[v]) * (bu - beta[v]);
                }
            }
        }
        for k in 0..n {
            for x in [r, s] {
                if k != x {
                    let (u, v) = (k.min(x), k.max(x));
                    gain[u * n + v] = q.swap_gain(&cur, u, v);
                }
            }
        }
    }
    best_value
}

/// The signature start: point i's signature is its row of C sorted (its similarities to
/// every point, in order), which neither a rotation of the cloud nor a relabelling of the
/// points changes, so true partners have near-equal signatures. Points are paired by the
/// assignment minimising Σ_i ||s_A(i) - s_B(σ(i))||^2, i.e. maximising
/// Σ_i 2 s_A(i)·s_B(σ(i)) - ||s_B(σ(i))||^2 (||s_A(i)||^2 does not depend on σ).
/// On the demo's 128-state captioner pools it pairs 23-54 % of the points right where
/// random starts pair ~1 % (docs/results.md, "pair-free captioner").
///
/// # Shapes
/// `ca [n, n]`, `cb [n, n]` -> `perm [n]`
fn signature_start(ca: MatRef<'_, f64>, cb: MatRef<'_, f64>) -> Result<Vec<usize>> {
    let n = ca.nrows();
    let sorted = |c: MatRef<'_, f64>| {
        let mut m = c.to_owned();
        for i in 0..n {
            let mut row: Vec<f64> = (0..n).map(|j| c[(i, j)]).collect();
            row.sort_by(f64::total_cmp);
            (0..n).for_each(|j| m[(i, j)] = row[j]);
        }
        m
    };
    let (sa, sb) = (sorted(ca), sorted(cb));
    let cross = &sa * sb.transpose();
    let norm_b: Vec<f64> = (0..n)
        .map(|j| (0..n).map(|k| sb[(j, k)] * sb[(j, k)]).sum())
        .collect();
    let score = Matrix::from_fn(n, n, |i, j| 2.0 * cross[(i, j)] - norm_b[j]);
    linear_assignment(score.as_ref())
}

/// One FAQ start of [`match_points`].
struct Start {
    /// How the result names it (`best_start`).
    name: String,
    /// The doubly stochastic matrix FAQ starts from.
    p0: Matrix,
    /// The permutation the start is, if it is one: also trimmed as it is, since FAQ can
    /// leave the basin its right pairs point to.
    perm: Option<Vec<usize>>,
    /// Whether its candidates get [`trimmed_refine`]: the deterministic starts only, as
    /// trimming every random restart too cost 3.8x the time of the whole search at
    /// n = 1,000 (29 s -> 109 s, 8 restarts, measured).
    trim: bool,
}

/// A random doubly stochastic start (J + S)/2 with S a Sinkhorn-balanced uniform random
/// matrix, as scipy's FAQ does.
fn random_start(n: usize, rng: &mut ChaCha8Rng) -> Matrix {
    let mut s = Matrix::from_fn(n, n, |_, _| rng.random::<f64>());
    for _ in 0..50 {
        for i in 0..n {
            let r: f64 = (0..n).map(|j| s[(i, j)]).sum();
            (0..n).for_each(|j| s[(i, j)] /= r);
        }
        for j in 0..n {
            let c: f64 = (0..n).map(|i| s[(i, j)]).sum();
            (0..n).for_each(|i| s[(i, j)] /= c);
        }
    }
    Matrix::from_fn(n, n, |i, j| 0.5 * (s[(i, j)] + 1.0 / n as f64))
}

/// Finds σ with row i of `a` ↔ row σ(i) of `b` from the two geometries alone (see the
/// module doc for the objective and solver). Rows should be preprocessed (unit norm).
/// Ticks phase `"starts"` after each start is solved (GW, barycentre, then the random
/// restarts).
///
/// # Shapes
/// `a [n, d]`, `b [n, e]` -> `perm [n]`
pub fn match_points(
    a: MatRef<'_, f64>,
    b: MatRef<'_, f64>,
    opts: &MatchOptions,
    on_tick: OnTick<'_>,
) -> Result<MatchResult> {
    let n = a.nrows();
    if b.nrows() != n {
        return Err(Error::invalid(format!(
            "matching needs two sets of one size, got {n} and {}",
            b.nrows()
        )));
    }
    if n < 2 {
        return Err(Error::invalid(format!(
            "matching needs at least 2 points, got {n}"
        )));
    }
    let ca = a * a.transpose();
    let cb = b * b.transpose();
    let (car, cbr) = (ca.as_ref(), cb.as_ref());
    let fixed = |name: &str, p0: Matrix, perm: Option<Vec<usize>>| Start {
        name: name.into(),
        p0,
        perm,
        trim: true,
    };
    let signatures = signature_start(car, cbr)?;
    let mut starts = vec![
        fixed("entropic-gw", entropic_gw(car, cbr, opts) * n as f64, None),
        fixed(
            "barycenter",
            Matrix::from_fn(n, n, |_, _| 1.0 / n as f64),
            None,
        ),
        fixed("signatures", perm_matrix(&signatures), Some(signatures)),
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    for r in 0..opts.restarts {
        starts.push(Start {
            name: format!("random-{r}"),
            p0: random_start(n, &mut rng),
            perm: None,
            trim: false,
        });
    }
    let mut best: Option<(f64, Vec<usize>, String)> = None;
    let mut consider = |perm: Vec<usize>, name: String| {
        let obj = qap_objective(car, cbr, &perm);
        if best.as_ref().is_none_or(|(o, _, _)| obj < *o) {
            best = Some((obj, perm, name));
        }
    };
    let total = starts.len();
    for (done, start) in starts.into_iter().enumerate() {
        // A failure names its start and stage, so a numerical error is traceable.
        let at = |stage: &str| {
            let name = start.name.clone();
            let stage = stage.to_string();
            move |e: Error| {
                let e = match e {
                    Error::Numerical(m) => m,
                    other => other.to_string(),
                };
                Error::Numerical(format!("matching start `{name}`, {stage}: {e}"))
            }
        };
        let perm = faq(car, cbr, start.p0, opts.faq_iters).map_err(at("FAQ"))?;
        let perm = procrustes_refine(a, b, car, cbr, perm, opts.procrustes_rounds)
            .map_err(at("Procrustes refinement"))?;
        // Untrimmed first: a trimmed candidate wins only with a strictly lower objective.
        consider(perm.clone(), start.name.clone());
        if opts.trim_rounds > 0 && start.trim {
            let own = start.perm.iter().map(|p| ("", p));
            for (from, p) in own.chain([("faq+", &perm)]) {
                for keep in TRIM_KEEP {
                    let t = trimmed_refine((a, b), (car, cbr), p.clone(), keep, opts.trim_rounds)
                        .map_err(at("trimmed refinement"))?;
                    consider(t, format!("{}+{from}trim{keep}", start.name));
                }
            }
        }
        tick(on_tick, "starts", done + 1, total);
    }
    // Invariant: `starts` always holds the GW and barycentre starts, so `best` is set.
    let (mut best_obj, mut perm, mut best_start) =
        best.ok_or_else(|| Error::Numerical("no matching start ran".into()))?;
    if opts.tabu_iters > 0 && n <= opts.tabu_max_n {
        let mut tabu_rng = ChaCha8Rng::seed_from_u64(opts.seed ^ 0x7ab0_5eed);
        let runs = 1 + opts.tabu_starts;
        for run in 0..runs {
            let mut p = if run == 0 {
                perm.clone()
            } else {
                use rand::seq::SliceRandom;
                let mut p: Vec<usize> = (0..n).collect();
                p.shuffle(&mut tabu_rng);
                p
            };
            tabu_search(car, cbr, &mut p, opts.tabu_iters, &mut tabu_rng);
            let obj = qap_objective(car, cbr, &p);
            // Strictly lower only: ties keep the earlier (deterministic-start) candidate.
            if obj < best_obj - 1e-15 {
                let from = if run == 0 {
                    format!("{best_start}+tabu")
                } else {
                    format!("tabu-random-{}", run - 1)
                };
                (best_obj, perm, best_start) = (obj, p, from);
            }
            tick(on_tick, "tabu", run + 1, runs);
        }
    }
    if n <= opts.two_opt_max_n {
        two_opt(car, cbr, &mut perm, 50);
    }
    Ok(MatchResult {
        objective: qap_objective(car, cbr, &perm),
        bound: eigen_bound(car, cbr)?,
        perm,
        best_start,
    })
}

/// A seeded uniform random permutation of 0..n (ChaCha8 Fisher–Yates), used to hide
/// one side's order from the solver.
pub fn seeded_permutation(n: usize, seed: u64) -> Vec<usize> {
    use rand::seq::SliceRandom;
    let mut p: Vec<usize> = (0..n).collect();
    p.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    p
}

/// Fraction of rows matched to their true partner: (1/n) Σ_i [perm(i) = truth(i)].
pub fn accuracy(perm: &[usize], truth: &[usize]) -> f64 {
    let hits = perm.iter().zip(truth).filter(|(p, t)| p == t).count();
    hits as f64 / perm.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::Tick;

    /// B = (A R + noise)[π]: a planted permutation of a rotated, slightly noised copy.
    fn planted(n: usize, d: usize, noise: f64, seed: u64) -> (Matrix, Matrix, Vec<usize>) {
        use rand::seq::SliceRandom;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut a = Matrix::from_fn(n, d, |_, _| rng.random::<f64>() - 0.5);
        crate::measure::preprocess::l2_normalize_rows(&mut a);
        let g = Matrix::from_fn(d, d, |_, _| rng.random::<f64>() - 0.5);
        let r = crate::linalg::svd(g.as_ref()).unwrap();
        let rot = &r.u * r.v.transpose();
        let ar = &a * &rot;
        let mut pi: Vec<usize> = (0..n).collect();
        pi.shuffle(&mut rng);
        let mut b = Matrix::from_fn(n, d, |i, j| {
            ar[(pi[i], j)] + noise * (rng.random::<f64>() - 0.5)
        });
        crate::measure::preprocess::l2_normalize_rows(&mut b);
        // Row i of B is row pi[i] of A, so A's row pi[i] matches B's row i.
        let mut truth = vec![0; n];
        for (i, &p) in pi.iter().enumerate() {
            truth[p] = i;
        }
        (a, b, truth)
    }

    #[test]
    fn recovers_a_planted_permutation() {
        let (a, b, truth) = planted(60, 8, 0.02, 11);
        let mut ticks = Vec::new();
        let m = match_points(a.as_ref(), b.as_ref(), &MatchOptions::default(), &mut |t| {
            ticks.push(t)
        })
        .unwrap();
        assert_eq!(accuracy(&m.perm, &truth), 1.0, "start {}", m.best_start);
        let (ca, cb) = (&a * a.transpose(), &b * b.transpose());
        assert!((m.objective - qap_objective(ca.as_ref(), cb.as_ref(), &truth)).abs() < 1e-12);
        assert!(m.bound <= m.objective + 1e-12);
        // One tick per start (GW, barycentre, signatures, the random restarts), counting
        // up to all, then one per tabu run.
        let o = MatchOptions::default();
        let (starts, tabu) = (3 + o.restarts, 1 + o.tabu_starts);
        let phase = |phase, total| (1..=total).map(move |done| Tick { phase, done, total });
        let want: Vec<_> = phase("starts", starts).chain(phase("tabu", tabu)).collect();
        assert_eq!(ticks, want);
    }

    /// Every permutation of 0..n (Heap's algorithm), for brute-force optima.
    fn all_perms(n: usize) -> Vec<Vec<usize>> {
        fn heap(k: usize, p: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
            if k <= 1 {
                out.push(p.clone());
                return;
            }
            for i in 0..k {
                heap(k - 1, p, out);
                p.swap(if k.is_multiple_of(2) { i } else { 0 }, k - 1);
            }
        }
        let mut out = Vec::new();
        heap(n, &mut (0..n).collect(), &mut out);
        out
    }

    #[test]
    fn tabu_search_gain_is_exact_and_reaches_the_brute_force_optimum() {
        // Random symmetric matrices (no planted pairing), n = 8: 40,320 permutations.
        let n = 8;
        let all = all_perms(n);
        assert_eq!(all.len(), 40_320);
        for seed in 0..4u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let x = Matrix::from_fn(n, 3, |_, _| rng.random::<f64>() - 0.5);
            let y = Matrix::from_fn(n, 4, |_, _| rng.random::<f64>() - 0.5);
            let (ca, cb) = (&x * x.transpose(), &y * y.transpose());
            let (car, cbr) = (ca.as_ref(), cb.as_ref());
            let optimum = all
                .iter()
                .map(|p| qap_objective(car, cbr, p))
                .fold(f64::INFINITY, f64::min);
            let mut perm: Vec<usize> = (0..n).rev().collect();
            let before = qap_objective(car, cbr, &perm);
            let gain = tabu_search(car, cbr, &mut perm, 2_000, &mut rng);
            let after = qap_objective(car, cbr, &perm);
            // GW = (||C_A||^2 + ||C_B||^2 - 2 tr(C_A P C_B P^T)) / n^2: the gain the
            // incrementally updated table summed up equals the fall in GW exactly (1e-12),
            // which it would not if a single update of the table were wrong.
            assert!(
                (before - after - 2.0 * gain / (n * n) as f64).abs() < 1e-12,
                "seed {seed}: table gain {gain}, GW {before} -> {after}"
            );
            assert!(
                (after - optimum).abs() < 1e-12,
                "seed {seed}: tabu {after}, optimum {optimum}"
            );
        }
    }

    /// Signatures (sorted rows of C) are invariant to rotation and relabelling, so on a
    /// planted pair with no noise the signature start alone is the truth, and with a
    /// little noise it still pairs most points right (a random start pairs ~1/n).
    #[test]
    fn signature_start_pairs_a_planted_permutation() {
        for (noise, least) in [(0.0, 1.0), (0.02, 0.5)] {
            let (a, b, truth) = planted(60, 8, noise, 5);
            let (ca, cb) = (&a * a.transpose(), &b * b.transpose());
            let perm = signature_start(ca.as_ref(), cb.as_ref()).unwrap();
            let acc = accuracy(&perm, &truth);
            assert!(acc >= least, "noise {noise}: {acc}");
        }
    }

    /// A symmetric world as the demo's: four factors (4 x 4 x 3 x 4 values), each state's
    /// row the factors' centred one-hot codes in an orthonormal basis, scaled 1, 0.9, 0.8,
    /// 0.7 per factor (d = 11); a seeded 128 of the 192 states (as the captioner's pool:
    /// on all 192 a relabelling of a factor's values would fit exactly as well as the
    /// truth); B = A R + noise, rows unit.
    fn product_world(noise: f64, seed: u64) -> (Matrix, Matrix) {
        use rand::seq::SliceRandom;
        let card = [4usize, 4, 3, 4];
        let states: Vec<[usize; 4]> = (0..192)
            .map(|s| [s / 48, (s / 12) % 4, (s / 4) % 3, s % 4])
            .collect();
        let mut cols: Vec<Vec<f64>> = Vec::new();
        for (f, (&c, scale)) in card.iter().zip([1.0, 0.9, 0.8, 0.7]).enumerate() {
            let onehot = Matrix::from_fn(192, c, |i, v| {
                f64::from(u8::from(states[i][f] == v)) - 1.0 / c as f64
            });
            let dec = crate::linalg::svd(onehot.as_ref()).unwrap();
            for k in 0..c - 1 {
                cols.push((0..192).map(|i| scale * dec.u[(i, k)]).collect());
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let f = Matrix::from_fn(192, cols.len(), |i, j| cols[j][i] * 192f64.sqrt());
        let g = Matrix::from_fn(11, 11, |_, _| rng.random::<f64>() - 0.5);
        let r = crate::linalg::svd(g.as_ref()).unwrap();
        let fr = &f * (&r.u * r.v.transpose());
        let mut pick: Vec<usize> = (0..192).collect();
        pick.shuffle(&mut rng);
        pick.truncate(128);
        let mut gauss = || {
            // Box-Muller: one standard normal draw.
            let (u, v): (f64, f64) = (rng.random::<f64>().max(1e-300), rng.random());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        };
        let mut a = Matrix::from_fn(128, 11, |i, j| f[(pick[i], j)] + noise * gauss());
        let mut b = Matrix::from_fn(128, 11, |i, j| fr[(pick[i], j)] + noise * gauss());
        crate::measure::preprocess::l2_normalize_rows(&mut a);
        crate::measure::preprocess::l2_normalize_rows(&mut b);
        (a, b)
    }

    /// From a candidate with 80 % of its pairs scrambled, Procrustes on all pairs stays
    /// short of the truth, and the trimmed fit (on the best-fitting 10-30 %) reaches it:
    /// every pair right, the truth's objective. Never worse than its input.
    #[test]
    fn trimmed_refine_recovers_a_rotation_from_a_minority_of_right_pairs() {
        use rand::seq::SliceRandom;
        let mut rescued = 0;
        for seed in 0..6 {
            let (a, b) = product_world(0.1, seed);
            let (ca, cb) = (&a * a.transpose(), &b * b.transpose());
            let (car, cbr) = (ca.as_ref(), cb.as_ref());
            let mut rng = ChaCha8Rng::seed_from_u64(100 + seed);
            let mut moved: Vec<usize> = (0..128).collect();
            moved.shuffle(&mut rng);
            moved.truncate(102);
            let mut to = moved.clone();
            to.shuffle(&mut rng);
            let mut start: Vec<usize> = (0..128).collect();
            moved.iter().zip(&to).for_each(|(&i, &j)| start[i] = j);
            let truth: Vec<usize> = (0..128).collect();
            let plain =
                procrustes_refine(a.as_ref(), b.as_ref(), car, cbr, start.clone(), 10).unwrap();
            let trimmed: Vec<Vec<usize>> = TRIM_KEEP
                .iter()
                .map(|&k| {
                    trimmed_refine((a.as_ref(), b.as_ref()), (car, cbr), start.clone(), k, 30)
                        .unwrap()
                })
                .collect();
            for t in &trimmed {
                assert!(qap_objective(car, cbr, t) <= qap_objective(car, cbr, &start));
            }
            let best = trimmed
                .iter()
                .min_by(|x, y| qap_objective(car, cbr, x).total_cmp(&qap_objective(car, cbr, y)))
                .unwrap();
            assert_eq!(accuracy(best, &truth), 1.0, "seed {seed}: trimmed");
            assert_eq!(
                qap_objective(car, cbr, best),
                qap_objective(car, cbr, &truth)
            );
            if accuracy(&plain, &truth) < 1.0 {
                rescued += 1;
            }
        }
        // The case the trimmed fit exists for: the all-pairs fit fails on most seeds (4 of
        // 6 when written, at 20-78 % right).
        assert!(
            rescued >= 3,
            "Procrustes on all pairs failed on {rescued} of 6 seeds only"
        );
    }

    #[test]
    fn two_opt_gain_matches_brute_force() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let x = Matrix::from_fn(9, 3, |_, _| rng.random::<f64>() - 0.5);
        let y = Matrix::from_fn(9, 3, |_, _| rng.random::<f64>() - 0.5);
        let (ca, cb) = (&x * x.transpose(), &y * y.transpose());
        let mut perm: Vec<usize> = (0..9).rev().collect();
        let before = qap_objective(ca.as_ref(), cb.as_ref(), &perm);
        two_opt(ca.as_ref(), cb.as_ref(), &mut perm, 100);
        let after = qap_objective(ca.as_ref(), cb.as_ref(), &perm);
        assert!(after <= before);
        // A 2-opt local optimum: no single swap lowers the objective.
        for r in 0..9 {
            for s in r + 1..9 {
                let mut p = perm.clone();
                p.swap(r, s);
                assert!(qap_objective(ca.as_ref(), cb.as_ref(), &p) >= after - 1e-12);
            }
        }
        assert!(eigen_bound(ca.as_ref(), cb.as_ref()).unwrap() <= after + 1e-12);
    }
}
