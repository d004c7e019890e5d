//! `prh-native experiment NAME`: one of the paper's claims on real data, end to end, into
//! a report folder (`results.json`, `report.md`, SVG plots).
//!
//! ```text
//! $ prh-native experiment views-multilingual --quick --out /tmp/vm-quick
//! good seed 0: en ... de ... (12 steps each)
//! ...
//! report folder /tmp/vm-quick: results.json report.md alignment_mutual_knn.svg ...
//! ```
//!
//! `views-multilingual`: per objective and seed, an English encoder trained only on
//! English captions and a German one trained only on German captions; the probe texts
//! (first caption of each fit-split and test-split image) are embedded at step 0, every
//! `eval_every` steps and at the end, and the two languages are compared at each step
//! ([`prh_core::experiments::multilingual::align_point`]).

use crate::backend::Devices;
use crate::output::{ResultsHeader, write_file, write_results};
use anyhow::{Context, Result, bail};
use bilingual::Bilingual;
use prh_core::backend::burn::module::AutodiffModule;
use prh_core::backend::burn::tensor::backend::{AutodiffBackend, Backend};
use prh_core::experiments::multilingual::{
    AlignmentPoint, ExperimentConfig, ExperimentSpec, RecordingTask, SeedStats, bands, seed_stats,
};
use prh_core::experiments::report::{Row, Series, markdown_table, svg_bands};
use prh_core::experiments::spectral_tfidf::fit_seeds;
use prh_core::models::text_encoder::TextEncoder;
use prh_core::text::corpus;
use prh_core::text::tokenizer::TextTokenizer;
use prh_core::theory::view_kind::ViewKind;
use prh_core::train::TrainSummary;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

mod ablation;
mod bilingual;
mod captioner;
mod partial;
mod scaling;
mod sigreg_population;
mod views_vision;
mod vision;

/// Built-in configs: (experiment, full, quick).
const BUILT_IN: [(&str, &str, &str); 4] = [
    (
        "views-multilingual",
        include_str!("../../../configs/experiments/views-multilingual.toml"),
        include_str!("../../../configs/experiments/views-multilingual-quick.toml"),
    ),
    (
        "views-vision",
        include_str!("../../../configs/experiments/views-vision.toml"),
        include_str!("../../../configs/experiments/views-vision-quick.toml"),
    ),
    (
        "scaling",
        include_str!("../../../configs/experiments/scaling.toml"),
        include_str!("../../../configs/experiments/scaling-quick.toml"),
    ),
    (
        "text-ablation",
        include_str!("../../../configs/experiments/text-ablation.toml"),
        include_str!("../../../configs/experiments/text-ablation-quick.toml"),
    ),
];

/// The experiment's config (from `--config` or built in) with `--set` applied, and the
/// name of its source.
fn load_config(args: &Args) -> Result<(String, ExperimentConfig)> {
    let (source, text) = match &args.config {
        Some(p) => (
            p.display().to_string(),
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?,
        ),
        None => {
            let (name, full, quick) = BUILT_IN
                .iter()
                .find(|b| b.0 == args.name)
                .with_context(|| format!("no built-in config for `{}`", args.name))?;
            let suffix = if args.quick { "-quick" } else { "" };
            (
                format!("configs/experiments/{name}{suffix}.toml"),
                (if args.quick { quick } else { full }).to_string(),
            )
        }
    };
    let cfg = ExperimentConfig::from_toml(&source, &text, &args.set)?;
    Ok((source, cfg))
}

/// Where the two-sided experiments read Multi30k (`--data`, `PRH_DATA`, ../shared/data);
/// not needed when `experiment.corpora` names the corpus files.
pub(super) fn corpus_dir(
    args: &Args,
    spec: &prh_core::experiments::multilingual::ExperimentSpec,
) -> Result<PathBuf> {
    match corpus::data_dir(args.data.as_deref()) {
        Some(d) => Ok(d),
        None if !spec.corpora.is_empty() => Ok(PathBuf::new()),
        None => bail!(
            "no data directory: pass --data DIR or set PRH_DATA (Multi30k lives under \
             DIR/multi30k), or name two JSONL corpora in experiment.corpora"
        ),
    }
}

/// The report folder (`--out`, default runs/experiments/NAME[-quick]), created.
fn out_dir(args: &Args) -> Result<PathBuf> {
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from("runs/experiments").join(if args.quick {
            format!("{}-quick", args.name)
        } else {
            args.name.clone()
        })
    });
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    Ok(out)
}

/// Run an experiment of issue 6 and write its report folder.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Experiment: views-multilingual, views-vision, scaling, text-ablation, captioner or
    /// sigreg-population.
    pub name: String,
    /// The smoke-test size (one seed, tiny budget; minutes on a CPU).
    #[arg(long)]
    pub quick: bool,
    /// Experiment config (TOML) instead of the built-in one (configs/experiments/).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Override a field: --set experiment.seeds=[0] or --set train.run.steps=100.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Report folder (default runs/experiments/NAME[-quick]).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Data directory (default $PRH_DATA, else ../shared/data).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Backend: cpu, wgpu or cuda (compiled in with the cargo feature of that name).
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// scaling only: rebuild the analysis (laws, seed spread, sample efficiency, report
    /// and plot) from the runs OUT/results.json recorded, without training; the config's
    /// objectives, budgets and seeds must be the ones trained. For a changed analysis.
    #[arg(long)]
    pub from_results: bool,
    /// captioner only: the encoders of a finished `prh-native demo` folder, instead of
    /// training them into OUT/demo.
    #[arg(long)]
    pub demo: Option<PathBuf>,
}

/// Where an experiment's encoders train: on `devices`, each run keeping its checkpoint
/// and snapshots in its folder under `partial` (`OUT/partial`, [`partial`]) until the
/// experiment has written its report, so a killed experiment continues where it stopped.
pub(super) struct Training<'a, B: Backend> {
    pub devices: Devices<B>,
    pub partial: &'a Path,
}

impl<B: Backend> Clone for Training<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B: Backend> Copy for Training<'_, B> {}

/// One objective x seed: both languages trained, their alignment over steps.
#[derive(Serialize)]
struct RunResult {
    objective: ViewKind,
    seed: u64,
    /// Alignment at every recorded step; the last one carries the permutation null.
    curve: Vec<AlignmentPoint>,
    /// Last logged training loss per language.
    final_loss: [f64; 2],
    /// Training wall time per language, seconds.
    train_s: [f64; 2],
}

/// Final-step spread over seeds for one objective, or one baseline row ("random init":
/// the good-view runs' step 0; "TF-IDF": no training, one value).
#[derive(Serialize)]
struct Summary {
    objective: String,
    mutual_knn: SeedStats,
    null_mean: SeedStats,
    cka: SeedStats,
    r1_a_to_b: SeedStats,
    r1_b_to_a: SeedStats,
    /// Within language A and B: caption 1 vs caption 2 of the test images, mutual k-NN
    /// and R@1 (no second model).
    pair_mutual_knn: [Option<SeedStats>; 2],
    pair_r1: [Option<SeedStats>; 2],
}

impl Summary {
    /// The spread of `points` (one per seed) under `label`.
    fn of(label: &str, points: &[&AlignmentPoint]) -> Result<Self> {
        let stat = |f: &dyn Fn(&AlignmentPoint) -> f64| {
            seed_stats(&points.iter().map(|p| f(p)).collect::<Vec<_>>())
        };
        let pair = |l: usize, f: &dyn Fn(&prh_core::measure::retrieval::PairScores) -> f64| {
            let v: Option<Vec<f64>> = points.iter().map(|p| p.pairs.map(|ps| f(&ps[l]))).collect();
            v.map(|v| seed_stats(&v)).transpose()
        };
        Ok(Summary {
            objective: label.to_string(),
            mutual_knn: stat(&|p| p.mutual_knn)?,
            null_mean: stat(&|p| p.null_mean.unwrap_or(f64::NAN))?,
            cka: stat(&|p| p.cka)?,
            r1_a_to_b: stat(&|p| p.r1_a_to_b)?,
            r1_b_to_a: stat(&|p| p.r1_b_to_a)?,
            pair_mutual_knn: [pair(0, &|p| p.mutual_knn)?, pair(1, &|p| p.mutual_knn)?],
            pair_r1: [pair(0, &|p| p.r1)?, pair(1, &|p| p.r1)?],
        })
    }
}

fn views_multilingual<B: AutodiffBackend>(args: &Args, training: Training<'_, B>) -> Result<()> {
    let t0 = Instant::now();
    let (source, cfg) = load_config(args)?;
    let spec = &cfg.spec;
    let dir = corpus_dir(args, spec)?;
    let out = out_dir(args)?;
    let bi = Bilingual::load(&cfg, &source, &dir)?;
    bi.save_tokenizers(&spec.langs, &out)?;
    let (n_fit, n_test) = (bi.n_fit, bi.n_test);
    eprintln!(
        "{}: {} objectives x {} seeds x 2 languages, {} each on {} training images; \
         probes {n_fit} {} + {n_test} {} images",
        spec.name,
        spec.objectives.len(),
        spec.seeds.len(),
        cfg.describe_steps(&source)?,
        bi.corpora[0].groups.len(),
        spec.fit_split,
        spec.test_split
    );

    let mut runs = Vec::new();
    for &objective in &spec.objectives {
        for &seed in &spec.seeds {
            let export = spec.export && seed == spec.seeds[0];
            let pair = bi.train_pair::<B>(
                &cfg,
                &source,
                objective,
                seed,
                None,
                spec.eval_every,
                training,
                |l, task, summary, config_toml| {
                    if !export {
                        return Ok(());
                    }
                    export_run(
                        &out,
                        objective.label(),
                        &spec.langs[l],
                        task,
                        summary,
                        &bi.toks[l],
                        config_toml,
                        (n_fit, n_test),
                    )
                },
            )?;
            runs.push(RunResult {
                objective,
                seed,
                curve: bi.curve(&cfg, &source, &pair)?,
                final_loss: pair.final_loss,
                train_s: pair.train_s,
            });
        }
    }
    if spec.export {
        let p = out.join("export").join("test_ids.txt");
        let test_ids = bi.ids[n_fit..].join("\n") + "\n";
        write_file(&p, test_ids)?;
    }
    let tfidf = bi.tfidf_point(spec)?;
    let closed = closed_form_points(&bi, spec)?;
    write_report(
        args,
        &cfg,
        &source,
        &out,
        (&runs, &tfidf, &closed),
        n_fit,
        n_test,
        t0,
    )?;
    Ok(())
}

/// The closed-form encoders of `experiment.closed_form_views`, one point per fit
/// ([`fit_seeds`]: good views once, bad views per seed).
fn closed_form_points(bi: &Bilingual, spec: &ExperimentSpec) -> Result<Vec<ClosedFormRun>> {
    let mut out = Vec::new();
    for &kind in &spec.closed_form_views {
        for &seed in fit_seeds(kind, &spec.seeds) {
            let (point, values) = bi.closed_form_point(spec, kind, seed)?;
            out.push(ClosedFormRun {
                objective: kind,
                seed,
                point,
                reached_values: values,
            });
        }
    }
    Ok(out)
}

/// One closed-form encoder pair: its alignment and, per language, the first and last of
/// the d reached values.
#[derive(Serialize)]
struct ClosedFormRun {
    objective: ViewKind,
    seed: u64,
    point: AlignmentPoint,
    reached_values: [[f64; 2]; 2],
}

/// Writes one trained encoder's test-set embeddings (`export/<objective>.<lang>.test.npy`,
/// float32 `[n_test, d]`, rows in `test_ids.txt` order) and, for good views, the encoder
/// itself (`export/good.<lang>.prh.safetensors`): the web app's demo data.
#[allow(clippy::too_many_arguments)]
fn export_run<B: AutodiffBackend>(
    out: &Path,
    objective: &str,
    lang: &str,
    task: &RecordingTask,
    summary: &TrainSummary<TextEncoder<B>>,
    tokenizer: &TextTokenizer,
    config_toml: &str,
    (n_fit, n_test): (usize, usize),
) -> Result<()> {
    let dir = out.join("export");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let last = task
        .snapshots
        .last()
        .context("no final snapshot recorded")?;
    // Recorded rows: fit probes, test probes, then the test images' second captions.
    let d = last.embeddings.len() / (n_fit + 2 * n_test);
    let test = &last.embeddings[n_fit * d..(n_fit + n_test) * d];
    let p = dir.join(format!("{objective}.{lang}.test.npy"));
    prh_core::formats::npy::write_npy(&p, &[n_test, d], test)
        .with_context(|| format!("writing {}", p.display()))?;
    if objective == "good" {
        let bytes = prh_core::tasks::bundle::write_bundle(
            &summary.model.valid(),
            &task.inner.spec,
            tokenizer,
            config_toml,
        )?;
        let p = dir.join(format!("good.{lang}.prh.safetensors"));
        write_file(&p, bytes)?;
    }
    Ok(())
}

/// Reads one score off an alignment point (a plot's y value).
type Score = fn(&AlignmentPoint) -> f64;

/// Final-step spread over seeds, one summary per objective, then the baselines: the
/// random initialisation (step 0 of the good-view runs, else of the first objective's)
/// and `tfidf`.
fn summaries(
    spec_objectives: &[ViewKind],
    runs: &[RunResult],
    tfidf: &AlignmentPoint,
    closed: &[ClosedFormRun],
) -> Result<Vec<Summary>> {
    let mut summaries = Vec::new();
    for &objective in spec_objectives {
        let fin: Vec<&AlignmentPoint> = runs
            .iter()
            .filter(|r| r.objective == objective)
            .filter_map(|r| r.curve.last())
            .collect();
        summaries.push(Summary::of(objective.label(), &fin)?);
    }
    let init_of = if spec_objectives.contains(&ViewKind::Good) {
        ViewKind::Good
    } else {
        spec_objectives[0]
    };
    let init: Vec<&AlignmentPoint> = runs
        .iter()
        .filter(|r| r.objective == init_of)
        .filter_map(|r| r.curve.first())
        .collect();
    summaries.push(Summary::of("random init", &init)?);
    summaries.push(Summary::of("TF-IDF", &[tfidf])?);
    for kind in [ViewKind::Good, ViewKind::Bad] {
        let points: Vec<&AlignmentPoint> = closed
            .iter()
            .filter(|c| c.objective == kind)
            .map(|c| &c.point)
            .collect();
        if !points.is_empty() {
            let label = format!("closed form, {}", kind.label());
            summaries.push(Summary::of(&label, &points)?);
        }
    }
    Ok(summaries)
}

/// One SVG per score (seeds as min-max bands around the mean); their file names.
fn write_plots(cfg: &ExperimentConfig, out: &Path, runs: &[RunResult]) -> Result<Vec<String>> {
    let spec = &cfg.spec;
    let (a, b) = (&spec.langs[0], &spec.langs[1]);
    let metrics: [(&str, &str, Score); 3] = [
        ("mutual_knn", "mutual 10-NN (test)", |p| p.mutual_knn),
        ("cka", "linear CKA (test)", |p| p.cka),
        ("r1", "R@1 en→de after rotation", |p| p.r1_a_to_b),
    ];
    let mut plot_files = Vec::new();
    for (key, label, f) in metrics {
        let mut per_obj = Vec::new();
        for &objective in &spec.objectives {
            let curves: Vec<Vec<(usize, f64)>> = runs
                .iter()
                .filter(|r| r.objective == objective)
                .map(|r| r.curve.iter().map(|p| (p.step, f(p))).collect())
                .collect();
            per_obj.push((objective.label(), bands(&curves)?));
        }
        let series: Vec<Series<'_>> = per_obj
            .iter()
            .map(|(l, p)| Series {
                label: l,
                points: p,
            })
            .collect();
        let title = format!("{}: {a} vs {b} alignment over training", spec.name);
        let name = format!("alignment_{key}.svg");
        write_file(&out.join(&name), svg_bands(&title, label, &series))?;
        plot_files.push(name);
    }
    Ok(plot_files)
}

/// `results.json`, the plots and `report.md` of views-multilingual.
#[allow(clippy::too_many_arguments)]
fn write_report(
    args: &Args,
    cfg: &ExperimentConfig,
    source: &str,
    out: &Path,
    (runs, tfidf, closed): (&[RunResult], &AlignmentPoint, &[ClosedFormRun]),
    n_fit: usize,
    n_test: usize,
    t0: Instant,
) -> Result<()> {
    let spec = &cfg.spec;
    let summaries = summaries(&spec.objectives, runs, tfidf, closed)?;
    let wall_s = t0.elapsed().as_secs_f64();
    let header = ResultsHeader::new(&spec.name, source, &args.device, wall_s);
    let body = serde_json::json!({
        "langs": spec.langs,
        "objective_steps": cfg.steps_by_label(source)?,
        "n_fit": n_fit,
        "n_test": n_test,
        "k": spec.k,
        "summary": summaries,
        "tfidf": tfidf,
        "closed_form": closed,
        "runs": runs,
    });
    write_results(out, &header, &body)?;
    let plot_files = write_plots(cfg, out, runs)?;
    let steps = cfg.describe_steps(source)?;
    let md = report_md(
        args,
        cfg,
        &header,
        &summaries,
        &plot_files,
        &steps,
        (n_fit, n_test),
    );
    write_file(&out.join("report.md"), md)?;
    eprintln!(
        "report folder {}: results.json report.md {} ({wall_s:.1} s)",
        out.display(),
        plot_files.join(" ")
    );
    Ok(())
}

/// `report.md`: what ran, the summary table, what it means, the plots.
fn report_md(
    args: &Args,
    cfg: &ExperimentConfig,
    header: &ResultsHeader,
    summaries: &[Summary],
    plot_files: &[String],
    steps: &str,
    (n_fit, n_test): (usize, usize),
) -> String {
    let spec = &cfg.spec;
    let (a, b) = (&spec.langs[0], &spec.langs[1]);
    let (command, source, wall_s) = (&header.command, &header.config_source, header.wall_s);
    let rows: Vec<Row<'_>> = summaries
        .iter()
        .map(|s| Row {
            label: &s.objective,
            pair_mutual_knn: s.pair_mutual_knn[0],
            pair_r1: s.pair_r1[0],
            mutual_knn: s.mutual_knn,
            null_mean: s.null_mean,
            cka: s.cka,
            r1_a_to_b: s.r1_a_to_b,
            r1_b_to_a: s.r1_b_to_a,
        })
        .collect();
    let mut md = format!(
        "# {}\n\nCommand: `{command}`  \nConfig: `{source}`{}  \nWall time: {wall_s:.0} s on `{}`.\n\n\
         Two encoders per objective and seed, one trained only on {a} captions, one only on {b}\n\
         captions of the same images (never paired in training), {steps} each with the same\n\
         architecture, data and batch. Alignment {a} vs {b} on the first caption of {n_test}\n\
         {} images; the rotation for R@1 is fit on {n_fit} {} images. Cells: mean ± std\n\
         [min, max] over {} seed(s) at the final step; \"null\" is mutual k-NN with the pairing\n\
         shuffled (chance level, about k/(n-1) = {:.3}). R@1 chance is 1/{n_test} = {:.4}.\n\n",
        spec.name,
        if args.set.is_empty() {
            String::new()
        } else {
            format!(" with `--set {}`", args.set.join(" --set "))
        },
        args.device,
        spec.test_split,
        spec.fit_split,
        spec.seeds.len(),
        spec.k as f64 / (n_test.max(2) - 1) as f64,
        1.0 / n_test.max(1) as f64,
    );
    md.push_str(&markdown_table(&rows, a, b));
    md.push_str(
        "\n## What it means\n\nThe paper (sections 3 and 6) predicts that good views align the two \
         languages more than bad views and more than next-token prediction. Read the rows against \
         each other and against the null: a difference smaller than the seed spread (overlapping \
         [min, max]) is not evidence either way, and scores near the null mean the encoders share \
         no neighbourhood structure yet. Observed differences of seed means at the final step:\n\n",
    );
    md.push_str(&differences(summaries, a, b));
    if !spec.closed_form_views.is_empty() {
        md.push('\n');
        md.push_str(&spec.closed_form.describe());
    }
    md.push_str("\n## Plots\n\n");
    for p in plot_files {
        md.push_str(&format!("![{p}]({p})\n\n"));
    }
    md.push_str(
        "Lines: seed mean; bands: seed min–max; step 0 is the random initialisation. \
         Samples seen = step × batch size.\n",
    );
    md
}

/// One line per objective other than good views: its differences of seed means from good
/// views at the final step, and whether their seed ranges overlap.
fn differences(summaries: &[Summary], a: &str, b: &str) -> String {
    let mut md = String::new();
    let good = summaries
        .iter()
        .find(|s| s.objective == ViewKind::Good.label());
    for s in summaries
        .iter()
        .filter(|s| s.objective != ViewKind::Good.label())
    {
        if let Some(g) = good {
            let overlap =
                g.mutual_knn.min <= s.mutual_knn.max && s.mutual_knn.min <= g.mutual_knn.max;
            md.push_str(&format!(
                "- mutual k-NN good − {}: {:+.4} (seed ranges {}); CKA good − {0}: {:+.4}; \
                 R@1 {a}→{b} good − {0}: {:+.4}\n",
                s.objective,
                g.mutual_knn.mean - s.mutual_knn.mean,
                if g.mutual_knn.n < 2 || s.mutual_knn.n < 2 {
                    "not comparable: one seed, no spread"
                } else if overlap {
                    "overlap"
                } else {
                    "do not overlap"
                },
                g.cka.mean - s.cka.mean,
                g.r1_a_to_b.mean - s.r1_a_to_b.mean,
            ));
        }
    }
    md
}

/// The experiment that trains nothing and so runs without a backend (before `dispatch`).
const WITHOUT_BACKEND: &str = "sigreg-population";

/// The experiments `dispatch` runs.
const EXPERIMENTS: [&str; 5] = [
    "views-multilingual",
    "views-vision",
    "scaling",
    "text-ablation",
    "captioner",
];

fn dispatch<B: AutodiffBackend>(args: &Args, devices: Devices<B>) -> Result<()> {
    if args.from_results && args.name != "scaling" {
        bail!("--from-results: only `experiment scaling` rebuilds its analysis from results.json");
    }
    if !EXPERIMENTS.contains(&args.name.as_str()) {
        bail!(
            "experiment: expected one of {}, {WITHOUT_BACKEND}, got `{}`",
            EXPERIMENTS.join(", "),
            args.name
        );
    }
    let partial = partial::partial_dir(&out_dir(args)?);
    let training = Training {
        devices,
        partial: &partial,
    };
    match args.name.as_str() {
        "views-multilingual" => views_multilingual::<B>(args, training),
        "views-vision" => views_vision::run::<B>(args, training),
        "scaling" => scaling::run::<B>(args, training),
        "text-ablation" => ablation::run::<B>(args, training),
        _ => captioner::run::<B>(args, devices),
    }?;
    // The report is written: its runs' checkpoints and snapshots are spent.
    if partial.exists() {
        std::fs::remove_dir_all(&partial)
            .with_context(|| format!("removing the finished runs' {}", partial.display()))?;
    }
    Ok(())
}

pub fn run(args: Args) -> Result<()> {
    // No training run, so no backend: SIGReg's expected loss in f64.
    if args.name == WITHOUT_BACKEND {
        return sigreg_population::run(&args);
    }
    struct Experiment<'a>(&'a Args);
    impl crate::backend::OnTrainBackend for Experiment<'_> {
        type Out = ();
        fn run<B: AutodiffBackend>(self, devices: crate::backend::Devices<B>) -> Result<()> {
            dispatch::<B>(self.0, devices)
        }
    }
    crate::backend::on_train_backend(&args.device, Experiment(&args))
}
