//! Where a vector stream's query vector comes from: a text encoder run on the query's
//! text at the moment it is ranked (what a user of the hybrid arm waits for), or
//! vectors computed beforehand and looked up by query id.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// Turns text into the unit vectors an index's documents were given.
pub trait TextEncoder: Send + Sync {
    /// What encodes, for reports (`all-MiniLM-L6-v2 (heddle-encoder)`).
    fn name(&self) -> String;
    /// The vectors' width.
    fn dim(&self) -> usize;
    fn encode(&self, text: &str) -> anyhow::Result<Vec<f32>>;
}

#[cfg(feature = "embed")]
impl TextEncoder for heddle_encoder::Encoder {
    fn name(&self) -> String {
        let pin = heddle_encoder::pin::ALL_MINILM_L6_V2;
        format!(
            "all-MiniLM-L6-v2 (PyPI {}=={}, heddle-encoder)",
            pin.package, pin.version
        )
    }

    fn dim(&self) -> usize {
        heddle_encoder::Encoder::dim(self)
    }

    fn encode(&self, text: &str) -> anyhow::Result<Vec<f32>> {
        Ok(heddle_encoder::Encoder::encode(self, text)?)
    }
}

/// The query vector of each query a vector stream ranks for.
pub trait QueryVectors: Send + Sync {
    /// Where the vectors come from, for reports.
    fn describe(&self) -> String;
    /// The vector of query `query_id` (empty for a query typed on the command line)
    /// whose text is `text`.
    fn vector(&self, query_id: &str, text: &str) -> anyhow::Result<Vec<f32>>;
}

/// Encodes each query's text when it is ranked.
pub struct EncodedQueries<E>(pub E);

impl<E: TextEncoder> QueryVectors for EncodedQueries<E> {
    fn describe(&self) -> String {
        format!("queries encoded by {} as they run", self.0.name())
    }

    fn vector(&self, _query_id: &str, text: &str) -> anyhow::Result<Vec<f32>> {
        self.0.encode(text)
    }
}

/// Query vectors read from a file beforehand, by query id.
pub struct QueryVectorTable {
    pub path: PathBuf,
    pub vectors: HashMap<String, Vec<f32>>,
}

impl QueryVectorTable {
    /// Reads `{"_id": ..., "vector": [...]}` lines. Refused, naming the file and line: a
    /// line that is not such an object, an empty or non-finite vector, a vector of
    /// another width than the first, a repeated id. Blank lines are skipped.
    pub fn read(path: &Path) -> anyhow::Result<QueryVectorTable> {
        #[derive(serde::Deserialize)]
        struct Line {
            #[serde(rename = "_id")]
            id: String,
            vector: Vec<f32>,
        }
        let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let mut vectors = HashMap::new();
        let mut dim = None;
        for (i, line) in BufReader::new(file).lines().enumerate() {
            let at = || format!("{}:{}", path.display(), i + 1);
            let line = line.with_context(|| format!("reading {}", at()))?;
            if line.trim().is_empty() {
                continue;
            }
            let Line { id, vector } = serde_json::from_str(&line).with_context(|| {
                format!("{}: expected {{\"_id\": ..., \"vector\": [numbers]}}", at())
            })?;
            if vector.is_empty() {
                bail!("{}: query {id} has an empty vector", at());
            }
            if let Some(bad) = vector.iter().position(|v| !v.is_finite()) {
                bail!("{}: query {id}'s value {bad} is not a finite f32", at());
            }
            let want = *dim.get_or_insert(vector.len());
            if vector.len() != want {
                bail!(
                    "{}: query {id} has {} values, the first line {want}",
                    at(),
                    vector.len()
                );
            }
            if vectors.insert(id.clone(), vector).is_some() {
                bail!("{}: query {id} repeated", at());
            }
        }
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
    fn name(&self) -> String {
        format!("hashing encoder ({} dimensions)", self.dim)
    }

    fn dim(&self) -> usize {
        self.dim
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
