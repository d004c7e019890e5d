//! prh-core: the Platonic Representation Theorem made runnable.
//!
//! One crate, compiled natively and to `wasm32-unknown-unknown`, holds everything both
//! the CLI (`native/`) and the playground (`web/`) need.
//!
//! Table of contents (paper section in brackets, see `shared/PAPER.md`):
//! - theory [2]: [`world`], [`pair_graph`], [`kernel`], [`spectrum`], [`theorem`]
//! - measurement [5]: [`features`], [`knn`], [`cka`], [`procrustes`], [`retrieval`], [`matching`], [`metrics`]
//! - training [3-4]: [`corpus`], [`tokenizer`], [`views`], [`sigreg`], [`encoder`], [`train`]
//! - shared: [`error`], [`linalg`]

pub mod assignment;
pub mod cka;
pub mod demo;
pub mod error;
pub mod features;
pub mod image_encoder;
pub mod knn;
pub mod linalg;
pub mod matching;
pub mod metrics;
pub mod npy;
pub mod preprocess;
pub mod procrustes;
pub mod retrieval;
pub mod render_image;
pub mod render_text;
pub mod rng;
pub mod scene;
pub mod sigreg;
pub mod config;
pub mod schedule;
pub mod checkpoint;
pub mod train;
pub mod corpus;
pub mod tokenizer;
pub mod views;
pub mod encoder;
pub mod text_task;
pub mod bundle;
pub mod backend;
pub mod world;
pub mod pair_graph;
pub mod kernel;
pub mod spectrum;
pub mod theorem;
pub mod experiment;
pub mod experiment_report;

pub use error::{Error, Result};
