//! The writer's memory accounting when segments carry vectors and graph files: the
//! documents' vectors, the encoded vectors file, the graph file and the links held while
//! it is built (a locked list of neighbours and their scores per document per layer)
//! are counted, so the accounted high-water tracks the heap a counting allocator
//! measures, as `build_heap.rs` checks for text.
//!
//! One test in this file: the allocator counts every thread of the process.

mod counting;

use std::sync::atomic::Ordering;

use counting::{CURRENT, PEAK};
use heddle::{Document, GraphSettings, Index, IndexSettings};

const DIM: usize = 256;

/// A short text and a vector of 256 values (1 KiB), different for every document.
fn doc(i: usize) -> Document {
    let vector: Vec<f32> = (0..DIM)
        .map(|j| ((i * 7919 + j * 104_729) % 2003) as f32 / 1001.0 - 1.0)
        .collect();
    Document::new(
        format!("d{i}"),
        "",
        format!("word{} word{}", i % 97, i % 13),
    )
    .with_vector(vector)
}

#[test]
fn the_accounting_tracks_the_heap_of_budgeted_builds_with_graph_files() {
    let dir = tempfile::tempdir().unwrap();
    let settings = IndexSettings {
        vector_dim: Some(DIM),
        ..Default::default()
    };
    let index = Index::create(dir.path(), settings).unwrap();
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    w.set_threads(2).unwrap();
    w.set_graph(GraphSettings {
        min_docs: 200,
        ..GraphSettings::default()
    })
    .unwrap();
    let budget = 4 << 20;
    w.set_memory_budget(budget);
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(0, Ordering::Relaxed);
    for i in 0..8_000 {
        w.add(doc(i)).unwrap();
    }
    w.commit().unwrap();
    let real = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    let accounted = w.memory_high_water();
    let segments = index.segments();
    eprintln!(
        "budget {budget}, accounted high-water {accounted}, real heap peak {real} \
         ({:.2}x), {} segments of {:?} documents",
        real as f64 / accounted as f64,
        segments.len(),
        segments.iter().map(|s| s.doc_count).collect::<Vec<_>>()
    );
    assert!(segments.len() >= 3, "the budget must flush");
    assert!(
        segments
            .iter()
            .all(|s| s.vector_graph == (s.doc_count >= 200)),
        "every segment of at least min_docs has a graph, no smaller one"
    );
    assert!(
        segments.iter().filter(|s| s.vector_graph).count() >= 3,
        "the budget must flush segments with graphs"
    );
    assert!(
        accounted <= budget + budget / 10,
        "accounted {accounted} over the budget {budget}"
    );
    assert!(
        real <= accounted + accounted / 4,
        "real peak {real} over the accounted {accounted} by more than a quarter"
    );
    assert!(
        accounted <= 2 * real,
        "accounted {accounted} more than twice the real peak {real}"
    );
}
