//! Search options a caller may get wrong: BM25 parameters that would make scores
//! infinite, and a k far beyond the index. Every one is refused or clamped, never
//! turned into an abort or a ranking by doc id.

use heddle::{Bm25Params, Document, Error, Index, IndexSettings, SearchOptions};

/// Ten documents; "rare" is in one, so its idf (≈ 2) doubles k1 + 1 past f64::MAX at
/// k1 = 1e308.
fn index(dir: &std::path::Path) -> Index {
    let index = Index::create(dir, IndexSettings::default()).unwrap();
    let mut writer = index.writer().unwrap();
    for i in 0..10 {
        let text = if i == 3 { "rare common" } else { "common" };
        writer
            .add(Document::new(format!("d{i}"), "", text))
            .unwrap();
    }
    writer.commit().unwrap();
    index
}

fn opts(k: usize, k1: f64, b: f64) -> SearchOptions {
    SearchOptions {
        k,
        bm25: Bm25Params { k1, b },
        ..SearchOptions::default()
    }
}

#[test]
fn k1_that_would_make_scores_infinite_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let searcher = index(dir.path()).searcher();
    for (k1, b) in [
        (1e308, 0.75),
        (Bm25Params::MAX_K1 * 1.001, 0.75),
        (f64::INFINITY, 0.75),
        (f64::NAN, 0.75),
        (-0.1, 0.75),
        (1.2, f64::NAN),
        (1.2, 1.0001),
        (1.2, -0.0001),
        (1.2, f64::NEG_INFINITY),
    ] {
        for exhaustive in [false, true] {
            let result = if exhaustive {
                searcher.search_exhaustive("rare", &opts(10, k1, b))
            } else {
                searcher.search("rare", &opts(10, k1, b))
            };
            match result {
                Err(Error::InvalidArgument(msg)) => {
                    assert!(msg.contains("k1") || msg.contains(" b "), "{msg}")
                }
                other => panic!("k1 {k1}, b {b}: {other:?}"),
            }
        }
        assert!(Bm25Params::new(k1, b).is_err(), "k1 {k1}, b {b}");
    }
}

#[test]
fn the_largest_accepted_parameters_keep_every_score_finite() {
    let dir = tempfile::tempdir().unwrap();
    let searcher = index(dir.path()).searcher();
    for (k1, b) in [
        (Bm25Params::MAX_K1, 0.0),
        (Bm25Params::MAX_K1, 1.0),
        (0.0, 1.0),
    ] {
        assert_eq!(Bm25Params::new(k1, b).unwrap(), Bm25Params { k1, b });
        let hits = searcher
            .search("rare rare common", &opts(10, k1, b))
            .unwrap();
        assert_eq!(hits.len(), 10);
        assert_eq!(hits[0].id, "d3", "the rare term still ranks first");
        assert!(hits.iter().all(|h| h.score.is_finite()), "{hits:?}");
    }
}

#[test]
fn a_k_beyond_the_index_is_clamped_to_its_live_documents() {
    let dir = tempfile::tempdir().unwrap();
    let index = index(dir.path());
    let searcher = index.searcher();
    let all = searcher.search("common", &opts(10, 1.2, 0.75)).unwrap();
    assert_eq!(all.len(), 10);
    // 2^32 once asked the heap for 64 GB up front; usize::MAX overflowed `k + 1`.
    for k in [1usize << 32, usize::MAX] {
        assert_eq!(searcher.search("common", &opts(k, 1.2, 0.75)).unwrap(), all);
        assert_eq!(
            searcher
                .search_exhaustive("common", &opts(k, 1.2, 0.75))
                .unwrap(),
            all
        );
    }
}
