//! User numbers and streams that once aborted, wrapped or panicked the commands: each is
//! now refused with an error naming the flag, clamped, or handled quietly.

mod common;

use common::{fails, heddle_eval, hit_ids, ok};

use std::path::{Path, PathBuf};

/// Ten documents, "rare" in one of them (its idf ≈ 2, enough to overflow k1 = 1e308).
fn indexed(dir: &Path) -> String {
    let ids: Vec<String> = (0..10).map(|i| format!("d{i}")).collect();
    let docs: Vec<(&str, &str, &str)> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            (
                id.as_str(),
                "",
                if i == 3 { "rare common" } else { "common" },
            )
        })
        .collect();
    index_of(dir, &docs)
}

fn hit_count(stdout: &str) -> usize {
    let v: serde_json::Value = serde_json::from_str(stdout).unwrap();
    v["hits"].as_array().unwrap().len()
}

#[test]
fn search_k_beyond_u32_is_refused_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let idx = indexed(dir.path());
    fails(
        &["search", "--index", &idx, "--k", "4294967296", "common"],
        "--k 4294967296 is more than any index can hold",
    );
    fails(
        &[
            "search",
            "--index",
            &idx,
            "--k",
            "18446744073709551615",
            "common",
        ],
        "--k 18446744073709551615 is more than any index can hold",
    );
    fails(
        &["search", "--index", &idx, "--k", "0", "common"],
        "--k 0 asks for no hits",
    );
    // The largest k accepted is clamped to the ten live documents.
    let out = ok(&[
        "search",
        "--index",
        &idx,
        "--json",
        "--k",
        "4294967295",
        "common",
    ]);
    assert_eq!(hit_count(&out), 10);
    let help = ok(&["search", "--help"]);
    assert!(
        help.contains("4294967295") && help.contains("live documents"),
        "{help}"
    );
}

#[test]
fn fusion_depth_and_quality_hits_beyond_u32_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let idx = indexed(dir.path());
    let fused = [
        "search",
        "--index",
        &idx,
        "--json",
        "--fuse",
        "flat,flat:0.9:0.4",
    ];
    fails(
        &[&fused[..], &["--depth", "4294967296", "common"]].concat(),
        "--depth 4294967296 is more than any index can hold",
    );
    fails(
        &[&fused[..], &["--depth", "0", "common"]].concat(),
        "--depth 0 asks for no hits",
    );
    let sum = [&fused[..], &["--combine", "sum", "--k", "4294967295"]].concat();
    for depth in ["4294967295", "3"] {
        let out = ok(&[&sum[..], &["--depth", depth, "common"]].concat());
        assert!(hit_count(&out) >= 3, "{out}");
    }
    // Checked before any file is read.
    let quality = ["quality", "--index", &idx, "--queries", "q", "--qrels", "r"];
    fails(
        &[&quality[..], &["--hits", "4294967296"]].concat(),
        "--hits 4294967296 is more than any index can hold",
    );
}

#[test]
fn compare_runs_refuses_resamples_it_could_not_hold() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| -> PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let qrels = write("qrels.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\n");
    let run = write("a.run", "q1 Q0 d1 1 2.5 a\n");
    let (qrels, run) = (qrels.to_string_lossy(), run.to_string_lossy());
    fails(
        &[
            "compare-runs",
            &run,
            &run,
            "--qrels",
            &qrels,
            "--resamples",
            "1099511627776",
        ],
        "--resamples 1099511627776 is more than",
    );
    ok(&["compare-runs", &run, &run, "--qrels", &qrels]);
}

#[test]
fn k1_that_would_make_scores_infinite_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let idx = indexed(dir.path());
    for (flag, value) in [
        ("--k1", "1e308"),
        ("--k1", "inf"),
        ("--k1", "NaN"),
        ("--k1", "1000.5"),
        ("--b", "1.5"),
    ] {
        let msg = fails(
            &["search", "--index", &idx, flag, value, "rare"],
            "from 0 to",
        );
        assert!(msg.contains(&format!("{flag} {value}")), "{msg}");
        fails(
            &[
                "quality",
                "--index",
                &idx,
                "--queries",
                "q",
                "--qrels",
                "r",
                flag,
                value,
            ],
            "from 0 to",
        );
    }
    fails(
        &[
            "search",
            "--index",
            &idx,
            "--fuse",
            "flat,flat:1e308:0.75",
            "rare",
        ],
        "stream \"flat:1e308:0.75\"",
    );
    // The largest k1 still ranks by a finite score.
    let out = ok(&["search", "--index", &idx, "--json", "--k1", "1000", "rare"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["hits"][0]["score"].as_f64().unwrap().is_finite(), "{out}");
    let help = ok(&["search", "--help"]);
    assert!(help.contains("from 0 to 1000"), "{help}");
}

/// An index of one document, "x", and the path of a docs file holding `body`.
fn index_and_docs(dir: &Path, body: &str) -> (String, String) {
    let idx = index_of(dir, &[("x", "", "first")]);
    std::fs::write(dir.join("d.jsonl"), body).unwrap();
    (idx, dir.join("d.jsonl").to_string_lossy().into_owned())
}

#[test]
fn an_overlong_line_is_refused_without_reading_it_whole() {
    let dir = tempfile::tempdir().unwrap();
    // 3 MB of text against a 1000-byte limit: the line is refused once it passes
    // 6 × 1000 + 64 KiB (lines.rs tests that no more than that is read).
    let body = "{\"_id\":\"a\",\"text\":\"ok\"}\n".to_string()
        + &serde_json::json!({"_id": "b", "text": "x".repeat(3 << 20)}).to_string()
        + "\n";
    let (idx, docs) = index_and_docs(dir.path(), &body);
    let msg = fails(
        &[
            "add",
            "--index",
            &idx,
            "--docs",
            &docs,
            "--max-doc-bytes",
            "1000",
        ],
        "d.jsonl:2: line longer than 71536 bytes (not read further)",
    );
    assert!(msg.contains("--max-doc-bytes 1000"), "{msg}");
    let help = ok(&["add", "--help"]);
    assert!(help.contains("64 KiB"), "{help}");
}

#[test]
fn a_duplicate_id_in_one_file_names_its_first_line() {
    let dir = tempfile::tempdir().unwrap();
    let body = "{\"_id\":\"p\",\"text\":\"one\"}\n{\"_id\":\"q\",\"text\":\"two\"}\n\n{\"_id\":\"p\",\"text\":\"three\"}\n";
    let (idx, docs) = index_and_docs(dir.path(), body);
    for upsert in [&[][..], &["--upsert"][..]] {
        let args = [&["add", "--index", &idx, "--docs", &docs][..], upsert].concat();
        fails(&args, "d.jsonl:4: duplicate id \"p\", first seen at line 1");
    }
    // An id already in the index is still reported as such.
    std::fs::write(&docs, "{\"_id\":\"x\",\"text\":\"again\"}\n").unwrap();
    fails(
        &["add", "--index", &idx, "--docs", &docs],
        "d.jsonl:1: document id \"x\" is already in the index",
    );
}

/// A corpus read from a pipe cannot be read again to find the repeat's first line: the
/// error still names the repeat's line and says why the first is not named, and nothing
/// of the pipe is added.
#[test]
fn a_duplicate_id_from_a_pipe_says_the_first_line_could_not_be_found() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let body = "{\"_id\":\"p\",\"text\":\"one\"}\n{\"_id\":\"q\",\"text\":\"two\"}\n{\"_id\":\"p\",\"text\":\"three\"}\n";
    let (idx, _) = index_and_docs(dir.path(), "");
    for upsert in [&[][..], &["--upsert"][..]] {
        let args = [
            &["add", "--index", &idx, "--docs", "/dev/stdin"][..],
            upsert,
        ]
        .concat();
        let mut child = Command::new(env!("CARGO_BIN_EXE_heddle-eval"))
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(body.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}: {stderr}");
        assert!(
            stderr.contains("/dev/stdin:3: document id \"p\""),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("rereading the file"), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    for word in ["one", "two", "three"] {
        let out = ok(&["search", "--index", &idx, word]);
        assert!(out.contains("no hits"), "{word}: {out}");
    }
}

/// The first copy of the id is no longer buffered but in a segment the memory budget
/// wrote: the writer still refuses the repeat, and the error still names both lines
/// (the file is read again to find the first, not remembered id by id).
#[test]
fn a_duplicate_id_past_a_budget_flush_names_its_first_line() {
    let dir = tempfile::tempdir().unwrap();
    let filler = "lorem ipsum dolor sit amet ".repeat(20);
    let mut body = String::new();
    for i in 0..4000 {
        body.push_str(&format!(
            "{{\"_id\":\"d{i}\",\"text\":\"{filler} w{i}\"}}\n"
        ));
    }
    let corpus = dir.path().join("c.jsonl");
    let idx = dir.path().join("idx").display().to_string();
    // Without the repeat, the budget writes several segments: the first copy of d1 is
    // flushed long before the last line.
    std::fs::write(&corpus, &body).unwrap();
    let out = ok(&[
        "index",
        "--corpus",
        &corpus.display().to_string(),
        "--index",
        &idx,
        "--memory-mb",
        "1",
    ]);
    let segments: usize = out
        .lines()
        .find_map(|l| {
            l.trim()
                .split(" segments committed at once")
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no segment count in {out}"));
    assert!(segments >= 2, "{out}");
    std::fs::remove_dir_all(&idx).unwrap();
    body.push_str("{\"_id\":\"d1\",\"text\":\"again\"}\n");
    std::fs::write(&corpus, &body).unwrap();
    let corpus = corpus.display().to_string();
    let msg = fails(
        &[
            "index",
            "--corpus",
            &corpus,
            "--index",
            &idx,
            "--memory-mb",
            "1",
        ],
        "c.jsonl:4001: duplicate id \"d1\", first seen at line 2",
    );
    assert!(!msg.contains("already in the index"), "{msg}");
    // The same file added to an index of other documents, under --upsert, where the
    // writer would otherwise keep the later copy silently.
    std::fs::write(dir.path().join("seed.jsonl"), "{\"_id\":\"seed\"}\n").unwrap();
    let seed = dir.path().join("seed.jsonl").display().to_string();
    ok(&["index", "--corpus", &seed, "--index", &idx, "--force"]);
    fails(
        &[
            "add",
            "--index",
            &idx,
            "--docs",
            &corpus,
            "--memory-mb",
            "1",
            "--upsert",
        ],
        "c.jsonl:4001: duplicate id \"d1\", first seen at line 2",
    );
    // Nothing of the file was added: "again" (the repeat's only word) and "lorem" (every
    // other document's) find nothing.
    for word in ["again", "lorem"] {
        let out = ok(&["search", "--index", &idx, word]);
        assert!(out.contains("no hits"), "{word}: {out}");
    }
}

#[test]
fn a_lone_surrogate_is_named_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let (idx, docs) = index_and_docs(dir.path(), "{\"_id\":\"s\",\"text\":\"a\\ud800b\"}\n");
    fails(
        &["add", "--index", &idx, "--docs", &docs],
        "d.jsonl:1: lone UTF-16 surrogate \\ud800 in a JSON string at column 21",
    );
}

/// Runs heddle-eval with its stdout a pipe whose read end is closed at once; returns
/// the exit status and stderr.
fn with_stdout_closed(args: &[&str]) -> (std::process::ExitStatus, String) {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_heddle-eval"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Ended quietly: success, or killed by SIGPIPE as a Unix filter is; never a panic.
fn assert_quiet_end(what: &str, (status, stderr): (std::process::ExitStatus, String)) {
    use std::os::unix::process::ExitStatusExt;
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    assert!(
        status.success() || status.signal() == Some(libc::SIGPIPE),
        "{what}: {status:?} {stderr}"
    );
}

#[test]
fn a_closed_stdout_ends_search_quietly() {
    let dir = tempfile::tempdir().unwrap();
    // 300 hits of 1 KB titles: more than a pipe buffer, so the write must meet the
    // closed pipe whatever the timing.
    let corpus: String = (0..300)
        .map(|i| {
            let title = format!("title {i} {}", "long ".repeat(200));
            serde_json::json!({"_id": format!("d{i}"), "title": title, "text": "common"})
                .to_string()
                + "\n"
        })
        .collect();
    std::fs::write(dir.path().join("c.jsonl"), corpus).unwrap();
    let idx = dir.path().join("idx").to_string_lossy().into_owned();
    let corpus = dir.path().join("c.jsonl").to_string_lossy().into_owned();
    assert_quiet_end(
        "index",
        with_stdout_closed(&["index", "--corpus", &corpus, "--index", &idx]),
    );
    // The index was committed before anything was printed.
    let out = ok(&["search", "--index", &idx, "--json", "--k", "1000", "common"]);
    assert_eq!(hit_count(&out), 300);
    for json in [false, true] {
        let mut args = vec!["search", "--index", &idx, "--k", "1000", "common"];
        if json {
            args.push("--json");
        }
        assert_quiet_end("search", with_stdout_closed(&args));
    }
    assert_quiet_end("help", with_stdout_closed(&["search", "--help"]));
}

/// An index of `docs` (id, title, text) in `dir`.
fn index_of(dir: &Path, docs: &[(&str, &str, &str)]) -> String {
    let corpus: String = docs
        .iter()
        .map(|(id, title, text)| {
            serde_json::json!({"_id": id, "title": title, "text": text}).to_string() + "\n"
        })
        .collect();
    std::fs::write(dir.join("c.jsonl"), corpus).unwrap();
    let idx = dir.join("idx").to_string_lossy().into_owned();
    let corpus = dir.join("c.jsonl").to_string_lossy().into_owned();
    ok(&["index", "--corpus", &corpus, "--index", &idx]);
    idx
}

fn ids_found(idx: &str, query: &str) -> Vec<String> {
    let mut ids = hit_ids(idx, query);
    ids.sort();
    ids
}

#[test]
fn delete_ids_file_keeps_spaces_as_add_does() {
    let dir = tempfile::tempdir().unwrap();
    let idx = index_of(
        dir.path(),
        &[
            (" a", "", "common"),
            ("a", "", "common"),
            ("b ", "", "common"),
        ],
    );
    assert_eq!(ids_found(&idx, "common"), [" a", "a", "b "]);
    let file = dir.path().join("ids.txt");
    std::fs::write(&file, " a\r\n\nb \n").unwrap();
    let out = ok(&["delete", "--index", &idx, "--ids", &file.to_string_lossy()]);
    assert!(out.contains("deleted 2 documents"), "{out}");
    assert_eq!(ids_found(&idx, "common"), ["a"]);
}

#[test]
fn control_characters_in_ids_and_titles_are_escaped_in_text_output() {
    let dir = tempfile::tempdir().unwrap();
    let idx = index_of(
        dir.path(),
        &[("evil\u{1b}[2J", "title\nforged line\u{202e}", "common")],
    );
    let table = ok(&["search", "--index", &idx, "common"]);
    assert!(
        !table.contains('\u{1b}') && !table.contains('\u{202e}'),
        "{table:?}"
    );
    // The ranking line, then one hit on one line.
    assert_eq!(table.lines().count(), 2, "{table:?}");
    assert!(
        table.contains("evil\\u{1b}[2J") && table.contains("title\\nforged line\\u{202e}"),
        "{table:?}"
    );
    // JSON is exact.
    assert_eq!(ids_found(&idx, "common"), ["evil\u{1b}[2J"]);

    let out = ok(&["delete", "--index", &idx, "gone\u{7}\r"]);
    assert!(
        out.contains("gone\\u{7}\\r") && !out.contains('\u{7}'),
        "{out:?}"
    );

    std::fs::write(
        dir.path().join("queries.jsonl"),
        "{\"_id\":\"q\\u001b1\",\"text\":\"common\"}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("qrels.tsv"), "q\u{1b}1\tevil\t1\n").unwrap();
    let out = ok(&[
        "quality",
        "--index",
        &idx,
        "--queries",
        &dir.path().join("queries.jsonl").to_string_lossy(),
        "--qrels",
        &dir.path().join("qrels.tsv").to_string_lossy(),
        "--per-query",
    ]);
    assert!(
        out.contains("q\\u{1b}1") && !out.contains('\u{1b}'),
        "{out:?}"
    );
}

#[test]
fn a_query_starting_with_a_dash_is_taken_after_double_dash_from_query_or_stdin() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let idx = index_of(
        dir.path(),
        &[("d1", "", "alpha"), ("d2", "", "beta"), ("d3", "", "gamma")],
    );
    let search = |extra: &[&str], stdin: Option<&str>| -> String {
        let mut child = Command::new(env!("CARGO_BIN_EXE_heddle-eval"))
            .args(["search", "--index", &idx, "--json"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
        drop(input);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{extra:?}: {stderr}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["query"].as_str().unwrap().to_string()
    };
    assert_eq!(search(&["--", "-alpha", "beta"], None), "-alpha beta");
    assert_eq!(search(&["--query", "-alpha beta"], None), "-alpha beta");
    assert_eq!(search(&[], Some("-alpha\ngamma\n")), "-alpha\ngamma\n");
    assert_eq!(search(&["-"], Some("-beta")), "-beta");
    let help = ok(&["search", "--help"]);
    assert!(help.contains("`--`") && help.contains("stdin"), "{help}");
    let both = heddle_eval(&["search", "--index", &idx, "--query", "a", "b"]);
    assert_eq!(both.status.code(), Some(2), "a usage error, not a crash");
    assert!(String::from_utf8_lossy(&both.stderr).contains("cannot be used with"));
}
