//! The searcher: a query against one immutable snapshot.

use std::sync::Arc;

use super::bm25::Bm25Params;
use super::{exhaustive, maxscore, query, taat};
use crate::error::{Error, Result};
use crate::field::Field;
use crate::index::Snapshot;
use crate::vectors::{VectorSearchOptions, VectorSearchStats};

/// How to run one query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchOptions {
    /// Hits to return; at most the snapshot's live documents are (a larger k is clamped
    /// to them, so no k can size an allocation beyond the index).
    pub k: usize,
    pub bm25: Bm25Params,
    /// The field scored: `Flat` (title and text together) unless the index has
    /// per-field postings and another is asked for.
    pub field: Field,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            k: 10,
            bm25: Bm25Params::default(),
            field: Field::Flat,
        }
    }
}

/// Which algorithm collects a BM25 search's top k. Every one returns exactly the same
/// hits, scores (bit for bit) and tie order; they differ only in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TopKPath {
    /// Chosen per query ([`Searcher::search`]): term at a time when k is deep for the
    /// query's most frequent term, block-max MaxScore otherwise.
    #[default]
    Planned,
    /// Block-max MaxScore: skips the postings that cannot reach the top k.
    MaxScore,
    /// Every posting summed a window of documents at a time, nothing skipped.
    TermAtATime,
}

/// One result, best first in a result list.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The document's external id.
    pub id: String,
    pub title: String,
    pub score: f64,
    /// Internal doc id within the snapshot (segment order, then insertion order); the
    /// tie-breaker among equal scores.
    pub doc: u64,
}

/// Searches the snapshot it was created from; later commits do not change its answers.
#[derive(Clone)]
pub struct Searcher {
    snapshot: Arc<Snapshot>,
}

impl Searcher {
    pub(crate) fn new(snapshot: Arc<Snapshot>) -> Self {
        Searcher { snapshot }
    }

    /// Live (not deleted) documents in the snapshot.
    pub fn num_docs(&self) -> u64 {
        self.snapshot.live_docs()
    }

    /// The manifest generation this searcher sees.
    pub fn generation(&self) -> u64 {
        self.snapshot.generation()
    }

    /// Documents containing `term` (an already analyzed token) over all segments; an
    /// error if a dictionary block it is looked up in is damaged.
    pub fn doc_freq(&self, field: Field, term: &str) -> Result<u64> {
        self.guarded(|| {
            let mut df = 0;
            for s in self.snapshot.segments() {
                if let Some(info) = s.reader.term_info(field, term)? {
                    df += info.df as u64;
                }
            }
            Ok(df)
        })
    }

    /// Analyzes `query` with the index's analyzer and returns the top `opts.k` documents
    /// by BM25 (a disjunction of the query's terms), ties by ascending internal doc id.
    ///
    /// Uses block-max MaxScore, or for a k deep against the query's most frequent term
    /// a term-at-a-time sum of every posting ([`TopKPath`]); the result is identical to
    /// [`Searcher::search_exhaustive`].
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>> {
        self.resolve_all(self.search_docs(query, opts)?)
    }

    /// [`Searcher::search`]'s ranking as (internal doc id, score) pairs, best first,
    /// without reading any document's stored fields: for a caller that fuses several
    /// rankings and reads only the documents it keeps ([`Searcher::resolve`]). Reading
    /// a document's id and title decompresses its store block, which is most of a
    /// 1,000-deep search's time on a small index.
    pub fn search_docs(&self, query: &str, opts: &SearchOptions) -> Result<Vec<(u64, f64)>> {
        self.search_docs_by(query, opts, TopKPath::Planned)
    }

    /// [`Searcher::search_docs`] by the path given instead of the planned one: for tests
    /// that hold each path to the oracle, and for measuring one against the other.
    pub fn search_docs_by(
        &self,
        query: &str,
        opts: &SearchOptions,
        path: TopKPath,
    ) -> Result<Vec<(u64, f64)>> {
        self.check(opts)?;
        self.guarded(|| {
            let terms = query::prepare(
                query,
                self.snapshot.analyzer(),
                &self.snapshot,
                opts.field,
                opts.bm25,
            )?;
            let k = self.clamp(opts.k);
            let path = match path {
                TopKPath::Planned if taat::pays_for(&terms, k) => TopKPath::TermAtATime,
                TopKPath::Planned => TopKPath::MaxScore,
                forced => forced,
            };
            let top = match path {
                TopKPath::TermAtATime => taat::top_k(&self.snapshot, opts.field, &terms, k)?,
                _ => maxscore::top_k(&self.snapshot, opts.field, &terms, k)?,
            };
            Ok(ranked(top))
        })
    }

    /// The oracle: scores every posting of every query term.
    pub fn search_exhaustive(&self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>> {
        self.check(opts)?;
        let top = self.guarded(|| {
            let terms = query::prepare(
                query,
                self.snapshot.analyzer(),
                &self.snapshot,
                opts.field,
                opts.bm25,
            )?;
            exhaustive::top_k(&self.snapshot, opts.field, &terms, self.clamp(opts.k))
        })?;
        self.resolve_all(ranked(top))
    }

    /// The dimension of the index's vectors; `None` if it stores none.
    pub fn vector_dim(&self) -> Option<usize> {
        self.snapshot.vector_dim()
    }

    /// The top `k` live documents by the inner product of their vector with `query`,
    /// ties by ascending internal doc id (as [`Searcher::search`]); the score is the
    /// inner product, computed in f32. Exact: every live vector is scored, so this is
    /// the oracle an approximate search is measured against. `query` must have the
    /// index's dimension and finite values ([`Error::QueryVector`]); for cosine
    /// similarity, give unit vectors (MiniLM's are).
    pub fn search_vector_exact(&self, query: &[f32], k: usize) -> Result<Vec<Hit>> {
        self.resolve_all(self.search_vector_exact_docs(query, k)?)
    }

    /// [`Searcher::search_vector_exact`] as (internal doc id, score) pairs, best first,
    /// without stored fields (see [`Searcher::search_docs`]).
    pub fn search_vector_exact_docs(&self, query: &[f32], k: usize) -> Result<Vec<(u64, f64)>> {
        crate::vectors::check_query(query, self.snapshot.manifest().vector_dim)?;
        let top =
            self.guarded(|| crate::vectors::exact::top_k(&self.snapshot, query, self.clamp(k)))?;
        Ok(ranked(top))
    }

    /// The approximate top `opts.k` live documents by inner product with `query`, ranked
    /// and scored as [`Searcher::search_vector_exact`] ranks and scores them, from fewer
    /// rows: in each segment with a graph (see [`crate::GraphSettings`]) a walk from its
    /// entry point towards the query that keeps the best `ef` live documents it meets
    /// (`opts.effort`), followed by an exact scan of the segment if the walk found fewer
    /// than `k`; other segments are scanned exactly. Every hit is a live document with
    /// its exact score; a document of the exact top k may be missing (recall below 1).
    /// [`crate::SearchEffort::Exhaustive`] gives exactly the exact answer.
    pub fn search_vector(&self, query: &[f32], opts: &VectorSearchOptions) -> Result<Vec<Hit>> {
        Ok(self.search_vector_with_stats(query, opts)?.0)
    }

    /// [`Searcher::search_vector`] as (internal doc id, score) pairs, best first,
    /// without stored fields (see [`Searcher::search_docs`]).
    pub fn search_vector_docs(
        &self,
        query: &[f32],
        opts: &VectorSearchOptions,
    ) -> Result<Vec<(u64, f64)>> {
        Ok(ranked(self.approximate(query, opts)?.0))
    }

    /// [`Searcher::search_vector`], with what it did: segments walked and scanned, rows
    /// scored.
    pub fn search_vector_with_stats(
        &self,
        query: &[f32],
        opts: &VectorSearchOptions,
    ) -> Result<(Vec<Hit>, VectorSearchStats)> {
        let (top, stats) = self.approximate(query, opts)?;
        Ok((self.resolve_all(ranked(top))?, stats))
    }

    /// The approximate top k heap, `query` checked against the index's dimension.
    fn approximate(
        &self,
        query: &[f32],
        opts: &VectorSearchOptions,
    ) -> Result<(super::topk::TopK, VectorSearchStats)> {
        crate::vectors::check_query(query, self.snapshot.manifest().vector_dim)?;
        self.guarded(|| {
            crate::vectors::approximate_top_k(
                &self.snapshot,
                query,
                self.clamp(opts.k),
                opts.effort,
            )
        })
    }

    /// Runs one request's reads, failing it if a file of the snapshot shrank under its
    /// map meanwhile: its reads may have met the zeros put in place of vanished pages
    /// (`directory::sigbus`). Later reads of such a file fail on their own.
    fn guarded<T>(&self, request: impl FnOnce() -> Result<T>) -> Result<T> {
        let before = crate::directory::faults();
        let result = request();
        if crate::directory::faults() != before {
            self.snapshot.check_intact()?;
        }
        result
    }

    /// BM25's bounds (and so pruning) assume the score grows with tf and shrinks with
    /// length; a field must be indexed to be searched.
    fn check(&self, opts: &SearchOptions) -> Result<()> {
        opts.bm25.validate()?;
        if !self.snapshot.has_field(opts.field) {
            return Err(Error::InvalidArgument(format!(
                "this index has no {} postings; rebuild it with per-field postings (heddle-eval index --per-field)",
                opts.field.name()
            )));
        }
        Ok(())
    }

    /// `k` clamped to the live documents: no more can match.
    fn clamp(&self, k: usize) -> usize {
        usize::try_from(self.snapshot.live_docs()).map_or(k, |live| k.min(live))
    }

    fn resolve_all(&self, ranked: Vec<(u64, f64)>) -> Result<Vec<Hit>> {
        ranked
            .into_iter()
            .map(|(doc, score)| self.resolve(doc, score))
            .collect()
    }

    /// The hit of internal doc id `doc` (as a `*_docs` search gave it) with `score`:
    /// its external id and title read from its stored fields.
    pub fn resolve(&self, doc: u64, score: f64) -> Result<Hit> {
        let segments = self.snapshot.segments();
        let s = (0..segments.len())
            .rev()
            .find(|&s| self.snapshot.doc_base(s) <= doc)
            .ok_or_else(|| Error::InvalidArgument(format!("doc {doc} outside the snapshot")))?;
        // A public entry point: a doc id past the last segment's end (or beyond u32
        // within it) is refused, not truncated onto another document.
        let local = u32::try_from(doc - self.snapshot.doc_base(s))
            .ok()
            .filter(|&l| l < segments[s].reader.doc_count())
            .ok_or_else(|| Error::InvalidArgument(format!("doc {doc} outside the snapshot")))?;
        let stored = self.guarded(|| segments[s].reader.stored(local))?;
        Ok(Hit {
            id: stored.id,
            title: stored.title,
            score,
            doc,
        })
    }

    /// The live document with external id `id`, if there is one (score 0): each
    /// segment's stored ids scanned, newest segment first, deleted documents skipped.
    /// A lookup for one request (the server's `GET /{index}/_doc/{id}`), as the writer
    /// resolves a deletion: it reads every store block, so it is no loop's tool.
    pub fn document(&self, id: &str) -> Result<Option<Hit>> {
        let segments = self.snapshot.segments();
        for s in (0..segments.len()).rev() {
            let segment = &segments[s];
            let mut found = None;
            segment.reader.scan_stored(|doc, stored, title| {
                if found.is_none() && stored == id && !segment.is_deleted(doc) {
                    found = Some((doc, title.to_string()));
                }
                Ok(())
            })?;
            if let Some((doc, title)) = found {
                return Ok(Some(Hit {
                    id: id.to_string(),
                    title,
                    score: 0.0,
                    doc: self.snapshot.doc_base(s) + u64::from(doc),
                }));
            }
        }
        Ok(None)
    }
}

/// A top-k heap's documents, best first, as (internal doc id, score).
fn ranked(top: super::topk::TopK) -> Vec<(u64, f64)> {
    top.into_sorted()
        .into_iter()
        .map(|s| (s.doc, s.score))
        .collect()
}
