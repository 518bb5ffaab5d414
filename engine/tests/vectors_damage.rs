//! Damaged vectors files: a typed error naming the file, never a panic or a wrong
//! answer. Exact search reads every row, so any damage to a vectors file fails it;
//! BM25 never reads rows, so with small chunks it answers as before while the damage
//! lies beyond the header's chunk. `check_index` finds each kind of damage.

mod common;

use std::path::{Path, PathBuf};

use common::error_path;
use common::vectors::{DIM, unit_vector, vector_doc, vector_index};
use heddle::{Error, Index, SearchOptions, check_index};

/// A vector index of two segments (40 documents each) and a delete file; with `shift`,
/// every file rewritten in chunks of 2^shift bytes. Returns the vectors files.
fn build(shift: Option<u32>) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let index = vector_index(dir.path(), DIM);
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    for range in [0..40, 40..80] {
        for i in range {
            w.add(vector_doc(i)).unwrap();
        }
        w.commit().unwrap();
    }
    w.delete("doc3");
    w.commit().unwrap();
    drop(w);
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
    let vec_files: Vec<PathBuf> = files
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "vec"))
        .collect();
    assert_eq!(vec_files.len(), 2);
    (dir, vec_files)
}

type Answers = Vec<Vec<(String, u64)>>;

fn vector_answers(dir: &Path) -> heddle::Result<Answers> {
    let s = Index::open(dir)?.searcher();
    [
        unit_vector(5, DIM),
        unit_vector(60, DIM),
        unit_vector(999, DIM),
    ]
    .iter()
    .map(|q| {
        Ok(s.search_vector_exact(q, 10)?
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

#[test]
fn any_flipped_byte_of_a_vectors_file_fails_exact_search_naming_it() {
    let (dir, files) = build(None);
    vector_answers(dir.path()).unwrap();
    for file in &files {
        let original = std::fs::read(file).unwrap();
        for at in (0..original.len()).step_by(7).chain([original.len() - 1]) {
            let mut bytes = original.clone();
            bytes[at] ^= 1 << (at % 8);
            std::fs::write(file, &bytes).unwrap();
            assert_names(
                vector_answers(dir.path()),
                file,
                &format!("{file:?} byte {at}"),
            );
        }
        std::fs::write(file, &original).unwrap();
    }
    vector_answers(dir.path()).unwrap();
}

#[test]
fn with_small_chunks_a_damaged_row_fails_exact_search_only() {
    let (dir, files) = build(Some(6));
    let text = text_answers(dir.path()).unwrap();
    let file = &files[1];
    let original = std::fs::read(file).unwrap();
    let body_len = common::body_of(&original).len();
    // Past the header's 64-byte chunk, inside the rows.
    for at in (64..body_len).step_by(61) {
        let mut bytes = original.clone();
        bytes[at] ^= 0x10;
        std::fs::write(file, &bytes).unwrap();
        assert_eq!(text_answers(dir.path()).unwrap(), text, "byte {at}");
        let err = assert_names(vector_answers(dir.path()), file, &format!("byte {at}"));
        assert!(matches!(err, Error::ChecksumMismatch { .. }), "{err}");
    }
    std::fs::write(file, &original).unwrap();
    vector_answers(dir.path()).unwrap();
}

#[test]
fn a_truncated_or_missing_vectors_file_fails_the_open_naming_it() {
    let (dir, files) = build(None);
    let file = &files[0];
    let original = std::fs::read(file).unwrap();
    let n = original.len();
    for keep in [0, 1, 7, 8, 19, 20, 21, n / 3, n / 2, n - 21, n - 20, n - 1] {
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
    assert!(!check_index(dir.path()).is_ok());
    std::fs::write(file, &original).unwrap();
    assert!(check_index(dir.path()).is_ok());
}

#[test]
fn check_reports_a_flipped_byte_in_a_vectors_file() {
    let (dir, files) = build(None);
    assert!(check_index(dir.path()).is_ok());
    let file = &files[1];
    let mut bytes = std::fs::read(file).unwrap();
    bytes[100] ^= 4;
    std::fs::write(file, &bytes).unwrap();
    let report = check_index(dir.path());
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    assert!(matches!(report.problems[0], Error::ChecksumMismatch { .. }));
    assert_eq!(error_path(&report.problems[0]), Some(file.as_path()));
}

/// A little-endian f32 at component `at` of row `doc` of a vectors body.
fn set_value(body: &mut [u8], doc: usize, at: usize, value: f32) {
    let i = 8 + (doc * DIM + at) * 4;
    body[i..i + 4].copy_from_slice(&value.to_le_bytes());
}

#[test]
fn a_resealed_nan_or_infinity_is_an_error_for_search_and_a_problem_for_check() {
    for value in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let (dir, files) = build(None);
        let file = &files[0];
        common::reseal(file, |body| set_value(body, 17, 9, value));
        let err = assert_names(vector_answers(dir.path()), file, "non-finite row");
        assert!(
            err.to_string().contains("document 17: component 9"),
            "{err}"
        );
        let report = check_index(dir.path());
        assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
        assert!(
            report.problems[0]
                .to_string()
                .contains("not a finite number"),
            "{}",
            report.problems[0]
        );
    }
}

#[test]
fn a_resealed_header_or_length_that_disagrees_with_the_manifest_fails_the_open() {
    type Edit = fn(&mut Vec<u8>);
    let edits: [(&str, Edit); 5] = [
        ("more documents", |b| b[0] += 1),
        ("fewer documents", |b| b[0] -= 1),
        ("another dimension", |b| b[4] += 1),
        ("a byte more", |b| b.push(0)),
        ("a row less", |b| b.truncate(b.len() - DIM * 4)),
    ];
    for (what, edit) in edits {
        let (dir, files) = build(None);
        let file = &files[1];
        common::reseal(file, edit);
        let err = assert_names(text_answers(dir.path()), file, what);
        assert!(
            matches!(err, Error::Corrupt { .. } | Error::Truncated { .. }),
            "{what}: {err}"
        );
        let report = check_index(dir.path());
        assert!(
            report
                .problems
                .iter()
                .any(|e| error_path(e) == Some(file.as_path())),
            "{what}: {:?}",
            report.problems
        );
    }
}

#[test]
fn a_manifest_whose_dimension_disagrees_with_the_files_fails_the_open() {
    let (dir, files) = build(None);
    common::rewrite_manifest(dir.path(), |m| {
        m["vector_dim"] = (DIM + 1).into();
        for s in m["segments"].as_array_mut().unwrap() {
            s["vector_dim"] = (DIM + 1).into();
        }
    });
    let err = assert_names(text_answers(dir.path()), &files[0], "dimension");
    assert!(err.to_string().contains("manifest says 25"), "{err}");
    // And one that names vectors for one segment only is refused outright.
    let (dir, _) = build(None);
    common::rewrite_manifest(dir.path(), |m| {
        m["segments"][0]["vector_dim"] = serde_json::Value::Null;
    });
    let err = text_answers(dir.path()).unwrap_err();
    assert!(matches!(err, Error::Manifest { .. }), "{err}");
}
