//! Weighted score sum (CombSUM): `Σ_s w_s · score_s(key)` over the streams holding the key.
//!
//! Unlike RRF this reads the streams' scores, so it is only meaningful when they are on
//! comparable scales, as BM25 over two fields of one index is. Read to full depth, summing
//! per-field BM25 scores is exactly Anserini's "multifield" BEIR baseline: a disjunction
//! of each field's BM25 query.

use std::collections::BTreeMap;

use super::rrf::Fused;
use crate::error::{Error, Result};

/// One scored list: `(key, score)` pairs (any order) and the stream's weight.
#[derive(Debug, Clone, Copy)]
pub struct ScoredStream<'a, K> {
    pub scored: &'a [(K, f64)],
    pub weight: f64,
}

impl<'a, K> ScoredStream<'a, K> {
    pub fn new(scored: &'a [(K, f64)], weight: f64) -> Self {
        ScoredStream { scored, weight }
    }
}

/// Sums weighted scores per key, best first, equal sums to the smaller key. A key
/// repeated within one stream counts once, with its highest score. Each key's parts are
/// summed smallest first, so the order of the streams does not change a bit of a score.
pub fn weighted_sum<K: Ord + Clone>(streams: &[ScoredStream<'_, K>]) -> Result<Vec<Fused<K>>> {
    super::check_weights("score-sum", streams.iter().map(|s| s.weight))?;
    let mut parts: BTreeMap<&K, Vec<f64>> = BTreeMap::new();
    for stream in streams.iter().filter(|s| s.weight > 0.0) {
        let mut best: BTreeMap<&K, f64> = BTreeMap::new();
        for (key, score) in stream.scored {
            if !score.is_finite() {
                return Err(Error::InvalidArgument(format!(
                    "score-sum needs finite scores (got {score})"
                )));
            }
            let entry = best.entry(key).or_insert(*score);
            *entry = entry.max(*score);
        }
        for (key, score) in best {
            parts.entry(key).or_default().push(stream.weight * score);
        }
    }
    let mut fused: Vec<Fused<K>> = parts
        .into_iter()
        .map(|(key, mut p)| {
            p.sort_by(f64::total_cmp);
            Fused {
                key: key.clone(),
                score: p.iter().sum(),
            }
        })
        .collect();
    fused.sort_by(|a, b| b.score.total_cmp(&a.score));
    Ok(fused)
}
