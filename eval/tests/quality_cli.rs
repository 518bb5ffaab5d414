//! `heddle-eval quality` and `compare-runs` as a user runs them: the run file they write
//! reads back to the same figures, and what they refuse.

mod common;

use common::{fails, heddle_eval, ok};

use std::path::PathBuf;

use heddle_eval::quality::{self, METRICS, Run};

const CORPUS: &str = r#"{"_id": "d1", "title": "Vitamin D and bone density", "text": "Vitamin D supplements raise bone density in older adults."}
{"_id": "d2", "title": "Bone fractures", "text": "Fractures in older adults and vitamin intake."}
{"_id": "d3", "title": "Statins", "text": "Statins lower cholesterol and cardiovascular risk."}
{"_id": "d4", "title": "Exercise", "text": "Exercise improves bone health and cardiovascular fitness."}
{"_id": "q1", "title": "Vitamin D bone", "text": "A document whose id is a query id: vitamin D bone density."}
{"_id": "d6", "title": "Sleep", "text": "Sleep duration and memory."}
"#;

const QUERIES: &str = r#"{"_id": "q1", "text": "vitamin D bone density"}
{"_id": "q2", "text": "statins cholesterol"}
{"_id": "q3", "text": "memory sleep"}
{"_id": "q4", "text": "not judged"}
"#;

// q3's only judgment is non-relevant: it counts, and scores 0.
const QRELS: &str =
    "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t1\nq1\td4\t0\nq2\td3\t1\nq3\td6\t0\n";

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Fixture {
    fn new(per_field: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        std::fs::create_dir_all(root.join("data/qrels")).unwrap();
        std::fs::write(root.join("data/corpus.jsonl"), CORPUS).unwrap();
        std::fs::write(root.join("data/queries.jsonl"), QUERIES).unwrap();
        std::fs::write(root.join("data/qrels/test.tsv"), QRELS).unwrap();
        let f = Fixture { _dir: dir, root };
        let mut args = vec![
            "index",
            "--corpus",
            &f.path("data")[..],
            "--index",
            &f.path("idx")[..],
            "--analyzer",
            "lucene-english",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
        if per_field {
            args.push("--per-field".into());
        }
        ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
        f
    }

    fn path(&self, rel: &str) -> String {
        self.root.join(rel).to_string_lossy().into_owned()
    }

    fn quality(&self, extra: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = [
            "quality",
            "--index",
            &self.path("idx"),
            "--queries",
            &self.path("data/queries.jsonl"),
            "--qrels",
            &self.path("data/qrels/test.tsv"),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    }
}

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out.trim()).expect("one JSON object")
}

#[test]
fn the_run_file_reads_back_to_the_same_figures() {
    let f = Fixture::new(false);
    let run_path = f.path("flat.run");
    let args = f.quality(&["--json", "--per-query", "--run-out", &run_path]);
    let out = json(&ok(&args.iter().map(String::as_str).collect::<Vec<_>>()));
    assert_eq!(out["queries"], 3, "{out}");
    let env = &out["environment"];
    assert!(
        env["build"]["version"].is_string() && env["machine"].is_object(),
        "{out}"
    );
    assert!(env["ended_utc"].is_string(), "{out}");

    let run = Run::read_trec_file(run_path.as_ref()).unwrap();
    let qrels = quality::read_qrels(f.path("data/qrels/test.tsv").as_ref()).unwrap();
    let again = quality::evaluate(&run, &qrels, &METRICS);
    for (m, metric) in METRICS.iter().enumerate() {
        let printed = out[metric.trec_name()].as_f64().unwrap();
        assert!((printed - again.mean(m)).abs() < 1e-12, "{metric:?}");
        for (qid, values) in &again.per_query {
            let per_query = out["per_query"][qid][metric.trec_name()].as_f64().unwrap();
            assert!((per_query - values[m]).abs() < 1e-12, "{qid} {metric:?}");
        }
    }
    // q3 has nothing relevant; q4 has no judgments and is not evaluated.
    assert_eq!(out["per_query"]["q3"]["ndcg_cut_10"], 0.0);
    assert!(out["per_query"].get("q4").is_none());

    // Ranks follow trec_eval's order and every line has six columns.
    let text = std::fs::read_to_string(&run_path).unwrap();
    let q1: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .filter(|c| c[0] == "q1")
        .collect();
    assert!(
        q1.iter()
            .all(|c| c.len() == 6 && c[1] == "Q0" && c[5] == "heddle")
    );
    let ranks: Vec<&str> = q1.iter().map(|c| c[3]).collect();
    let want: Vec<String> = (1..=q1.len()).map(|r| r.to_string()).collect();
    assert_eq!(ranks, want);
}

#[test]
fn remove_query_drops_the_document_named_like_the_query() {
    let f = Fixture::new(false);
    let with = f.path("with.run");
    let without = f.path("without.run");
    let a = f.quality(&["--run-out", &with]);
    ok(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let b = f.quality(&["--remove-query", "--run-out", &without]);
    ok(&b.iter().map(String::as_str).collect::<Vec<_>>());
    let has_q1 = |p: &str| {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .any(|l| l.starts_with("q1 Q0 q1 "))
    };
    assert!(has_q1(&with));
    assert!(!has_q1(&without));
}

#[test]
fn hits_caps_the_lines_of_each_query() {
    let f = Fixture::new(false);
    let run_path = f.path("two.run");
    let args = f.quality(&["--hits", "2", "--run-out", &run_path]);
    ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let run = Run::read_trec_file(run_path.as_ref()).unwrap();
    assert!(run.query_ids().all(|q| run.get(q).len() <= 2));
    assert_eq!(run.get("q1").len(), 2);
}

#[test]
fn a_judged_query_missing_from_the_queries_file_is_an_error() {
    let f = Fixture::new(false);
    std::fs::write(
        f.root.join("data/qrels/test.tsv"),
        format!("{QRELS}q9\td1\t1\n"),
    )
    .unwrap();
    let args = f.quality(&[]);
    fails(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        "1 query of",
    );
}

#[test]
fn fused_streams_need_per_field_postings_and_write_rrf_scores() {
    let flat_only = Fixture::new(false);
    let args = flat_only.quality(&["--fuse", "flat,title,text"]);
    fails(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        "per-field",
    );

    let f = Fixture::new(true);
    let run_path = f.path("rrf.run");
    let args = f.quality(&[
        "--fuse",
        "flat,title,text",
        "--weights",
        "1,0.5,1",
        "--run-out",
        &run_path,
    ]);
    let out = ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.contains("RRF (k=60"), "{out}");
    let run = Run::read_trec_file(run_path.as_ref()).unwrap();
    // q2's d3 leads all three streams: 1/61 + 0.5/61 + 1/61.
    let top = &run.get("q2")[0];
    assert_eq!(top.doc_id, "d3");
    assert!((top.score - 2.5 / 61.0).abs() < 1e-12, "{}", top.score);
}

#[test]
fn compare_runs_counts_wins_and_brackets_the_difference() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    std::fs::write(p("qrels.tsv"), "q1\ta\t1\nq2\ta\t1\nq3\ta\t1\n").unwrap();
    // A finds a at rank 2 for q1 and q2, nothing for q3. B finds it at rank 1 for q1,
    // rank 2 for q2, and at rank 1 for q3.
    std::fs::write(
        p("a.run"),
        "q1 Q0 x 1 2 A\nq1 Q0 a 2 1 A\nq2 Q0 x 1 2 A\nq2 Q0 a 2 1 A\n",
    )
    .unwrap();
    std::fs::write(
        p("b.run"),
        "q1 Q0 a 1 2 B\nq2 Q0 x 1 2 B\nq2 Q0 a 2 1 B\nq3 Q0 a 1 1 B\n",
    )
    .unwrap();
    let out = json(&ok(&[
        "compare-runs",
        &p("a.run"),
        &p("b.run"),
        "--qrels",
        &p("qrels.tsv"),
        "--json",
    ]));
    let ndcg = &out["metrics"][0];
    assert_eq!(ndcg["metric"], "ndcg_cut_10");
    assert_eq!(
        (
            ndcg["won"].as_u64(),
            ndcg["lost"].as_u64(),
            ndcg["tied"].as_u64()
        ),
        (Some(2), Some(0), Some(1))
    );
    let l3 = 3f64.log2();
    let (a, b) = (2.0 / l3 / 3.0, (2.0 + 1.0 / l3) / 3.0);
    assert!((ndcg["a"].as_f64().unwrap() - a).abs() < 1e-12);
    assert!((ndcg["b"].as_f64().unwrap() - b).abs() < 1e-12);
    let ci = ndcg["ci95"].as_array().unwrap();
    let (low, high) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
    assert!(low <= b - a && b - a <= high, "{ci:?}");
    assert_eq!(out["queries"], 3);
    let text = ok(&[
        "compare-runs",
        &p("a.run"),
        &p("b.run"),
        "--qrels",
        &p("qrels.tsv"),
    ]);
    assert!(text.contains("2/0/1"), "{text}");
    // A run against itself: every difference is zero, so no row is marked and the
    // footnote for a mark is not printed.
    let same = ok(&[
        "compare-runs",
        &p("a.run"),
        &p("a.run"),
        "--qrels",
        &p("qrels.tsv"),
    ]);
    assert!(!same.contains(" *"), "{same}");
    assert!(!same.contains("* the interval excludes zero"), "{same}");
    assert!(same.contains("no interval excludes zero"), "{same}");
}

#[test]
fn a_single_field_and_a_fusion_cannot_be_asked_for_together() {
    let f = Fixture::new(true);
    let args = f.quality(&["--field", "title", "--fuse", "flat,text"]);
    let out = heddle_eval(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
    // The per-field index answers a single-field quality run.
    let args = f.quality(&["--field", "text", "--json"]);
    let out = json(&ok(&args.iter().map(String::as_str).collect::<Vec<_>>()));
    assert!(
        out["ranking"].as_str().unwrap().starts_with("text BM25"),
        "{out}"
    );
}

#[test]
fn trec_topics_and_qrels_give_the_figures_of_their_beir_twins() {
    let f = Fixture::new(false);
    let topics = "q1\tvitamin D bone density\nq2\tstatins cholesterol\nq3\tmemory sleep\n";
    let trec_qrels = "q1 0 d1 2\nq1 0 d2 1\nq1 0 d4 0\nq2 0 d3 1\nq3 0 d6 0\n";
    std::fs::write(f.root.join("topics.tsv"), topics).unwrap();
    std::fs::write(f.root.join("trec.qrels"), trec_qrels).unwrap();
    let beir = f.quality(&["--json"]);
    let beir = json(&ok(&beir.iter().map(String::as_str).collect::<Vec<_>>()));
    let mut trec = f.quality(&["--json"]);
    trec[4] = f.path("topics.tsv");
    trec[6] = f.path("trec.qrels");
    let trec = json(&ok(&trec.iter().map(String::as_str).collect::<Vec<_>>()));
    assert_eq!(beir["queries"], 3);
    for key in ["queries", "ndcg_cut_10", "recall_100"] {
        assert_eq!(beir[key], trec[key], "{key}");
    }
    // compare-runs reads TREC qrels too.
    let run = f.path("r.run");
    let args = f.quality(&["--run-out", &run]);
    ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let out = ok(&["compare-runs", &run, &run, "--qrels", &f.path("trec.qrels")]);
    assert!(out.contains("3 queries"), "{out}");
    // A line in neither format names the file and line.
    std::fs::write(f.root.join("bad.qrels"), "q1 0 d1 1\nq1 d2 1\n").unwrap();
    let bad = f.path("bad.qrels");
    fails(
        &["compare-runs", &run, &run, "--qrels", &bad],
        &format!("{bad}:2: expected 4 columns"),
    );
}

#[test]
fn metric_flags_choose_the_measures_under_trec_eval_names() {
    let f = Fixture::new(false);
    let run_path = f.path("m.run");
    let args = f.quality(&[
        "-m",
        "map,P.5,10",
        "--metric",
        "MRR@10",
        "--json",
        "--per-query",
        "--run-out",
        &run_path,
    ]);
    let out = json(&ok(&args.iter().map(String::as_str).collect::<Vec<_>>()));
    assert!(out.get("ndcg_cut_10").is_none(), "{out}");
    let run = Run::read_trec_file(run_path.as_ref()).unwrap();
    let qrels = quality::read_qrels(f.path("data/qrels/test.tsv").as_ref()).unwrap();
    let metrics = quality::Metric::parse_list(&["map,P.5,10,MRR@10"]).unwrap();
    let again = quality::evaluate(&run, &qrels, &metrics);
    for (m, name) in ["map", "P_5", "P_10", "recip_rank_cut_10"]
        .iter()
        .enumerate()
    {
        let printed = out[*name].as_f64().unwrap();
        assert!((printed - again.mean(m)).abs() < 1e-12, "{name}");
        assert!(out["per_query"]["q1"][*name].is_number(), "{name}");
    }
    let args = f.quality(&["-m", "bpref"]);
    fails(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        "unknown metric \"bpref\"",
    );
    // Text: one line a measure, by the names people write.
    let args = f.quality(&["-m", "map", "-m", "P.5"]);
    let text = ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(text.contains("\nMAP ") && text.contains("\nP@5 "), "{text}");
    assert!(!text.contains("nDCG@10"), "{text}");
}

#[test]
fn compare_runs_compares_the_measures_asked_for() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/metrics");
    let p = |n: &str| data.join(n).to_string_lossy().into_owned();
    let out = json(&ok(&[
        "compare-runs",
        &p("case.run"),
        &p("case.run"),
        "--qrels",
        &p("case.qrels"),
        "-m",
        "map,recip_rank",
        "--json",
    ]));
    let metrics = out["metrics"].as_array().unwrap();
    assert_eq!(metrics.len(), 2);
    assert_eq!(metrics[0]["metric"], "map");
    assert_eq!(metrics[1]["metric"], "recip_rank");
    // trec_eval's figures (tests/data/metrics/expected.tsv).
    assert!((metrics[0]["a"].as_f64().unwrap() - 0.2875036075036075).abs() < 1e-12);
    assert!((metrics[1]["b"].as_f64().unwrap() - 0.4305555555555555).abs() < 1e-12);
}

#[test]
fn an_empty_query_scores_zero_not_minus_zero() {
    let f = Fixture::new(false);
    std::fs::write(
        f.root.join("topics.tsv"),
        "q1\tvitamin D bone density\nq2\t\nq3\tmemory sleep\n",
    )
    .unwrap();
    let mut args = f.quality(&["--json", "--per-query"]);
    args[4] = f.path("topics.tsv");
    let text = ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!text.contains("-0.0"), "{text}");
    let out = json(&text);
    let q2 = out["per_query"]["q2"]["ndcg_cut_10"].as_f64().unwrap();
    assert!(q2 == 0.0 && q2.is_sign_positive(), "{q2:?}");
    let args: Vec<String> = args.into_iter().filter(|a| a != "--json").collect();
    let text = ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!text.contains("-0.0"), "{text}");
}

#[test]
fn per_query_text_lists_query_ids_in_natural_order() {
    let f = Fixture::new(false);
    let ids = ["100", "10", "2", "1", "q10", "q9"];
    let topics: String = ids.iter().map(|q| format!("{q}\tvitamin bone\n")).collect();
    let qrels: String = ids.iter().map(|q| format!("{q} 0 d1 1\n")).collect();
    std::fs::write(f.root.join("topics.tsv"), topics).unwrap();
    std::fs::write(f.root.join("q.qrels"), qrels).unwrap();
    let mut args = f.quality(&["--per-query"]);
    args[4] = f.path("topics.tsv");
    args[6] = f.path("q.qrels");
    let text = ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let listed: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("query "))
        .skip(1)
        .take(ids.len())
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(listed, ["1", "2", "10", "100", "q9", "q10"], "{text}");
}

#[test]
fn quality_prints_the_bm25_parameters_it_ran_with_default_or_given() {
    let f = Fixture::new(false);
    let args = f.quality(&[]);
    let text = ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(text.contains("flat BM25 k1=1.2 b=0.75"), "{text}");
    let args = f.quality(&["--k1", "0.9", "--b", "0.4", "--json"]);
    let out = json(&ok(&args.iter().map(String::as_str).collect::<Vec<_>>()));
    assert_eq!(out["streams"][0]["k1"], 0.9, "{out}");
    assert_eq!(out["streams"][0]["b"], 0.4, "{out}");
}
