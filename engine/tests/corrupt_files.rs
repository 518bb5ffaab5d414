//! Damaged index files: a typed error naming the file, never a panic.

mod common;

use common::error_path;

use std::path::{Path, PathBuf};

use heddle::{Error, Index, SearchOptions, TopKPath};

fn build() -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let index = common::english_index(dir.path(), false);
    let mut writer = index.writer().unwrap();
    for d in common::fixture() {
        writer.add(d).unwrap();
    }
    writer.commit().unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != "LOCK")
        .collect();
    files.sort();
    assert_eq!(files.len(), 5, "{files:?}"); // MANIFEST and four segment files
    (dir, files)
}

/// Opens and searches by the planned path and by each top-k path on its own (a query on
/// so small an index is planned to one of them only).
fn open_and_search(dir: &Path) -> heddle::Result<()> {
    let index = Index::open(dir)?;
    let searcher = index.searcher();
    let (query, opts) = ("coronavirus bats hospital", SearchOptions::default());
    searcher.search(query, &opts)?;
    for path in [TopKPath::MaxScore, TopKPath::TermAtATime] {
        searcher.search_docs_by(query, &opts, path)?;
    }
    Ok(())
}

#[test]
fn a_flipped_byte_in_any_file_is_a_checksum_error_naming_it() {
    let (dir, files) = build();
    for file in &files {
        let original = std::fs::read(file).unwrap();
        // A byte in the body: the checksum catches it.
        let mut damaged = original.clone();
        damaged[original.len() / 3] ^= 0x5a;
        std::fs::write(file, &damaged).unwrap();
        let err = open_and_search(dir.path()).expect_err("damage must be detected");
        assert!(
            matches!(err, Error::ChecksumMismatch { .. }),
            "{file:?}: {err}"
        );
        assert_eq!(error_path(&err), Some(file.as_path()), "{err}");
        std::fs::write(file, &original).unwrap();
    }
    open_and_search(dir.path()).unwrap();
}

#[test]
fn a_truncated_file_is_a_typed_error_naming_it() {
    let (dir, files) = build();
    for file in &files {
        let original = std::fs::read(file).unwrap();
        for keep in [0, 3, original.len() / 2, original.len() - 1] {
            std::fs::write(file, &original[..keep]).unwrap();
            let err = open_and_search(dir.path()).expect_err("truncation must be detected");
            assert_eq!(
                error_path(&err),
                Some(file.as_path()),
                "{file:?} cut to {keep}: {err}"
            );
        }
        std::fs::write(file, &original).unwrap();
    }
    open_and_search(dir.path()).unwrap();
}

#[test]
fn a_wrong_footer_version_or_magic_is_reported_as_such() {
    let (dir, files) = build();
    for file in &files {
        let original = std::fs::read(file).unwrap();
        let mut newer = original.clone();
        let at = newer.len() - 8;
        newer[at..at + 4].copy_from_slice(&99u32.to_le_bytes());
        std::fs::write(file, &newer).unwrap();
        let err = open_and_search(dir.path()).unwrap_err();
        assert!(
            matches!(err, Error::Version { found: 99, .. }),
            "{file:?}: {err}"
        );
        assert!(err.to_string().contains("rebuild"), "{err}");

        let mut foreign = original.clone();
        let at = foreign.len() - 4;
        foreign[at..].copy_from_slice(b"ZZZZ");
        std::fs::write(file, &foreign).unwrap();
        let err = open_and_search(dir.path()).unwrap_err();
        assert!(matches!(err, Error::BadMagic { .. }), "{file:?}: {err}");
        std::fs::write(file, &original).unwrap();
    }
}

#[test]
fn a_missing_segment_file_is_an_io_error_naming_it() {
    let (dir, files) = build();
    let segment_file = files
        .iter()
        .find(|p| p.to_string_lossy().ends_with(".store"))
        .unwrap();
    std::fs::remove_file(segment_file).unwrap();
    let err = open_and_search(dir.path()).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err}");
    assert_eq!(error_path(&err), Some(segment_file.as_path()));
}
