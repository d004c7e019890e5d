//! **Wing `formats`**: the file formats prh reads and writes for embeddings and arrays
//! (.npy, .npz, safetensors, the Embedding Projector's TSV), with errors that name the
//! file, the field and what was expected.
//! May use: `linalg`. No burn.

pub mod features;
pub mod npy;
pub mod tsv;
