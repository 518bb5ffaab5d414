//! Dense vectors: one f32 row per document as a segment component of its own
//! (`seg-N.vec`), exact maximum-inner-product search over every row (the permanent
//! oracle), and an inverted-file index per large segment (`seg-N.ivf`) for approximate
//! search.
//!
//! An index either has vectors, of one dimension fixed when it is created and recorded
//! in its manifest, or has none; in an index with vectors every document has one
//! (`input`), so every segment has a vectors file with a row for each of its documents,
//! in the segment's doc order. Rows are read in place from the memory map (`file`),
//! scored by a dot product the compiler vectorises (`dot`), and collected by the same
//! top-k heap and tie-break as BM25 (`exact`). Merges copy the live rows (`merge`).
//!
//! A segment of at least [`IvfSettings::min_docs`] documents also gets an IVF file
//! (`ivf`): its rows clustered by spherical k-means (`kmeans`) into about √docs lists,
//! built when the segment is (`build`: at a flush from the rows in memory, at a merge
//! from the file just written). An approximate search (`ann`) scores each such
//! segment's centroids, then the rows of the few lists nearest the query, and scans the
//! other segments exactly.

mod ann;
mod build;
pub(crate) mod dot;
pub(crate) mod exact;
mod file;
mod input;
mod ivf;
mod kmeans;
mod merge;

pub(crate) use ann::top_k as approximate_top_k;
pub use ann::{DEFAULT_PROBE_SCALE, Probes, VectorSearchOptions, VectorSearchStats};
pub use build::{DEFAULT_IVF_MIN_DOCS, IvfSettings};
pub(crate) use build::{ivf_body, write_merged_ivf};
pub(crate) use dot::dot;
pub(crate) use file::{VectorTable, VectorsFile, encode_rows};
pub use input::{MAX_VECTOR_DIM, VectorProblem};
pub(crate) use input::{check_document, check_query, checked_dim};
pub use ivf::MAX_LISTS;
pub(crate) use ivf::{IvfFile, IvfShape};
pub(crate) use merge::{merged_dim, write_merged_vectors};
