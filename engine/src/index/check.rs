//! A full consistency check of an index directory: every file's footer and checksum,
//! then every structure inside (term dictionaries, every postings list, lengths, stored
//! records, delete sets, vectors and their graphs), and every count the manifest records against the
//! files it describes. Reports every problem found, not just the first.

use std::path::Path;

use super::MANIFEST_FILE;
use super::Manifest;
use crate::directory::{LOCK_FILE, MappedFile, kind_of};
use crate::error::Error;
use crate::segment::deletes::DeleteSet;
use crate::segment::names;
use crate::segment::{SegmentReader, footer};

/// What [`check_index`] found.
#[derive(Debug, Default)]
pub struct CheckReport {
    pub generation: u64,
    pub segments: usize,
    pub documents: u64,
    pub files_checked: usize,
    pub postings_lists_checked: u64,
    /// Every problem, each naming its file.
    pub problems: Vec<Error>,
}

impl CheckReport {
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks the index in `dir` without changing it. Needs no lock: files are immutable.
pub fn check_index(dir: impl AsRef<Path>) -> CheckReport {
    let dir = dir.as_ref();
    let mut report = CheckReport::default();
    let manifest = match Manifest::load(dir) {
        Ok(m) => m,
        Err(e) => {
            report.problems.push(e);
            planted_entries(dir, &[], &mut report);
            return report;
        }
    };
    let named: Vec<String> = manifest.segments.iter().flat_map(|s| s.files()).collect();
    planted_entries(dir, &named, &mut report);
    report.files_checked += 1;
    report.generation = manifest.generation;
    report.segments = manifest.segments.len();
    for meta in &manifest.segments {
        report.documents += meta.live_docs() as u64;
        let mut files_ok = true;
        for component in meta.components() {
            let path = dir.join(component.file_name(&meta.name));
            report.files_checked += 1;
            let verified =
                MappedFile::open(&path).and_then(|f| footer::verify(&path, f.bytes()).map(|_| ()));
            if let Err(e) = verified {
                report.problems.push(e);
                files_ok = false;
            }
        }
        if let Some(d) = &meta.deletes {
            report.files_checked += 1;
            if let Err(e) = DeleteSet::open_counted(dir, d, meta.doc_count) {
                report.problems.push(e);
            }
        }
        if !files_ok {
            continue;
        }
        // The files, not the counts: a manifest's wrong term count is one more problem,
        // not a reason to skip checking the segment's structures.
        let reader = match SegmentReader::open_files(dir, meta) {
            Ok(r) => r,
            Err(e) => {
                report.problems.push(e);
                continue;
            }
        };
        report.problems.extend(reader.count_problems());
        check_structures(&reader, &mut report);
    }
    report
}

/// Every entry under a name heddle writes (the manifest, its temporary copy, the lock
/// file, segment and delete files) that is not a regular file: a symlink or FIFO planted
/// there is damage even where no reader looks, since a writer would meet it. Entries
/// the manifest names (`named`) are left to the checks that open them, and one already
/// reported is not reported twice.
fn planted_entries(dir: &Path, named: &[String], report: &mut CheckReport) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return; // the manifest's error already says why
    };
    for entry in entries.flatten() {
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let ours = name == MANIFEST_FILE || name == LOCK_FILE || names::classify(&name).is_some();
        // `DirEntry::file_type` does not follow symlinks.
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        if !ours || file_type.is_file() || named.contains(&name) {
            continue;
        }
        let path = entry.path();
        let reported = report
            .problems
            .iter()
            .any(|p| matches!(p, Error::NotRegular { path: already, .. } if *already == path));
        if !reported {
            report.problems.push(Error::NotRegular {
                path,
                found: kind_of(file_type),
            });
        }
    }
}

fn check_structures(reader: &SegmentReader, report: &mut CheckReport) {
    let meta = reader.meta();
    // The lengths' sums against the manifest's totals: in `count_problems`, as at open.
    for &field in &meta.fields {
        let Some(mut terms) = reader.terms(field) else {
            continue;
        };
        loop {
            let (term, info) = match terms.next_term() {
                Ok(Some((term, info))) => (term.to_vec(), info),
                Ok(None) => break,
                Err(e) => {
                    report.problems.push(e);
                    break;
                }
            };
            report.postings_lists_checked += 1;
            let problems = reader.verify_postings(field, &term, &info, |_, _| {});
            report.problems.extend(problems);
        }
    }
    if let Err(e) = reader.scan_stored(|_, _, _| Ok(())) {
        report.problems.push(e);
    }
    report.problems.extend(vector_problems(reader));
}

/// What a merge's other reads do not see in a segment's vectors: values that are not
/// finite, and a graph file whose structure is damaged. Both `check_index` and
/// every merge (of each source, before anything is written) run it, so a merge never
/// carries into a new segment damage that `check` would report of the old one.
pub(crate) fn vector_problems(reader: &SegmentReader) -> Vec<Error> {
    let mut problems = Vec::new();
    // Opening checked the header against the manifest and the length (docs × dim × 4
    // after it), and the footer check above every chunk; left: every value finite.
    if let Some(vectors) = reader.vectors() {
        let non_finite = vectors.rows().map(|rows| rows.first_non_finite());
        match non_finite {
            Ok(None) => {}
            Ok(Some((doc, at, value))) => problems.push(Error::Corrupt {
                path: vectors.path().to_path_buf(),
                what: "vectors",
                detail: format!("document {doc}: component {at} is {value}, not a finite number"),
            }),
            Err(e) => problems.push(e),
        }
    }
    // The graph file's header was checked at open; left: every chunk and its structure
    // (counts within bounds, every neighbour on its layer, layers nested, the entry on
    // the top one).
    if let Some(graph) = reader.graph()
        && let Err(e) = graph.layers()
    {
        problems.push(e);
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AnalyzerConfig, Document, Index, IndexSettings};

    /// An index of one segment whose only term, "alpha", has two full blocks; doc 5 has
    /// tf 4 and length 4, every other doc tf 1 and length 1.
    fn one_term_index() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let settings = IndexSettings {
            analyzer: AnalyzerConfig::plain(),
            ..Default::default()
        };
        let index = Index::create(dir.path(), settings).unwrap();
        let mut writer = index.writer().unwrap();
        for i in 0..256 {
            let text = if i == 5 {
                "alpha alpha alpha alpha"
            } else {
                "alpha"
            };
            writer
                .add(Document::new(format!("d{i}"), "", text))
                .unwrap();
        }
        writer.commit().unwrap();
        let post = dir.path().join("seg-000001.flat.post");
        (dir, post)
    }

    /// Rewrites byte `at` of a file's body and reseals it (a valid checksum).
    fn reseal_with(path: &Path, at: usize, value: u8) {
        let file = std::fs::read(path).unwrap();
        let mut body = footer::verify(path, &file).unwrap().to_vec();
        body[at] = value;
        std::fs::write(path, footer::sealed(body)).unwrap();
    }

    #[test]
    fn block_bounds_below_a_posting_are_reported() {
        let (dir, post) = one_term_index();
        assert!(check_index(dir.path()).is_ok());
        // Skip entry 0 (bytes 0..8 of the only list): max tf code 1 < doc 5's tf 4.
        reseal_with(&post, 6, 1);
        let report = check_index(dir.path());
        assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
        let msg = report.problems[0].to_string();
        assert!(msg.contains("exceeds its block's bounds"), "{msg}");

        let (dir, post) = one_term_index();
        // Min length per occurrence code 5 (5/4 of a token) > every doc's 1 token per
        // occurrence (doc 5: 4 tokens, tf 4; the rest: 1 token, tf 1).
        reseal_with(&post, 7, 5);
        let report = check_index(dir.path());
        assert!(
            report.problems[0]
                .to_string()
                .contains("min length per occurrence 5/4"),
            "{:?}",
            report.problems
        );
    }
}
