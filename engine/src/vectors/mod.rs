//! Dense vectors: one f32 row per document as a segment component of its own
//! (`seg-N.vec`), exact maximum-inner-product search over every row (the permanent
//! oracle), and a graph per large segment (`seg-N.hnsw`) for approximate search.
//!
//! An index either has vectors, of one dimension fixed when it is created and recorded
//! in its manifest, or has none; in an index with vectors every document has one
//! (`input`), so every segment has a vectors file with a row for each of its documents,
//! in the segment's doc order. Rows are read in place from the memory map (`file`),
//! scored by a dot product on the machine's widest instructions (`dot`), and collected
//! by the same top-k heap and tie-break as BM25 (`exact`). Merges copy the live rows
//! (`merge`).
//!
//! A segment of at least [`GraphSettings::min_docs`] documents also gets a graph file
//! (`graph`): its documents linked to their nearest neighbours on a stack of layers
//! (HNSW, `hnsw`), built when the segment is (`build`: at a flush from the rows in
//! memory, at a merge from the file just written). An approximate search (`ann`) walks
//! each such segment's graph from its entry point towards the query, steered by 8-bit
//! codes of its rows (`codes`), rescoring the documents it keeps from their rows, and
//! scans the other segments exactly.

mod ann;
mod build;
mod codes;
pub(crate) mod dot;
pub(crate) mod exact;
mod file;
mod graph;
mod hnsw;
mod input;
mod merge;
mod visited;

pub use ann::{DEFAULT_EF, SearchEffort, VectorSearchOptions, VectorSearchStats};
pub(crate) use ann::{Segment as WalkedSegment, top_k as approximate_top_k};
pub use build::{DEFAULT_EF_CONSTRUCTION, DEFAULT_GRAPH_MIN_DOCS, DEFAULT_M, GraphSettings};
pub(crate) use build::{graph_body, write_merged_graph};
pub(crate) use codes::Codes;
pub use dot::kernel_name as dot_kernel;
pub(crate) use file::{VectorTable, VectorsFile, encode_rows};
pub(crate) use graph::{GraphFile, GraphHeader};
pub use graph::{MAX_LAYERS, MAX_M, MIN_M};
pub use input::{MAX_VECTOR_DIM, VectorProblem};
pub(crate) use input::{check_document, check_query, checked_dim};
pub(crate) use merge::{merged_dim, write_merged_vectors};
pub(crate) use visited::Visited;
