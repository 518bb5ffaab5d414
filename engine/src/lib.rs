//! heddle: a reference full-text search engine.
//!
//! Documents flow one way: [`analysis`] turns text into tokens, [`index::IndexWriter`]
//! inverts them into immutable, memory-mapped [`segment`]s and publishes them with an
//! atomic manifest swap, and [`search::Searcher`] scores an immutable snapshot with BM25.
//!
//! ```
//! use heddle::{Document, Index, IndexSettings};
//! # fn main() -> heddle::Result<()> {
//! # let dir = std::env::temp_dir().join(format!("heddle-doc-{}", std::process::id()));
//! # let _ = std::fs::remove_dir_all(&dir);
//! let index = Index::create(&dir, IndexSettings::default())?;
//! let mut writer = index.writer()?;
//! writer.add(Document::new("d1", "Coronavirus origins", "Bats host many coronaviruses."))?;
//! writer.commit()?;
//! let hits = index.searcher().search("bat coronavirus", &heddle::SearchOptions::default())?;
//! assert_eq!(hits[0].id, "d1");
//! # drop(index);
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok(()) }
//! ```

pub mod analysis;
#[doc(hidden)]
pub mod bench_support;
mod directory;
mod document;
mod error;
mod failpoint;
mod field;
pub mod fusion;
#[doc(hidden)]
pub mod fuzzing;
pub mod index;
mod postings;
pub mod search;
pub mod segment;
mod store;
mod termdict;
mod varint;
pub mod vectors;

pub use analysis::{Analyzer, AnalyzerConfig};
pub use document::Document;
pub use error::{Error, Result};
pub use field::{Field, FieldCounts};
pub use index::{
    AfterFlush, CheckReport, CommitStats, DEFAULT_MAX_DOCUMENT_BYTES, Failpoint, Index,
    IndexSettings, IndexWriter, MIN_MEMORY_BUDGET, MergePolicy, MergeStats, check_index,
};
pub use search::{Bm25Params, Hit, SearchOptions, Searcher, TopKPath};
pub use segment::{BpConfig, CommitPhase, CommitProgress, Reorder, ReorderProgress};
pub use vectors::{
    DEFAULT_EF, DEFAULT_EF_CONSTRUCTION, DEFAULT_GRAPH_MIN_DOCS, DEFAULT_M, GraphSettings,
    MAX_VECTOR_DIM, SearchEffort, VectorProblem, VectorSearchOptions, VectorSearchStats,
    dot_kernel,
};
