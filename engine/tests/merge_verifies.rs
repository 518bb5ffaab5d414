//! A merge reads its sources as strictly as `check` does: a damaged postings list is a
//! typed error naming the file and the term, never filtered into a merged segment that
//! `check` would then call sound (issue 13, item 11).

mod common;

use std::path::Path;

use common::{file_names, reseal};

use heddle::{AnalyzerConfig, Document, Error, Index, IndexSettings, check_index};

/// A flat index with the plain analyzer: one segment per batch, no background merges.
fn index_of(dir: &Path, batches: &[Vec<Document>]) -> Index {
    let settings = IndexSettings {
        analyzer: AnalyzerConfig::plain(),
        ..Default::default()
    };
    let index = Index::create(dir, settings).unwrap();
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    for batch in batches {
        for d in batch {
            w.add(d.clone()).unwrap();
        }
        w.commit().unwrap();
    }
    index
}

/// Opens the index afresh (as the `merge` command does), merges everything into one
/// segment and expects a corruption error naming `post` and `term`; then checks the
/// index was left as it was, damage and all, for `check` to see, and that the failed
/// merge left none of its files behind (it fails midway, after writing some of them).
fn assert_merge_refuses(dir: &Path, post: &Path, term: &str, what: &str) {
    let index = Index::open(dir).unwrap();
    let segments = index.segments().len();
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    let files_before = file_names(dir);
    match w.merge(1) {
        Err(Error::Corrupt { path, detail, .. }) => {
            assert_eq!(path, post, "{detail}");
            assert!(detail.contains(&format!("term {term:?}")), "{detail}");
            assert!(detail.contains(what), "{detail}");
        }
        other => panic!("the merge must refuse the damaged list, got {other:?}"),
    }
    assert_eq!(
        file_names(dir),
        files_before,
        "a failed merge removes what it wrote"
    );
    drop(w);
    assert_eq!(index.segments().len(), segments);
    let report = check_index(index.dir());
    assert!(
        report.problems.iter().any(|p| p.to_string().contains(what)),
        "{:?}",
        report.problems
    );
}

#[test]
fn merge_refuses_a_postings_list_with_an_out_of_range_doc() {
    let dir = tempfile::tempdir().unwrap();
    let index = index_of(
        dir.path(),
        &[
            vec![
                Document::new("a", "", "alpha"),
                Document::new("b", "", "beta"),
            ],
            vec![Document::new("c", "", "alpha gamma")],
        ],
    );
    let post = dir.path().join("seg-000001.flat.post");
    reseal(&post, |body| {
        // "alpha" then "beta", each one posting as two varints: gap, tf - 1.
        assert_eq!(body.as_slice(), [0, 0, 1, 0]);
        body[0] = 5; // "alpha" in doc 5 of a segment of 2
    });
    drop(index);
    assert_merge_refuses(dir.path(), &post, "alpha", "doc 5 out of order or range");
}

#[test]
fn merge_refuses_a_postings_list_whose_tf_exceeds_its_block_bound() {
    let dir = tempfile::tempdir().unwrap();
    // 256 postings of "alpha": two full blocks with a skip table; doc 5 has tf 4.
    let docs: Vec<Document> = (0..256)
        .map(|i| {
            let text = if i == 5 {
                "alpha alpha alpha alpha"
            } else {
                "alpha"
            };
            Document::new(format!("d{i}"), "", text)
        })
        .collect();
    let index = index_of(dir.path(), &[docs, vec![Document::new("x", "", "alpha")]]);
    let post = dir.path().join("seg-000001.flat.post");
    // Skip entry 0 (bytes 0..8): its max tf code (byte 6) says 1, below doc 5's tf 4.
    reseal(&post, |body| body[6] = 1);
    drop(index);
    assert_merge_refuses(dir.path(), &post, "alpha", "exceeds its block's bounds");
}

/// Every byte of a lengths file changed and resealed (a checksum cannot see it): the
/// lengths then sum to another total than the manifest's, or do not decode. Opening the
/// index refuses it, so neither a search (whose BM25 average length comes from the
/// manifest) nor a merge (which would write the wrong lengths into a segment `check`
/// then calls sound) reads it; `check` reports it (issue 33, item 12).
#[test]
fn a_resealed_lengths_byte_is_refused_by_open_merge_and_check() {
    let dir = tempfile::tempdir().unwrap();
    let docs = [
        vec![
            Document::new("a", "", "alpha beta"),
            Document::new("b", "", "beta"),
            Document::new("c", "", "alpha gamma delta"),
        ],
        vec![Document::new("d", "", "alpha")],
    ];
    index_of(dir.path(), &docs);
    let lens = dir.path().join("seg-000001.lens");
    let original = std::fs::read(&lens).unwrap();
    let body_len = common::body_of(&original).len();
    assert!(body_len > 0);
    for at in 0..body_len {
        reseal(&lens, |body| body[at] ^= 0x01);
        match Index::open(dir.path()) {
            Err(e) => assert_eq!(
                common::error_path(&e),
                Some(lens.as_path()),
                "byte {at}: {e}"
            ),
            Ok(_) => panic!("byte {at} of the lengths changed, and the index opened"),
        }
        let report = check_index(dir.path());
        assert!(
            report
                .problems
                .iter()
                .any(|p| common::error_path(p) == Some(lens.as_path())),
            "byte {at}: {:?}",
            report.problems
        );
        std::fs::write(&lens, &original).unwrap();
    }
    assert!(check_index(dir.path()).is_ok());
}

/// A manifest whose token total disagrees with the lengths (0 here: BM25's average
/// length, and so every score, would change) is refused when the index opens, before
/// any search scores from it or any merge carries it on.
#[test]
fn a_manifest_token_total_that_disagrees_with_the_lengths_is_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    index_of(
        dir.path(),
        &[vec![
            Document::new("a", "", "alpha beta"),
            Document::new("b", "", "beta"),
        ]],
    );
    common::rewrite_manifest(dir.path(), |m| {
        m["segments"][0]["tokens"]["flat"] = 0.into()
    });
    let err = Index::open(dir.path())
        .err()
        .expect("the open must refuse the totals");
    let message = err.to_string();
    assert!(
        message.contains("flat lengths sum to 3 tokens, manifest says 0"),
        "{message}"
    );
    let report = check_index(dir.path());
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
}
