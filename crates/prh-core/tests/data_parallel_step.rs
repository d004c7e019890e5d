//! One data-parallel step (W = 2 replicas on the one NdArray device) against the
//! single-device step on the same global batch, from the same weights.
//!
//! What must match (f32 backend; the shards pad to their own lengths and sum in another
//! order, so equality is to float tolerance, stated per check):
//! - the loss and its logged terms: relative 1e-5;
//! - every gradient entry: max |g_dp - g_1| <= 1e-4 * max |g_1|, and the global norm:
//!   relative 1e-5;
//! - the weights after one AdamW step: max |w_dp - w_1| <= 1e-2 * lr. AdamW's first step
//!   moves a weight by lr * g / (|g| + eps), which turns a gradient difference `dg` into
//!   up to lr * dg / eps for gradients near eps = 1e-8 (measured: 5e-4 * lr); a wrong
//!   gradient moves weights by ~lr.
//!
//! for the invariance-only loss (lambda = 0), the full JEPA loss (lambda = 0.02: SIGReg
//! is computed on the whole batch from the shards' ECF sums, docs/scaling.md) and
//! next-token cross-entropy. The test also checks that it can tell the two SIGReg
//! options apart: the mean of per-shard losses differs from the batch loss by far more
//! than the tolerance.

mod common;

use burn::module::{AutodiffModule, Module, ModuleVisitor, Param};
use burn::optim::{AdamWConfig, GradientsParams, Optimizer};
use burn::prelude::*;
use prh_core::models::text_encoder::TextEncoder;
use prh_core::train::data_parallel::parallel_step;
use prh_core::train::{TrainTask, clip_global_norm, jepa_loss, scalar};

/// The backend under test: the CPU's, or CUDA's with `--features test-on-cuda` (on a GPU
/// machine: the data-parallel gradients on CUDA were measured wrong, docs/scaling.md).
#[cfg(not(feature = "test-on-cuda"))]
type AB = prh_core::backend::CpuTrain;
#[cfg(feature = "test-on-cuda")]
type AB = prh_core::backend::CudaTrain;

/// Every float parameter (or its gradient) flattened, in visiting order.
struct Flat<'a> {
    grads: Option<&'a GradientsParams>,
    out: Vec<f32>,
}

impl ModuleVisitor<AB> for Flat<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<AB, D>>) {
        let t = match self.grads {
            Some(g) => g
                .get::<<AB as burn::tensor::backend::AutodiffBackend>::InnerBackend, D>(param.id)
                .map(|t| t.into_data()),
            None => Some(param.val().into_data()),
        };
        if let Some(t) = t {
            self.out.extend(t.iter::<f32>());
        }
    }
}

fn flat<M: Module<AB>>(model: &M, grads: Option<&GradientsParams>) -> Vec<f32> {
    let mut v = Flat {
        grads,
        out: Vec::new(),
    };
    model.visit(&mut v);
    v.out
}

/// Each float parameter's place in [`flat`]'s vector, in visiting order: (start, shape).
struct Spans(Vec<(usize, Vec<usize>)>);

impl ModuleVisitor<AB> for Spans {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<AB, D>>) {
        let start = self
            .0
            .last()
            .map_or(0, |(s, d)| s + d.iter().product::<usize>());
        self.0.push((start, param.val().dims().to_vec()));
    }
}

/// The `n` parameters whose gradients differ most between `a` and `b`, as lines
/// "parameter i [shape]: max |diff|, max |g|", to say where a mismatch is.
fn worst_params<M: Module<AB>>(model: &M, a: &[f32], b: &[f32], n: usize) -> Vec<String> {
    let mut spans = Spans(Vec::new());
    model.visit(&mut spans);
    let mut rows: Vec<(f64, String)> = spans
        .0
        .iter()
        .enumerate()
        .filter_map(|(i, (start, dims))| {
            let end = start + dims.iter().product::<usize>();
            let (x, y) = (a.get(*start..end)?, b.get(*start..end)?);
            let d = max_abs_diff(x, y);
            let g = x.iter().map(|v| f64::from(v.abs())).fold(0.0, f64::max);
            Some((
                d,
                format!("parameter {i} {dims:?}: max |diff| {d:.2e}, max |g| {g:.2e}"),
            ))
        })
        .collect();
    rows.sort_by(|p, q| q.0.total_cmp(&p.0));
    rows.into_iter().take(n).map(|r| r.1).collect()
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from((x - y).abs()))
        .fold(0.0, f64::max)
}

/// Loss, terms, flattened gradient, gradient norm and weights after one AdamW step.
struct StepResult {
    loss: f64,
    terms: Vec<(String, f64)>,
    grad: Vec<f32>,
    norm: f64,
    weights: Vec<f32>,
}

const LR: f64 = 1e-3;

fn after_adamw<M: AutodiffModule<AB>>(model: &M, grads: GradientsParams) -> Vec<f32> {
    let mut opt = AdamWConfig::new().init::<AB, M>();
    flat(&opt.step(LR, model.clone(), grads), None)
}

fn single<T: TrainTask<AB>>(t: &mut T, model: &T::Model, step: usize) -> StepResult {
    let device = Default::default();
    let out = TrainTask::<AB>::step(t, model, step, &device).unwrap();
    let loss = scalar(out.loss.clone());
    let terms = out
        .terms
        .into_iter()
        .map(|(k, v)| (k.to_string(), scalar(v)))
        .collect();
    let mut grads = GradientsParams::from_grads(out.loss.backward(), model);
    let norm = clip_global_norm::<AB, _>(model, &mut grads, 0.0).unwrap();
    let grad = flat(model, Some(&grads));
    StepResult {
        loss,
        terms,
        grad,
        norm,
        weights: after_adamw(model, grads),
    }
}

fn parallel<T: TrainTask<AB> + Sync>(
    t: &mut T,
    model: &T::Model,
    step: usize,
    w: usize,
) -> StepResult {
    let devices = vec![Default::default(); w];
    let mut p = parallel_step::<AB, _>(t, model, step, &devices, None).unwrap();
    let norm = clip_global_norm::<AB, _>(model, &mut p.grads, 0.0).unwrap();
    let grad = flat(model, Some(&p.grads));
    StepResult {
        loss: p.loss,
        terms: p
            .terms
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        grad,
        norm,
        weights: after_adamw(model, p.grads),
    }
}

/// Compares W = 2 with W = 1 at step `step` of the text task; returns the single-device
/// loss.
fn compare(objective: &str, sets: &[&str], step: usize) -> f64 {
    let tok = common::tokenizer();
    let mut t = common::task(common::config(objective, 10, sets), &tok);
    let device = Default::default();
    // A fresh model: burn initialises parameters lazily, so the data-parallel step (run
    // first) must materialise the weights once before it forks the replicas.
    let model: TextEncoder<AB> = t.spec.init(&device).unwrap();
    compare_task(&format!("{objective} {sets:?}"), &mut t, &model, step)
}

/// Compares W = 2 with W = 1 at step `step` of `t` from `model`'s weights (the checks in
/// the module docs); returns the single-device loss.
fn compare_task<T: TrainTask<AB> + Sync>(
    name: &str,
    t: &mut T,
    model: &T::Model,
    step: usize,
) -> f64 {
    let b = parallel(t, model, step, 2);
    let a = single(t, model, step);
    let rel = |x: f64, y: f64| (x - y).abs() / y.abs().max(1e-12);
    eprintln!(
        "{name}: loss {} vs {} (rel {:.2e}); norm {} vs {} (rel {:.2e})",
        a.loss,
        b.loss,
        rel(b.loss, a.loss),
        a.norm,
        b.norm,
        rel(b.norm, a.norm)
    );
    // Where the gradients differ (beyond the tolerance below), before a check stops the
    // test.
    let g_top = a
        .grad
        .iter()
        .map(|g| f64::from(g.abs()))
        .fold(0.0, f64::max);
    if max_abs_diff(&a.grad, &b.grad) > 1e-4 * g_top {
        for line in worst_params(model, &a.grad, &b.grad, 8) {
            eprintln!("  {line}");
        }
    }
    // Relative to the largest of the loss and its terms: the spectral loss can cancel its
    // terms (~1e-1 each) to ~1e-3 at initialisation, where a relative test on the total
    // would measure float32 cancellation, not the data-parallel sum.
    let scale = a
        .terms
        .iter()
        .map(|t| t.1.abs())
        .fold(a.loss.abs(), f64::max)
        .max(1e-12);
    assert!(
        (b.loss - a.loss).abs() < 1e-5 * scale,
        "loss {} vs {} (scale {scale})",
        b.loss,
        a.loss
    );
    assert_eq!(a.terms.len(), b.terms.len());
    for ((ka, va), (kb, vb)) in a.terms.iter().zip(&b.terms) {
        assert_eq!(ka, kb);
        assert!(
            rel(*vb, *va) < 1e-5 || (va - vb).abs() < 1e-5 * scale,
            "{ka}: {vb} vs {va}"
        );
    }
    assert!(
        rel(b.norm, a.norm) < 1e-5,
        "grad norm {} vs {}",
        b.norm,
        a.norm
    );
    let gmax = g_top;
    let gdiff = max_abs_diff(&a.grad, &b.grad);
    // AdamW's first step moves a weight by about lr * g / (|g| + eps): a gradient entry at
    // the level of the two sums' rounding difference can land anywhere in [-lr, lr] in
    // either run (seen with the spectral loss, whose terms cancel from ~10 to ~1). Compare
    // the weights whose gradient the two runs resolve: |g| > 100 max |grad diff|.
    // (Every parameter has a gradient in these tasks, so the two lists align.)
    assert_eq!(
        a.grad.len(),
        a.weights.len(),
        "{name}: a parameter without a gradient"
    );
    let resolved = (100.0 * gdiff).max(1e-12);
    let wdiff = a
        .weights
        .iter()
        .zip(&b.weights)
        .zip(&a.grad)
        .filter(|(_, g)| f64::from(g.abs()) > resolved)
        .map(|((x, y), _)| f64::from((x - y).abs()))
        .fold(0.0, f64::max);
    eprintln!(
        "  max |grad diff| {gdiff:.2e} (max |grad| {gmax:.2e}); max |weight diff| {wdiff:.2e}"
    );
    assert!(
        gdiff <= 1e-4 * gmax,
        "gradient differs by {gdiff} (max {gmax})"
    );
    assert!(
        wdiff <= 1e-2 * LR,
        "weights differ by {wdiff} after one AdamW step"
    );
    // The step moved the weights (so the comparison above is not of two no-ops).
    let before = flat(model, None);
    assert!(max_abs_diff(&before, &a.weights) > 0.5 * LR);
    a.loss
}

#[test]
fn invariance_only_step_matches_single_device() {
    compare("good", &["loss.lambda=0.0"], 3);
}

#[test]
fn full_jepa_step_matches_single_device() {
    compare("good", &[], 0);
    compare("bad", &[], 5);
}

/// The spectral loss (`loss.kind = "spectral"`): its group sums add up over shards, so
/// W = 2 gives the single-device loss, terms and gradient.
#[test]
fn spectral_step_matches_single_device() {
    compare("good", &["loss.kind=spectral"], 1);
    compare("bad", &["loss.kind=spectral"], 4);
}

#[test]
fn next_token_step_matches_single_device() {
    compare("next-token", &[], 2);
}

/// The scene world's image and caption JEPAs (the demo's quick runs, W = 2 on batches of
/// 32 states x 4 views), good and bad views.
#[test]
fn scene_steps_match_single_device() {
    use prh_core::experiments::demo::DemoConfig;
    use prh_core::scene::Modality;
    use prh_core::scene::render_text::caption_tokenizer;
    use prh_core::tasks::scene::Observation;
    use prh_core::theory::view_kind::ViewKind;
    use prh_core::train::config::LossKind;
    let demo = DemoConfig::quick(5);
    let device = Default::default();
    for (kind, loss) in [
        (ViewKind::Good, LossKind::Sigreg),
        (ViewKind::Bad, LossKind::Sigreg),
        (ViewKind::Good, LossKind::Spectral),
        (ViewKind::Bad, LossKind::Spectral),
    ] {
        let cfg = demo.run_config(Modality::Image, kind, loss, Observation::Rendered);
        let world = cfg.build_world().unwrap();
        let mut t = cfg.image_task(&world).unwrap();
        let model = TrainTask::<AB>::init_model(&t, &device).unwrap();
        compare_task(&format!("image {kind:?} {loss:?}"), &mut t, &model, 1);
        let cfg = demo.run_config(Modality::Text, kind, loss, Observation::Rendered);
        let tok = caption_tokenizer(&world).unwrap();
        let mut t = cfg.caption_task(&world, &tok).unwrap();
        let model = TrainTask::<AB>::init_model(&t, &device).unwrap();
        compare_task(&format!("caption {kind:?} {loss:?}"), &mut t, &model, 2);
        let cfg = demo.run_config(Modality::Text, kind, loss, Observation::Symbolic);
        let mut t = cfg.symbolic_task(&world).unwrap();
        let model = TrainTask::<AB>::init_model(&t, &device).unwrap();
        compare_task(&format!("symbols {kind:?} {loss:?}"), &mut t, &model, 3);
    }
}

/// The per-replica SIGReg average (design option (b)) is a different loss from the batch
/// SIGReg that the data-parallel step computes: on this batch the two differ by far more
/// than the tolerance above, so the full-loss test above would catch option (b).
#[test]
fn per_shard_sigreg_average_is_a_different_loss() {
    let tok = common::tokenizer();
    let mut t = common::task(common::config("good", 10, &[]), &tok);
    let device = Default::default();
    let model: TextEncoder<AB> = t.spec.init(&device).unwrap();
    let step = 0;
    let whole = scalar(
        TrainTask::<AB>::step(&mut t, &model, step, &device)
            .unwrap()
            .loss,
    );
    let mut shard_losses = Vec::new();
    for k in 0..2 {
        let shard = prh_core::train::data_parallel::Shard { index: k, count: 2 };
        let out = TrainTask::<AB>::shard_step(&t, &model, step, shard, &device).unwrap();
        let prh_core::train::data_parallel::ShardLoss::Jepa {
            views,
            n_global,
            loss,
            seed,
        } = out.loss
        else {
            panic!("a JEPA task gives JEPA shards");
        };
        let l = jepa_loss(&views, n_global, &loss, seed, step, &device).unwrap();
        shard_losses.push(scalar(l.total));
    }
    let mean = (shard_losses[0] + shard_losses[1]) / 2.0;
    let dp = parallel(&mut t, &model, step, 2).loss;
    eprintln!("batch loss {whole}, data-parallel {dp}, mean of shard losses {mean}");
    assert!((dp - whole).abs() < 1e-5 * whole);
    assert!(
        (mean - whole).abs() > 1e-3 * whole,
        "per-shard SIGReg mean {mean} vs batch {whole}"
    );
}

#[test]
fn bad_splits_are_refused_with_the_field() {
    let tok = common::tokenizer();
    let mut t = common::task(common::config("good", 10, &[]), &tok);
    let device = Default::default();
    let model: TextEncoder<AB> = t.spec.init(&device).unwrap();
    // 16 groups over 3 replicas.
    let devices = vec![Default::default(); 3];
    let e = parallel_step::<AB, _>(&mut t, &model, 0, &devices, None)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("run.data_parallel = 3") && e.contains("views.batch_size = 16"),
        "{e}"
    );
    // The config refuses it too, and W = 0.
    let text = "[views]\nbatch_size = 16\n";
    for (set, want) in [
        ("run.data_parallel=3", "do not divide views.batch_size = 16"),
        ("run.data_parallel=0", "expected at least 1"),
    ] {
        let e = prh_core::tasks::text::TrainConfig::from_toml("x.toml", text, &[set.to_string()])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("x.toml") && e.contains("run.data_parallel") && e.contains(want),
            "{e}"
        );
    }
}
