//! `prh-native experiment captioner` (issue 23): the paper's showcase on the scene world,
//! end to end. The demo's encoders (image and caption JEPAs trained apart; `--demo DIR`
//! reuses a finished `prh-native demo` folder, else they are trained into `OUT/demo`),
//! one text-only decoder per caption encoder (`OUT/decoder_<run>`), then `prh-native
//! caption --curve` for each image/caption pair (`OUT/<run>/`), and `report.md`.
//!
//! ```text
//! $ prh-native experiment captioner --demo runs/demo --out docs/results/captioner
//! ```

use super::Args;
use crate::backend::Devices;
use crate::cmd::{caption, demo, train_decoder};
use crate::output::write_file;
use crate::run_folder::Request;
use anyhow::{Context, Result};
use prh_core::backend::burn::tensor::backend::AutodiffBackend;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The decoder config every caption encoder gets (the file `configs/caption-decoder.toml`).
const DECODER_CONFIG: &str = include_str!("../../../../configs/caption-decoder.toml");

/// The encoder pairs the report covers: (demo run prefix, what it is).
const RUNS: [(&str, &str); 8] = [
    (
        "symbolic_spectral_good",
        "symbols, spectral loss, good views",
    ),
    ("symbolic_spectral_bad", "symbols, spectral loss, bad views"),
    ("symbolic_sigreg_good", "symbols, SIGReg, good views"),
    ("symbolic_sigreg_bad", "symbols, SIGReg, bad views"),
    (
        "spectral_good",
        "pictures and captions, spectral loss, good views",
    ),
    (
        "spectral_bad",
        "pictures and captions, spectral loss, bad views",
    ),
    ("sigreg_good", "pictures and captions, SIGReg, good views"),
    ("sigreg_bad", "pictures and captions, SIGReg, bad views"),
];

/// Pairs of the headline table (the curve has every N).
const HEADLINE_FIT: usize = 16;

/// Runs the experiment into `args.out` (default runs/experiments/captioner).
pub fn run<B: AutodiffBackend>(args: &Args, devices: Devices<B>) -> Result<()> {
    let t0 = Instant::now();
    let out = super::out_dir(args)?;
    let demo_dir = match &args.demo {
        Some(d) => d.clone(),
        None => {
            let dir = out.join("demo");
            demo::run(demo::Args {
                quick: args.quick,
                out: dir.clone(),
                seed: 0,
                image_steps: None,
                text_steps: None,
                lr: None,
                set: vec![],
            })
            .context("training the demo's encoders")?;
            dir
        }
    };
    let config = out.join("caption-decoder.toml");
    write_file(&config, DECODER_CONFIG)?;
    let mut sections = Vec::new();
    for (run, what) in RUNS {
        // The smoke test covers the spectral-loss pairs only (half the time).
        if args.quick && run.contains("sigreg") {
            continue;
        }
        let text_run = demo_dir.join(format!("{run}_text"));
        if !text_run.join("config.toml").exists() {
            eprintln!("{}: not in the demo folder, skipped", text_run.display());
            continue;
        }
        let decoder_run = out.join(format!("decoder_{run}"));
        if decoder_run.exists() {
            std::fs::remove_dir_all(&decoder_run)
                .with_context(|| format!("removing the earlier {}", decoder_run.display()))?;
        }
        let mut sets = vec![format!("decoder.encoder_run={}", text_run.display())];
        if args.quick {
            sets.push("run.steps=150".into());
        }
        sets.extend(args.set.iter().cloned());
        let request = Request {
            config: Some(config.clone()),
            out: Some(decoder_run.clone()),
            resume: None,
            sets,
        };
        train_decoder::train(&request, None, devices)
            .with_context(|| format!("training the decoder of {}", text_run.display()))?;
        let report = out.join(run);
        println!("\n== {what} ({run})");
        caption::run(caption::Args {
            image_run: demo_dir.join(format!("{run}_image")),
            text_run,
            decoder_run,
            fit: Some(HEADLINE_FIT),
            map: "all".into(),
            curve: true,
            beam: None,
            seed: 0,
            out: Some(report.clone()),
            export: None,
        })?;
        sections.push((run, what, report));
    }
    write_file(&out.join("report.md"), report_md(&sections, &demo_dir, t0)?)?;
    println!("\nreport: {}", out.join("report.md").display());
    Ok(())
}

/// One caption run's results.json.
fn read_results(dir: &Path) -> Result<serde_json::Value> {
    let p = dir.join("results.json");
    let bytes = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
    Ok(serde_json::from_slice(&bytes)?)
}

/// A markdown row of one scored method.
fn md_row(r: &serde_json::Value) -> String {
    let s = &r["scores"];
    let a = |i: usize| s["attributes"][i].as_f64().unwrap_or(f64::NAN);
    let extra = match (
        r["match_accuracy"].as_f64(),
        r["match_truth_over_found"].as_f64(),
    ) {
        (Some(m), Some(g)) => format!(" (matched {m:.2}, GW truth/found {g:.2})"),
        (Some(m), None) => format!(" (matched {m:.2})"),
        _ => String::new(),
    };
    format!(
        "| {}{extra} | {} | {:.3} | {:.3} | {:.2} | {:.2} | {:.2} | {:.2} | **{:.2}** |\n",
        r["method"].as_str().unwrap_or("?"),
        r["pairs"],
        s["cider_d"].as_f64().unwrap_or(f64::NAN),
        s["bleu4"].as_f64().unwrap_or(f64::NAN),
        a(0),
        a(1),
        a(2),
        a(3),
        s["all_right"].as_f64().unwrap_or(f64::NAN),
    )
}

/// `report.md`: per encoder pair the headline table and the curve.
fn report_md(sections: &[(&str, &str, PathBuf)], demo: &Path, t0: Instant) -> Result<String> {
    let head = "| method | pairs | CIDEr-D | BLEU-4 | shape | colour | size | position | all four |\n\
                |---|---|---|---|---|---|---|---|---|\n";
    let mut md = format!(
        "# Captioner: image encoder -> one fitted map -> text-only decoder\n\n\
         Encoders from `{}`; per pair a decoder trained on captions only \
         (`configs/caption-decoder.toml`) and `prh-native caption --curve`. Test: a third of \
         the states, rendered afresh; maps fitted on the first N states of the rest. \
         References: the 128 captions the renderer writes for a state. `ceiling`: the \
         decoder on the test states' own caption embeddings; `null`: a rotation fitted on \
         shuffled pairs; `identity`: no map; `random-init image`: the image encoder before training. {:.0} s.\n",
        demo.display(),
        t0.elapsed().as_secs_f64()
    );
    for (run, what, dir) in sections {
        let r = read_results(dir)?;
        md += &format!("\n## {what} (`{run}`)\n\n{head}");
        for row in r["rows"].as_array().into_iter().flatten() {
            md += &md_row(row);
        }
        md += &format!("\nAgainst N (`{run}/curve.svg`):\n\n{head}");
        for row in r["curve"].as_array().into_iter().flatten() {
            md += &md_row(row);
        }
    }
    Ok(md)
}
