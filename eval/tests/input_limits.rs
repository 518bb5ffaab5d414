//! User numbers and streams that once aborted, wrapped or panicked the commands: each is
//! now refused with an error naming the flag, clamped, or handled quietly.

mod common;

use common::{fails, heddle_eval, ok};

use std::path::{Path, PathBuf};

/// Ten documents, "rare" in one of them (its idf ≈ 2, enough to overflow k1 = 1e308).
fn indexed(dir: &Path) -> String {
    let corpus: String = (0..10)
        .map(|i| {
            let text = if i == 3 { "rare common" } else { "common" };
            serde_json::json!({"_id": format!("d{i}"), "text": text}).to_string() + "\n"
        })
        .collect();
    std::fs::write(dir.join("c.jsonl"), corpus).unwrap();
    let idx = dir.join("idx").to_string_lossy().into_owned();
    ok(&[
        "index",
        "--corpus",
        &dir.join("c.jsonl").to_string_lossy(),
        "--index",
        &idx,
    ]);
    idx
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
        "--k must be at least 1",
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
        "--depth must be at least 1",
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
    let _ = heddle_eval;
}
