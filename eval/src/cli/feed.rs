//! What `index` and `add` share while they feed a corpus file to a writer: naming a
//! repeated id's lines without keeping every id in memory, and returning the memory each
//! budget flush freed.

use std::path::Path;

use heddle::IndexWriter;
use heddle_corpus::beir::{BeirError, LineProblem};

use crate::allocator::release_free_memory;

/// The error for a document at `line` of the corpus `path` whose id the writer already
/// holds. The writer knows the id is taken but not where it came from: the file is read
/// again up to `line` to find the first line with that id (the error path pays for it,
/// where a map of every id read would grow with the corpus on every run). No such line
/// means the index held the id before this run.
pub(super) fn duplicate_id(
    path: &Path,
    line: u64,
    id: &str,
    max_doc_bytes: usize,
) -> anyhow::Error {
    match first_line_of(path, line, id, max_doc_bytes) {
        Ok(Some(first_line)) => BeirError::Malformed {
            path: path.to_path_buf(),
            line,
            problem: LineProblem::DuplicateId {
                id: id.to_string(),
                first_line,
            },
        }
        .into(),
        Ok(None) => anyhow::anyhow!(
            "{}:{line}: document id {id:?} is already in the index",
            path.display()
        ),
        Err(e) => anyhow::anyhow!(
            "{}:{line}: document id {id:?} is taken (rereading the file to find its first line failed: {e})",
            path.display()
        ),
    }
}

/// The first line before `before` holding a document with id `id`.
fn first_line_of(
    path: &Path,
    before: u64,
    id: &str,
    max_doc_bytes: usize,
) -> Result<Option<u64>, BeirError> {
    let mut reader = heddle_corpus::beir::open_corpus(path)?;
    reader.set_max_document_bytes(max_doc_bytes);
    while let Some(doc) = reader.next() {
        if reader.line() >= before {
            break;
        }
        // Lines before `before` were read once already without error.
        if doc.is_ok_and(|d| d.id == id) {
            return Ok(Some(reader.line()));
        }
    }
    Ok(None)
}

/// Notices when the writer has written a segment for its memory budget, and hands the
/// memory the build freed back to the system, so that the process's resident set
/// follows the budget instead of the largest build so far (see [`crate::allocator`]).
#[derive(Debug, Default)]
pub(super) struct FlushWatch {
    flushed: usize,
}

impl FlushWatch {
    /// Call after each document given to `writer`.
    pub(super) fn after_add(&mut self, writer: &IndexWriter) {
        let flushed = writer.flushed_segments();
        if flushed != self.flushed {
            self.flushed = flushed;
            release_free_memory();
        }
    }
}
