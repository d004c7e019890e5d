//! One module per subcommand.
pub mod align;
pub mod bench;
pub mod bench_metrics;
pub mod bench_train;
pub mod caption;
pub mod demo;
pub mod embed;
pub mod experiment;
pub mod export;
pub mod inputs;
pub mod matching;
pub mod metrics;
pub mod sigreg;
pub mod spectral;
pub mod train;
pub mod train_decoder;
pub mod train_scene;
