//! The spectral lab's inputs: one [`Settings`], read from and written to the URL, and the
//! CLI command that prints the same numbers.

use crate::widgets::url_state;
use prh_core::theory::world::Preset;

/// Largest number of states the controls allow (1,000 observations for the two-nuisance
/// presets): a new world decomposes its n x n state kernel K_W (~0.3 s at 500 states in
/// headless Chromium) and draws n k x n k heatmaps.
pub const MAX_N: usize = 500;
/// The world the lab opens on: a ring, whose positive-pair graph is connected (one
/// eigenvalue 1) for every seed and n.
const DEFAULT_PRESET: Preset = Preset::Ring;

/// The lab's inputs (each one a URL query key).
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// World preset (`preset`).
    pub preset: Preset,
    /// Number of states (`n`).
    pub n: usize,
    /// Seed of p(z), q(u) and cluster sizes (`seed`).
    pub seed: u64,
    /// Share of bad views in modality B's positive pairs (`alpha`): 0 good, 1 bad.
    pub alpha: f64,
    /// Representation dimension (`d`).
    pub d: usize,
    /// Leave the trivial eigenpair (lambda = 1, sqrt p) out of the top d (`skip`).
    pub skip_trivial: bool,
}

/// Reads `key` from the URL; a value that is present but does not parse, or fails
/// `valid`, is replaced by `default` with a note saying so (`what`: the accepted values).
fn url_value<T: std::str::FromStr + ToString>(
    key: &str,
    default: T,
    valid: impl Fn(&T) -> bool,
    what: &str,
    notes: &mut Vec<String>,
) -> T {
    let Some(raw) = url_state::params().and_then(|p| p.get(key)) else {
        return default;
    };
    match raw.parse::<T>() {
        Ok(v) if valid(&v) => v,
        _ => {
            notes.push(format!(
                "{key} = {raw} in the link is not {what}: using {key} = {}.",
                default.to_string()
            ));
            default
        }
    }
}

impl Settings {
    /// The settings in the URL, and a note for each value that was replaced.
    pub fn from_url() -> (Settings, Vec<String>) {
        let mut notes = Vec::new();
        let preset = match url_state::params().and_then(|p| p.get("preset")) {
            None => DEFAULT_PRESET,
            Some(name) => Preset::parse(&name).unwrap_or_else(|e| {
                notes.push(format!("{e}: using {}.", DEFAULT_PRESET.name()));
                DEFAULT_PRESET
            }),
        };
        let settings = Settings {
            // A connected world by default: `clusters` is disconnected (eigenvalue 1 once
            // per cluster), which contradicts the first thing the spectrum card teaches.
            preset,
            n: url_value(
                "n",
                12_usize,
                |&n| (2..=MAX_N).contains(&n),
                &format!("a number of states from 2 to {MAX_N}"),
                &mut notes,
            ),
            seed: url_value("seed", 0_u64, |_| true, "a whole number >= 0", &mut notes),
            alpha: url_value(
                "alpha",
                0.0_f64,
                |a| (0.0..=1.0).contains(a),
                "a number from 0 to 1",
                &mut notes,
            ),
            d: url_value("d", 2_usize, |&d| d >= 1, "a whole number >= 1", &mut notes),
            skip_trivial: url_value("skip", 1_u8, |&v| v <= 1, "0 or 1", &mut notes) != 0,
        };
        (settings, notes)
    }

    /// The CLI command that prints the same spectrum (shown under the figure).
    pub fn cli(&self) -> String {
        format!(
            "prh-native spectral --world {} --n {} --seed {} --views mix --alpha {} --dim {}{}",
            self.preset.name(),
            self.n,
            self.seed,
            self.alpha,
            self.d,
            if self.skip_trivial {
                " --skip-trivial"
            } else {
                ""
            }
        )
    }
}
