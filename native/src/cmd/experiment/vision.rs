//! `views-vision` and `scaling`: text encoders trained on multi-view concept text
//! (WordNet noun synsets + English Multi30k captions), measured against EfficientNet-Lite0's
//! ImageNet class vectors ([`prh_core::experiments::vision`]).
//!
//! - `views-vision`: per objective and seed one encoder; the 1,000 class texts are
//!   embedded at step 0, every `eval_every` steps and at the end; a random-init row is the
//!   step-0 encoder. Seed 0 of each objective is exported for the web app.
//! - `scaling`: one run per objective and budget (its own warmup and cosine schedule),
//!   measured at its end; the law `a - b n^-c` is fit to mutual k-NN vs samples.

use anyhow::{Context, Result, bail};
use prh_core::backend::burn::module::AutodiffModule;
use prh_core::backend::burn::tensor::backend::AutodiffBackend;
use prh_core::experiments::multilingual::{ExperimentConfig, SeedStats, Snapshot, seed_stats};
use prh_core::experiments::vision::{
    ClassMap, ImagenetClass, VisionOptions, VisionScores, imagenet_export, parse_classes,
    vision_alignment,
};
use prh_core::tasks::bundle::write_bundle;
use prh_core::tasks::text::TextTask;
use prh_core::text::corpus::{self, Group};
use prh_core::text::tokenizer::TextTokenizer;
use prh_core::theory::view_kind::ViewKind;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::partial::{Recorded, train_recording};
use super::{Args, Training};
use crate::output::{write_embeddings, write_file};

/// Everything the runs share: the class texts and vectors, the corpus, the tokenizer.
pub(super) struct VisionData {
    pub classes: Vec<ImagenetClass>,
    pub class_texts: Vec<String>,
    /// Row-major `[1000, d_v]` EfficientNet-Lite0 classifier rows.
    pub vision: Vec<f64>,
    pub d_v: usize,
    /// ImageNet-100 membership per class.
    pub is_test: Vec<bool>,
    pub groups: Vec<Group>,
    pub tokenizer: TextTokenizer,
    /// (WordNet synsets kept, ImageNet synsets left out, Multi30k images).
    pub counts: (usize, usize, usize),
    /// Mean tokens of one text, and of all texts of one group (each capped at max_len).
    pub tokens_per_text: f64,
    pub tokens_per_group: f64,
}

pub(super) fn load(
    args: &Args,
    cfg: &ExperimentConfig,
    source: &str,
    data_dir: &Path,
) -> Result<VisionData> {
    let (classes, vision, d_v, is_test) = read_imagenet(&data_dir.join("imagenet"))?;
    let (groups, counts) = training_groups(cfg, source, data_dir, &classes)?;
    let base = cfg.train_config(source, ViewKind::Good, 0, "en")?;
    let all_texts = groups
        .iter()
        .flat_map(|g| g.texts.iter().map(String::as_str));
    let tokenizer = TextTokenizer::train(all_texts, &base.tokenizer)?;
    let (tokens_per_text, tokens_per_group) = token_stats(&groups, &tokenizer, base.model.max_len)?;
    let _ = args;
    Ok(VisionData {
        class_texts: classes.iter().map(ImagenetClass::text).collect(),
        classes,
        vision,
        d_v,
        is_test,
        groups,
        tokenizer,
        counts,
        tokens_per_text,
        tokens_per_group,
    })
}

/// The ImageNet-1k classes, the classifier rows, their width and ImageNet-100 membership.
type Imagenet = (Vec<ImagenetClass>, Vec<f64>, usize, Vec<bool>);

/// The ImageNet-1k classes, EfficientNet-Lite0's classifier rows (row-major `[1000, d_v]`,
/// and `d_v`) and each class's ImageNet-100 membership, from the `imagenet` data folder.
fn read_imagenet(inet: &Path) -> Result<Imagenet> {
    let tsv = inet.join("imagenet1k_classes.tsv");
    let f = std::fs::File::open(&tsv).with_context(|| format!("opening {}", tsv.display()))?;
    let classes = parse_classes(&tsv.display().to_string(), std::io::BufReader::new(f))?;
    let npy = inet.join("efficientnet_lite0_fc_weight.npy");
    let f = std::fs::File::open(&npy).with_context(|| format!("opening {}", npy.display()))?;
    let (shape, vision) =
        prh_core::formats::npy::read_npy(&npy.display().to_string(), "weight", f)?;
    if shape.len() != 2 || shape[0] != classes.len() {
        bail!(
            "{}: expected shape [{}, d], found {shape:?}",
            npy.display(),
            classes.len()
        );
    }
    let list = inet.join("imagenet100_wnids.txt");
    let wn100: HashSet<String> = std::fs::read_to_string(&list)
        .with_context(|| format!("reading {}", list.display()))?
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    let is_test: Vec<bool> = classes.iter().map(|c| wn100.contains(&c.wnid)).collect();
    let n_test = is_test.iter().filter(|&&t| t).count();
    if n_test != wn100.len() {
        bail!(
            "{}: {} of its {} wnids are ImageNet-1k classes",
            list.display(),
            n_test,
            wn100.len()
        );
    }
    Ok((classes, vision, shape[1], is_test))
}

/// Training corpus: WordNet synsets (minus the ImageNet `classes` if asked) + captions;
/// and (WordNet synsets kept, ImageNet synsets left out, Multi30k images).
fn training_groups(
    cfg: &ExperimentConfig,
    source: &str,
    data_dir: &Path,
    classes: &[ImagenetClass],
) -> Result<(Vec<Group>, (usize, usize, usize))> {
    let v = &cfg.spec.vision;
    let wn_dir = PathBuf::from(&v.wordnet);
    let mut synsets = prh_core::text::wordnet::read_nouns(&wn_dir)
        .with_context(|| format!("experiment.vision.wordnet = {}", wn_dir.display()))?;
    let eval_ids: HashSet<&str> = classes.iter().map(|c| c.wnid.as_str()).collect();
    let before = synsets.len();
    if v.exclude_eval_synsets {
        synsets.retain(|s| !eval_ids.contains(s.wnid.as_str()));
    }
    let excluded = before - synsets.len();
    if v.wordnet_groups > 0 {
        synsets.truncate(v.wordnet_groups);
    }
    let mut groups: Vec<Group> = synsets.iter().map(|s| s.to_group()).collect();
    let n_wn = groups.len();
    let mut n_cap = 0;
    if v.multi30k {
        let base = cfg.train_config(source, ViewKind::Good, 0, "en")?;
        let mut c = corpus::read_multi30k(data_dir, &base.data.train_split, "en")?;
        c.truncate(v.multi30k_groups);
        n_cap = c.groups.len();
        groups.extend(c.groups);
    }
    Ok((groups, (n_wn, excluded, n_cap)))
}

/// Mean tokens of one text, and of all texts of one group (each capped at `cap`), on a
/// fixed stride of groups (every group costs seconds on 2 cores).
fn token_stats(groups: &[Group], tokenizer: &TextTokenizer, cap: usize) -> Result<(f64, f64)> {
    let stride = (groups.len() / 2000).max(1);
    let (mut nt, mut tt, mut ng) = (0usize, 0usize, 0usize);
    for g in groups.iter().step_by(stride) {
        ng += 1;
        for t in &g.texts {
            nt += 1;
            tt += tokenizer.encode(t)?.len().min(cap);
        }
    }
    Ok((tt as f64 / nt.max(1) as f64, tt as f64 / ng.max(1) as f64))
}

/// One trained encoder: its class-text snapshots and (optionally) its bundle bytes.
pub(super) struct Trained {
    pub snapshots: Vec<Snapshot>,
    pub bundle: Option<Vec<u8>>,
    pub final_loss: f64,
    pub train_s: f64,
    pub d: usize,
}

/// Trains one encoder for `steps` steps (its own schedule), recording the class-text
/// embeddings at step 0, every `eval_every` steps (0: only the end) and at the end.
#[allow(clippy::too_many_arguments)]
pub(super) fn train_one<B: AutodiffBackend>(
    cfg: &ExperimentConfig,
    source: &str,
    data: &VisionData,
    objective: ViewKind,
    seed: u64,
    steps: Option<usize>,
    eval_every: usize,
    keep_bundle: bool,
    training: Training<'_, B>,
) -> Result<Trained> {
    let mut tcfg = cfg.train_config(source, objective, seed, "en")?;
    if let Some(s) = steps {
        tcfg.run.steps = s;
        // Short budgets get a proportionate warmup (at most the configured one).
        tcfg.optim.warmup_steps = tcfg.optim.warmup_steps.min(s / 10);
    }
    tcfg.run.eval_every = eval_every;
    let config_toml = tcfg.to_toml()?;
    let inner = TextTask::new(tcfg.clone(), data.tokenizer.clone(), &data.groups)?;
    let d = inner.spec.d_model;
    let Recorded {
        task,
        summary,
        train_s,
    } = train_recording::<B>(
        inner,
        data.class_texts.clone(),
        &config_toml,
        &format!("{} s{seed}", objective.label()),
        training,
    )
    .with_context(|| format!("training {} seed {seed}", objective.label()))?;
    let bundle = if keep_bundle {
        Some(write_bundle(
            &summary.model.valid(),
            &task.inner.spec,
            &data.tokenizer,
            &config_toml,
        )?)
    } else {
        None
    };
    eprintln!(
        "{} seed {seed}: {} steps, loss {:.4}, {:.1} s",
        objective.label(),
        summary.steps,
        summary.last_loss,
        train_s
    );
    Ok(Trained {
        snapshots: task.snapshots,
        bundle,
        final_loss: summary.last_loss,
        train_s,
        d,
    })
}

/// Scores one snapshot (the null and the full matcher only when `last`).
pub(super) fn score(
    data: &VisionData,
    cfg: &ExperimentConfig,
    emb: &[f32],
    d: usize,
    seed: u64,
    last: bool,
) -> Result<(VisionScores, ClassMap)> {
    score_with(data, cfg, (emb, d), seed, last, true)
}

/// [`score`] with the outlier clamp on or off (`clamp`).
pub(super) fn score_with(
    data: &VisionData,
    cfg: &ExperimentConfig,
    (emb, d): (&[f32], usize),
    seed: u64,
    last: bool,
    clamp: bool,
) -> Result<(VisionScores, ClassMap)> {
    let opts = VisionOptions {
        k: cfg.spec.k,
        null_shuffles: if last { cfg.spec.null_shuffles } else { 0 },
        match_restarts: if last {
            cfg.spec.vision.match_restarts
        } else {
            1
        },
        // The tabu stage costs ~17 s per ImageNet-100 match: the final scores only.
        match_tabu: last && cfg.spec.vision.match_tabu,
        seed,
        clamp,
    };
    Ok(vision_alignment(
        emb,
        d,
        &data.vision,
        data.d_v,
        &data.is_test,
        &opts,
    )?)
}

/// Writes `export/<label>.prh.safetensors`, `export/<label>.imagenet.safetensors` and
/// `export/<label>.class_texts.npy`: the encoder's embeddings of the 1,000 class texts
/// (`class_embeddings`, float32 `[1000, d]`), rows in `imagenet1k_classes.tsv`'s order, so
/// that row i pairs with row i of `efficientnet_lite0_fc_weight.npy` (`prh-native match` /
/// `metrics` read the two files as they are).
pub(super) fn write_exports(
    out: &Path,
    label: &str,
    bundle: &[u8],
    data: &VisionData,
    (map, fit): (&ClassMap, &serde_json::Value),
    (class_embeddings, d): (&[f32], usize),
) -> Result<()> {
    let dir = out.join("export");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let names: Vec<String> = data.classes.iter().map(|c| c.name().to_string()).collect();
    let bytes = imagenet_export(map, &names, fit)?;
    for (name, b) in [
        (format!("{label}.prh.safetensors"), bundle),
        (format!("{label}.imagenet.safetensors"), bytes.as_slice()),
    ] {
        let p = dir.join(&name);
        write_file(&p, b)?;
    }
    // An .npy name: the labels (class names) would only go to a .tsv's metadata file.
    write_embeddings(
        &dir.join(format!("{label}.class_texts.npy")),
        d,
        class_embeddings,
        &names,
    )
}

/// Spread over seeds of each score of a list of final points.
pub(super) fn stats_of(points: &[VisionScores]) -> Result<serde_json::Value> {
    type Get = fn(&VisionScores) -> f64;
    let keys: [(&str, Get); 11] = [
        ("mutual_knn", |p| p.mutual_knn),
        ("null_mean", |p| p.null_mean.unwrap_or(f64::NAN)),
        ("cka", |p| p.cka),
        ("r1_t2i", |p| p.r1_t2i),
        ("r5_t2i", |p| p.r5_t2i),
        ("r1_i2t", |p| p.r1_i2t),
        ("r5_i2t", |p| p.r5_i2t),
        ("match_top1", |p| p.match_top1),
        ("match_top5", |p| p.match_top5),
        ("match_chance", |p| p.match_chance),
        ("match_truth_ratio", |p| p.match_truth_ratio),
    ];
    let mut m = serde_json::Map::new();
    for (k, f) in keys {
        let s: SeedStats = seed_stats(&points.iter().map(f).collect::<Vec<_>>())?;
        m.insert(k.to_string(), serde_json::to_value(s)?);
    }
    Ok(serde_json::Value::Object(m))
}
