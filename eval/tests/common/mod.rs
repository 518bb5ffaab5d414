//! Running `heddle-eval` as a user does, for the command-line tests.
#![allow(dead_code)] // each test file uses its own subset

use std::process::{Command, Output};

pub fn heddle_eval(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_heddle-eval"))
        .args(args)
        .output()
        .expect("heddle-eval runs")
}

/// Stdout of a run that must succeed.
pub fn ok(args: &[&str]) -> String {
    let out = heddle_eval(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Stderr of a run that must fail with exit code 1 (an error, not 101, a panic) and say
/// `needle`.
pub fn fails(args: &[&str], needle: &str) -> String {
    let out = heddle_eval(args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(
        stderr.contains(needle),
        "{args:?}: {stderr:?} lacks {needle:?}"
    );
    stderr
}

/// Builds a heddle index with the binary, as a user does, from BEIR corpus lines:
/// `DIR/corpus/corpus.jsonl` holds them, `DIR/index` is returned.
pub fn index_of(dir: &std::path::Path, corpus_jsonl: &str) -> std::path::PathBuf {
    let corpus = dir.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("corpus.jsonl"), corpus_jsonl).unwrap();
    let index = dir.join("index");
    ok(&[
        "index",
        "--corpus",
        corpus.to_str().unwrap(),
        "--index",
        index.to_str().unwrap(),
    ]);
    index
}

/// `n` small documents `d0…`, each about covid transmission and masks, and its number.
pub fn covid_docs(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "{{\"_id\":\"d{i}\",\"title\":\"t{i}\",\"text\":\"covid transmission masks number {i}\"}}\n"
            )
        })
        .collect()
}

/// The ids `search --json` finds for `query` in `index`, best first (at most 100). The
/// query follows `--`, so one that starts with a dash is a query, not a flag.
pub fn hit_ids(index: &str, query: &str) -> Vec<String> {
    let out = ok(&[
        "search", "--index", index, "--json", "--k", "100", "--", query,
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_string())
        .collect()
}
