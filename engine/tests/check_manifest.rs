//! `check` holds the manifest to what its files say, and readers refuse the lies they
//! can see cheaply: a manifest with a valid footer can still list a segment twice,
//! delete more documents than a segment holds, or misstate the counts BM25 is computed
//! from (issue 13, item 12).

mod common;

use common::rewrite_manifest;

use std::path::{Path, PathBuf};

use heddle::{Error, Index, SearchOptions, check_index};

/// A flat index of two segments (d1..d4, d5..d8) with d2 deleted, no merges running.
fn build(dir: &Path) {
    let mut w = common::two_segments(dir).writer().unwrap();
    w.set_background_merges(false);
    w.delete("d2");
    w.commit().unwrap();
}

/// `check` must report exactly one problem, naming `file` and saying `what`.
fn assert_one_problem(dir: &Path, file: &str, what: &str) {
    let report = check_index(dir);
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    let problem = &report.problems[0];
    assert_eq!(
        common::error_path(problem),
        Some(dir.join(file).as_path()),
        "{problem}"
    );
    assert!(problem.to_string().contains(what), "{problem}");
}

/// The manifest's `segments[segment].<counts>.flat`.
fn manifest_count(dir: &Path, segment: usize, counts: &str) -> u64 {
    let bytes = std::fs::read(dir.join("MANIFEST")).unwrap();
    let m: serde_json::Value = serde_json::from_slice(common::body_of(&bytes)).unwrap();
    m["segments"][segment][counts]["flat"].as_u64().unwrap()
}

fn delete_file(dir: &Path) -> String {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("seg-000001.del-"))
        .unwrap()
}

#[test]
fn check_reports_a_duplicated_segment_entry() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    rewrite_manifest(dir.path(), |m| {
        let first = m["segments"][0].clone();
        m["segments"].as_array_mut().unwrap().push(first);
    });
    assert_one_problem(
        dir.path(),
        "MANIFEST",
        "segments[2].name \"seg-000001\": listed twice",
    );
    // A merge of it would copy every document twice: no writer may start from it.
    let err = Index::open(dir.path()).err().expect("refused");
    assert!(matches!(err, Error::Manifest { .. }), "{err}");
}

#[test]
fn check_reports_a_deletes_count_that_disagrees_with_its_file() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    let file = delete_file(dir.path());
    rewrite_manifest(dir.path(), |m| {
        m["segments"][0]["deletes"]["count"] = 3.into()
    });
    assert_one_problem(dir.path(), &file, "deletes 1 documents, manifest says 3");
}

#[test]
fn a_deletes_count_above_the_segment_size_is_refused_and_never_wraps() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    rewrite_manifest(dir.path(), |m| {
        m["segments"][0]["deletes"]["count"] = 100.into()
    });
    let report = check_index(dir.path());
    // Before: 4,294,972,427 documents (4 - 100 wrapped around u32, plus 4).
    assert!(report.documents <= 8, "{} documents", report.documents);
    assert_one_problem(
        dir.path(),
        "MANIFEST",
        "segments[0].deletes.count 100 exceeds the segment's doc_count 4",
    );
    assert!(Index::open(dir.path()).is_err());
}

#[test]
fn check_reports_tokens_that_disagree_with_the_lengths() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    let tokens = manifest_count(dir.path(), 1, "tokens");
    assert!(tokens > 0);
    rewrite_manifest(dir.path(), |m| {
        m["segments"][1]["tokens"]["flat"] = 0.into()
    });
    let what = format!("flat lengths sum to {tokens} tokens, manifest says 0");
    assert_one_problem(dir.path(), "seg-000002.lens", &what);
}

#[test]
fn a_search_refuses_term_counts_that_disagree_with_the_dictionary() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    let terms = manifest_count(dir.path(), 0, "terms");
    rewrite_manifest(dir.path(), |m| {
        m["segments"][0]["terms"]["flat"] = (terms + 1).into()
    });
    let what = format!("holds {terms} terms, manifest says {}", terms + 1);
    assert_one_problem(dir.path(), "seg-000001.flat.terms", &what);
    // Cheap to see at open (the dictionary's header), so a plain search refuses it.
    let searched = Index::open(dir.path()).and_then(|i| {
        i.searcher()
            .search("coronavirus", &SearchOptions::default())
            .map(|_| ())
    });
    let err = searched.expect_err("a lying term count must not be searched");
    let path: PathBuf = dir.path().join("seg-000001.flat.terms");
    assert_eq!(common::error_path(&err), Some(path.as_path()), "{err}");
}

#[test]
fn check_reports_a_doc_count_that_disagrees_with_the_files() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    rewrite_manifest(dir.path(), |m| m["segments"][1]["doc_count"] = 5.into());
    assert_one_problem(
        dir.path(),
        "seg-000002.lens",
        "holds 4 documents, manifest says 5",
    );
}

/// A generation or next segment number at (or near) u64::MAX used to pass `check` and
/// then brick the index at the next commit (or wrap the generation). Beyond 2^53 it is
/// damage `check` reports and readers refuse; at 2^53 exactly the index reads, and a
/// commit that would pass it is refused with the index left as it was (issue 33).
#[test]
fn counters_at_their_maximum_are_damage_and_never_wrap() {
    for field in ["next_segment_id", "generation"] {
        let dir = tempfile::tempdir().unwrap();
        build(dir.path());
        rewrite_manifest(dir.path(), |m| m[field] = u64::MAX.into());
        let report = check_index(dir.path());
        assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
        let message = report.problems[0].to_string();
        assert!(
            message.contains(field) && message.contains("above"),
            "{message}"
        );
        assert!(matches!(
            Index::open(dir.path()),
            Err(Error::Manifest { .. })
        ));

        let dir = tempfile::tempdir().unwrap();
        build(dir.path());
        rewrite_manifest(dir.path(), |m| m[field] = (1u64 << 53).into());
        assert!(check_index(dir.path()).is_ok());
        let index = Index::open(dir.path()).unwrap();
        let mut w = index.writer().unwrap();
        w.set_background_merges(false);
        w.add(heddle::Document::new("x", "", "one more")).unwrap();
        let err = w.commit().expect_err("the commit would pass the maximum");
        assert!(err.to_string().contains("used up"), "{err}");
        assert!(err.to_string().contains("another directory"), "{err}");
        drop(w);
        assert_eq!(Index::open(dir.path()).unwrap().num_docs(), 7);
        assert!(check_index(dir.path()).is_ok());
    }
}
