//! Commits, reopening, the stored analyzer, and the one-writer rule.

mod common;

use heddle::{AnalyzerConfig, Document, Error, Failpoint, Index, IndexSettings, SearchOptions};

fn ids(index: &Index, query: &str) -> Vec<String> {
    index
        .searcher()
        .search(
            query,
            &SearchOptions {
                k: 100,
                ..Default::default()
            },
        )
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect()
}

fn hits(index: &Index, query: &str) -> Vec<(String, f64)> {
    index
        .searcher()
        .search(
            query,
            &SearchOptions {
                k: 100,
                ..Default::default()
            },
        )
        .unwrap()
        .into_iter()
        .map(|h| (h.id, h.score))
        .collect()
}

fn create_with(docs: &[Document], config: AnalyzerConfig) -> (tempfile::TempDir, Index) {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(
        dir.path(),
        IndexSettings {
            analyzer: config,
            ..Default::default()
        },
    )
    .unwrap();
    let mut writer = index.writer().unwrap();
    for d in docs {
        writer.add(d.clone()).unwrap();
    }
    writer.commit().unwrap();
    (dir, index)
}

#[test]
fn reopened_index_answers_identically() {
    let (dir, index) = create_with(&common::fixture(), AnalyzerConfig::english());
    let before = hits(&index, "coronavirus droplet transmission");
    assert!(!before.is_empty());
    drop(index);
    let reopened = Index::open(dir.path()).unwrap();
    assert_eq!(hits(&reopened, "coronavirus droplet transmission"), before);
    assert_eq!(reopened.num_docs(), common::fixture().len() as u64);
}

#[test]
fn second_commit_adds_documents_without_disturbing_the_first() {
    let docs = common::fixture();
    let (dir, index) = create_with(&docs[..5], AnalyzerConfig::english());
    let searcher_before = index.searcher();
    let first = ids(&index, "hospital");
    assert_eq!(first, ["d2"]);
    let mut writer = index.writer().unwrap();
    for d in &docs[5..] {
        writer.add(d.clone()).unwrap();
    }
    writer.commit().unwrap();
    // The old searcher keeps its snapshot; a new one sees both commits.
    assert_eq!(
        searcher_before
            .search("hospital", &SearchOptions::default())
            .unwrap()
            .len(),
        1
    );
    assert_eq!(ids(&index, "hospital"), ["d6", "d2"]);
    let reopened = Index::open(dir.path()).unwrap();
    assert_eq!(reopened.segments().len(), 2);
    assert_eq!(ids(&reopened, "hospital"), ["d6", "d2"]);
    assert_eq!(ids(&reopened, "bats"), ["d5"]);
}

#[test]
fn the_stored_analyzer_is_used_for_queries() {
    let docs = vec![
        Document::new("a", "", "running runners ran"),
        Document::new("b", "", "the run"),
    ];
    // english stems `running` to `run`, and drops `the`.
    let (dir, _) = create_with(&docs, AnalyzerConfig::english());
    let english = Index::open(dir.path()).unwrap();
    assert_eq!(english.analyzer().config().name, "english");
    let mut stemmed = ids(&english, "running");
    stemmed.sort();
    assert_eq!(stemmed, ["a", "b"]);
    assert!(ids(&english, "the").is_empty());
    // plain keeps words as written: `running` matches only `a`, `the` matches `b`.
    let (dir, _) = create_with(&docs, AnalyzerConfig::plain());
    let plain = Index::open(dir.path()).unwrap();
    assert_eq!(plain.analyzer().config().name, "plain");
    assert_eq!(ids(&plain, "running"), ["a"]);
    assert_eq!(ids(&plain, "the"), ["b"]);
}

#[test]
fn a_second_writer_is_refused_until_the_first_is_dropped() {
    let (dir, index) = create_with(&common::fixture()[..2], AnalyzerConfig::plain());
    let first = index.writer().unwrap();
    assert!(matches!(index.writer(), Err(Error::Locked { .. })));
    // Another handle on the same directory (as another process would have) too.
    let other = Index::open(dir.path()).unwrap();
    assert!(matches!(other.writer(), Err(Error::Locked { .. })));
    drop(first);
    assert!(other.writer().is_ok());
}

#[test]
fn duplicate_and_empty_ids_are_rejected() {
    let (_dir, index) = create_with(&common::fixture()[..2], AnalyzerConfig::plain());
    let mut writer = index.writer().unwrap();
    assert!(matches!(
        writer.add(Document::new("d1", "", "again")),
        Err(Error::DuplicateId { id }) if id == "d1"
    ));
    writer.add(Document::new("new", "", "x")).unwrap();
    assert!(matches!(
        writer.add(Document::new("new", "", "y")),
        Err(Error::DuplicateId { .. })
    ));
    assert!(matches!(
        writer.add(Document::new("", "", "y")),
        Err(Error::EmptyId)
    ));
    assert_eq!(writer.buffered(), 1);
}

#[test]
fn a_commit_interrupted_before_the_manifest_rename_leaves_the_previous_state() {
    for step in [
        Failpoint::AfterSegmentWrite,
        Failpoint::AfterSegmentFsync,
        Failpoint::AfterTempManifest,
    ] {
        let docs = common::fixture();
        let (dir, index) = create_with(&docs[..4], AnalyzerConfig::english());
        let before = hits(&index, "coronavirus hospital bats");
        let mut writer = index.writer().unwrap();
        for d in &docs[4..] {
            writer.add(d.clone()).unwrap();
        }
        writer.fail_at(Some(step));
        assert!(matches!(writer.commit(), Err(Error::Failpoint(s)) if s == step));
        // This process's readers still see the previous state ...
        assert_eq!(
            hits(&index, "coronavirus hospital bats"),
            before,
            "{step:?}"
        );
        drop(writer);
        // ... and so does a fresh open, as after a crash at that step.
        let reopened = Index::open(dir.path()).unwrap();
        assert_eq!(reopened.num_docs(), 4, "{step:?}");
        assert_eq!(
            hits(&reopened, "coronavirus hospital bats"),
            before,
            "{step:?}"
        );
        // The leftovers do not stop the next commit.
        let mut writer = reopened.writer().unwrap();
        for d in &docs[4..] {
            writer.add(d.clone()).unwrap();
        }
        writer.commit().unwrap();
        assert_eq!(
            Index::open(dir.path()).unwrap().num_docs(),
            docs.len() as u64,
            "{step:?}"
        );
    }
}

#[test]
fn a_commit_interrupted_after_the_rename_is_durable() {
    let docs = common::fixture();
    let (dir, index) = create_with(&docs[..4], AnalyzerConfig::english());
    let mut writer = index.writer().unwrap();
    for d in &docs[4..] {
        writer.add(d.clone()).unwrap();
    }
    writer.fail_at(Some(Failpoint::AfterManifestRename));
    assert!(writer.commit().is_err());
    drop(writer);
    assert_eq!(
        Index::open(dir.path()).unwrap().num_docs(),
        docs.len() as u64
    );
}

#[test]
fn create_refuses_a_non_empty_directory_and_open_an_empty_one() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        Index::open(dir.path()),
        Err(Error::NoIndex { .. })
    ));
    std::fs::write(dir.path().join("something"), b"x").unwrap();
    assert!(matches!(
        Index::create(dir.path(), IndexSettings::default()),
        Err(Error::NotEmpty { .. })
    ));
}

#[test]
fn an_empty_index_answers_with_no_hits() {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(dir.path(), IndexSettings::default()).unwrap();
    assert!(ids(&index, "anything").is_empty());
    let mut writer = index.writer().unwrap();
    let stats = writer.commit().unwrap();
    assert_eq!(stats.docs, 0);
    assert!(stats.segment.is_none());
}
