//! Ranking quality: nDCG, MAP, MRR, P and recall at cut-offs as trec_eval computes them, TREC run files,
//! the paired bootstrap that says whether one run beats another, and the ranked streams
//! (BM25 over a field, at some k1 and b, or their fusion) that `quality` evaluates.
//!
//! Every figure is computed from a [`Run`] in the order trec_eval reads its file, so
//! `heddle-eval quality --run-out r.run` and `trec_eval -c -m ndcg_cut.10 qrels r.run`
//! agree to the last digit.

mod bootstrap;
mod metrics;
mod query_vectors;
mod run;
mod streams;
mod ties;

pub use bootstrap::{
    Comparison, DEFAULT_RESAMPLES, DEFAULT_SEED, Interval, MAX_RESAMPLES, TIE_EPSILON, compare,
    paired_bootstrap,
};
pub use metrics::{
    Evaluation, METRIC_NAMES, METRICS, Metric, Qrels, average_precision, evaluate, ndcg_at,
    precision_at, recall_at, reciprocal_rank,
};
pub use query_vectors::{
    EncodedQueries, HashingEncoder, QueryVectorTable, QueryVectors, TextEncoder,
};
pub use run::{Run, RunEntry, run_id_problem, trec_order};
pub use streams::{
    Combine, DEFAULT_FUSION_DEPTH, RankedHit, RequestParts, Retrieval, StreamSettings, StreamSpec,
    VECTOR_STREAM, parse_streams, parse_weights,
};

pub use crate::formats::read_qrels;
