//! What `index` and `add` share while they feed a corpus file to a writer: naming a
//! repeated id's lines without keeping every id in memory.

use std::path::Path;

use heddle_corpus::beir::{BeirError, LineProblem};

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

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    const MAX: usize = 1 << 20;

    fn corpus(lines: &[&str]) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        for id in lines {
            writeln!(file, r#"{{"_id": "{id}", "title": "", "text": "words"}}"#).unwrap();
        }
        file
    }

    #[test]
    fn a_repeat_names_its_first_line() {
        let file = corpus(&["a", "b", "a"]);
        let message = duplicate_id(file.path(), 3, "a", MAX, false).to_string();
        assert!(message.contains(":3:"), "{message}");
        assert!(message.contains("first seen at line 1"), "{message}");
    }

    #[test]
    fn a_reread_that_misses_the_id_says_the_file_changed_or_the_index_holds_it() {
        // The id is not on any line before 3 (the file changed since it was read, or
        // the id came from the index).
        let file = corpus(&["b", "c", "a"]);
        let changed = duplicate_id(file.path(), 3, "a", MAX, false).to_string();
        assert!(changed.contains("did the file change"), "{changed}");
        assert!(changed.contains(":3:"), "{changed}");
        let in_index = duplicate_id(file.path(), 3, "a", MAX, true).to_string();
        assert!(in_index.contains("is already in the index"), "{in_index}");
    }

    #[test]
    fn a_reread_that_fails_says_so_and_where() {
        // Shorter now than the line the repeat was read at, as a pipe reads empty the
        // second time.
        let file = corpus(&["b"]);
        let message = duplicate_id(file.path(), 7, "a", MAX, false).to_string();
        assert!(message.contains(":7:"), "{message}");
        assert!(message.contains("earlier line of this file"), "{message}");
        assert!(message.contains("rereading the file"), "{message}");
        assert!(message.contains("ends before line 7"), "{message}");
        let gone = duplicate_id(Path::new("/nonexistent/corpus.jsonl"), 2, "a", MAX, true);
        assert!(
            gone.to_string().contains("in the index, or earlier"),
            "{gone}"
        );
    }
}
