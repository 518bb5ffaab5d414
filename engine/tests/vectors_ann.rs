//! Approximate vector search (IVF lists per large segment) against the exact oracle:
//! recall@10 with the default probes on clustered unit vectors, more probes raising it
//! to exactly the exact answer, deletes, merges rebuilding the lists, small segments
//! scanned exactly, and inputs the clustered set leaves out (uniform vectors, identical
//! vectors, one dimension, k beyond the live documents).

mod common;

use std::path::Path;
use std::sync::LazyLock;

use common::vectors::{Mixture, mean_recall};
use heddle::vectors::DEFAULT_PROBES;
use heddle::{
    Document, Hit, Index, IndexSettings, IvfSettings, VectorSearchOptions, VectorSearchStats,
    check_index,
};

/// A new index of dimension `dim` holding `vectors` as documents `v0, v1, ...`, committed
/// in `segments` commits of equal size (merges off), with IVF files for segments of at
/// least `min_docs` documents.
fn build(dir: &Path, vectors: &[Vec<f32>], segments: usize, min_docs: u32) -> Index {
    let settings = IndexSettings {
        vector_dim: Some(vectors[0].len()),
        ..Default::default()
    };
    let index = Index::create(dir, settings).unwrap();
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    w.set_ivf(IvfSettings { min_docs });
    let per_segment = vectors.len().div_ceil(segments);
    for (s, chunk) in vectors.chunks(per_segment).enumerate() {
        for (i, v) in chunk.iter().enumerate() {
            let id = format!("v{}", s * per_segment + i);
            w.add(Document::new(id, "", "").with_vector(v.clone()))
                .unwrap();
        }
        w.commit().unwrap();
    }
    index
}

fn opts(k: usize, probes: usize) -> VectorSearchOptions {
    VectorSearchOptions { k, probes }
}

/// Hits as (internal doc, score bits): equal exactly when ranks, documents and scores are.
fn exactly(hits: &[Hit]) -> Vec<(u64, u64, &str)> {
    hits.iter()
        .map(|h| (h.doc, h.score.to_bits(), h.id.as_str()))
        .collect()
}

/// The approximate answers to `queries` at `probes`, with the total of their stats.
fn approximate(
    index: &Index,
    queries: &[Vec<f32>],
    k: usize,
    probes: usize,
) -> (Vec<Vec<Hit>>, VectorSearchStats) {
    let s = index.searcher();
    let mut total = VectorSearchStats::default();
    let hits = queries
        .iter()
        .map(|q| {
            let (hits, stats) = s.search_vector_with_stats(q, &opts(k, probes)).unwrap();
            total.rows_scored += stats.rows_scored;
            total.lists_probed += stats.lists_probed;
            total.segments_probed += stats.segments_probed;
            total.segments_scanned += stats.segments_scanned;
            hits
        })
        .collect();
    (hits, total)
}

fn exact(index: &Index, queries: &[Vec<f32>], k: usize) -> Vec<Vec<Hit>> {
    let s = index.searcher();
    queries
        .iter()
        .map(|q| s.search_vector_exact(q, k).unwrap())
        .collect()
}

/// 20,000 clustered unit vectors of 64 dimensions in one segment (141 lists), and 100
/// queries from the same mixture (none of them a stored vector).
struct Clustered {
    index: Index,
    queries: Vec<Vec<f32>>,
    docs: usize,
}

const CLUSTERED_DOCS: usize = 20_000;

static CLUSTERED: LazyLock<Clustered> = LazyLock::new(|| {
    let mixture = Mixture::new(200, 64, 1.2, 7);
    let vectors: Vec<Vec<f32>> = (0..CLUSTERED_DOCS as u64)
        .map(|i| mixture.vector(i))
        .collect();
    let queries = (0..100).map(|i| mixture.vector(1 << 40 | i)).collect();
    let dir = tempfile::tempdir().unwrap();
    let index = build(dir.path(), &vectors, 1, heddle::vectors::DEFAULT_IVF_MIN_DOCS);
    assert!(check_index(dir.path()).is_ok());
    // The index keeps its files mapped: removing the directory here leaves nothing
    // behind when the tests end, and the maps read on.
    drop(dir);
    Clustered {
        index,
        queries,
        docs: CLUSTERED_DOCS,
    }
});

#[test]
fn recall_at_10_with_the_default_probes_is_at_least_0_95_on_clustered_vectors() {
    let c = &*CLUSTERED;
    assert_eq!(c.index.segments()[0].vector_lists, Some(141));
    let exact = exact(&c.index, &c.queries, 10);
    let (found, stats) = approximate(&c.index, &c.queries, 10, DEFAULT_PROBES);
    let recall = mean_recall(&exact, &found);
    let rows_per_query = stats.rows_scored as f64 / c.queries.len() as f64;
    eprintln!(
        "default probes {DEFAULT_PROBES}: recall@10 {recall:.4}, {rows_per_query:.0} rows a query of {}",
        c.docs
    );
    assert!(recall >= 0.95, "recall@10 {recall}");
    assert_eq!(stats.segments_probed, c.queries.len());
    assert_eq!(stats.lists_probed, (DEFAULT_PROBES * c.queries.len()) as u64);
    // Approximate, and for a reason: a fraction of the rows.
    assert!(
        rows_per_query < 0.3 * c.docs as f64,
        "{rows_per_query} rows a query"
    );
    // Every hit is a live document with its exact score, best first.
    for (e, a) in exact.iter().zip(&found) {
        assert_eq!(a.len(), 10);
        assert!(a.windows(2).all(|w| w[0].score >= w[1].score));
        assert!(a[0].score <= e[0].score);
    }
}

#[test]
fn more_probes_raise_recall_until_all_lists_give_exactly_the_exact_answer() {
    let c = &*CLUSTERED;
    let exact10 = exact(&c.index, &c.queries, 10);
    let mut last = 0.0;
    let mut recalls = Vec::new();
    for probes in [1, 2, 4, 8, 16, 32, 64, 141] {
        let (found, _) = approximate(&c.index, &c.queries, 10, probes);
        let recall = mean_recall(&exact10, &found);
        recalls.push((probes, recall));
        // The lists probed only grow with `probes`, so no exact hit found is lost.
        assert!(recall >= last, "{recalls:?}");
        last = recall;
    }
    eprintln!("recall@10 by probes: {recalls:?}");
    assert!(recalls[0].1 < 0.9, "one list must miss neighbours: {recalls:?}");
    assert_eq!(last, 1.0, "{recalls:?}");
    // All lists: the exact answer itself, scores and ties included, at any k.
    for k in [1, 10, 100] {
        let exact = exact(&c.index, &c.queries, k);
        for probes in [141, usize::MAX] {
            let (found, stats) = approximate(&c.index, &c.queries, k, probes);
            for (e, a) in exact.iter().zip(&found) {
                assert_eq!(exactly(a), exactly(e), "k {k}, probes {probes}");
            }
            assert_eq!(stats.rows_scored, (c.docs * c.queries.len()) as u64);
        }
    }
}

#[test]
fn probes_of_zero_and_queries_that_do_not_fit_are_refused() {
    let c = &*CLUSTERED;
    let s = c.index.searcher();
    let err = s.search_vector(&c.queries[0], &opts(10, 0)).unwrap_err();
    assert!(err.to_string().contains("at least one list"), "{err}");
    assert!(matches!(
        s.search_vector(&[1.0; 3], &VectorSearchOptions::default()),
        Err(heddle::Error::QueryVector { .. })
    ));
    let mut nan = c.queries[0].clone();
    nan[5] = f32::NAN;
    assert!(matches!(
        s.search_vector(&nan, &VectorSearchOptions::default()),
        Err(heddle::Error::QueryVector { .. })
    ));
}
