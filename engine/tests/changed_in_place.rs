//! A segment file truncated in place under a running reader (issue 33, item 8):
//! `truncate -s 0`, or `cp`/`rsync --inplace` over a live index. Reading a mapped page
//! past a file's new end raises SIGBUS, which used to end the process. Now the requests
//! that read the file fail with `Error::ChangedInPlace` naming it, every later one that
//! reads it too, and the process goes on answering the requests that do not.

mod common;

use std::path::Path;

use common::{error_path, two_segments};
use heddle::{Error, Index, SearchOptions, Searcher};

fn ids(s: &Searcher, query: &str) -> heddle::Result<Vec<String>> {
    Ok(s.search(query, &SearchOptions::default())?
        .into_iter()
        .map(|h| h.id)
        .collect())
}

/// `truncate -s LEN path`: the same inode, shortened.
fn truncate_in_place(path: &Path, len: u64) {
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_len(len).unwrap();
}

fn assert_changed(result: heddle::Result<Vec<String>>, path: &Path) {
    match result {
        Err(e @ Error::ChangedInPlace { .. }) => assert_eq!(error_path(&e), Some(path)),
        other => panic!("expected ChangedInPlace naming {path:?}, got {other:?}"),
    }
}

#[test]
fn a_file_truncated_under_a_reader_fails_the_requests_that_read_it_and_only_those() {
    let dir = tempfile::tempdir().unwrap();
    two_segments(dir.path()); // d1..d4 in seg-000001, d5..d8 in seg-000002
    let index = Index::open(dir.path()).unwrap();
    let searcher = index.searcher();
    // Both queries read their postings now, so their pages are mapped and verified.
    let mut masks = ids(&searcher, "masks").unwrap();
    masks.sort();
    assert_eq!(masks, ["d2", "d8"]);
    assert_eq!(ids(&searcher, "bats").unwrap(), ["d5"]);

    let post = dir.path().join("seg-000001.flat.post");
    truncate_in_place(&post, 0);
    // "masks" reads seg-000001's postings: its verified pages are gone.
    assert_changed(ids(&searcher, "masks"), &post);
    // Every later read of the file fails too; the zeros are never an answer.
    assert_changed(ids(&searcher, "masks"), &post);
    assert_changed(ids(&index.searcher(), "coronavirus"), &post);
    // "bats" is not in seg-000001's dictionary: its postings are not read.
    assert_eq!(ids(&searcher, "bats").unwrap(), ["d5"]);
    assert_eq!(ids(&index.searcher(), "children").unwrap(), ["d8"]);
}

#[test]
fn a_file_cut_short_before_its_first_read_is_an_error_too() {
    let dir = tempfile::tempdir().unwrap();
    two_segments(dir.path());
    let index = Index::open(dir.path()).unwrap();
    let searcher = index.searcher();
    // The stored fields of seg-000002, mapped at open, their blocks not read yet.
    let store = dir.path().join("seg-000002.store");
    truncate_in_place(&store, 0);
    assert_changed(ids(&searcher, "bats"), &store);
    // The other segment's documents are still found and resolved.
    assert_eq!(ids(&searcher, "vaccine").unwrap(), ["d3"]);
}
