//! The objective the theorem is proven for (paper §2, "whitened second-order
//! anti-collapse"): the **centred spectral contrastive loss**, `loss.kind = "spectral"`.
//!
//! # The loss
//! For an encoder f with d outputs, positive pairs (x, x+) ~ Pi and independent x, x' ~ p:
//!
//! `L(f) = -2 E_Pi[f(x)^T f(x+)] + 2 ||E_p f(x)||^2 + E_{x,x'}[(f(x)^T f(x'))^2]`
//!
//! This is the spectral contrastive loss of HaoChen, Wei, Gaidon & Ma (2021) plus the
//! middle term. With G = D^1/2 f (rows sqrt(p(x)) f(x)), K = D^-1/2 Pi D^-1/2 and
//! K' = K - sqrt(p) sqrt(p)^T (K without its trivial pair):
//!
//! `L(f) = ||K' - G G^T||_F^2 - ||K'||_F^2`,
//!
//! because `tr(G^T K G) = E_Pi[f^T f+]`, `||G^T sqrt(p)||^2 = ||E_p f||^2` and
//! `||G^T G||_F^2 = ||E_p f f^T||_F^2 = E[(f^T f')^2]`. HaoChen's loss factorises K
//! itself, whose top eigenvector is the trivial sqrt(p) (a constant f); the middle term
//! removes it, so all d outputs go to the non-trivial spectrum, the theorem's window.
//!
//! # Its optimum and what is identified
//! By Eckart–Young, the minimisers are `G = U_d Lambda_d^1/2 Q` (U_d the top-d
//! non-trivial eigenvectors of K, Lambda_d their eigenvalues, Q any orthogonal d x d),
//! i.e. **f* = F Lambda_d^1/2 Q** with F = D^-1/2 U_d, when lambda_d > 0 and there is a
//! gap lambda_d > lambda_{d+1}; the minimum is `-sum_{j<=d} lambda_j^2`. So the optimum is
//! identified up to a rotation and a *known* column scaling Lambda_d^1/2: its column space
//! is span(F) exactly (compare subspaces with sin-theta), and `f* Lambda^-1/2` is F up to
//! Q (compare with CKA / Procrustes after unscaling).
//!
//! An encoder of *views* meets the view-level kernel instead, which shares K's non-zero
//! spectrum (`crate::scene`'s module docs): its optimum is E[F(s) | view] Q, so at a view
//! that shows everything (an uncorrupted rendering, where the posterior is a point mass)
//! it is **F(s) Q** with no scaling (the Lambda^1/2 of the view-level loss cancels the
//! Lambda^-1/2 of whitening over views). That is what the demo compares: learned
//! embeddings of uncorrupted renderings against F.
//!
//! # The minibatch estimate
//! A batch holds N groups (independent draws of a latent state), each with V views drawn
//! independently given it, so any two views of one group are a positive pair and views of
//! different groups are independent draws from p. With `S_g = sum_v f_gv` and
//! `M_g = sum_v f_gv f_gv^T`, the U-statistics
//!
//! - `E_Pi[f^T f+]  ~  sum_g (||S_g||^2 - sum_v ||f_gv||^2) / (N V (V-1))`
//! - `||E_p f||^2   ~  (||sum_g S_g||^2 - sum_g ||S_g||^2) / (V^2 N (N-1))`
//! - `E[(f^T f')^2] ~  (||sum_g M_g||_F^2 - sum_g ||M_g||_F^2) / (V^2 N (N-1))`
//!
//! are unbiased (each averages products of independent draws only), so the sampled loss is
//! an unbiased estimate of L(f) (tested against the exact expectation). Every piece is a
//! sum over groups ([`SpectralSums`]), so data-parallel shards add them up exactly.

use burn::prelude::*;

use crate::linalg::Matrix;
use crate::{Error, Result};

/// The group sums the minibatch loss needs (module docs), over the groups of one batch or
/// one data-parallel shard; all differentiable.
pub struct SpectralSums<B: Backend> {
    /// Groups N in these sums.
    pub groups: usize,
    /// Views per group V.
    pub views: usize,
    /// `sum_g (||S_g||^2 - sum_v ||f_gv||^2)`: twice the sum over within-group pairs of
    /// f^T f+, `[1]`.
    pub positive: Tensor<B, 1>,
    /// `sum_g S_g = sum_{g,v} f_gv`, `[d]`.
    pub first: Tensor<B, 1>,
    /// `sum_g M_g = sum_{g,v} f_gv f_gv^T`, `[d, d]`.
    pub second: Tensor<B, 2>,
    /// `sum_g ||S_g||^2` (the within-group part of `||first||^2`), `[1]`.
    pub first_within: Tensor<B, 1>,
    /// `sum_g ||M_g||_F^2 = sum_g sum_{v,w} (f_gv^T f_gw)^2`, `[1]`.
    pub second_within: Tensor<B, 1>,
}

/// The group sums of a batch of views.
///
/// # Shapes
/// `stacked [V, N, d]` (view v of group g at `[v, g, :]`) -> [`SpectralSums`]
pub fn spectral_sums<B: Backend>(stacked: Tensor<B, 3>) -> SpectralSums<B> {
    let [v, n, d] = stacked.dims();
    let by_group = stacked.clone().swap_dims(0, 1); // (N, V, d)
    let gram = by_group.clone().matmul(by_group.transpose()); // (N, V, V): f_gv^T f_gw
    let all_pairs = gram.clone().sum(); // sum_g ||S_g||^2
    let diagonal = stacked.clone().powi_scalar(2).sum(); // sum_{g,v} ||f_gv||^2
    let flat = stacked.reshape([v * n, d]); // (V N, d)
    SpectralSums {
        groups: n,
        views: v,
        positive: all_pairs.clone() - diagonal,
        first: flat.clone().sum_dim(0).reshape([d]),
        second: flat.clone().transpose().matmul(flat),
        first_within: all_pairs,
        second_within: gram.powi_scalar(2).sum(),
    }
}

/// The three estimated expectations of the loss (module docs), as `[1]` tensors, and the
/// loss `-2 positive + 2 mean + second`.
pub struct SpectralLoss<B: Backend> {
    /// `-2 positive + 2 mean + second`, `[1]`.
    pub total: Tensor<B, 1>,
    /// Estimate of E_Pi[f(x)^T f(x+)], `[1]`.
    pub positive: Tensor<B, 1>,
    /// Estimate of ||E_p f||^2, `[1]`.
    pub mean: Tensor<B, 1>,
    /// Estimate of E[(f(x)^T f(x'))^2] = ||E_p f f^T||_F^2, `[1]`.
    pub second: Tensor<B, 1>,
}

/// The normalisers `(N V (V - 1), V^2 N (N - 1))` of the U-statistics; errors unless
/// N >= 2 groups and V >= 2 views (the estimate needs two groups and two views of each).
pub fn normalisers(groups: usize, views: usize) -> Result<(f64, f64)> {
    if groups < 2 || views < 2 {
        return Err(Error::invalid(format!(
            "the spectral loss needs at least 2 groups and 2 views per group, got {groups} \
             groups of {views} views"
        )));
    }
    let (n, v) = (groups as f64, views as f64);
    Ok((n * v * (v - 1.0), v * v * n * (n - 1.0)))
}

/// The minibatch loss from group sums (of the whole batch, or summed over shards).
pub fn spectral_loss_from_sums<B: Backend>(s: &SpectralSums<B>) -> Result<SpectralLoss<B>> {
    let (c_pos, c_ind) = normalisers(s.groups, s.views)?;
    let positive = s.positive.clone().div_scalar(c_pos);
    let mean = (s.first.clone().powi_scalar(2).sum() - s.first_within.clone()).div_scalar(c_ind);
    let second =
        (s.second.clone().powi_scalar(2).sum() - s.second_within.clone()).div_scalar(c_ind);
    let total = positive.clone().mul_scalar(-2.0) + mean.clone().mul_scalar(2.0) + second.clone();
    Ok(SpectralLoss {
        total,
        positive,
        mean,
        second,
    })
}

/// The sampled loss of a batch of views (the unbiased estimate of [`population_loss`]).
///
/// # Shapes
/// `stacked [V, N, d]` -> scalars `[1]`
pub fn spectral_loss<B: Backend>(stacked: Tensor<B, 3>) -> Result<SpectralLoss<B>> {
    spectral_loss_from_sums(&spectral_sums(stacked))
}

/// The exact population loss of a tabular representation f (one row per state):
/// `L(f) = -2 tr(f^T Pi f) + 2 ||p^T f||^2 + ||f^T D f||_F^2`, with p the row sums of Pi.
///
/// # Shapes
/// `pi [n, n]` (symmetric, sums to 1), `f [n, d]` -> scalar
pub fn population_loss(pi: &Matrix, f: &Matrix) -> f64 {
    let p = row_sums(pi);
    let pf = mean_row(&p, f);
    let c = second_moment(&p, f);
    -2.0 * (f.transpose() * pi * f).diagonal().column_vector().sum()
        + 2.0 * pf.iter().map(|x| x * x).sum::<f64>()
        + c.norm_l2().powi(2)
}

/// The gradient of [`population_loss`]: `dL/df = -4 Pi f + 4 p (p^T f) + 4 D f (f^T D f)`.
///
/// # Shapes
/// `pi [n, n]`, `f [n, d]` -> `[n, d]`
pub fn population_gradient(pi: &Matrix, f: &Matrix) -> Matrix {
    let p = row_sums(pi);
    let pf = mean_row(&p, f);
    let c = second_moment(&p, f);
    let fc = f * &c;
    let pi_f = pi * f;
    Matrix::from_fn(f.nrows(), f.ncols(), |i, j| {
        -4.0 * pi_f[(i, j)] + 4.0 * p[i] * pf[j] + 4.0 * p[i] * fc[(i, j)]
    })
}

/// p = Pi 1 (the marginal).
fn row_sums(pi: &Matrix) -> Vec<f64> {
    (0..pi.nrows())
        .map(|i| (0..pi.ncols()).map(|j| pi[(i, j)]).sum())
        .collect()
}

/// E_p f = f^T p, `[d]`.
fn mean_row(p: &[f64], f: &Matrix) -> Vec<f64> {
    (0..f.ncols())
        .map(|j| (0..f.nrows()).map(|i| p[i] * f[(i, j)]).sum())
        .collect()
}

/// E_p f f^T = f^T D f, `[d, d]`.
fn second_moment(p: &[f64], f: &Matrix) -> Matrix {
    let df = Matrix::from_fn(f.nrows(), f.ncols(), |i, j| p[i] * f[(i, j)]);
    f.transpose() * df
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::principal_angles;
    use crate::scene::{Modality, SceneConfig, SceneWorld};
    use crate::theory::theorem::analyse;
    use crate::theory::view_kind::ViewKind;
    use burn::backend::NdArray;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The tiny scene world of `demo`'s tests: 2 x 3 x 2 x 2 states, d = 5, clear gaps.
    fn tiny() -> SceneWorld {
        let mut c = SceneConfig::quick(4);
        c.cardinality = [2, 3, 2, 2];
        c.nuisance = [2, 3];
        c.text.factors = [0.78, 0.83, 0.745, 0.71];
        SceneWorld::new(c).unwrap()
    }

    /// Gradient descent on the exact population loss (no sampling) from a random start
    /// reaches span(F) to sin-theta < 1e-4, with the predicted scaling Lambda^1/2 and the
    /// closed-form minimum -sum lambda_j^2; for both view kinds.
    #[test]
    fn gradient_descent_on_the_population_loss_converges_to_f() {
        let w = tiny();
        let d = 5;
        for kind in [ViewKind::Good, ViewKind::Bad] {
            let pi = w.pi(Modality::Image, kind);
            let (kernel, spectrum) = analyse(&pi).unwrap();
            let u = spectrum.top(d, true).unwrap();
            // values[0] is the trivial 1 (Spectrum::trivial_index).
            let lambda: Vec<f64> = spectrum.values[1..=d].to_vec();
            let n = pi.nrows();
            let mut rng = ChaCha8Rng::seed_from_u64(7);
            let mut f = Matrix::from_fn(n, d, |_, _| rng.random::<f64>() - 0.5);
            // Step size in the G = D^1/2 f geometry: dL/dG = D^-1/2 dL/df, so a step of
            // eta on G is a step of eta / p on f (a diagonal preconditioner).
            let eta = 0.05;
            for _ in 0..20_000 {
                let g = population_gradient(&pi, &f);
                f = Matrix::from_fn(n, d, |i, j| f[(i, j)] - eta * g[(i, j)] / kernel.p[i]);
            }
            let g = Matrix::from_fn(n, d, |i, j| kernel.p[i].sqrt() * f[(i, j)]);
            let basis = crate::linalg::svd(g.as_ref())
                .unwrap()
                .u
                .subcols(0, d)
                .to_owned();
            let (sin_op, _, _) = principal_angles(&basis, &u).unwrap();
            assert!(sin_op < 1e-4, "{kind:?}: sin-theta {sin_op:e}");
            // f^T D f = Lambda_d up to the rotation: same eigenvalues.
            let mut ev =
                crate::linalg::sym_eigenvalues(second_moment(&kernel.p, &f).as_ref()).unwrap();
            ev.sort_by(|a, b| b.total_cmp(a));
            for (a, b) in ev.iter().zip(&lambda) {
                assert!(
                    (a - b).abs() < 1e-6,
                    "{kind:?}: scaling {ev:?} vs {lambda:?}"
                );
            }
            let minimum: f64 = -lambda.iter().map(|l| l * l).sum::<f64>();
            let reached = population_loss(&pi, &f);
            assert!((reached - minimum).abs() < 1e-9, "{reached} vs {minimum}");
        }
    }

    /// The analytic gradient equals central finite differences of the loss.
    #[test]
    fn population_gradient_matches_finite_differences() {
        let w = tiny();
        let pi = w.pi(Modality::Text, ViewKind::Bad);
        let n = pi.nrows();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let f = Matrix::from_fn(n, 3, |_, _| rng.random::<f64>() - 0.5);
        let g = population_gradient(&pi, &f);
        let h = 1e-6;
        for (i, j) in [(0, 0), (5, 1), (n - 1, 2), (17, 2)] {
            let shifted = |s: f64| {
                let mut x = f.clone();
                x[(i, j)] += s;
                population_loss(&pi, &x)
            };
            let fd = (shifted(h) - shifted(-h)) / (2.0 * h);
            assert!(
                (fd - g[(i, j)]).abs() < 1e-6 * (1.0 + fd.abs()),
                "{fd} vs {}",
                g[(i, j)]
            );
        }
    }

    /// The sampled minibatch loss (the burn implementation) averages to the exact
    /// population loss. Latent-state model: c ~ r, V views x_v ~ Q(c, .) i.i.d. given c,
    /// so Pi = Q^T diag(r) Q; 20,000 batches of N = 4 groups x V = 3 views of a fixed
    /// tabular f; the mean is within 4 standard errors of L(f), and the biased V-statistic (i = j pairs kept) is not.
    #[test]
    fn the_minibatch_loss_is_an_unbiased_estimate() {
        let (m, n, d, groups, views, batches) = (4, 6, 3, 4, 3, 20_000);
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let r: Vec<f64> = normalised((0..m).map(|_| 0.3 + rng.random::<f64>()).collect());
        let q: Vec<Vec<f64>> = (0..m)
            .map(|_| normalised((0..n).map(|_| 0.05 + rng.random::<f64>()).collect()))
            .collect();
        let pi = Matrix::from_fn(n, n, |a, b| (0..m).map(|c| r[c] * q[c][a] * q[c][b]).sum());
        let f = Matrix::from_fn(n, d, |_, _| 2.0 * rng.random::<f64>() - 1.0);
        let exact = population_loss(&pi, &f);
        let device = Default::default();
        let (mut samples, mut biased) = (Vec::with_capacity(batches), Vec::new());
        for _ in 0..batches {
            // stacked[v, g, :] = f(x_gv).
            let mut data = vec![0f32; views * groups * d];
            for g in 0..groups {
                let c = draw(&r, &mut rng);
                for v in 0..views {
                    let x = draw(&q[c], &mut rng);
                    for j in 0..d {
                        data[(v * groups + g) * d + j] = f[(x, j)] as f32;
                    }
                }
            }
            let t =
                Tensor::<NdArray, 3>::from_data(TensorData::new(data, [views, groups, d]), &device);
            let sums = spectral_sums(t);
            let l = spectral_loss_from_sums(&sums).unwrap();
            samples.push(l.total.into_scalar().elem::<f64>());
            // The V-statistic that keeps i = j pairs in the independence terms.
            let all = (views * views * groups * groups) as f64;
            let v_stat = -2.0 * l.positive.into_scalar().elem::<f64>()
                + 2.0 * sums.first.powi_scalar(2).sum().into_scalar().elem::<f64>() / all
                + sums.second.powi_scalar(2).sum().into_scalar().elem::<f64>() / all;
            biased.push(v_stat);
        }
        let mean = samples.iter().sum::<f64>() / batches as f64;
        let var = samples.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (batches - 1) as f64;
        let se = (var / batches as f64).sqrt();
        assert!(
            (mean - exact).abs() < 4.0 * se,
            "sampled mean {mean} vs exact {exact} (standard error {se})"
        );
        // The test has power: the biased V-statistic, from the same batches, is far outside.
        let biased = biased.iter().sum::<f64>() / batches as f64;
        assert!(
            (biased - exact).abs() > 10.0 * se,
            "the V-statistic {biased} is not told apart from {exact} (standard error {se})"
        );
    }

    #[test]
    fn too_small_batches_are_refused() {
        let device = Default::default();
        let e = |v, n| {
            spectral_loss(Tensor::<NdArray, 3>::ones([v, n, 2], &device))
                .err()
                .map(|e| e.to_string())
        };
        assert!(e(1, 4).unwrap().contains("2 views"));
        assert!(e(2, 1).unwrap().contains("2 groups"));
        assert!(e(2, 2).is_none());
    }

    fn normalised(w: Vec<f64>) -> Vec<f64> {
        let s: f64 = w.iter().sum();
        w.into_iter().map(|x| x / s).collect()
    }

    fn draw(p: &[f64], rng: &mut impl Rng) -> usize {
        let u: f64 = rng.random();
        let mut acc = 0.0;
        for (i, x) in p.iter().enumerate() {
            acc += x;
            if u < acc {
                return i;
            }
        }
        p.len() - 1
    }
}
