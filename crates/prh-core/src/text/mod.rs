//! **Wing `text`** (paper §3): corpora (in memory and streamed shards), the tokenizer,
//! the text views (spans, masks) and the WordNet reader.
//! May use: `linalg`, `formats`. No burn.

pub mod caption_scores;
pub mod corpus;
pub mod shards;
pub mod tfidf;
pub mod tokenizer;
pub mod views;
pub mod wordnet;
