//! Dense vectors in the index: what goes in comes back with its id through commits,
//! reopening, deletes, upserts, merges and reordering; exact search finds the true top k
//! (checked against a brute force); a vector that does not fit is refused with an error
//! naming its document, and changes nothing.

mod common;

use std::path::Path;

use common::vectors::{DIM, assert_exact_top_k, unit_vector, vector_doc, vector_index};
use heddle::{
    BpConfig, Document, Error, Index, IndexSettings, Reorder, SearchOptions, VectorProblem,
    check_index,
};

/// Queries: random unit vectors, and a stored document's own vector (its best match).
fn queries() -> Vec<Vec<f32>> {
    let mut q: Vec<Vec<f32>> = (0..6).map(|i| unit_vector(10_000 + i, DIM)).collect();
    q.push(unit_vector(17, DIM)); // doc17's own
    q
}

/// Checks every query at several k against the live documents.
fn assert_all_exact(index: &Index, live: &[Document]) {
    let s = index.searcher();
    for q in queries() {
        for k in [1, 10, 1000] {
            let hits = s.search_vector_exact(&q, k).unwrap();
            assert_exact_top_k(&hits, live, &q, k);
        }
    }
}

/// `n` documents added in `segments` commits (merges off), returned in order.
fn build(dir: &Path, n: usize, segments: usize) -> (Index, Vec<Document>) {
    let index = vector_index(dir, DIM);
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    let docs: Vec<Document> = (0..n).map(vector_doc).collect();
    for chunk in docs.chunks(n.div_ceil(segments)) {
        for d in chunk {
            w.add(d.clone()).unwrap();
        }
        w.commit().unwrap();
    }
    (index, docs)
}

#[test]
fn vectors_survive_commit_and_reopen_and_exact_search_finds_the_true_top_k() {
    let dir = tempfile::tempdir().unwrap();
    let (index, docs) = build(dir.path(), 300, 3);
    assert_eq!(index.segments().len(), 3);
    assert_eq!(index.vector_dim(), Some(DIM));
    assert_all_exact(&index, &docs);
    drop(index);

    let reopened = Index::open(dir.path()).unwrap();
    assert_eq!(reopened.vector_dim(), Some(DIM));
    assert_eq!(reopened.searcher().vector_dim(), Some(DIM));
    assert_all_exact(&reopened, &docs);
    // A document's own vector is its best match, at the inner product of a unit vector
    // with itself.
    let hits = reopened
        .searcher()
        .search_vector_exact(&unit_vector(17, DIM), 1)
        .unwrap();
    assert_eq!(hits[0].id, "doc17");
    assert!((hits[0].score - 1.0).abs() < 1e-5, "{}", hits[0].score);
    assert_eq!(hits[0].title, "title 17");
    // Every segment has its vectors file; BM25 is unchanged beside it.
    let vec_files = common::file_names(dir.path())
        .into_iter()
        .filter(|n| n.ends_with(".vec"))
        .count();
    assert_eq!(vec_files, 3);
    assert!(
        !reopened
            .searcher()
            .search("vaccine", &SearchOptions::default())
            .unwrap()
            .is_empty()
    );
    assert!(check_index(dir.path()).is_ok());
}

#[test]
fn equal_scores_are_ranked_by_internal_doc_id_as_bm25_ties_are() {
    let dir = tempfile::tempdir().unwrap();
    let index = vector_index(dir.path(), 2);
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    // Added in this order across two segments: b and d tie with a and c.
    for (id, v) in [("c", [1.0, 0.0]), ("a", [0.0, 1.0])] {
        w.add(Document::new(id, "", "").with_vector(v.to_vec()))
            .unwrap();
    }
    w.commit().unwrap();
    for (id, v) in [("d", [0.5, 0.5]), ("b", [1.0, 0.0])] {
        w.add(Document::new(id, "", "").with_vector(v.to_vec()))
            .unwrap();
    }
    w.commit().unwrap();
    let hits = index
        .searcher()
        .search_vector_exact(&[1.0, 1.0], 4)
        .unwrap();
    let got: Vec<(&str, f64, u64)> = hits
        .iter()
        .map(|h| (h.id.as_str(), h.score, h.doc))
        .collect();
    assert_eq!(
        got,
        [("c", 1.0, 0), ("a", 1.0, 1), ("d", 1.0, 2), ("b", 1.0, 3)]
    );
}

#[test]
fn deleted_documents_are_never_found_and_upserts_bring_their_new_vector() {
    let dir = tempfile::tempdir().unwrap();
    let (index, docs) = build(dir.path(), 200, 2);
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    // doc17 is the best match of the last query; doc3 and doc150 are in either segment.
    for id in ["doc17", "doc3", "doc150"] {
        assert!(w.delete(id));
    }
    // doc40 now points the other way.
    let flipped: Vec<f32> = unit_vector(40, DIM).iter().map(|x| -x).collect();
    w.upsert(vector_doc(40).with_vector(flipped.clone()))
        .unwrap();
    w.commit().unwrap();
    let mut live: Vec<Document> = docs
        .into_iter()
        .filter(|d| !["doc17", "doc3", "doc150", "doc40"].contains(&d.id.as_str()))
        .collect();
    live.push(vector_doc(40).with_vector(flipped.clone()));
    assert_all_exact(&index, &live);
    let s = index.searcher();
    let all = s.search_vector_exact(&unit_vector(17, DIM), 1000).unwrap();
    assert_eq!(all.len(), 197);
    assert!(all.iter().all(|h| h.id != "doc17" && h.id != "doc3"));
    let best = s.search_vector_exact(&flipped, 1).unwrap();
    assert_eq!(best[0].id, "doc40");
    assert!((best[0].score - 1.0).abs() < 1e-5);
}

#[test]
fn merges_keep_each_vector_with_its_id_and_purge_the_deleted_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (index, docs) = build(dir.path(), 240, 4);
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    // Every document of the second segment, and a few of the others.
    let deleted: Vec<String> = (60..120)
        .chain([0, 5, 130, 239])
        .map(|i| format!("doc{i}"))
        .collect();
    for id in &deleted {
        assert!(w.delete(id));
    }
    w.commit().unwrap();
    let live: Vec<Document> = docs
        .into_iter()
        .filter(|d| !deleted.contains(&d.id))
        .collect();
    let stats = w.merge(1).unwrap().expect("four segments to merge");
    assert_eq!(stats.docs as usize, live.len());
    assert_eq!(stats.purged as usize, deleted.len());
    assert_eq!(index.segments().len(), 1);
    assert_eq!(index.segments()[0].vector_dim, Some(DIM as u32));
    assert_all_exact(&index, &live);
    let vec_files: Vec<String> = common::file_names(dir.path())
        .into_iter()
        .filter(|n| n.ends_with(".vec"))
        .collect();
    assert_eq!(
        vec_files.len(),
        1,
        "the sources' files are removed: {vec_files:?}"
    );
    // A merged file has one row per live document, nothing more.
    let bytes = std::fs::read(dir.path().join(&vec_files[0])).unwrap();
    assert_eq!(common::body_of(&bytes).len(), 8 + live.len() * DIM * 4);
    drop(w);
    assert_all_exact(&Index::open(dir.path()).unwrap(), &live);
    assert!(check_index(dir.path()).is_ok());
}

#[test]
fn reordered_segments_and_their_merges_keep_each_vector_with_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let index = vector_index(dir.path(), DIM);
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    w.set_reorder(Reorder::Bp(BpConfig {
        min_partition: 8,
        ..BpConfig::default()
    }));
    // Words shared by a tenth to a fifth of the documents, interleaved by id: a graph
    // that bisection reorders.
    let docs: Vec<Document> = (0..160)
        .map(|i| Document {
            text: format!("topic{} group{} kind{}", i % 8, i % 5, i % 7),
            ..vector_doc(i)
        })
        .collect();
    for chunk in docs.chunks(80) {
        for d in chunk {
            w.add(d.clone()).unwrap();
        }
        w.commit().unwrap();
    }
    // The reorder moved documents: doc ids are no longer insertion order.
    let s = index.searcher();
    let moved = (0..160).any(|i| {
        let hit = &s.search_vector_exact(&unit_vector(i, DIM), 1).unwrap()[0];
        hit.id != format!("doc{i}") || hit.doc != i
    });
    assert!(
        moved,
        "the reorder kept insertion order: the test proves nothing"
    );
    // Each document's own vector finds it first.
    for i in 0..160u64 {
        let hit = &s.search_vector_exact(&unit_vector(i, DIM), 1).unwrap()[0];
        assert_eq!(hit.id, format!("doc{i}"));
    }
    assert_all_exact(&index, &docs);
    w.delete("doc7");
    w.commit().unwrap();
    w.merge(1).unwrap().expect("two segments to merge");
    let live: Vec<Document> = docs.into_iter().filter(|d| d.id != "doc7").collect();
    assert_all_exact(&index, &live);
    assert!(check_index(dir.path()).is_ok());
}

/// The document vector error's id and problem.
fn refusal(result: heddle::Result<()>) -> (String, VectorProblem) {
    match result {
        Err(Error::DocumentVector { id, problem }) => (id, problem),
        other => panic!("expected a document vector error, got {other:?}"),
    }
}

#[test]
fn vectors_that_do_not_fit_are_refused_naming_the_document_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (index, _) = build(dir.path(), 10, 1);
    let mut w = index.writer().unwrap();
    let short = Document::new("short", "", "").with_vector(vec![0.5; DIM - 1]);
    assert_eq!(
        refusal(w.add(short)),
        (
            "short".to_string(),
            VectorProblem::Dimension {
                expected: DIM,
                found: DIM - 1
            }
        )
    );
    let missing = Document::new("bare", "", "text");
    assert_eq!(
        refusal(w.add(missing)),
        ("bare".to_string(), VectorProblem::Missing { dim: DIM })
    );
    let mut nan = unit_vector(1, DIM);
    nan[5] = f32::NAN;
    let (id, problem) = refusal(w.add(Document::new("nan", "", "").with_vector(nan)));
    assert_eq!(id, "nan");
    assert!(matches!(problem, VectorProblem::NotFinite { at: 5, value } if value.is_nan()));
    let mut inf = unit_vector(1, DIM);
    inf[DIM - 1] = f32::NEG_INFINITY;
    let err = w
        .add(Document::new("inf", "", "").with_vector(inf))
        .unwrap_err();
    assert!(err.to_string().contains("\"inf\""), "{err}");
    assert!(err.to_string().contains("component 23"), "{err}");
    assert_eq!(w.buffered(), 0, "a refused document is not buffered");

    // An upsert whose vector is refused deletes nothing.
    let bad = Document::new("doc3", "", "").with_vector(vec![1.0; 3]);
    assert!(matches!(w.upsert(bad), Err(Error::DocumentVector { .. })));
    w.commit().unwrap();
    assert_eq!(index.num_docs(), 10);
    assert!(
        index
            .searcher()
            .search_vector_exact(&unit_vector(3, DIM), 1)
            .unwrap()[0]
            .id
            == "doc3"
    );
}

#[test]
fn an_index_without_vectors_refuses_them_in_documents_and_queries() {
    let dir = tempfile::tempdir().unwrap();
    let index = common::english_index(dir.path(), false);
    assert_eq!(index.vector_dim(), None);
    let mut w = index.writer().unwrap();
    assert_eq!(
        refusal(w.add(vector_doc(1))),
        ("doc1".to_string(), VectorProblem::NoVectors)
    );
    w.add(Document::new("plain", "", "text")).unwrap();
    w.commit().unwrap();
    assert!(
        common::file_names(dir.path())
            .iter()
            .all(|n| !n.ends_with(".vec")),
        "no vectors, no vectors file"
    );
    let err = index.searcher().search_vector_exact(&[1.0], 1).unwrap_err();
    assert!(
        matches!(
            err,
            Error::QueryVector {
                problem: VectorProblem::NoVectors
            }
        ),
        "{err}"
    );
    let manifest = std::fs::read_to_string(dir.path().join("MANIFEST")).unwrap_or_default();
    assert!(
        !manifest.contains("vector"),
        "manifests without vectors are as before"
    );
}

#[test]
fn query_vectors_must_fit_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let (index, _) = build(dir.path(), 5, 1);
    let s = index.searcher();
    let err = s.search_vector_exact(&[1.0; DIM + 1], 3).unwrap_err();
    assert!(
        matches!(
            err,
            Error::QueryVector {
                problem: VectorProblem::Dimension { expected: DIM, found }
            } if found == DIM + 1
        ),
        "{err}"
    );
    let mut nan = vec![0.0; DIM];
    nan[0] = f32::NAN;
    assert!(matches!(
        s.search_vector_exact(&nan, 3),
        Err(Error::QueryVector {
            problem: VectorProblem::NotFinite { at: 0, .. }
        })
    ));
    assert!(s.search_vector_exact(&[0.0; DIM], 0).unwrap().is_empty());
    assert_eq!(
        s.search_vector_exact(&[0.0; DIM], usize::MAX)
            .unwrap()
            .len(),
        5
    );
}

#[test]
fn an_impossible_dimension_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    for dim in [0, heddle::MAX_VECTOR_DIM + 1] {
        let dir = tmp.path().join(format!("idx{dim}"));
        let settings = IndexSettings {
            vector_dim: Some(dim),
            ..Default::default()
        };
        let err = Index::create(&dir, settings).err().expect("refused");
        assert!(err.to_string().contains("vector dimension"), "{err}");
        assert!(!dir.exists(), "nothing created for dimension {dim}");
    }
}

#[test]
fn a_rebuild_can_give_an_index_vectors_and_a_rollback_takes_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let index = common::english_index(dir.path(), false);
    let mut w = index.writer().unwrap();
    w.add(Document::new("old", "", "text")).unwrap();
    w.commit().unwrap();
    let with_vectors = IndexSettings {
        vector_dim: Some(DIM),
        ..Default::default()
    };
    w.reset(with_vectors.clone()).unwrap();
    assert!(matches!(
        w.add(Document::new("bare", "", "")),
        Err(Error::DocumentVector { .. })
    ));
    w.rollback();
    w.add(Document::new("bare", "", "")).unwrap();
    w.rollback();
    w.reset(with_vectors).unwrap();
    let docs: Vec<Document> = (0..20).map(vector_doc).collect();
    for d in &docs {
        w.add(d.clone()).unwrap();
    }
    w.commit().unwrap();
    assert_eq!(index.vector_dim(), Some(DIM));
    assert_all_exact(&index, &docs);
    assert!(matches!(
        w.add(Document::new("bare", "", "")),
        Err(Error::DocumentVector { .. })
    ));
}

#[test]
fn buffered_vectors_count_in_the_memory_budget_and_flushed_segments_keep_them() {
    let dir = tempfile::tempdir().unwrap();
    let dim = 4096; // 16 KiB a document, far more than its text
    let index = vector_index(dir.path(), dim);
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    let before = w.memory_used();
    let doc =
        |i: usize| Document::new(format!("v{i}"), "", "x").with_vector(unit_vector(i as u64, dim));
    w.add(doc(0)).unwrap();
    assert!(
        w.memory_used() - before >= dim * 4,
        "a buffered vector is counted: {} bytes",
        w.memory_used() - before
    );
    w.set_memory_budget(heddle::MIN_MEMORY_BUDGET);
    let docs: Vec<Document> = (0..200).map(doc).collect();
    for d in &docs[1..] {
        w.add(d.clone()).unwrap();
    }
    // 200 × 16 KiB is over 3 MiB: a 1 MiB budget flushed several segments.
    assert!(
        w.flushed_segments() >= 2,
        "{} flushed",
        w.flushed_segments()
    );
    assert!(w.memory_high_water() < 3 * heddle::MIN_MEMORY_BUDGET);
    w.commit().unwrap();
    assert!(index.segments().len() >= 3);
    let s = index.searcher();
    for i in [0u64, 77, 199] {
        let q = unit_vector(i, dim);
        let hits = s.search_vector_exact(&q, 5).unwrap();
        assert_exact_top_k(&hits, &docs, &q, 5);
    }
}

/// A vectors file no manifest names (a crashed commit's) is heddle's: the next writer
/// removes it, as it removes the segment's other files.
#[test]
fn a_leftover_vectors_file_is_removed_by_the_next_writer() {
    let dir = tempfile::tempdir().unwrap();
    let (index, docs) = build(dir.path(), 10, 1);
    let stray = dir.path().join("seg-000099.vec");
    std::fs::write(&stray, b"left by a crash").unwrap();
    let notes = dir.path().join("seg-notes.vec");
    std::fs::write(&notes, b"a user's").unwrap();
    drop(index.writer().unwrap());
    assert!(!stray.exists());
    assert!(notes.exists(), "not a name heddle writes: left alone");
    assert_all_exact(&index, &docs);
}

/// The `*_docs` searches rank exactly as the searches that read stored fields, and
/// `resolve` gives back the same hits; a doc id outside the snapshot is an error.
#[test]
fn doc_id_searches_rank_as_the_hit_searches_and_resolve_to_the_same_hits() {
    let dir = tempfile::tempdir().unwrap();
    let (index, docs) = build(dir.path(), 300, 3);
    let s = index.searcher();
    let as_pairs = |hits: &[heddle::Hit]| -> Vec<(u64, f64)> {
        hits.iter().map(|h| (h.doc, h.score)).collect()
    };
    let resolved = |pairs: &[(u64, f64)]| -> Vec<heddle::Hit> {
        pairs
            .iter()
            .map(|&(d, sc)| s.resolve(d, sc).unwrap())
            .collect()
    };
    for q in queries() {
        let hits = s.search_vector_exact(&q, 50).unwrap();
        let docs_only = s.search_vector_exact_docs(&q, 50).unwrap();
        assert_eq!(docs_only, as_pairs(&hits));
        assert_eq!(resolved(&docs_only), hits);
        let opts = heddle::VectorSearchOptions::top(50);
        let approx = s.search_vector(&q, &opts).unwrap();
        assert_eq!(s.search_vector_docs(&q, &opts).unwrap(), as_pairs(&approx));
    }
    let text = &docs[5].text;
    let opts = SearchOptions {
        k: 100,
        ..Default::default()
    };
    let hits = s.search(text, &opts).unwrap();
    assert!(!hits.is_empty());
    let docs_only = s.search_docs(text, &opts).unwrap();
    assert_eq!(docs_only, as_pairs(&hits));
    assert_eq!(resolved(&docs_only), hits);
    assert!(s.resolve(u64::MAX, 1.0).is_err());
    assert!(s.resolve(300, 1.0).is_err(), "one past the last document");
    assert!(
        s.resolve(299 + (1 << 32), 1.0).is_err(),
        "not truncated onto doc 299"
    );
}
