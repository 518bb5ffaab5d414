//! Reciprocal rank fusion, plain and weighted.

use crate::error::{Error, Result};

/// The `k` of the original RRF paper, and the usual default (pyserini, ranx, Elasticsearch).
pub const DEFAULT_RRF_K: f64 = 60.0;

/// One ranked list to fuse: keys best first, and the weight of its votes.
#[derive(Debug, Clone, Copy)]
pub struct Stream<'a, K> {
    pub ranked: &'a [K],
    /// Multiplies every contribution of this stream; 1 in plain RRF.
    pub weight: f64,
}

impl<'a, K> Stream<'a, K> {
    /// A stream with weight 1.
    pub fn new(ranked: &'a [K]) -> Self {
        Stream {
            ranked,
            weight: 1.0,
        }
    }

    pub fn weighted(ranked: &'a [K], weight: f64) -> Self {
        Stream { ranked, weight }
    }
}

/// One fused result: the key and its RRF score.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused<K> {
    pub key: K,
    pub score: f64,
}

/// Reciprocal rank fusion's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rrf {
    /// Damps the weight of the top ranks: a key at rank `r` earns `w / (k + r)`.
    pub k: f64,
    /// Only the first `depth` keys of each stream vote (`None`: all of them).
    pub depth: Option<usize>,
}

impl Default for Rrf {
    fn default() -> Self {
        Rrf {
            k: DEFAULT_RRF_K,
            depth: None,
        }
    }
}

impl Rrf {
    /// Fuses `streams` into one list, best first; equal scores go to the smaller key.
    ///
    /// A key repeated within one stream votes once, at its best rank. A stream of weight 0
    /// contributes nothing, not even its keys. The result does not depend on the order of
    /// the streams: each key's contributions are summed in a fixed order (smallest first),
    /// so that even the last bit of a score is the same whichever stream came first.
    pub fn fuse<K: Ord + Clone>(&self, streams: &[Stream<'_, K>]) -> Result<Vec<Fused<K>>> {
        if !(self.k.is_finite() && (0.0..=super::MAX_RRF_K).contains(&self.k)) {
            return Err(Error::InvalidArgument(format!(
                "RRF needs a finite k, 0 to {:e} (got {})",
                super::MAX_RRF_K,
                self.k
            )));
        }
        super::check_weights("RRF stream", streams.iter().map(|s| s.weight))?;
        // Every vote as (key, stream, place, its share), then grouped by key and stream: one
        // sort of a flat list, where a map of lists allocated once per key cost more than
        // the rest of a 1,000-deep fusion.
        let depth = |s: &Stream<'_, K>| self.depth.unwrap_or(usize::MAX).min(s.ranked.len());
        let mut votes: Vec<(&K, usize, usize, f64)> =
            Vec::with_capacity(streams.iter().map(&depth).sum());
        for (s, stream) in streams.iter().enumerate().filter(|(_, s)| s.weight > 0.0) {
            votes.extend(
                stream.ranked[..depth(stream)]
                    .iter()
                    .enumerate()
                    .map(|(i, key)| {
                        let rank = (i + 1) as f64;
                        (key, s, i, stream.weight / (self.k + rank))
                    }),
            );
        }
        // By key, stream and place: within one key and stream the best place comes first,
        // and is the one vote kept. Every vote differs in (stream, place), so an unstable
        // sort gives this one order (and is the cheaper sort).
        votes.sort_unstable_by(|a, b| a.0.cmp(b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        votes.dedup_by(|later, first| later.0 == first.0 && later.1 == first.1);
        let mut parts: Vec<f64> = Vec::with_capacity(streams.len());
        let mut fused: Vec<Fused<K>> = votes
            .chunk_by(|a, b| a.0 == b.0)
            .map(|same| {
                parts.clear();
                parts.extend(same.iter().map(|v| v.3));
                parts.sort_by(f64::total_cmp);
                Fused {
                    key: same[0].0.clone(),
                    score: parts.iter().sum(),
                }
            })
            .collect();
        // Best first, ties by key ascending (keys are distinct, so one order).
        fused.sort_unstable_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.key.cmp(&b.key)));
        Ok(fused)
    }
}
