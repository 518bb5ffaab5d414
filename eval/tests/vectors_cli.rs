//! Caller-supplied vectors on the command line: `index --vectors`, `add --vectors` and
//! `search --query-vectors`, and every way a vectors file can be wrong, each named by
//! file and line with nothing committed.

mod common;

use common::{fails, ok};

use std::path::{Path, PathBuf};

use heddle::Index;
use heddle_corpus::beir::write_vector_line;

/// Deterministic unit vectors: document `i`'s is `unit(i, dim)`.
fn unit(i: usize, dim: usize) -> Vec<f32> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ (i as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
    let mut v: Vec<f32> = (0..dim)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

fn corpus_lines(n: usize) -> String {
    (0..n)
        .map(|i| format!("{{\"_id\":\"d{i}\",\"title\":\"t{i}\",\"text\":\"masks number {i}\"}}\n"))
        .collect()
}

/// Vectors lines for `ids`, in that order.
fn vector_lines(ids: &[usize], dim: usize) -> String {
    let mut out = Vec::new();
    for &i in ids {
        write_vector_line(&mut out, &format!("d{i}"), &unit(i, dim)).unwrap();
    }
    String::from_utf8(out).unwrap()
}

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Fixture {
    fn new(docs: usize) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        std::fs::create_dir(root.join("corpus")).unwrap();
        std::fs::write(root.join("corpus/corpus.jsonl"), corpus_lines(docs)).unwrap();
        Fixture { _dir: dir, root }
    }

    fn path(&self, rel: &str) -> String {
        self.root.join(rel).to_string_lossy().into_owned()
    }

    fn write(&self, rel: &str, text: &str) -> String {
        std::fs::write(self.root.join(rel), text).unwrap();
        self.path(rel)
    }

    fn index_args<'a>(&'a self, vectors: &'a str, extra: &[&'a str]) -> Vec<String> {
        let mut args = vec![
            "index".to_string(),
            "--corpus".to_string(),
            self.path("corpus"),
            "--index".to_string(),
            self.path("idx"),
            "--vectors".to_string(),
            vectors.to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    }
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// Each document's own vector finds it first, through the index the command built.
fn assert_each_finds_itself(index: &Path, docs: usize, dim: usize) {
    let index = Index::open(index).unwrap();
    assert_eq!(index.vector_dim(), Some(dim));
    let searcher = index.searcher();
    for i in 0..docs {
        let hits = searcher.search_vector_exact(&unit(i, dim), 3).unwrap();
        assert_eq!(hits[0].id, format!("d{i}"), "document {i}: {hits:?}");
        assert!((hits[0].score - 1.0).abs() < 1e-5, "{}", hits[0].score);
    }
}

#[test]
fn index_with_vectors_in_any_order_finds_each_documents_own_vector_first() {
    let f = Fixture::new(40);
    // Reversed, with a blank line: not the corpus's order.
    let ids: Vec<usize> = (0..40).rev().collect();
    let text = vector_lines(&ids, 16).replacen('\n', "\n\n", 1);
    let vectors = f.write("vectors.jsonl", &text);
    let out = ok(&strs(&f.index_args(&vectors, &[])));
    assert!(
        out.contains("a vector of 16 dimensions with every document"),
        "{out}"
    );
    assert_each_finds_itself(&f.root.join("idx"), 40, 16);
}

#[test]
fn vectors_ride_with_their_documents_through_the_memory_budget() {
    // 600 documents × 1,024 dimensions: 2.4 MiB of vectors in a 1 MiB budget, so the
    // writer flushes several segments, each with its rows; a vector index is then merged
    // into one (its graph, if it is large enough for one, built once).
    let f = Fixture::new(600);
    let ids: Vec<usize> = (0..600).collect();
    let vectors = f.write("vectors.jsonl", &vector_lines(&ids, 1024));
    let out = ok(&strs(&f.index_args(&vectors, &["--memory-mb", "1"])));
    let committed: usize = out
        .split(" segments committed at once")
        .next()
        .and_then(|before| before.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(committed >= 3, "{committed} segments committed: {out}");
    let segments = Index::open(f.root.join("idx")).unwrap().segments().len();
    assert_eq!(segments, 1, "{out}");
    assert!(out.contains("merged to 1 segment"), "{out}");
    assert_each_finds_itself(&f.root.join("idx"), 600, 1024);

    // With --merge-to the budget's segments stay as asked.
    let kept = Fixture::new(600);
    let vectors = kept.write("vectors.jsonl", &vector_lines(&ids, 1024));
    let out = ok(&strs(
        &kept.index_args(&vectors, &["--memory-mb", "1", "--merge-to", "3"]),
    ));
    let segments = Index::open(kept.root.join("idx")).unwrap().segments().len();
    assert!((2..=3).contains(&segments), "{segments} segments: {out}");
    assert_each_finds_itself(&kept.root.join("idx"), 600, 1024);
}

#[test]
fn query_vectors_make_a_run_of_nearest_documents() {
    let f = Fixture::new(30);
    let ids: Vec<usize> = (0..30).collect();
    let vectors = f.write("vectors.jsonl", &vector_lines(&ids, 12));
    ok(&strs(&f.index_args(&vectors, &[])));
    // Query qN is document N's vector.
    let mut queries = Vec::new();
    for i in [4, 17, 29] {
        write_vector_line(&mut queries, &format!("q{i}"), &unit(i, 12)).unwrap();
    }
    let queries = f.write(
        "queries.vectors.jsonl",
        &String::from_utf8(queries).unwrap(),
    );
    let run = f.path("dense.run");
    let out = ok(&[
        "search",
        "--index",
        &f.path("idx"),
        "--query-vectors",
        &queries,
        "--run-out",
        &run,
        "--k",
        "5",
    ]);
    assert!(out.contains("3 query vectors"), "{out}");
    let run = std::fs::read_to_string(&run).unwrap();
    for i in [4, 17, 29] {
        let first = run
            .lines()
            .find(|l| l.starts_with(&format!("q{i} ")))
            .unwrap();
        assert!(first.starts_with(&format!("q{i} Q0 d{i} 1 ")), "{first}");
        assert_eq!(
            run.lines()
                .filter(|l| l.starts_with(&format!("q{i} ")))
                .count(),
            5
        );
    }
    // A query vector of another dimension than the index's, named by file and line.
    let mut bad = Vec::new();
    write_vector_line(&mut bad, "q1", &unit(1, 12)).unwrap();
    write_vector_line(&mut bad, "q2", &unit(2, 11)).unwrap();
    let bad = f.write("bad.vectors.jsonl", &String::from_utf8(bad).unwrap());
    fails(
        &[
            "search",
            "--index",
            &f.path("idx"),
            "--query-vectors",
            &bad,
            "--run-out",
            &f.path("bad.run"),
        ],
        &format!("{bad}:2: vector has 11 values, expected 12"),
    );
}

/// Every malformed vectors file is refused before an index exists, naming the file and
/// the line (or, for a document without a vector, the corpus's line).
#[test]
fn every_malformed_vectors_file_is_named_by_file_and_line() {
    let good = |i: usize| vector_lines(&[i], 4);
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "bad JSON",
            format!(
                "{}{{\"_id\":\"d1\",\"vector\":[1,2,3,4]\n{}",
                good(0),
                good(2)
            ),
            "vectors.jsonl:2: invalid JSON",
        ),
        (
            "missing _id",
            format!("{}{{\"vector\":[1,2,3,4]}}\n", good(0)),
            "vectors.jsonl:2: missing field \"_id\"",
        ),
        (
            "missing vector",
            format!("{}{}{{\"_id\":\"d2\"}}\n", good(0), good(1)),
            "vectors.jsonl:3: missing field \"vector\"",
        ),
        (
            "empty vector",
            format!("{}{{\"_id\":\"d1\",\"vector\":[]}}\n", good(0)),
            "vectors.jsonl:2: field \"vector\" is empty",
        ),
        (
            "wrong dimension",
            format!(
                "{}{}{{\"_id\":\"d2\",\"vector\":[1,2,3]}}\n",
                good(0),
                good(1)
            ),
            "vectors.jsonl:3: vector has 3 values, expected 4 (the dimension of line 1)",
        ),
        (
            "a value beyond f32",
            format!("{}{{\"_id\":\"d1\",\"vector\":[1,2,3e40,4]}}\n", good(0)),
            "vectors.jsonl:2: vector value 2 (3e40) is not a finite f32",
        ),
        (
            "NaN",
            format!("{}{{\"_id\":\"d1\",\"vector\":[1,NaN,3,4]}}\n", good(0)),
            "vectors.jsonl:2: NaN at column 25: a vector's values must be finite numbers",
        ),
        (
            "a value that is not a number",
            format!("{}{{\"_id\":\"d1\",\"vector\":[1,\"2\",3,4]}}\n", good(0)),
            "vectors.jsonl:2: vector value 1 is not a number (found a string)",
        ),
        (
            "repeated id",
            format!("{}{}{}", good(0), good(1), good(0)),
            "vectors.jsonl:3: duplicate id \"d0\", first seen at line 1",
        ),
        (
            "unknown id",
            format!("{}{}{}{}", good(0), good(1), good(2), good(7)),
            "vectors.jsonl:4: a vector for id \"d7\", which no document of",
        ),
        (
            "a document without a vector",
            format!("{}{}", good(0), good(2)),
            "corpus.jsonl:2: document \"d1\" has no vector in",
        ),
        (
            "no vectors at all",
            "\n".to_string(),
            "vectors.jsonl: holds no vectors",
        ),
    ];
    for (what, text, needle) in cases {
        let f = Fixture::new(3);
        let vectors = f.write("vectors.jsonl", &text);
        let stderr = fails(&strs(&f.index_args(&vectors, &[])), needle);
        assert!(
            !f.root.join("idx").exists(),
            "{what}: an index was left behind: {stderr}"
        );
    }
}

#[test]
fn add_with_vectors_checks_them_against_the_index() {
    let f = Fixture::new(5);
    let vectors = f.write("vectors.jsonl", &vector_lines(&[0, 1, 2, 3, 4], 8));
    ok(&strs(&f.index_args(&vectors, &[])));
    let more: String = (5..8)
        .map(|i| format!("{{\"_id\":\"d{i}\",\"title\":\"\",\"text\":\"more {i}\"}}\n"))
        .collect();
    let docs = f.write("more.jsonl", &more);
    let idx = f.path("idx");
    fails(
        &["add", "--index", &idx, "--docs", &docs],
        "stores a vector of 8 dimensions with every document; give the new documents' vectors with --vectors FILE",
    );
    let wrong = f.write("wrong.jsonl", &vector_lines(&[5, 6, 7], 9));
    fails(
        &["add", "--index", &idx, "--docs", &docs, "--vectors", &wrong],
        &format!("{wrong}:1: vector has 9 values, expected 8"),
    );
    let short = f.write("short.jsonl", &vector_lines(&[5, 7], 8));
    fails(
        &["add", "--index", &idx, "--docs", &docs, "--vectors", &short],
        "more.jsonl:2: document \"d6\" has no vector in",
    );
    assert_eq!(
        Index::open(&idx).unwrap().num_docs(),
        5,
        "nothing was committed"
    );
    let right = f.write("right.jsonl", &vector_lines(&[7, 6, 5], 8));
    ok(&["add", "--index", &idx, "--docs", &docs, "--vectors", &right]);
    assert_each_finds_itself(&f.root.join("idx"), 8, 8);

    // An index without vectors takes none.
    let g = Fixture::new(2);
    ok(&[
        "index",
        "--corpus",
        &g.path("corpus"),
        "--index",
        &g.path("idx"),
    ]);
    fails(
        &[
            "add",
            "--index",
            &g.path("idx"),
            "--docs",
            &docs,
            "--vectors",
            &right,
        ],
        "stores no vectors",
    );
}
