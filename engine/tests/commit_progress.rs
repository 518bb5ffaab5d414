//! The commit observer (`IndexWriter::set_commit_progress`, issue 17): a commit reports
//! every phase it runs, in order, each from 0 to its total, and only those it runs (the
//! graph phase only for a segment that gets a vector graph, a merge's included).

mod common;

use std::sync::{Arc, Mutex};

use heddle::{BpConfig, CommitPhase, Document, GraphSettings, IndexWriter, Reorder};

type Events = Arc<Mutex<Vec<(CommitPhase, u64, u64)>>>;

fn observe(writer: &mut IndexWriter) -> Events {
    let events: Events = Arc::default();
    let sink = events.clone();
    writer.set_commit_progress(Some(Arc::new(move |phase, done, total| {
        sink.lock().unwrap().push((phase, done, total));
    })));
    events
}

/// Enough documents for several reports within analysis and encoding.
fn docs(n: usize) -> Vec<Document> {
    (0..n)
        .map(|i| Document {
            id: format!("d{i}"),
            title: format!("title word{} topic{}", i % 97, i % 7),
            text: format!("text about unique{i} and shared{} words", i % 13),
            vector: None,
        })
        .collect()
}

/// The phases in the order they were first reported, after checking that each phase's
/// reports are contiguous, start at 0 and end at their total, never beyond it.
fn phases(events: &[(CommitPhase, u64, u64)]) -> Vec<CommitPhase> {
    let mut order: Vec<CommitPhase> = Vec::new();
    for &(phase, done, total) in events {
        assert!(done <= total, "{phase:?} {done}/{total}");
        if order.last() != Some(&phase) {
            assert!(
                !order.contains(&phase),
                "{phase:?} reported twice: {events:?}"
            );
            assert_eq!(done, 0, "{phase:?} starts at 0");
            order.push(phase);
        }
    }
    for &p in &order {
        let last = events.iter().rev().find(|e| e.0 == p).unwrap();
        assert_eq!(last.1, last.2, "{p:?} ends at its total: {last:?}");
    }
    order
}

#[test]
fn a_commit_reports_every_phase_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let index = common::english_index(dir.path(), true);
    let mut writer = index.writer().unwrap();
    writer.set_threads(2).unwrap();
    let events = observe(&mut writer);
    for d in docs(5_000) {
        writer.add(d).unwrap();
    }
    writer.commit().unwrap();
    let events = events.lock().unwrap().clone();
    use CommitPhase::*;
    assert_eq!(
        phases(&events),
        [Analysis, Encoding, Write, Fsync, Publish],
        "{events:?}"
    );
    let analysis: Vec<_> = events.iter().filter(|e| e.0 == Analysis).collect();
    assert_eq!(analysis.last().unwrap().2, 5_000);
    assert!(analysis.len() > 3, "reports within analysis: {analysis:?}");
    assert!(events.iter().filter(|e| e.0 == Encoding).count() > 3);
}

#[test]
fn a_reordering_commit_reports_the_reorder_between_analysis_and_encoding() {
    let dir = tempfile::tempdir().unwrap();
    let index = common::english_index(dir.path(), false);
    let mut writer = index.writer().unwrap();
    writer.set_reorder(Reorder::Bp(BpConfig::default()));
    let events = observe(&mut writer);
    for d in docs(2_000) {
        writer.add(d).unwrap();
    }
    writer.commit().unwrap();
    // No vectors, so no graph.
    let mut all_but_graph = CommitPhase::ALL.to_vec();
    all_but_graph.retain(|&p| p != CommitPhase::Graph);
    assert_eq!(phases(&events.lock().unwrap()), all_but_graph);
}

/// `n` documents with vectors of 16 values.
fn vector_docs(range: std::ops::Range<usize>) -> Vec<Document> {
    range
        .map(|i| {
            let v: Vec<f32> = (0..16)
                .map(|j| ((i * 31 + j * 7) % 17) as f32 - 8.0)
                .collect();
            Document::new(format!("v{i}"), "", format!("word{}", i % 11)).with_vector(v)
        })
        .collect()
}

fn vector_writer(dir: &std::path::Path, min_docs: u32) -> (heddle::Index, IndexWriter) {
    let settings = heddle::IndexSettings {
        vector_dim: Some(16),
        ..Default::default()
    };
    let index = heddle::Index::create(dir, settings).unwrap();
    let mut writer = index.writer().unwrap();
    writer.set_background_merges(false);
    writer.set_threads(2).unwrap();
    writer
        .set_graph(GraphSettings {
            min_docs,
            ef_construction: 16,
            ..GraphSettings::default()
        })
        .unwrap();
    (index, writer)
}

#[test]
fn a_commit_that_builds_a_graph_reports_it_in_documents_after_encoding() {
    let dir = tempfile::tempdir().unwrap();
    let (index, mut writer) = vector_writer(dir.path(), 1000);
    writer.set_reorder(Reorder::Bp(BpConfig::default()));
    let events = observe(&mut writer);
    for d in vector_docs(0..2500) {
        writer.add(d).unwrap();
    }
    writer.commit().unwrap();
    assert!(index.segments()[0].vector_graph);
    let events = events.lock().unwrap().clone();
    // Every phase, Graph between encoding and writing.
    assert_eq!(phases(&events), CommitPhase::ALL, "{events:?}");
    let graph: Vec<(u64, u64)> = events
        .iter()
        .filter(|e| e.0 == CommitPhase::Graph)
        .map(|e| (e.1, e.2))
        .collect();
    assert_eq!(graph.first(), Some(&(0, 2500)));
    assert_eq!(graph.last(), Some(&(2500, 2500)));
    assert!(graph.iter().all(|&(_, total)| total == 2500));
    // Reports while the documents are linked (every 1,024), not only at the ends.
    assert!(
        graph.iter().any(|&(done, _)| done > 0 && done < 2500),
        "{graph:?}"
    );
}

#[test]
fn only_segments_that_get_a_graph_report_it_and_merges_report_theirs() {
    let dir = tempfile::tempdir().unwrap();
    let (index, mut writer) = vector_writer(dir.path(), 1500);
    let events = observe(&mut writer);
    for range in [0..1000, 1000..2000] {
        for d in vector_docs(range) {
            writer.add(d).unwrap();
        }
        writer.commit().unwrap();
    }
    assert!(index.segments().iter().all(|s| !s.vector_graph));
    use CommitPhase::*;
    let seen = events.lock().unwrap().clone();
    assert!(!seen.iter().any(|e| e.0 == Graph), "{seen:?}");
    // Merged, the two make a segment large enough: its graph is reported.
    events.lock().unwrap().clear();
    writer.merge(1).unwrap().unwrap();
    assert!(index.segments()[0].vector_graph);
    let seen = events.lock().unwrap().clone();
    // From 0 to the merged segment's documents (`phases` checks both ends).
    assert_eq!(phases(&seen), [Graph], "{seen:?}");
    assert!(seen.iter().all(|e| e.2 == 2000), "{seen:?}");
}

#[test]
fn a_commit_of_deletions_only_reports_the_phases_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let index = common::english_index(dir.path(), false);
    let mut writer = index.writer().unwrap();
    for d in docs(10) {
        writer.add(d).unwrap();
    }
    writer.commit().unwrap();
    let events = observe(&mut writer);
    assert!(writer.delete("d3"));
    writer.commit().unwrap();
    use CommitPhase::*;
    assert_eq!(phases(&events.lock().unwrap()), [Write, Fsync, Publish]);
    // Nothing to commit: no phase at all.
    events.lock().unwrap().clear();
    writer.commit().unwrap();
    assert!(events.lock().unwrap().is_empty());
}
