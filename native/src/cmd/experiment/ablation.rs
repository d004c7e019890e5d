//! `prh-native experiment text-ablation`: what limits a text JEPA's learning, one change
//! per row (issue 20's diagnosis). Each row of `[[experiment.ablation]]` is a set of
//! `[train]` overrides; per row and seed the first language's encoder is trained on its
//! Multi30k training captions and scored on the held-out split **without a second
//! model**: caption 1 vs caption 2 of each image (mutual k-NN, R@1 among all images).
//! Rows with `cross = true` also train the second language and score the two against
//! each other (mutual k-NN, CKA, R@1 after a rotation fit on the fit split). The baselines
//! (the random initialisation of each row, TF-IDF) sit beside them. The held-out split is
//! the validation split: settings are chosen here and reported on test by
//! `views-multilingual`.

use super::bilingual::Bilingual;
use super::{Args, Training, load_config, out_dir};
use crate::output::{ResultsHeader, write_file, write_results};
use anyhow::{Context, Result};
use prh_core::backend::burn::tensor::backend::AutodiffBackend;
use prh_core::experiments::multilingual::{AblationRow, AlignmentPoint, ExperimentConfig};
use prh_core::measure::retrieval::PairScores;
use serde::Serialize;
use std::fmt::Write as _;
use std::time::Instant;

/// One row x seed of the ablation.
#[derive(Serialize)]
struct RowResult {
    name: String,
    set: Vec<String>,
    seed: u64,
    steps: usize,
    /// Training seconds of the first language's encoder.
    train_s: f64,
    /// Caption 1 vs caption 2 (first language) at the end, and at step 0.
    pair: PairScores,
    pair_init: PairScores,
    /// With `cross`: first vs second language at the end.
    cross: Option<AlignmentPoint>,
}

pub(super) fn run<B: AutodiffBackend>(args: &Args, training: Training<'_, B>) -> Result<()> {
    let t0 = Instant::now();
    let (source, cfg) = load_config(args)?;
    let spec = &cfg.spec;
    if spec.ablation.is_empty() {
        anyhow::bail!(
            "{source}: experiment.ablation: expected at least one [[experiment.ablation]] row"
        );
    }
    let dir = super::corpus_dir(args, spec)?;
    let out = out_dir(args)?;
    let mut results = Vec::new();
    let mut tfidf = None;
    for row in &spec.ablation {
        let rcfg = row_config(&cfg, row);
        let bi = Bilingual::load(&rcfg, &source, &dir)
            .with_context(|| format!("ablation row `{}`", row.name))?;
        if tfidf.is_none() {
            tfidf = Some(bi.tfidf_point(spec)?);
        }
        let d = rcfg
            .train_config(&source, row.objective, 0, &spec.langs[0])?
            .model
            .dims()
            .0;
        let opts = super::bilingual::metric_options(spec, 0, true);
        for &seed in &spec.seeds {
            let (first, cross) = train_row::<B>(&bi, &rcfg, &source, row, seed, training)?;
            let (init, last) = match (first.snaps.first(), first.snaps.last()) {
                (Some(i), Some(l)) => (i, l),
                _ => anyhow::bail!("row `{}`: no snapshot recorded", row.name),
            };
            results.push(RowResult {
                name: row.name.clone(),
                set: row.set.clone(),
                seed,
                steps: first.steps,
                train_s: first.train_s,
                pair: bi.pair_scores(&last.embeddings, d, &opts)?,
                pair_init: bi.pair_scores(&init.embeddings, d, &opts)?,
                cross,
            });
            print_row(
                results.last().context("a row was just pushed")?,
                &spec.langs,
            );
        }
    }
    let tfidf = tfidf.context("no row ran")?;
    let wall_s = t0.elapsed().as_secs_f64();
    let header = ResultsHeader::new(&spec.name, &source, &args.device, wall_s).with_sets(&args.set);
    let body = serde_json::json!({
        "langs": spec.langs,
        "fit_split": spec.fit_split,
        "heldout_split": spec.test_split,
        "k": spec.k,
        "tfidf": tfidf,
        "rows": results,
    });
    write_results(&out, &header, &body)?;
    write_file(
        &out.join("report.md"),
        report_md(&cfg, &header, &results, &tfidf),
    )?;
    eprintln!(
        "report folder {}: results.json report.md ({wall_s:.1} s)",
        out.display()
    );
    Ok(())
}

/// Trains `row`'s first-language encoder for `seed` (with `cross`, the second language's
/// beside it): the first language's run and, with `cross`, the last cross-language point.
fn train_row<B: AutodiffBackend>(
    bi: &Bilingual,
    rcfg: &ExperimentConfig,
    source: &str,
    row: &AblationRow,
    seed: u64,
    training: Training<'_, B>,
) -> Result<(super::bilingual::LangRun, Option<AlignmentPoint>)> {
    let mut none = |_: usize, _: &_, _: &_, _: &str| Ok(());
    if row.cross {
        let pair =
            bi.train_pair::<B>(rcfg, source, row.objective, seed, None, 0, training, none)?;
        let curve = bi.curve(rcfg, source, &pair)?;
        let steps = curve.last().map_or(0, |p| p.step);
        let first = super::bilingual::LangRun {
            snaps: pair.snaps[0].clone(),
            final_loss: pair.final_loss[0],
            train_s: pair.train_s[0],
            steps,
        };
        Ok((first, curve.last().copied()))
    } else {
        let run = bi.train_lang::<B>(
            rcfg,
            source,
            0,
            (row.objective, seed),
            None,
            0,
            training,
            &mut none,
        )?;
        Ok((run, None))
    }
}

/// One line per finished row and seed: the first language's caption 1 vs 2 scores and,
/// with `cross`, the two languages' mutual k-NN.
fn print_row(r: &RowResult, langs: &[String]) {
    eprintln!(
        "{} seed {}: {} cap 1 vs 2 mutual k-NN {:.4}, R@1 {:.4}{}",
        r.name,
        r.seed,
        langs[0],
        r.pair.mutual_knn,
        r.pair.r1,
        r.cross
            .map(|c| format!(
                "; {} vs {} mutual k-NN {:.4}",
                langs[0], langs[1], c.mutual_knn
            ))
            .unwrap_or_default()
    );
}

/// The experiment config with `row`'s overrides after the experiment's own.
fn row_config(cfg: &ExperimentConfig, row: &AblationRow) -> ExperimentConfig {
    let mut c = cfg.clone();
    c.train_overrides.extend(row.set.iter().cloned());
    c
}

/// `report.md`: one line per row and seed, the baselines first.
fn report_md(
    cfg: &ExperimentConfig,
    header: &ResultsHeader,
    rows: &[RowResult],
    tfidf: &AlignmentPoint,
) -> String {
    let spec = &cfg.spec;
    let (a, b) = (&spec.langs[0], &spec.langs[1]);
    let mut md = format!(
        "# {}\n\nCommand: `{}`  \nConfig: `{}`  \nWall time: {:.0} s on `{}`.\n\n\
         One change per row (the `[train]` overrides in the second column, after the \
         config's own). First metric of every row: within {a}, caption 1 vs caption 2 of \
         the {} images (mutual {}-NN and R@1 among all of them; no second model, no fitted \
         map). Rows marked with a {b} score also trained a {b} encoder apart and compare the \
         two ({a} vs {b} mutual k-NN, CKA, R@1 {a}→{b} after a rotation fit on {}). \
         \"init\" is the same row's encoder before training.\n\n\
         | row | overrides | seed | steps | train s | {a} pair mutual k-NN (init) | {a} pair R@1 (init) | {a} vs {b} mutual k-NN | CKA | R@1 {a}→{b} |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
        spec.name,
        header.command,
        header.config_source,
        header.wall_s,
        header.device,
        spec.test_split,
        spec.k,
        spec.fit_split,
    );
    let pairs = tfidf.pairs.map(|p| p[0]);
    let _ = writeln!(
        md,
        "| TF-IDF (no training) | `tfidf_features = {}` | – | – | – | {} | {} | {:.4} | {:.4} | {:.4} |",
        spec.tfidf_features,
        pairs.map_or("–".into(), |p| format!("{:.4}", p.mutual_knn)),
        pairs.map_or("–".into(), |p| format!("{:.4}", p.r1)),
        tfidf.mutual_knn,
        tfidf.cka,
        tfidf.r1_a_to_b,
    );
    for r in rows {
        let cross = |f: fn(&AlignmentPoint) -> f64| {
            r.cross
                .as_ref()
                .map_or("–".into(), |c| format!("{:.4}", f(c)))
        };
        let _ = writeln!(
            md,
            "| {} | `{}` | {} | {} | {:.0} | {:.4} ({:.4}) | {:.4} ({:.4}) | {} | {} | {} |",
            r.name,
            r.set.join(" "),
            r.seed,
            r.steps,
            r.train_s,
            r.pair.mutual_knn,
            r.pair_init.mutual_knn,
            r.pair.r1,
            r.pair_init.r1,
            cross(|c| c.mutual_knn),
            cross(|c| c.cka),
            cross(|c| c.r1_a_to_b),
        );
    }
    let _ = write!(
        md,
        "\nChance: mutual {k}-NN about {k}/(n-1), R@1 1/n. TF-IDF is measured without the outlier \
         clamp (its rows are sparse); every encoder with the PRH preprocessing.\n",
        k = spec.k
    );
    md
}
