//! `prh-native experiment views-vision`: per objective and seed a text encoder trained on
//! WordNet + Multi30k text, compared with EfficientNet-Lite0's class vectors over training;
//! a random-init row; exports of each objective's first seed for the web app.

use crate::output::{ResultsHeader, write_file, write_results};
use anyhow::{Context, Result};
use prh_core::backend::burn::tensor::backend::AutodiffBackend;
use prh_core::experiments::multilingual::ExperimentConfig;
use prh_core::experiments::multilingual::bands;
use prh_core::experiments::report::{Series, svg_bands};
use prh_core::theory::view_kind::ViewKind;
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

use super::vision::{VisionData, load, score, score_with, stats_of, train_one, write_exports};
use super::{Args, Training, load_config, out_dir};
use prh_core::experiments::spectral_tfidf::{SpectralTfidf, fit_seeds};
use prh_core::experiments::vision::VisionScores;
use prh_core::text::tfidf::Tfidf;

/// One objective x seed: scores at each recorded step (the last with null and matcher).
#[derive(Serialize)]
struct Run {
    objective: String,
    seed: u64,
    curve: Vec<(usize, VisionScores)>,
    final_loss: f64,
    train_s: f64,
}

pub(super) fn run<B: AutodiffBackend>(args: &Args, training: Training<'_, B>) -> Result<()> {
    let t0 = Instant::now();
    let (source, cfg) = load_config(args)?;
    let spec = &cfg.spec;
    let dir = prh_core::text::corpus::data_dir(args.data.as_deref()).context(
        "no data directory: pass --data DIR or set PRH_DATA (needs DIR/imagenet and DIR/multi30k)",
    )?;
    let out = out_dir(args)?;
    let data = load(args, &cfg, &source, &dir)?;
    let base = cfg.train_config(&source, ViewKind::Good, 0, "en")?;
    let steps = cfg.describe_steps(&source)?;
    eprintln!(
        "{}: {} objectives x {} seeds, {steps} of batch {} on {} groups ({} WordNet synsets, \
         {} ImageNet synsets left out, {} Multi30k images); probes: 1,000 class texts",
        spec.name,
        spec.objectives.len(),
        spec.seeds.len(),
        base.views.batch_size,
        data.groups.len(),
        data.counts.0,
        data.counts.1,
        data.counts.2
    );
    let mut runs = Vec::new();
    let mut init_points = Vec::new();
    for (oi, &objective) in spec.objectives.iter().enumerate() {
        for (si, &seed) in spec.seeds.iter().enumerate() {
            let export = spec.vision.export && si == 0;
            let (run, init) = train_and_score::<B>(
                (&cfg, &source, &data, &out),
                objective,
                seed,
                export,
                oi == 0,
                training,
            )?;
            init_points.extend(init);
            runs.push(run);
        }
    }
    let tfidf = tfidf_scores(&cfg, &data)?;
    let mut rows = summary_rows(&cfg, &runs, &init_points)?;
    rows.push(("TF-IDF".to_string(), stats_of(&[tfidf])?));
    rows.extend(closed_form_rows(&cfg, &data)?);
    let wall_s = t0.elapsed().as_secs_f64();
    let header = ResultsHeader::new(&spec.name, &source, &args.device, wall_s).with_sets(&args.set);
    let body = serde_json::json!({
        "class_text": "lemmas: definition",
        "wordnet_synsets": data.counts.0,
        "imagenet_synsets_left_out": data.counts.1,
        "multi30k_images": data.counts.2,
        "steps": base.run.steps,
        "objective_steps": cfg.steps_by_label(&source)?,
        "batch_size": base.views.batch_size,
        "k": spec.k,
        "summary": rows.iter().map(|(l, v)| serde_json::json!({"row": l, "stats": v})).collect::<Vec<_>>(),
        "runs": runs,
    });
    write_results(&out, &header, &body)?;
    let plot_files = write_plots(&cfg, &out, &runs)?;
    let md = report_md(args, &header, &cfg, &data, &rows, &plot_files, &steps);
    let p = out.join("report.md");
    write_file(&p, md)?;
    eprintln!(
        "report folder {}: results.json report.md {} ({wall_s:.1} s)",
        out.display(),
        plot_files.join(" ")
    );
    Ok(())
}

/// Trains one objective x seed and scores each recorded step (the web exports from the
/// final one when `export`); with `init`, also the step-0 (random-init) scores.
fn train_and_score<B: AutodiffBackend>(
    (cfg, source, data, out): (&ExperimentConfig, &str, &VisionData, &Path),
    objective: ViewKind,
    seed: u64,
    export: bool,
    init: bool,
    training: Training<'_, B>,
) -> Result<(Run, Option<VisionScores>)> {
    let spec = &cfg.spec;
    let tr = train_one::<B>(
        cfg,
        source,
        data,
        objective,
        seed,
        None,
        spec.eval_every,
        export,
        training,
    )?;
    let mut curve = Vec::new();
    let last = tr.snapshots.len().saturating_sub(1);
    for (i, snap) in tr.snapshots.iter().enumerate() {
        let (s, map) = score(data, cfg, &snap.embeddings, tr.d, seed, i == last)?;
        if i == last
            && let Some(bundle) = &tr.bundle
        {
            let fit = serde_json::json!({
                "objective": objective.label(),
                "seed": seed,
                "step": snap.step,
                "text": "lemmas: definition",
                "preprocess": "z - text_mean, then cosine with class_vectors",
                "class_vectors": "vision rows centred on the 900 fit classes' mean, \
                                  L2-normalised, mapped by Q^T, L2-normalised",
                "map": "Q = argmin ||T Q - V||_F, Q Q^T = I, fit on the 900 classes \
                        outside ImageNet-100",
                "n_fit": s.n_fit,
                "r1_t2i_imagenet100": s.r1_t2i,
                "r5_t2i_imagenet100": s.r5_t2i,
            });
            write_exports(
                out,
                objective.label(),
                bundle,
                data,
                (&map, &fit),
                (&snap.embeddings, tr.d),
            )?;
        }
        curve.push((snap.step, s));
    }
    let init_point = if init {
        // The step-0 encoder is the random initialisation of this seed.
        let first = tr
            .snapshots
            .first()
            .context("no step-0 snapshot recorded")?;
        Some(score(data, cfg, &first.embeddings, tr.d, seed, true)?.0)
    } else {
        None
    };
    let run = Run {
        objective: objective.label().to_string(),
        seed,
        curve,
        final_loss: tr.final_loss,
        train_s: tr.train_s,
    };
    Ok((run, init_point))
}

/// The training-free baseline: TF-IDF ([`Tfidf`], fit on the training texts,
/// `tfidf_features` terms) of the 1,000 class texts, scored as the encoders are but
/// without the outlier clamp (the rows are sparse).
pub(super) fn tfidf_scores(cfg: &ExperimentConfig, data: &VisionData) -> Result<VisionScores> {
    let texts: Vec<&str> = data
        .groups
        .iter()
        .flat_map(|g| g.texts.iter().map(String::as_str))
        .collect();
    let t = Tfidf::fit(&texts, cfg.spec.tfidf_features);
    let emb: Vec<f32> = t
        .transform(&data.class_texts)
        .iter()
        .map(|&v| v as f32)
        .collect();
    Ok(score_with(data, cfg, (&emb, t.width()), 0, true, false)?.0)
}

/// The closed-form encoders of `experiment.closed_form_views` ([`SpectralTfidf`]: the
/// spectral loss minimised exactly over linear maps of TF-IDF, fit on the training groups'
/// texts), scored on the class texts as the encoders are, one fit per [`fit_seeds`]. One
/// row per view kind.
fn closed_form_rows(
    cfg: &ExperimentConfig,
    data: &VisionData,
) -> Result<Vec<(String, serde_json::Value)>> {
    let spec = &cfg.spec;
    let groups: Vec<&[String]> = data.groups.iter().map(|g| g.texts.as_slice()).collect();
    let mut rows = Vec::new();
    for &kind in &spec.closed_form_views {
        let mut points = Vec::new();
        for &seed in fit_seeds(kind, &spec.seeds) {
            let t0 = Instant::now();
            let enc = SpectralTfidf::fit(&groups, kind, &spec.closed_form, seed)
                .with_context(|| format!("closed form, {}", kind.label()))?;
            let emb = enc.embed(&data.class_texts);
            points.push(score_with(data, cfg, (&emb, enc.dim()), seed, true, true)?.0);
            eprintln!(
                "closed form {} seed {seed}: fit and scored in {:.1} s",
                kind.label(),
                t0.elapsed().as_secs_f64()
            );
        }
        rows.push((format!("closed form, {}", kind.label()), stats_of(&points)?));
    }
    Ok(rows)
}

/// Summaries: final step per objective, plus the random-init row.
fn summary_rows(
    cfg: &ExperimentConfig,
    runs: &[Run],
    init_points: &[VisionScores],
) -> Result<Vec<(String, serde_json::Value)>> {
    let mut rows: Vec<(String, serde_json::Value)> = Vec::new();
    for &objective in &cfg.spec.objectives {
        let name = objective.label();
        let fin: Vec<VisionScores> = runs
            .iter()
            .filter(|r| r.objective == name)
            .filter_map(|r| r.curve.last().map(|p| p.1))
            .collect();
        rows.push((name.to_string(), stats_of(&fin)?));
    }
    rows.push(("random init".to_string(), stats_of(init_points)?));
    Ok(rows)
}

/// One SVG per score (seeds as min-max bands around the mean); their file names.
fn write_plots(cfg: &ExperimentConfig, out: &Path, runs: &[Run]) -> Result<Vec<String>> {
    let spec = &cfg.spec;
    type Get = fn(&VisionScores) -> f64;
    let plots: [(&str, &str, Get); 3] = [
        ("mutual_knn", "mutual 10-NN, 1,000 classes", |p| {
            p.mutual_knn
        }),
        ("cka", "linear CKA, 1,000 classes", |p| p.cka),
        ("r5", "R@5 text→image, ImageNet-100", |p| p.r5_t2i),
    ];
    let mut plot_files = Vec::new();
    for (key, label, f) in plots {
        let mut per = Vec::new();
        for &objective in &spec.objectives {
            let name = objective.label();
            let curves: Vec<Vec<(usize, f64)>> = runs
                .iter()
                .filter(|r| r.objective == name)
                .map(|r| r.curve.iter().map(|(s, p)| (*s, f(p))).collect())
                .collect();
            per.push((name, bands(&curves)?));
        }
        let series: Vec<Series<'_>> = per
            .iter()
            .map(|(l, p)| Series {
                label: l,
                points: p,
            })
            .collect();
        let name = format!("alignment_{key}.svg");
        let p = out.join(&name);
        let svg = svg_bands(
            &format!("{}: text vs EfficientNet-Lite0 over training", spec.name),
            label,
            &series,
        );
        write_file(&p, svg)?;
        plot_files.push(name);
    }
    Ok(plot_files)
}

fn cell(v: &serde_json::Value, key: &str) -> String {
    let g = |k: &str| v[key][k].as_f64().unwrap_or(f64::NAN);
    if v[key]["n"].as_u64().unwrap_or(0) > 1 {
        format!("{:.3} ± {:.3}", g("mean"), g("std"))
    } else {
        format!("{:.3}", g("mean"))
    }
}

/// The summary table's rows in markdown, one per row of `rows`.
fn table_rows(rows: &[(String, serde_json::Value)]) -> String {
    let mut md = String::new();
    for (label, v) in rows {
        md.push_str(&format!(
            "| {label} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            cell(v, "mutual_knn"),
            cell(v, "null_mean"),
            cell(v, "cka"),
            cell(v, "r1_t2i"),
            cell(v, "r5_t2i"),
            cell(v, "r1_i2t"),
            cell(v, "r5_i2t"),
            cell(v, "match_top1"),
            cell(v, "match_top5"),
            cell(v, "match_truth_ratio"),
        ));
    }
    md
}

/// "What it means": the paper's ordering, then good views' mutual 10-NN and R@5 text→image
/// minus each other row's (seed means).
fn differences_md(rows: &[(String, serde_json::Value)]) -> String {
    let mut md = String::new();
    let mean = |label: &str, key: &str| {
        rows.iter()
            .find(|r| r.0 == label)
            .and_then(|r| r.1[key]["mean"].as_f64())
    };
    md.push_str(
        "\n## What it means\n\nThe paper predicts good views > bad views and good views > \
         next-token on alignment with a vision model (WIT-1024 mutual 10-NN vs DINOv2: good \
         .184, next-token .111, bad .088 at 109M parameters; pair-free ImageNet-100 top-5 \
         64.4%). Differences of seed means here:\n\n",
    );
    for other in ["bad", "next-token", "random init"] {
        if let (Some(g), Some(o)) = (mean("good", "mutual_knn"), mean(other, "mutual_knn")) {
            md.push_str(&format!(
                "- mutual 10-NN good − {other}: {:+.4}; R@5 t→i good − {other}: {:+.4}\n",
                g - o,
                mean("good", "r5_t2i").unwrap_or(f64::NAN)
                    - mean(other, "r5_t2i").unwrap_or(f64::NAN)
            ));
        }
    }
    md
}

#[allow(clippy::too_many_arguments)]
fn report_md(
    args: &Args,
    header: &ResultsHeader,
    cfg: &prh_core::experiments::multilingual::ExperimentConfig,
    data: &super::vision::VisionData,
    rows: &[(String, serde_json::Value)],
    plots: &[String],
    steps: &str,
) -> String {
    let spec = &cfg.spec;
    let (command, source, wall_s) = (&header.command, &header.config_source, header.wall_s);
    let mut md = format!(
        "# {}\n\nCommand: `{command}`  \nConfig: `{source}`  \nWall time: {wall_s:.0} s on `{}`.\n\n\
         Text encoders (same architecture and data; {steps}) trained on {} \
         WordNet 3.0 noun synsets (lemmas / definition / examples as the texts of one concept; \
         the {} ImageNet-1k class synsets are {} training) and {} English Multi30k images (5 \
         captions each). Each embeds the 1,000 ImageNet class texts `\"lemmas: definition\"`; \
         the rows are compared with EfficientNet-Lite0's classifier rows (1,280-d). Mutual \
         10-NN and CKA over all 1,000 classes; R@k among the 100 ImageNet-100 classes after a \
         rotation fit on the other 900 (chance R@1 0.010, R@5 0.050); pair-free matching on \
         ImageNet-100 with no pairs (top-1 accuracy; top-5 after a rotation fit on the matched \
         pairs; chance 0.010 / 0.050; GW truth/found: the matching objective of the true \
         pairing over that of the pairing found — above 1 the truth is not the objective's \
         optimum, so the geometries, not the solver, keep matching at chance). Cells: mean \
         ± std over {} seed(s) at the final step; the random-init row is each seed's step-0 encoder. Tokens per text {:.1}, per group \
         {:.1} (capped at max_len).\n\n\
         | encoder | mutual 10-NN | null | CKA | R@1 t→i | R@5 t→i | R@1 i→t | R@5 i→t | match top-1 | match top-5 | GW truth/found |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
        spec.name,
        args.device,
        data.counts.0,
        if spec.vision.exclude_eval_synsets {
            data.counts.1
        } else {
            1000
        },
        if spec.vision.exclude_eval_synsets {
            "left out of"
        } else {
            "kept in"
        },
        data.counts.2,
        spec.seeds.len(),
        data.tokens_per_text,
        data.tokens_per_group,
    );
    md.push_str(&table_rows(rows));
    md.push_str(&differences_md(rows));
    if !spec.closed_form_views.is_empty() {
        md.push('\n');
        md.push_str(&spec.closed_form.describe());
    }
    md.push_str(
        "\nA difference smaller than the seed spread is not evidence either way; a score near \
         the null (mutual k-NN) or chance (R@k, matching) means no shared structure.\n\n## Plots\n\n",
    );
    for p in plots {
        md.push_str(&format!("![{p}]({p})\n\n"));
    }
    md.push_str("Lines: seed mean; bands: seed min–max; step 0 is the random initialisation.\n");
    md
}
