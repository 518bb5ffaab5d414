//! Damaged graph files (`seg-N.hnsw`), and damaged rows an approximate search scores: a
//! typed error naming the file and the defect, never a panic or a wrong score. The
//! header's chunk is verified and the header checked against the manifest at open; the
//! whole file's checksums and its structure by the first approximate search that walks
//! it; BM25, exact search and the exhaustive effort never read the file. `check_index`
//! finds each kind of damage. A graph that is sound in structure but links the wrong
//! neighbours (which no check can see) changes what a search finds, never a score.

mod common;
mod graph_layout;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::error_path;
use common::vectors::{DIM, unit_vector, vector_doc, vector_index};
use graph_layout::{Layout, set_u32, u32_at};
use heddle::{
    Error, GraphSettings, Index, SearchEffort, SearchOptions, VectorSearchOptions, check_index,
};

/// Documents in each segment.
const DOCS: usize = 300;
/// The graphs' `m`: small, so that 300 documents reach several layers.
const M: usize = 4;

/// The graphs' settings: a graph for each segment.
const GRAPH: GraphSettings = GraphSettings {
    min_docs: 100,
    m: M as u32,
    ef_construction: 32,
};

/// A vector index of two segments of 300 documents, each with a graph file, and a
/// delete file (doc3); with `shift`, every file rewritten in chunks of 2^shift bytes.
/// Returns the graph files and the vectors files, in segment order.
fn build(shift: Option<u32>) -> (tempfile::TempDir, Vec<PathBuf>, Vec<PathBuf>) {
    build_with(shift, true)
}

/// [`build`], with or without the delete of doc3 (in the first segment: without it, a
/// merge keeps the first segment's graph).
fn build_with(
    shift: Option<u32>,
    delete_doc3: bool,
) -> (tempfile::TempDir, Vec<PathBuf>, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let index = vector_index(dir.path(), DIM);
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    w.set_graph(GRAPH).unwrap();
    for range in [0..DOCS, DOCS..2 * DOCS] {
        for i in range {
            w.add(vector_doc(i)).unwrap();
        }
        w.commit().unwrap();
    }
    if delete_doc3 {
        w.delete("doc3");
        w.commit().unwrap();
    }
    drop(w);
    assert!(index.segments().iter().all(|s| s.vector_graph));
    let files: Vec<PathBuf> = common::file_names(dir.path())
        .into_iter()
        .filter(|n| n != "LOCK")
        .map(|n| dir.path().join(n))
        .collect();
    if let Some(shift) = shift {
        for f in &files {
            common::rechunk(f, shift);
        }
    }
    let with = |ext: &str| -> Vec<PathBuf> {
        files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .cloned()
            .collect()
    };
    let (graphs, vecs) = (with("hnsw"), with("vec"));
    assert_eq!((graphs.len(), vecs.len()), (2, 2));
    let layout = Layout::parse(common::body_of(&std::fs::read(&graphs[0]).unwrap()));
    assert!(layout.layers() >= 3, "300 documents at m 4: {layout:?}");
    (dir, graphs, vecs)
}

type Answers = Vec<Vec<(String, u64)>>;

const QUERIES: [u64; 3] = [5, 160, 999];

fn ann_answers(dir: &Path) -> heddle::Result<Answers> {
    answers_at(dir, SearchEffort::default())
}

fn answers_at(dir: &Path, effort: SearchEffort) -> heddle::Result<Answers> {
    let s = Index::open(dir)?.searcher();
    QUERIES
        .iter()
        .map(|&q| {
            let opts = VectorSearchOptions { k: 10, effort };
            Ok(s.search_vector(&unit_vector(q, DIM), &opts)?
                .into_iter()
                .map(|h| (h.id, h.score.to_bits()))
                .collect())
        })
        .collect()
}

fn exact_answers(dir: &Path, k: usize) -> heddle::Result<Answers> {
    let s = Index::open(dir)?.searcher();
    QUERIES
        .iter()
        .map(|&q| {
            Ok(s.search_vector_exact(&unit_vector(q, DIM), k)?
                .into_iter()
                .map(|h| (h.id, h.score.to_bits()))
                .collect())
        })
        .collect()
}

fn text_answers(dir: &Path) -> heddle::Result<Answers> {
    let s = Index::open(dir)?.searcher();
    ["virus mask", "hospital bat"]
        .iter()
        .map(|q| {
            Ok(s.search(q, &SearchOptions::default())?
                .into_iter()
                .map(|h| (h.id, h.score.to_bits()))
                .collect())
        })
        .collect()
}

fn assert_names(result: heddle::Result<Answers>, file: &Path, what: &str) -> Error {
    let err = result.expect_err(what);
    assert_eq!(error_path(&err), Some(file), "{what}: {err}");
    err
}

/// Asserts that `check_index` reports exactly one problem, naming `file`, whose message
/// contains `defect`.
fn check_finds(dir: &Path, file: &Path, what: &str, defect: &str) {
    let report = check_index(dir);
    assert_eq!(report.problems.len(), 1, "{what}: {:?}", report.problems);
    assert_eq!(error_path(&report.problems[0]), Some(file), "{what}");
    let message = report.problems[0].to_string();
    assert!(message.contains(defect), "{what}: {message}");
}

#[test]
fn any_flipped_byte_of_a_graph_file_fails_approximate_search_naming_it() {
    let (dir, files, _) = build(None);
    let sound = ann_answers(dir.path()).unwrap();
    for file in &files {
        let original = std::fs::read(file).unwrap();
        for at in (0..original.len()).step_by(7).chain([original.len() - 1]) {
            let mut bytes = original.clone();
            bytes[at] ^= 1 << (at % 8);
            std::fs::write(file, &bytes).unwrap();
            assert_names(
                ann_answers(dir.path()),
                file,
                &format!("{file:?} byte {at}"),
            );
        }
        std::fs::write(file, &original).unwrap();
    }
    assert_eq!(ann_answers(dir.path()).unwrap(), sound);
}

#[test]
fn with_small_chunks_any_damage_past_the_header_fails_the_first_walk_and_nothing_else() {
    let (dir, files, _) = build(Some(6));
    let text = text_answers(dir.path()).unwrap();
    let exact = exact_answers(dir.path(), 10).unwrap();
    assert_eq!(
        answers_at(dir.path(), SearchEffort::Exhaustive).unwrap(),
        exact
    );
    let file = &files[1];
    let original = std::fs::read(file).unwrap();
    let body_len = common::body_of(&original).len();
    // Past the header's 64-byte chunk: the first walk verifies the whole file, so a
    // flip anywhere fails it, whether or not the walk would have read that record.
    for at in (64..body_len).step_by(53).chain([body_len - 1]) {
        let mut bytes = original.clone();
        bytes[at] ^= 0x10;
        std::fs::write(file, &bytes).unwrap();
        assert_eq!(text_answers(dir.path()).unwrap(), text, "byte {at}");
        assert_eq!(exact_answers(dir.path(), 10).unwrap(), exact, "byte {at}");
        assert_eq!(
            answers_at(dir.path(), SearchEffort::Exhaustive).unwrap(),
            exact,
            "byte {at}: the exhaustive effort never reads the graph"
        );
        let err = assert_names(ann_answers(dir.path()), file, &format!("byte {at}"));
        assert!(matches!(err, Error::ChecksumMismatch { .. }), "{err}");
    }
    std::fs::write(file, &original).unwrap();
    ann_answers(dir.path()).unwrap();
}

#[test]
fn a_truncated_or_missing_graph_file_fails_the_open_naming_it() {
    let (dir, files, _) = build(None);
    let file = &files[0];
    let original = std::fs::read(file).unwrap();
    let n = original.len();
    for keep in [0, 1, 19, 20, 21, n / 3, n / 2, n - 25, n - 24, n - 1] {
        std::fs::write(file, &original[..keep]).unwrap();
        assert_names(text_answers(dir.path()), file, &format!("cut to {keep}"));
        let report = check_index(dir.path());
        assert!(
            report
                .problems
                .iter()
                .any(|e| error_path(e) == Some(file.as_path())),
            "check misses a cut to {keep}: {:?}",
            report.problems
        );
    }
    std::fs::remove_file(file).unwrap();
    let err = assert_names(text_answers(dir.path()), file, "missing");
    assert!(matches!(err, Error::Io { .. }), "{err}");
    let report = check_index(dir.path());
    assert!(
        report
            .problems
            .iter()
            .any(|e| error_path(e) == Some(file.as_path())),
        "check misses a missing file: {:?}",
        report.problems
    );
    std::fs::write(file, &original).unwrap();
    assert!(check_index(dir.path()).is_ok());
}

#[test]
fn check_reports_a_flipped_byte_in_a_graph_file() {
    let (dir, files, _) = build(None);
    assert!(check_index(dir.path()).is_ok());
    let file = &files[1];
    let mut bytes = std::fs::read(file).unwrap();
    bytes[700] ^= 4;
    std::fs::write(file, &bytes).unwrap();
    let report = check_index(dir.path());
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    assert!(matches!(report.problems[0], Error::ChecksumMismatch { .. }));
    assert_eq!(error_path(&report.problems[0]), Some(file.as_path()));
}

/// A document of layer `l - 1` that is not on layer `l`, below `before`.
fn not_on(g: &Layout, l: usize, before: u32) -> u32 {
    let on = g.nodes(l);
    g.nodes(l - 1)
        .into_iter()
        .find(|d| *d < before && on.binary_search(d).is_err())
        .expect("most documents of a layer stay below it")
}

type Edit = fn(&mut Vec<u8>) -> String;

/// Structural damage the header does not show, each resealed with valid checksums, and
/// the words of the error that must name it (`{}` filled by the edit).
fn structural_edits() -> Vec<(&'static str, Edit)> {
    vec![
        ("a neighbour past the segment", |b| {
            let g = Layout::parse(b);
            set_u32(b, g.record_at(0, 0), 1);
            set_u32(b, g.record_at(0, 0) + 4, DOCS as u32);
            format!("layer 0: document 0 names neighbour {DOCS}, not on the layer")
        }),
        ("more neighbours than layer 0 holds", |b| {
            let g = Layout::parse(b);
            set_u32(b, g.record_at(0, 7), 2 * M as u32 + 1);
            format!(
                "layer 0: document 7 has {} neighbours, at most {}",
                2 * M + 1,
                2 * M
            )
        }),
        ("more neighbours than layer 1 holds", |b| {
            let g = Layout::parse(b);
            set_u32(b, g.record_at(1, 0), M as u32 + 1);
            let node = g.nodes(1)[0];
            format!(
                "layer 1: document {node} has {} neighbours, at most {M}",
                M + 1
            )
        }),
        ("a neighbour on layer 1 that is not on it", |b| {
            let g = Layout::parse(b);
            let stranger = not_on(&g, 1, DOCS as u32);
            let at = g.record_at(1, 0);
            set_u32(b, at, 1);
            set_u32(b, at + 4, stranger);
            let node = g.nodes(1)[0];
            format!("layer 1: document {node} names neighbour {stranger}, not on the layer")
        }),
        ("a node of layer 2 missing from layer 1", |b| {
            let g = Layout::parse(b);
            let ids = g.nodes(2);
            let before = ids.get(1).copied().unwrap_or(DOCS as u32);
            let stranger = not_on(&g, 1, before);
            set_u32(b, g.upper[1].ids_at, stranger);
            format!("layer 2 holds document {stranger}, which layer 1 does not")
        }),
        ("layer 1's ids out of order", |b| {
            let g = Layout::parse(b);
            let ids = g.nodes(1);
            set_u32(b, g.upper[0].ids_at, ids[1]);
            set_u32(b, g.upper[0].ids_at + 4, ids[0]);
            format!("layer 1: document {} after Some({})", ids[0], ids[1])
        }),
        ("layer 1 holding a document twice", |b| {
            let g = Layout::parse(b);
            let ids = g.nodes(1);
            set_u32(b, g.upper[0].ids_at + 4, ids[0]);
            format!("layer 1: document {0} after Some({0})", ids[0])
        }),
        ("a document past the segment on layer 1", |b| {
            let g = Layout::parse(b);
            let last = g.nodes(1).len() - 1;
            set_u32(b, g.upper[0].ids_at + 4 * last, DOCS as u32);
            format!("layer 1: document {DOCS} after")
        }),
        ("an empty layer", |b| {
            let g = Layout::parse(b);
            set_u32(b, g.upper[0].size_at, 0);
            format!("layer 1 holds 0 documents of {DOCS}")
        }),
        ("the entry point below the top layer", |b| {
            let g = Layout::parse(b);
            let top = g.layers() - 1;
            let below = not_on(&g, top, DOCS as u32);
            set_u32(b, 16, below);
            format!("entry point {below} is not on the top layer")
        }),
        ("bytes after the last layer", |b| {
            b.extend_from_slice(&[0; 8]);
            "8 bytes after the last layer".to_string()
        }),
        ("a layer more than the file holds", |b| {
            let layers = u32_at(b, 12);
            set_u32(b, 12, layers + 1);
            "vector graph layer size".to_string()
        }),
    ]
}

#[test]
fn resealed_structural_damage_is_refused_by_the_first_walk_and_by_check() {
    for (what, edit) in structural_edits() {
        let (dir, files, _) = build(None);
        let text = text_answers(dir.path()).unwrap();
        let exact = exact_answers(dir.path(), 10).unwrap();
        let file = &files[1];
        let mut defect = String::new();
        common::reseal(file, |b| defect = edit(b));
        // The structure is read by the first walk, not at open.
        assert_eq!(text_answers(dir.path()).unwrap(), text, "{what}");
        assert_eq!(exact_answers(dir.path(), 10).unwrap(), exact, "{what}");
        let err = assert_names(ann_answers(dir.path()), file, what);
        let message = err.to_string();
        assert!(message.contains(&defect), "{what}: {message}");
        check_finds(dir.path(), file, what, &defect);
    }
}

#[test]
fn a_resealed_header_that_disagrees_with_the_manifest_or_the_bounds_fails_the_open() {
    let edits: [(&str, Edit); 9] = [
        ("more documents", |b| {
            set_u32(b, 0, DOCS as u32 + 1);
            format!("a graph of {} documents, manifest says {DOCS}", DOCS + 1)
        }),
        ("another dimension", |b| {
            set_u32(b, 4, DIM as u32 - 1);
            format!(
                "a graph of {}-dimension vectors, manifest says {DIM}",
                DIM - 1
            )
        }),
        ("m below its bound", |b| {
            set_u32(b, 8, 1);
            "m 1: not 2 to 128".to_string()
        }),
        ("m above its bound", |b| {
            set_u32(b, 8, 129);
            "m 129: not 2 to 128".to_string()
        }),
        ("no layer", |b| {
            set_u32(b, 12, 0);
            "0 layers: not 1 to 32".to_string()
        }),
        ("too many layers", |b| {
            set_u32(b, 12, 33);
            "33 layers: not 1 to 32".to_string()
        }),
        ("the entry point past the segment", |b| {
            set_u32(b, 16, DOCS as u32);
            format!("entry point {DOCS} of a graph of {DOCS} documents")
        }),
        ("a larger m than layer 0 has room for", |b| {
            set_u32(b, 8, 64);
            "vector graph".to_string()
        }),
        ("layer 0 cut short", |b| {
            b.truncate(graph_layout::HEADER_LEN + 4 * DOCS * (1 + 2 * M) - 4);
            "vector graph".to_string()
        }),
    ];
    for (what, edit) in edits {
        let (dir, files, _) = build(None);
        let file = &files[0];
        let mut defect = String::new();
        common::reseal(file, |b| defect = edit(b));
        let err = assert_names(text_answers(dir.path()), file, what);
        assert!(
            matches!(err, Error::Corrupt { .. } | Error::Truncated { .. }),
            "{what}: {err}"
        );
        assert!(err.to_string().contains(&defect), "{what}: {err}");
        check_finds(dir.path(), file, what, &defect);
    }
}

#[test]
fn a_manifest_that_names_no_graph_for_a_segment_scans_it_and_leaves_its_file_to_be_removed() {
    let (dir, files, _) = build(None);
    let exact = exact_answers(dir.path(), 10).unwrap();
    common::rewrite_manifest(dir.path(), |m| {
        m["segments"][0]
            .as_object_mut()
            .unwrap()
            .remove("vector_graph");
    });
    let index = Index::open(dir.path()).unwrap();
    let s = index.searcher();
    let (hits, stats) = s
        .search_vector_with_stats(&unit_vector(5, DIM), &VectorSearchOptions::default())
        .unwrap();
    assert_eq!((stats.segments_scanned, stats.segments_walked), (1, 1));
    assert!(stats.rows_scored >= DOCS as u64);
    let got: Vec<(String, u64)> = hits
        .into_iter()
        .map(|h| (h.id, h.score.to_bits()))
        .collect();
    // doc5's own vector: its nearest are in the scanned segment, found exactly.
    assert_eq!(got[0], exact[0][0]);
    drop(index.writer().unwrap());
    assert!(
        !files[0].exists(),
        "a graph file no manifest names is removed"
    );
    assert!(files[1].exists());
}

/// Every live document's exact score bits for each query, by id.
fn exact_scores(dir: &Path) -> Vec<HashMap<String, u64>> {
    exact_answers(dir, 2 * DOCS)
        .unwrap()
        .into_iter()
        .map(|a| a.into_iter().collect())
        .collect()
}

#[test]
fn a_sound_graph_linking_the_wrong_neighbours_still_scores_every_hit_exactly() {
    let (dir, files, _) = build(None);
    let scores = exact_scores(dir.path());
    // Every document of both graphs linked to 2m others picked by a stride, not by
    // nearness: valid in structure (check cannot tell), wrong in meaning.
    for file in &files {
        common::reseal(file, |b| {
            let g = Layout::parse(b);
            for d in 0..DOCS {
                let at = g.record_at(0, d);
                set_u32(b, at, 2 * M as u32);
                for i in 0..2 * M {
                    let n = (d + 1 + 37 * i) % DOCS;
                    set_u32(b, at + 4 + 4 * i, n as u32);
                }
            }
        });
    }
    assert!(check_index(dir.path()).is_ok());
    let s = Index::open(dir.path()).unwrap().searcher();
    for (&q, scores) in QUERIES.iter().zip(&scores) {
        for ef in [1, 10, 64] {
            let opts = VectorSearchOptions {
                k: 10,
                effort: SearchEffort::Candidates(ef),
            };
            let (hits, stats) = s
                .search_vector_with_stats(&unit_vector(q, DIM), &opts)
                .unwrap();
            assert_eq!(stats.segments_walked, 2);
            assert_eq!(hits.len(), 10, "query {q}, ef {ef}");
            for h in &hits {
                assert_eq!(
                    scores.get(&h.id),
                    Some(&h.score.to_bits()),
                    "query {q}, ef {ef}: {} scored {}",
                    h.id,
                    h.score
                );
            }
        }
    }
}

#[test]
fn a_graph_cut_into_single_documents_falls_back_to_an_exact_scan() {
    let (dir, files, _) = build(None);
    let exact = exact_answers(dir.path(), 10).unwrap();
    let scores = exact_scores(dir.path());
    // No document links to any other, on any layer: a walk finds the entry point only.
    for file in &files {
        common::reseal(file, |b| {
            let g = Layout::parse(b);
            for l in 0..g.layers() {
                for slot in 0..g.nodes(l).len() {
                    set_u32(b, g.record_at(l, slot), 0);
                }
            }
        });
    }
    assert!(check_index(dir.path()).is_ok());
    let in_second = |id: &str| id[3..].parse::<usize>().unwrap() >= DOCS;
    let s = Index::open(dir.path()).unwrap().searcher();
    for (&q, scores) in QUERIES.iter().zip(&scores) {
        let (hits, stats) = s
            .search_vector_with_stats(&unit_vector(q, DIM), &VectorSearchOptions::default())
            .unwrap();
        // k live hits, each with its exact score.
        assert_eq!(hits.len(), 10, "query {q}");
        for h in &hits {
            assert_eq!(scores.get(&h.id), Some(&h.score.to_bits()), "{}", h.id);
        }
        // The larger segment (the second: the first lost doc3) is walked first; its walk
        // finds one document, so it is scanned exactly: its hits are its exact best.
        assert_eq!(stats.segments_walked, 2, "{stats:?}");
        assert!(stats.segments_scanned >= 1, "{stats:?}");
        assert!(stats.rows_scored > DOCS as u64, "{stats:?}");
        let second: Vec<&str> = hits
            .iter()
            .map(|h| h.id.as_str())
            .filter(|id| in_second(id))
            .collect();
        let mut best_of_second: Vec<(&String, &u64)> =
            scores.iter().filter(|(id, _)| in_second(id)).collect();
        best_of_second.sort_by(|a, b| f64::from_bits(*b.1).total_cmp(&f64::from_bits(*a.1)));
        let expected: Vec<&str> = best_of_second
            .iter()
            .take(second.len())
            .map(|(id, _)| id.as_str())
            .collect();
        assert!(!second.is_empty(), "query {q}: {hits:?}");
        assert_eq!(second, expected, "query {q}");
    }
    // With the first segment scanned as a segment without a graph, the cut graph's
    // fallback makes the whole answer the exact one.
    common::rewrite_manifest(dir.path(), |m| {
        m["segments"][0]
            .as_object_mut()
            .unwrap()
            .remove("vector_graph");
    });
    let s = Index::open(dir.path()).unwrap().searcher();
    for (&q, exact) in QUERIES.iter().zip(&exact) {
        let (hits, stats) = s
            .search_vector_with_stats(&unit_vector(q, DIM), &VectorSearchOptions::default())
            .unwrap();
        let got: Vec<(String, u64)> = hits
            .into_iter()
            .map(|h| (h.id, h.score.to_bits()))
            .collect();
        assert_eq!(&got, exact, "query {q}");
        assert_eq!((stats.segments_walked, stats.segments_scanned), (1, 2));
        // The entry point's codes, then its row (the walk rescores what it keeps), then
        // both segments' rows.
        assert_eq!(stats.rows_scored, 2 + 2 * DOCS as u64);
    }
}

#[test]
fn a_resealed_row_a_walk_scores_that_is_not_a_number_fails_the_search_naming_the_vectors_file() {
    let (dir, graphs, vecs) = build(None);
    // The entry point: every walk of the first segment scores its row first.
    let entry = u32_at(common::body_of(&std::fs::read(&graphs[0]).unwrap()), 16) as usize;
    common::reseal(&vecs[0], |b| {
        let at = 8 + (entry * DIM + 2) * 4;
        b[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    });
    let err = assert_names(ann_answers(dir.path()), &vecs[0], "NaN in the entry's row");
    assert!(
        err.to_string()
            .contains(&format!("document {entry}: component 2 is NaN")),
        "{err}"
    );
    // BM25 never reads rows.
    text_answers(dir.path()).unwrap();
    check_finds(dir.path(), &vecs[0], "a NaN row", "component 2 is NaN");
}

/// A merge that would keep the first segment's graph (its ids stand) reads that graph as
/// `check` does: resealed structural damage or a flipped byte in it fails the merge
/// naming the file, and the index keeps its two segments, its answers, and the damage
/// for `check` to report (never laundered into a merged segment).
#[test]
fn a_merge_refuses_to_keep_a_damaged_graph_naming_it() {
    // Each damages the file it is given and returns the defect `check` names.
    type Damage = Box<dyn Fn(&Path) -> String>;
    let mut cases: Vec<(&str, Damage)> = structural_edits()
        .into_iter()
        .map(|(what, edit)| {
            let damage: Damage = Box::new(move |file: &Path| {
                let mut defect = String::new();
                common::reseal(file, |b| defect = edit(b));
                defect
            });
            (what, damage)
        })
        .collect();
    cases.push((
        "a flipped byte in the last chunk",
        Box::new(|file: &Path| {
            let mut bytes = std::fs::read(file).unwrap();
            let at = bytes.len() - 40;
            bytes[at] ^= 0x10;
            std::fs::write(file, &bytes).unwrap();
            String::new()
        }),
    ));
    for (what, damage) in cases {
        let (dir, files, _) = build_with(None, false);
        let text = text_answers(dir.path()).unwrap();
        let file = &files[0];
        let defect = damage(file);
        let index = match Index::open(dir.path()) {
            Ok(index) => index,
            // Damage the open already sees (the header's fields): nothing to merge.
            Err(e) => {
                assert_eq!(error_path(&e), Some(file.as_path()), "{what}: {e}");
                continue;
            }
        };
        let mut w = index.writer().unwrap();
        // The graph settings it was built with, so that the merge would keep it.
        w.set_graph(GRAPH).unwrap();
        let err = w.merge_into_one().expect_err(what);
        assert_eq!(error_path(&err), Some(file.as_path()), "{what}: {err}");
        drop(w);
        let reopened = Index::open(dir.path()).unwrap();
        assert_eq!(reopened.segments().len(), 2, "{what}: nothing merged");
        assert_eq!(text_answers(dir.path()).unwrap(), text, "{what}");
        check_finds(dir.path(), file, what, &defect);
    }
}
