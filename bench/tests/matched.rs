//! Matched analysis end to end, in process: both engines index the fixture with heddle's
//! tokens and answer the same bag-of-words question with the same BM25.

mod common;

use std::collections::HashSet;
use std::path::Path;

use heddle::{Analyzer, AnalyzerConfig};
use heddle_bench::analysis::Analysis;
use heddle_bench::engines::{BuildOptions, Engine, ScoredHit, TantivyBackend};
use heddle_bench::reference::{self, CollectionStats};

fn options(threads: usize) -> BuildOptions {
    common::matched_build(threads, 1, 64 << 20)
}

fn queries(dir: &Path) -> Vec<String> {
    heddle_corpus::beir::open_queries(dir.join("queries.jsonl"))
        .unwrap()
        .map(|q| q.unwrap().text)
        .collect()
}

fn close(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance * a.abs().max(b.abs()).max(1e-12)
}

#[test]
fn with_lengths_under_41_both_engines_rank_and_score_alike() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    common::write_fixture(&data, 800, 40, 11, false);
    let corpus = data.join("corpus.jsonl");
    // One indexing thread: tantivy's doc ids follow the corpus, as heddle's do, so ties
    // break alike (up to tantivy's f32 rounding).
    let h = Engine::Heddle
        .build(&corpus, &dir.path().join("h"), &options(1))
        .unwrap();
    let t = Engine::Tantivy
        .build(&corpus, &dir.path().join("t"), &options(1))
        .unwrap();
    assert_eq!((h.docs, t.docs), (800, 800));
    assert_eq!((h.segments, t.segments), (1, 1));
    let he = Engine::Heddle
        .scored(&dir.path().join("h"), Analysis::Matched)
        .unwrap();
    let te = Engine::Tantivy
        .scored(&dir.path().join("t"), Analysis::Matched)
        .unwrap();
    let (mut compared, mut same_place) = (0, 0);
    for q in queries(&data) {
        let a = he.search_scored(&q, 20).unwrap();
        let b = te.search_scored(&q, 20).unwrap();
        assert_eq!(a.len(), b.len(), "{q:?}");
        // Rank by rank the same scores (tantivy's in f32)...
        for (x, y) in a.iter().zip(&b) {
            assert!(close(x.score, y.score, 1e-5), "{q:?}: {x:?} vs {y:?}");
            same_place += usize::from(x.id == y.id);
        }
        // ...and each document its own score: two documents may swap places only when
        // their scores are equal to f32 precision.
        let cut = |l: &[ScoredHit]| l.last().map_or(0.0, |h| h.score);
        for x in &a {
            match b.iter().find(|y| y.id == x.id) {
                Some(y) => assert!(close(x.score, y.score, 1e-5), "{q:?}: {x:?} vs {y:?}"),
                None => assert!(close(x.score, cut(&a), 1e-5), "{q:?}: {x:?} only in heddle"),
            }
        }
        compared += a.len();
    }
    assert!(compared > 400, "the queries match documents: {compared}");
    assert!(
        same_place * 100 >= compared * 98,
        "{same_place} of {compared} in place"
    );
}

#[test]
fn with_longer_documents_the_reference_reproduces_each_engines_scores() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    common::write_fixture(&data, 1_500, 30, 12, true);
    let corpus = data.join("corpus.jsonl");
    Engine::Heddle
        .build(&corpus, &dir.path().join("h"), &options(2))
        .unwrap();
    // Two threads: a segment each, merged down to heddle's one.
    let t = Engine::Tantivy
        .build(
            &corpus,
            &dir.path().join("t"),
            &BuildOptions {
                memory_bytes: 32 << 20,
                ..options(2)
            },
        )
        .unwrap();
    assert_eq!(t.segments, 1);

    let he = Engine::Heddle
        .scored(&dir.path().join("h"), Analysis::Matched)
        .unwrap();
    let tantivy = TantivyBackend::open(&dir.path().join("t"), Analysis::Matched).unwrap();
    let analyzer = Analyzer::new(AnalyzerConfig::english());
    let all: HashSet<String> = (0..1_500).map(|i| format!("d{i}")).collect();
    let docs = reference::read_docs(&corpus, &all, &analyzer).unwrap();
    assert!(
        docs.values().any(|d| d.len > 100),
        "some documents are long"
    );
    let mut differing = 0;
    for q in queries(&data) {
        let terms = reference::query_terms(&analyzer, &q);
        let stats: CollectionStats = tantivy
            .collection_stats(terms.keys().map(String::as_str))
            .unwrap();
        let a = he.search_scored(&q, 10).unwrap();
        let b = heddle_bench::engines::ScoredSearch::search_scored(&tantivy, &q, 10).unwrap();
        for h in &a {
            let want = reference::score_exact(&stats, &terms, &docs[&h.id]);
            assert!(close(h.score, want, 1e-9), "heddle {q:?} {h:?}: {want}");
        }
        for h in &b {
            let want = reference::score_coded(&stats, &terms, &docs[&h.id]);
            assert!(close(h.score, want, 1e-5), "tantivy {q:?} {h:?}: {want}");
        }
        if a.iter().zip(&b).any(|(x, y)| x.id != y.id) {
            differing += 1;
        }
    }
    // Not a requirement, but the point of the test: the length code does reorder.
    eprintln!("{differing} of 30 queries ordered differently");
}

#[test]
fn native_mode_indexes_tantivys_own_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    common::write_fixture(&data, 200, 5, 13, false);
    let corpus = data.join("corpus.jsonl");
    let native = BuildOptions {
        analysis: Analysis::Native,
        ..options(1)
    };
    Engine::Tantivy
        .build(&corpus, &dir.path().join("t"), &native)
        .unwrap();
    let t = TantivyBackend::open(&dir.path().join("t"), Analysis::Native).unwrap();
    // en_stem keeps stop words: "the" is a term of every document; heddle drops it.
    let stats = t.collection_stats(["the"]).unwrap();
    assert!(stats.df["the"] > 150, "{:?}", stats.df);
    let hits = heddle_bench::engines::ScoredSearch::search_scored(&t, "the vaccines", 5).unwrap();
    assert_eq!(hits.len(), 5);
}
