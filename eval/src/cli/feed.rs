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
/// where a map of every id read would grow with the corpus on every run).
/// `index_may_hold` says whether the id can have been in the index before this run
/// (`add` without `--upsert`); otherwise it came from this file, and a reread that does
/// not find it (the file changed, or is a pipe that cannot be read twice) says so.
pub(super) fn duplicate_id(
    path: &Path,
    line: u64,
    id: &str,
    max_doc_bytes: usize,
    index_may_hold: bool,
) -> anyhow::Error {
    let where_ = format!("{}:{line}: document id {id:?}", path.display());
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
        Ok(None) if index_may_hold => anyhow::anyhow!("{where_} is already in the index"),
        Ok(None) => anyhow::anyhow!(
            "{where_} repeats an id read earlier in this run, but rereading the file did not \
             find it before this line (did the file change, or is it a pipe?)"
        ),
        Err(e) => anyhow::anyhow!(
            "{where_} is taken{}; rereading the file to find its first line failed: {e}",
            if index_may_hold {
                " (in the index, or earlier in this file)"
            } else {
                " by an earlier line of this file"
            }
        ),
    }
}

/// The first line before `before` holding a document with id `id`. An error if the
/// file cannot be read again as far as `before` (it was read that far once already,
/// without error: anything else means it changed).
fn first_line_of(
    path: &Path,
    before: u64,
    id: &str,
    max_doc_bytes: usize,
) -> anyhow::Result<Option<u64>> {
    let mut reader = heddle_corpus::beir::open_corpus(path)?;
    reader.set_max_document_bytes(max_doc_bytes);
    while let Some(doc) = reader.next() {
        if reader.line() >= before {
            return Ok(None);
        }
        if doc?.id == id {
            return Ok(Some(reader.line()));
        }
    }
    anyhow::bail!("the file now ends before line {before}")
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
