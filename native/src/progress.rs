//! Progress of long work on stderr (never stdout, so `--json` output stays clean): an
//! indicatif bar with rate and ETA on a terminal; elsewhere (CI logs, pipes, `nohup`) one
//! status line at a steady interval, `[run] step s/total loss L, r steps/s, x samples/s,
//! eta T`; nothing with `--quiet`.

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static QUIET: AtomicBool = AtomicBool::new(false);

/// Every bar of the process, so runs on several threads at once (the demo's worker pool)
/// draw one line each instead of over each other.
fn bars() -> &'static MultiProgress {
    static BARS: std::sync::OnceLock<MultiProgress> = std::sync::OnceLock::new();
    BARS.get_or_init(MultiProgress::new)
}

/// `--quiet`: no progress at all (errors and results are still printed).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Seconds between status lines when stderr is not a terminal: `PRH_PROGRESS_SECS`
/// (0 prints every update), default 10.
fn interval() -> Duration {
    let secs = std::env::var("PRH_PROGRESS_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(10.0);
    Duration::from_secs_f64(secs)
}

/// `h:mm:ss`.
fn clock(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    format!("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
}

/// Progress of one run of `total` steps.
pub struct Progress {
    label: String,
    total: u64,
    /// Step the run started from (a resumed run's rate counts only the steps done here).
    first: u64,
    /// Samples per step, for the samples/s figure (0: not shown).
    samples_per_step: f64,
    start: Instant,
    bar: Option<ProgressBar>,
    lines: Option<(Duration, Option<Instant>)>,
}

impl Progress {
    /// A bar on a terminal, status lines elsewhere, nothing under `--quiet`.
    pub fn new(label: &str, total: usize, first: usize, samples_per_step: usize) -> Self {
        let quiet = QUIET.load(Ordering::Relaxed);
        let tty = std::io::stderr().is_terminal();
        let bar = (!quiet && tty).then(|| {
            let bar = bars().add(ProgressBar::new(total as u64));
            bar.set_style(
                ProgressStyle::with_template(
                    "{prefix:>12} [{bar:30}] {pos}/{len} {per_sec} eta {eta} {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.set_prefix(label.to_string());
            bar.set_position(first as u64);
            bar
        });
        Progress {
            label: label.to_string(),
            total: total as u64,
            first: first as u64,
            samples_per_step: samples_per_step as f64,
            start: Instant::now(),
            bar,
            lines: (!quiet && !tty).then(|| (interval(), None)),
        }
    }

    /// Step `step` of the run is done, at loss `loss`.
    pub fn update(&mut self, step: usize, loss: f64) {
        self.report(step, Some(loss));
    }

    /// `done` of the `total` items of a job without a loss (inputs embedded, rows
    /// compared, benchmark cases run).
    pub fn count(&mut self, done: usize) {
        self.report(done, None);
    }

    fn report(&mut self, step: usize, loss: Option<f64>) {
        let step = step as u64;
        let loss_text = loss.map_or(String::new(), |l| format!(" loss {l:.4}"));
        if let Some(bar) = &self.bar {
            bar.set_position(step);
            bar.set_message(loss_text.trim().to_string());
        }
        if let Some((every, last)) = &mut self.lines {
            let now = Instant::now();
            let due = last.is_none_or(|t| now.duration_since(t) >= *every);
            if due || step >= self.total {
                *last = Some(now);
                let secs = self.start.elapsed().as_secs_f64().max(1e-9);
                let rate = step.saturating_sub(self.first) as f64 / secs;
                let eta = if rate > 0.0 {
                    clock(self.total.saturating_sub(step) as f64 / rate)
                } else {
                    "?".into()
                };
                let samples = if self.samples_per_step > 0.0 {
                    format!(", {:.0} samples/s", rate * self.samples_per_step)
                } else {
                    String::new()
                };
                let unit = if loss.is_some() { "step" } else { "done" };
                let per = if loss.is_some() { "steps/s" } else { "/s" };
                eprintln!(
                    "[{}] {unit} {step}/{}{loss_text}, {rate:.2} {per}{samples}, eta {eta}",
                    self.label, self.total
                );
            }
        }
    }

    /// The run is over (the bar stays on screen as a record).
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_format() {
        assert_eq!(clock(0.0), "0:00:00");
        assert_eq!(clock(3725.4), "1:02:05");
        assert_eq!(clock(-3.0), "0:00:00");
    }
}
