//! prh-core: the Platonic Representation Theorem made runnable.
//!
//! One crate, compiled natively and to `wasm32-unknown-unknown`, holds everything both
//! the CLI (`native/`) and the playground (`web/`) need. It is built in wings that follow
//! the paper (section in brackets, see `shared/PAPER.md`); imports point down this list,
//! never up (checked by `tests/architecture.rs`), and the first four wings need no
//! tensors (no burn), so a burn-free crate could be split off mechanically:
//!
//! | wing | owns |
//! |---|---|
//! | [`linalg`] | dense helpers on faer, Procrustes, assignment |
//! | [`formats`] | .npy / .npz / safetensors / TSV embeddings |
//! | [`theory`] [2] | worlds, Pi, K, spectrum, gap, predicted representation, bounds |
//! | [`measure`] [5] | alignment metrics, nulls, retrieval, pair-free matching |
//! | [`text`] [3] | corpora, shards, tokenizer, text views |
//! | [`scene`] [2-3] | the scene world, its renderers and its closed-form theory |
//! | [`backend`] | burn backends, custom autodiff ops, compute kernels |
//! | [`models`] [4] | transformer, text / image / symbolic encoders |
//! | [`train`] [4] | the loop, losses, data-parallel replicas, AdamW, checkpoints |
//! | [`tasks`] | what `train` trains: text and scene JEPAs, exported bundles |
//! | [`experiments`] [5-7] | the demo and the experiments on real data |
//!
//! Loose files every wing may use: [`error`] (one error type), [`rng`] (seeded streams),
//! [`config`] (TOML parsing with `--set` overrides), [`progress`] (ticks of long work).

pub mod config;
pub mod error;
pub mod progress;
pub mod rng;

pub mod linalg;

pub mod formats;

pub mod theory;

pub mod measure;

pub mod text;

pub mod scene;

pub mod backend;

pub mod models;

pub mod train;

pub mod tasks;

pub mod experiments;

pub use error::{Error, Result};
