//! Reading `qrels/*.tsv`: relevance judgments, one a line.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use super::error::{BeirError, LineProblem};
use super::lines::{Lines, open_buffered, resolve};

/// One relevance judgment: `doc_id` has grade `relevance` for `query_id`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Judgment {
    pub query_id: String,
    pub doc_id: String,
    pub relevance: i32,
}

const HEADER: [&str; 3] = ["query-id", "corpus-id", "score"];

/// Streams the judgments of a BEIR qrels file: `query-id<TAB>corpus-id<TAB>score`.
///
/// The header line `query-id<TAB>corpus-id<TAB>score` is skipped where it is the first non-blank
/// line. Every other non-blank line must have exactly three tab-separated columns and an
/// integer score (negative grades are kept: some collections use -1 or -2 for "judged
/// harmful"). Blank lines, `\r\n` endings and a leading byte order mark are accepted.
/// Errors name the file and the 1-based line, and reading goes on after one.
pub struct QrelsReader<R> {
    lines: Lines<R>,
    seen_first: bool,
}

impl<R: BufRead> QrelsReader<R> {
    /// Reads from `reader`; `path` names the source in error messages.
    pub fn new(reader: R, path: impl Into<PathBuf>) -> Self {
        QrelsReader {
            lines: Lines::new(reader, path.into()),
            seen_first: false,
        }
    }
}

impl<R: BufRead> Iterator for QrelsReader<R> {
    type Item = Result<Judgment, BeirError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (line_no, line) = match self.lines.next_line()? {
                Ok(l) => l,
                Err(e) => return Some(Err(e)),
            };
            let first = !self.seen_first;
            self.seen_first = true;
            let columns: Vec<&str> = line.split('\t').collect();
            if first && columns.iter().map(|c| c.trim()).eq(HEADER) {
                continue;
            }
            let parsed = parse_columns(&columns);
            return Some(parsed.map_err(|p| self.lines.malformed(line_no, p)));
        }
    }
}

fn parse_columns(columns: &[&str]) -> Result<Judgment, LineProblem> {
    let [query_id, doc_id, score] = columns else {
        return Err(LineProblem::ColumnCount {
            expected: 3,
            found: columns.len(),
        });
    };
    let score = score.trim();
    let relevance = score.parse::<i32>().map_err(|_| LineProblem::BadScore {
        found: score.to_string(),
    })?;
    Ok(Judgment {
        query_id: query_id.trim().to_string(),
        doc_id: doc_id.trim().to_string(),
        relevance,
    })
}

/// Reads a whole qrels file: `path` is the `.tsv` itself or a BEIR directory, in which
/// case `qrels/test.tsv` is read. Stops at the first error.
pub fn read_qrels(path: impl AsRef<Path>) -> Result<Vec<Judgment>, BeirError> {
    let path = resolve(path.as_ref(), "qrels/test.tsv");
    let reader = open_buffered(&path)?;
    QrelsReader::new(reader, path).collect()
}

/// Groups judgments by query: query id → (doc id → relevance). Ordered maps, so iterating
/// the result is deterministic. A later judgment of the same pair replaces an earlier one.
pub fn qrels_by_query(judgments: &[Judgment]) -> BTreeMap<String, BTreeMap<String, i32>> {
    let mut out: BTreeMap<String, BTreeMap<String, i32>> = BTreeMap::new();
    for j in judgments {
        out.entry(j.query_id.clone())
            .or_default()
            .insert(j.doc_id.clone(), j.relevance);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(input: &str) -> Vec<Result<Judgment, String>> {
        QrelsReader::new(input.as_bytes(), "d/qrels/test.tsv")
            .map(|r| r.map_err(|e| e.to_string()))
            .collect()
    }

    fn j(q: &str, d: &str, r: i32) -> Result<Judgment, String> {
        Ok(Judgment {
            query_id: q.into(),
            doc_id: d.into(),
            relevance: r,
        })
    }

    #[test]
    fn skips_header_and_handles_bom_crlf_blank_lines() {
        let got =
            read("\u{FEFF}query-id\tcorpus-id\tscore\r\n1\tabc\t2\r\n\r\n1\tdef\t0\n2\tx\t-1");
        assert_eq!(
            got,
            vec![j("1", "abc", 2), j("1", "def", 0), j("2", "x", -1)]
        );
    }

    #[test]
    fn header_is_optional() {
        assert_eq!(read("1\tabc\t1\n"), vec![j("1", "abc", 1)]);
    }

    #[test]
    fn non_integer_score_names_file_and_line() {
        let got = read("query-id\tcorpus-id\tscore\n1\ta\t1\n1\tb\t1.5\n");
        assert_eq!(
            got[1],
            Err("d/qrels/test.tsv:3: score \"1.5\" is not an integer".to_string())
        );
    }

    #[test]
    fn wrong_column_count_names_file_and_line() {
        let got = read("query-id\tcorpus-id\tscore\n\n1\ta\n1 0 b 1\n1\ta\t1\textra\n");
        assert_eq!(
            got,
            vec![
                Err("d/qrels/test.tsv:3: expected 3 tab-separated columns, found 2".to_string()),
                Err("d/qrels/test.tsv:4: expected 3 tab-separated columns, found 1".to_string()),
                Err("d/qrels/test.tsv:5: expected 3 tab-separated columns, found 4".to_string()),
            ]
        );
    }

    #[test]
    fn a_header_after_the_first_line_is_an_error() {
        let got = read("1\ta\t1\nquery-id\tcorpus-id\tscore\n");
        assert_eq!(
            got[1],
            Err("d/qrels/test.tsv:2: score \"score\" is not an integer".to_string())
        );
    }

    #[test]
    fn invalid_utf8_names_file_and_line() {
        let input = b"query-id\tcorpus-id\tscore\n1\t\xFE\t1\n";
        let got: Vec<_> = QrelsReader::new(&input[..], "d/qrels/test.tsv").collect();
        let msg = got[0].as_ref().unwrap_err().to_string();
        assert!(
            msg.starts_with("d/qrels/test.tsv:2: invalid UTF-8"),
            "{msg}"
        );
    }

    #[test]
    fn read_qrels_takes_the_directory_and_groups_by_query() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("qrels")).unwrap();
        std::fs::write(
            dir.path().join("qrels/test.tsv"),
            "query-id\tcorpus-id\tscore\n2\tb\t1\n1\ta\t2\n",
        )
        .unwrap();
        let judgments = read_qrels(dir.path()).unwrap();
        let grouped = qrels_by_query(&judgments);
        assert_eq!(grouped.keys().collect::<Vec<_>>(), ["1", "2"]);
        assert_eq!(grouped["1"]["a"], 2);
    }
}
