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

/// Prints a line on stderr above the bars (a line printed past indicatif would be
/// overdrawn by the next frame), or plainly when no bar is drawn.
pub fn note(line: &str) {
    if !QUIET.load(Ordering::Relaxed) && std::io::stderr().is_terminal() {
        bars().println(line).ok();
    } else {
        eprintln!("{line}");
    }
}

/// A duration in seconds from the environment variable `name` (a non-negative number),
/// else `default` seconds.
fn env_secs(name: &str, default: f64) -> Duration {
    let secs = std::env::var(name)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(default);
    Duration::from_secs_f64(secs)
}

/// Seconds between status lines when stderr is not a terminal: `PRH_PROGRESS_SECS`
/// (0 prints every update), default 10.
fn interval() -> Duration {
    env_secs("PRH_PROGRESS_SECS", 10.0)
}

/// `h:mm:ss`.
fn clock(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    format!("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
}

/// Seconds a [`Progress::deferred`] job runs before it shows anything:
/// `PRH_PROGRESS_DELAY`, default 2 (short jobs stay silent).
fn delay() -> Duration {
    env_secs("PRH_PROGRESS_DELAY", 2.0)
}

/// How progress is shown: a bar on a terminal, status lines elsewhere, nothing under
/// `--quiet`.
enum Shown {
    Nothing,
    /// The bar, drawn from the first report after the delay.
    Bar(Option<ProgressBar>),
    /// Status lines at `every`, the last one at the given instant.
    Lines {
        every: Duration,
        last: Option<Instant>,
    },
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
    /// Nothing is shown before this much time has passed.
    delay: Duration,
    shown: Shown,
}

impl Progress {
    /// A bar on a terminal, status lines elsewhere, nothing under `--quiet`; shown from
    /// the start (training runs, where the first line confirms the run began).
    pub fn new(label: &str, total: usize, first: usize, samples_per_step: usize) -> Self {
        Self::after(
            label,
            total,
            first,
            samples_per_step,
            Duration::ZERO,
            Instant::now(),
        )
    }

    /// As [`Progress::new`] for a job that may be short (a metrics report, a matching)
    /// and began at `started`: nothing is shown unless it is still running
    /// `PRH_PROGRESS_DELAY` seconds after that; its rate and ETA count from then.
    pub fn deferred(label: &str, total: usize, started: Instant) -> Self {
        Self::after(label, total, 0, 0, delay(), started)
    }

    fn after(
        label: &str,
        total: usize,
        first: usize,
        samples_per_step: usize,
        delay: Duration,
        started: Instant,
    ) -> Self {
        let shown = if QUIET.load(Ordering::Relaxed) {
            Shown::Nothing
        } else if std::io::stderr().is_terminal() {
            Shown::Bar(None)
        } else {
            Shown::Lines {
                every: interval(),
                last: None,
            }
        };
        let mut progress = Progress {
            label: label.to_string(),
            total: total as u64,
            first: first as u64,
            samples_per_step: samples_per_step as f64,
            start: started,
            delay,
            shown,
        };
        if delay.is_zero() {
            progress.draw_bar(first as u64);
        }
        progress
    }

    /// Puts the bar on screen (once), at `pos`.
    fn draw_bar(&mut self, pos: u64) {
        if let Shown::Bar(bar @ None) = &mut self.shown {
            let b = bars().add(ProgressBar::new(self.total));
            b.set_style(
                ProgressStyle::with_template(
                    "{prefix:>12} [{bar:30}] {pos}/{len} {per_sec} eta {eta} {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.set_prefix(self.label.clone());
            b.set_position(pos);
            *bar = Some(b);
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
        // A deferred job that is over (or not yet due) shows nothing.
        if self.start.elapsed() < self.delay {
            return;
        }
        let loss_text = loss.map_or(String::new(), |l| format!(" loss {l:.4}"));
        self.draw_bar(step);
        match &mut self.shown {
            Shown::Nothing | Shown::Bar(None) => {}
            Shown::Bar(Some(bar)) => {
                bar.set_position(step);
                bar.set_message(loss_text.trim().to_string());
            }
            Shown::Lines { every, last } => {
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
    }

    /// The run is over (the bar stays on screen as a record).
    pub fn finish(&self) {
        if let Shown::Bar(Some(bar)) = &self.shown {
            bar.finish();
        }
    }
}

/// Progress of a job in phases ([`prh_core::progress::Tick`]s from the core): one
/// deferred [`Progress`] per phase, labelled `"{label} {phase}"`, the previous one
/// finished when the next phase starts.
pub struct Phases {
    label: String,
    current: Option<(&'static str, Progress)>,
    /// When the last tick (or the job) came: the core ticks after each unit, so a phase's
    /// first tick arrives one unit after the phase began, which was at the tick before.
    last: Instant,
}

impl Phases {
    /// A job starting now.
    pub fn new(label: &str) -> Self {
        Phases {
            label: label.to_string(),
            current: None,
            last: Instant::now(),
        }
    }

    /// One tick of the core's job.
    pub fn tick(&mut self, t: prh_core::progress::Tick) {
        if self.current.as_ref().is_none_or(|(p, _)| *p != t.phase) {
            self.finish();
            let name = format!("{} {}", self.label, t.phase);
            let progress = Progress::deferred(&name, t.total, self.last);
            self.current = Some((t.phase, progress));
        }
        if let Some((_, progress)) = &mut self.current {
            progress.count(t.done);
        }
        self.last = Instant::now();
    }

    /// The job is over.
    pub fn finish(&mut self) {
        if let Some((_, progress)) = self.current.take() {
            progress.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A phase's rate and delay count from when it began (the previous tick, or the
    /// job's start), not from its first tick, which comes only after its first unit.
    #[test]
    fn a_phase_starts_at_the_tick_before_its_first() {
        use prh_core::progress::Tick;
        let mut phases = Phases::new("job");
        let began = phases.last;
        let t = |phase, done| Tick {
            phase,
            done,
            total: 2,
        };
        phases.tick(t("a", 1));
        assert_eq!(phases.current.as_ref().unwrap().1.start, began);
        phases.tick(t("a", 2));
        let end_of_a = phases.last;
        phases.tick(t("b", 1));
        let (phase, progress) = phases.current.as_ref().unwrap();
        assert_eq!((*phase, progress.start), ("b", end_of_a));
    }

    #[test]
    fn clock_format() {
        assert_eq!(clock(0.0), "0:00:00");
        assert_eq!(clock(3725.4), "1:02:05");
        assert_eq!(clock(-3.0), "0:00:00");
    }
}
