//! Dense vectors: one f32 row per document as a segment component of its own
//! (`seg-N.vec`), and exact maximum-inner-product search over every row, the permanent
//! oracle any approximate index is tested against.
//!
//! An index either has vectors, of one dimension fixed when it is created and recorded
//! in its manifest, or has none; in an index with vectors every document has one
//! (`input`), so every segment has a vectors file with a row for each of its documents,
//! in the segment's doc order. Rows are read in place from the memory map (`file`),
//! scored by a dot product the compiler vectorises (`dot`), and collected by the same
//! top-k heap and tie-break as BM25 (`exact`). Merges copy the live rows (`merge`).

mod dot;
pub(crate) mod exact;
mod file;
mod input;
mod merge;

pub(crate) use file::{VectorTable, VectorsFile, encode_rows};
pub use input::{MAX_VECTOR_DIM, VectorProblem};
pub(crate) use input::{check_document, check_query, checked_dim};
pub(crate) use merge::{merged_dim, write_merged_vectors};
