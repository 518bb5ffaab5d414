//! Rebuilding an index is one commit under the writer lock (`IndexWriter::reset`), and
//! opening an index survives a writer in another handle removing the files of the
//! manifest it has just read.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use common::file_names;
use heddle::{AnalyzerConfig, Document, Error, Failpoint, Index, IndexSettings, SearchOptions};

fn english() -> IndexSettings {
    IndexSettings::default()
}

fn plain_per_field() -> IndexSettings {
    IndexSettings {
        analyzer: AnalyzerConfig::plain(),
        per_field: true,
        ..Default::default()
    }
}

fn ids(index: &Index, query: &str) -> Vec<String> {
    let opts = SearchOptions {
        k: 100,
        ..Default::default()
    };
    let mut ids: Vec<String> = index
        .searcher()
        .search(query, &opts)
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect();
    ids.sort();
    ids
}

/// An index of two segments ("old0", "old1") with one deletion, so that a rebuild has
/// segment files and a delete file to drop.
fn old_index(dir: &Path) -> Index {
    let index = Index::create(dir, english()).unwrap();
    let mut writer = index.writer().unwrap();
    writer.set_background_merges(false);
    for batch in 0..2 {
        for i in 0..3 {
            writer
                .add(Document::new(
                    format!("old{batch}-{i}"),
                    "",
                    "running shoes",
                ))
                .unwrap();
        }
        writer.commit().unwrap();
    }
    writer.delete("old0-0");
    writer.commit().unwrap();
    index
}

#[test]
fn a_reset_commit_replaces_every_segment_and_the_settings_in_one_manifest_replace() {
    let tmp = tempfile::tempdir().unwrap();
    let index = old_index(tmp.path());
    assert_eq!(index.num_docs(), 5);
    let before = index.searcher();
    let generation = index.generation();

    let mut writer = index.writer().unwrap();
    writer.reset(plain_per_field()).unwrap();
    writer
        .add(Document::new("new-1", "Running", "running shoes"))
        .unwrap();
    // The same id as a committed document is no duplicate: the reset drops that one.
    writer
        .add(Document::new("old1-1", "", "running late"))
        .unwrap();
    // Until the commit, readers see the old index whole.
    assert_eq!(index.num_docs(), 5);
    assert_eq!(ids(&index, "run").len(), 5, "english stems running to run");
    let stats = writer.commit().unwrap();
    assert_eq!(stats.replaced_segments, 2);
    assert_eq!(index.generation(), generation + 1, "one commit");

    // The new settings hold for documents and queries alike: plain does not stem.
    assert_eq!(index.analyzer().config().name, "plain");
    assert_eq!(index.fields().len(), 3, "per-field postings now");
    assert!(ids(&index, "run").is_empty());
    assert_eq!(ids(&index, "running"), ["new-1", "old1-1"]);
    // A searcher taken before the rebuild still answers from the old snapshot.
    let opts = SearchOptions::default();
    assert_eq!(before.search("run", &opts).unwrap().len(), 5);
    drop(before);
    writer.collect_garbage().unwrap();
    drop(writer);

    let reopened = Index::open(tmp.path()).unwrap();
    assert_eq!(reopened.num_docs(), 2);
    assert_eq!(ids(&reopened, "running"), ["new-1", "old1-1"]);
    assert!(heddle::check_index(tmp.path()).is_ok());
    // Only the new segment's files remain: old segments and the delete file are gone.
    let left = file_names(tmp.path());
    assert!(
        left.iter()
            .all(|f| !f.starts_with("seg-") || f.starts_with("seg-000003.")),
        "{left:?}"
    );
}

#[test]
fn a_reset_commit_that_fails_at_any_step_before_its_rename_leaves_the_old_index() {
    for step in [
        Failpoint::AfterSegmentWrite,
        Failpoint::AfterSegmentFsync,
        Failpoint::AfterTempManifest,
    ] {
        let tmp = tempfile::tempdir().unwrap();
        drop(old_index(tmp.path()));
        let index = Index::open(tmp.path()).unwrap();
        let mut writer = index.writer().unwrap();
        writer.reset(plain_per_field()).unwrap();
        writer.add(Document::new("new-1", "", "new words")).unwrap();
        writer.fail_at(Some(step));
        assert!(matches!(writer.commit(), Err(Error::Failpoint(s)) if s == step));
        drop(writer);
        // As a crash there would leave it: the old index, whole, in this process and
        // in a new one; the next writer removes the failed commit's files.
        assert_eq!(index.num_docs(), 5, "{step:?}");
        let reopened = Index::open(tmp.path()).unwrap();
        assert_eq!(reopened.num_docs(), 5, "{step:?}");
        assert_eq!(reopened.analyzer().config().name, "english", "{step:?}");
        assert!(ids(&reopened, "words").is_empty(), "{step:?}");
        drop(reopened.writer().unwrap());
        assert!(
            !file_names(tmp.path())
                .iter()
                .any(|f| f.starts_with("seg-000004")),
            "{step:?}: {:?}",
            file_names(tmp.path())
        );
        assert!(heddle::check_index(tmp.path()).is_ok(), "{step:?}");
    }
    // After the rename the new index is durable, even if this process never swapped.
    let tmp = tempfile::tempdir().unwrap();
    drop(old_index(tmp.path()));
    let index = Index::open(tmp.path()).unwrap();
    let mut writer = index.writer().unwrap();
    writer.reset(plain_per_field()).unwrap();
    writer.add(Document::new("new-1", "", "new words")).unwrap();
    writer.fail_at(Some(Failpoint::AfterManifestRename));
    assert!(writer.commit().is_err());
    drop(writer);
    let reopened = Index::open(tmp.path()).unwrap();
    assert_eq!(ids(&reopened, "words"), ["new-1"]);
    assert_eq!(reopened.num_docs(), 1);
}

#[test]
fn rollback_abandons_a_reset_and_the_committed_ids_stay_taken() {
    let tmp = tempfile::tempdir().unwrap();
    let index = old_index(tmp.path());
    let mut writer = index.writer().unwrap();
    writer.reset(plain_per_field()).unwrap();
    writer.add(Document::new("old1-1", "", "x")).unwrap();
    writer.rollback();
    assert!(matches!(
        writer.add(Document::new("old1-1", "", "x")),
        Err(Error::DuplicateId { .. })
    ));
    writer.rollback();
    writer.commit().unwrap();
    assert_eq!(index.num_docs(), 5);
    assert_eq!(index.analyzer().config().name, "english");
}

#[test]
fn a_reset_with_no_documents_empties_the_index() {
    let tmp = tempfile::tempdir().unwrap();
    let index = old_index(tmp.path());
    let mut writer = index.writer().unwrap();
    writer.reset(english()).unwrap();
    writer.commit().unwrap();
    assert_eq!(index.num_docs(), 0);
    assert!(ids(&index, "running").is_empty());
    drop(writer);
    assert_eq!(Index::open(tmp.path()).unwrap().num_docs(), 0);
}

#[test]
fn create_is_refused_over_an_index_and_over_someone_elses_files() {
    let tmp = tempfile::tempdir().unwrap();
    drop(old_index(tmp.path()));
    let err = Index::create(tmp.path(), english()).err().unwrap();
    assert!(matches!(err, Error::NotEmpty { .. }), "{err}");
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("thesis.txt"), "x").unwrap();
    let err = Index::create(other.path(), english()).err().unwrap();
    assert!(err.to_string().contains("thesis.txt"), "{err}");
    // Refused before anything is written: no LOCK file is left among the user's files.
    assert_eq!(file_names(other.path()), ["thesis.txt"]);
}

/// Item 6 of issue 13: a reader opening the index while another handle commits and
/// merges must never fail because the files of the manifest it read were removed.
/// (Another `Index` handle's writer does not see this handle's readers, exactly as a
/// writer in another process does not.)
#[test]
fn opening_while_another_handle_commits_and_merges_never_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let index = Index::create(&dir, english()).unwrap();
    let batches = Arc::new(std::sync::atomic::AtomicU64::new(0));
    const BATCHES: u64 = 300;
    let writer_thread = {
        let batches = batches.clone();
        std::thread::spawn(move || {
            let mut writer = index.writer().unwrap();
            writer.set_background_merges(false);
            for batch in 0..BATCHES {
                for i in 0..3 {
                    writer
                        .add(Document::new(format!("d{batch}-{i}"), "", "every word"))
                        .unwrap();
                    writer.commit().unwrap();
                }
                // Every batch ends merging everything: files vanish all the time.
                writer.merge(1).unwrap();
                batches.store(batch + 1, Ordering::Relaxed);
            }
        })
    };
    let (mut rounds, mut failures, mut last_docs) = (0u64, Vec::new(), 0);
    // Read for as long as the writer works (a few hundred merges), so the reads overlap
    // its removals many times over.
    while batches.load(Ordering::Relaxed) < BATCHES {
        rounds += 1;
        match Index::open(&dir) {
            Ok(reader) => {
                last_docs = reader.num_docs();
                let hits = reader
                    .searcher()
                    .search("every", &SearchOptions::default())
                    .unwrap();
                assert_eq!(hits.len() as u64, reader.num_docs().min(10));
            }
            Err(e) => failures.push(e.to_string()),
        }
    }
    writer_thread.join().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {rounds} opens failed beside {BATCHES} merges: {:?}",
        failures.len(),
        &failures[..failures.len().min(3)]
    );
    assert!(rounds > 0 && last_docs > 0, "the reader saw commits");
}
