//! Approximate vector search (IVF lists per large segment) against the exact oracle:
//! recall@10 with the default probes on clustered unit vectors, more probes raising it
//! to exactly the exact answer, deletes, merges rebuilding the lists, small segments
//! scanned exactly, and inputs the clustered set leaves out (uniform vectors, identical
//! vectors, one dimension, k beyond the live documents).

mod common;

use std::path::Path;
use std::sync::LazyLock;

use common::vectors::{Mixture, mean_recall, uniform_vector, unit_vector};
use heddle::{
    Document, Hit, Index, IndexSettings, IvfSettings, Probes, VectorSearchOptions,
    VectorSearchStats, check_index,
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
    VectorSearchOptions {
        k,
        probes: Probes::Count(probes),
    }
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
    probes: Probes,
) -> (Vec<Vec<Hit>>, VectorSearchStats) {
    let s = index.searcher();
    let mut total = VectorSearchStats::default();
    let hits = queries
        .iter()
        .map(|q| {
            let opts = VectorSearchOptions { k, probes };
            let (hits, stats) = s.search_vector_with_stats(q, &opts).unwrap();
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
    let index = build(
        dir.path(),
        &vectors,
        1,
        heddle::vectors::DEFAULT_IVF_MIN_DOCS,
    );
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
    let (found, stats) = approximate(&c.index, &c.queries, 10, Probes::default());
    let recall = mean_recall(&exact, &found);
    let rows_per_query = stats.rows_scored as f64 / c.queries.len() as f64;
    eprintln!(
        "default probes: recall@10 {recall:.4}, {rows_per_query:.0} rows a query of {}",
        c.docs
    );
    assert!(recall >= 0.95, "recall@10 {recall}");
    assert_eq!(stats.segments_probed, c.queries.len());
    // ⌈6 × √141⌉ lists a query.
    assert_eq!(stats.lists_probed, 72 * c.queries.len() as u64);
    // Approximate, and for a reason: a fraction of the rows (about the lists' share,
    // 6 / √lists, which shrinks as segments grow: 30 % at 171k documents).
    assert!(
        rows_per_query < 0.55 * c.docs as f64,
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
        let (found, stats) = approximate(&c.index, &c.queries, 10, Probes::Count(probes));
        let recall = mean_recall(&exact10, &found);
        recalls.push((probes, recall));
        // The lists probed only grow with `probes`, so no exact hit found is lost.
        assert!(recall >= last, "{recalls:?}");
        last = recall;
        if probes == 141 {
            // All lists: the exact answer itself, scores and ties included.
            for (e, a) in exact10.iter().zip(&found) {
                assert_eq!(exactly(a), exactly(e));
            }
            assert_eq!(stats.rows_scored, (c.docs * c.queries.len()) as u64);
        }
    }
    eprintln!("recall@10 by probes: {recalls:?}");
    assert!(
        recalls[0].1 < 0.9,
        "one list must miss neighbours: {recalls:?}"
    );
    assert_eq!(last, 1.0, "{recalls:?}");
    // At other k too, and with probes beyond the lists.
    let queries = &c.queries[..20];
    for k in [1, 100] {
        let exact = exact(&c.index, queries, k);
        let (found, _) = approximate(&c.index, queries, k, Probes::All);
        for (e, a) in exact.iter().zip(&found) {
            assert_eq!(exactly(a), exactly(e), "k {k}");
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

/// `n` unit vectors of `dim` dimensions from a mixture of 50 clusters.
fn mixture_vectors(n: usize, dim: usize, seed: u64) -> (Vec<Vec<f32>>, Vec<Vec<f32>>) {
    let mixture = Mixture::new(50, dim, 1.2, seed);
    let vectors = (0..n as u64).map(|i| mixture.vector(i)).collect();
    let queries = (0..30).map(|i| mixture.vector(1 << 40 | i)).collect();
    (vectors, queries)
}

fn ivf_files(dir: &Path) -> Vec<String> {
    common::file_names(dir)
        .into_iter()
        .filter(|n| n.ends_with(".ivf"))
        .collect()
}

#[test]
fn deleted_documents_are_never_found_and_every_search_still_fills_k() {
    let dir = tempfile::tempdir().unwrap();
    let (vectors, queries) = mixture_vectors(6000, 32, 3);
    let index = build(dir.path(), &vectors, 1, 4096);
    assert_eq!(index.segments()[0].vector_lists, Some(77));
    // Each query's exact top 3, and every third document.
    let mut deleted: std::collections::BTreeSet<String> =
        (0..6000).step_by(3).map(|i| format!("v{i}")).collect();
    for hits in exact(&index, &queries, 3) {
        deleted.extend(hits.into_iter().map(|h| h.id));
    }
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    for id in &deleted {
        assert!(w.delete(id));
    }
    w.commit().unwrap();
    let live = 6000 - deleted.len();
    assert_eq!(index.num_docs(), live as u64);
    let s = index.searcher();
    for q in &queries {
        let hits = s.search_vector(q, &VectorSearchOptions::default()).unwrap();
        assert_eq!(hits.len(), 10);
        assert!(hits.iter().all(|h| !deleted.contains(&h.id)), "{hits:?}");
        let all = s.search_vector(q, &opts(10, usize::MAX)).unwrap();
        assert_eq!(
            exactly(&all),
            exactly(&s.search_vector_exact(q, 10).unwrap())
        );
        // k beyond the live documents: all of them, as exact search ranks them, even
        // from one probe (the lists after it are probed until k live ones are found).
        let every = s.search_vector(q, &opts(100_000, 1)).unwrap();
        assert_eq!(every.len(), live);
        assert_eq!(
            exactly(&every),
            exactly(&s.search_vector_exact(q, 100_000).unwrap())
        );
    }
    // Nearly everything deleted: one probe still finds k live documents.
    for i in (0..6000).filter(|i| i % 3 != 0 && i % 400 != 1) {
        w.delete(&format!("v{i}"));
    }
    w.commit().unwrap();
    let s = index.searcher();
    let left = s.num_docs();
    assert!((10..20).contains(&left), "{left}");
    for q in &queries {
        let (hits, stats) = s.search_vector_with_stats(q, &opts(10, 1)).unwrap();
        assert_eq!(hits.len(), 10);
        assert!(
            hits.iter()
                .all(|h| h.id[1..].parse::<usize>().unwrap() % 400 == 1)
        );
        assert!(stats.lists_probed > 1, "{stats:?}");
    }
}

#[test]
fn merges_rebuild_the_lists_from_the_merged_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (vectors, queries) = mixture_vectors(9000, 32, 5);
    let index = build(dir.path(), &vectors, 3, 2500);
    let lists: Vec<Option<u32>> = index.segments().iter().map(|s| s.vector_lists).collect();
    assert_eq!(lists, [Some(55); 3]);
    assert_eq!(ivf_files(dir.path()).len(), 3);
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    w.set_ivf(IvfSettings { min_docs: 2500 });
    for i in (0..9000).step_by(9) {
        w.delete(&format!("v{i}"));
    }
    w.commit().unwrap();
    w.merge(1).unwrap().expect("three segments merge into one");
    w.collect_garbage().unwrap();
    let segments = index.segments();
    assert_eq!(segments.len(), 1);
    assert_eq!(segments[0].doc_count, 8000);
    assert_eq!(segments[0].vector_lists, Some(89)); // √8000, rounded
    assert_eq!(ivf_files(dir.path()), [format!("{}.ivf", segments[0].name)]);
    let exact10 = exact(&index, &queries, 10);
    let (found, stats) = approximate(&index, &queries, 10, Probes::All);
    for (e, a) in exact10.iter().zip(&found) {
        assert_eq!(exactly(a), exactly(e));
    }
    assert_eq!(stats.rows_scored, 8000 * queries.len() as u64);
    let (found, _) = approximate(&index, &queries, 10, Probes::default());
    let recall = mean_recall(&exact10, &found);
    assert!(recall >= 0.95, "recall@10 after the merge {recall}");
    assert!(check_index(dir.path()).is_ok());
    drop(index);
    // Reopened, the merged segment's lists are read from its file.
    let reopened = Index::open(dir.path()).unwrap();
    let (again, _) = approximate(&reopened, &queries, 10, Probes::default());
    for (a, b) in found.iter().zip(&again) {
        assert_eq!(exactly(a), exactly(b));
    }
}

#[test]
fn a_merge_gives_lists_only_to_a_segment_large_enough() {
    let dir = tempfile::tempdir().unwrap();
    let (vectors, queries) = mixture_vectors(3000, 16, 9);
    // Three segments too small for lists; two merged into one large enough.
    let index = build(dir.path(), &vectors, 3, 2000);
    assert!(index.segments().iter().all(|s| s.vector_lists.is_none()));
    assert!(ivf_files(dir.path()).is_empty());
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    w.set_ivf(IvfSettings { min_docs: 2000 });
    w.merge(2).unwrap().unwrap();
    let lists: Vec<Option<u32>> = index.segments().iter().map(|s| s.vector_lists).collect();
    assert_eq!(lists, [Some(45), None]);
    // With a higher threshold, merging that one again drops its lists.
    w.set_ivf(IvfSettings { min_docs: 5000 });
    w.merge(1).unwrap().unwrap();
    w.collect_garbage().unwrap();
    assert_eq!(index.segments()[0].vector_lists, None);
    assert!(ivf_files(dir.path()).is_empty());
    let (found, stats) = approximate(&index, &queries, 10, Probes::Count(1));
    assert_eq!(stats.segments_scanned, queries.len());
    for (e, a) in exact(&index, &queries, 10).iter().zip(&found) {
        assert_eq!(exactly(a), exactly(e));
    }
}

#[test]
fn segments_below_the_threshold_are_scanned_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let (vectors, queries) = mixture_vectors(3000, 16, 11);
    let index = build(
        dir.path(),
        &vectors,
        3,
        heddle::vectors::DEFAULT_IVF_MIN_DOCS,
    );
    assert!(index.segments().iter().all(|s| s.vector_lists.is_none()));
    assert!(ivf_files(dir.path()).is_empty());
    let (found, stats) = approximate(&index, &queries, 10, Probes::Count(1));
    for (e, a) in exact(&index, &queries, 10).iter().zip(&found) {
        assert_eq!(exactly(a), exactly(e));
    }
    let n = queries.len();
    assert_eq!((stats.segments_scanned, stats.segments_probed), (3 * n, 0));
    assert_eq!(stats.rows_scored, 3000 * n as u64);

    // Beside a segment with lists: that one is probed, the small ones scanned.
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    w.set_ivf(IvfSettings { min_docs: 1000 });
    let mixture = Mixture::new(50, 16, 1.2, 11);
    for i in 3000..5000u64 {
        let doc = Document::new(format!("v{i}"), "", "").with_vector(mixture.vector(i));
        w.add(doc).unwrap();
    }
    w.commit().unwrap();
    assert_eq!(index.segments()[3].vector_lists, Some(45));
    let (found, stats) = approximate(&index, &queries, 10, Probes::Count(2));
    assert_eq!((stats.segments_scanned, stats.segments_probed), (3 * n, n));
    assert!(stats.rows_scored < 5000 * n as u64);
    let (all, _) = approximate(&index, &queries, 10, Probes::All);
    let exact = exact(&index, &queries, 10);
    for (e, a) in exact.iter().zip(&all) {
        assert_eq!(exactly(a), exactly(e));
    }
    assert!(mean_recall(&exact, &found) > 0.5);
}

#[test]
fn uniform_vectors_without_clusters_still_meet_the_oracle_with_all_lists() {
    let dir = tempfile::tempdir().unwrap();
    let vectors: Vec<Vec<f32>> = (0..5000).map(|i| uniform_vector(i, 24)).collect();
    let queries: Vec<Vec<f32>> = (0..30).map(|i| uniform_vector(1 << 40 | i, 24)).collect();
    let index = build(dir.path(), &vectors, 1, 1000);
    assert_eq!(index.segments()[0].vector_lists, Some(71));
    let exact10 = exact(&index, &queries, 10);
    let mut last = 0.0;
    let mut recalls = Vec::new();
    for probes in [
        Probes::Count(1),
        Probes::Count(4),
        Probes::default(),
        Probes::All,
    ] {
        let (found, _) = approximate(&index, &queries, 10, probes);
        let recall = mean_recall(&exact10, &found);
        recalls.push((probes, recall));
        assert!(recall >= last, "{recalls:?}");
        last = recall;
    }
    // No structure to find: recall grows with the share of lists probed, slowly.
    eprintln!("uniform vectors, recall@10 by probes: {recalls:?}");
    assert_eq!(last, 1.0);
    let (found, _) = approximate(&index, &queries, 10, Probes::Count(71));
    for (e, a) in exact10.iter().zip(&found) {
        assert_eq!(exactly(a), exactly(e));
    }
}

#[test]
fn identical_vectors_tie_as_exact_search_breaks_ties() {
    let dir = tempfile::tempdir().unwrap();
    // 4,990 copies of one unit vector among 10 other unit vectors.
    let same = vec![0.6f32, 0.0, 0.8, 0.0];
    let vectors: Vec<Vec<f32>> = (0..5000)
        .map(|i| {
            if i % 500 == 7 {
                unit_vector(i, 4)
            } else {
                same.clone()
            }
        })
        .collect();
    let index = build(dir.path(), &vectors, 1, 1000);
    assert!(index.segments()[0].vector_lists.is_some());
    let s = index.searcher();
    for q in [
        same.clone(),
        vec![1.0, 1.0, 1.0, 1.0],
        vec![-0.6, 0.1, -0.8, 0.0],
    ] {
        let exact = s.search_vector_exact(&q, 50).unwrap();
        let all = s.search_vector(&q, &opts(50, usize::MAX)).unwrap();
        assert_eq!(exactly(&all), exactly(&exact), "ties by ascending doc id");
        assert_eq!(s.search_vector(&q, &opts(50, 1)).unwrap().len(), 50);
    }
    // The copies are the best matches of their own vector: one probe may find other
    // copies than the lowest ids, never a lower score.
    let exact = s.search_vector_exact(&same, 50).unwrap();
    let some = s.search_vector(&same, &opts(50, 1)).unwrap();
    let scores = |h: &[Hit]| h.iter().map(|h| h.score.to_bits()).collect::<Vec<_>>();
    assert_eq!(scores(&some), scores(&exact));
}

/// Ties between lists: mirror images about the query's axis score the same and sit in
/// different lists, probed in either order; the lower doc id must still win.
#[test]
fn ties_between_lists_go_to_the_lower_doc_id() {
    let dir = tempfile::tempdir().unwrap();
    // Pairs (cos t, sin t) and (cos t, -sin t), the lower id above the axis for even
    // pairs, below it for odd ones.
    let vectors: Vec<Vec<f32>> = (0..2500)
        .flat_map(|i| {
            let t = 3.0 * i as f32 / 2500.0;
            let (c, s) = (t.cos(), t.sin());
            let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
            [vec![c, sign * s], vec![c, -sign * s]]
        })
        .collect();
    let index = build(dir.path(), &vectors, 1, 1000);
    assert_eq!(index.segments()[0].vector_lists, Some(71));
    let s = index.searcher();
    let q = [1.0f32, 0.0];
    for k in (1..60).step_by(2) {
        let exact = s.search_vector_exact(&q, k).unwrap();
        assert_eq!(exact[k - 1].doc % 2, 0, "the k-th is the first of a pair");
        let all = s.search_vector(&q, &opts(k, usize::MAX)).unwrap();
        assert_eq!(exactly(&all), exactly(&exact), "k {k}");
    }
}

#[test]
fn one_dimension_splits_the_lists_by_sign_and_finds_the_exact_answer() {
    let dir = tempfile::tempdir().unwrap();
    let vectors: Vec<Vec<f32>> = (0..5000)
        .map(|i| vec![uniform_vector(i, 1)[0] * 10.0])
        .collect();
    let index = build(dir.path(), &vectors, 1, 1000);
    assert_eq!(index.segments()[0].vector_lists, Some(71));
    let s = index.searcher();
    for q in [[0.7f32], [-2.0], [1e-3]] {
        let exact = s.search_vector_exact(&q, 10).unwrap();
        let hits = s
            .search_vector(&q, &VectorSearchOptions::default())
            .unwrap();
        assert_eq!(exactly(&hits), exactly(&exact), "query {q:?}");
    }
}

#[test]
fn the_same_documents_give_the_same_ivf_file_whatever_the_threads() {
    let (vectors, _) = mixture_vectors(5000, 16, 13);
    let files: Vec<Vec<u8>> = [1, 2, 1]
        .iter()
        .map(|&threads| {
            let dir = tempfile::tempdir().unwrap();
            let settings = IndexSettings {
                vector_dim: Some(16),
                ..Default::default()
            };
            let index = Index::create(dir.path(), settings).unwrap();
            let mut w = index.writer().unwrap();
            w.set_threads(threads).unwrap();
            w.set_ivf(IvfSettings { min_docs: 1000 });
            for (i, v) in vectors.iter().enumerate() {
                w.add(Document::new(format!("v{i}"), "", "").with_vector(v.clone()))
                    .unwrap();
            }
            w.commit().unwrap();
            let name = &index.segments()[0].name;
            std::fs::read(dir.path().join(format!("{name}.ivf"))).unwrap()
        })
        .collect();
    assert!(
        files[0] == files[1],
        "1 and 2 threads built different files"
    );
    assert!(files[0] == files[2], "two builds on 1 thread differ");
}
