//! `prh-native experiment sigreg-population` (issue 19): SIGReg's own optimum on the demo's
//! scene world, from its expected training loss
//! ([`prh_core::experiments::sigreg_population`]). No training run and no backend: a free
//! encoder of views per modality, minimised in f64 on two threads.
//!
//! ```text
//! $ prh-native experiment sigreg-population --out docs/results/sigreg-population
//! lambda 0.05, good views, from the theorem's F: mutual 10-NN 0.958 (predicted 1.000)
//! ...
//! ```

use super::Args;
use crate::output::{ResultsHeader, write_file, write_results};
use anyhow::{Result, bail};
use prh_core::experiments::sigreg_population::{PopulationConfig, Start, markdown, run as solve};
use std::time::Instant;

/// Runs the experiment into `args.out` (default runs/experiments/sigreg-population).
/// `--quick`: the quick demo's world and 150 steps; `--set key=value` sets any field of
/// [`PopulationConfig`] (`steps`, `lr`, `slices`, `lambdas`, `bias`, `kinds`, `starts`,
/// `seed`).
pub fn run(args: &Args) -> Result<()> {
    if args.config.is_some() || args.demo.is_some() || args.data.is_some() || args.from_results {
        bail!(
            "experiment sigreg-population takes no --config, --demo, --data or --from-results: \
             its settings are the demo's, changed with --set (e.g. --set steps=1000 --set \
             'lambdas=[0.05, 0.5]')"
        );
    }
    if args.device != "cpu" {
        bail!(
            "experiment sigreg-population runs in f64 on the CPU (no backend), got --device {}",
            args.device
        );
    }
    let t0 = Instant::now();
    let mut sets: Vec<String> = Vec::new();
    if args.quick {
        sets.extend(["quick=true".to_string(), "steps=150".to_string()]);
    }
    sets.extend(args.set.iter().cloned());
    let cfg = PopulationConfig::from_overrides(&sets)?;
    let out = super::out_dir(args)?;
    let report = solve(&cfg, |p| {
        eprintln!(
            "lambda {}, {} views, from {}: mutual 10-NN {:.3} (predicted {:.3}, null {:.3})",
            p.lambda,
            p.kind.label(),
            match p.start {
                Start::Theorem => "the theorem's F",
                Start::Random => "a random table",
            },
            p.mutual_knn,
            p.predicted,
            p.null
        );
    })?;
    let header = ResultsHeader::new(
        "sigreg-population",
        "built in (the demo's settings)",
        "cpu (f64)",
        t0.elapsed().as_secs_f64(),
    )
    .with_sets(&sets);
    write_results(&out, &header, &report)?;
    write_file(&out.join("report.md"), markdown(&report))?;
    eprintln!("report folder {}: results.json report.md", out.display());
    Ok(())
}
