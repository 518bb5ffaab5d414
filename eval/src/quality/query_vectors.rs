//! Where a vector stream's query vector comes from: a text encoder run on the query's
//! text at the moment it is ranked (what a user of the hybrid arm waits for), or
//! vectors computed beforehand and looked up by query id.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use sha2::{Digest, Sha256};

use crate::encoding::ModelIdentity;
pub use crate::encoding::TextEncoder;

/// The query vector of each query a vector stream ranks for.
pub trait QueryVectors: Send + Sync {
    /// Where the vectors come from, for reports.
    fn describe(&self) -> String;
    /// The vector of query `query_id` (empty for a query typed on the command line)
    /// whose text is `text`.
    fn vector(&self, query_id: &str, text: &str) -> anyhow::Result<Vec<f32>>;
    /// The vectors of several queries, as (query id, text), in order: each equal to its
    /// [`QueryVectors::vector`]. One at a time unless the source has a cheaper way.
    fn vectors(&self, queries: &[(&str, &str)]) -> anyhow::Result<Vec<Vec<f32>>> {
        queries
            .iter()
            .map(|&(id, text)| self.vector(id, text))
            .collect()
    }
}

/// Encodes each query's text when it is ranked.
pub struct EncodedQueries<E>(pub E);

impl<E: TextEncoder> QueryVectors for EncodedQueries<E> {
    fn describe(&self) -> String {
        format!("queries encoded by {} as they run", self.0.identity().name)
    }

    fn vector(&self, _query_id: &str, text: &str) -> anyhow::Result<Vec<f32>> {
        self.0.encode(text)
    }

    /// One run of the encoder over every text: the weights are read once for all of
    /// them (heddle-encoder's batches are unpadded and give each text its own bits).
    fn vectors(&self, queries: &[(&str, &str)]) -> anyhow::Result<Vec<Vec<f32>>> {
        let texts: Vec<&str> = queries.iter().map(|&(_, text)| text).collect();
        let vectors = self.0.encode_batch(&texts)?;
        anyhow::ensure!(
            vectors.len() == texts.len(),
            "the encoder gave {} vectors for {} texts",
            vectors.len(),
            texts.len()
        );
        Ok(vectors)
    }
}

/// Query vectors read from a file beforehand, by query id.
pub struct QueryVectorTable {
    pub path: PathBuf,
    pub vectors: HashMap<String, Vec<f32>>,
}

impl QueryVectorTable {
    /// Reads a query-vectors file (`{"_id": ..., "vector": [...]}` lines) with the one
    /// reader every vectors file here goes through ([`crate::vectors::read_query_vectors`]):
    /// refused, naming the file and line, are a line that is not such an object, an
    /// empty or non-finite vector, a vector of another width than the first (or than
    /// `dim`, when given), a repeated id, and a file with no vector at all.
    pub fn read(path: &Path, dim: Option<usize>) -> anyhow::Result<QueryVectorTable> {
        let vectors = crate::vectors::read_query_vectors(path, dim)?
            .into_iter()
            .collect();
        Ok(QueryVectorTable {
            path: path.to_path_buf(),
            vectors,
        })
    }
}

impl QueryVectors for QueryVectorTable {
    fn describe(&self) -> String {
        format!("query vectors from {}", self.path.display())
    }

    fn vector(&self, query_id: &str, _text: &str) -> anyhow::Result<Vec<f32>> {
        if query_id.is_empty() {
            bail!(
                "a query typed on the command line has no vector in {} (vectors are looked up by query id)",
                self.path.display()
            );
        }
        self.vectors
            .get(query_id)
            .cloned()
            .with_context(|| format!("query {query_id} has no vector in {}", self.path.display()))
    }
}

/// A stand-in encoder for tests and demos without the model: each lowercased word of
/// the text (split on what is not alphanumeric) adds ±1 to one of `dim` coordinates
/// chosen by a hash of the word, and the sum is scaled to unit length. Texts that share
/// words get a high cosine, so a vector stream over it ranks like a bag of words: real
/// enough to test the plumbing of the vector and hybrid arms, not a semantic model.
#[derive(Debug, Clone, Copy)]
pub struct HashingEncoder {
    pub dim: usize,
}

impl TextEncoder for HashingEncoder {
    /// No weights: the vectors follow from the width and the algorithm, so the digest is
    /// of those (a change to the algorithm must change the tag).
    fn identity(&self) -> ModelIdentity {
        let spec = format!(
            "heddle hashing encoder 1 (FNV-1a, ±1), {} dimensions",
            self.dim
        );
        let sha256 = Sha256::digest(spec.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        ModelIdentity {
            sha256,
            name: format!("hashing encoder ({} dimensions)", self.dim),
            dim: self.dim,
        }
    }

    fn encode_batch(&self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
        texts.iter().map(|t| self.encode(t)).collect()
    }

    fn encode(&self, text: &str) -> anyhow::Result<Vec<f32>> {
        if self.dim == 0 {
            bail!("the hashing encoder needs at least one dimension");
        }
        let mut v = vec![0f32; self.dim];
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            // FNV-1a: stable across runs and platforms, unlike std's RandomState.
            let h = word
                .to_lowercase()
                .bytes()
                .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
                });
            let sign = if h >> 63 == 0 { 1.0 } else { -1.0 };
            v[(h % self.dim as u64) as usize] += sign;
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        } else {
            // No words: a fixed unit vector, so that every text has one.
            v[0] = 1.0;
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hashing_encoder_gives_unit_vectors_close_for_shared_words() {
        let e = HashingEncoder { dim: 64 };
        let a = e.encode("Vitamin D and bone density").unwrap();
        let b = e.encode("density BONE, and vitamin d").unwrap();
        let c = e.encode("statins lower cholesterol").unwrap();
        let dot = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>();
        assert!((dot(&a, &a) - 1.0).abs() < 1e-6);
        assert!(dot(&a, &b) > 0.99, "same words, other order and case");
        assert!(dot(&a, &c) < 0.5, "no shared word");
        assert_eq!(e.encode("").unwrap()[0], 1.0);
        assert!(HashingEncoder { dim: 0 }.encode("x").is_err());
    }
}
