//! Checksums are verified lazily, chunk by chunk (format v8): opening reads no postings
//! list and no stored block, so damage there is found by the first query or fetch that
//! reads the damaged chunk, which then fails with a checksum error naming the file. A
//! query that reads only sound chunks of a partly damaged index answers exactly as on
//! the undamaged index: it never reads the damaged bytes, so nothing it returns comes
//! from them. `check_index` and merges still read, and so verify, everything.
//!
//! The files are rewritten in 64-byte chunks (readers accept any size from 64 bytes up),
//! so that this small index has many chunks per file and a damaged byte spoils one.

mod common;

use std::path::{Path, PathBuf};

use common::error_path;

use heddle::{AnalyzerConfig, Document, Error, Index, IndexSettings, SearchOptions, check_index};

const SHIFT: u32 = 6;
const DOCS: usize = 2_000;

/// One segment of `DOCS` documents, plain analyzer. `aaa` is in the first 100 documents
/// and `zzz` in the last 10 (term byte order puts `aaa`'s postings first in the file and
/// `zzz`'s last); `mid0000`..`mid0999` give the dictionary 32 blocks; titles are long
/// enough for many stored blocks (~30 documents each: the top 10 for `aaa` are in the
/// first, all of `zzz`'s in the last). Every file is then rewritten in 64-byte chunks.
fn build(dir: &Path) -> Index {
    let settings = IndexSettings {
        analyzer: AnalyzerConfig::plain(),
        ..Default::default()
    };
    let index = Index::create(dir, settings).unwrap();
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    for i in 0..DOCS {
        let mut text = format!("mid{:04} common", i % 1000);
        if i < 100 {
            text.push_str(" aaa");
        }
        if i >= DOCS - 10 {
            text.push_str(" zzz");
        }
        let title = format!("title of document {i}, long enough to fill stored blocks");
        w.add(Document::new(format!("d{i}"), title, text)).unwrap();
    }
    w.commit().unwrap();
    drop(w);
    drop(index);
    for name in common::file_names(dir) {
        if name != "LOCK" {
            common::rechunk(&dir.join(name), SHIFT);
        }
    }
    Index::open(dir).unwrap()
}

fn segment_file(dir: &Path, extension: &str) -> PathBuf {
    let name = common::file_names(dir)
        .into_iter()
        .find(|n| n.ends_with(extension))
        .unwrap();
    dir.join(name)
}

/// Flips one bit of byte `at` of the file's body, the footer left as it was: damage the
/// chunk checksums must catch.
fn flip(path: &Path, at: impl FnOnce(usize) -> usize) {
    let mut bytes = std::fs::read(path).unwrap();
    let body_len = common::body_of(&bytes).len();
    bytes[at(body_len)] ^= 0x04;
    std::fs::write(path, bytes).unwrap();
}

fn ids(index: &Index, query: &str) -> heddle::Result<Vec<(String, u64)>> {
    let hits = index.searcher().search(query, &SearchOptions::default())?;
    Ok(hits
        .into_iter()
        .map(|h| (h.id, h.score.to_bits()))
        .collect())
}

/// `result` is a checksum error naming `path`.
fn assert_checksum_error<T: std::fmt::Debug>(result: heddle::Result<T>, path: &Path) {
    match result {
        Err(e @ Error::ChecksumMismatch { .. }) => {
            assert_eq!(error_path(&e), Some(path), "{e}")
        }
        other => panic!("expected a checksum error naming {path:?}, got {other:?}"),
    }
}

#[test]
fn a_flipped_byte_in_a_postings_list_fails_the_first_query_that_reads_that_list() {
    let dir = tempfile::tempdir().unwrap();
    let index = build(dir.path());
    let (aaa, zzz) = (ids(&index, "aaa").unwrap(), ids(&index, "zzz").unwrap());
    assert_eq!((aaa.len(), zzz.len()), (10, 10));
    drop(index);
    let post = segment_file(dir.path(), ".flat.post");
    flip(&post, |len| len - 1); // the last byte of the last list: zzz's

    // Opening reads no postings: it succeeds.
    let index = Index::open(dir.path()).unwrap();
    // A query that does not read zzz's list answers as before, before and after the
    // query that does; that one fails, and so does every later one (a failed chunk is
    // never remembered as verified).
    assert_eq!(ids(&index, "aaa").unwrap(), aaa);
    assert_checksum_error(ids(&index, "zzz"), &post);
    assert_eq!(ids(&index, "aaa").unwrap(), aaa);
    assert_checksum_error(ids(&index, "zzz"), &post);
    assert_checksum_error(ids(&index, "aaa zzz"), &post);
    assert_checksum_error(
        index
            .searcher()
            .search_exhaustive("zzz", &SearchOptions::default()),
        &post,
    );

    // `check` finds it without being asked a query.
    let report = check_index(dir.path());
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    assert_eq!(error_path(&report.problems[0]), Some(post.as_path()));
}

#[test]
fn a_flipped_byte_in_a_stored_document_fails_its_fetch() {
    let dir = tempfile::tempdir().unwrap();
    let index = build(dir.path());
    let aaa = ids(&index, "aaa").unwrap();
    drop(index);
    let store = segment_file(dir.path(), ".store");
    flip(&store, |len| len - 1); // the last stored block: the last documents'

    let index = Index::open(dir.path()).unwrap();
    // zzz's postings are sound: the query scores, then fails fetching its hits.
    assert_eq!(
        index
            .searcher()
            .doc_freq(heddle::Field::Flat, "zzz")
            .unwrap(),
        10
    );
    assert_checksum_error(ids(&index, "zzz"), &store);
    assert_eq!(ids(&index, "aaa").unwrap(), aaa);
    assert_checksum_error(ids(&index, "zzz"), &store);

    let report = check_index(dir.path());
    assert!(
        report
            .problems
            .iter()
            .all(|p| error_path(p) == Some(store.as_path())),
        "{:?}",
        report.problems
    );
    assert!(!report.is_ok());
    // A writer reads every stored id when it opens (to refuse duplicates): it fails.
    assert_checksum_error(index.writer().map(|_| ()), &store);
}

#[test]
fn a_flipped_byte_in_a_dictionary_block_fails_the_lookups_in_that_block() {
    let dir = tempfile::tempdir().unwrap();
    let index = build(dir.path());
    let aaa = ids(&index, "aaa").unwrap();
    let mid = ids(&index, "mid0500").unwrap();
    drop(index);
    let terms = segment_file(dir.path(), ".flat.terms");
    // The last byte of the body is in the last block's entries: "zzz" is the last term.
    flip(&terms, |len| len - 1);

    let index = Index::open(dir.path()).unwrap();
    let searcher = index.searcher();
    assert_checksum_error(searcher.doc_freq(heddle::Field::Flat, "zzz"), &terms);
    assert_checksum_error(ids(&index, "zzz"), &terms);
    assert_checksum_error(ids(&index, "aaa zzz"), &terms);
    // Lookups in other blocks answer as before.
    assert_eq!(ids(&index, "aaa").unwrap(), aaa);
    assert_eq!(ids(&index, "mid0500").unwrap(), mid);
    assert_eq!(
        searcher.doc_freq(heddle::Field::Flat, "common").unwrap(),
        2_000
    );
}

#[test]
fn a_merge_reads_and_so_verifies_every_list() {
    let dir = tempfile::tempdir().unwrap();
    let index = build(dir.path());
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    w.add(Document::new("extra", "", "aaa extra")).unwrap();
    w.commit().unwrap();
    drop(w);
    drop(index);
    let post = segment_file(dir.path(), "000001.flat.post");
    flip(&post, |len| len - 1);

    let index = Index::open(dir.path()).unwrap();
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    match w.merge(1) {
        Err(e) => assert_eq!(error_path(&e), Some(post.as_path()), "{e}"),
        Ok(stats) => panic!("a merge over a damaged list succeeded: {stats:?}"),
    }
    assert_eq!(
        index.segments().len(),
        2,
        "the damaged segment stays as it was"
    );
}

#[test]
fn damage_to_a_chunk_table_or_to_what_open_reads_fails_the_open() {
    let dir = tempfile::tempdir().unwrap();
    drop(build(dir.path()));
    // Which byte to damage, from the body's length.
    type At = fn(usize) -> usize;
    let cases: [(&str, At); 5] = [
        // The chunk table (just after the body) is covered by the footer's checksum.
        (".flat.post", |body_len| body_len),
        (".store", |body_len| body_len),
        // The headers, read at open.
        (".store", |_| 2),
        (".flat.terms", |_| 2),
        // The lengths file is verified whole at open.
        (".lens", |body_len| body_len / 2),
    ];
    for (extension, at) in cases {
        let path = segment_file(dir.path(), extension);
        let original = std::fs::read(&path).unwrap();
        flip(&path, at);
        let err = Index::open(dir.path()).err().expect("open must fail");
        assert!(
            matches!(err, Error::ChecksumMismatch { .. }),
            "{extension}: {err}"
        );
        assert_eq!(error_path(&err), Some(path.as_path()), "{err}");
        std::fs::write(&path, original).unwrap();
    }
    Index::open(dir.path()).unwrap();
}

#[test]
fn every_query_on_a_damaged_index_errs_or_answers_as_on_the_sound_one() {
    let dir = tempfile::tempdir().unwrap();
    let index = build(dir.path());
    let queries = ["aaa", "zzz", "common", "mid0001 mid0999", "aaa zzz common"];
    let expected: Vec<_> = queries.iter().map(|q| ids(&index, q).unwrap()).collect();
    drop(index);
    for extension in [".flat.post", ".flat.terms", ".store"] {
        let path = segment_file(dir.path(), extension);
        let original = std::fs::read(&path).unwrap();
        let body_len = common::body_of(&original).len();
        let (mut answered, mut failed) = (0, 0);
        for at in (0..body_len).step_by(97) {
            flip(&path, |_| at);
            let Ok(index) = Index::open(dir.path()) else {
                failed += 1;
                std::fs::write(&path, &original).unwrap();
                continue;
            };
            for (q, want) in queries.iter().zip(&expected) {
                match ids(&index, q) {
                    Ok(got) => {
                        assert_eq!(&got, want, "{extension} byte {at}: {q}");
                        answered += 1;
                    }
                    Err(e) => {
                        assert_eq!(error_path(&e), Some(path.as_path()), "{e}");
                        failed += 1;
                    }
                }
            }
            std::fs::write(&path, &original).unwrap();
        }
        // Both happen: the damage is found where it is read, and only there.
        assert!(
            answered > 0 && failed > 0,
            "{extension}: {answered} answered, {failed} failed"
        );
    }
}
