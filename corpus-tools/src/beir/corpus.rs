//! Reading `corpus.jsonl`: one document a line.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use heddle::Document;

use super::error::BeirError;
use super::fields::RawFields;
use super::lines::{Lines, max_line_bytes, open_buffered, resolve};

/// Streams the documents of a BEIR `corpus.jsonl`, one `{"_id", "title", "text"}` object
/// a line.
///
/// - `_id` is required and must be a non-empty string.
/// - A missing `title` or `text` is read as the empty string: BEIR files omit them for
///   some documents (TREC-COVID has title-only documents). A present one must be a string.
/// - Other fields (`metadata`, ...) are ignored.
/// - Blank lines are skipped, `\r\n` line endings and a UTF-8 byte order mark on the first
///   line are accepted.
///
/// A malformed line yields an error naming the file and the 1-based line; iteration then
/// goes on with the next line, so a caller may skip bad lines or stop at the first one.
/// After an io error the iterator ends.
///
/// A line is read no further than [`max_line_bytes`](super::max_line_bytes) of the
/// document size limit (by default [`heddle::DEFAULT_MAX_DOCUMENT_BYTES`]; set it to the
/// writer's with [`CorpusReader::set_max_document_bytes`]), so that one line cannot
/// exhaust memory.
pub struct CorpusReader<R> {
    lines: Lines<R>,
}

impl<R: BufRead> CorpusReader<R> {
    /// Reads from `reader`; `path` names the source in error messages.
    pub fn new(reader: R, path: impl Into<PathBuf>) -> Self {
        CorpusReader {
            lines: Lines::new(reader, path.into()),
        }
    }

    /// Reads documents of at most `bytes` of title and text (the index writer's limit):
    /// a longer line is an error as soon as it outgrows what such a document can take in
    /// JSON, and it is never held whole.
    pub fn set_max_document_bytes(&mut self, bytes: usize) {
        self.lines.set_limit(max_line_bytes(bytes));
    }

    /// The path errors are reported against.
    pub fn path(&self) -> &Path {
        self.lines.path()
    }

    /// The 1-based line of the document last returned, so that a caller that rejects a
    /// document (a duplicate id, say) can name its line too.
    pub fn line(&self) -> u64 {
        self.lines.line()
    }
}

impl<R: BufRead> Iterator for CorpusReader<R> {
    type Item = Result<Document, BeirError>;

    fn next(&mut self) -> Option<Self::Item> {
        let (line_no, line) = match self.lines.next_line()? {
            Ok(l) => l,
            Err(e) => return Some(Err(e)),
        };
        let parsed = RawFields::parse(line).and_then(|mut f| {
            let id = f.take_id()?;
            let title = f.take_title()?.unwrap_or_default();
            let text = f.take_text()?.unwrap_or_default();
            Ok(Document::new(id, title, text))
        });
        Some(parsed.map_err(|p| self.lines.malformed(line_no, p)))
    }
}

/// Opens a corpus: `path` is either `corpus.jsonl` itself or a BEIR directory holding it.
pub fn open_corpus(path: impl AsRef<Path>) -> Result<CorpusReader<BufReader<File>>, BeirError> {
    let path = resolve(path.as_ref(), "corpus.jsonl");
    let reader = open_buffered(&path)?;
    Ok(CorpusReader::new(reader, path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::beir::LineProblem;

    fn read(input: &str) -> Vec<Result<Document, BeirError>> {
        CorpusReader::new(input.as_bytes(), "data/corpus.jsonl").collect()
    }

    /// The message of the only error in `input`, checked to name file and line.
    fn only_error(input: &str, line: u64) -> String {
        let errors: Vec<BeirError> = read(input).into_iter().filter_map(Result::err).collect();
        assert_eq!(errors.len(), 1, "{errors:?}");
        let msg = errors[0].to_string();
        assert!(
            msg.starts_with(&format!("data/corpus.jsonl:{line}: ")),
            "{msg}"
        );
        assert_eq!(errors[0].line(), Some(line));
        msg
    }

    #[test]
    fn reads_documents_and_ignores_metadata() {
        let docs: Vec<Document> = read(
            "{\"_id\":\"a\",\"title\":\"T\",\"text\":\"x y\",\"metadata\":{\"url\":\"u\"}}\n\
             {\"_id\":\"b\",\"title\":\"\",\"text\":\"\"}\n",
        )
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
        assert_eq!(
            docs,
            vec![Document::new("a", "T", "x y"), Document::new("b", "", "")]
        );
    }

    #[test]
    fn missing_title_or_text_reads_as_empty() {
        let docs: Vec<Document> =
            read("{\"_id\":\"a\",\"text\":\"x\"}\n{\"_id\":\"b\",\"title\":\"t\"}")
                .into_iter()
                .collect::<Result<_, _>>()
                .unwrap();
        assert_eq!(
            docs,
            vec![Document::new("a", "", "x"), Document::new("b", "t", "")]
        );
    }

    #[test]
    fn bom_crlf_and_blank_lines_are_accepted() {
        let input = "\u{FEFF}{\"_id\":\"a\",\"title\":\"t\",\"text\":\"x\"}\r\n\r\n\n{\"_id\":\"b\",\"text\":\"y\"}\r\n";
        let docs: Vec<Document> = read(input).into_iter().collect::<Result<_, _>>().unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0], Document::new("a", "t", "x"));
        assert_eq!(docs[1], Document::new("b", "", "y"));
        // Line numbers still count the blank lines.
        let bad = "\u{FEFF}{\"_id\":\"a\"}\r\n\r\n{\"_id\":1}\r\n";
        only_error(bad, 3);
    }

    #[test]
    fn invalid_json_names_file_and_line() {
        let msg = only_error("{\"_id\":\"a\"}\n{\"_id\":\"b\",\n{\"_id\":\"c\"}\n", 2);
        assert!(msg.contains("invalid JSON"), "{msg}");
    }

    #[test]
    fn missing_id_names_file_and_line() {
        let msg = only_error("{\"_id\":\"a\"}\n\n{\"title\":\"t\",\"text\":\"x\"}\n", 3);
        assert!(msg.ends_with("missing field \"_id\""), "{msg}");
    }

    #[test]
    fn empty_id_is_an_error() {
        let msg = only_error("{\"_id\":\"\",\"text\":\"x\"}", 1);
        assert!(msg.contains("\"_id\" is empty"), "{msg}");
    }

    #[test]
    fn non_string_fields_name_the_field() {
        let msg = only_error("{\"_id\":17,\"text\":\"x\"}", 1);
        assert!(
            msg.contains("field \"_id\" is not a string (found a number)"),
            "{msg}"
        );
        let lines = "{\"_id\":\"a\"}\n".repeat(16) + "{\"_id\":\"q\",\"title\":[\"x\"]}\n";
        let msg = only_error(&lines, 17);
        assert_eq!(
            msg,
            "data/corpus.jsonl:17: field \"title\" is not a string (found an array)"
        );
        let msg = only_error("{\"_id\":\"a\",\"text\":null}", 1);
        assert!(
            msg.contains("field \"text\" is not a string (found null)"),
            "{msg}"
        );
    }

    #[test]
    fn invalid_utf8_names_file_and_line() {
        let mut input = b"{\"_id\":\"a\"}\n{\"_id\":\"b\",\"text\":\"".to_vec();
        input.extend_from_slice(b"\xC3\x28\"}\n");
        let results: Vec<_> = CorpusReader::new(input.as_slice(), "data/corpus.jsonl").collect();
        let err = results[1].as_ref().unwrap_err();
        assert!(matches!(
            err.problem(),
            Some(LineProblem::InvalidUtf8 { .. })
        ));
        assert!(
            err.to_string()
                .starts_with("data/corpus.jsonl:2: invalid UTF-8")
        );
    }

    #[test]
    fn a_repeated_id_is_not_the_readers_business() {
        // Refusing a repeat is the writer's (it holds every id as a fingerprint); the
        // reader keeps nothing per document, so its memory does not grow with the file.
        let input = "{\"_id\":\"a\"}\n{\"_id\":\"b\"}\n\n{\"_id\":\"a\"}\n";
        let docs: Vec<_> = read(input).into_iter().map(Result::unwrap).collect();
        assert_eq!(
            docs.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(),
            ["a", "b", "a"]
        );
    }

    #[test]
    fn the_document_size_limit_bounds_the_line() {
        let text = "é".repeat(100);
        let line = format!("{{\"_id\":\"a\",\"text\":\"{text}\"}}\n");
        let mut reader = CorpusReader::new(line.as_bytes(), "c.jsonl");
        reader.set_max_document_bytes(0);
        assert!(
            reader.next().unwrap().is_ok(),
            "64 KiB of slack for the id and keys"
        );
        let long = format!("{{\"_id\":\"a\",\"text\":\"{}\"}}\n", "x".repeat(80_000));
        let mut reader = CorpusReader::new(long.as_bytes(), "c.jsonl");
        reader.set_max_document_bytes(1000);
        let Some(Err(err)) = reader.next() else {
            panic!("an 80,000-byte line read with a 71,536-byte limit")
        };
        assert!(matches!(
            err.problem(),
            Some(LineProblem::LineTooLong { limit: 71_536 })
        ));
        assert!(reader.next().is_none());
    }

    #[test]
    fn reading_goes_on_after_a_bad_line() {
        let results = read("{\"_id\":1}\n{\"_id\":\"b\"}\n");
        assert!(results[0].is_err());
        assert_eq!(results[1].as_ref().unwrap().id, "b");
    }

    #[test]
    fn open_corpus_accepts_the_directory_and_names_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("corpus.jsonl"), "{\"_id\":\"a\"}\n").unwrap();
        let docs: Vec<_> = open_corpus(dir.path()).unwrap().collect();
        assert_eq!(docs.len(), 1);
        let err = open_corpus(dir.path().join("nope.jsonl")).err().unwrap();
        assert!(err.to_string().contains("nope.jsonl"), "{err}");
    }
}
