//! The commit observer (`IndexWriter::set_commit_progress`, issue 17): a commit reports
//! every phase it runs, in order, each from 0 to its total, and only those it runs.

mod common;

use std::sync::{Arc, Mutex};

use heddle::{BpConfig, CommitPhase, Document, IndexWriter, Reorder};

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
    assert_eq!(phases(&events.lock().unwrap()), CommitPhase::ALL);
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
