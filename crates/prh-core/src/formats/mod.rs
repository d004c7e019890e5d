//! **Wing `formats`**: the file formats prh reads and writes for embeddings and arrays
//! (.npy, .npz, safetensors, the Embedding Projector's TSV), the parts of a Hugging Face
//! checkpoint folder (config.json, model.safetensors, sentence-transformers modules) and
//! images with a Hugging Face image processor's resize and normalisation, with errors that
//! name the file, the field and what was expected.
//! May use: `linalg`. No burn.

pub mod features;
pub mod hf;
pub mod image;
pub mod npy;
pub mod tensors;
pub mod tsv;
