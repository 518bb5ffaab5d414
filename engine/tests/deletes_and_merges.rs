//! Deletes, upserts and merges: visibility at commit, purging, unchanged rankings,
//! background merging, file removal after the last reader, and crash safety of merges.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use heddle::{Document, Failpoint, Index, MergePolicy, SearchOptions};

fn doc(i: usize) -> Document {
    let words = [
        "virus", "mask", "vaccine", "hospital", "bat", "droplet", "immune", "school",
    ];
    let text: Vec<&str> = (0..(3 + i % 7))
        .map(|j| words[(i * 7 + j * 3) % words.len()])
        .collect();
    Document::new(
        format!("doc{i}"),
        format!("title {}", words[i % words.len()]),
        text.join(" "),
    )
}

const QUERIES: [&str; 4] = [
    "virus mask",
    "vaccine hospital immune",
    "bat",
    "school droplet virus title",
];

/// (id, score bits) for every query, k large: the whole observable ranking.
fn rankings(index: &Index) -> Vec<Vec<(String, u64)>> {
    let s = index.searcher();
    QUERIES
        .iter()
        .map(|q| {
            s.search(
                q,
                &SearchOptions {
                    k: 1000,
                    ..Default::default()
                },
            )
            .unwrap()
            .into_iter()
            .map(|h| (h.id, h.score.to_bits()))
            .collect()
        })
        .collect()
}

fn ids(index: &Index, q: &str) -> BTreeSet<String> {
    index
        .searcher()
        .search(
            q,
            &SearchOptions {
                k: 1000,
                ..Default::default()
            },
        )
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect()
}

/// An index holding exactly `docs`, built in batches of `batch`, no background merges.
fn build(dir: &Path, docs: &[Document], batch: usize) -> Index {
    let index = Index::create(dir, common::english_per_field()).unwrap();
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    for chunk in docs.chunks(batch) {
        for d in chunk {
            w.add(d.clone()).unwrap();
        }
        w.commit().unwrap();
    }
    index
}

fn seg_files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("seg-"))
        .collect()
}

#[test]
fn a_deleted_document_disappears_exactly_at_its_commit_and_stays_gone() {
    let dir = tempfile::tempdir().unwrap();
    let docs: Vec<Document> = (0..60).map(doc).collect();
    let index = build(dir.path(), &docs, 20);
    let victim = "doc7";
    let q = "virus mask vaccine hospital bat droplet immune school";
    assert!(ids(&index, q).contains(victim));
    let before = index.searcher();
    let mut w = index.writer().unwrap();
    assert!(w.delete(victim));
    assert!(!w.delete("no-such-doc"));
    assert!(
        ids(&index, q).contains(victim),
        "not visible before the commit"
    );
    let stats = w.commit().unwrap();
    assert_eq!(stats.deleted, 1);
    assert!(!ids(&index, q).contains(victim));
    assert_eq!(index.num_docs(), 59);
    // A searcher taken before the commit keeps its snapshot.
    assert!(
        before
            .search(
                q,
                &SearchOptions {
                    k: 1000,
                    ..Default::default()
                }
            )
            .unwrap()
            .iter()
            .any(|h| h.id == victim)
    );
    drop(w);
    let reopened = Index::open(dir.path()).unwrap();
    assert!(!ids(&reopened, q).contains(victim));
    assert_eq!(reopened.num_docs(), 59);
    // The id is free again.
    let mut w = reopened.writer().unwrap();
    w.add(Document::new(victim, "", "brand new words")).unwrap();
    w.commit().unwrap();
    assert_eq!(
        ids(&reopened, "brand"),
        BTreeSet::from([victim.to_string()])
    );
}

#[test]
fn upsert_replaces_in_one_commit() {
    let dir = tempfile::tempdir().unwrap();
    let docs: Vec<Document> = (0..30).map(doc).collect();
    let index = build(dir.path(), &docs, 30);
    let mut w = index.writer().unwrap();
    w.upsert(Document::new("doc3", "replaced", "zebra giraffe"))
        .unwrap();
    w.upsert(Document::new("fresh", "", "zebra")).unwrap();
    let stats = w.commit().unwrap();
    assert_eq!((stats.docs, stats.deleted), (2, 1));
    assert_eq!(index.num_docs(), 31);
    assert_eq!(
        ids(&index, "zebra"),
        BTreeSet::from(["doc3".to_string(), "fresh".to_string()])
    );
    assert!(
        !ids(
            &index,
            "virus mask vaccine hospital bat droplet immune school"
        )
        .contains("doc3")
    );
}

#[test]
fn pruned_search_skips_deleted_documents_like_the_oracle() {
    let dir = tempfile::tempdir().unwrap();
    let docs: Vec<Document> = (0..900).map(doc).collect();
    let index = build(dir.path(), &docs, 300);
    let mut w = index.writer().unwrap();
    for i in (0..900).step_by(3) {
        assert!(w.delete(&format!("doc{i}")));
    }
    w.commit().unwrap();
    let s = index.searcher();
    for q in QUERIES {
        for k in [1, 10, 100] {
            let opts = SearchOptions {
                k,
                ..Default::default()
            };
            let pruned: Vec<(u64, u64)> = s
                .search(q, &opts)
                .unwrap()
                .iter()
                .map(|h| (h.doc, h.score.to_bits()))
                .collect();
            let oracle: Vec<(u64, u64)> = s
                .search_exhaustive(q, &opts)
                .unwrap()
                .iter()
                .map(|h| (h.doc, h.score.to_bits()))
                .collect();
            assert_eq!(pruned, oracle, "{q} k={k}");
        }
    }
}

#[test]
fn a_merge_without_deletes_changes_no_ranking() {
    let dir = tempfile::tempdir().unwrap();
    let docs: Vec<Document> = (0..500).map(doc).collect();
    let index = build(dir.path(), &docs, 50);
    assert_eq!(index.segments().len(), 10);
    let before = rankings(&index);
    let stats = index
        .writer()
        .unwrap()
        .merge(1)
        .unwrap()
        .expect("a merge ran");
    assert_eq!(stats.sources.len(), 10);
    assert_eq!(index.segments().len(), 1);
    assert_eq!(rankings(&index), before);
    assert_eq!(rankings(&Index::open(dir.path()).unwrap()), before);
}

#[test]
fn a_merge_purges_deletes_and_equals_an_index_of_the_survivors() {
    let dir = tempfile::tempdir().unwrap();
    let docs: Vec<Document> = (0..400).map(doc).collect();
    let index = build(dir.path(), &docs, 100);
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    for i in (0..400).filter(|i| i % 5 == 1) {
        w.delete(&format!("doc{i}"));
    }
    w.commit().unwrap();
    let stats = w.merge(1).unwrap().unwrap();
    assert_eq!(stats.purged, 80);
    assert_eq!(index.num_docs(), 320);
    assert!(index.segments()[0].deletes.is_none());
    // The survivors indexed from scratch, in the same order, score identically.
    let survivors: Vec<Document> = docs
        .iter()
        .filter(|d| d.id[3..].parse::<usize>().unwrap() % 5 != 1)
        .cloned()
        .collect();
    let fresh_dir = tempfile::tempdir().unwrap();
    let fresh = build(fresh_dir.path(), &survivors, survivors.len());
    assert_eq!(rankings(&index), rankings(&fresh));
}

#[test]
fn background_merges_bound_the_segment_count_without_changing_results() {
    let dir = tempfile::tempdir().unwrap();
    let docs: Vec<Document> = (0..240).map(doc).collect();
    let index = Index::create(dir.path(), common::english_per_field()).unwrap();
    let mut w = index.writer().unwrap();
    w.set_merge_policy(MergePolicy {
        max_segments: 3,
        merge_factor: 2,
        ..MergePolicy::default()
    });
    for chunk in docs.chunks(20) {
        for d in chunk {
            w.add(d.clone()).unwrap();
        }
        w.commit().unwrap();
    }
    w.wait_for_merges().unwrap();
    // The last commit may have found the merge thread busy: one more pass settles it.
    w.commit().unwrap();
    w.wait_for_merges().unwrap();
    assert!(
        index.segments().len() <= 3,
        "{} segments",
        index.segments().len()
    );
    let fresh_dir = tempfile::tempdir().unwrap();
    assert_eq!(
        rankings(&index),
        rankings(&build(fresh_dir.path(), &docs, docs.len()))
    );
    drop(w);
    // No file outside the manifest is left behind.
    let used: BTreeSet<String> = index.segments().iter().flat_map(|s| s.files()).collect();
    assert_eq!(seg_files(dir.path()), used);
}

#[test]
fn merged_away_files_are_removed_only_after_the_last_reader_lets_go() {
    let dir = tempfile::tempdir().unwrap();
    let docs: Vec<Document> = (0..100).map(doc).collect();
    let index = build(dir.path(), &docs, 25);
    let files_before = seg_files(dir.path());
    let held = index.searcher();
    let expected = held.search("virus", &SearchOptions::default()).unwrap();
    let mut w = index.writer().unwrap();
    w.merge(1).unwrap().unwrap();
    // The old files are still there for the held searcher, which still answers.
    assert!(files_before.is_subset(&seg_files(dir.path())));
    assert_eq!(
        held.search("virus", &SearchOptions::default()).unwrap(),
        expected
    );
    drop(held);
    w.collect_garbage().unwrap();
    let used: BTreeSet<String> = index.segments().iter().flat_map(|s| s.files()).collect();
    assert_eq!(seg_files(dir.path()), used);
}

/// An index of 200 documents in 4 segments with every 7th deleted.
fn index_with_deletes(dir: &Path) -> Index {
    let docs: Vec<Document> = (0..200).map(doc).collect();
    let index = build(dir, &docs, 50);
    let mut w = index.writer().unwrap();
    // Four segments of level 0 would merge in the background (the log policy).
    w.set_background_merges(false);
    for i in (0..200).step_by(7) {
        w.delete(&format!("doc{i}"));
    }
    w.commit().unwrap();
    index
}

#[test]
fn a_merge_interrupted_at_any_step_reopens_to_the_old_or_new_state() {
    // The two states a reopen may show: before the merge, and after it (scores change,
    // since purging deleted documents changes N, df and avgdl).
    let reference_dir = tempfile::tempdir().unwrap();
    let reference = index_with_deletes(reference_dir.path());
    let before = rankings(&reference);
    reference.writer().unwrap().merge(1).unwrap().unwrap();
    let after = rankings(&reference);
    assert_ne!(before, after);
    for step in Failpoint::ALL {
        let dir = tempfile::tempdir().unwrap();
        let index = index_with_deletes(dir.path());
        let mut w = index.writer().unwrap();
        w.set_background_merges(false);
        w.fail_at(Some(step));
        assert!(w.merge(1).is_err(), "{step:?}");
        drop(w);
        drop(index);
        let reopened = Index::open(dir.path()).unwrap();
        let durable = matches!(
            step,
            Failpoint::AfterManifestRename | Failpoint::DuringFileRemoval
        );
        assert_eq!(
            reopened.segments().len(),
            if durable { 1 } else { 4 },
            "{step:?}"
        );
        let expected = if durable { &after } else { &before };
        assert!(
            rankings(&reopened) == *expected,
            "{step:?}: reopened state is neither old nor new"
        );
        // The next writer cleans up whatever the crash left.
        drop(reopened.writer().unwrap());
        let used: BTreeSet<String> = reopened.segments().iter().flat_map(|s| s.files()).collect();
        assert_eq!(seg_files(dir.path()), used, "{step:?}");
    }
}

#[test]
fn a_delete_interrupted_before_the_rename_is_not_applied() {
    for step in [
        Failpoint::AfterSegmentWrite,
        Failpoint::AfterSegmentFsync,
        Failpoint::AfterTempManifest,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let docs: Vec<Document> = (0..50).map(doc).collect();
        let index = build(dir.path(), &docs, 50);
        let mut w = index.writer().unwrap();
        w.delete("doc1");
        w.add(doc(1000)).unwrap();
        w.fail_at(Some(step));
        assert!(w.commit().is_err());
        drop(w);
        let reopened = Index::open(dir.path()).unwrap();
        assert_eq!(reopened.num_docs(), 50, "{step:?}");
        assert!(
            ids(
                &reopened,
                "virus mask vaccine hospital bat droplet immune school"
            )
            .contains("doc1")
        );
    }
}

#[test]
fn readers_see_commits_whole_while_a_writer_loops() {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(dir.path(), common::english_per_field()).unwrap();
    let batch = 25;
    let batches = 20;
    let reader_index = index.clone();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop_reader = stop.clone();
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        while !stop_reader.load(std::sync::atomic::Ordering::Relaxed) {
            let s = reader_index.searcher();
            // Every document contains "common": the hit count is the number of documents.
            let n = s
                .search(
                    "common",
                    &SearchOptions {
                        k: 10_000,
                        ..Default::default()
                    },
                )
                .unwrap()
                .len();
            assert_eq!(n as u64, s.num_docs());
            seen.push(n);
        }
        seen
    });
    let mut w = index.writer().unwrap();
    w.set_merge_policy(MergePolicy {
        max_segments: 4,
        merge_factor: 3,
        ..MergePolicy::default()
    });
    for b in 0..batches {
        for i in 0..batch {
            w.add(Document::new(
                format!("b{b}-{i}"),
                "",
                format!("common word{i} batch{b}"),
            ))
            .unwrap();
        }
        w.commit().unwrap();
        // The committing thread sees its own writes at once.
        assert_eq!(ids(&index, &format!("batch{b}")).len(), batch);
    }
    w.wait_for_merges().unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let seen = reader.join().unwrap();
    assert!(!seen.is_empty());
    assert!(
        seen.iter().all(|n| n % batch == 0),
        "a reader saw part of a commit: {seen:?}"
    );
    assert!(
        seen.windows(2).all(|w| w[0] <= w[1]),
        "counts never go back"
    );
    assert_eq!(index.num_docs(), (batch * batches) as u64);
}
