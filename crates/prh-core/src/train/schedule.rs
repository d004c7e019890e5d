//! Learning-rate schedule: linear warmup, then cosine decay (paper section 4, "AdamW,
//! lr 5e-4, warmup then cosine decay").
//!
//! A pure function of the step, so a resumed run gets exactly the rates of an
//! uninterrupted one without storing scheduler state.

/// Linear warmup to `peak` over `warmup` steps, then cosine decay to `floor` at `total`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WarmupCosine {
    /// Peak learning rate, reached at the end of warmup.
    pub peak: f64,
    /// Learning rate at the last step.
    pub floor: f64,
    /// Warmup steps.
    pub warmup: usize,
    /// Total steps of the run.
    pub total: usize,
}

impl WarmupCosine {
    /// The rate used for optimiser step `step` (0-based):
    ///
    /// - `step < warmup`: `peak * (step + 1) / warmup` (never 0, so step 0 moves);
    /// - after: `floor + (peak - floor) * (1 + cos(pi * p)) / 2` with
    ///   `p = (step - warmup) / max(1, total - warmup - 1)` clamped to [0, 1].
    pub fn lr(&self, step: usize) -> f64 {
        if step < self.warmup {
            return self.peak * (step + 1) as f64 / self.warmup as f64;
        }
        let span = self.total.saturating_sub(self.warmup + 1).max(1) as f64;
        let p = ((step - self.warmup) as f64 / span).clamp(0.0, 1.0);
        self.floor + (self.peak - self.floor) * 0.5 * (1.0 + (std::f64::consts::PI * p).cos())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warmup_is_linear_and_cosine_ends_at_floor() {
        let s = WarmupCosine {
            peak: 1e-3,
            floor: 1e-5,
            warmup: 10,
            total: 110,
        };
        assert!((s.lr(0) - 1e-4).abs() < 1e-18);
        assert!((s.lr(4) - 5e-4).abs() < 1e-18);
        assert!((s.lr(10) - 1e-3).abs() < 1e-18);
        // Midpoint of the cosine: (peak + floor) / 2.
        let mid = 10 + 99 / 2;
        let expect =
            1e-5 + (1e-3 - 1e-5) * 0.5 * (1.0 + (std::f64::consts::PI * 49.0 / 99.0).cos());
        assert!((s.lr(mid) - expect).abs() < 1e-15);
        assert!((s.lr(109) - 1e-5).abs() < 1e-15);
        // Monotone non-increasing after warmup.
        for t in 10..109 {
            assert!(s.lr(t + 1) <= s.lr(t) + 1e-18);
        }
    }

    #[test]
    fn no_warmup_starts_at_peak() {
        let s = WarmupCosine {
            peak: 2.0,
            floor: 0.0,
            warmup: 0,
            total: 5,
        };
        assert_eq!(s.lr(0), 2.0);
        assert!(s.lr(4).abs() < 1e-12);
    }
}
