//! Entries someone else put under an index's names (issue 33, items 7 and 9): a symlink
//! planted where a writer is about to create a file is never written through (the
//! target keeps its bytes, and `MANIFEST` never becomes a symlink), a symlink or FIFO in
//! place of a file readers open is an error naming it (never a hang), and `check`
//! reports every such entry, named by the manifest or not.

mod common;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use common::{error_path, two_segments};
use heddle::{Document, Error, Index, check_index};

/// A file outside the index that a planted symlink points at.
fn victim(dir: &Path) -> PathBuf {
    let path = dir.join("victim.txt");
    std::fs::write(&path, b"the user's own bytes").unwrap();
    path
}

fn assert_untouched(victim: &Path) {
    assert_eq!(std::fs::read(victim).unwrap(), b"the user's own bytes");
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {path:?}"
    );
}

/// Runs `f` on another thread and gives up after a while: a FIFO opened for reading
/// blocks until a writer comes, so a hang must fail the test, not stall it.
fn within_seconds<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(20))
        .expect("hung: a FIFO was opened as if it were a file")
}

fn add_one(index: &Index, id: &str) -> heddle::Result<()> {
    let mut w = index.writer()?;
    w.set_background_merges(false);
    w.add(Document::new(id, "", "planted symlinks are not followed"))?;
    w.commit().map(|_| ())
}

fn not_regular_at(problems: &[Error], path: &Path) -> bool {
    problems
        .iter()
        .any(|p| matches!(p, Error::NotRegular { .. }) && error_path(p) == Some(path))
}

#[test]
fn a_planted_manifest_tmp_symlink_is_not_written_through() {
    let outside = tempfile::tempdir().unwrap();
    let victim = victim(outside.path());
    let dir = tempfile::tempdir().unwrap();
    let index = two_segments(dir.path());
    let tmp = dir.path().join("MANIFEST.tmp");
    std::os::unix::fs::symlink(&victim, &tmp).unwrap();

    let err = add_one(&index, "x1").unwrap_err();
    assert!(matches!(err, Error::NotRegular { .. }), "{err}");
    assert_eq!(error_path(&err), Some(tmp.as_path()), "{err}");
    assert_untouched(&victim);
    let manifest = dir.path().join("MANIFEST");
    assert!(!is_symlink(&manifest), "MANIFEST became a symlink");
    assert!(
        is_symlink(&tmp),
        "someone else's entry is not ours to remove"
    );
    let report = check_index(dir.path());
    assert!(
        not_regular_at(&report.problems, &tmp),
        "{:?}",
        report.problems
    );
    // The index itself is as it was, and readable.
    assert_eq!(Index::open(dir.path()).unwrap().num_docs(), 8);
}

#[test]
fn a_planted_segment_symlink_is_not_written_through_and_the_next_name_is_used() {
    let outside = tempfile::tempdir().unwrap();
    let victim = victim(outside.path());
    let dir = tempfile::tempdir().unwrap();
    let index = two_segments(dir.path());
    // The next commit's segment is seg-000003.
    let planted = dir.path().join("seg-000003.store");
    std::os::unix::fs::symlink(&victim, &planted).unwrap();

    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    w.add(Document::new("x1", "", "planted symlinks are not followed"))
        .unwrap();
    let err = w.commit().unwrap_err();
    assert!(matches!(err, Error::NotRegular { .. }), "{err}");
    assert_eq!(error_path(&err), Some(planted.as_path()), "{err}");
    assert_untouched(&victim);
    assert!(is_symlink(&planted));
    // Nothing of the failed segment is left but the planted entry.
    let leftovers: Vec<String> = common::file_names(dir.path())
        .into_iter()
        .filter(|n| n.starts_with("seg-000003"))
        .collect();
    assert_eq!(leftovers, ["seg-000003.store"]);
    // The writer kept the document and commits it under the next name.
    w.commit().unwrap();
    drop(w);
    assert_untouched(&victim);
    assert_eq!(index.num_docs(), 9);
    let report = check_index(dir.path());
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    assert!(not_regular_at(&report.problems, &planted));
}

#[test]
fn a_planted_lock_symlink_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    let victim = victim(outside.path());
    let dir = tempfile::tempdir().unwrap();
    let index = two_segments(dir.path());
    let lock = dir.path().join("LOCK");
    std::fs::remove_file(&lock).unwrap();
    std::os::unix::fs::symlink(&victim, &lock).unwrap();
    let err = index
        .writer()
        .err()
        .expect("a symlinked LOCK must be refused");
    assert!(matches!(err, Error::NotRegular { .. }), "{err}");
    assert_untouched(&victim);
    let report = check_index(dir.path());
    assert!(
        not_regular_at(&report.problems, &lock),
        "{:?}",
        report.problems
    );
}

/// A symlink in place of a file the manifest names (even one pointing at a faithful
/// copy) is damage: readers refuse it, `check` reports it.
#[test]
fn a_symlink_in_place_of_a_segment_file_is_damage() {
    let outside = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    two_segments(dir.path());
    let store = dir.path().join("seg-000001.store");
    let copy = outside.path().join("copy.store");
    std::fs::copy(&store, &copy).unwrap();
    std::fs::remove_file(&store).unwrap();
    std::os::unix::fs::symlink(&copy, &store).unwrap();
    let err = Index::open(dir.path())
        .err()
        .expect("a symlinked segment file");
    assert!(
        matches!(
            err,
            Error::NotRegular {
                found: "a symlink",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(error_path(&err), Some(store.as_path()));
    let report = check_index(dir.path());
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    assert!(not_regular_at(&report.problems, &store));
}

#[test]
fn a_fifo_in_place_of_the_manifest_or_a_segment_file_hangs_nothing() {
    for name in ["MANIFEST", "seg-000001.flat.post", "seg-000002.lens"] {
        let dir = tempfile::tempdir().unwrap();
        two_segments(dir.path());
        let path = dir.path().join(name);
        std::fs::remove_file(&path).unwrap();
        mkfifo(&path);
        let root = dir.path().to_path_buf();
        let opened = within_seconds(move || Index::open(&root).err());
        let err = opened.unwrap_or_else(|| panic!("{name}: a FIFO opened as an index file"));
        assert!(
            matches!(
                err,
                Error::NotRegular {
                    found: "a FIFO",
                    ..
                }
            ),
            "{name}: {err}"
        );
        assert_eq!(error_path(&err), Some(path.as_path()));
        let root = dir.path().to_path_buf();
        let report = within_seconds(move || check_index(&root));
        assert!(
            not_regular_at(&report.problems, &path),
            "{name}: {:?}",
            report.problems
        );
        // A writer neither: its open reads the manifest, its clean-up lists the directory.
        let root = dir.path().to_path_buf();
        let written =
            within_seconds(move || Index::open(&root).and_then(|i| add_one(&i, "late")).err());
        assert!(written.is_some(), "{name}: a write went past a FIFO");
    }
}
