//! heddle-corpus with a closed stdout or stderr (`| head`, `2>&1 | head`): never a panic.
//! With a full one (`>/dev/full`): what it prints and cannot write is an error that says
//! so (exit 1), never a silent success.

use std::process::{Command, Output, Stdio};

/// Runs heddle-corpus with stdout or stderr a pipe whose read end is closed at once.
fn run_with_closed(args: &[&str], close_stderr: bool) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_heddle-corpus"));
    command
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    if close_stderr {
        drop(child.stderr.take());
    } else {
        drop(child.stdout.take());
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_stderr_does_not_stop_synth() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("s");
    let out = run_with_closed(
        &[
            "synth",
            "--out",
            out_dir.to_str().unwrap(),
            "--docs",
            "1500",
            "--queries",
            "5",
        ],
        true,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out_dir.join("corpus.jsonl").exists());
    assert!(out_dir.join("queries.jsonl").exists());
}

#[test]
fn a_closed_stdout_ends_stats_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let corpus: String = (0..200)
        .map(|i| format!("{{\"_id\":\"{i}\",\"text\":\"word{i} common\"}}\n"))
        .collect();
    std::fs::write(dir.path().join("corpus.jsonl"), corpus).unwrap();
    let out = run_with_closed(
        &[
            "stats",
            "--corpus",
            dir.path().to_str().unwrap(),
            "--top",
            "5000",
        ],
        false,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

/// Runs heddle-corpus with its standard output on `/dev/full` (Linux's always-full file).
#[cfg(target_os = "linux")]
fn run_with_full_stdout(args: &[&str]) -> Output {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    Command::new(env!("CARGO_BIN_EXE_heddle-corpus"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn help_version_and_stats_fail_when_stdout_is_full() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("corpus.jsonl"),
        "{\"_id\":\"1\",\"text\":\"one two\"}\n",
    )
    .unwrap();
    let corpus = dir.path().to_str().unwrap();
    for args in [
        &["--help"][..],
        &["--version"],
        &["synth", "--help"],
        &["stats", "--corpus", corpus],
    ] {
        let out = run_with_full_stdout(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("writing to standard output"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
