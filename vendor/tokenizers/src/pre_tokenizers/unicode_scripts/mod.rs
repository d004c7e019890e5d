mod pre_tokenizer;
mod scripts;

// Re-export the PreTokenizer
pub use pre_tokenizer::UnicodeScripts;
