//! Text to word-piece ids, as sentence-transformers feeds them to BERT: the package's own
//! tokenizer.json (lower-casing, accent stripping, CJK split, WordPiece), `[CLS]` … `[SEP]`,
//! cut to `max_seq_length` pieces in all.
//!
//! tokenizer.json carries settings of its own that sentence-transformers overrides at call
//! time — truncation to 128 and padding to a fixed 128 in this package — so both are
//! replaced here: truncation to the pipeline's `max_seq_length`, and no padding (a batch
//! is padded by the encoder, with an attention mask).

use std::path::Path;

use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use crate::error::{EncoderError, Result};

/// A loaded tokenizer that cuts every text to the model's length.
pub struct TextTokenizer {
    tokenizer: Tokenizer,
}

/// One text's word pieces with `[CLS]` and `[SEP]` (never empty: an empty text is those two).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pieces {
    /// Vocabulary ids.
    pub ids: Vec<u32>,
    /// Segment ids (all 0 for a single text).
    pub type_ids: Vec<u32>,
}

impl TextTokenizer {
    /// Builds the tokenizer from tokenizer.json's bytes (read from `path`).
    pub fn from_bytes(bytes: &[u8], path: &Path, max_seq_length: usize) -> Result<Self> {
        let tokenizer_error = |source| EncoderError::Tokenizer {
            path: path.to_path_buf(),
            source,
        };
        let mut tokenizer = Tokenizer::from_bytes(bytes).map_err(tokenizer_error)?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                // Counts the special tokens too: the tokenizer subtracts the two that its
                // post-processor adds, as sentence-transformers' call does.
                max_length: max_seq_length,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
                direction: TruncationDirection::Right,
            }))
            .map_err(tokenizer_error)?;
        Ok(TextTokenizer { tokenizer })
    }

    /// The word pieces of `text`, `[CLS]` and `[SEP]` included, at most `max_seq_length`.
    pub fn tokenize(&self, text: &str) -> Result<Pieces> {
        let encoding = self
            .tokenizer
            .encode_fast(text, true)
            .map_err(|source| EncoderError::Tokenize { source })?;
        Ok(Pieces {
            ids: encoding.get_ids().to_vec(),
            type_ids: encoding.get_type_ids().to_vec(),
        })
    }
}
