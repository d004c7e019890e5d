//! One module per subcommand.
pub mod align;
pub mod bench;
pub mod bench_metrics;
pub mod demo;
pub mod matching;
pub mod metrics;
pub mod spectral;
pub mod embed;
pub mod export;
pub mod sigreg;
pub mod train;
pub mod experiment;
