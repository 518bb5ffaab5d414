//! Issue 33, item 15: every option naming a file to write behaves one way
//! (`eval/src/output.rs`): its directory must exist, is never created, and a missing one
//! is an error naming the option and the directory before any work is done.

mod common;

use std::path::Path;

use common::{covid_docs, fails, index_of};

#[test]
fn no_output_option_creates_a_missing_directory() {
    let dir = tempfile::tempdir().unwrap();
    let index = index_of(dir.path(), &covid_docs(10));
    let idx = index.to_str().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    };
    let queries = write("q.jsonl", "{\"_id\":\"q1\",\"text\":\"covid\"}\n");
    let qrels = write("qrels.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\n");
    let corpus = dir.path().join("corpus");
    let corpus = corpus.to_str().unwrap();
    let missing = dir.path().join("missing");
    let out = |name: &str| {
        missing
            .join("deeper")
            .join(name)
            .to_string_lossy()
            .into_owned()
    };
    let bin = env!("CARGO_BIN_EXE_heddle-eval");
    let ladder = [
        "bench",
        "--index",
        idx,
        "--queries",
        &queries,
        "--rates",
        "50",
        "--samples",
        "10",
        "--min-duration",
        "0",
    ];
    let writes = [
        "bench",
        "--writes",
        "--index",
        idx,
        "--queries",
        &queries,
        "--rate",
        "50",
        "--samples",
        "10",
        "--min-duration",
        "0",
    ];
    let ab = [
        "ab",
        "--baseline",
        bin,
        "--index",
        idx,
        "--queries",
        &queries,
        "--noise",
        "2",
    ];
    let cases: Vec<(Vec<&str>, &str, String)> = vec![
        (vec!["index", "--corpus", corpus], "--index", out("idx")),
        (
            vec!["search", "--index", idx, "--queries", &queries],
            "--run-out",
            out("r.run"),
        ),
        (
            vec![
                "quality",
                "--index",
                idx,
                "--queries",
                &queries,
                "--qrels",
                &qrels,
            ],
            "--run-out",
            out("r.run"),
        ),
        (
            vec![
                "quality",
                "--index",
                idx,
                "--queries",
                &queries,
                "--qrels",
                &qrels,
            ],
            "--html",
            out("q.html"),
        ),
        (ladder.to_vec(), "--json", out("b.json")),
        (ladder.to_vec(), "--svg", out("b.svg")),
        (ladder.to_vec(), "--html", out("b.html")),
        (ladder.to_vec(), "--hgrm", out("hgrm")),
        (writes.to_vec(), "--json", out("w.json")),
        (writes.to_vec(), "--svg", out("w.svg")),
        (ab.to_vec(), "--json", out("ab.json")),
        (
            vec!["cost", "--index", idx, "--queries", &queries],
            "--json",
            out("c.json"),
        ),
        (vec!["embed", "--corpus", corpus], "--out", out("v.jsonl")),
        (
            vec!["embed", "--queries", &queries],
            "--queries-out",
            out("qv.jsonl"),
        ),
    ];
    for (mut args, flag, path) in cases {
        args.extend([flag, path.as_str()]);
        let stderr = fails(&args, "does not exist");
        let deeper = missing.join("deeper");
        assert!(
            stderr.contains(flag) && stderr.contains(deeper.to_str().unwrap()),
            "{args:?}: {stderr}"
        );
        assert!(!missing.exists(), "{args:?} created {}", missing.display());
    }
    // The same commands write into a directory that exists (the rule is not "refuse").
    std::fs::create_dir_all(missing.join("deeper")).unwrap();
    let run = out("r.run");
    common::ok(&[
        "search",
        "--index",
        idx,
        "--queries",
        &queries,
        "--run-out",
        &run,
    ]);
    assert!(Path::new(&run).is_file());
    common::ok(&["index", "--corpus", corpus, "--index", &out("idx")]);
}
