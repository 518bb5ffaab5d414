//! Approximate maximum-inner-product search: in each segment with a graph file, a walk
//! from the graph's entry point down its layers towards the query, keeping the best
//! `ef` live documents it meets on layer 0 ([`SearchEffort`]); segments without one
//! (small ones) are scanned exactly. The walk is steered by the rows' 8-bit codes
//! ([`super::codes`]: a quarter of the memory to read per row), and the documents it
//! keeps are then rescored from their rows. So every score returned is the dot product
//! of the query with the document's row in the vectors file, by the same kernel as exact
//! search's, and the hits go through the same top-k heap and tie-break: a document found
//! has exactly its exact score, and [`SearchEffort::Exhaustive`] gives exactly the exact
//! answer. The codes decide only which documents are found.
//!
//! A segment gives at least `k` live hits (or all it has): deleted documents are walked
//! through but never kept, and a walk that ends with fewer (a graph cut in two by its
//! pruning, or a segment mostly deleted) is followed by an exact scan of that segment,
//! so a search returns as many hits as an exact one.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;

use super::codes::{CodedQuery, Codes};
use super::exact::{check_query_dim, overflowed, scan};
use super::file::Rows;
use super::graph::GraphLayers;
use super::hnsw::{Scored, sane};
use super::visited::{Visited, with_visited};
use crate::error::{Error, Result};
use crate::index::Snapshot;
use crate::search::topk::TopK;

/// The default [`SearchEffort::Candidates`]: the live documents a walk keeps on layer 0
/// of each segment's graph. Chosen before measuring (hnswlib's and usearch's default
/// search expansion); on the 171k mixture it gives recall@10 0.97–0.98, and 48 was the
/// smallest there reaching 0.95 (docs/RESULTS.md, "Approximate vector search as a graph
/// walk"). Real embeddings may need more: measured on them in a later session.
pub const DEFAULT_EF: usize = 64;

/// How hard an approximate search looks in each segment that has a graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchEffort {
    /// Keep this many candidates on layer 0 (HNSW's `ef`; at least `k` are kept
    /// whatever this says). More find more of the exact top k and score more rows.
    Candidates(usize),
    /// Score every row of every segment: the exact answer (the oracle setting).
    Exhaustive,
}

impl Default for SearchEffort {
    fn default() -> Self {
        SearchEffort::Candidates(DEFAULT_EF)
    }
}

impl SearchEffort {
    fn check(self) -> Result<()> {
        match self {
            SearchEffort::Candidates(0) => Err(Error::InvalidArgument(
                "a vector search keeps at least one candidate (ef 0)".into(),
            )),
            _ => Ok(()),
        }
    }
}

/// How to run one approximate vector search ([`crate::Searcher::search_vector`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorSearchOptions {
    /// Hits to return; at most the live documents are (as for BM25). Default 10.
    pub k: usize,
    /// How hard to look in each segment that has a graph (default
    /// [`SearchEffort::Candidates`]`(`[`DEFAULT_EF`]`)`).
    pub effort: SearchEffort,
}

impl Default for VectorSearchOptions {
    fn default() -> Self {
        VectorSearchOptions::top(10)
    }
}

impl VectorSearchOptions {
    /// The top `k` with the default effort.
    pub fn top(k: usize) -> Self {
        VectorSearchOptions {
            k,
            effort: SearchEffort::default(),
        }
    }
}

/// What one approximate search did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VectorSearchStats {
    /// Segments searched through their graph.
    pub segments_walked: usize,
    /// Segments scanned exactly (no graph, the exhaustive effort, or a walk that found
    /// fewer live documents than asked).
    pub segments_scanned: usize,
    /// Document rows scored (deleted ones included), over all segments: a walk's steps
    /// scored by codes, its kept documents rescored, and every row of a scan.
    pub rows_scored: u64,
    /// Segments walked a second time because every hit of the first walk, asked for the
    /// segment's share of the top k, ranked in the merged top k (their rows are in
    /// `rows_scored`; the segments are counted once in `segments_walked`).
    pub rewalks: usize,
    /// Walks done again on the rows themselves because the codes could not tell the
    /// documents kept apart (near-duplicates, closer than a code step); their rows are in
    /// `rows_scored`.
    pub row_walks: usize,
}

/// The approximate top `k` of `snapshot` for `query` (checked against the index's
/// dimension), with `effort` in each segment.
///
/// Segments share the work: a segment holding a fraction `p` of the live documents is
/// first walked for its likely share of the top `k` ([`share`]), with `ef` scaled by the
/// same ratio, because a walk's cost is mostly the path to the query's neighbourhood and
/// its beam, not the hits it returns. A segment whose every hit then ranks in the merged
/// top `k` may hold more, and is walked again as a lone segment would be (`ef`, `k`):
/// so a query whose neighbours cluster in one segment loses nothing but time.
pub(crate) fn top_k(
    snapshot: &Snapshot,
    query: &[f32],
    k: usize,
    effort: SearchEffort,
) -> Result<(TopK, VectorSearchStats)> {
    effort.check()?;
    let mut top = TopK::new(k);
    let mut stats = VectorSearchStats::default();
    if k == 0 {
        return Ok((top, stats));
    }
    let total_live: u64 = (snapshot.segments().iter())
        .map(|s| u64::from(s.reader.meta().live_docs()))
        .sum();
    let mut walks: Vec<Walk> = Vec::new();
    for (s, live) in snapshot.segments().iter().enumerate() {
        let meta = live.reader.meta();
        let vectors = live.reader.vectors().ok_or_else(|| {
            Error::InvalidArgument(format!("segment {} holds no vectors", meta.name))
        })?;
        let live_docs = meta.live_docs();
        if live_docs == 0 {
            continue;
        }
        let want = k.min(live_docs as usize);
        let rows = vectors.rows()?;
        if let (Some(_), SearchEffort::Candidates(ef)) = (live.reader.graph(), effort) {
            check_query_dim(rows.dim(), query, vectors.path())?;
            let asked = share(k, u64::from(live_docs), total_live).min(want);
            let beam = (ef * asked).div_ceil(k).max(asked);
            if scan_is_cheaper(beam, rows.len()) {
                scan_segment(snapshot, s, query, &mut top, &mut stats)?;
                continue;
            }
            let found = walk_segment(snapshot, s, query, beam, &mut stats)?;
            stats.segments_walked += 1;
            if found.len() >= asked {
                walks.push(Walk {
                    segment: s,
                    asked,
                    want,
                    ef,
                    found,
                });
                continue;
            }
        }
        scan_segment(snapshot, s, query, &mut top, &mut stats)?;
    }
    // The merged top k's worst score, had every walk been enough: needed only when a
    // walk was asked for less than its full due (never with one segment).
    let floor = match walks.iter().any(|w| w.asked < w.want) {
        false => None,
        true => {
            let mut merged = top.clone();
            for w in &walks {
                let base = snapshot.doc_base(w.segment);
                for hit in &w.found {
                    merged.push(f64::from(hit.score), base + u64::from(hit.doc));
                }
            }
            merged.threshold()
        }
    };
    for w in &mut walks {
        let competitive = match floor {
            None => w.found.len(),
            Some(floor) => w
                .found
                .iter()
                .filter(|h| f64::from(h.score) >= floor)
                .count(),
        };
        if w.asked < w.want && competitive >= w.asked {
            let beam = w.ef.max(w.want);
            let rows = snapshot.segments()[w.segment].reader.meta().doc_count as usize;
            // The second walk, unless a scan costs no more; a walk that keeps fewer than
            // the segment's due is followed by the scan too.
            let walked = match scan_is_cheaper(beam, rows) {
                true => None,
                false => {
                    stats.rewalks += 1;
                    Some(walk_segment(snapshot, w.segment, query, beam, &mut stats)?)
                }
            };
            match walked {
                Some(found) if found.len() >= w.want => w.found = found,
                _ => {
                    scan_segment(snapshot, w.segment, query, &mut top, &mut stats)?;
                    w.found.clear();
                }
            }
        }
        let base = snapshot.doc_base(w.segment);
        for hit in &w.found {
            top.push(f64::from(hit.score), base + u64::from(hit.doc));
        }
    }
    Ok((top, stats))
}

/// How many hits a walk of a segment holding `live` of the `total` live documents is
/// first asked for: its expected share of the top `k`, `k·p`, plus three standard
/// deviations of that share (binomial, `√(k·p·(1−p))`), at least one and at most `k`.
/// Three deviations make a second walk rare where documents were spread over segments
/// at random; where they were not (a topic added in one batch), the second walk repairs it.
fn share(k: usize, live: u64, total: u64) -> usize {
    if total == 0 || live >= total {
        return k;
    }
    let p = live as f64 / total as f64;
    let mean = k as f64 * p;
    let spread = (mean * (1.0 - p)).sqrt();
    ((mean + SHARE_MARGIN * spread).ceil() as usize).clamp(1, k)
}

/// Whether an exact scan of a segment of `rows` rows costs no more than a walk with a
/// beam of `beam`: then the scan is taken, exact and no slower. A walk scores about 9–13
/// rows per place in its beam, each a read out of order that costs 2–4× a row read in
/// order (4,883 rows of 384 dimensions held in cache, 171,332 not: docs/RESULTS.md,
/// "A walk never costs more than a scan"), so the two cost the same near a beam of
/// rows / 32. Segments below [`super::DEFAULT_GRAPH_MIN_DOCS`] are walked whatever the
/// beam: they have a graph only because the writer was told to build one.
fn scan_is_cheaper(beam: usize, rows: usize) -> bool {
    rows >= super::DEFAULT_GRAPH_MIN_DOCS as usize && beam.saturating_mul(SCAN_BEAM_RATIO) >= rows
}

/// Rows of a segment per place in a walk's beam at which a scan costs what the walk does.
const SCAN_BEAM_RATIO: usize = 32;

/// Standard deviations of margin in [`share`].
const SHARE_MARGIN: f64 = 3.0;

/// One segment's walk, kept until the merged top k is known.
struct Walk {
    segment: usize,
    /// Hits the walk was asked for ([`share`]); `want` is the segment's full due.
    asked: usize,
    want: usize,
    ef: usize,
    /// Its best live documents, best first, at least `asked` of them.
    found: Vec<Scored>,
}

/// Every live document of segment `s` into `top`, scored exactly.
fn scan_segment(
    snapshot: &Snapshot,
    s: usize,
    query: &[f32],
    top: &mut TopK,
    stats: &mut VectorSearchStats,
) -> Result<()> {
    let live = &snapshot.segments()[s];
    let Some(vectors) = live.reader.vectors() else {
        return Ok(());
    };
    let rows = vectors.rows()?;
    let deleted = |doc| live.is_deleted(doc);
    scan(
        rows,
        query,
        snapshot.doc_base(s),
        deleted,
        top,
        vectors.path(),
    )?;
    stats.segments_scanned += 1;
    stats.rows_scored += rows.len() as u64;
    Ok(())
}

/// The best `ef` live documents of segment `s` by a walk of its graph.
fn walk_segment(
    snapshot: &Snapshot,
    s: usize,
    query: &[f32],
    ef: usize,
    stats: &mut VectorSearchStats,
) -> Result<Vec<Scored>> {
    let live = &snapshot.segments()[s];
    let (Some(vectors), Some(graph)) = (live.reader.vectors(), live.reader.graph()) else {
        return Ok(Vec::new());
    };
    let layers = graph.layers()?;
    let segment = Segment {
        rows: vectors.rows()?,
        codes: vectors.codes()?,
        path: vectors.path(),
        deleted: &|doc| live.is_deleted(doc),
    };
    with_visited(|visited| segment.walk(layers, query, ef, visited, stats))
}

/// Rows (or codes) fetched ahead of the one being scored. Fetching every fresh
/// neighbour's whole row at once stalled a 1,000-deep walk on the fetches themselves;
/// four ahead overlaps the loads with the dot products (8 measured slower, 2 no
/// different: docs/RESULTS.md, "The vector and hybrid arms at 171k with the graph"; with
/// 8-bit codes 8 and 16 were no different either).
const PREFETCH_AHEAD: usize = 4;

/// One segment being walked.
pub(crate) struct Segment<'a> {
    pub rows: Rows<'a>,
    /// The rows' codes, which steer the walk.
    pub codes: &'a Codes,
    /// Its vectors file, which holds the rows scored.
    pub path: &'a Path,
    /// Whether a document is deleted.
    pub deleted: &'a dyn Fn(u32) -> bool,
}

impl Segment<'_> {
    /// Document `doc`'s row; an error if the rows have none (the graph and the vectors
    /// file agree on the document count when both open, so only a bug could ask).
    #[inline]
    fn row(&self, doc: u32) -> Result<&[u8]> {
        self.rows.row(doc as usize).ok_or_else(|| Error::Corrupt {
            path: self.path.to_path_buf(),
            what: "vectors",
            detail: format!("the graph names document {doc} of {}", self.rows.len()),
        })
    }

    /// Document `doc`'s codes (see [`Segment::row`] on the error).
    #[inline]
    fn code(&self, doc: u32) -> Result<&[u8]> {
        self.codes.code(doc).ok_or_else(|| Error::Corrupt {
            path: self.path.to_path_buf(),
            what: "vectors",
            detail: format!("the graph names document {doc} of {}", self.rows.len()),
        })
    }

    /// What `steering` reads of document `doc`: its codes or its row.
    #[inline]
    fn bytes(&self, steering: &Steering<'_>, doc: u32) -> Result<&[u8]> {
        match steering {
            Steering::Codes(_) => self.code(doc),
            Steering::Rows(_) => self.row(doc),
        }
    }

    /// Document `doc`'s score as `steering` sees it, from `bytes` (its codes or row).
    #[inline]
    fn steer(
        &self,
        steering: &Steering<'_>,
        doc: u32,
        bytes: &[u8],
        stats: &mut VectorSearchStats,
    ) -> Result<Scored> {
        match steering {
            Steering::Codes(coded) => {
                stats.rows_scored += 1;
                Ok(Scored {
                    score: sane(coded.score(bytes)),
                    doc,
                })
            }
            Steering::Rows(query) => self.score_row(query, doc, bytes, stats),
        }
    }

    /// `query · row(doc)`, an error if the row holds a value that is not a number.
    #[inline]
    fn score(&self, query: &[f32], doc: u32, stats: &mut VectorSearchStats) -> Result<Scored> {
        self.score_row(query, doc, self.row(doc)?, stats)
    }

    /// `query · row`, `row` being document `doc`'s.
    #[inline]
    fn score_row(
        &self,
        query: &[f32],
        doc: u32,
        row: &[u8],
        stats: &mut VectorSearchStats,
    ) -> Result<Scored> {
        stats.rows_scored += 1;
        let mut score = super::dot::dot(query, row);
        if !score.is_finite() {
            score = overflowed(row, score, doc as usize, self.path, "vectors")?;
        }
        Ok(Scored {
            score: sane(score),
            doc,
        })
    }

    /// The best `ef` live documents a walk of `layers` finds, best first by their exact
    /// scores. The walk is steered by the rows' codes, and the documents it keeps, with
    /// those within the codes' margin below the last of them, are rescored from their
    /// rows. Where the codes cannot tell the kept documents apart (their coded scores
    /// all within twice the margin: near-duplicates of one another), the walk is done
    /// again on the rows themselves, since codes would have steered it blind.
    pub(crate) fn walk(
        &self,
        layers: GraphLayers<'_>,
        query: &[f32],
        ef: usize,
        visited: &mut Visited,
        stats: &mut VectorSearchStats,
    ) -> Result<Vec<Scored>> {
        let coded = self.codes.query(query);
        let margin = coded.margin();
        let Walked { kept, mut near } =
            self.search_layers(layers, &Steering::Codes(&coded), ef, visited, stats)?;
        let worst = kept.peek().map(|r| r.0.score);
        let best = kept.iter().map(|r| r.0).max().map(|s| s.score);
        if let (Some(worst), Some(best)) = (worst, best)
            && kept.len() >= 2
            && best - worst < 2.0 * margin
        {
            stats.row_walks += 1;
            let walked = self.search_layers(layers, &Steering::Rows(query), ef, visited, stats)?;
            let mut out: Vec<Scored> = walked.kept.into_iter().map(|r| r.0).collect();
            out.sort_unstable_by(|a, b| b.cmp(a));
            return Ok(out);
        }
        // Rescored from the rows, fetched ahead as the walk's codes were; the best `ef`
        // by exact score stand.
        if kept.len() >= ef
            && let Some(worst) = worst
        {
            let floor = worst - margin;
            near.retain(|s| s.score >= floor);
        }
        let mut out = Vec::with_capacity(near.len());
        for s in near.iter().take(PREFETCH_AHEAD) {
            super::dot::prefetch(self.row(s.doc)?);
        }
        for (i, s) in near.iter().enumerate() {
            if let Some(ahead) = near.get(i + PREFETCH_AHEAD) {
                super::dot::prefetch(self.row(ahead.doc)?);
            }
            out.push(self.score(query, s.doc, stats)?);
        }
        out.sort_unstable_by(|a, b| b.cmp(a));
        out.truncate(ef);
        Ok(out)
    }

    /// One walk of `layers` by `steering`'s scores: one greedy step at a time down to
    /// layer 1, then a best-first search of layer 0 that stops when the nearest
    /// unexplored document is worse than the `ef`-th kept.
    fn search_layers(
        &self,
        layers: GraphLayers<'_>,
        steering: &Steering<'_>,
        ef: usize,
        visited: &mut Visited,
        stats: &mut VectorSearchStats,
    ) -> Result<Walked> {
        let entry = layers.entry();
        let mut nearest = self.steer(steering, entry, self.bytes(steering, entry)?, stats)?;
        for l in (1..layers.len()).rev() {
            loop {
                let mut moved = false;
                for n in layers.neighbours(l, nearest.doc).iter() {
                    let s = self.steer(steering, n, self.bytes(steering, n)?, stats)?;
                    if s > nearest {
                        nearest = s;
                        moved = true;
                    }
                }
                if !moved {
                    break;
                }
            }
        }
        visited.reset(self.rows.len());
        visited.insert(nearest.doc);
        let mut candidates: BinaryHeap<Scored> = BinaryHeap::with_capacity(4 * ef);
        let mut kept: BinaryHeap<Reverse<Scored>> = BinaryHeap::with_capacity(ef + 1);
        // Steered by codes: every live document whose coded score came within the
        // codes' margin of being kept, rescored at the end, so that one the codes
        // ranked just below the `ef`-th still gets its exact chance.
        let margin = match steering {
            Steering::Codes(coded) => Some(coded.margin()),
            Steering::Rows(_) => None,
        };
        let mut near: Vec<Scored> = Vec::with_capacity(if margin.is_some() { 2 * ef } else { 0 });
        candidates.push(nearest);
        if !(self.deleted)(nearest.doc) {
            kept.push(Reverse(nearest));
            if margin.is_some() {
                near.push(nearest);
            }
        }
        // The unvisited neighbours of the document being expanded (at most 2m ≤ 256),
        // and what is scored of each, fetched once: prefetched, then scored.
        let mut unvisited = [0u32; 2 * super::graph::MAX_M as usize];
        let mut fetched: [&[u8]; 2 * super::graph::MAX_M as usize] =
            [&[]; 2 * super::graph::MAX_M as usize];
        while let Some(c) = candidates.pop() {
            if kept.len() >= ef && kept.peek().is_some_and(|w| c < w.0) {
                break;
            }
            // Most often the next document expanded: its list loads while this one's
            // neighbours are scored.
            if let Some(next) = candidates.peek() {
                layers.prefetch_layer0(next.doc);
            }
            // Without a branch: whether a neighbour was visited is a coin toss to the
            // branch predictor, and each miss would hold back the loads of the marks
            // after it. Every id is written; only a fresh one is counted.
            let mut count = 0;
            for n in layers.neighbours(0, c.doc).iter().take(unvisited.len()) {
                unvisited[count] = n;
                count += usize::from(visited.insert(n));
            }
            let (fresh, fetched) = (&unvisited[..count], &mut fetched[..count]);
            for (b, &n) in fetched.iter_mut().zip(fresh) {
                *b = self.bytes(steering, n)?;
            }
            for &b in fetched.iter().take(PREFETCH_AHEAD) {
                super::dot::prefetch(b);
            }
            for (i, (&n, &b)) in fresh.iter().zip(fetched.iter()).enumerate() {
                if let Some(&ahead) = fetched.get(i + PREFETCH_AHEAD) {
                    super::dot::prefetch(ahead);
                }
                let s = self.steer(steering, n, b, stats)?;
                // The `ef`-th kept, once there are `ef`.
                let worst = kept.peek().filter(|_| kept.len() >= ef).map(|w| w.0);
                let enters = worst.is_none_or(|w| s > w);
                let near_enough =
                    margin.is_some_and(|m| worst.is_none_or(|w| s.score >= w.score - m));
                if !enters && !near_enough {
                    continue;
                }
                // A deleted document is a way through, never a hit.
                let live = !(self.deleted)(n);
                if near_enough && live {
                    near.push(s);
                }
                if enters {
                    candidates.push(s);
                    if live {
                        kept.push(Reverse(s));
                        if kept.len() > ef {
                            kept.pop();
                        }
                    }
                }
            }
        }
        Ok(Walked { kept, near })
    }
}

/// What a walk's scores come from.
enum Steering<'q> {
    /// The rows' codes, scaled for this query: cheap to read, approximate.
    Codes(&'q CodedQuery),
    /// The rows themselves against this query: exact.
    Rows(&'q [f32]),
}

/// What one walk of a segment found.
struct Walked {
    /// The best `ef` live documents by the walk's scores (the worst on top).
    kept: BinaryHeap<Reverse<Scored>>,
    /// Steered by codes: every live document met within the margin of being kept, the
    /// kept ones included (empty when steered by rows).
    near: Vec<Scored>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segments_share_is_its_expected_part_of_k_with_a_margin_within_one_and_k() {
        // A lone segment, or one holding everything, is asked for all k.
        assert_eq!(share(10, 100, 100), 10);
        assert_eq!(share(10, 5, 0), 10);
        // A quarter: 2.5 expected, deviation √(2.5 · 0.75) ≈ 1.37, so 2.5 + 4.1 → 7.
        assert_eq!(share(10, 25, 100), 7);
        // A sliver still gets one; a half gets the whole k (5 + 3 · 1.58 > 10).
        assert_eq!(share(10, 1, 1_000_000), 1);
        assert_eq!(share(10, 50, 100), 10);
        // More documents never ask for fewer hits.
        let asked: Vec<usize> = (0..=100).map(|live| share(100, live, 100)).collect();
        assert!(asked.windows(2).all(|w| w[0] <= w[1]), "{asked:?}");
        assert!(asked.iter().all(|&a| (1..=100).contains(&a)));
    }

    /// A walk over a complete graph scores every document by its codes. Docs 2 and 3
    /// score 1.0020 and 1.0036 exactly, but their codes, rounded the other way, score
    /// them 1.0039 and 1.0000: the codes keep doc 2 in the third place, and the margin's
    /// rescoring must return doc 3 instead, with its exact score.
    #[test]
    fn a_document_the_codes_rank_just_below_the_last_kept_is_rescored_into_the_top() {
        use super::super::graph::{GraphHeader, LayerLinks, write_graph};
        use super::super::{VectorTable, encode_rows};
        let values: [[f32; 2]; 6] = [
            [1.0, 1.0],
            [0.9, 0.9],
            [0.5015, 0.5005],
            [0.5038, 0.4998],
            [0.0, 0.0],
            [0.1, 0.1],
        ];
        let docs = values.len() as u32;
        let path = Path::new("seg-1.vec");
        let body = encode_rows(2, values.len(), values.iter().map(|v| &v[..]));
        let table = VectorTable::open(path, &body, docs, 2).unwrap();
        let rows = table.rows(&body);
        let codes = Codes::of(rows, path).unwrap();
        let coded = codes.query(&[1.0, 1.0]);
        let (two, three) = (
            coded.score(codes.code(2).unwrap()),
            coded.score(codes.code(3).unwrap()),
        );
        assert!(
            three < two && two - three < coded.margin(),
            "the set-up: {two} {three} {}",
            coded.margin()
        );
        let layer0 = LayerLinks {
            nodes: Vec::new(),
            neighbours: (0..docs)
                .map(|d| (0..docs).filter(|&n| n != d).collect())
                .collect(),
        };
        let mut graph = Vec::new();
        write_graph(docs, 2, 3, 4, &[layer0], |b| {
            graph.extend_from_slice(b);
            Ok(())
        })
        .unwrap();
        let header = GraphHeader::open(path, &graph, docs, 2).unwrap();
        let layout = header.validate(path, &graph).unwrap();
        let segment = Segment {
            rows,
            codes: &codes,
            path,
            deleted: &|_| false,
        };
        let mut stats = VectorSearchStats::default();
        let found = segment
            .walk(
                header.cut(&graph, &layout),
                &[1.0, 1.0],
                3,
                &mut Visited::default(),
                &mut stats,
            )
            .unwrap();
        let got: Vec<(u32, f32)> = found.iter().map(|s| (s.doc, s.score)).collect();
        assert_eq!(got, [(0, 2.0), (1, 1.8), (3, 0.5038 + 0.4998)]);
        assert_eq!(
            stats.row_walks, 0,
            "the codes tell the kept documents apart"
        );
    }

    #[test]
    fn the_default_effort_and_its_bounds() {
        assert_eq!(VectorSearchOptions::default().k, 10);
        assert_eq!(
            VectorSearchOptions::default().effort,
            SearchEffort::Candidates(DEFAULT_EF)
        );
        assert!(SearchEffort::Candidates(0).check().is_err());
        assert!(SearchEffort::Candidates(1).check().is_ok());
        assert!(SearchEffort::Exhaustive.check().is_ok());
    }
}
