//! The `heddle-corpus` binary: synth twice gives the same bytes; queries and stats run.

use std::path::Path;
use std::process::Command;

fn run(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_heddle-corpus"))
        .args(args)
        .output()
        .expect("run heddle-corpus");
    assert!(
        out.status.success(),
        "heddle-corpus {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap() + &String::from_utf8_lossy(&out.stderr)
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

#[test]
fn synth_is_reproducible_and_queries_and_stats_read_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for (out, threads) in [(&a, "1"), (&b, "2")] {
        run(&[
            "synth",
            "--out",
            out.to_str().unwrap(),
            "--docs",
            "1500",
            "--seed",
            "7",
            "--threads",
            threads,
        ]);
    }
    assert_eq!(read(&a.join("corpus.jsonl")), read(&b.join("corpus.jsonl")));
    assert_eq!(
        read(&a.join("queries.jsonl")),
        read(&b.join("queries.jsonl"))
    );
    assert!(!a.join("corpus.jsonl.partial").exists());

    let stats = run(&["stats", "--corpus", a.to_str().unwrap()]);
    assert!(stats.contains("documents         1,500"), "{stats}");
    assert!(stats.contains("zipf exponent"), "{stats}");

    let q = dir.path().join("q.jsonl");
    let log = run(&[
        "queries",
        "--corpus",
        a.to_str().unwrap(),
        "--out",
        q.to_str().unwrap(),
        "--count",
        "20",
        "--terms",
        "2..4",
    ]);
    assert!(log.contains("band frequent"), "{log}");
    let lines = String::from_utf8(read(&q)).unwrap();
    assert_eq!(lines.lines().count(), 20);
}

#[test]
fn synth_like_learns_from_a_beir_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (base, like) = (dir.path().join("base"), dir.path().join("like"));
    run(&["synth", "--out", base.to_str().unwrap(), "--docs", "800"]);
    let log = run(&[
        "synth",
        "--out",
        like.to_str().unwrap(),
        "--docs",
        "800",
        "--like",
        base.to_str().unwrap(),
        "--lengths",
        "like",
    ]);
    assert!(log.contains("learned"), "{log}");
    assert!(read(&like.join("corpus.jsonl")).len() > 10_000);
}

#[test]
fn a_malformed_corpus_is_reported_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("corpus.jsonl"),
        "{\"_id\":\"1\",\"text\":\"a\"}\n{\"_id\":\"2\",\"title\":5}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_heddle-corpus"))
        .args(["stats", "--corpus", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("corpus.jsonl:2: field \"title\" is not a string"),
        "{err}"
    );
}

/// Runs heddle-corpus with RUST_BACKTRACE=1 expecting a refusal: non-zero exit, and
/// stderr that is one line, with no backtrace however the environment asks for one.
fn refuses_in_one_line(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_heddle-corpus"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .env("RUST_LIB_BACKTRACE", "1")
        .output()
        .expect("run heddle-corpus");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{args:?} succeeded: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(!err.to_lowercase().contains("backtrace"), "{args:?}: {err}");
    err
}

/// Issue 17: an ordinary error is one line even with RUST_BACKTRACE set.
#[test]
fn errors_are_one_line_even_with_rust_backtrace_set() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("corpus.jsonl");
    std::fs::write(&bad, "{\"_id\": \"a\", \"text\": \"fine\"}\nnot json\n").unwrap();
    let err = refuses_in_one_line(&["stats", "--corpus", bad.to_str().unwrap()]);
    assert!(err.contains("corpus.jsonl:2"), "{err}");
    let missing = dir.path().join("missing");
    let err = refuses_in_one_line(&["stats", "--corpus", missing.to_str().unwrap()]);
    assert!(err.contains("missing"), "{err}");
}

/// Issue 17: `synth --docs 0` wrote an empty corpus, then failed; it is refused before
/// anything is written.
#[test]
fn synth_refuses_zero_documents_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let err = Command::new(env!("CARGO_BIN_EXE_heddle-corpus"))
        .args(["synth", "--docs", "0", "--out", out.to_str().unwrap()])
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&err.stderr);
    assert!(!err.status.success());
    assert!(stderr.contains("--docs"), "{stderr}");
    assert!(!stderr.to_lowercase().contains("backtrace"), "{stderr}");
    assert!(!out.exists(), "wrote {}", out.display());
}
