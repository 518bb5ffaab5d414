//! BEIR files in and out: `corpus.jsonl`, `queries.jsonl` and `qrels/*.tsv`.
//!
//! Readers stream (one line in memory at a time, and no further into a line than
//! [`max_line_bytes`]) and report a malformed line as a [`BeirError`] naming the file and
//! the 1-based line number:
//!
//! ```no_run
//! for doc in heddle_corpus::beir::open_corpus("../shared/data/scifact")? {
//!     let doc = doc?; // e.g. "…/corpus.jsonl:17: field \"title\" is not a string"
//!     println!("{}: {}", doc.id, doc.title);
//! }
//! # Ok::<(), heddle_corpus::beir::BeirError>(())
//! ```

mod corpus;
mod error;
mod fields;
mod lines;
mod qrels;
mod queries;
mod vectors;
mod writer;

pub use corpus::{CorpusReader, open_corpus};
pub use error::{BeirError, LineProblem};
pub use lines::max_line_bytes;
pub use qrels::{Judgment, QrelsReader, qrels_by_query, read_qrels};
pub use queries::{Query, QueryReader, open_queries};
pub use vectors::{
    MAX_VECTOR_LINE_BYTES, MAX_VECTOR_VALUES, VectorLine, VectorReader, open_vectors,
    write_vector_line,
};
pub use writer::{CorpusWriter, QueriesWriter};
