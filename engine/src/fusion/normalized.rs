//! Normalised score fusion: each stream's scores put on a common scale, then summed with
//! the streams' weights. For streams whose raw scores do not share a scale — BM25 (any
//! positive number, growing with the query's length) and a cosine similarity (in
//! [-1, 1]) — where [`weighted_sum`](super::weighted_sum) would let one drown the other.
//!
//! Two normalisations, each over the scores a stream returned (its top, not the corpus):
//! - **min-max**: `(s − min) / (max − min)`, so each stream's best is 1 and its worst
//!   0; a stream whose scores are all equal gives each of them 1.
//! - **z-score**: `(s − mean) / sd` (the population standard deviation); a stream whose
//!   scores are all equal gives each of them 0.
//!
//! A key a stream did not return scored at most that stream's lowest, so it counts as the
//! stream's lowest normalised score: 0 under min-max, the lowest z under z-score. (Taking
//! 0 under z-score would rank a document a stream did not find above the ones it found
//! below its mean.)

use std::collections::{BTreeMap, BTreeSet};

use super::rrf::Fused;
use super::sum::ScoredStream;
use crate::error::{Error, Result};

/// How a stream's scores are put on a common scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Normalization {
    /// `(s − min) / (max − min)`.
    MinMax,
    /// `(s − mean) / sd`.
    ZScore,
}

impl Normalization {
    /// Each key's normalised score (its highest, if repeated) and the stream's lowest.
    /// Fails when the scores are too far apart for their spread to be finite.
    fn apply<K: Ord>(self, scored: &[(K, f64)]) -> Result<(BTreeMap<&K, f64>, f64)> {
        let mut best: BTreeMap<&K, f64> = BTreeMap::new();
        for (key, score) in scored {
            let entry = best.entry(key).or_insert(*score);
            *entry = entry.max(*score);
        }
        if best.is_empty() {
            return Ok((best, 0.0));
        }
        let n = best.len() as f64;
        let (lo, hi) = best
            .values()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &s| {
                (lo.min(s), hi.max(s))
            });
        // `s ↦ (s − center) / spread`, or every score to `flat` when they are all equal.
        let (center, spread, flat) = match self {
            Normalization::MinMax => (lo, hi - lo, 1.0),
            Normalization::ZScore => {
                let mean = best.values().sum::<f64>() / n;
                let var = best.values().map(|s| (s - mean) * (s - mean)).sum::<f64>() / n;
                (mean, var.sqrt(), 0.0)
            }
        };
        if !(center.is_finite() && spread.is_finite()) {
            return Err(Error::InvalidArgument(
                "normalised fusion: a stream's scores are too far apart to normalise".into(),
            ));
        }
        let scale = |s: f64| {
            if spread > 0.0 {
                (s - center) / spread
            } else {
                flat
            }
        };
        for s in best.values_mut() {
            *s = scale(*s);
        }
        let floor = scale(lo);
        Ok((best, floor))
    }
}

/// Sums each key's weighted normalised scores over all streams, best first, equal sums to
/// the smaller key. A key a stream did not return counts as that stream's lowest (see the
/// module's documentation). A key repeated within one stream counts once, with its
/// highest score. Each key's parts are summed smallest first, so the order of the
/// streams does not change a bit of a score.
pub fn normalized_sum<K: Ord + Clone>(
    streams: &[ScoredStream<'_, K>],
    normalization: Normalization,
) -> Result<Vec<Fused<K>>> {
    super::check_weights("fusion", streams.iter().map(|s| s.weight))?;
    if let Some(score) = streams
        .iter()
        .flat_map(|s| s.scored.iter().map(|(_, score)| *score))
        .find(|s| !s.is_finite())
    {
        return Err(Error::InvalidArgument(format!(
            "normalised fusion needs finite scores (got {score})"
        )));
    }
    let streams: Vec<_> = streams
        .iter()
        .filter(|s| s.weight > 0.0)
        .map(|s| Ok((s.weight, normalization.apply(s.scored)?)))
        .collect::<Result<_>>()?;
    let keys: BTreeSet<&K> = streams
        .iter()
        .flat_map(|(_, (m, _))| m.keys().copied())
        .collect();
    let mut fused: Vec<Fused<K>> = keys
        .into_iter()
        .map(|key| {
            let mut parts: Vec<f64> = streams
                .iter()
                .map(|(w, (m, floor))| w * m.get(key).copied().unwrap_or(*floor))
                .collect();
            parts.sort_by(f64::total_cmp);
            Fused {
                key: key.clone(),
                score: parts.iter().sum(),
            }
        })
        .collect();
    // Keys came out of the set ascending; a stable sort by score keeps that for ties.
    fused.sort_by(|a, b| b.score.total_cmp(&a.score));
    Ok(fused)
}
