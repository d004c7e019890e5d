//! **Wing `models`** (paper §4): the encoders as burn modules — the transformer block,
//! the text encoder, the scene world's image encoder and its symbolic twin. Models only:
//! how they are trained lives in `tasks`.
//! May use: `linalg`, `formats`, `theory`, `measure` (the closed-form head), `text`,
//! `scene`, `backend`.

pub mod caption_decoder;
pub mod hf;
pub mod image_encoder;
pub mod symbolic_encoder;
pub mod text_encoder;
pub mod transformer;
