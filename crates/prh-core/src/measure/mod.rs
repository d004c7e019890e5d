//! **Wing `measure`** (paper §5): PRH alignment metrics on finished embeddings —
//! preprocessing, k-NN metrics, CKA / CKNNA / SVCCA, Gram blocks, retrieval after a
//! fitted map, pair-free matching, permutation nulls, degeneracy warnings, gallery curves,
//! the spectrum an encoder reaches on positive pairs.
//! May use: `linalg`, `formats`. No burn.

pub mod calibration;
pub mod cka;
pub mod cknna;
pub mod degeneracy;
pub mod gallery;
pub mod gram_blocks;
pub mod knn;
pub mod matching;
pub mod metrics;
pub mod preprocess;
pub mod projection;
pub mod retrieval;
pub mod svcca;
pub mod view_spectrum;
