//! The queries a ladder asks, in a seeded shuffled order that every rung repeats.

use std::path::Path;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

/// Query texts and the order requests cycle through them: request `i` asks
/// `texts[order[i % n]]`. Every rung and every engine sees the same sequence.
#[derive(Debug, Clone)]
pub struct QueryCycle {
    texts: Vec<String>,
    order: Vec<usize>,
}

impl QueryCycle {
    pub fn new(texts: Vec<String>, seed: u64) -> Self {
        assert!(!texts.is_empty(), "at least one query");
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
        QueryCycle { texts, order }
    }

    /// Reads a BEIR `queries.jsonl` (or the BEIR directory holding it) or a TREC topics
    /// file (`qid<TAB>text`): see [`crate::formats`].
    pub fn load(path: &Path, seed: u64) -> anyhow::Result<Self> {
        let texts: Vec<String> = crate::formats::read_topics(path)?
            .into_iter()
            .map(|q| q.text)
            .collect();
        anyhow::ensure!(!texts.is_empty(), "{} holds no queries", path.display());
        Ok(QueryCycle::new(texts, seed))
    }

    /// The query of request `i`.
    pub fn get(&self, i: u64) -> &str {
        &self.texts[self.order[(i % self.order.len() as u64) as usize]]
    }

    /// How many distinct queries there are.
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_through_every_query_in_a_seeded_order() {
        let texts: Vec<String> = (0..20).map(|i| format!("q{i}")).collect();
        let a = QueryCycle::new(texts.clone(), 1);
        let mut first: Vec<&str> = (0..20).map(|i| a.get(i)).collect();
        assert_eq!(a.get(3), a.get(23), "the cycle repeats");
        assert_ne!(
            first,
            texts.iter().map(String::as_str).collect::<Vec<_>>(),
            "shuffled"
        );
        first.sort_unstable();
        first.dedup();
        assert_eq!(first.len(), 20, "each query once per cycle");
        let b = QueryCycle::new(texts, 1);
        assert!((0..40).all(|i| a.get(i) == b.get(i)), "seeded");
    }
}
