//! **Wing `theory`** (paper §2): finite worlds, the positive-pair graph Pi, the kernel
//! K = D^-1/2 Pi D^-1/2, its spectrum and gap, the predicted representation, the
//! rotation between modalities and the misalignment bounds, all exact (no sampling).
//! May use: `linalg`. No burn.

pub mod graph;
pub mod kernel;
pub mod pair_graph;
pub mod spectrum;
pub mod theorem;
pub mod top_eigen;
pub mod view_kind;
pub mod view_spectrum;
pub mod world;
