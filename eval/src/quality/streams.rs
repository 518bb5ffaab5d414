//! The ranked streams `quality` evaluates: BM25 over one field at some k1 and b, or the
//! inner product of the query's vector with the documents' (the vector stream), alone
//! or fused.
//!
//! A stream is written `FIELD[:K1:B]`: `flat`, `title`, `text`, or `flat:1.2:0.75` for
//! BM25 at other parameters than the command's `--k1`/`--b`; or `vector`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use heddle::fusion::{
    Fused, Normalization, Rrf, ScoredStream, Stream, normalized_sum, weighted_sum,
};
use heddle::{Bm25Params, Field, Hit, SearchEffort, SearchOptions, Searcher, VectorSearchOptions};

use super::query_vectors::QueryVectors;
use super::run::RunEntry;
use super::ties::{Ids, order_rrf_ties, order_ties};

/// Where one request's time went: the query's vector, each kind of stream's search,
/// and the rest (fusion, tie order, reading the kept hits' ids and titles).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestParts {
    /// Getting the query's vector (encoding it, for an encoder).
    pub encode: Duration,
    /// The BM25 streams' searches.
    pub text: Duration,
    /// The vector stream's search.
    pub vector: Duration,
    /// Everything else: fusing the streams, ordering ties, resolving the kept hits.
    pub fusion: Duration,
}

/// The vector stream's name in `--fuse`.
pub const VECTOR_STREAM: &str = "vector";

/// One ranked stream.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StreamSpec {
    /// BM25 over `field`, at `bm25` or the command's parameters.
    Bm25 {
        field: Field,
        bm25: Option<Bm25Params>,
    },
    /// The documents whose vectors have the largest inner product with the query's
    /// (exact: every live vector is scored).
    Vector,
}

impl StreamSpec {
    /// BM25 over `field` at the command's parameters.
    pub fn bm25(field: Field) -> StreamSpec {
        StreamSpec::Bm25 { field, bm25: None }
    }

    /// Parses `FIELD[:K1:B]` or `vector`.
    pub fn parse(spec: &str) -> anyhow::Result<StreamSpec> {
        if spec.trim() == VECTOR_STREAM {
            return Ok(StreamSpec::Vector);
        }
        let parts: Vec<&str> = spec.trim().split(':').collect();
        let field = Field::parse(parts[0]).with_context(|| {
            format!("stream {spec:?}: expected flat, title, text or {VECTOR_STREAM}")
        })?;
        let bm25 = match parts[1..] {
            [] => None,
            [k1, b] => {
                let k1 = k1
                    .parse()
                    .with_context(|| format!("stream {spec:?}: k1 {k1:?} is not a number"))?;
                let b = b
                    .parse()
                    .with_context(|| format!("stream {spec:?}: b {b:?} is not a number"))?;
                Some(Bm25Params::new(k1, b).with_context(|| format!("stream {spec:?}"))?)
            }
            _ => bail!("stream {spec:?}: expected FIELD or FIELD:K1:B (e.g. flat:1.2:0.75)"),
        };
        Ok(StreamSpec::Bm25 { field, bm25 })
    }

    /// `flat`, `flat:1.2:0.75` when the stream has parameters of its own, or `vector`.
    pub fn label(&self) -> String {
        match self {
            StreamSpec::Bm25 { field, bm25: None } => field.name().to_string(),
            StreamSpec::Bm25 {
                field,
                bm25: Some(p),
            } => format!("{}:{}:{}", field.name(), p.k1, p.b),
            StreamSpec::Vector => VECTOR_STREAM.to_string(),
        }
    }
}

/// Parses a comma-separated list of streams.
pub fn parse_streams(list: &str) -> anyhow::Result<Vec<StreamSpec>> {
    let specs = list
        .split(',')
        .map(StreamSpec::parse)
        .collect::<anyhow::Result<Vec<_>>>()?;
    if specs.is_empty() {
        bail!("no streams given");
    }
    Ok(specs)
}

/// Parses a comma-separated list of `n` weights (finite, ≥ 0).
pub fn parse_weights(list: &str, n: usize) -> anyhow::Result<Vec<f64>> {
    let weights = list
        .split(',')
        .map(|w| {
            w.trim()
                .parse::<f64>()
                .ok()
                .filter(|w| w.is_finite() && (0.0..=heddle::fusion::MAX_WEIGHT).contains(w))
                .with_context(|| {
                    format!(
                        "weight {w:?} is not a number from 0 to {:e}",
                        heddle::fusion::MAX_WEIGHT
                    )
                })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    if weights.len() != n {
        bail!("{} weights for {n} streams", weights.len());
    }
    if weights.iter().all(|&w| w == 0.0) {
        bail!("weights {list:?} are all 0: at least one stream must count");
    }
    Ok(weights)
}

/// How deep each stream is read for reciprocal rank fusion unless `--depth` says
/// otherwise (more when more fused results are asked for). Fixed, not the number of
/// results asked for: a document's fused score depends on the depth (a stream that does
/// not reach it gives it nothing), and must not change with `--k`.
pub const DEFAULT_FUSION_DEPTH: usize = 1000;

/// One stream's settings as a report prints them.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StreamSettings {
    /// As written in `--fuse` (`flat`, `flat:1.2:0.75`, `vector`).
    pub name: String,
    /// The field BM25 scores, or `vector`.
    pub field: &'static str,
    /// BM25's parameters (absent for the vector stream).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k1: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b: Option<f64>,
    pub weight: f64,
}

/// A ranked document with its title (for display).
#[derive(Debug, Clone, PartialEq)]
pub struct RankedHit {
    pub id: String,
    pub title: String,
    pub score: f64,
}

/// How the streams of a [`Retrieval`] become one ranking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// One stream, as it ranks.
    Single,
    /// Reciprocal rank fusion (also of a single stream).
    Rrf,
    /// Weighted sum of the streams' BM25 scores (CombSUM); read to full depth, this is
    /// Anserini's "multifield" construction.
    Sum,
    /// Weighted sum of each stream's scores put on a common scale first (min-max or
    /// z-score over the stream's results), for streams whose scores do not share one.
    Normalized(Normalization),
}

impl Combine {
    /// Parses `--combine` (and the server's `combine`): rrf, sum, minmax or zscore.
    pub fn parse(name: &str) -> anyhow::Result<Combine> {
        Ok(match name {
            "rrf" => Combine::Rrf,
            "sum" => Combine::Sum,
            "minmax" => Combine::Normalized(Normalization::MinMax),
            "zscore" => Combine::Normalized(Normalization::ZScore),
            other => bail!("combine {other:?}: expected rrf, sum, minmax or zscore"),
        })
    }
}

/// How one query's ranked list is produced.
#[derive(Debug, Clone)]
pub struct Retrieval {
    pub streams: Vec<StreamSpec>,
    /// One per stream (all 1: plain RRF, or an unweighted sum).
    pub weights: Vec<f64>,
    pub combine: Combine,
    /// RRF's k, and how deep each stream is read (`None`: [`DEFAULT_FUSION_DEPTH`], or
    /// `hits` if that is more, for RRF and normalised sums; every matching document for
    /// a plain sum).
    pub rrf: Rrf,
    /// BM25 parameters for streams without their own.
    pub bm25: Bm25Params,
    /// Results kept per query.
    pub hits: usize,
    /// Drop a hit whose id equals the query id (pyserini's `--remove-query`).
    pub remove_query: bool,
    /// The query vectors of a vector stream (`None` when no stream is one).
    pub query_vectors: Option<Arc<dyn QueryVectors>>,
    /// How the vector stream searches: `None` exactly (every live vector scored), else
    /// approximately, with this effort in each segment that has a graph.
    pub effort: Option<SearchEffort>,
}

impl std::fmt::Debug for dyn QueryVectors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Retrieval {
    /// A single BM25 stream.
    pub fn single(field: Field, bm25: Bm25Params, hits: usize, remove_query: bool) -> Self {
        Retrieval {
            streams: vec![StreamSpec::bm25(field)],
            weights: vec![1.0],
            combine: Combine::Single,
            rrf: Rrf::default(),
            bm25,
            hits,
            remove_query,
            query_vectors: None,
            effort: Some(SearchEffort::default()),
        }
    }

    /// How the vector stream searches, for reports.
    fn vector_search(&self) -> String {
        match self.effort {
            None => "exact".to_string(),
            Some(SearchEffort::Candidates(ef)) => format!("HNSW, ef {ef}"),
            Some(SearchEffort::Exhaustive) => "HNSW, every row scored".to_string(),
        }
    }

    /// Whether a stream needs the query's vector.
    pub fn has_vector_stream(&self) -> bool {
        self.streams.contains(&StreamSpec::Vector)
    }

    /// Depth to which each fused stream is read (for a sum, `None`: every match).
    pub fn depth(&self) -> Option<usize> {
        match self.combine {
            Combine::Sum => self.rrf.depth,
            _ => Some(
                self.rrf
                    .depth
                    .unwrap_or(DEFAULT_FUSION_DEPTH.max(self.hits)),
            ),
        }
    }

    /// Each stream's name, field, BM25 parameters and weight.
    pub fn stream_settings(&self) -> Vec<StreamSettings> {
        self.streams
            .iter()
            .zip(&self.weights)
            .map(|(spec, &weight)| match spec {
                StreamSpec::Bm25 { field, bm25 } => {
                    let bm25 = bm25.unwrap_or(self.bm25);
                    StreamSettings {
                        name: spec.label(),
                        field: field.name(),
                        k1: Some(bm25.k1),
                        b: Some(bm25.b),
                        weight,
                    }
                }
                StreamSpec::Vector => StreamSettings {
                    name: spec.label(),
                    field: VECTOR_STREAM,
                    k1: None,
                    b: None,
                    weight,
                },
            })
            .collect()
    }

    /// One line saying what produces the ranking; every stream's field, k1, b and weight.
    pub fn describe(&self) -> String {
        let streams: Vec<String> = self
            .stream_settings()
            .iter()
            .map(|s| match (s.k1, s.b) {
                (Some(k1), Some(b)) => {
                    format!("{} BM25 k1={k1} b={b} weight {}", s.field, s.weight)
                }
                _ => format!(
                    "vector inner product ({}) weight {}",
                    self.vector_search(),
                    s.weight
                ),
            })
            .collect();
        let depth = self
            .depth()
            .map_or("every match".to_string(), |d| format!("depth {d}"));
        let mut s = match self.combine {
            Combine::Single => match self.streams[0] {
                StreamSpec::Bm25 { field, bm25 } => {
                    let b = bm25.unwrap_or(self.bm25);
                    format!("{} BM25 k1={} b={}", field.name(), b.k1, b.b)
                }
                StreamSpec::Vector => format!("vector inner product ({})", self.vector_search()),
            },
            Combine::Rrf => format!("RRF (k={}, {depth}) of {}", self.rrf.k, streams.join("; ")),
            Combine::Sum => format!("score sum ({depth}) of {}", streams.join("; ")),
            Combine::Normalized(n) => format!(
                "{} score sum ({depth}) of {}",
                match n {
                    Normalization::MinMax => "min-max normalised",
                    Normalization::ZScore => "z-score normalised",
                },
                streams.join("; ")
            ),
        };
        if let Some(q) = self
            .query_vectors
            .as_ref()
            .filter(|_| self.has_vector_stream())
        {
            s.push_str(&format!(", {}", q.describe()));
        }
        s.push_str(&format!(", {} hits a query", self.hits));
        if self.remove_query {
            s.push_str(", query id removed from results");
        }
        s
    }

    /// The ranked list for one query (best first, at most `hits`).
    pub fn run_query(
        &self,
        searcher: &Searcher,
        query_id: &str,
        text: &str,
    ) -> anyhow::Result<Vec<RunEntry>> {
        Ok(self
            .rank(searcher, query_id, text)?
            .into_iter()
            .map(|h| RunEntry::new(h.id, h.score))
            .collect())
    }

    /// [`Retrieval::run_query`] with each document's title.
    pub fn rank(
        &self,
        searcher: &Searcher,
        query_id: &str,
        text: &str,
    ) -> anyhow::Result<Vec<RankedHit>> {
        Ok(self.rank_timed(searcher, query_id, text)?.0)
    }

    /// [`Retrieval::rank`], and where its time went.
    pub fn rank_timed(
        &self,
        searcher: &Searcher,
        query_id: &str,
        text: &str,
    ) -> anyhow::Result<(Vec<RankedHit>, RequestParts)> {
        let (vectors, encode) = self.query_vectors_of(&[(query_id, text)])?;
        let vector = vectors.and_then(|mut v| v.pop());
        self.rank_timed_given(searcher, query_id, text, vector.as_deref(), encode)
    }

    /// The query vectors of several queries, (query id, text) in order, computed together
    /// (an encoder's one run over all the texts), and the time that took; `None` where
    /// the ranking has no vector stream. For [`Retrieval::rank_timed_given`].
    pub fn query_vectors_of(
        &self,
        queries: &[(&str, &str)],
    ) -> anyhow::Result<(Option<Vec<Vec<f32>>>, Duration)> {
        if !self.has_vector_stream() {
            return Ok((None, Duration::ZERO));
        }
        let started = Instant::now();
        let source = self.query_vectors.as_ref().with_context(|| {
            format!("the {VECTOR_STREAM} stream needs query vectors: none were given")
        })?;
        let vectors = source.vectors(queries)?;
        Ok((Some(vectors), started.elapsed()))
    }

    /// [`Retrieval::rank_timed`] with the query's vector already computed
    /// ([`Retrieval::query_vectors_of`]; `None` without a vector stream), `encode` being
    /// the time the request waited for it.
    pub fn rank_timed_given(
        &self,
        searcher: &Searcher,
        query_id: &str,
        text: &str,
        vector: Option<&[f32]>,
        encode: Duration,
    ) -> anyhow::Result<(Vec<RankedHit>, RequestParts)> {
        let mut parts = RequestParts {
            encode,
            ..RequestParts::default()
        };
        anyhow::ensure!(
            vector.is_some() || !self.has_vector_stream(),
            "the {VECTOR_STREAM} stream needs the query's vector: none was given"
        );
        let started = Instant::now();
        let hits = self.rank_with(searcher, query_id, text, vector, &mut parts)?;
        parts.fusion = started
            .elapsed()
            .saturating_sub(parts.text)
            .saturating_sub(parts.vector);
        Ok((hits, parts))
    }

    fn rank_with(
        &self,
        searcher: &Searcher,
        query_id: &str,
        text: &str,
        vector: Option<&[f32]>,
        parts: &mut RequestParts,
    ) -> anyhow::Result<Vec<RankedHit>> {
        if self.combine == Combine::Single {
            let hits = self.search(
                searcher,
                &self.streams[0],
                query_id,
                text,
                vector,
                self.hits,
                parts,
            )?;
            return Ok(hits
                .into_iter()
                .map(|h| RankedHit {
                    id: h.id,
                    title: h.title,
                    score: h.score,
                })
                .collect());
        }
        // A sum read to every match is exact: a document a stream does not return scores 0
        // in it.
        let depth = self
            .depth()
            .unwrap_or(usize::try_from(searcher.num_docs()).unwrap_or(usize::MAX));
        // Streams are fused by internal doc id; a document's stored id and title are
        // read only for the results kept (a 1,000-deep stream's stored fields cost more
        // than its search), unless removing the query's own document needs every id.
        let mut ids: Ids = HashMap::new();
        let mut scored: Vec<Vec<(u64, f64)>> = Vec::with_capacity(self.streams.len());
        for spec in &self.streams {
            let docs = if self.remove_query {
                let hits = self.search(searcher, spec, query_id, text, vector, depth, parts)?;
                let docs = hits.iter().map(|h| (h.doc, h.score)).collect();
                for h in hits {
                    ids.entry(h.doc).or_insert((h.id, h.title));
                }
                docs
            } else {
                let mut docs =
                    self.stream_docs(searcher, spec, query_id, text, vector, depth, parts)?;
                docs.truncate(depth);
                docs
            };
            scored.push(docs);
        }
        // RRF reads ranks: each stream in the order its run file is read in, where that
        // order can change what is kept.
        if self.combine == Combine::Rrf {
            order_rrf_ties(
                &mut scored,
                &self.weights,
                self.rrf.k,
                self.hits,
                searcher,
                &mut ids,
            )?;
        }
        let scored_streams = || -> Vec<ScoredStream<u64>> {
            scored
                .iter()
                .zip(&self.weights)
                .map(|(s, &w)| ScoredStream::new(s, w))
                .collect()
        };
        let mut fused: Vec<Fused<u64>> = match self.combine {
            Combine::Sum => weighted_sum(&scored_streams())?,
            Combine::Normalized(n) => normalized_sum(&scored_streams(), n)?,
            Combine::Single | Combine::Rrf => {
                let ranked: Vec<Vec<u64>> = scored
                    .iter()
                    .map(|s| s.iter().map(|&(doc, _)| doc).collect())
                    .collect();
                let streams: Vec<Stream<u64>> = ranked
                    .iter()
                    .zip(&self.weights)
                    .map(|(r, &w)| Stream::weighted(r, w))
                    .collect();
                let rrf = Rrf {
                    k: self.rrf.k,
                    depth: Some(depth),
                };
                rrf.fuse(&streams)?
            }
        };
        // The fused list's ties, too, in trec_eval's order before the cut at `hits`.
        order_ties(
            &mut fused,
            self.hits,
            |f| (f.key, f.score),
            searcher,
            &mut ids,
        )?;
        fused
            .into_iter()
            .take(self.hits)
            .map(|f| {
                let (id, title) = match ids.remove(&f.key) {
                    Some(known) => known,
                    None => {
                        let hit = searcher.resolve(f.key, f.score)?;
                        (hit.id, hit.title)
                    }
                };
                Ok(RankedHit {
                    id,
                    title,
                    score: f.score,
                })
            })
            .collect()
    }

    /// One stream's ranking, `k` deep (and one more when the query's own document is
    /// to be removed), with each document's stored id and title.
    #[allow(clippy::too_many_arguments)]
    fn search(
        &self,
        searcher: &Searcher,
        spec: &StreamSpec,
        query_id: &str,
        text: &str,
        vector: Option<&[f32]>,
        k: usize,
        parts: &mut RequestParts,
    ) -> anyhow::Result<Vec<Hit>> {
        let docs = self.stream_docs(searcher, spec, query_id, text, vector, k, parts)?;
        let mut hits = docs
            .into_iter()
            .map(|(doc, score)| searcher.resolve(doc, score))
            .collect::<heddle::Result<Vec<Hit>>>()?;
        if self.remove_query {
            hits.retain(|h| h.id != query_id);
        }
        hits.truncate(k);
        Ok(hits)
    }

    /// One stream's ranking as (internal doc id, score), best first: `k` deep, plus one
    /// when the query's own document is to be removed (the caller removes it). Its time
    /// is added to `parts`' text or vector share.
    #[allow(clippy::too_many_arguments)]
    fn stream_docs(
        &self,
        searcher: &Searcher,
        spec: &StreamSpec,
        query_id: &str,
        text: &str,
        vector: Option<&[f32]>,
        k: usize,
        parts: &mut RequestParts,
    ) -> anyhow::Result<Vec<(u64, f64)>> {
        let started = Instant::now();
        // Saturating: `k` may be usize::MAX (a sum read to every match); the engine
        // clamps it to the live documents.
        let asked = k.saturating_add(usize::from(self.remove_query));
        let found = match (spec, vector) {
            (StreamSpec::Bm25 { field, bm25 }, _) => {
                let opts = SearchOptions {
                    k: asked,
                    bm25: bm25.unwrap_or(self.bm25),
                    field: *field,
                };
                searcher.search_docs(text, &opts)
            }
            (StreamSpec::Vector, Some(v)) => match self.effort {
                None => searcher.search_vector_exact_docs(v, asked),
                Some(effort) => {
                    searcher.search_vector_docs(v, &VectorSearchOptions { k: asked, effort })
                }
            },
            (StreamSpec::Vector, None) => Err(heddle::Error::InvalidArgument(
                "the vector stream was given no query vector".into(),
            )),
        };
        let took = started.elapsed();
        match spec {
            StreamSpec::Bm25 { .. } => parts.text += took,
            StreamSpec::Vector => parts.vector += took,
        }
        found.with_context(|| {
            if query_id.is_empty() {
                format!("stream {}", spec.label())
            } else {
                format!("query {query_id}, stream {}", spec.label())
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_specs_parse_and_label() {
        let s = parse_streams("flat,title, text,flat:1.2:0.75").unwrap();
        assert_eq!(s.len(), 4);
        assert_eq!(s[1], StreamSpec::bm25(Field::Title));
        assert_eq!(s[2], StreamSpec::bm25(Field::Text));
        assert_eq!(
            s[3],
            StreamSpec::Bm25 {
                field: Field::Flat,
                bm25: Some(Bm25Params { k1: 1.2, b: 0.75 })
            }
        );
        assert_eq!(s[3].label(), "flat:1.2:0.75");
        let v = parse_streams("flat, vector").unwrap();
        assert_eq!(v[1], StreamSpec::Vector);
        assert_eq!(v[1].label(), "vector");
        assert!(parse_streams("vectors").is_err());
        assert!(parse_streams("body").is_err());
        assert!(parse_streams("flat:1.2").is_err());
        assert!(parse_streams("flat:x:0.4").is_err());
    }

    #[test]
    fn stream_bm25_parameters_that_would_make_scores_infinite_are_refused() {
        for bad in [
            "flat:1e308:0.75",
            "flat:inf:0.4",
            "flat:NaN:0.4",
            "title:1.2:1.5",
        ] {
            let err = format!("{:#}", parse_streams(bad).unwrap_err());
            assert!(err.contains(bad) && err.contains("from 0 to"), "{err}");
        }
        assert!(parse_streams("flat:1000:1").is_ok());
    }

    #[test]
    fn weights_must_match_the_streams() {
        assert_eq!(parse_weights("1, 0.5", 2).unwrap(), [1.0, 0.5]);
        assert!(parse_weights("1", 2).is_err());
        assert!(parse_weights("1,-1", 2).is_err());
        assert!(parse_weights("1,nan", 2).is_err());
    }

    #[test]
    fn the_rrf_depth_is_fixed_not_the_hits_asked_for() {
        let bm25 = Bm25Params::default();
        let fused = |hits: usize, depth: Option<usize>, combine: Combine| Retrieval {
            streams: parse_streams("title,text").unwrap(),
            weights: vec![1.0, 1.0],
            combine,
            rrf: Rrf { k: 60.0, depth },
            bm25,
            hits,
            remove_query: false,
            query_vectors: None,
            effort: None,
        };
        assert_eq!(
            fused(2, None, Combine::Rrf).depth(),
            Some(DEFAULT_FUSION_DEPTH)
        );
        assert_eq!(
            fused(10, None, Combine::Rrf).depth(),
            Some(DEFAULT_FUSION_DEPTH)
        );
        assert_eq!(fused(5000, None, Combine::Rrf).depth(), Some(5000));
        assert_eq!(fused(2, Some(7), Combine::Rrf).depth(), Some(7));
        assert_eq!(fused(2, None, Combine::Sum).depth(), None);
        let settings = fused(2, None, Combine::Rrf).stream_settings();
        assert_eq!(settings[1].field, "text");
        assert_eq!((settings[1].k1, settings[1].b), (Some(1.2), Some(0.75)));
    }
}
