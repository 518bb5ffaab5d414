//! Issue 33 through the commands: a file truncated under a reader process, inputs that
//! cannot be read twice, evaluations of zero queries, numbers whose scores would be
//! infinite, and ids a TREC run cannot carry. Each is an error naming what is wrong
//! (exit 1), never a signal, a hang, or a silent wrong answer.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{covid_docs, fails, heddle_eval, index_of, ok};

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// A reader process searching a long-lived handle while a segment file is truncated in
/// place under it: it reports failures and exits 1, not 135 (killed by SIGBUS).
#[test]
fn a_reader_process_survives_a_segment_file_truncated_under_it() {
    let dir = tempfile::tempdir().unwrap();
    let index = index_of(dir.path(), &covid_docs(200));
    let ready = dir.path().join("ready");
    let reader = Command::new(env!("CARGO_BIN_EXE_heddle-eval"))
        .args([
            "read-loop",
            "--index",
            index.to_str().unwrap(),
            "--secs",
            "60",
        ])
        .args(["--query", "transmission", "--rounds", "200000", "--ready"])
        .arg(&ready)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !ready.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the reader never got going"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let post = index.join("seg-000001.flat.post");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&post)
        .unwrap()
        .set_len(0)
        .unwrap();
    let out = reader.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{:?}: {stderr}", out.status);
    assert!(
        stderr.contains("shrank while it was mapped") && stderr.contains("seg-000001.flat.post"),
        "{stderr}"
    );
    let report = heddle_eval(&["check", "--index", index.to_str().unwrap()]);
    assert_eq!(report.status.code(), Some(1));
}

/// `--queries /dev/stdin` from a pipe used to read nothing the second time and write an
/// empty run; a FIFO of vectors used to hang `index`.
#[test]
fn inputs_that_cannot_be_read_twice_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let index = index_of(dir.path(), &covid_docs(20));
    let run = dir.path().join("run").to_string_lossy().into_owned();
    let mut search = Command::new(env!("CARGO_BIN_EXE_heddle-eval"))
        .args(["search", "--index", index.to_str().unwrap()])
        .args(["--queries", "/dev/stdin", "--run-out", &run])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    let _ = search.stdin.take().unwrap().write_all(b"q1\tcovid\n");
    let out = search.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("is a pipe") && stderr.contains("save it to a file"),
        "{stderr}"
    );
    assert!(!Path::new(&run).exists(), "no run is written");

    let fifo = dir.path().join("vectors.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let corpus = write(dir.path(), "c.jsonl", &covid_docs(3));
    let idx = dir.path().join("vidx");
    fails(
        &[
            "index",
            "--corpus",
            &corpus,
            "--index",
            idx.to_str().unwrap(),
            "--vectors",
            fifo.to_str().unwrap(),
        ],
        "is a pipe",
    );
}

#[test]
fn evaluations_of_zero_queries_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let index = index_of(dir.path(), &covid_docs(20));
    let index = index.to_str().unwrap();
    let queries = write(dir.path(), "q.tsv", "q1\tcovid masks\n");
    let run = dir.path().join("run").to_string_lossy().into_owned();
    for qrels in ["", "query-id\tcorpus-id\tscore\n"] {
        let qrels = write(dir.path(), "qrels.tsv", qrels);
        fails(
            &[
                "quality",
                "--index",
                index,
                "--queries",
                &queries,
                "--qrels",
                &qrels,
            ],
            "holds no judgments",
        );
        let a = write(dir.path(), "a.run", "q1 Q0 d1 1 1.0 t\n");
        fails(
            &["compare-runs", "--qrels", &qrels, &a, &a],
            "holds no judgments",
        );
    }
    let empty = write(dir.path(), "empty.tsv", "");
    fails(
        &[
            "search",
            "--index",
            index,
            "--queries",
            &empty,
            "--run-out",
            &run,
        ],
        "holds no queries",
    );
}

#[test]
fn numbers_whose_scores_would_not_be_finite_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let index = index_of(dir.path(), &covid_docs(20));
    let index = index.to_str().unwrap();
    let fuse = ["search", "--index", index, "--fuse", "flat,flat:1.2:0.75"];
    for (flag, value, needle) in [
        ("--weights", "1e308,1e308", "is not a number from 0 to"),
        ("--weights", "0,0", "are all 0"),
        ("--rrf-k", "1e308", "must be a number from 0 to 1e6"),
    ] {
        let mut args = fuse.to_vec();
        args.extend([flag, value, "covid"]);
        fails(&args, needle);
    }
    // At the bounds every score is a number.
    let mut args = fuse.to_vec();
    args.extend(["--weights", "1e6,1", "--rrf-k", "1e6", "--json", "covid"]);
    let out: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
    let hits = out["hits"].as_array().unwrap();
    assert!(!hits.is_empty());
    assert!(
        hits.iter()
            .all(|h| h["score"].as_f64().is_some_and(f64::is_finite))
    );
}

#[test]
fn ids_a_run_cannot_carry_are_refused_and_a_bom_in_a_run_is_stripped() {
    let dir = tempfile::tempdir().unwrap();
    for id in ["a b", "a\\tb", "a\\u0000b", "a\\nb"] {
        // Indexed with its exact bytes (as every command keeps an id)...
        let corpus = write(
            dir.path(),
            "c.jsonl",
            &format!(
                "{{\"_id\":\"ok\",\"text\":\"covid\"}}\n{{\"_id\":\"{id}\",\"text\":\"covid\"}}\n"
            ),
        );
        let idx = dir.path().join("idx");
        let _ = std::fs::remove_dir_all(&idx);
        ok(&[
            "index",
            "--corpus",
            &corpus,
            "--index",
            idx.to_str().unwrap(),
        ]);
        // ...but never written into a TREC run, where it would shift the columns.
        let topics = write(dir.path(), "t.tsv", "q1\tcovid\n");
        let run = dir.path().join("out.run");
        let _ = std::fs::remove_file(&run);
        fails(
            &[
                "search",
                "--index",
                idx.to_str().unwrap(),
                "--queries",
                &topics,
                "--run-out",
                run.to_str().unwrap(),
            ],
            "a TREC run's columns are split at whitespace",
        );
        let written = std::fs::read_to_string(&run).unwrap_or_default();
        assert!(written.is_empty(), "{id}: a run was written: {written:?}");
    }
    // A run whose first line starts with a BOM scores its query as without one.
    let qrels_beir = write(dir.path(), "qrels-beir.tsv", "q1\td1\t1\n");
    let plain = write(dir.path(), "plain.run", "q1 Q0 d1 1 2.0 t\n");
    let bom = write(dir.path(), "bom.run", "\u{FEFF}q1 Q0 d1 1 2.0 t\n");
    let out = ok(&[
        "compare-runs",
        "--qrels",
        &qrels_beir,
        "--json",
        &plain,
        &bom,
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for m in v["metrics"].as_array().unwrap() {
        assert_eq!(m["a"], m["b"], "{m}");
        assert!(m["a"].as_f64().unwrap() > 0.0, "{m}");
    }
}

/// Issue 33, item 15: the smaller points, each through the command a user types.
#[test]
fn numbers_that_do_nothing_sensible_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = write(dir.path(), "c.jsonl", &covid_docs(3));
    let idx = dir.path().join("idx");
    let idx = idx.to_str().unwrap();
    for (flag, value) in [
        ("--threads", "100000"),
        ("--merge-to", "0"),
        ("--max-token-chars", "0"),
        ("--bp-max-df", "-1"),
        ("--bp-max-df", "1.5"),
    ] {
        let flag_value = format!("{flag}={value}");
        fails(
            &["index", "--corpus", &corpus, "--index", idx, &flag_value],
            flag,
        );
        assert!(
            !Path::new(idx).exists(),
            "{flag} {value}: nothing is created"
        );
    }
    // `merge --max-segments 0` is the same nonsense as `index --merge-to 0`.
    let index = index_of(dir.path(), &covid_docs(3));
    fails(
        &[
            "merge",
            "--index",
            index.to_str().unwrap(),
            "--max-segments",
            "0",
        ],
        "--max-segments 0",
    );
}

#[test]
fn check_of_a_missing_directory_says_so_without_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing-here");
    let out = heddle_eval(&["check", "--index", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no index to check"), "{stderr}");
}

#[test]
fn force_does_not_replace_an_index_sharing_its_directory_with_a_user_file() {
    let dir = tempfile::tempdir().unwrap();
    let index = index_of(dir.path(), &covid_docs(5));
    std::fs::write(index.join("notes.txt"), "mine").unwrap();
    let corpus = write(dir.path(), "other.jsonl", &covid_docs(2));
    fails(
        &[
            "index",
            "--corpus",
            &corpus,
            "--index",
            index.to_str().unwrap(),
            "--force",
        ],
        "notes.txt",
    );
    assert_eq!(
        std::fs::read_to_string(index.join("notes.txt")).unwrap(),
        "mine"
    );
    let out = ok(&[
        "search",
        "--index",
        index.to_str().unwrap(),
        "--json",
        "--k",
        "100",
        "covid",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["hits"].as_array().unwrap().len(),
        5,
        "the old index stands"
    );
}

/// A full standard output is an error (exit 1), not a panic (101); a full standard
/// error loses the progress notes, not the index.
#[test]
fn full_outputs_are_errors_or_lost_notes_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = write(dir.path(), "c.jsonl", &covid_docs(5));
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let idx = dir.path().join("idx");
    let run = |args: &[&str], stdout_full: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_heddle-eval"));
        cmd.args(args);
        if stdout_full {
            cmd.stdout(full()).stderr(Stdio::piped());
        } else {
            cmd.stderr(full()).stdout(Stdio::piped());
        }
        cmd.output().unwrap()
    };
    let out = run(
        &[
            "index",
            "--corpus",
            &corpus,
            "--index",
            idx.to_str().unwrap(),
        ],
        false,
    );
    assert_eq!(out.status.code(), Some(0), "{:?}", out.status);
    let out = run(&["check", "--index", idx.to_str().unwrap()], true);
    assert_eq!(out.status.code(), Some(1), "{:?}", out.status);
    assert!(String::from_utf8_lossy(&out.stderr).contains("writing to standard output"));
    let out = ok(&[
        "search",
        "--index",
        idx.to_str().unwrap(),
        "--json",
        "covid",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["hits"].as_array().unwrap().len(),
        5,
        "the index was built whole"
    );
}

/// `search --query-vectors --run-out` searches as `--vector-search` says.
#[test]
fn query_vector_runs_follow_vector_search() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = write(dir.path(), "c.jsonl", &covid_docs(4));
    let vectors: String = (0..4)
        .map(|i| {
            format!(
                "{{\"_id\":\"d{i}\",\"vector\":[{}, 1.0]}}\n",
                i as f32 / 4.0
            )
        })
        .collect();
    let vectors = write(dir.path(), "v.jsonl", &vectors);
    let queries = write(
        dir.path(),
        "qv.jsonl",
        "{\"_id\":\"q1\",\"vector\":[1.0, 0.0]}\n",
    );
    let idx = dir.path().join("idx");
    let idx = idx.to_str().unwrap();
    ok(&[
        "index",
        "--corpus",
        &corpus,
        "--index",
        idx,
        "--vectors",
        &vectors,
    ]);
    let run = dir.path().join("r.run");
    for (how, needle) in [("exact", "exact inner product"), ("hnsw", "HNSW ef 64")] {
        let out = ok(&[
            "search",
            "--index",
            idx,
            "--query-vectors",
            &queries,
            "--run-out",
            run.to_str().unwrap(),
            "--vector-search",
            how,
            "--json",
        ]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(
            v["ranking"].as_str().unwrap().contains(needle),
            "{how}: {v}"
        );
    }
}

/// Every thread-count flag is bounded as `index --threads` is (1,024): a typo is refused
/// by name before anything starts, in every command that takes one.
#[test]
fn every_thread_count_is_bounded() {
    // Paths that do not exist: were a bound missing, each command would stop at once on
    // them (and this test fail on its message) instead of serving or measuring.
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let idx = missing.to_str().unwrap();
    let q = idx;
    let ladder = ["bench", "--index", idx, "--queries", q, "--rates", "10"];
    let writes = ["bench", "--writes", "--index", idx, "--queries", q];
    let ab = ["ab", "--baseline", "HEAD", "--index", idx, "--queries", q];
    let ab_writes = [&ab[..], &["--writes"]].concat();
    let cases: [(&[&str], &str); 7] = [
        (&["serve", "--index", idx], "--threads"),
        (&ladder, "--threads"),
        (&writes, "--commit-threads"),
        (&["embed", "--queries", q], "--threads"),
        (&ab, "--threads"),
        (&ab_writes, "--commit-threads"),
        (&["add", "--index", idx, "--docs", q], "--threads"),
    ];
    for (args, flag) in cases {
        let args = [args, &[flag, "1025"]].concat();
        let out = heddle_eval(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() == Some(2),
            "{args:?}: {:?} {stderr}",
            out.status
        );
        assert!(stderr.contains(flag), "{args:?}: {stderr}");
        assert!(stderr.contains("1024"), "{args:?}: {stderr}");
    }
}

/// The vector arm on an index without vectors says why, naming the command that builds
/// one (not a library API), in every command that can run it: the bench's warm-up used
/// to say only that every query failed.
#[test]
fn the_vector_arm_without_vectors_names_the_cause_and_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let index = index_of(dir.path(), &covid_docs(3));
    let idx = index.to_str().unwrap();
    let q = write(
        dir.path(),
        "q.jsonl",
        "{\"_id\":\"q1\",\"text\":\"covid\"}\n",
    );
    let qrels = write(dir.path(), "qrels.tsv", "q1\t0\td1\t1\n");
    let arm = ["--arm", "vector", "--encoder", "hashing:8"];
    let short = ["--samples", "5", "--min-duration", "0"];
    for args in [
        [&["search", "--index", idx][..], &arm, &["covid"]].concat(),
        [
            &[
                "quality",
                "--index",
                idx,
                "--queries",
                &q,
                "--qrels",
                &qrels,
            ][..],
            &arm,
        ]
        .concat(),
        [
            &["bench", "--index", idx, "--queries", &q, "--rates", "10"][..],
            &arm,
            &short,
        ]
        .concat(),
        [
            &[
                "bench",
                "--writes",
                "--index",
                idx,
                "--queries",
                &q,
                "--rate",
                "10",
            ][..],
            &arm,
            &short,
        ]
        .concat(),
    ] {
        let stderr = fails(&args, "stores no vectors");
        assert!(stderr.contains("index --vectors"), "{args:?}: {stderr}");
        assert!(!stderr.contains("IndexSettings"), "{args:?}: {stderr}");
    }
}
