//! `prh-native demo`: the main job, on a world built in (no data, no network, CPU).
//!
//! ```text
//! cargo run --release -p prh-native -- demo [--quick] [--out runs/demo] [--seed 0]
//! ```
//!
//! 1. The scene world's exact theory for good and bad views: spectra, gaps, and the
//!    image-vs-text sin-theta next to the Davis–Kahan bound.
//! 2. Four JEPAs trained separately (image and caption encoders, good and bad views; no
//!    pair ever crosses modalities), through the shared training loop.
//! 3. A table: learned vs predicted, good vs bad; and a report folder: `results.json`,
//!    SVG plots, `tokenizer.json`, embeddings (`.npy`) for the web app, and one run folder
//!    per encoder (`good_image/` ...: the `prh-native train` layout, resumable there).

use super::train_scene::run_in_folder;
use crate::backend::{DemoBackend, demo_devices};
use crate::output::{write_file, write_json};
use crate::run_folder::RunFolder;
use anyhow::{Context, Result};
use prh_core::experiments::convergence;
use prh_core::experiments::demo::{
    Baseline, Convergence, CurvePoint, DemoConfig, KindResults, KindTheory, evaluate,
    evaluate_baseline, evaluate_raw_baseline, kind_theory,
};
use prh_core::scene::render_image::{IMAGE_SIZE, render, to_rgb8};
use prh_core::scene::render_text::caption;
use prh_core::scene::{Modality, SceneWorld};
use prh_core::tasks::scene::{Observation, SceneModel, untrained_model};
use prh_core::theory::view_kind::ViewKind;
use prh_core::train::config::LossKind;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The inference backend of the demo's trained (and untrained) encoders.
type Inner =
    <DemoBackend as prh_core::backend::burn::tensor::backend::AutodiffBackend>::InnerBackend;

/// Good vs bad views on a two-modality scene world: predicted vs learned.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A smaller world and short training (under a minute; used by the tests).
    #[arg(long)]
    pub quick: bool,
    /// Report folder (created if missing; files of other runs are never touched).
    #[arg(long, default_value = "runs/demo")]
    pub out: PathBuf,
    /// Seed of the world, the views and the encoders.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Override the step budget of each picture encoder (default: 1500, quick 40; runs stop
    /// earlier on their loss's plateau).
    #[arg(long)]
    pub image_steps: Option<usize>,
    /// Override the step budget of each caption encoder (default: 2000, quick 40; the
    /// spectral bad-view runs train 3x it).
    #[arg(long)]
    pub text_steps: Option<usize>,
    /// Override the peak learning rate of every encoder (default: 2e-3, captions 1.2e-2).
    #[arg(long)]
    pub lr: Option<f64>,
    /// Override a field of the image and caption runs' config (the scene config of
    /// `prh-native train`, e.g. --set loss.slices=128; repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

fn fmt_bound(b: Option<f64>) -> String {
    b.map_or("n/a (no gap)".into(), |x| format!("{x:.3}"))
}

fn print_theory(t: &KindTheory) {
    let what = match t.kind {
        ViewKind::Good => "good views (two renderings of one scene)",
        ViewKind::Bad => "bad views (two corruptions of one rendering)",
        ViewKind::NextToken => "next-token pairs (a prefix and its continuation)",
    };
    println!("\n{what}, d = {}", t.d);
    for m in [&t.image, &t.text] {
        let ev: Vec<String> = m.eigenvalues.iter().map(|v| format!("{v:.3}")).collect();
        println!(
            "  {:<5} eigenvalues {}  gap after d: {:.4}",
            format!("{:?}", m.modality),
            ev.join(" "),
            m.gap
        );
    }
    for m in [&t.image, &t.text] {
        if !m.unique {
            println!(
                "  {:?}: the gap after d = {} is zero: the top-d subspace is not unique, so \
                 the theorem gives no unique representation (uniqueness does not hold); F \
                 below is one arbitrary basis of a degenerate window",
                m.modality, t.d
            );
        }
    }
    let c = &t.cross;
    println!(
        "  image vs text (predicted): sin-theta op {:.3}, fro {:.3}; Davis-Kahan bound {}, Yu-Wang-Samworth {}",
        c.sin_theta_op,
        c.sin_theta_fro,
        fmt_bound(c.davis_kahan_bound),
        fmt_bound(c.yws_bound)
    );
}

fn print_table(results: &[KindResults], baselines: &[Baseline]) {
    println!(
        "\n{:<9} {:<9} {:<6} {:<15} {:>10} {:>16} {:>6} {:>6} {:>20} {:>20}",
        "observed",
        "loss",
        "views",
        "",
        "mutual-kNN",
        "(null)",
        "CKA",
        "R@1",
        "image vs F",
        "text vs F"
    );
    let vs = |v: &prh_core::scene::theory::LearnedVsTheory| {
        format!("CKA {:.2} sin {:.2}", v.cka, v.sin_theta_op)
    };
    for r in results {
        let rows = [
            (
                "learned",
                &r.learned,
                Some((vs(&r.image_vs_theory), vs(&r.text_vs_theory))),
            ),
            ("predicted", &r.predicted, None),
        ];
        for (name, a, against) in rows {
            let (iv, tv) = against.unwrap_or_default();
            println!(
                "{:<9} {:<9} {:<6} {:<15} {:>10.3} {:>16} {:>6.3} {:>6.3} {:>20} {:>20}",
                r.observation.name(),
                r.loss.name(),
                r.kind.label(),
                name,
                a.mutual_knn,
                format!("{:.3}+-{:.3}", a.mutual_knn_null[0], a.mutual_knn_null[1]),
                a.cka,
                a.r1_image_to_text,
                iv,
                tv
            );
        }
        if !r.theorem_applies {
            println!(
                "          ^ no gap after d: the top-d subspace is not unique, so the theorem \
                 predicts no unique representation and this is no test of alignment"
            );
        }
    }
    for b in baselines {
        let a = &b.learned;
        println!(
            "{:<9} {:<9} {:<6} {:<15} {:>10.3} {:>16} {:>6.3} {:>6.3} {:>20} {:>20}",
            b.observation.name(),
            "-",
            b.kind.label(),
            b.encoder.label(b.observation),
            a.mutual_knn,
            format!("{:.3}+-{:.3}", a.mutual_knn_null[0], a.mutual_knn_null[1]),
            a.cka,
            a.r1_image_to_text,
            vs(&b.image_vs_theory),
            vs(&b.text_vs_theory)
        );
    }
    if let Some(r) = results.first() {
        println!(
            "(R@1: captions ranked for {} held-out pictures after a rotation fit on {} states; chance {:.3}; \
             sin: ||sin Theta||_op of the encoder's top-d subspace to span(F))",
            r.learned.n_test, r.learned.n_fit, r.learned.r1_chance
        );
    }
    if results.iter().any(|r| r.loss == LossKind::Sigreg) {
        println!(
            "(predicted: the theorem's F, proven for whitened second-order objectives such as \
             `spectral`, not for SIGReg; SIGReg's own optimum on the demo's world: \
             prh-native experiment sigreg-population [--quick] [--set seed=S])"
        );
    }
}

/// Each encoder's reached spectrum beside K's (`SpectrumReached`): which predicted
/// directions it holds (rho = lambda) and which it misses (rho below lambda).
fn print_spectra(results: &[KindResults]) {
    let row = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.2}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!(
        "\nspectrum reached on {} positive pairs of each encoder's own views (rho_i <= lambda_{{i+1}} of K; \
         equal when the encoder holds that predicted direction)",
        results.first().map_or(0, |r| r.image_spectrum.pairs)
    );
    for r in results {
        for (m, sp) in [("image", &r.image_spectrum), ("caption", &r.text_spectrum)] {
            println!(
                "{:<34} reached {}",
                format!("{} {m}", r.label()),
                row(&sp.reached)
            );
            println!("{:<34} K       {}", "", row(&sp.predicted));
        }
    }
}

/// Which of K's eigenspaces each encoder holds (`eigenspace_shares`): where sin-theta
/// says a predicted direction is missed, which one, and what took its place.
fn print_eigenspaces(results: &[KindResults]) {
    println!(
        "\neigenspaces of K each encoder holds (dimensions held / in F; 'outside F': what took \
         the place of a missed direction)"
    );
    for r in results {
        for (m, vs) in [
            ("image", &r.image_vs_theory),
            ("caption", &r.text_vs_theory),
        ] {
            println!(
                "{:<34} {}",
                format!("{} {m}", r.label()),
                prh_core::scene::theory::describe_shares(&vs.eigenspaces)
            );
        }
    }
}

/// The folder name of one run, e.g. `spectral_good_image` (rendered) or
/// `symbolic_spectral_good_image`.
fn run_name(observation: Observation, loss: LossKind, kind: ViewKind, m: Modality) -> String {
    let m = match m {
        Modality::Image => "image",
        Modality::Text => "text",
    };
    let prefix = match observation {
        Observation::Rendered => String::new(),
        other => format!("{}_", other.name()),
    };
    format!("{prefix}{}_{}_{m}", loss.name(), kind.label())
}

/// A run's convergence: its steps, whether the plateau stopped it, and its evaluations
/// against the prediction (the `eval` records of its metrics.jsonl).
fn convergence(dir: &Path, steps: usize) -> Result<Convergence> {
    let path = dir.join("metrics.jsonl");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Convergence {
        steps,
        ..Convergence::default()
    };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let rec: serde_json::Value = serde_json::from_str(line)
            .with_context(|| format!("{}: a line is not JSON", path.display()))?;
        out.plateau |= rec["plateau"].as_bool().unwrap_or(false);
        let eval = &rec["eval"];
        if let (Some(step), Some(loss), Some(cka), Some(sin)) = (
            rec["step"].as_u64(),
            rec["loss"].as_f64(),
            eval["cka_to_theory"].as_f64(),
            eval["sin_theta_to_theory"].as_f64(),
        ) {
            out.curve.push(CurvePoint {
                step: step as usize,
                loss,
                cka_to_theory: cka,
                sin_theta_to_theory: sin,
            });
        }
    }
    Ok(out)
}

/// One encoder of the demo: the pair (objective, observation, view kind) it belongs to
/// and its modality.
#[derive(Debug, Clone, Copy)]
struct Job {
    observation: Observation,
    loss: LossKind,
    /// Index into the view kinds' theories.
    theory: usize,
    m: Modality,
}

impl Job {
    /// Rank of its expected cost, costliest first (measured: a picture run is ~4x a
    /// caption run and ~10x a symbol run; the baselines, [`Work::Baseline`], rank between
    /// captions and symbols): the pool starts the long runs first so the workers finish
    /// together.
    fn cost_rank(&self) -> u8 {
        match (self.observation, self.m) {
            (Observation::Rendered, Modality::Image) => 0,
            (Observation::Rendered, Modality::Text) => 1,
            _ => 3,
        }
    }
}

/// One item of the demo's pool: an encoder to train (slot in report order, job), or
/// baseline `i` of [`baseline_cases`] to measure. The baselines need no trained encoder,
/// so they share the training pool instead of running after it (20 s of a 211 s demo on
/// the 2-core machine of 7 December, most of it the random-init picture encoders'
/// closed-form heads, on as many pairs as the trained ones get).
#[derive(Debug, Clone, Copy)]
enum Work {
    Train(usize, Job),
    Baseline(usize),
}

impl Work {
    fn cost_rank(&self) -> u8 {
        match self {
            Work::Train(_, job) => job.cost_rank(),
            Work::Baseline(_) => 2,
        }
    }
}

/// A trained encoder and how it converged.
type Trained = (SceneModel<Inner>, Convergence);

/// What a [`Work`] item gives back.
enum Done {
    Trained(Box<Trained>),
    Baselines(Vec<Baseline>),
}

/// Trains one encoder in its run folder, with `replicas` data-parallel replicas.
fn train_one(
    args: &Args,
    cfg: &DemoConfig,
    t: &KindTheory,
    job: Job,
    replicas: usize,
) -> Result<Trained> {
    let name = run_name(job.observation, job.loss, t.kind, job.m);
    let mut run_cfg = cfg.run_config(job.m, t.kind, job.loss, job.observation);
    run_cfg.run.data_parallel = replicas;
    let folder = RunFolder::replace(run_cfg, args.out.join(&name))?;
    let out = run_in_folder(&folder, demo_devices(), Some(&name))
        .with_context(|| format!("training the {}-view {name} encoder", t.kind.label()))?;
    Ok((
        out.trained.model,
        convergence(&folder.dir, out.trained.steps)?,
    ))
}

/// Evaluates one pair of trained encoders against the theory; writes their paired
/// embeddings (and, for good-view captions, the tokenizer the web app reads).
#[allow(clippy::too_many_arguments)]
fn evaluate_pair(
    args: &Args,
    cfg: &DemoConfig,
    world: &SceneWorld,
    t: &KindTheory,
    (loss, observation): (LossKind, Observation),
    (image, image_training): Trained,
    (text, text_training): Trained,
    device: &prh_core::backend::burn::tensor::Device<DemoBackend>,
    emb_dir: &Path,
) -> Result<KindResults> {
    let k = t.kind.label();
    // Every caption run reads the world's one tokenizer; one pair writes it (pairs are
    // evaluated on several threads at once).
    let writer = cfg.losses.first() == Some(&loss);
    if let (SceneModel::Caption(c), ViewKind::Good, true) = (&text, t.kind, writer) {
        write_file(&args.out.join("tokenizer.json"), &c.1.to_json()?)?;
    }
    let mut r = evaluate(loss, observation, world, t, &image, &text, cfg, device)
        .with_context(|| format!("evaluating the {k}-view {} encoders", loss.name()))?;
    r.image_training = image_training;
    r.text_training = text_training;
    for (m, x) in [
        (Modality::Image, &r.image_embeddings),
        (Modality::Text, &r.text_embeddings),
    ] {
        let file = emb_dir.join(format!("{}.npy", run_name(observation, loss, t.kind, m)));
        super::spectral::write_npy(&file, x)?;
    }
    Ok(r)
}

/// The demo's config: full or `--quick`, with the step, learning-rate and `--set`
/// overrides.
fn demo_config(args: &Args) -> Result<DemoConfig> {
    let mut cfg = if args.quick {
        DemoConfig::quick(args.seed)
    } else {
        DemoConfig::full(args.seed)
    };
    let mut sets = args.set.clone();
    if let Some(steps) = args.image_steps {
        cfg.image.run.steps = steps;
    }
    if let Some(steps) = args.text_steps {
        cfg.caption.run.steps = steps;
    }
    if let Some(lr) = args.lr {
        sets.push(format!("optim.lr={lr:e}"));
    }
    cfg.apply(&sets).context("--set")?;
    Ok(cfg)
}

pub fn run(args: Args) -> Result<()> {
    let t0 = Instant::now();
    let cfg = demo_config(&args)?;
    let world = SceneWorld::new(cfg.image.world.clone()).context("building the scene world")?;
    let d = cfg.d();
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    println!(
        "scene world: {} states (shape x colour x size x position), {} backgrounds, {} caption templates; d = {d}",
        world.n_states(),
        world.q(Modality::Image).len(),
        world.q(Modality::Text).len()
    );
    // 1. Theory.
    let theories: Vec<KindTheory> = [ViewKind::Good, ViewKind::Bad]
        .into_iter()
        .map(|k| {
            kind_theory(&world, k, d).with_context(|| format!("theory of {} views", k.label()))
        })
        .collect::<Result<_>>()?;
    theories.iter().for_each(print_theory);
    // 2. Training: each objective, modality and view kind separately, each a scene run
    // of `prh-native train` in its own run folder; no cross-modal pair anywhere.
    let device = demo_devices().main();
    let emb_dir = args.out.join("embeddings");
    std::fs::create_dir_all(&emb_dir).with_context(|| format!("creating {}", emb_dir.display()))?;
    let (results, baselines) = train_all(&args, &cfg, &world, &theories, &device, (&emb_dir, t0))?;
    // 3. Report.
    print_table(&results, &baselines);
    print_spectra(&results);
    print_eigenspaces(&results);
    write_report(
        &args,
        &cfg,
        &world,
        (&theories, &results, &baselines),
        &emb_dir,
        t0,
    )
}

/// Workers of the demo's pools: one per core, at most two (what the demo is sized for).
fn workers() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(2)
}

/// `f(0..n)` on `workers` threads, each taking the next index when it is free; results in
/// index order. Stops handing out work after the first error and returns that error.
fn pool<T: Send>(
    workers: usize,
    n: usize,
    f: impl Fn(usize) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let (next, failed) = (AtomicUsize::new(0), AtomicBool::new(false));
    let out: std::sync::Mutex<Vec<Option<Result<T>>>> =
        std::sync::Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..workers.max(1) {
            s.spawn(|| {
                while !failed.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let r = f(i);
                    failed.fetch_or(r.is_err(), Ordering::Relaxed);
                    out.lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)[i] = Some(r);
                }
            });
        }
    });
    let out = out
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // The failed item's own error first, not the items it stopped.
    let mut items = Vec::with_capacity(n);
    let mut stopped = false;
    for r in out {
        match r {
            Some(Ok(t)) => items.push(t),
            Some(Err(e)) => return Err(e),
            None => stopped = true,
        }
    }
    if stopped {
        anyhow::bail!("work stopped before every item ran");
    }
    Ok(items)
}

/// Every encoder of the demo trained and evaluated: per observation, objective and view
/// kind an image and a caption encoder (progress on stdout); and, on the same pool, the
/// baselines ([`baseline_cases`]).
///
/// The encoders are trained apart from each other (no pair ever crosses modalities), so
/// they train at once: a pool of one worker per core (two here) takes the runs costliest
/// first, each run on one replica (`run.data_parallel = 1`: the same batch loss as two
/// replicas, to float rounding, without the per-step synchronisation that costs the demo's
/// small models more than it saves). Every run's weights depend on its seed alone
/// (`prh_core::backend::seeded`), whatever trains beside it. The pairs are then evaluated
/// on the same pool.
fn train_all(
    args: &Args,
    cfg: &DemoConfig,
    world: &SceneWorld,
    theories: &[KindTheory],
    device: &prh_core::backend::burn::tensor::Device<DemoBackend>,
    (emb_dir, t0): (&Path, Instant),
) -> Result<(Vec<KindResults>, Vec<Baseline>)> {
    let workers = workers();
    let replicas = if workers > 1 {
        1
    } else {
        cfg.image.run.data_parallel
    };
    let pairs: Vec<(Observation, LossKind, usize)> = cfg
        .observations
        .iter()
        .flat_map(|&o| cfg.losses.iter().map(move |&l| (o, l)))
        .flat_map(|(o, l)| (0..theories.len()).map(move |t| (o, l, t)))
        .collect();
    print_plan(cfg, 2 * pairs.len(), workers, replicas);
    let cases = baseline_cases(cfg, theories);
    let mut work: Vec<Work> = training_jobs(&pairs)
        .enumerate()
        .map(|(slot, job)| Work::Train(slot, job))
        .chain((0..cases.len()).map(Work::Baseline))
        .collect();
    // Costliest first; stable, so equal ranks keep the report's order.
    work.sort_by_key(Work::cost_rank);
    let done = pool(workers, work.len(), |i| match work[i] {
        Work::Train(_, job) => Ok(Done::Trained(Box::new(train_one(
            args,
            cfg,
            &theories[job.theory],
            job,
            replicas,
        )?))),
        Work::Baseline(b) => Ok(Done::Baselines(measure_baseline(
            cases[b], cfg, world, theories, device,
        )?)),
    })?;
    let (slots, baselines) = regroup(&work, done, 2 * pairs.len(), cases.len())?;
    println!(
        "  trained, and the baselines measured, in {:.0} s",
        t0.elapsed().as_secs_f64()
    );
    let slots = std::sync::Mutex::new(slots);
    let take = |slot: usize| {
        slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)[slot]
            .take()
            .ok_or_else(|| anyhow::anyhow!("encoder {slot} was not trained"))
    };
    let results = pool(workers, pairs.len(), |p| {
        let (observation, loss, theory) = pairs[p];
        let (image, text) = (take(2 * p)?, take(2 * p + 1)?);
        let t = &theories[theory];
        evaluate_pair(
            args,
            cfg,
            world,
            t,
            (loss, observation),
            image,
            text,
            device,
            emb_dir,
        )
    })?;
    print_steps(&results);
    println!("  evaluated in {:.0} s so far", t0.elapsed().as_secs_f64());
    Ok((results, baselines))
}

/// The plan of [`train_all`] on stdout: how many encoders on how many workers, and each
/// kind of run's budget.
fn print_plan(cfg: &DemoConfig, encoders: usize, workers: usize, replicas: usize) {
    let bad = cfg.bad_views.as_ref().map_or(String::new(), |b| {
        format!(
            "; the spectral bad-view runs: captions {} steps to the end, pictures {} windows of patience{}",
            b.caption_steps,
            b.image_patience,
            if b.symbols_to_budget {
                ", symbols their whole budget"
            } else {
                ""
            }
        )
    });
    println!(
        "\ntraining {encoders} encoders on {workers} worker(s), {replicas} replica(s) each (budgets: {} steps on symbols, {} image steps, {} caption steps; each stops on the plateau of its loss{bad}) ...",
        cfg.symbolic_steps, cfg.image.run.steps, cfg.caption.run.steps
    );
}

/// The pool's results back in report order: the trained encoders by slot (pair p's image
/// is slot 2p, its caption 2p + 1), the baselines in the order of their cases.
fn regroup(
    work: &[Work],
    done: Vec<Done>,
    slots: usize,
    cases: usize,
) -> Result<(Vec<Option<Trained>>, Vec<Baseline>)> {
    let mut trained: Vec<Option<Trained>> = (0..slots).map(|_| None).collect();
    let mut measured: Vec<Vec<Baseline>> = vec![Vec::new(); cases];
    for (w, d) in work.iter().zip(done) {
        match (w, d) {
            (Work::Train(slot, _), Done::Trained(t)) => trained[*slot] = Some(*t),
            (Work::Baseline(b), Done::Baselines(m)) => measured[*b] = m,
            _ => anyhow::bail!("a pool item returned another item's result"),
        }
    }
    Ok((trained, measured.into_iter().flatten().collect()))
}

/// The training jobs of `pairs` (observation, loss, theory), an image and a caption
/// encoder each, in report order: job k fills slot k (pair p's image 2p, its caption
/// 2p + 1).
fn training_jobs(pairs: &[(Observation, LossKind, usize)]) -> impl Iterator<Item = Job> + '_ {
    pairs.iter().flat_map(|&(observation, loss, theory)| {
        [Modality::Image, Modality::Text].map(|m| Job {
            observation,
            loss,
            theory,
            m,
        })
    })
}

/// How many steps each pair's encoders trained, and whether the plateau or the budget
/// stopped them.
fn print_steps(results: &[KindResults]) {
    let stop = |plateau: bool| if plateau { " (plateau)" } else { " (budget)" };
    for r in results {
        println!(
            "  {} {} {}-view encoders: image {} steps{}, caption {} steps{}",
            r.observation.name(),
            r.loss.name(),
            r.kind.label(),
            r.image_training.steps,
            stop(r.image_training.plateau),
            r.text_training.steps,
            stop(r.text_training.plateau),
        );
    }
}

/// One baseline measurement: the encoders before training (random init) of an observation
/// and view kind, or the raw observations with no encoder (one item serves all view kinds
/// of its observation: the raw rows do not depend on the kind, only their comparison with
/// each kind's F does).
#[derive(Debug, Clone, Copy)]
enum BaselineCase {
    RandomInit(Observation, usize),
    RawInput(Observation),
}

/// The baselines of each observation and view kind (`theories` index the kinds): first the
/// untrained encoders of every case, then the raw inputs of every observation, the
/// report's order.
fn baseline_cases(cfg: &DemoConfig, theories: &[KindTheory]) -> Vec<BaselineCase> {
    let random = cfg
        .observations
        .iter()
        .flat_map(|&o| (0..theories.len()).map(move |t| BaselineCase::RandomInit(o, t)));
    let raw = cfg.observations.iter().map(|&o| BaselineCase::RawInput(o));
    random.chain(raw).collect()
}

/// Measures one [`BaselineCase`].
fn measure_baseline(
    case: BaselineCase,
    cfg: &DemoConfig,
    world: &SceneWorld,
    theories: &[KindTheory],
    device: &prh_core::backend::burn::tensor::Device<DemoBackend>,
) -> Result<Vec<Baseline>> {
    let (observation, t) = match case {
        BaselineCase::RawInput(observation) => {
            return evaluate_raw_baseline(observation, world, theories, cfg)
                .context("evaluating the raw-input baseline");
        }
        BaselineCase::RandomInit(observation, t) => (observation, &theories[t]),
    };
    let untrained = |m: Modality| -> Result<SceneModel<Inner>> {
        let c = cfg.run_config(m, t.kind, LossKind::Spectral, observation);
        let tok = if c.needs_tokenizer() {
            Some(prh_core::scene::render_text::caption_tokenizer(world)?)
        } else {
            None
        };
        Ok(untrained_model::<Inner>(&c, world, tok.as_ref(), device)?)
    };
    let (image, text) = (untrained(Modality::Image)?, untrained(Modality::Text)?);
    Ok(vec![
        evaluate_baseline(observation, world, t, &image, &text, cfg, device)
            .context("evaluating the random-init baseline")?,
    ])
}

/// The report folder: `embeddings/states.json`, `results.json` and the SVG plots.
fn write_report(
    args: &Args,
    cfg: &DemoConfig,
    world: &SceneWorld,
    (theories, results, baselines): (&[KindTheory], &[KindResults], &[Baseline]),
    emb_dir: &Path,
    t0: Instant,
) -> Result<()> {
    let (iv, tv) = prh_core::scene::theory::paired_views(
        world,
        prh_core::scene::theory::paired_seed(cfg.seed),
    );
    let states: Vec<_> = iv
        .iter()
        .zip(&tv)
        .map(|(a, b)| json!({ "state": world.describe(&a.state), "background": a.nuisance, "caption": caption(b) }))
        .collect();
    write_json(&emb_dir.join("states.json"), &states)?;
    let report = json!({
        "config": cfg,
        "d": cfg.d(),
        "n_states": world.n_states(),
        "theory": theories,
        "results": results,
        "baselines": baselines,
        "seconds": t0.elapsed().as_secs_f64(),
    });
    write_json(&args.out.join("results.json"), &report)?;
    write_file(&args.out.join("spectrum.svg"), svg::spectrum(theories))?;
    write_file(&args.out.join("alignment.svg"), svg::alignment(results))?;
    write_file(
        &args.out.join("convergence.svg"),
        convergence::convergence_svg(&convergence::curves_of(results)),
    )?;
    write_file(&args.out.join("views.svg"), svg::views(world, cfg.seed))?;
    println!(
        "\nreport: {} (results.json, spectrum.svg, alignment.svg, convergence.svg, views.svg, embeddings/, checkpoints); {:.0} s",
        args.out.display(),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Hand-written SVG plots (three small charts do not need a plotting crate).
mod svg {
    use super::*;

    const COLOURS: [&str; 8] = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    ];

    /// Leading eigenvalues of K for each view kind and modality, the window end marked.
    pub fn spectrum(theories: &[KindTheory]) -> String {
        let (w, h, pad) = (640.0, 320.0, 40.0);
        let n = theories.first().map_or(1, |t| t.image.eigenvalues.len());
        let x = |i: usize| pad + (w - 2.0 * pad) * i as f64 / (n.max(2) - 1) as f64;
        let y = |v: f64| h - pad - (h - 2.0 * pad) * v.clamp(0.0, 1.0);
        let mut s = format!(
            "<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' font-family='sans-serif' font-size='11'>\n<rect width='100%' height='100%' fill='white'/>\n"
        );
        s += &format!(
            "<text x='{pad}' y='16'>eigenvalues of K (trivial 1 first); dashed: end of the top-d window</text>\n"
        );
        if let Some(t) = theories.first() {
            let xd = x(t.d) + 0.5 * (x(1) - x(0));
            s += &format!(
                "<line x1='{xd}' y1='{}' x2='{xd}' y2='{}' stroke='grey' stroke-dasharray='4'/>\n",
                y(1.0),
                y(0.0)
            );
        }
        for v in [0.0, 0.5, 1.0] {
            s += &format!(
                "<text x='4' y='{}'>{v:.1}</text><line x1='{pad}' y1='{}' x2='{}' y2='{}' stroke='#eee'/>\n",
                y(v) + 4.0,
                y(v),
                w - pad,
                y(v)
            );
        }
        let mut series = 0;
        for t in theories {
            for m in [&t.image, &t.text] {
                let c = COLOURS[series % 4];
                let pts: Vec<String> = m
                    .eigenvalues
                    .iter()
                    .enumerate()
                    .map(|(i, v)| format!("{:.1},{:.1}", x(i), y(*v)))
                    .collect();
                s += &format!(
                    "<polyline points='{}' fill='none' stroke='{c}'/>\n",
                    pts.join(" ")
                );
                for p in &pts {
                    let (px, py) = p.split_once(',').unwrap_or(("0", "0"));
                    s += &format!("<circle cx='{px}' cy='{py}' r='2.5' fill='{c}'/>\n");
                }
                s += &format!(
                    "<text x='{}' y='{}' fill='{c}'>{} {:?}</text>\n",
                    w - 150.0,
                    h - 100.0 + 14.0 * series as f64,
                    t.kind.label(),
                    m.modality
                );
                series += 1;
            }
        }
        s + "</svg>\n"
    }

    /// Grouped bars: mutual k-NN, CKA, R@1 for each objective x view kind (learned), and
    /// the prediction of each view kind.
    pub fn alignment(results: &[KindResults]) -> String {
        let (w, h, pad) = (720.0, 320.0, 40.0);
        let metrics = ["mutual 10-NN", "CKA", "R@1"];
        let mut series: Vec<(String, &prh_core::experiments::demo::Alignment)> =
            results.iter().map(|r| (r.label(), &r.learned)).collect();
        for kind in [ViewKind::Good, ViewKind::Bad] {
            if let Some(r) = results.iter().find(|r| r.kind == kind) {
                series.push((format!("predicted {}", kind.label()), &r.predicted));
            }
        }
        let mut s = format!(
            "<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' font-family='sans-serif' font-size='11'>\n<rect width='100%' height='100%' fill='white'/>\n"
        );
        s += &format!(
            "<text x='{pad}' y='16'>image vs text alignment: learned (separately trained encoders) vs predicted (theory)</text>\n"
        );
        let group_w = (w - 2.0 * pad) / metrics.len() as f64;
        let bar_w = group_w / (series.len() + 1) as f64;
        let y = |v: f64| h - pad - (h - 2.0 * pad) * v.clamp(0.0, 1.0);
        for (mi, name) in metrics.iter().enumerate() {
            let x0 = pad + group_w * mi as f64;
            s += &format!(
                "<text x='{}' y='{}'>{name}</text>\n",
                x0 + bar_w,
                h - pad + 16.0
            );
            for (b, (_, a)) in series.iter().enumerate() {
                let v = [a.mutual_knn, a.cka, a.r1_image_to_text][mi];
                let x = x0 + bar_w * (0.5 + b as f64);
                s += &format!(
                    "<rect x='{x:.1}' y='{:.1}' width='{:.1}' height='{:.1}' fill='{}'/>\n",
                    y(v),
                    bar_w * 0.9,
                    y(0.0) - y(v),
                    COLOURS[b % COLOURS.len()]
                );
                s += &format!(
                    "<text x='{x:.1}' y='{:.1}' font-size='8'>{v:.2}</text>\n",
                    y(v) - 2.0
                );
            }
        }
        for (i, (text, _)) in series.iter().enumerate() {
            let (col, row) = (i % 4, i / 4);
            s += &format!(
                "<rect x='{}' y='{}' width='10' height='10' fill='{}'/><text x='{}' y='{}'>{text}</text>\n",
                pad + 160.0 * col as f64,
                24.0 + 14.0 * row as f64,
                COLOURS[i % COLOURS.len()],
                pad + 14.0 + 160.0 * col as f64,
                33.0 + 14.0 * row as f64
            );
        }
        s + "</svg>\n"
    }

    /// Example views: per row, two good views (separate renderings of one state) and two
    /// bad views (corruptions of one rendering) of a picture, then the same for captions.
    pub fn views(world: &SceneWorld, seed: u64) -> String {
        let mut rng = prh_core::rng::generator(seed, prh_core::rng::Stream::Eval, 0x51e5);
        let (cell, scale, rows) = (140.0, 3.0, 4);
        let mut s = format!(
            "<svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{}' font-family='sans-serif' font-size='10'>\n<rect width='100%' height='100%' fill='white'/>\n",
            4.0 * cell + 20.0,
            rows as f64 * cell + 40.0
        );
        s += "<text x='10' y='14'>left: good views (two renderings of one state); right: bad views (two corruptions of one rendering)</text>\n";
        for row in 0..rows {
            let good = world.sample_views(Modality::Image, ViewKind::Good, 2, &mut rng);
            let bad = world.sample_views(Modality::Image, ViewKind::Bad, 2, &mut rng);
            let good_t = world.sample_views(Modality::Text, ViewKind::Good, 2, &mut rng);
            let bad_t = world.sample_views(Modality::Text, ViewKind::Bad, 2, &mut rng);
            for (col, (v, t)) in good
                .iter()
                .chain(&bad)
                .zip(good_t.iter().chain(&bad_t))
                .enumerate()
            {
                let (x0, y0) = (col as f64 * cell + 10.0, row as f64 * cell + 24.0);
                let rgb = to_rgb8(&render(v, true));
                for py in 0..IMAGE_SIZE {
                    for px in 0..IMAGE_SIZE {
                        let i = 3 * (py * IMAGE_SIZE + px);
                        s += &format!(
                            "<rect x='{:.0}' y='{:.0}' width='{scale}' height='{scale}' fill='rgb({},{},{})'/>",
                            x0 + px as f64 * scale,
                            y0 + py as f64 * scale,
                            rgb[i],
                            rgb[i + 1],
                            rgb[i + 2]
                        );
                    }
                }
                s += &format!(
                    "\n<text x='{x0}' y='{}' font-size='8'>{}</text>\n",
                    y0 + 32.0 * scale + 12.0,
                    caption(t)
                );
            }
        }
        s + "</svg>\n"
    }
}
