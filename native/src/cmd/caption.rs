//! `prh-native caption`: one rotation makes a captioner (paper §6, issue 23). Held-out
//! pictures go through the image encoder, a map fitted on N paired states, and a decoder
//! trained on captions only ([`prh_core::experiments::captioner`]).
//!
//! ```text
//! $ prh-native caption --image-run runs/demo/spectral_good_image \
//!     --text-run runs/demo/spectral_good_text --decoder-run runs/decoder-good --fit 16
//! method                pairs  CIDEr-D  BLEU-4  shape colour  size  place   all
//! rotation                 16    ...
//! $ prh-native caption ... --curve --out runs/caption-good     # every N, every map
//! ```
//!
//! Output folder (`--out`): `captions.jsonl` (one line per test picture: its state and
//! background and every method's caption), `scores.json`, and with `--curve` `curve.json`
//! and `curve.svg` (CIDEr-D and all-attributes-right against N).

use super::train_decoder::{DecoderRun, load_decoder};
use crate::backend::demo_devices;
use crate::output::{ResultsHeader, write_file, write_results};
use crate::run_folder::{SceneRun, load_scene};
use anyhow::{Context, Result, bail};
use prh_core::experiments::captioner::{CaptionRow, Embedded, MapKind, Split, Writer, embed};
use prh_core::experiments::report::{ScalingSeries, svg_log_x};
use prh_core::scene::Modality;
use prh_core::tasks::scene::untrained_model;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The inference backend.
type Inner = <crate::backend::DemoBackend as prh_core::backend::burn::tensor::backend::AutodiffBackend>::InnerBackend;

/// Caption held-out pictures through image encoder -> fitted map -> text-only decoder.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The image encoder's run folder (a scene-image run).
    #[arg(long)]
    pub image_run: PathBuf,
    /// The caption encoder's run folder (a scene-caption run; the decoder's encoder).
    #[arg(long)]
    pub text_run: PathBuf,
    /// The decoder's run folder (task.kind = "scene-decoder", trained on --text-run).
    #[arg(long)]
    pub decoder_run: PathBuf,
    /// Paired states the map is fitted on (1 up to the fit pool, two thirds of the states).
    #[arg(long)]
    pub fit: Option<usize>,
    /// rotation, linear, pair-free or all.
    #[arg(long, default_value = "all")]
    pub map: String,
    /// Every N (1, 2, 4, ... the whole pool) for the rotation, the linear map and the null.
    #[arg(long)]
    pub curve: bool,
    /// Beam width (1 = greedy; default: the decoder's `decoder.beam`).
    #[arg(long)]
    pub beam: Option<usize>,
    /// Seed of the split into fit pool and test states, and of the renderings.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Output folder for captions and scores.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also write the web app's captioner (`.safetensors`: image encoder, decoder, the fit
    /// pool's embeddings, the held-out pictures and this command's captions of them).
    #[arg(long)]
    pub export: Option<PathBuf>,
}

/// The three runs, loaded and checked to belong together.
struct Runs {
    image: SceneRun<Inner>,
    text: SceneRun<Inner>,
    decoder: DecoderRun<Inner>,
}

/// Loads the runs and refuses pairs that cannot be joined: wrong modalities, different
/// worlds or widths, a decoder trained on another encoder.
fn load(args: &Args, device: &prh_core::backend::burn::tensor::Device<Inner>) -> Result<Runs> {
    let image = load_scene::<Inner>(&args.image_run, "--image-run", device)?;
    let text = load_scene::<Inner>(&args.text_run, "--text-run", device)?;
    let kind = |m: Modality| match m {
        Modality::Image => "scene-image",
        Modality::Text => "scene-caption",
    };
    for (run, flag, dir, want) in [
        (&image, "--image-run", &args.image_run, Modality::Image),
        (&text, "--text-run", &args.text_run, Modality::Text),
    ] {
        let is = run.cfg.modality()?;
        if is != want {
            bail!(
                "{flag} {}: a {} run, expected a {} run",
                dir.display(),
                kind(is),
                kind(want)
            );
        }
    }
    if image.cfg.world != text.cfg.world {
        bail!(
            "--image-run {} and --text-run {} were trained on different worlds ([world] of \
             their config.toml: {:?} vs {:?}); pictures and captions must describe one world",
            args.image_run.display(),
            args.text_run.display(),
            image.cfg.world.cardinality,
            text.cfg.world.cardinality
        );
    }
    let probe = prh_core::scene::SceneView::full(image.world.state(0), 0, 0);
    let (di, dt) = (
        image.model.embed(&[probe], device)?[0].len(),
        text.model.embed(&[probe], device)?[0].len(),
    );
    if di != dt {
        bail!(
            "--image-run {} embeds in d = {di} and --text-run {} in d = {dt}: a rotation maps \
             equal widths (image.out_dim / caption.out_dim of their configs)",
            args.image_run.display(),
            args.text_run.display()
        );
    }
    let decoder = load_decoder::<Inner>(&args.decoder_run, "--decoder-run", device)?;
    decoder.check_encoder(
        &args.decoder_run,
        &args.text_run,
        &text.ck,
        "caption encoder",
    )?;
    Ok(Runs {
        image,
        text,
        decoder,
    })
}

/// The maps `--map` names.
fn maps(arg: &str) -> Result<Vec<MapKind>> {
    if arg == "all" {
        Ok(MapKind::ALL.to_vec())
    } else {
        Ok(vec![MapKind::parse(arg)?])
    }
}

pub fn run(args: Args) -> Result<()> {
    let t0 = Instant::now();
    let device = demo_devices().main();
    let runs = load(&args, &device)?;
    let world = &runs.image.world;
    let split = Split::new(world.n_states(), args.seed);
    let maps = maps(&args.map)?;
    let needs_pairs = maps.iter().any(|m| *m != MapKind::PairFree);
    let n = match args.fit {
        Some(0) | None if needs_pairs && !args.curve => bail!(
            "no map to caption with: give --fit N (1 to {} pairs of the fit pool), --curve, or \
             --map pair-free",
            split.pool.len()
        ),
        Some(n) if n > split.pool.len() => bail!(
            "--fit {n}: the fit pool holds {} states (two thirds of the world's {}); at most \
             that many pairs",
            split.pool.len(),
            world.n_states()
        ),
        Some(n) => n,
        None => split.pool.len(),
    };
    let beam = args.beam.unwrap_or(runs.decoder.cfg.decoder.beam);
    let writer = Writer {
        decoder: &runs.decoder.decoder,
        tokenizer: &runs.decoder.tokenizer,
        beam,
        device: &device,
    };
    let emb = embed(
        world,
        &split,
        &runs.image.model,
        &runs.text.model,
        args.seed,
        &device,
    )?;
    println!(
        "{} test pictures ({} states in the fit pool, {} held out); decoder beam {beam}",
        split.test.len(),
        split.pool.len(),
        split.test.len()
    );
    let mut rows = vec![writer.ceiling(&emb)?];
    for &m in &maps {
        rows.push(writer.with_map(&emb, m, n, args.seed)?);
    }
    rows.push(writer.identity(&emb)?);
    if needs_pairs {
        rows.push(writer.null(&emb, n, args.seed)?);
        rows.push(random_init(&runs, &split, &writer, n, args.seed, &device)?);
    }
    print_rows(&rows);
    let curve = if args.curve {
        Some(curve(&emb, &split, &writer, args.seed)?)
    } else {
        None
    };
    if let Some(out) = &args.out {
        write_outputs(out, &args, (&emb, &split), &rows, curve.as_deref(), t0)?;
    }
    if let Some(file) = &args.export {
        export(file, &runs, &emb, beam, args.seed, &device)?;
    }
    Ok(())
}

/// Pair counts and maps whose captions the export carries for the end-to-end test.
const EXPORT_FITS: [(MapKind, usize); 5] = [
    (MapKind::Rotation, 2),
    (MapKind::Rotation, 8),
    (MapKind::Rotation, 16),
    (MapKind::Linear, 16),
    (MapKind::Rotation, usize::MAX),
];

/// Writes the web app's captioner bundle; its expected captions are computed as the page
/// computes them (from the bundle as stored: f32 pool embeddings, one picture at a time).
fn export(
    file: &Path,
    runs: &Runs,
    emb: &Embedded,
    beam: usize,
    seed: u64,
    device: &prh_core::backend::burn::tensor::Device<Inner>,
) -> Result<()> {
    use prh_core::experiments::captioner::CaptionerBundle;
    let image_dir = &runs.image;
    let mut bundle = CaptionerBundle {
        image_config: image_dir.cfg.to_toml()?,
        image_record: image_dir.ck.model.clone(),
        decoder_config: runs.decoder.cfg.to_toml()?,
        decoder_record: runs.decoder.record.clone(),
        tokenizer: runs.decoder.tokenizer.to_json()?,
        dim: emb.pool_image.ncols(),
        beam,
        pool_image: emb.pool_image.clone(),
        pool_text: emb.pool_text.clone(),
        test_views: emb
            .test_views
            .iter()
            .map(|v| (v.state, v.nuisance, v.style_seed))
            .collect(),
        expected: vec![],
    };
    // Round trip first, so the expected captions come from the f32 rows the page reads.
    let stored = CaptionerBundle::from_bytes(&file.display().to_string(), &bundle.to_bytes()?)?;
    let pool = stored.pool_image.nrows();
    let test: Vec<Vec<f64>> = runs.image.model.embed(&emb.test_views, device)?;
    for (kind, n) in EXPORT_FITS {
        let n = n.min(pool);
        let mut caps = Vec::new();
        for z in &test {
            let row = stored.map_row(z, kind, n, seed)?;
            let cond = prh_core::models::caption_decoder::condition(&[row]);
            caps.extend(prh_core::tasks::decoder::write_captions(
                &runs.decoder.decoder,
                &runs.decoder.tokenizer,
                &cond,
                beam,
                device,
            )?);
        }
        bundle.expected.push((kind, n, caps));
    }
    write_file(file, bundle.to_bytes()?)?;
    println!("exported the captioner to {}", file.display());
    Ok(())
}

/// The random-init baseline: the image run's encoder before training, rotation on `n`.
fn random_init(
    runs: &Runs,
    split: &Split,
    writer: &Writer<'_, Inner>,
    n: usize,
    seed: u64,
    device: &prh_core::backend::burn::tensor::Device<Inner>,
) -> Result<CaptionRow> {
    let r = &runs.image;
    let untrained = untrained_model::<Inner>(&r.cfg, &r.world, r.tokenizer.as_ref(), device)?;
    let e = embed(&r.world, split, &untrained, &runs.text.model, seed, device)?;
    let mut row = writer.with_map(&e, MapKind::Rotation, n, seed)?;
    row.method = "random-init image".into();
    Ok(row)
}

/// The score against N: rotation, linear and null at every N of the split's curve, and
/// pair-free once (it uses no pairs).
fn curve(
    e: &Embedded,
    split: &Split,
    writer: &Writer<'_, Inner>,
    seed: u64,
) -> Result<Vec<CaptionRow>> {
    let mut out = vec![writer.with_map(e, MapKind::PairFree, 0, seed)?];
    println!("\nscore against the pairs N the map is fitted on:");
    for n in split.curve() {
        for m in [MapKind::Rotation, MapKind::Linear] {
            out.push(writer.with_map(e, m, n, seed)?);
        }
        out.push(writer.null(e, n, seed)?);
    }
    print_rows(&out);
    Ok(out)
}

fn print_rows(rows: &[CaptionRow]) {
    println!(
        "{:<18} {:>5} {:>8} {:>7} {:>6} {:>6} {:>6} {:>6} {:>6} {:>9}",
        "method",
        "pairs",
        "CIDEr-D",
        "BLEU-4",
        "shape",
        "colour",
        "size",
        "place",
        "all",
        "residual"
    );
    for r in rows {
        let s = &r.scores;
        println!(
            "{:<18} {:>5} {:>8.3} {:>7.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>9}",
            r.method,
            r.pairs,
            s.cider_d,
            s.bleu4,
            s.attributes[0],
            s.attributes[1],
            s.attributes[2],
            s.attributes[3],
            s.all_right,
            r.relative_residual
                .map_or("-".into(), |x| format!("{x:.3}"))
                + &r.match_accuracy
                    .zip(r.match_truth_over_found)
                    .map_or(String::new(), |(a, g)| {
                        format!(" (matched {a:.2}, GW truth/found {g:.2})")
                    })
        );
    }
}

/// `captions.jsonl`, `results.json` and, with a curve, `curve.svg`.
fn write_outputs(
    out: &Path,
    args: &Args,
    (emb, split): (&Embedded, &Split),
    rows: &[CaptionRow],
    curve: Option<&[CaptionRow]>,
    t0: Instant,
) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let names = prh_core::scene::FACTORS;
    let mut lines = String::new();
    for (i, v) in emb.test_views.iter().enumerate() {
        let state: Vec<String> = (0..4)
            .map(|f| prh_core::scene::VALUE_NAMES[f][v.state[f]].to_string())
            .collect();
        let captions: serde_json::Map<String, serde_json::Value> = rows
            .iter()
            .map(|r| (r.method.clone(), json!(r.captions[i])))
            .collect();
        lines += &(json!({ "state": state, "factors": names, "background": v.nuisance, "captions": captions })
            .to_string()
            + "\n");
    }
    write_file(&out.join("captions.jsonl"), lines)?;
    let strip = |rs: &[CaptionRow]| -> Vec<serde_json::Value> {
        rs.iter()
            .map(|r| json!({ "method": r.method, "pairs": r.pairs, "scores": r.scores,
                             "relative_residual": r.relative_residual, "match_accuracy": r.match_accuracy,
                             "match_truth_over_found": r.match_truth_over_found }))
            .collect()
    };
    let header = ResultsHeader::new(
        "caption",
        &args.decoder_run.display().to_string(),
        "cpu",
        t0.elapsed().as_secs_f64(),
    );
    let body = json!({
        "fit": args.fit, "seed": args.seed, "split": split,
        "image_run": args.image_run, "text_run": args.text_run, "decoder_run": args.decoder_run,
        "rows": strip(rows), "curve": curve.map(strip),
    });
    write_results(out, &header, &body)?;
    if let Some(c) = curve {
        write_file(&out.join("curve.svg"), curve_svg(c))?;
    }
    println!("\nwrote {}", out.display());
    Ok(())
}

/// CIDEr-D against N (log axis) for each map of the curve.
fn curve_svg(rows: &[CaptionRow]) -> String {
    let series: Vec<(String, Vec<(f64, f64)>)> = ["rotation", "linear", "null"]
        .iter()
        .map(|m| {
            let pts = rows
                .iter()
                .filter(|r| r.method == *m)
                .map(|r| (r.pairs as f64, r.scores.cider_d))
                .collect();
            (m.to_string(), pts)
        })
        .collect();
    let s: Vec<ScalingSeries<'_>> = series
        .iter()
        .map(|(l, p)| ScalingSeries {
            label: l,
            points: p,
            law: None,
        })
        .collect();
    svg_log_x(
        "Captions of held-out pictures",
        "pairs N the map is fitted on (log scale)",
        "CIDEr-D",
        &s,
    )
}
