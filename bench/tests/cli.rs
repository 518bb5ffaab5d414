//! `heddle-bench` end to end on the fixture: build, agreement, sequential pass, ladder,
//! memory rungs, ratio table, JSON and SVG; the second run reuses the indexes.

mod common;

use std::path::Path;
use std::process::{Command, Output};

fn heddle_bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_heddle-bench"))
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn bench_args<'a>(dir: &'a Path, extra: &[&'a str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "bench",
        "--corpus",
        dir.join("data").to_str().unwrap(),
        "--queries",
        dir.join("data/queries.jsonl").to_str().unwrap(),
        "--workdir",
        dir.join("work").to_str().unwrap(),
        "--rates",
        "100,200",
        "--samples",
        "200",
        "--min-duration",
        "0",
        "--inflight",
        "1000",
        "--sequential-samples",
        "200",
        "--memory-requests",
        "100",
        "--open-rounds",
        "2",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

#[test]
fn a_comparison_runs_end_to_end_and_reuses_its_indexes() {
    let dir = tempfile::tempdir().unwrap();
    common::write_fixture(&dir.path().join("data"), 600, 20, 21, true);
    let json = dir.path().join("out/compare.json");
    std::fs::create_dir(dir.path().join("out")).unwrap(); // outputs' directories are never made
    let svg = dir.path().join("out/ladder.svg");
    let html = dir.path().join("out/compare.html");
    let args = bench_args(
        dir.path(),
        &[
            "--compare-json",
            json.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ],
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let first = heddle_bench(&args);
    let (out, err) = text(&first);
    assert!(first.status.success(), "{out}\n{err}");
    for needle in [
        "agreement (heddle vs tantivy, top 10 of 20 queries)",
        "required: PASS",
        "sequential heddle: 10 passes × 20 queries",
        "sequential tantivy",
        "per query (heddle/tantivy, median of 10 passes each, 20 queries): ratio p50",
        "10 worst by ratio:",
        "by document frequency: class, queries",
        "by terms: class, queries",
        "comparison (each engine's median over tantivy's, same rung)",
        "ratios (heddle / tantivy",
        "index build time",
        "index size on disk",
        "open time",
        "sequential p50",
        "ladder 100/s p50",
        "throughput at the top rung [",
        "throughput at the top rung: 200/s offered",
        "serving peak RSS",
        "1 segment, 2 indexing threads",
        "highest rate held: shed ≤ 0.1%, p99 ≤ 10× the slower engine's low-rate p50",
        "under twice the rate held (degrade, not collapse",
    ] {
        assert!(out.contains(needle), "stdout lacks {needle:?}:\n{out}");
    }
    assert!(err.contains("building"), "{err}");
    assert!(!err.contains("reusing"), "{err}");
    // Issue 17: the report was up to 178 columns wide; by default it fits 100.
    for line in out.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(
        plot.contains("heddle") && plot.contains("tantivy"),
        "both curves on one chart"
    );
    // One page: the comparison's sections and the ladder's, nothing fetched.
    let page = std::fs::read_to_string(&html).unwrap();
    for needle in [
        "<section id=\"environment\">",
        "<section id=\"ratios\">",
        "<section id=\"agreement\">",
        "<section id=\"ladder\">",
        "<section id=\"compare-per-query\">",
        "<th>heddle/tantivy</th>",
        "environment: heddle",
    ] {
        assert!(page.contains(needle), "the page lacks {needle:?}");
    }
    assert_eq!(page.matches("<svg").count(), 1, "the ladder plot, inline");
    for bad in ["src=\"http", "href=\"http", "<link", "<script"] {
        assert!(!page.contains(bad), "the page holds {bad:?}");
    }
    let report = std::fs::read_to_string(&json).unwrap();
    assert!(report.contains("\"ratios\"") && report.contains("\"agreement\""));
    assert!(report.contains("\"held\"") && report.contains("\"low_p50_us\""));
    assert!(report.contains("\"per_query\"") && report.contains("\"by_df\""));

    let second = heddle_bench(&args);
    let (out2, err2) = text(&second);
    assert!(second.status.success(), "{out2}\n{err2}");
    assert!(err2.contains("heddle: reusing the index"), "{err2}");
    assert!(err2.contains("tantivy: reusing the index"), "{err2}");
    assert!(out2.contains("(reused index)"), "{out2}");

    let summary = heddle_bench(&["summarise", json.to_str().unwrap(), json.to_str().unwrap()]);
    let (s, e) = text(&summary);
    assert!(summary.status.success(), "{e}");
    assert!(
        s.contains("2 runs of heddle vs tantivy")
            && s.contains("index build time")
            && s.contains("low-rate p50), run by run"),
        "{s}"
    );
}

#[test]
fn native_analysis_is_labelled_and_has_no_threshold() {
    let dir = tempfile::tempdir().unwrap();
    common::write_fixture(&dir.path().join("data"), 300, 10, 22, false);
    let args = bench_args(dir.path(), &["--analysis", "native"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = heddle_bench(&args);
    let (out, err) = text(&run);
    assert!(run.status.success(), "{out}\n{err}");
    assert!(out.contains("NATIVE analysis"), "{out}");
    assert!(
        out.contains("\n  NATIVE analysis (heddle english vs tantivy en_stem"),
        "the ladder's table is labelled too:\n{out}"
    );
    assert!(out.contains("no threshold"), "{out}");
    assert!(dir.path().join("work/native/tantivy/index").is_dir());
}

#[test]
fn an_index_flag_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    common::write_fixture(&dir.path().join("data"), 10, 2, 23, false);
    let args = bench_args(dir.path(), &["--index", "/tmp/x"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = heddle_bench(&args);
    let (_, err) = text(&run);
    assert!(!run.status.success());
    assert!(err.contains("takes no --index"), "{err}");
}

#[test]
fn a_target_flag_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    common::write_fixture(&dir.path().join("data"), 10, 2, 23, false);
    let args = bench_args(dir.path(), &["--target", "http://127.0.0.1:9/x"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = heddle_bench(&args);
    let (_, err) = text(&run);
    assert!(!run.status.success());
    assert!(err.contains("heddle-eval bench --target"), "{err}");
}

/// Issue 17: `summarize` was an unrecognized subcommand; both spellings now read the
/// files (here a missing one, which is the error, named).
#[test]
fn summarise_is_also_spelled_summarize() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    for spelling in ["summarise", "summarize"] {
        let out = heddle_bench(&[spelling, missing.to_str().unwrap()]);
        let (_, err) = text(&out);
        assert!(!out.status.success(), "{spelling}");
        assert!(err.contains("missing.json"), "{spelling}: {err}");
        assert!(
            !err.contains("unrecognized subcommand"),
            "{spelling}: {err}"
        );
    }
    let (help, _) = text(&heddle_bench(&["--help"]));
    assert!(help.contains("summarize"), "{help}");
}
