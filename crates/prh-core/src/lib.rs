//! prh-core: the Platonic Representation Theorem made runnable.
//!
//! One crate, compiled natively and to `wasm32-unknown-unknown`, holds everything both
//! the CLI (`native/`) and the playground (`web/`) need.
//!
//! Table of contents (paper section in brackets, see `shared/PAPER.md`):
//! - theory [2]: [`world`], [`pair_graph`], [`kernel`], [`spectrum`], [`theorem`]
//! - measurement [5]: [`features`] (+ [`npy`]), [`preprocess`], [`knn`], [`cka`],
//!   [`procrustes`], [`retrieval`], [`matching`] (+ [`assignment`]), [`metrics`]
//! - training [3-4]: [`corpus`], [`tokenizer`], [`views`], [`sigreg`], [`spectral_loss`], [`encoder`],
//!   [`text_task`], [`train`] (+ [`config`], [`schedule`], [`checkpoint`], [`rng`],
//!   [`backend`], [`bundle`])
//! - the scene world and the demo [2, 7]: [`scene`], [`render_image`], [`render_text`],
//!   [`scene_theory`], [`image_encoder`], [`symbolic_encoder`], [`scene_run`], [`demo`]
//! - experiments on real data [6]: [`experiment`], [`experiment_report`],
//!   [`experiment_vision`], [`wordnet`], [`scaling_law`]
//! - shared: [`error`], [`linalg`]

pub mod adamw;
pub mod assignment;
pub mod backend;
pub mod bundle;
pub mod calibration;
pub mod checkpoint;
pub mod cka;
pub mod cknna;
pub mod config;
pub mod corpus;
pub mod data_parallel;
pub mod degeneracy;
pub mod demo;
pub mod encoder;
pub mod error;
pub mod experiment;
pub mod experiment_report;
pub mod experiment_vision;
pub mod features;
#[cfg(all(feature = "flex", not(target_arch = "wasm32")))]
pub mod flex_ops;
pub mod gallery;
pub mod gelu;
pub mod image_encoder;
pub mod kernel;
pub mod kernel_blocks;
pub mod knn;
pub mod linalg;
pub mod matching;
pub mod metrics;
pub mod npy;
pub mod pair_graph;
pub mod preprocess;
pub mod procrustes;
pub mod render_image;
pub mod render_text;
pub mod retrieval;
pub mod rng;
pub mod scaling_law;
pub mod scene;
pub mod scene_run;
pub mod scene_theory;
pub mod schedule;
pub mod shards;
pub mod sigreg;
pub mod spectral_loss;
pub mod spectrum;
pub mod svcca;
pub mod symbolic_encoder;
pub mod text_task;
pub mod theorem;
pub mod tokenizer;
pub mod top_eigen;
pub mod train;
pub mod transformer;
pub mod tsv;
pub mod view_spectrum;
pub mod views;
pub mod wordnet;
pub mod world;

pub use error::{Error, Result};
