//! Reading `queries.jsonl`: one query a line.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use super::error::{BeirError, LineProblem};
use super::fields::RawFields;
use super::lines::{Lines, open_buffered, resolve};

/// A query as BEIR stores it: an id and the query text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Query {
    pub id: String,
    pub text: String,
}

impl Query {
    pub fn new(id: impl Into<String>, text: impl Into<String>) -> Self {
        Query {
            id: id.into(),
            text: text.into(),
        }
    }
}

/// Streams the queries of a BEIR `queries.jsonl`, one `{"_id", "text"}` object a line.
///
/// Both fields are required strings (a query without text has nothing to search for);
/// the text may be empty. Other fields (`metadata`, `title`) are ignored. Blank lines,
/// `\r\n` endings and a leading byte order mark are handled as by
/// [`CorpusReader`](super::CorpusReader), and so are errors: a malformed line yields an
/// error naming the file and the 1-based line, and reading goes on.
pub struct QueryReader<R> {
    lines: Lines<R>,
}

impl<R: BufRead> QueryReader<R> {
    /// Reads from `reader`; `path` names the source in error messages.
    pub fn new(reader: R, path: impl Into<PathBuf>) -> Self {
        QueryReader {
            lines: Lines::new(reader, path.into()),
        }
    }
}

impl<R: BufRead> Iterator for QueryReader<R> {
    type Item = Result<Query, BeirError>;

    fn next(&mut self) -> Option<Self::Item> {
        let (line_no, line) = match self.lines.next_line()? {
            Ok(l) => l,
            Err(e) => return Some(Err(e)),
        };
        let parsed = RawFields::parse(line).and_then(|mut f| {
            let id = f.take_id()?;
            let text = f
                .take_text()?
                .ok_or(LineProblem::MissingField { field: "text" })?;
            Ok(Query { id, text })
        });
        Some(parsed.map_err(|p| self.lines.malformed(line_no, p)))
    }
}

/// Opens queries: `path` is either `queries.jsonl` itself or a BEIR directory holding it.
pub fn open_queries(path: impl AsRef<Path>) -> Result<QueryReader<BufReader<File>>, BeirError> {
    let path = resolve(path.as_ref(), "queries.jsonl");
    let reader = open_buffered(&path)?;
    Ok(QueryReader::new(reader, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(input: &str) -> Vec<Result<Query, String>> {
        QueryReader::new(input.as_bytes(), "q/queries.jsonl")
            .map(|r| r.map_err(|e| e.to_string()))
            .collect()
    }

    #[test]
    fn reads_queries_ignoring_metadata_with_bom_crlf_and_blank_lines() {
        let got = read(
            "\u{FEFF}{\"_id\":\"1\",\"text\":\"what is x\",\"metadata\":{\"query\":\"x\"}}\r\n\r\n{\"_id\":\"2\",\"text\":\"\"}",
        );
        assert_eq!(
            got,
            vec![Ok(Query::new("1", "what is x")), Ok(Query::new("2", ""))]
        );
    }

    #[test]
    fn malformed_lines_name_file_and_line() {
        let got = read(
            "{\"_id\":\"1\",\"text\":\"a\"}\n{\"_id\":\"2\"}\n{\"text\":\"c\"}\n{\"_id\":\"4\",\"text\":5}\n{oops\n",
        );
        assert_eq!(got[0], Ok(Query::new("1", "a")));
        assert_eq!(
            got[1],
            Err("q/queries.jsonl:2: missing field \"text\"".to_string())
        );
        assert_eq!(
            got[2],
            Err("q/queries.jsonl:3: missing field \"_id\"".to_string())
        );
        assert_eq!(
            got[3],
            Err("q/queries.jsonl:4: field \"text\" is not a string (found a number)".to_string())
        );
        let last = got[4].clone().unwrap_err();
        assert!(
            last.starts_with("q/queries.jsonl:5: invalid JSON"),
            "{last}"
        );
    }

    #[test]
    fn invalid_utf8_names_file_and_line() {
        let input = b"\n{\"_id\":\"1\",\"text\":\"\xFF\"}\n";
        let got: Vec<_> = QueryReader::new(&input[..], "q/queries.jsonl").collect();
        let msg = got[0].as_ref().unwrap_err().to_string();
        assert!(msg.starts_with("q/queries.jsonl:2: invalid UTF-8"), "{msg}");
    }
}
