//! Issue 33, item 15: a standard output or standard error that cannot be written
//! (`>/dev/full`, `2>/dev/full`) never panics (exit 101), in any command. A full standard
//! output fails the command with exit 1 and says so, after the command's work is committed
//! or written to its files; a full standard error loses the notes only (exit 0).
//! `/dev/full` is Linux's: elsewhere this file holds no test.
#![cfg(target_os = "linux")]

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{covid_docs, hit_ids, index_of, ok};

#[derive(Clone, Copy, Debug)]
enum Full {
    Stdout,
    Stderr,
}

fn dev_full() -> std::fs::File {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full")
}

fn command(full: Full, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_heddle-eval"));
    cmd.args(args).stdin(Stdio::null());
    match full {
        Full::Stdout => cmd.stdout(dev_full()).stderr(Stdio::piped()),
        Full::Stderr => cmd.stderr(dev_full()).stdout(Stdio::piped()),
    };
    cmd
}

/// Runs `args` with `full` unwritable and checks the exit: 1 and the reason on stderr
/// for a full stdout, 0 for a full stderr (the command's notes are lost, not its work).
fn runs_with_full(full: Full, args: &[&str]) -> Output {
    let out = command(full, args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    match full {
        Full::Stdout => {
            assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
            assert!(
                stderr.contains("writing to standard output"),
                "{args:?}: {stderr}"
            );
            assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        }
        Full::Stderr => assert_eq!(out.status.code(), Some(0), "{args:?}: {:?}", out.status),
    }
    out
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// Every writing command commits before it reports: with either output full, what it
/// was asked to do is in the index afterwards, and `check` finds it whole.
#[test]
fn writing_commands_commit_whatever_output_is_full() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = write(dir.path(), "c.jsonl", &covid_docs(6));
    for full in [Full::Stdout, Full::Stderr] {
        let idx = dir.path().join(format!("idx-{full:?}"));
        let idx = idx.to_str().unwrap();
        runs_with_full(full, &["index", "--corpus", &corpus, "--index", idx]);
        assert_eq!(
            hit_ids(idx, "covid").len(),
            6,
            "{full:?}: index built whole"
        );
        let more = write(
            dir.path(),
            "more.jsonl",
            "{\"_id\":\"extra\",\"title\":\"x\",\"text\":\"covid extra\"}\n",
        );
        runs_with_full(full, &["add", "--index", idx, "--docs", &more]);
        assert!(
            hit_ids(idx, "extra").contains(&"extra".to_string()),
            "{full:?}"
        );
        runs_with_full(full, &["delete", "--index", idx, "d0"]);
        assert!(
            !hit_ids(idx, "covid").contains(&"d0".to_string()),
            "{full:?}"
        );
        runs_with_full(full, &["merge", "--index", idx]);
        runs_with_full(full, &["check", "--index", idx]);
        ok(&["check", "--index", idx]);
        assert_eq!(hit_ids(idx, "covid").len(), 6, "{full:?}: 6 - d0 + extra");
    }
}

/// The reading commands and the ones that write files: the files are written whole
/// before the full standard output is found.
#[test]
fn reading_commands_and_their_files_whatever_output_is_full() {
    let dir = tempfile::tempdir().unwrap();
    let index = index_of(dir.path(), &covid_docs(30));
    let idx = index.to_str().unwrap();
    let queries = write(
        dir.path(),
        "q.jsonl",
        "{\"_id\":\"q1\",\"text\":\"covid 1\"}\n{\"_id\":\"q2\",\"text\":\"masks 2\"}\n",
    );
    let qrels = write(
        dir.path(),
        "qrels.tsv",
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n",
    );
    let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    for full in [Full::Stdout, Full::Stderr] {
        let tag = format!("{full:?}");
        let (run_a, run_b) = (path(&format!("a-{tag}.run")), path(&format!("b-{tag}.run")));
        runs_with_full(full, &["search", "--index", idx, "covid"]);
        runs_with_full(full, &["search", "--index", idx, "--json", "covid"]);
        runs_with_full(
            full,
            &[
                "search",
                "--index",
                idx,
                "--queries",
                &queries,
                "--run-out",
                &run_a,
            ],
        );
        assert!(std::fs::read_to_string(&run_a).unwrap().contains("q2 Q0"));
        let html = path(&format!("q-{tag}.html"));
        runs_with_full(
            full,
            &[
                "quality",
                "--index",
                idx,
                "--queries",
                &queries,
                "--qrels",
                &qrels,
                "--k1",
                "0.9",
                "--run-out",
                &run_b,
                "--html",
                &html,
            ],
        );
        assert!(std::fs::read_to_string(&run_b).unwrap().contains("q2 Q0"));
        assert!(std::fs::read_to_string(&html).unwrap().contains("<html"));
        runs_with_full(full, &["compare-runs", "--qrels", &qrels, &run_a, &run_b]);
        let json = path(&format!("bench-{tag}.json"));
        runs_with_full(
            full,
            &[
                "bench",
                "--index",
                idx,
                "--queries",
                &queries,
                "--rates",
                "100",
                "--samples",
                "50",
                "--min-duration",
                "0",
                "--warmup",
                "2",
                "--sequential",
                "4",
                "--json",
                &json,
                "--html",
                &path(&format!("b-{tag}.html")),
            ],
        );
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(
            report["complete"], true,
            "{full:?}: the bench's JSON is whole"
        );
        let json = path(&format!("writes-{tag}.json"));
        runs_with_full(
            full,
            &[
                "bench",
                "--writes",
                "--index",
                idx,
                "--queries",
                &queries,
                "--rate",
                "100",
                "--samples",
                "100",
                "--min-duration",
                "0",
                "--write-docs",
                "10",
                "--commit-threads",
                "1",
                "--json",
                &json,
            ],
        );
        assert!(
            std::fs::read_to_string(&json)
                .unwrap()
                .contains("\"complete\":true")
        );
        let json = path(&format!("ab-{tag}.json"));
        let bin = env!("CARGO_BIN_EXE_heddle-eval");
        runs_with_full(
            full,
            &[
                "ab",
                "--baseline",
                bin,
                "--candidate",
                bin,
                "--index",
                idx,
                "--queries",
                &queries,
                "--pairs",
                "2",
                "--rates",
                "200",
                "--samples",
                "100",
                "--min-duration",
                "0",
                "--warmup",
                "2",
                "--cost-queries",
                "0",
                "--json",
                &json,
            ],
        );
        assert!(std::fs::read_to_string(&json).unwrap().contains("\"runs\""));
        for args in [&["--help"][..], &["--version"], &["index", "--help"]] {
            if let Full::Stdout = full {
                runs_with_full(full, args);
            }
        }
    }
}

/// `cost` under valgrind (skipped, and said, where valgrind is not installed).
#[test]
fn cost_whatever_output_is_full() {
    let valgrind = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !valgrind {
        eprintln!("SKIPPED: valgrind is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let index = index_of(dir.path(), &covid_docs(10));
    let queries = write(
        dir.path(),
        "q.jsonl",
        "{\"_id\":\"q1\",\"text\":\"covid\"}\n",
    );
    for full in [Full::Stdout, Full::Stderr] {
        let json = dir.path().join(format!("cost-{full:?}.json"));
        runs_with_full(
            full,
            &[
                "cost",
                "--index",
                index.to_str().unwrap(),
                "--queries",
                &queries,
                "--count",
                "3",
                "--warmup",
                "1",
                "--json",
                json.to_str().unwrap(),
            ],
        );
        assert!(std::fs::read_to_string(&json).unwrap().contains("classes"));
    }
}

fn wait_at_most(child: &mut Child, secs: u64) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            panic!("still running after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `serve` with a full standard output cannot tell anyone its URL: an error before the
/// first request. With a full standard error it serves, and its SIGTERM note (lost)
/// does not turn a clean stop into a panic.
#[test]
fn serve_whatever_output_is_full() {
    let dir = tempfile::tempdir().unwrap();
    let index = index_of(dir.path(), &covid_docs(5));
    let args = [
        "serve",
        "--index",
        index.to_str().unwrap(),
        "--addr",
        "127.0.0.1:0",
    ];
    let mut child = command(Full::Stdout, &args).spawn().unwrap();
    let status = wait_at_most(&mut child, 60);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("writing to standard output"), "{stderr}");

    let mut child = command(Full::Stderr, &args).spawn().unwrap();
    // Kept open until the end: its last line ("stopped") is written after SIGTERM.
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("http://127.0.0.1:"), "{line}");
    // SAFETY: a plain kill(2) of the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let status = wait_at_most(&mut child, 60);
    assert_eq!(status.code(), Some(0), "{status:?}");
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("stopped"), "{line}");
}
