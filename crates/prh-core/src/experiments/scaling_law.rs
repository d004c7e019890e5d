//! The scaling law of alignment (paper section 6: "a scaling law of alignment predicts
//! unseen runs within seed noise"): alignment as a saturating power law of the number of
//! training samples n,
//!
//!   y(n) = a - b * n^(-c),   c > 0,
//!
//! `a` the asymptote, `b` the gap at n = 1, `c` the rate. Fit by least squares: for a
//! fixed `c` the model is linear in (a, b) (regress y on x = n^-c), so the fit profiles
//! `c` out: a log-spaced grid over `c`, then golden-section refinement of the best cell.
//! Written by hand because it is 60 lines and no well-kept Rust crate does 1-D profiled
//! least squares without pulling in an optimisation framework.

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// A fitted law `y = a - b n^-c` and its residual.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PowerLaw {
    /// Asymptote.
    pub a: f64,
    /// Gap coefficient (positive when y rises with n).
    pub b: f64,
    /// Rate exponent.
    pub c: f64,
    /// Root mean squared residual over the fitted points.
    pub rmse: f64,
}

impl PowerLaw {
    /// `a - b n^-c`.
    pub fn predict(&self, n: f64) -> f64 {
        self.a - self.b * n.powf(-self.c)
    }

    /// The n with `predict(n) = y`: `(b / (a - y))^(1/c)`; `None` when the law never
    /// reaches `y` (y at or above the asymptote of a rising law, or a falling law).
    pub fn samples_to_reach(&self, y: f64) -> Option<f64> {
        (self.b > 0.0 && self.a > y).then(|| (self.b / (self.a - y)).powf(1.0 / self.c))
    }
}

/// Least-squares (a, b) for fixed `c` and its sum of squared residuals.
fn fit_fixed_c(n: &[f64], y: &[f64], c: f64) -> (f64, f64, f64) {
    let x: Vec<f64> = n.iter().map(|&v| v.powf(-c)).collect();
    let m = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / m, y.iter().sum::<f64>() / m);
    let sxx: f64 = x.iter().map(|v| (v - mx).powi(2)).sum();
    let sxy: f64 = x.iter().zip(y).map(|(v, w)| (v - mx) * (w - my)).sum();
    // y = a + slope x with slope = -b.
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let a = my - slope * mx;
    let sse = x
        .iter()
        .zip(y)
        .map(|(v, w)| (w - a - slope * v).powi(2))
        .sum();
    (a, -slope, sse)
}

/// Fits `y = a - b n^-c` to points `(n_i, y_i)` by least squares, with `c` searched in
/// `[1e-3, 3]`.
///
/// # Shapes
/// `n [m]`, `y [m]` (m >= 3, n > 0, at least 2 distinct n) -> law
pub fn fit(n: &[f64], y: &[f64]) -> Result<PowerLaw> {
    if n.len() != y.len() || n.len() < 3 {
        return Err(Error::invalid(format!(
            "scaling law: need >= 3 paired points, got {} n and {} y",
            n.len(),
            y.len()
        )));
    }
    if n.iter().any(|&v| !(v > 0.0 && v.is_finite())) || y.iter().any(|v| !v.is_finite()) {
        return Err(Error::invalid(
            "scaling law: n must be positive and y finite",
        ));
    }
    let (lo, hi, grid) = (1e-3f64.ln(), 3f64.ln(), 200);
    let at = |i: usize| (lo + (hi - lo) * i as f64 / grid as f64).exp();
    let sse = |c: f64| fit_fixed_c(n, y, c).2;
    let best = (0..=grid)
        .min_by(|&i, &j| sse(at(i)).total_cmp(&sse(at(j))))
        .unwrap_or(0);
    // Golden section on ln c over the neighbouring grid cells.
    let (mut l, mut r) = (
        at(best.saturating_sub(1)).ln(),
        at((best + 1).min(grid)).ln(),
    );
    let g = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..100 {
        let (m1, m2) = (r - g * (r - l), l + g * (r - l));
        if sse(m1.exp()) < sse(m2.exp()) {
            r = m2;
        } else {
            l = m1;
        }
    }
    let c = ((l + r) / 2.0).exp();
    let (a, b, s) = fit_fixed_c(n, y, c);
    Ok(PowerLaw {
        a,
        b,
        c,
        rmse: (s / n.len() as f64).sqrt(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_known_parameters() {
        // y = 0.3 - 0.5 n^-0.4 sampled at 6 budgets, no noise.
        let truth = PowerLaw {
            a: 0.3,
            b: 0.5,
            c: 0.4,
            rmse: 0.0,
        };
        let n = [1e2, 3e2, 1e3, 3e3, 1e4, 3e4];
        let y: Vec<f64> = n.iter().map(|&v| truth.predict(v)).collect();
        let f = fit(&n, &y).unwrap();
        assert!((f.a - 0.3).abs() < 1e-6, "{f:?}");
        assert!((f.b - 0.5).abs() < 1e-5, "{f:?}");
        assert!((f.c - 0.4).abs() < 1e-5, "{f:?}");
        assert!(f.rmse < 1e-8);
        // Held-out extrapolation: fit without the largest budget, predict it.
        let g = fit(&n[..5], &y[..5]).unwrap();
        assert!((g.predict(3e4) - y[5]).abs() < 1e-6, "{g:?}");
    }

    #[test]
    fn samples_to_reach_inverts_predict() {
        let f = PowerLaw {
            a: 0.2,
            b: 1.0,
            c: 0.5,
            rmse: 0.0,
        };
        // 0.2 - n^-0.5 = 0.1  <=>  n = 100.
        assert!((f.samples_to_reach(0.1).unwrap() - 100.0).abs() < 1e-9);
        assert!(
            f.samples_to_reach(0.2).is_none(),
            "the asymptote is never reached"
        );
        let falling = PowerLaw { b: -1.0, ..f };
        assert!(falling.samples_to_reach(0.1).is_none());
    }

    #[test]
    fn bad_input_is_refused() {
        assert!(fit(&[1.0, 2.0], &[0.1, 0.2]).is_err());
        assert!(fit(&[1.0, 2.0, 0.0], &[0.1, 0.2, 0.3]).is_err());
        assert!(fit(&[1.0, 2.0, 3.0], &[0.1, f64::NAN, 0.3]).is_err());
    }
}
