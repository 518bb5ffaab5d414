//! Approximate maximum-inner-product search: in each segment with an IVF file, the
//! centroids are ranked by their inner product with the query and only the rows of the
//! best `probes` lists are scored; segments without one (small ones) are scanned
//! exactly. Scores and ties are exact search's: the same kernel on the same rows, the
//! same top-k heap, so probing every list gives exactly the exact answer.
//!
//! A segment gives at least `k` live candidates (or all it has): when the lists probed
//! hold fewer (small lists, or many deleted documents), the next lists in centroid
//! order are probed until they do, so a search returns as many hits as an exact one.

use super::dot::dot;
use super::exact::{overflowed, scan};
use super::file::VectorsFile;
use super::ivf::IvfLists;
use crate::error::{Error, Result};
use crate::index::{LiveSegment, Snapshot};
use crate::search::topk::TopK;

/// Lists probed per segment unless asked otherwise (see docs/DECISIONS.md, "Approximate
/// vector search", for the recall it reaches).
pub const DEFAULT_PROBES: usize = 24;

/// How to run one approximate vector search ([`crate::Searcher::search_vector`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorSearchOptions {
    /// Hits to return; at most the live documents are (as for BM25).
    pub k: usize,
    /// Lists probed in each segment that has an IVF file: more finds more of the exact
    /// top k and costs more rows; as many as the lists (`usize::MAX`) is exact search.
    /// At least 1.
    pub probes: usize,
}

impl Default for VectorSearchOptions {
    fn default() -> Self {
        VectorSearchOptions {
            k: 10,
            probes: DEFAULT_PROBES,
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
/// dimension), probing `probes` lists per segment.
pub(crate) fn top_k(
    snapshot: &Snapshot,
    query: &[f32],
    k: usize,
    probes: usize,
) -> Result<(TopK, VectorSearchStats)> {
    if probes == 0 {
        return Err(Error::InvalidArgument(
            "a vector search probes at least one list".into(),
        ));
    }
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
                    vectors,
                    live,
                    base,
                };
                let want = k.min(live_docs);
                segment.probe(ivf.lists()?, query, want, probes, &mut top, &mut stats)?;
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
    vectors: &'a VectorsFile,
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
        let path = self.vectors.path();
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
        let mut live_seen = 0usize;
        for (rank, &(_, l)) in order.iter().enumerate() {
            if rank >= probes && live_seen >= want {
                break;
            }
            stats.lists_probed += 1;
            for doc in lists.list(l as usize) {
                let row = self.vectors.row(doc)?;
                stats.rows_scored += 1;
                let mut score = dot(query, row);
                if !score.is_finite() {
                    score = overflowed(row, score, doc as usize, path)?;
                }
                if self.live.is_deleted(doc) {
                    continue;
                }
                live_seen += 1;
                // A tie with the floor may still enter: lists do not arrive in doc
                // order, and the heap breaks the tie by doc id.
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
