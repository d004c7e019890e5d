//! Replays every input kept under `tests/fuzz_regressions/<target>/` (crashes the
//! fuzzers found, inputs crafted for the bugs found while writing the targets, and valid
//! seeds) through the parser its `fuzz/` target drives: each must give `Ok` or a clean
//! `Err` naming the file, never a panic. See docs/fuzzing.md.

use prh_core::backend::Cpu;
use prh_core::experiments::multilingual::ExperimentConfig;
use prh_core::formats::features::Features;
use prh_core::tasks::text::TrainConfig;
use prh_core::text::corpus::Corpus;
use prh_core::train::checkpoint::Checkpoint;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz_regressions")
}

/// What the fuzz target `target` does with `data`, as a list of outcomes (one per parser
/// call): `Ok(())` or the error message. Mirrors fuzz/fuzz_targets/<target>.rs.
fn replay(target: &str, source: &str, data: &[u8]) -> Vec<Result<(), String>> {
    let s = |r: Result<(), prh_core::Error>| r.map_err(|e| e.to_string());
    match target {
        "npy" => vec![s(prh_core::formats::npy::read_npy(source, "array", data)
            .map(|(shape, values)| {
                assert_eq!(shape.iter().product::<usize>(), values.len())
            }))],
        "npz" | "safetensors" => [None, Some("a")]
            .into_iter()
            .map(|array| {
                s(Features::from_bytes(source, data, array)
                    .map(|f| assert_eq!(f.n * f.layers * f.d, f.data.len())))
            })
            .collect(),
        "corpus_jsonl" => vec![s(Corpus::from_jsonl(source, data)
            .map(|c| assert!(c.groups.iter().all(|g| !g.texts.is_empty()))))],
        "config_toml" => {
            let Ok(text) = std::str::from_utf8(data) else {
                return vec![Err("not UTF-8 (the target skips it)".into())];
            };
            let (toml, sets) = text.split_once('\0').unwrap_or((text, ""));
            let sets: Vec<String> = sets.lines().map(str::to_string).collect();
            vec![
                s(TrainConfig::from_toml(source, toml, &sets).map(|c| {
                    let again = c.to_toml().unwrap();
                    TrainConfig::from_toml("round-trip", &again, &[]).unwrap();
                })),
                s(ExperimentConfig::from_toml(source, toml, &sets).map(|_| ())),
            ]
        }
        "checkpoint" => vec![s(Checkpoint::from_bytes(source, data).map(|ck| {
            let _ = TrainConfig::from_toml(source, &ck.meta.config, &[]);
            let back = Checkpoint::from_bytes("rt", &ck.to_bytes().unwrap()).unwrap();
            assert_eq!(back.meta, ck.meta);
        }))],
        "bundle" => {
            let device = Default::default();
            vec![s(prh_core::tasks::bundle::read_bundle::<Cpu>(
                source, data, &device,
            )
            .map(|_| ()))]
        }
        // Text has no magic bytes: the parser is chosen by the `.tsv` name.
        "tsv" => vec![s(Features::from_bytes(
            &format!("{source}.tsv"),
            data,
            None,
        )
        .map(|f| {
            assert_eq!(f.n * f.layers * f.d, f.data.len());
            assert!(f.data.iter().all(|v| v.is_finite()));
        }))],
        other => panic!("no parser for fuzz target folder `{other}`"),
    }
}

#[test]
fn every_kept_fuzz_input_gives_ok_or_a_clean_error() {
    let targets = [
        "npy",
        "npz",
        "safetensors",
        "corpus_jsonl",
        "config_toml",
        "checkpoint",
        "bundle",
        "tsv",
    ];
    let mut total = 0;
    for target in targets {
        let dir = root().join(target);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{}: no inputs kept", dir.display());
        for file in files {
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            let data = std::fs::read(&file).unwrap();
            let outcome = std::panic::catch_unwind(|| replay(target, &name, &data));
            let results =
                outcome.unwrap_or_else(|_| panic!("{target}/{name}: the parser panicked"));
            for r in &results {
                match r {
                    Ok(()) => println!("{target}/{name}: ok"),
                    Err(e) => {
                        println!("{target}/{name}: {e}");
                        // A clean error names the input (parsers take it as `source`).
                        assert!(
                            e.contains(&name) || e.starts_with("not UTF-8"),
                            "{target}/{name}: error does not name the file: {e}"
                        );
                    }
                }
            }
            // Valid seeds must stay valid: a regression that rejects them is a bug too.
            if name.starts_with("seed") {
                assert!(
                    results.iter().any(Result::is_ok),
                    "{target}/{name}: a valid seed was refused: {results:?}"
                );
            }
            total += 1;
        }
    }
    println!("{total} kept fuzz inputs replayed");
}

/// Regenerates the valid bundle seed (a 1-layer, 8-wide encoder with its tokenizer):
/// `cargo test -p prh-native --test fuzz_regressions -- --ignored write_bundle_seed`.
#[test]
#[ignore]
fn write_bundle_seed() {
    use prh_core::models::text_encoder::EncoderSpec;
    use prh_core::text::tokenizer::TextTokenizer;
    use prh_core::text::tokenizer::TokenizerConfig;
    let texts = ["a dog runs", "two cats sleep", "a red bus"];
    let tcfg = TokenizerConfig {
        vocab_size: 30,
        min_frequency: 1,
        ..TokenizerConfig::default()
    };
    let tok = TextTokenizer::train(texts.into_iter(), &tcfg).unwrap();
    let spec = EncoderSpec {
        vocab: tok.vocab_size(),
        d_model: 4,
        layers: 1,
        heads: 2,
        d_ff: 4,
        max_len: 4,
        cls_pooling: false,
        projector_dim: 0,
        dropout: 0.0,
        causal: false,
    };
    let device = Default::default();
    let model = spec.init::<Cpu>(&device).unwrap();
    let bytes = prh_core::tasks::bundle::write_bundle(&model, &spec, &tok, "[run]\n").unwrap();
    std::fs::write(root().join("bundle/seed_tiny.safetensors"), bytes).unwrap();
}
