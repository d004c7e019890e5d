//! `prh-native translate` (issue 23, part 5): the captioner on real text. A decoder
//! trained on English captions only (from the English JEPA's embeddings) is joined to a
//! German JEPA, trained apart on German captions only, by one rotation fitted on the val
//! images' caption pairs; it then writes English captions for test_2016 German captions
//! without ever having seen a translation pair.
//!
//! ```text
//! $ prh-native translate --source-run runs/m30k/good_de --text-run runs/m30k/good_en \
//!     --decoder-run runs/m30k/decoder_good_en --out runs/m30k/translate_good
//! method                 BLEU-1  BLEU-4  CIDEr-D
//! ceiling (English in)    ...
//! rotation                ...
//! ```
//!
//! Input: caption 1 of each image (German for the maps, English for the ceiling);
//! references: English captions 2-5 of the image, for every row (caption 1 is the ceiling's
//! input). Rows: the ceiling (the decoder on the English encoder's own embedding), the
//! rotation and a least-squares map fitted on val, the null (a rotation on shuffled val
//! pairs), the German encoder before training (random init, rotation), and TF-IDF
//! retrieval (the English val caption whose TF-IDF vector is nearest the German caption's:
//! what shared surface tokens alone give).

use super::train_decoder::{DecoderRun, embed_rows, load_decoder};
use crate::output::{ResultsHeader, write_file, write_results};
use crate::run_folder::{load_text, load_text_model, stored_config};
use anyhow::{Context, Result, bail};
use prh_core::backend::burn::prelude::Backend;
use prh_core::experiments::captioner::{MapKind, fit_map};
use prh_core::linalg::{Matrix, from_rows, select_rows, to_rows};
use prh_core::measure::matching::seeded_permutation;
use prh_core::models::caption_decoder::condition;
use prh_core::tasks::decoder::write_captions;
use prh_core::tasks::text::TrainConfig;
use prh_core::text::caption_scores::{bleu, cider_d, words};
use prh_core::text::corpus::{self, Group};
use prh_core::text::tfidf::Tfidf;
use serde_json::json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

type Inner = <crate::backend::DemoBackend as prh_core::backend::burn::tensor::backend::AutodiffBackend>::InnerBackend;
type Device = prh_core::backend::burn::tensor::Device<Inner>;

/// Caption one language's captions in another through a rotation and a text-only decoder.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The source-language text JEPA's run folder (e.g. German).
    #[arg(long)]
    pub source_run: PathBuf,
    /// The target-language text JEPA's run folder (e.g. English): the decoder's encoder.
    #[arg(long)]
    pub text_run: PathBuf,
    /// The decoder's run folder (trained on --text-run's embeddings).
    #[arg(long)]
    pub decoder_run: PathBuf,
    /// Split whose image pairs fit the maps.
    #[arg(long, default_value = "val")]
    pub fit_split: String,
    /// Split translated.
    #[arg(long, default_value = "test_2016")]
    pub test_split: String,
    /// Test images translated (0: all).
    #[arg(long, default_value_t = 0)]
    pub groups: usize,
    /// Beam width (default: the decoder's `decoder.beam`).
    #[arg(long)]
    pub beam: Option<usize>,
    /// Data directory (default $PRH_DATA, else ../shared/data).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Output folder: results.json and translations.jsonl.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// A text JEPA run folder loaded for embedding.
struct TextRun {
    model: prh_core::models::text_encoder::TextEncoder<Inner>,
    spec: prh_core::models::text_encoder::EncoderSpec,
    tok: prh_core::text::tokenizer::TextTokenizer,
    cfg: TrainConfig,
    ck: prh_core::train::checkpoint::Checkpoint,
}

impl TextRun {
    fn load(dir: &Path, flag: &str, device: &Device) -> Result<Self> {
        let (spec, tok, ck) =
            load_text(dir, "latest").with_context(|| format!("{flag} {}", dir.display()))?;
        let cfg: TrainConfig = stored_config(&ck, &dir.join("checkpoints/latest.ckpt"))?;
        let model = load_text_model::<Inner>(&spec, &ck, device)?;
        Ok(Self {
            model,
            spec,
            tok,
            cfg,
            ck,
        })
    }

    fn embed(&self, texts: &[String], device: &Device) -> Result<Matrix> {
        let rows = embed_rows(&self.model, &self.spec, &self.tok, texts, device)?;
        Ok(from_rows(&rows)?)
    }
}

/// The groups of `split` in both languages, matched by image id, with at least 2 target
/// captions (references besides the ceiling's input).
fn both(data: &Path, split: &str, src: &str, tgt: &str) -> Result<Vec<(Group, Group)>> {
    let a = corpus::read_multi30k(data, split, src)?;
    let b = corpus::read_multi30k(data, split, tgt)?;
    let by_id: HashMap<&str, &Group> = b.groups.iter().map(|g| (g.id.as_str(), g)).collect();
    Ok(a.groups
        .iter()
        .filter_map(|g| by_id.get(g.id.as_str()).map(|h| (g.clone(), (*h).clone())))
        .filter(|(_, h)| h.texts.len() >= 2)
        .collect())
}

/// The first caption of each image: the target language's (`target`) or the source's.
fn first(gs: &[(Group, Group)], target: bool) -> Vec<String> {
    gs.iter()
        .map(|(a, b)| {
            if target {
                b.texts[0].clone()
            } else {
                a.texts[0].clone()
            }
        })
        .collect()
}

/// BLEU-1..4 and CIDEr-D of candidates against references.
fn scores(cands: &[String], refs: &[Vec<Vec<String>>]) -> serde_json::Value {
    let c: Vec<Vec<String>> = cands.iter().map(|s| words(s)).collect();
    let b = bleu(&c, refs);
    json!({ "bleu": b, "bleu4": b[3], "cider_d": cider_d(&c, refs).1 })
}

pub fn run(args: Args) -> Result<()> {
    let t0 = Instant::now();
    let device = Device::default();
    let src = TextRun::load(&args.source_run, "--source-run", &device)?;
    let tgt = TextRun::load(&args.text_run, "--text-run", &device)?;
    let dec = load_decoder::<Inner>(&args.decoder_run, "--decoder-run", &device)?;
    check_runs(&args, &src, &tgt, &dec)?;
    let (sl, tl) = (src.cfg.data.lang.clone(), tgt.cfg.data.lang.clone());
    let data = corpus::data_dir(args.data.as_deref())
        .context("no data directory: pass --data DIR or set PRH_DATA")?;
    let fit = both(&data, &args.fit_split, &sl, &tl)?;
    let mut test = both(&data, &args.test_split, &sl, &tl)?;
    if args.groups > 0 {
        test.truncate(args.groups);
    }
    let refs: Vec<Vec<Vec<String>>> = test
        .iter()
        .map(|(_, b)| b.texts[1..].iter().map(|t| words(t)).collect())
        .collect();
    let (fa, fb) = (
        src.embed(&first(&fit, false), &device)?,
        tgt.embed(&first(&fit, true), &device)?,
    );
    let test_src = src.embed(&first(&test, false), &device)?;
    let test_tgt = tgt.embed(&first(&test, true), &device)?;
    println!(
        "{} {sl} -> {tl}: maps fitted on {} {} image pairs, {} {} images translated",
        args.source_run.display(),
        fit.len(),
        args.fit_split,
        test.len(),
        args.test_split
    );
    let beam = args.beam.unwrap_or(dec.cfg.decoder.beam);
    let write = |x: &Matrix| -> Result<Vec<String>> {
        Ok(write_captions(
            &dec.decoder,
            &dec.tokenizer,
            &condition(&to_rows(x.as_ref())),
            beam,
            &device,
        )?)
    };
    let mut rows: Vec<(String, Vec<String>)> =
        vec![(format!("ceiling ({tl} in)"), write(&test_tgt)?)];
    for kind in [MapKind::Rotation, MapKind::Linear] {
        let m = fit_map(kind, &fa, &fb, 0)?;
        rows.push((kind.name().into(), write(&(&test_src * &m.m))?));
    }
    let shuffle = seeded_permutation(fb.nrows(), 0x0dd5);
    let shuffled = select_rows(fb.as_ref(), &shuffle);
    let m = fit_map(MapKind::Rotation, &fa, &shuffled, 0)?;
    rows.push(("null (shuffled pairs)".into(), write(&(&test_src * &m.m))?));
    rows.push((
        format!("random-init {sl} encoder"),
        random_init(&src, &fit, &test, &fb, &write, &device)?,
    ));
    rows.push((
        "TF-IDF retrieval".into(),
        tfidf_retrieval(&first(&fit, true), &first(&test, false)),
    ));
    let table = print_scores(&rows, &refs);
    if let Some(out) = &args.out {
        let body = json!({
            "source_run": args.source_run, "text_run": args.text_run, "decoder_run": args.decoder_run,
            "fit_split": args.fit_split, "test_split": args.test_split, "fit_pairs": fit.len(),
            "test_images": test.len(), "beam": beam, "references": "target captions 2-5 of each image",
            "rows": table,
        });
        write_outputs(&args, out, &test, &rows, &body, t0)?;
    }
    Ok(())
}

/// Refuses a decoder trained on another encoder than `--text-run`, and two encoders of
/// different widths (a rotation maps equal widths).
fn check_runs(args: &Args, src: &TextRun, tgt: &TextRun, dec: &DecoderRun<Inner>) -> Result<()> {
    dec.check_encoder(&args.decoder_run, &args.text_run, &tgt.ck, "encoder")?;
    if src.spec.d_model != tgt.spec.d_model {
        bail!(
            "--source-run embeds in d = {} and --text-run in d = {}: a rotation maps equal widths",
            src.spec.d_model,
            tgt.spec.d_model
        );
    }
    Ok(())
}

/// Prints each method's BLEU-1, BLEU-4 and CIDEr-D against `refs` and returns the rows
/// for results.json (`{"method", "scores"}`).
fn print_scores(
    rows: &[(String, Vec<String>)],
    refs: &[Vec<Vec<String>>],
) -> Vec<serde_json::Value> {
    println!(
        "{:<26} {:>7} {:>7} {:>8}",
        "method", "BLEU-1", "BLEU-4", "CIDEr-D"
    );
    let mut table = Vec::new();
    for (name, caps) in rows {
        let s = scores(caps, refs);
        println!(
            "{:<26} {:>7.3} {:>7.3} {:>8.3}",
            name,
            s["bleu"][0].as_f64().unwrap_or(f64::NAN),
            s["bleu4"].as_f64().unwrap_or(f64::NAN),
            s["cider_d"].as_f64().unwrap_or(f64::NAN)
        );
        table.push(json!({ "method": name, "scores": s }));
    }
    table
}

/// Writes `out/translations.jsonl` (one line per test image: its source caption, its
/// references and every method's translation) and `out/results.json` (`body` under the
/// common header).
fn write_outputs(
    args: &Args,
    out: &Path,
    test: &[(Group, Group)],
    rows: &[(String, Vec<String>)],
    body: &serde_json::Value,
    t0: Instant,
) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let mut lines = String::new();
    for (i, (a, b)) in test.iter().enumerate() {
        let by: serde_json::Map<String, serde_json::Value> =
            rows.iter().map(|(n, c)| (n.clone(), json!(c[i]))).collect();
        lines += &(json!({ "id": a.id, "source": a.texts[0], "references": b.texts[1..], "translations": by }).to_string() + "\n");
    }
    write_file(&out.join("translations.jsonl"), lines)?;
    let header = ResultsHeader::new(
        "translate",
        &args.decoder_run.display().to_string(),
        "cpu",
        t0.elapsed().as_secs_f64(),
    );
    write_results(out, &header, body)?;
    println!("wrote {}", out.display());
    Ok(())
}

/// The source encoder before training (seeded as its run was), joined by a rotation.
fn random_init(
    src: &TextRun,
    fit: &[(Group, Group)],
    test: &[(Group, Group)],
    fb: &Matrix,
    write: &dyn Fn(&Matrix) -> Result<Vec<String>>,
    device: &Device,
) -> Result<Vec<String>> {
    Inner::seed(
        device,
        prh_core::rng::derive_seed(src.cfg.run.seed, prh_core::rng::Stream::Init, 0),
    );
    let untrained = src.spec.init::<Inner>(device)?;
    let embed = |gs: &[(Group, Group)]| -> Result<Matrix> {
        let texts = first(gs, false);
        Ok(from_rows(&embed_rows(
            &untrained, &src.spec, &src.tok, &texts, device,
        )?)?)
    };
    let m = fit_map(MapKind::Rotation, &embed(fit)?, fb, 0)?;
    write(&(&embed(test)? * &m.m))
}

/// For each source caption, the target fit caption nearest in TF-IDF (fitted on both
/// sets together, 4,096 terms): retrieval by shared surface tokens (names, numbers,
/// cognates), no training.
fn tfidf_retrieval(targets: &[String], sources: &[String]) -> Vec<String> {
    let all: Vec<&String> = targets.iter().chain(sources).collect();
    let tf = Tfidf::fit(&all, 4096);
    let w = tf.width();
    let (t, s) = (tf.transform(targets), tf.transform(sources));
    (0..sources.len())
        .map(|i| {
            let si = &s[i * w..(i + 1) * w];
            let best = (0..targets.len())
                .max_by(|&a, &b| {
                    let dot = |k: usize| {
                        t[k * w..(k + 1) * w]
                            .iter()
                            .zip(si)
                            .map(|(x, y)| x * y)
                            .sum::<f64>()
                    };
                    dot(a).total_cmp(&dot(b)).then(b.cmp(&a))
                })
                .unwrap_or(0);
            targets[best].clone()
        })
        .collect()
}
