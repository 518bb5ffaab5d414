//! Query and judgment files as BEIR and TREC write them, told apart by their content.
//!
//! | file      | BEIR                                   | TREC / MS MARCO            |
//! |-----------|----------------------------------------|----------------------------|
//! | queries   | `queries.jsonl`: `{"_id", "text"}`     | `qid<TAB>text` a line      |
//! | judgments | `qid<TAB>docid<TAB>grade`, header line | `qid iter docid rel`       |
//!
//! The first non-blank line decides: a query line starting with `{` is JSON, one with a
//! tab is a topic; a judgment line of three tab-separated columns is BEIR's, one of four
//! whitespace-separated columns is TREC's. Every later line must be in the same format,
//! and a line that is not is an error naming the file and the line. A directory is read
//! as a BEIR directory (`queries.jsonl`, `qrels/test.tsv`).

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use heddle_corpus::beir::{self, Query};

use crate::quality::Qrels;

const BOM: char = '\u{FEFF}';

/// The longest line of a TREC topics or qrels file: far beyond any real query or
/// judgment, and a bound on what a wrong file (one without newlines) makes us hold.
const MAX_LINE_BYTES: u64 = 1 << 20;

/// Reads every query of a BEIR `queries.jsonl` or a TREC topics file (`qid<TAB>text`),
/// in file order. Errors name the file and line.
pub fn read_topics(path: &Path) -> anyhow::Result<Vec<Query>> {
    let path = resolve(path, "queries.jsonl");
    require_rereadable(&path, "its first line tells its format")?;
    let Some((line_no, first)) = first_line(&path)? else {
        bail!(
            "{}: holds no queries (the file is empty): nothing to search",
            path.display()
        );
    };
    if first.trim_start().starts_with('{') {
        return Ok(beir::open_queries(&path)?.collect::<Result<Vec<_>, _>>()?);
    }
    if !first.contains('\t') {
        bail!(
            "{}:{line_no}: neither a BEIR query ({{\"_id\": …, \"text\": …}}) nor a TREC topic (qid<TAB>text)",
            path.display()
        );
    }
    let mut queries = Vec::new();
    for_each_line(&path, |_, line| {
        let Some((id, text)) = line.split_once('\t') else {
            bail!("expected qid<TAB>text (a TREC topics file), found no tab");
        };
        let id = id.trim();
        if id.is_empty() {
            bail!("the query id before the tab is empty");
        }
        queries.push(Query::new(id, text.trim()));
        Ok(Flow::Continue)
    })?;
    Ok(queries)
}

/// Refuses an input that cannot be read twice: a pipe, FIFO, socket or device
/// (`/dev/stdin` of a pipeline among them). Its second reading would find nothing, and
/// a file read as empty would be a silent wrong answer (an empty run, a score of 0), so
/// such an input is an error saying what to do instead. `why` says what the first
/// reading is for.
pub fn require_rereadable(path: &Path, why: &str) -> anyhow::Result<()> {
    // Following symlinks: /dev/stdin is one, to whatever stdin is.
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(()); // the open that follows reports a missing file
    };
    let kind = meta.file_type();
    use std::os::unix::fs::FileTypeExt;
    let what = if kind.is_fifo() {
        "a pipe"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        return Ok(());
    };
    bail!(
        "{}: is {what}, which can be read only once, and this input is read twice ({why}); save it to a file first and give that file",
        path.display()
    )
}

/// [`read_topics`], refusing a query id given twice (which text would count?).
pub fn read_unique_topics(path: &Path) -> anyhow::Result<Vec<Query>> {
    let queries = read_topics(path)?;
    let mut seen = HashSet::new();
    for q in &queries {
        if !seen.insert(q.id.as_str()) {
            bail!("{}: query id {:?} appears twice", path.display(), q.id);
        }
    }
    Ok(queries)
}

/// Reads BEIR qrels (`query-id<TAB>corpus-id<TAB>score`, header optional) or TREC qrels
/// (`qid iter docid rel`), grouped by query. A later judgment of the same pair replaces
/// an earlier one. Errors name the file and line.
pub fn read_qrels(path: &Path) -> anyhow::Result<Qrels> {
    let path = resolve(path, "qrels/test.tsv");
    require_rereadable(&path, "its first line tells its format")?;
    let qrels = read_qrels_of_any_format(&path)?;
    // Zero queries evaluated is not a score of 0: it is no evaluation at all.
    if qrels.is_empty() {
        bail!(
            "{}: holds no judgments (empty, or a header line only): nothing to evaluate",
            path.display()
        );
    }
    Ok(qrels)
}

fn read_qrels_of_any_format(path: &Path) -> anyhow::Result<Qrels> {
    let path = path.to_path_buf();
    let Some((first_no, first)) = first_line(&path)? else {
        return Ok(Qrels::new());
    };
    if first.split('\t').count() == 3 {
        let judgments = beir::read_qrels(&path)?;
        return Ok(beir::qrels_by_query(&judgments));
    }
    let columns = first.split_whitespace().count();
    if columns != 4 {
        bail!(
            "{}:{first_no}: neither BEIR qrels (query-id<TAB>corpus-id<TAB>score: 3 tab-separated columns) nor TREC qrels (qid iter docid rel: 4 columns); found {columns} columns",
            path.display()
        );
    }
    let mut qrels = Qrels::new();
    for_each_line(&path, |_, line| {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let [qid, _iter, doc, rel] = cols[..] else {
            bail!(
                "expected 4 columns (TREC qrels: qid iter docid rel, as line {first_no} is), found {}",
                cols.len()
            );
        };
        let rel: i32 = rel
            .parse()
            .ok()
            .with_context(|| format!("relevance {rel:?} is not an integer"))?;
        qrels
            .entry(qid.to_string())
            .or_default()
            .insert(doc.to_string(), rel);
        Ok(Flow::Continue)
    })?;
    Ok(qrels)
}

fn resolve(path: &Path, default_name: &str) -> PathBuf {
    if path.is_dir() {
        path.join(default_name)
    } else {
        path.to_path_buf()
    }
}

/// The first non-blank line and its 1-based number (BOM and `\r` removed).
fn first_line(path: &Path) -> anyhow::Result<Option<(usize, String)>> {
    let mut found = None;
    for_each_line(path, |line_no, line| {
        found = Some((line_no, line.to_string()));
        Ok(Flow::Stop)
    })?;
    Ok(found)
}

enum Flow {
    Continue,
    Stop,
}

/// Calls `f` with each non-blank line (trimmed of a BOM and line ending) and its 1-based
/// number, until it says stop; an error of `f` is returned as `file:line: error`.
fn for_each_line(
    path: &Path,
    mut f: impl FnMut(usize, &str) -> anyhow::Result<Flow>,
) -> anyhow::Result<()> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut buf = Vec::new();
    let mut line_no = 0;
    loop {
        buf.clear();
        line_no += 1;
        let n = (&mut reader)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut buf)
            .with_context(|| format!("{}:{line_no}: reading", path.display()))?;
        if n == 0 {
            return Ok(());
        }
        if n as u64 > MAX_LINE_BYTES && buf.last() != Some(&b'\n') {
            bail!(
                "{}:{line_no}: line longer than {MAX_LINE_BYTES} bytes",
                path.display()
            );
        }
        let Ok(line) = std::str::from_utf8(&buf) else {
            bail!("{}:{line_no}: invalid UTF-8", path.display());
        };
        let line = if line_no == 1 {
            line.trim_start_matches(BOM)
        } else {
            line
        };
        let line = line.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            continue;
        }
        match f(line_no, line) {
            Ok(Flow::Continue) => {}
            Ok(Flow::Stop) => return Ok(()),
            Err(e) => bail!("{}:{line_no}: {e:#}", path.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn err(r: anyhow::Result<impl std::fmt::Debug>) -> String {
        format!("{:#}", r.unwrap_err())
    }

    #[test]
    fn trec_and_beir_qrels_read_to_the_same_judgments() {
        let dir = tempfile::tempdir().unwrap();
        let beir = file(
            &dir,
            "q.tsv",
            "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\nq2\td3\t1\n",
        );
        let trec = file(&dir, "q.trec", "q1 0 d1 2\nq1 0 d2 0\n\nq2\t0\td3\t1\r\n");
        let a = read_qrels(&beir).unwrap();
        assert_eq!(a, read_qrels(&trec).unwrap());
        assert_eq!(a["q1"]["d1"], 2);
        assert_eq!(a["q2"]["d3"], 1);
    }

    #[test]
    fn qrels_errors_name_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = file(&dir, "a", "\nq1 0 d1 1\nq1 0 d2\n");
        assert_eq!(
            err(read_qrels(&p)),
            format!(
                "{}:3: expected 4 columns (TREC qrels: qid iter docid rel, as line 2 is), found 3",
                p.display()
            )
        );
        let p = file(&dir, "b", "q1 0 d1 x\n");
        assert_eq!(
            err(read_qrels(&p)),
            format!("{}:1: relevance \"x\" is not an integer", p.display())
        );
        let p = file(&dir, "c", "q1 d1\n");
        assert!(
            err(read_qrels(&p)).starts_with(&format!(
                "{}:1: neither BEIR qrels (query-id<TAB>corpus-id<TAB>score",
                p.display()
            )),
            "{}",
            err(read_qrels(&p))
        );
        // Detected as BEIR: the BEIR reader's own file:line error.
        let p = file(&dir, "d", "q1\td1\t1\nq1 0 d2 1\n");
        assert_eq!(
            err(read_qrels(&p)),
            format!(
                "{}:2: expected 3 tab-separated columns, found 1",
                p.display()
            )
        );
        let p = dir.path().join("e");
        std::fs::write(&p, b"q1 0 d1 1\nq1 0 \xFF 1\n").unwrap();
        assert_eq!(
            err(read_qrels(&p)),
            format!("{}:2: invalid UTF-8", p.display())
        );
    }

    #[test]
    fn trec_topics_and_beir_queries_read_to_the_same_queries() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = file(
            &dir,
            "queries.jsonl",
            "{\"_id\":\"1\",\"text\":\"what is x\"}\n{\"_id\":\"2\",\"text\":\"y\\tz\"}\n",
        );
        let tsv = file(&dir, "topics.tsv", "\u{FEFF}1\twhat is x\r\n\n2\ty\tz\n");
        let a = read_topics(&jsonl).unwrap();
        assert_eq!(a, read_topics(&tsv).unwrap());
        assert_eq!(a[1], Query::new("2", "y\tz"));
        // A BEIR directory reads its queries.jsonl.
        assert_eq!(read_topics(dir.path()).unwrap(), a);
    }

    #[test]
    fn topic_errors_name_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = file(&dir, "a", "1\tx\n2 y\n");
        assert_eq!(
            err(read_topics(&p)),
            format!(
                "{}:2: expected qid<TAB>text (a TREC topics file), found no tab",
                p.display()
            )
        );
        let p = file(&dir, "b", "\n\njust words\n");
        assert!(
            err(read_topics(&p)).starts_with(&format!("{}:3: neither a BEIR query", p.display()))
        );
        let p = file(&dir, "c", "1\tx\n \ty\n");
        assert_eq!(
            err(read_topics(&p)),
            format!("{}:2: the query id before the tab is empty", p.display())
        );
        let p = file(&dir, "d", "{\"_id\":\"1\",\"text\":\"a\"}\n2\tb\n");
        assert!(
            err(read_topics(&p)).starts_with(&format!("{}:2: invalid JSON", p.display())),
            "{}",
            err(read_topics(&p))
        );
        let long = format!("1\t{}\n", "x".repeat(MAX_LINE_BYTES as usize + 1));
        let p = file(&dir, "long", &format!("0\ta\n{long}"));
        assert_eq!(
            err(read_topics(&p)),
            format!("{}:2: line longer than {MAX_LINE_BYTES} bytes", p.display())
        );
        let p = file(&dir, "e", "1\tx\n1\ty\n");
        assert!(err(read_unique_topics(&p)).contains("query id \"1\" appears twice"));
    }
}
