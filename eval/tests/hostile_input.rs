//! Hostile input through the commands: each case indexes correctly or fails with an
//! error naming file and line, and nothing committed is lost.

mod common;

use common::{fails, hit_ids, ok};

use std::path::Path;

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_string_lossy().into_owned()
}

fn line(id: &str, text: &str) -> String {
    serde_json::json!({"_id": id, "title": "", "text": text}).to_string() + "\n"
}

#[test]
fn a_ten_megabyte_document_and_a_million_distinct_terms_index_and_search() {
    let dir = tempfile::tempdir().unwrap();
    let big = format!("needle {}", "haystack straw ".repeat(10 << 20 >> 4));
    let distinct: String = (0..1_000_000).map(|i| format!("t{i} ")).collect();
    let body = line("big", &big) + &line("many", &distinct) + &line("small", "needle t999999");
    let corpus = write(dir.path(), "c.jsonl", body.as_bytes());
    let idx = dir.path().join("idx").to_string_lossy().into_owned();
    let out = ok(&[
        "index",
        "--corpus",
        &corpus,
        "--index",
        &idx,
        "--analyzer",
        "plain",
    ]);
    assert!(out.contains("indexed 3 documents"), "{out}");
    assert!(out.contains("1,000,00"), "a million and more terms: {out}");
    assert_eq!(hit_ids(&idx, "t999999"), ["small", "many"]);
    let mut needle = hit_ids(&idx, "needle");
    needle.sort();
    assert_eq!(needle, ["big", "small"]);
}

#[test]
fn the_document_size_limit_names_file_and_line_and_commits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let body = line("a", "fine") + &line("b", &"x".repeat(2000));
    let corpus = write(dir.path(), "c.jsonl", body.as_bytes());
    let idx = dir.path().join("idx").to_string_lossy().into_owned();
    fails(
        &[
            "index",
            "--corpus",
            &corpus,
            "--index",
            &idx,
            "--max-doc-bytes",
            "1000",
        ],
        "c.jsonl:2:",
    );
    assert!(!dir.path().join("idx").exists());
    ok(&[
        "index",
        "--corpus",
        &corpus,
        "--index",
        &idx,
        "--max-doc-bytes",
        "4000",
    ]);
}

#[test]
fn long_tokens_are_dropped_by_the_stated_limit() {
    let dir = tempfile::tempdir().unwrap();
    let body = line("a", &format!("short {}", "y".repeat(300)));
    let corpus = write(dir.path(), "c.jsonl", body.as_bytes());
    let idx = dir.path().join("idx").to_string_lossy().into_owned();
    ok(&[
        "index",
        "--corpus",
        &corpus,
        "--index",
        &idx,
        "--analyzer",
        "plain",
    ]);
    assert!(
        hit_ids(&idx, &"y".repeat(300)).is_empty(),
        "over the default 255"
    );
    let idx2 = dir.path().join("idx2").to_string_lossy().into_owned();
    ok(&[
        "index",
        "--corpus",
        &corpus,
        "--index",
        &idx2,
        "--analyzer",
        "plain",
        "--max-token-chars",
        "400",
    ]);
    assert_eq!(hit_ids(&idx2, &"y".repeat(300)), ["a"]);
}

#[test]
fn empty_corpus_and_empty_file_give_an_empty_index() {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in [("empty.jsonl", &b""[..]), ("blank.jsonl", &b"\n\n\r\n"[..])] {
        let corpus = write(dir.path(), name, body);
        let idx = dir
            .path()
            .join(format!("idx-{name}"))
            .to_string_lossy()
            .into_owned();
        let out = ok(&["index", "--corpus", &corpus, "--index", &idx]);
        assert!(out.contains("indexed 0 documents"), "{out}");
        assert!(hit_ids(&idx, "anything").is_empty());
    }
    fails(
        &[
            "index",
            "--corpus",
            &dir.path().join("missing").to_string_lossy(),
            "--index",
            "/tmp/never",
        ],
        "missing",
    );
}

#[test]
fn crlf_line_endings_and_a_byte_order_mark_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut body = b"\xEF\xBB\xBF".to_vec();
    body.extend_from_slice(b"{\"_id\": \"a\", \"title\": \"T\", \"text\": \"alpha\"}\r\n{\"_id\": \"b\", \"text\": \"beta\"}\r\n");
    let corpus = write(dir.path(), "c.jsonl", &body);
    let idx = dir.path().join("idx").to_string_lossy().into_owned();
    assert!(ok(&["index", "--corpus", &corpus, "--index", &idx]).contains("indexed 2 documents"));
    assert_eq!(hit_ids(&idx, "alpha"), ["a"]);
    assert_eq!(hit_ids(&idx, "beta"), ["b"]);
}

#[test]
fn a_duplicate_id_inside_one_batch_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let body = line("a", "one") + &line("b", "two") + &line("a", "three");
    let corpus = write(dir.path(), "c.jsonl", body.as_bytes());
    let idx = dir.path().join("idx").to_string_lossy().into_owned();
    let err = fails(
        &["index", "--corpus", &corpus, "--index", &idx],
        "c.jsonl:3:",
    );
    assert!(
        err.contains("duplicate id \"a\", first seen at line 1"),
        "{err}"
    );
}

#[test]
fn ids_with_odd_characters_round_trip_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let odd = [
        "with space",
        "tab\there",
        "quote\"d",
        "back\\slash",
        "ünï ☃",
        "new\nline",
        "-dash",
        "0",
    ];
    let body: String = odd.iter().map(|id| line(id, "common")).collect();
    let corpus = write(dir.path(), "c.jsonl", body.as_bytes());
    let idx = dir.path().join("idx").to_string_lossy().into_owned();
    ok(&["index", "--corpus", &corpus, "--index", &idx]);
    let mut got = hit_ids(&idx, "common");
    got.sort();
    let mut want: Vec<String> = odd.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(got, want);
    // Deleting by such an id works too.
    ok(&["delete", "--index", &idx, "tab\there"]);
    assert_eq!(hit_ids(&idx, "common").len(), odd.len() - 1);
}
