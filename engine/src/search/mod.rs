//! Searching a snapshot: query preparation, BM25, and top-k collection.
//!
//! `exhaustive` scores every posting of every query term. It is the oracle: faster
//! paths (dynamic pruning in `maxscore`, window-at-a-time sums in `taat`) must return
//! exactly its results, ids, scores and tie order.
//! Vector queries are scored by [`crate::vectors`] into the same top-k collector.

mod bm25;
mod exhaustive;
mod maxscore;
mod query;
mod searcher;
mod taat;
mod threshold;
pub(crate) mod topk;

pub use bm25::Bm25Params;
pub use searcher::{Hit, SearchOptions, Searcher, TopKPath};
