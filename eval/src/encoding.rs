//! What turns text into vectors, for every command that needs one: `embed` encodes a
//! corpus in batches into a cache keyed by the model, and the vector and hybrid arms
//! encode each query as it is ranked. One trait serves both, so a model is written
//! once (all-MiniLM-L6-v2 in `embed::MiniLm`; the hashing stand-in in
//! `quality::HashingEncoder`) and a test's stand-in works everywhere.

use anyhow::Context;
use serde::{Deserialize, Serialize};

/// Who the embeddings come from: enough to tell two models (or two versions of one
/// pipeline) apart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelIdentity {
    /// Lower-case hex sha256 of what determines the vectors (a model's weights,
    /// tokenizer and configuration): an embeddings cache directory's second half is its
    /// first 16 characters.
    pub sha256: String,
    /// For people: package, version, what the hash covers.
    pub name: String,
    /// The embedding's width.
    pub dim: usize,
}

/// Something that turns texts into vectors of one dimension.
pub trait TextEncoder: Send + Sync {
    /// Which model (and so which cache, and what reports name).
    fn identity(&self) -> ModelIdentity;

    /// One vector of [`ModelIdentity::dim`] values for each text, in order.
    fn encode_batch(&self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>>;

    /// One text's vector: a query's, as it is ranked. A batch of one unless the encoder
    /// has a cheaper way.
    fn encode(&self, text: &str) -> anyhow::Result<Vec<f32>> {
        self.encode_batch(&[text])?
            .pop()
            .context("the encoder gave no vector for one text")
    }
}
