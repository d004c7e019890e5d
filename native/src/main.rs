//! `prh-native`: the command line of prh.
//!
//! ```text
//! cargo run --release -p prh-native -- demo
//! ```

use anyhow::Result;
use clap::{Parser, Subcommand};

mod alloc;
mod backend;
mod cluster;
mod cmd;
mod output;
mod progress;
mod run_folder;

/// prh: the Platonic Representation Theorem, runnable.
#[derive(Parser, Debug)]
#[command(name = "prh-native", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// No progress bars or status lines on stderr (results and errors still print).
    #[arg(long, global = true)]
    quiet: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The main job on an embedded default: good vs bad views, predicted vs measured.
    Demo(cmd::demo::Args),
    /// Spectrum of a world's positive-pair kernel, its gap and the two-modality bounds.
    Spectral(cmd::spectral::Args),
    /// Benchmarks printed beside a reference (numpy) measured in the same run.
    #[command(subcommand)]
    Bench(cmd::bench::Bench),
    /// PRH alignment metrics between two embedding files (mutual k-NN, CKA, CKNNA, ...).
    Metrics(cmd::metrics::Args),
    /// Fit the rotation between two embedding sets on pairs; retrieval on held-out pairs.
    Align(cmd::align::Args),
    /// Pair-free matching: recover the pairing from the two geometries alone.
    Match(cmd::matching::Args),
    /// Train a text encoder: good-view / bad-view JEPA or next-token (run folder, resume).
    Train(cmd::train::Args),
    /// Caption held-out pictures: image encoder -> a map fitted on N pairs -> a text-only decoder.
    Caption(cmd::caption::Args),
    /// Caption one language's captions in another: its JEPA -> a rotation -> a decoder of the other's.
    Translate(cmd::translate::Args),
    /// Embed texts with a trained run's checkpoint into an .npy file.
    Embed(cmd::embed::Args),
    /// Every hidden state of a pretrained Hugging Face encoder, pooled, into an .npy file
    /// [N, L + 1, H] (the input of the layer search in `metrics`).
    Features(cmd::pretrained::FeaturesArgs),
    /// Export a trained encoder as the web app's safetensors bundle.
    Export(cmd::export::Args),
    /// SIGReg (LeJEPA's Gaussianity statistic) of an embedding file: collapse diagnosis.
    Sigreg(cmd::sigreg::Args),
    /// The spectrum an encoder reaches on positive pairs (two files, row i = pair i's views).
    PairSpectrum(cmd::pair_spectrum::Args),
    /// Reproduce a claim on real data into a report folder (views-multilingual).
    Experiment(cmd::experiment::Args),
}

fn main() -> std::process::ExitCode {
    alloc::keep_freed_memory();
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    progress::set_quiet(cli.quiet);
    match cli.command {
        Command::Demo(args) => cmd::demo::run(args),
        Command::Spectral(args) => cmd::spectral::run(args),
        Command::Bench(bench) => cmd::bench::run(bench),
        Command::Metrics(args) => cmd::metrics::run(args),
        Command::Align(args) => cmd::align::run(args),
        Command::Match(args) => cmd::matching::run(args),
        Command::Train(args) => cmd::train::run(args),
        Command::Caption(args) => cmd::caption::run(args),
        Command::Translate(args) => cmd::translate::run(args),
        Command::Embed(args) => cmd::embed::run(args),
        Command::Features(args) => cmd::pretrained::features(args),
        Command::Export(args) => cmd::export::run(args),
        Command::Sigreg(args) => cmd::sigreg::run(args),
        Command::PairSpectrum(args) => cmd::pair_spectrum::run(args),
        Command::Experiment(args) => cmd::experiment::run(args),
    }
}
