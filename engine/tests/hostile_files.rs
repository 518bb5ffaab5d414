//! Every byte of every file is a possible point of damage: flip bytes at 2,000 positions
//! spread over all files of a small index (and truncate each file at several lengths);
//! opening and searching must give a typed error naming the damaged file or the correct
//! answer — never a panic, a hang or a wrong answer. Checksums are verified as bytes are
//! first read (format v8), so the index is also tried with its files cut into 64-byte
//! chunks: then most damage lies where these queries never read, and they must answer
//! correctly, while damage they do read must fail them.

mod common;

use common::error_path;

use std::path::{Path, PathBuf};

use heddle::{Index, SearchOptions};

const QUERIES: [&str; 3] = [
    "coronavirus transmission",
    "bats hospital",
    "immune response vaccine",
];

fn answers(dir: &Path) -> heddle::Result<Vec<Vec<(String, u64)>>> {
    let index = Index::open(dir)?;
    let s = index.searcher();
    QUERIES
        .iter()
        .map(|q| {
            Ok(s.search(q, &SearchOptions::default())?
                .into_iter()
                .map(|h| (h.id, h.score.to_bits()))
                .collect())
        })
        .collect()
}

/// A small per-field index with two segments and a delete file; with `shift`, every file
/// rewritten in chunks of 2^shift bytes.
fn build(shift: Option<u32>) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let index = common::english_index(dir.path(), true);
    let mut w = index.writer().unwrap();
    let docs = common::fixture();
    for d in &docs[..4] {
        w.add(d.clone()).unwrap();
    }
    w.commit().unwrap();
    for d in &docs[4..] {
        w.add(d.clone()).unwrap();
    }
    w.delete("d2");
    w.commit().unwrap();
    drop(w);
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != "LOCK")
        .collect();
    files.sort();
    assert!(
        files.iter().any(|p| p.to_string_lossy().contains(".del-")),
        "{files:?}"
    );
    if let Some(shift) = shift {
        for f in &files {
            common::rechunk(f, shift);
        }
    }
    (dir, files)
}

/// Whether the queries answered (correctly: anything else fails the test).
fn check_damaged(dir: &Path, damaged: &Path, expected: &[Vec<(String, u64)>], what: &str) -> bool {
    match answers(dir) {
        Ok(got) => {
            assert_eq!(got, expected, "{what}: wrong answer instead of an error");
            true
        }
        Err(e) => {
            assert_eq!(error_path(&e), Some(damaged), "{what}: {e}");
            false
        }
    }
}

#[test]
fn two_thousand_flipped_bytes_give_a_typed_error_or_the_right_answer() {
    flip_two_thousand_bytes(None);
}

#[test]
fn two_thousand_flipped_bytes_in_64_byte_chunks_give_a_typed_error_or_the_right_answer() {
    let answered = flip_two_thousand_bytes(Some(6));
    // Open reads the footers, tables, headers and lengths; the queries read their own
    // dictionary blocks, lists and hits' stored blocks: much of the index is neither.
    assert!(
        answered > 200,
        "only {answered} of 2,000 damaged indexes answered"
    );
}

/// Flips 2,000 bytes one at a time; returns how many times the queries still answered.
fn flip_two_thousand_bytes(shift: Option<u32>) -> usize {
    let (dir, files) = build(shift);
    let expected = answers(dir.path()).unwrap();
    let originals: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    let total: usize = originals.iter().map(Vec::len).sum();
    let positions = 2000;
    let mut answered = 0;
    for k in 0..positions {
        // Evenly spread over the concatenation of all files, plus a varying offset.
        let mut at = (k * total / positions + k * 7919) % total;
        let mut f = 0;
        while at >= originals[f].len() {
            at -= originals[f].len();
            f += 1;
        }
        let mut bytes = originals[f].clone();
        bytes[at] ^= 1 << (k % 8);
        std::fs::write(&files[f], &bytes).unwrap();
        answered += usize::from(check_damaged(
            dir.path(),
            &files[f],
            &expected,
            &format!("{:?} byte {at}", files[f]),
        ));
        std::fs::write(&files[f], &originals[f]).unwrap();
    }
    assert_eq!(answers(dir.path()).unwrap(), expected);
    answered
}

#[test]
fn truncating_any_file_gives_a_typed_error_naming_it() {
    let (dir, files) = build(None);
    let expected = answers(dir.path()).unwrap();
    for file in &files {
        let original = std::fs::read(file).unwrap();
        let n = original.len();
        for keep in [0, 1, 19, 20, 21, n / 3, n / 2, n - 21, n - 20, n - 1] {
            if keep >= n {
                continue;
            }
            std::fs::write(file, &original[..keep]).unwrap();
            check_damaged(
                dir.path(),
                file,
                &expected,
                &format!("{file:?} cut to {keep}"),
            );
        }
        std::fs::write(file, &original).unwrap();
    }
    assert_eq!(answers(dir.path()).unwrap(), expected);
}
