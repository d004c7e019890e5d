//! The labs, one folder each: the view in `mod.rs`, its numbers in `compute.rs`
//! (which never imports the view), its figures beside them (which read computed results
//! only).
//!
//! - [`spectral`]: the theorem for teaching — Pi, K, the spectrum, the rotation.
//! - [`alignment`]: PRH metrics between two embedding files.
//! - [`checkpoint`]: a trained text encoder (exported bundle) embedding typed texts on
//!   WebGPU or the CPU, with their nearest ImageNet classes.
//! - [`graph`]: draw a world — a graph editor with Pi, K, spectrum, Fiedler, Cheeger.
//! - [`lesson`]: the guided lesson (the landing page), built from the other labs' figures.
//! - [`live`]: two JEPAs training in the page (web worker) towards the prediction.
//! - [`caption`]: the captioner — image encoder, one fitted map, a text-only decoder.

pub mod alignment;
pub mod caption;
pub mod checkpoint;
pub mod graph;
pub mod lesson;
pub mod live;
pub mod spectral;
