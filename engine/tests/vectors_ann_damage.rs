//! Damaged IVF files (and damaged rows an approximate search reads): a typed error
//! naming the file, never a panic or a wrong answer. The header's chunk is verified at
//! open, the lists' structure (checksums and validation) by the first approximate
//! search, and a list's rows when a search first reads them; BM25 and exact search never
//! read the file. `check_index` finds each kind of damage, including rows that differ
//! from the vectors file's.

mod common;

use std::path::{Path, PathBuf};

use common::error_path;
use common::vectors::{DIM, unit_vector, vector_doc, vector_index};
use heddle::{Error, Index, IvfSettings, Probes, SearchOptions, VectorSearchOptions, check_index};

const DOCS: usize = 150;
/// √150, rounded: the lists of each segment.
const LISTS: usize = 12;

/// A vector index of two segments of 150 documents, each with an IVF file, and a
/// delete file; with `shift`, every file rewritten in chunks of 2^shift bytes. Returns
/// the IVF files and the vectors files.
fn build(shift: Option<u32>) -> (tempfile::TempDir, Vec<PathBuf>, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let index = vector_index(dir.path(), DIM);
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    w.set_ivf(IvfSettings { min_docs: 100 });
    for range in [0..DOCS, DOCS..2 * DOCS] {
        for i in range {
            w.add(vector_doc(i)).unwrap();
        }
        w.commit().unwrap();
    }
    w.delete("doc3");
    w.commit().unwrap();
    drop(w);
    assert!(
        index
            .segments()
            .iter()
            .all(|s| s.vector_lists == Some(LISTS as u32))
    );
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
    let (ivf, vec) = (with("ivf"), with("vec"));
    assert_eq!((ivf.len(), vec.len()), (2, 2));
    (dir, ivf, vec)
}

type Answers = Vec<Vec<(String, u64)>>;

const QUERIES: [u64; 3] = [5, 160, 999];

fn ann_answers(dir: &Path) -> heddle::Result<Answers> {
    answers_probing(dir, Probes::Count(2))
}

fn answers_probing(dir: &Path, probes: Probes) -> heddle::Result<Answers> {
    let s = Index::open(dir)?.searcher();
    QUERIES
        .iter()
        .map(|&q| {
            let opts = VectorSearchOptions { k: 10, probes };
            Ok(s.search_vector(&unit_vector(q, DIM), &opts)?
                .into_iter()
                .map(|h| (h.id, h.score.to_bits()))
                .collect())
        })
        .collect()
}

fn exact_answers(dir: &Path) -> heddle::Result<Answers> {
    let s = Index::open(dir)?.searcher();
    QUERIES
        .iter()
        .map(|&q| {
            Ok(s.search_vector_exact(&unit_vector(q, DIM), 10)?
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

fn check_names(dir: &Path, file: &Path, what: &str) {
    let report = check_index(dir);
    assert!(
        report.problems.iter().any(|e| error_path(e) == Some(file)),
        "check misses {what}: {:?}",
        report.problems
    );
}

#[test]
fn any_flipped_byte_of_an_ivf_file_fails_approximate_search_naming_it() {
    let (dir, files, _) = build(None);
    let sound = ann_answers(dir.path()).unwrap();
    for file in &files {
        let original = std::fs::read(file).unwrap();
        for at in (0..original.len()).step_by(5).chain([original.len() - 1]) {
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
fn with_small_chunks_damage_past_the_header_fails_the_approximate_searches_that_read_it() {
    let (dir, files, _) = build(Some(6));
    let (text, exact) = (
        text_answers(dir.path()).unwrap(),
        exact_answers(dir.path()).unwrap(),
    );
    let file = &files[1];
    let original = std::fs::read(file).unwrap();
    let body_len = common::body_of(&original).len();
    assert_eq!(body_len, rows_at() + DOCS * DIM * 4);
    // Past the header's 64-byte chunk: centroids, offsets and ids, which every
    // approximate search reads; then rows, which a search probing every list reads.
    for at in (64..body_len).step_by(37) {
        let mut bytes = original.clone();
        bytes[at] ^= 0x10;
        std::fs::write(file, &bytes).unwrap();
        assert_eq!(text_answers(dir.path()).unwrap(), text, "byte {at}");
        assert_eq!(exact_answers(dir.path()).unwrap(), exact, "byte {at}");
        let probing = if at < rows_at() {
            Probes::Count(1)
        } else {
            Probes::All
        };
        let err = assert_names(
            answers_probing(dir.path(), probing),
            file,
            &format!("byte {at}"),
        );
        assert!(matches!(err, Error::ChecksumMismatch { .. }), "{err}");
    }
    std::fs::write(file, &original).unwrap();
    assert_eq!(answers_probing(dir.path(), Probes::All).unwrap(), exact);
}

#[test]
fn a_truncated_or_missing_ivf_file_fails_the_open_naming_it() {
    let (dir, files, _) = build(None);
    let file = &files[0];
    let original = std::fs::read(file).unwrap();
    let n = original.len();
    for keep in [
        0,
        1,
        11,
        12,
        19,
        20,
        21,
        n / 3,
        n / 2,
        n - 21,
        n - 20,
        n - 1,
    ] {
        std::fs::write(file, &original[..keep]).unwrap();
        assert_names(text_answers(dir.path()), file, &format!("cut to {keep}"));
        check_names(dir.path(), file, &format!("a cut to {keep}"));
    }
    std::fs::remove_file(file).unwrap();
    let err = assert_names(text_answers(dir.path()), file, "missing");
    assert!(matches!(err, Error::Io { .. }), "{err}");
    check_names(dir.path(), file, "a missing file");
    std::fs::write(file, &original).unwrap();
    assert!(check_index(dir.path()).is_ok());
}

#[test]
fn check_reports_a_flipped_byte_in_an_ivf_file() {
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

fn u32_at(body: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(body[at..at + 4].try_into().unwrap())
}

fn set_u32(body: &mut [u8], at: usize, value: u32) {
    body[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

/// Where a body's offsets and ids start (docs/FORMAT.md).
fn offsets_at() -> usize {
    12 + LISTS * DIM * 4
}

fn ids_at() -> usize {
    offsets_at() + 4 * (LISTS + 1)
}

fn rows_at() -> usize {
    ids_at() + 4 * DOCS
}

/// Where document `doc`'s row is in an IVF body.
fn row_in_lists(body: &[u8], doc: u32) -> usize {
    let place = (0..DOCS)
        .find(|&i| u32_at(body, ids_at() + 4 * i) == doc)
        .expect("every document is in a list");
    rows_at() + place * DIM * 4
}

/// The first list of at least two documents, as (start, end) in the ids.
fn a_long_list(body: &[u8]) -> (usize, usize) {
    (0..LISTS)
        .map(|l| {
            let at = offsets_at() + 4 * l;
            (u32_at(body, at) as usize, u32_at(body, at + 4) as usize)
        })
        .find(|(start, end)| end - start >= 2)
        .expect("150 documents in 12 lists")
}

#[test]
fn resealed_lists_that_lose_repeat_or_invent_a_document_are_refused_by_search_and_check() {
    type Edit = fn(&mut Vec<u8>);
    let edits: [(&str, Edit); 6] = [
        ("a document twice", |b| {
            let (start, _) = a_long_list(b);
            let first = u32_at(b, ids_at() + 4 * start);
            set_u32(b, ids_at() + 4 * (start + 1), first);
        }),
        ("a list out of order", |b| {
            let (start, _) = a_long_list(b);
            let (x, y) = (ids_at() + 4 * start, ids_at() + 4 * (start + 1));
            let (a, c) = (u32_at(b, x), u32_at(b, y));
            set_u32(b, x, c);
            set_u32(b, y, a);
        }),
        ("a document past the segment", |b| {
            set_u32(b, ids_at(), DOCS as u32)
        }),
        ("the lists ending early", |b| {
            set_u32(b, offsets_at() + 4 * LISTS, DOCS as u32 - 1)
        }),
        ("a list running past the ids", |b| {
            set_u32(b, offsets_at() + 4 * (LISTS - 1), DOCS as u32 + 1)
        }),
        ("a centroid that is not a number", |b| {
            b[12 + 4 * DIM + 8..12 + 4 * DIM + 12].copy_from_slice(&f32::NAN.to_le_bytes())
        }),
    ];
    for (what, edit) in edits {
        let (dir, files, _) = build(None);
        let text = text_answers(dir.path()).unwrap();
        let file = &files[1];
        common::reseal(file, edit);
        // The structure is read by the first approximate search, not at open.
        assert_eq!(text_answers(dir.path()).unwrap(), text, "{what}");
        let err = assert_names(ann_answers(dir.path()), file, what);
        assert!(
            err.to_string().contains("corrupt vector lists"),
            "{what}: {err}"
        );
        let report = check_index(dir.path());
        assert_eq!(report.problems.len(), 1, "{what}: {:?}", report.problems);
        assert_eq!(error_path(&report.problems[0]), Some(file.as_path()));
    }
}

#[test]
fn a_resealed_header_or_length_that_disagrees_with_the_manifest_fails_the_open() {
    type Edit = fn(&mut Vec<u8>);
    let edits: [(&str, Edit); 5] = [
        ("more documents", |b| b[0] += 1),
        ("another dimension", |b| b[4] += 1),
        ("another list count", |b| b[8] -= 1),
        ("a byte more", |b| b.push(0)),
        ("an id less", |b| b.truncate(b.len() - 4)),
    ];
    for (what, edit) in edits {
        let (dir, files, _) = build(None);
        let file = &files[0];
        common::reseal(file, edit);
        let err = assert_names(text_answers(dir.path()), file, what);
        assert!(
            matches!(err, Error::Corrupt { .. } | Error::Truncated { .. }),
            "{what}: {err}"
        );
        check_names(dir.path(), file, what);
    }
}

#[test]
fn a_manifest_whose_lists_disagree_with_the_file_fails_the_open() {
    let (dir, files, _) = build(None);
    common::rewrite_manifest(dir.path(), |m| {
        m["segments"][0]["vector_lists"] = (LISTS - 1).into();
    });
    let err = assert_names(text_answers(dir.path()), &files[0], "lists");
    assert!(
        err.to_string().contains("12 lists, manifest says 11"),
        "{err}"
    );
    // A manifest that names no lists for a segment: it is scanned exactly, and its
    // file is nobody's (the next writer removes it).
    let (dir, files, _) = build(None);
    let exact = exact_answers(dir.path()).unwrap();
    common::rewrite_manifest(dir.path(), |m| {
        m["segments"][0]
            .as_object_mut()
            .unwrap()
            .remove("vector_lists");
    });
    let index = Index::open(dir.path()).unwrap();
    let s = index.searcher();
    let (hits, stats) = s
        .search_vector_with_stats(&unit_vector(5, DIM), &VectorSearchOptions::default())
        .unwrap();
    assert_eq!((stats.segments_scanned, stats.segments_probed), (1, 1));
    let got: Vec<(String, u64)> = hits
        .into_iter()
        .map(|h| (h.id, h.score.to_bits()))
        .collect();
    assert_eq!(got, exact[0]);
    drop(index.writer().unwrap());
    assert!(!files[0].exists());
    assert!(files[1].exists());
}

#[test]
fn rows_an_approximate_search_reads_are_verified_before_they_are_scored() {
    // doc5's own vector: its list is probed first by every search for it.
    let (dir, files, vec_files) = build(Some(6));
    let file = &files[0];
    let original = std::fs::read(file).unwrap();
    let row_start = row_in_lists(&original, 5);
    // The row's last byte: its 64-byte chunk starts past the row's first 31 bytes, so
    // past the ids, and only the probe of doc5's list verifies it, not the structure's
    // check.
    let last = row_start + DIM * 4 - 1;
    assert!(last / 64 * 64 >= rows_at());
    let mut bytes = original.clone();
    bytes[last] ^= 0x20;
    std::fs::write(file, &bytes).unwrap();
    let err = assert_names(ann_answers(dir.path()), file, "doc5's row");
    assert!(matches!(err, Error::ChecksumMismatch { .. }), "{err}");

    // Resealed with a NaN in that row: an error naming the file, not a ranking.
    std::fs::write(file, &original).unwrap();
    common::reseal(file, |b| {
        b[row_start + 8..row_start + 12].copy_from_slice(&f32::NAN.to_le_bytes())
    });
    let err = assert_names(ann_answers(dir.path()), file, "NaN in doc5's row");
    assert!(
        err.to_string().contains("corrupt vector lists")
            && err.to_string().contains("document 5: component 2 is NaN"),
        "{err}"
    );
    check_names(dir.path(), file, "a NaN in a copied row");
    // Exact search and BM25 never read the IVF file's rows.
    exact_answers(dir.path()).unwrap();
    text_answers(dir.path()).unwrap();
    // The vectors file's own row damaged: exact search fails naming it, and check
    // reports it; approximate search reads the IVF file's copy.
    std::fs::write(file, &original).unwrap();
    let vec_file = &vec_files[0];
    let vec_original = std::fs::read(vec_file).unwrap();
    let mut bytes = vec_original.clone();
    bytes[8 + 5 * DIM * 4 + 9] ^= 0x20;
    std::fs::write(vec_file, &bytes).unwrap();
    assert_names(
        exact_answers(dir.path()),
        vec_file,
        "doc5's row in the vectors file",
    );
    check_names(dir.path(), vec_file, "a flipped byte in the vectors file");
    std::fs::write(vec_file, &vec_original).unwrap();
    assert!(check_index(dir.path()).is_ok());
}

/// The (start, end) of list `l`'s rows in an IVF body.
fn list_rows_range(body: &[u8], l: usize) -> (usize, usize) {
    let at = offsets_at() + 4 * l;
    let (start, end) = (u32_at(body, at) as usize, u32_at(body, at + 4) as usize);
    (rows_at() + start * DIM * 4, rows_at() + end * DIM * 4)
}

#[test]
fn a_lists_rows_are_verified_only_when_a_search_probes_it() {
    let (dir, files, _) = build(Some(6));
    let file = &files[0];
    let original = std::fs::read(file).unwrap();
    // doc5's own vector, k = 1, one probe: only doc5's list is read.
    let doc5_list = (0..LISTS)
        .find(|&l| {
            let (start, end) = list_rows_range(&original, l);
            (start..end).contains(&row_in_lists(&original, 5))
        })
        .unwrap();
    let (own_start, own_end) = list_rows_range(&original, doc5_list);
    // A byte in another list's rows whose 64-byte chunk holds neither the structure nor
    // any of doc5's list's rows.
    let at = (0..LISTS)
        .filter(|&l| l != doc5_list)
        .flat_map(|l| {
            let (start, end) = list_rows_range(&original, l);
            start..end
        })
        .find(|&at| {
            let chunk = at / 64 * 64..at / 64 * 64 + 64;
            chunk.start >= rows_at() && (chunk.end <= own_start || chunk.start >= own_end)
        })
        .expect("12 lists of rows span many chunks");
    let mut bytes = original.clone();
    bytes[at] ^= 0x08;
    std::fs::write(file, &bytes).unwrap();
    let s = Index::open(dir.path()).unwrap().searcher();
    let one = VectorSearchOptions {
        k: 1,
        probes: Probes::Count(1),
    };
    let (hits, stats) = s
        .search_vector_with_stats(&unit_vector(5, DIM), &one)
        .unwrap();
    assert_eq!(hits[0].id, "doc5");
    // One list in each of the two segments.
    assert_eq!(stats.lists_probed, 2);
    let all = VectorSearchOptions {
        k: 1,
        probes: Probes::All,
    };
    let err = s
        .search_vector(&unit_vector(5, DIM), &all)
        .expect_err("probing every list reads the damaged row");
    assert!(matches!(err, Error::ChecksumMismatch { .. }), "{err}");
    assert_eq!(error_path(&err), Some(file.as_path()));
}

#[test]
fn check_reports_a_copied_row_that_is_not_the_documents_row() {
    let (dir, files, _) = build(None);
    let file = &files[1];
    let exact = exact_answers(dir.path()).unwrap();
    // doc160 (the second segment's tenth document) given a finite row that is not its
    // own: checksums valid, structure valid, every value finite.
    common::reseal(file, |b| {
        let at = row_in_lists(b, 10);
        let value = f32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        b[at..at + 4].copy_from_slice(&(value + 0.5).to_le_bytes());
    });
    assert_eq!(exact_answers(dir.path()).unwrap(), exact);
    let report = check_index(dir.path());
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    assert_eq!(error_path(&report.problems[0]), Some(file.as_path()));
    let message = report.problems[0].to_string();
    assert!(
        message.contains("the row of document 10 is not its row in"),
        "{message}"
    );
}

/// A finite but wrong value in a `.vec` row, resealed: its IVF copy disagrees. `check`
/// reports it, and so a merge, which would copy the wrong row and cluster a new IVF
/// file from it (laundering the damage: `check` would then pass), refuses it before
/// writing anything (issue 33, item 12).
#[test]
fn a_merge_refuses_a_vectors_row_that_its_ivf_copy_contradicts() {
    let (dir, _, vec) = build(None);
    let file = &vec[0];
    common::reseal(file, |b| {
        let at = 8 + 20 * DIM * 4; // document 20's first value
        let value = f32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        b[at..at + 4].copy_from_slice(&(value + 0.25).to_le_bytes());
    });
    let report = check_index(dir.path());
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    let before = common::file_names(dir.path());
    let index = Index::open(dir.path()).unwrap();
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    let err = w
        .merge(1)
        .expect_err("a merge must refuse what check reports");
    assert!(err.to_string().contains("is not its row in"), "{err}");
    drop(w);
    assert_eq!(
        common::file_names(dir.path()),
        before,
        "the merge wrote nothing"
    );
    assert_eq!(index.segments().len(), 2);
    assert_eq!(check_index(dir.path()).problems.len(), 1);
}
