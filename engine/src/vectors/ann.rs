//! Approximate maximum-inner-product search: in each segment with an IVF file, the
//! centroids are ranked by their inner product with the query and only the rows of the
//! best few lists ([`Probes`]) are scored, each list's rows read front to back from the
//! IVF file's copy of them; segments without one (small ones) are scanned exactly.
//! Scores and ties are exact search's: the same kernel on the same row bytes, the same
//! top-k heap, so probing every list gives exactly the exact answer.
//!
//! A segment gives at least `k` live candidates (or all it has): when the lists probed
//! hold fewer (small lists, or many deleted documents), the next lists in centroid
//! order are probed until they do, so a search returns as many hits as an exact one.

use std::path::Path;

use super::dot::dot;
use super::exact::{check_query_dim, overflowed, scan};
use super::ivf::IvfLists;
use crate::error::{Error, Result};
use crate::index::{LiveSegment, Snapshot};
use crate::search::topk::TopK;

/// The default [`Probes::Scaled`] factor: 6 × √lists lists a segment (51 of SciFact's
/// 72, 123 of 171k documents' 414). Chosen by 2-fold cross-validation on the synthetic
/// corpus's 1,000 class queries (the smallest whole factor reaching recall@10 0.95 on
/// either half was 6, and gave 0.959 and 0.965 on the other), where short made-up-word
/// queries fall between many lists; SciFact's natural-language queries need less
/// (docs/DECISIONS.md, "Approximate vector search").
pub const DEFAULT_PROBE_SCALE: f32 = 6.0;

/// How many lists an approximate search probes in each segment that has an IVF file.
/// More lists find more of the exact top k and score more rows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Probes {
    /// `⌈factor × √lists⌉` lists of a segment of `lists` lists (at least 1). The lists a
    /// recall needs grow with the segment, about as the square root of its lists on
    /// real embeddings, so one factor keeps recall as segments grow where one count
    /// would not. Positive and finite.
    Scaled(f32),
    /// This many lists in each segment (all of them if it has fewer). At least 1.
    Count(usize),
    /// Every list: the exact answer, from the lists.
    All,
}

impl Default for Probes {
    fn default() -> Self {
        Probes::Scaled(DEFAULT_PROBE_SCALE)
    }
}

impl Probes {
    /// Lists to probe in a segment of `lists` lists (1 to `lists`, for `lists` ≥ 1).
    pub fn for_lists(self, lists: usize) -> usize {
        let wanted = match self {
            Probes::Scaled(factor) => (f64::from(factor) * (lists as f64).sqrt()).ceil() as usize,
            Probes::Count(count) => count,
            Probes::All => lists,
        };
        wanted.clamp(1, lists.max(1))
    }

    fn check(self) -> Result<()> {
        match self {
            Probes::Scaled(factor) if !(factor.is_finite() && factor > 0.0) => {
                Err(Error::InvalidArgument(format!(
                    "probes scaled by {factor}: the factor must be a positive number"
                )))
            }
            Probes::Count(0) => Err(Error::InvalidArgument(
                "a vector search probes at least one list".into(),
            )),
            _ => Ok(()),
        }
    }
}

/// How to run one approximate vector search ([`crate::Searcher::search_vector`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VectorSearchOptions {
    /// Hits to return; at most the live documents are (as for BM25). Default 10.
    pub k: usize,
    /// Lists probed in each segment that has an IVF file (default
    /// [`Probes::Scaled`]`(`[`DEFAULT_PROBE_SCALE`]`)`).
    pub probes: Probes,
}

impl Default for VectorSearchOptions {
    fn default() -> Self {
        VectorSearchOptions::top(10)
    }
}

impl VectorSearchOptions {
    /// The top `k` with the default probes.
    pub fn top(k: usize) -> Self {
        VectorSearchOptions {
            k,
            probes: Probes::default(),
        }
    }
}

/// What one approximate search did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VectorSearchStats {
    /// Segments searched through their IVF file.
    pub segments_probed: usize,
    /// Segments scanned exactly (no IVF file).
    pub segments_scanned: usize,
    /// Lists probed, over all segments.
    pub lists_probed: u64,
    /// Centroids scored, over all segments.
    pub centroids_scored: u64,
    /// Document rows scored (deleted ones included), over all segments.
    pub rows_scored: u64,
}

/// The approximate top `k` of `snapshot` for `query` (checked against the index's
/// dimension), probing as `probes` says in each segment.
pub(crate) fn top_k(
    snapshot: &Snapshot,
    query: &[f32],
    k: usize,
    probes: Probes,
) -> Result<(TopK, VectorSearchStats)> {
    probes.check()?;
    let mut top = TopK::new(k);
    let mut stats = VectorSearchStats::default();
    for (s, live) in snapshot.segments().iter().enumerate() {
        let meta = live.reader.meta();
        let vectors = live.reader.vectors().ok_or_else(|| {
            Error::InvalidArgument(format!("segment {} holds no vectors", meta.name))
        })?;
        let live_docs = meta.live_docs() as usize;
        if live_docs == 0 {
            continue;
        }
        let base = snapshot.doc_base(s);
        match live.reader.ivf() {
            Some(ivf) => {
                let segment = Segment {
                    path: ivf.path(),
                    live,
                    base,
                };
                let (lists, want) = (ivf.lists()?, k.min(live_docs));
                let probes = probes.for_lists(lists.len());
                segment.probe(lists, query, want, probes, &mut top, &mut stats)?;
                stats.segments_probed += 1;
            }
            None => {
                let rows = vectors.rows()?;
                let deleted = |doc| live.is_deleted(doc);
                scan(rows, query, base, deleted, &mut top, vectors.path())?;
                stats.segments_scanned += 1;
                stats.rows_scored += rows.len() as u64;
            }
        }
    }
    Ok((top, stats))
}

/// One segment being probed.
struct Segment<'a> {
    /// Its IVF file, which holds the rows probed.
    path: &'a Path,
    live: &'a LiveSegment,
    /// The internal id of its first document.
    base: u64,
}

impl Segment<'_> {
    /// Scores the rows of the `probes` lists whose centroids have the largest inner
    /// products with `query` (ties to the lower list), and of the lists after them until
    /// `want` live documents were scored, into `top`.
    fn probe(
        &self,
        lists: IvfLists<'_>,
        query: &[f32],
        want: usize,
        probes: usize,
        top: &mut TopK,
        stats: &mut VectorSearchStats,
    ) -> Result<()> {
        check_query_dim(lists.dim(), query, self.path)?;
        // One entry a list: about the square root of the segment's documents.
        let mut order: Vec<(f32, u32)> = lists
            .centroids()
            .enumerate()
            .map(|(l, c)| {
                let score = dot(query, c);
                // Finite centroids and query: only an overflow is not finite, and NaN
                // (infinities of both signs) ranks last, as in exact search.
                (
                    if score.is_nan() {
                        f32::NEG_INFINITY
                    } else {
                        score
                    },
                    l as u32,
                )
            })
            .collect();
        stats.centroids_scored += order.len() as u64;
        order.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        // The `probes` best lists, then more until `want` live documents were scored.
        // Lists are scored in centroid order; the heap breaks ties by doc id, so the
        // order they are read in does not change the result. Not `exact::scan`'s loop:
        // that one skips a row that only ties the floor, which is right only when doc
        // ids arrive ascending (they do within a list, not across lists), and it looks a
        // row's deletion up only when it beats the floor, where this loop counts the
        // live rows it scores.
        let mut live_seen = 0usize;
        for (rank, &(_, l)) in order.iter().enumerate() {
            if rank >= probes && live_seen >= want {
                break;
            }
            stats.lists_probed += 1;
            let (ids, rows) = lists.list_rows(l as usize)?;
            for (doc, row) in ids.zip(rows) {
                stats.rows_scored += 1;
                let mut score = dot(query, row);
                if !score.is_finite() {
                    score = overflowed(row, score, doc as usize, self.path, "vector lists")?;
                }
                if self.live.is_deleted(doc) {
                    continue;
                }
                live_seen += 1;
                let score = f64::from(score);
                if top.threshold().is_some_and(|f| score < f) {
                    continue;
                }
                top.push(score, self.base + u64::from(doc));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_scale_with_the_square_root_of_the_lists_within_bounds() {
        let scaled = Probes::default();
        assert_eq!(scaled.for_lists(72), 51); // 6 × 8.49
        assert_eq!(scaled.for_lists(414), 123); // 6 × 20.35
        assert_eq!(scaled.for_lists(4), 4);
        assert_eq!(scaled.for_lists(1), 1);
        assert_eq!(Probes::Scaled(0.01).for_lists(100), 1);
        assert_eq!(Probes::Count(24).for_lists(10), 10);
        assert_eq!(Probes::Count(usize::MAX).for_lists(414), 414);
        assert_eq!(Probes::All.for_lists(414), 414);
        assert_eq!(VectorSearchOptions::default().k, 10);
        for bad in [
            Probes::Count(0),
            Probes::Scaled(0.0),
            Probes::Scaled(-1.0),
            Probes::Scaled(f32::NAN),
            Probes::Scaled(f32::INFINITY),
        ] {
            assert!(bad.check().is_err(), "{bad:?}");
        }
        assert!(Probes::Scaled(0.5).check().is_ok());
    }
}
