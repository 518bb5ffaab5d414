//! TREC run files (`qid Q0 docid rank score tag`) and the order trec_eval reads them in.
//!
//! trec_eval ignores the rank column: it sorts each query's lines by score, descending,
//! and breaks ties by document id, descending, compared byte by byte. A [`Run`] keeps
//! every query's entries in exactly that order, so a figure computed from a `Run` is the
//! figure trec_eval computes from the file the `Run` writes.

use std::collections::BTreeMap;
use std::io::{self, BufRead, Write};
use std::path::Path;

use anyhow::{Context, bail};

/// One retrieved document of one query.
#[derive(Debug, Clone, PartialEq)]
pub struct RunEntry {
    pub doc_id: String,
    pub score: f64,
}

impl RunEntry {
    pub fn new(doc_id: impl Into<String>, score: f64) -> Self {
        RunEntry {
            doc_id: doc_id.into(),
            score,
        }
    }
}

/// Why `id` cannot be a column of a TREC run (or qrels) line, if it cannot: the format
/// splits columns at whitespace and has no escape, so an id holding a space, tab or
/// newline would shift every column after it, and a control character (NUL among them)
/// is no id another tool reads back. An index may hold such ids (every command keeps an
/// id's exact bytes), but a run is never written with one: the whole run is refused,
/// naming the id, before its first line.
pub fn run_id_problem(id: &str) -> Option<String> {
    let bad = id.chars().find(|c| c.is_whitespace() || c.is_control())?;
    Some(format!(
        "id {id:?} holds {bad:?}: a TREC run's columns are split at whitespace and cannot carry whitespace or control characters"
    ))
}

/// trec_eval's order: score descending, then document id descending.
pub fn trec_order(a: &RunEntry, b: &RunEntry) -> std::cmp::Ordering {
    b.score
        .total_cmp(&a.score)
        .then_with(|| b.doc_id.as_bytes().cmp(a.doc_id.as_bytes()))
}

/// Retrieved documents by query id, each query's entries in trec_eval's order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Run {
    queries: BTreeMap<String, Vec<RunEntry>>,
}

impl Run {
    pub fn new() -> Self {
        Run::default()
    }

    /// Sets the entries of `query_id` (any order; they are sorted as trec_eval sorts).
    /// A document retrieved twice for one query, or a score that is not a finite
    /// number, is an error: trec_eval refuses the first, and cannot order the second.
    pub fn insert(&mut self, query_id: &str, mut entries: Vec<RunEntry>) -> anyhow::Result<()> {
        if let Some(e) = entries.iter().find(|e| !e.score.is_finite()) {
            bail!(
                "query {query_id}: document {} has score {}",
                e.doc_id,
                e.score
            );
        }
        entries.sort_by(trec_order);
        let mut ids: Vec<&str> = entries.iter().map(|e| e.doc_id.as_str()).collect();
        ids.sort_unstable();
        if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
            bail!("query {query_id}: document {} retrieved twice", w[0]);
        }
        self.queries.insert(query_id.to_string(), entries);
        Ok(())
    }

    /// The entries of `query_id` in trec_eval's order (empty if it retrieved nothing).
    pub fn get(&self, query_id: &str) -> &[RunEntry] {
        self.queries.get(query_id).map_or(&[], Vec::as_slice)
    }

    /// Query ids with at least one entry, ascending.
    pub fn query_ids(&self) -> impl Iterator<Item = &str> {
        self.queries.keys().map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.queries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queries.is_empty()
    }

    /// Writes the run in TREC format, ranks from 1 in trec_eval's order. Scores are
    /// written in the shortest form that reads back as the same `f64`, so the file
    /// orders documents exactly as the `Run` does.
    pub fn write_trec(&self, out: &mut impl Write, tag: &str) -> io::Result<()> {
        if tag.is_empty() || tag.chars().any(char::is_whitespace) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("run tag {tag:?} must be one non-empty word"),
            ));
        }
        // Checked whole before a line is written: no half-written run.
        for (qid, entries) in &self.queries {
            for id in std::iter::once(qid.as_str()).chain(entries.iter().map(|e| e.doc_id.as_str()))
            {
                if let Some(problem) = run_id_problem(id) {
                    return Err(io::Error::new(io::ErrorKind::InvalidInput, problem));
                }
            }
        }
        for (qid, entries) in &self.queries {
            for (i, e) in entries.iter().enumerate() {
                writeln!(out, "{qid} Q0 {} {} {} {tag}", e.doc_id, i + 1, e.score)?;
            }
        }
        Ok(())
    }

    /// Writes the run to `path` (see [`Run::write_trec`]).
    pub fn write_trec_file(&self, path: &Path, tag: &str) -> anyhow::Result<()> {
        let file =
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
        let mut out = io::BufWriter::new(file);
        self.write_trec(&mut out, tag)
            .and_then(|()| out.flush())
            .with_context(|| format!("writing {}", path.display()))
    }

    /// Reads a TREC run: six or more whitespace-separated columns a line (`qid iter
    /// docid rank score tag`; further columns are ignored, as trec_eval does). Blank
    /// lines and lines starting with `#` are skipped. Errors name the file and line.
    pub fn read_trec(reader: impl BufRead, name: &str) -> anyhow::Result<Run> {
        let mut by_query: BTreeMap<String, Vec<RunEntry>> = BTreeMap::new();
        for (i, line) in reader.lines().enumerate() {
            let line_no = i + 1;
            let line = line.with_context(|| format!("{name}:{line_no}: reading"))?;
            // A BOM would otherwise be part of the first query id (matching no judgment).
            let line = if line_no == 1 {
                line.trim_start_matches('\u{FEFF}')
            } else {
                &line
            };
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let cols: Vec<&str> = trimmed.split_whitespace().collect();
            if cols.len() < 6 {
                bail!(
                    "{name}:{line_no}: expected 6 columns (qid Q0 docid rank score tag), found {}",
                    cols.len()
                );
            }
            let score: f64 = cols[4]
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite())
                .with_context(|| {
                    format!(
                        "{name}:{line_no}: score {:?} is not a finite number",
                        cols[4]
                    )
                })?;
            by_query
                .entry(cols[0].to_string())
                .or_default()
                .push(RunEntry::new(cols[2], score));
        }
        let mut run = Run::new();
        for (qid, entries) in by_query {
            run.insert(&qid, entries)
                .with_context(|| format!("{name}: invalid run"))?;
        }
        Ok(run)
    }

    /// Reads a TREC run file (see [`Run::read_trec`]).
    pub fn read_trec_file(path: &Path) -> anyhow::Result<Run> {
        let file =
            std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
        Run::read_trec(io::BufReader::new(file), &path.display().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_kept_in_trec_eval_order_ties_by_descending_id() {
        let mut run = Run::new();
        run.insert(
            "q",
            vec![
                RunEntry::new("a", 1.0),
                RunEntry::new("c", 2.0),
                RunEntry::new("b", 1.0),
                RunEntry::new("B", 1.0),
            ],
        )
        .unwrap();
        let ids: Vec<&str> = run.get("q").iter().map(|e| e.doc_id.as_str()).collect();
        assert_eq!(ids, ["c", "b", "a", "B"]);
        assert!(run.get("other").is_empty());
    }

    #[test]
    fn duplicates_and_non_finite_scores_are_refused() {
        let mut run = Run::new();
        let dup = vec![RunEntry::new("a", 1.0), RunEntry::new("a", 0.5)];
        assert!(
            run.insert("q", dup)
                .unwrap_err()
                .to_string()
                .contains("twice")
        );
        assert!(run.insert("q", vec![RunEntry::new("a", f64::NAN)]).is_err());
    }

    #[test]
    fn written_scores_read_back_bit_for_bit() {
        let mut run = Run::new();
        let scores = [1.0 / 3.0, 0.1 + 0.2, 12.345678901234567, 1e-9, 0.0, -2.5];
        let entries = scores
            .iter()
            .enumerate()
            .map(|(i, &s)| RunEntry::new(format!("d{i}"), s))
            .collect();
        run.insert("7", entries).unwrap();
        let mut bytes = Vec::new();
        run.write_trec(&mut bytes, "heddle").unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            text.starts_with("7 Q0 d2 1 12.345678901234567 heddle\n"),
            "{text}"
        );
        let back = Run::read_trec(text.as_bytes(), "run").unwrap();
        assert_eq!(back, run);
    }

    #[test]
    fn malformed_lines_name_the_line() {
        let err = Run::read_trec("q Q0 d 1 1.0 t\n\nq Q0 e 2 x t\n".as_bytes(), "r.run")
            .unwrap_err()
            .to_string();
        assert_eq!(err, "r.run:3: score \"x\" is not a finite number");
        let err = Run::read_trec("# comment\nq Q0 d 1 1.0\n".as_bytes(), "r.run")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("r.run:2: expected 6 columns"), "{err}");
        let err = format!(
            "{:#}",
            Run::read_trec("q Q0 d 1 1 t\nq Q0 d 2 0.5 t\n".as_bytes(), "r.run").unwrap_err()
        );
        assert!(err.contains("retrieved twice"), "{err}");
    }

    #[test]
    fn a_tag_with_spaces_is_refused() {
        let run = Run::new();
        assert!(run.write_trec(&mut Vec::new(), "two words").is_err());
    }
}
