//! `heddle-eval search` as a user runs it: a topics file turned into a run, the BM25
//! settings it prints, fusion that does not depend on --k, and why a search found nothing.

mod common;

use common::{fails, ok};

use std::path::PathBuf;

use heddle_eval::quality::Run;

const CORPUS: &str = r#"{"_id": "d1", "title": "Vitamin D and bone density", "text": "Vitamin D supplements raise bone density in older adults."}
{"_id": "d2", "title": "Bone fractures", "text": "Fractures in older adults and vitamin intake."}
{"_id": "d3", "title": "Statins", "text": "Statins lower cholesterol and cardiovascular risk."}
{"_id": "d4", "title": "Exercise", "text": "Exercise improves bone health and cardiovascular fitness."}
{"_id": "d5", "title": "Vitamin C", "text": "Vitamin C and the common cold, bone of contention."}
{"_id": "d6", "title": "Sleep", "text": "Sleep duration and memory."}
"#;

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        std::fs::create_dir_all(root.join("data")).unwrap();
        std::fs::write(root.join("data/corpus.jsonl"), CORPUS).unwrap();
        let f = Fixture { _dir: dir, root };
        ok(&[
            "index",
            "--corpus",
            &f.path("data"),
            "--index",
            &f.path("idx"),
            "--analyzer",
            "lucene-english",
            "--per-field",
        ]);
        f
    }

    fn path(&self, rel: &str) -> String {
        self.root.join(rel).to_string_lossy().into_owned()
    }

    fn search_json(&self, extra: &[&str]) -> serde_json::Value {
        let idx = self.path("idx");
        let args = [&["search", "--index", &idx, "--json"][..], extra].concat();
        serde_json::from_str(ok(&args).trim()).expect("one JSON object")
    }
}

#[test]
fn a_topics_file_becomes_the_run_quality_writes() {
    let f = Fixture::new();
    let topics = "1\tvitamin bone\n2\tstatins cholesterol\n10\tmemory sleep\n3\tzzzz\n";
    std::fs::write(f.root.join("topics.tsv"), topics).unwrap();
    let qrels = "1 0 d1 1\n2 0 d3 1\n10 0 d6 1\n3 0 d1 1\n";
    std::fs::write(f.root.join("q.qrels"), qrels).unwrap();
    for ranking in [&[][..], &["--fuse", "flat,title,text"][..]] {
        let search_run = f.path("search.run");
        let quality_run = f.path("quality.run");
        let idx = f.path("idx");
        let topics = f.path("topics.tsv");
        let search = [
            &[
                "search",
                "--index",
                &idx,
                "--queries",
                &topics,
                "--run-out",
                &search_run,
            ][..],
            ranking,
        ]
        .concat();
        let out = ok(&search);
        assert!(
            out.contains("4 queries from") && out.contains("1 without hits"),
            "{out}"
        );
        let qrels = f.path("q.qrels");
        let quality = [
            &[
                "quality",
                "--index",
                &idx,
                "--queries",
                &topics,
                "--qrels",
                &qrels,
                "--run-out",
                &quality_run,
            ][..],
            ranking,
        ]
        .concat();
        ok(&quality);
        let a = std::fs::read_to_string(&search_run).unwrap();
        assert!(!a.is_empty());
        assert_eq!(
            a,
            std::fs::read_to_string(&quality_run).unwrap(),
            "{ranking:?}"
        );
        let run = Run::read_trec_file(search_run.as_ref()).unwrap();
        assert_eq!(run.query_ids().collect::<Vec<_>>(), ["1", "10", "2"]);
    }
    // --k caps the lines of each query; --queries without --run-out is refused.
    let idx = f.path("idx");
    let topics = f.path("topics.tsv");
    let two = f.path("two.run");
    let args = [
        "search",
        "--index",
        &idx,
        "--queries",
        &topics,
        "--run-out",
        &two,
        "--k",
        "1",
    ];
    ok(&args);
    let run = Run::read_trec_file(two.as_ref()).unwrap();
    assert!(run.query_ids().all(|q| run.get(q).len() == 1));
    let out = common::heddle_eval(&["search", "--index", &idx, "--queries", &topics]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--run-out"));
    // A malformed topics file names the file and line.
    std::fs::write(f.root.join("bad.tsv"), "1\tvitamin\n2 statins\n").unwrap();
    let bad = f.path("bad.tsv");
    fails(
        &[
            "search",
            "--index",
            &idx,
            "--queries",
            &bad,
            "--run-out",
            &two,
        ],
        &format!("{bad}:2: expected qid<TAB>text"),
    );
}

#[test]
fn search_prints_the_bm25_parameters_default_or_given() {
    let f = Fixture::new();
    let out = f.search_json(&["vitamin"]);
    assert_eq!(out["k1"], 1.2, "{out}");
    assert_eq!(out["b"], 0.75, "{out}");
    assert_eq!(out["streams"][0]["field"], "flat", "{out}");
    let out = f.search_json(&["--k1", "0.9", "--b", "0.4", "vitamin"]);
    assert_eq!(
        (out["k1"].as_f64(), out["b"].as_f64()),
        (Some(0.9), Some(0.4))
    );
    let idx = f.path("idx");
    let text = ok(&["search", "--index", &idx, "vitamin"]);
    assert!(
        text.starts_with("ranking: flat BM25 k1=1.2 b=0.75"),
        "{text}"
    );
}

#[test]
fn fused_results_have_titles_and_each_stream_its_settings() {
    let f = Fixture::new();
    let out = f.search_json(&[
        "--fuse",
        "flat,title:0.9:0.4",
        "--weights",
        "1,0.5",
        "vitamin",
    ]);
    assert!(
        out.get("k1").is_none(),
        "no top-level k1 for a fusion: {out}"
    );
    let streams = out["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 2);
    assert_eq!(streams[0]["field"], "flat");
    assert_eq!(
        (streams[0]["k1"].as_f64(), streams[0]["b"].as_f64()),
        (Some(1.2), Some(0.75))
    );
    assert_eq!(streams[1]["name"], "title:0.9:0.4");
    assert_eq!(
        (streams[1]["k1"].as_f64(), streams[1]["b"].as_f64()),
        (Some(0.9), Some(0.4))
    );
    assert_eq!(streams[1]["weight"], 0.5);
    let hits = out["hits"].as_array().unwrap();
    assert!(!hits.is_empty());
    for h in hits {
        assert!(!h["title"].as_str().unwrap().is_empty(), "{h}");
    }
    let d1 = hits.iter().find(|h| h["id"] == "d1").unwrap();
    assert_eq!(d1["title"], "Vitamin D and bone density");
}

#[test]
fn a_fused_score_does_not_change_with_k() {
    // For "bone", d1 ranks 2nd by title and 3rd by text, yet first once fused: read only
    // 2 deep, the text stream would not see it. So if the fusion depth followed --k,
    // d1's score with --k 2 would not be its score with --k 10.
    let f = Fixture::new();
    let ranked = |extra: &[&str]| {
        let args = [&["--fuse", "title,text"][..], extra, &["bone"][..]].concat();
        f.search_json(&args)["hits"].as_array().unwrap().clone()
    };
    let d1_score = |hits: &[serde_json::Value]| {
        let d1 = hits.iter().find(|h| h["id"] == "d1");
        d1.unwrap_or_else(|| panic!("d1 among {hits:?}"))["score"]
            .as_f64()
            .unwrap()
    };
    let shallow = ranked(&["--k", "10", "--depth", "2"]);
    let (two, ten) = (ranked(&["--k", "2"]), ranked(&["--k", "10"]));
    assert_ne!(
        d1_score(&shallow),
        d1_score(&ten),
        "the query must tell depth 2 from the default depth: {shallow:?} vs {ten:?}"
    );
    assert_eq!(two.len(), 2);
    assert!(ten.len() > 2);
    assert_eq!(d1_score(&two), d1_score(&ten), "{two:?} vs {ten:?}");
    for (a, b) in two.iter().zip(&ten) {
        assert_eq!(a["id"], b["id"]);
        assert_eq!(a["score"], b["score"], "{a} vs {b}");
    }
    let text = ok(&[
        "search",
        "--index",
        &f.path("idx"),
        "--fuse",
        "title,text",
        "--k",
        "2",
        "bone",
    ]);
    assert!(text.contains("depth 1000"), "{text}");
}

#[test]
fn an_empty_result_says_why() {
    let f = Fixture::new();
    let idx = f.path("idx");
    let stop = ok(&["search", "--index", &idx, "the", "of", "and"]);
    assert!(
        stop.contains(
            "every word of the query is a stop word of the index's analyzer (lucene-english): the, of, and"
        ),
        "{stop}"
    );
    let out = f.search_json(&["The", "OF"]);
    assert!(
        out["why_empty"].as_str().unwrap().contains(": the, of"),
        "{out}"
    );
    let absent = ok(&["search", "--index", &idx, "zebras", "quasars"]);
    assert!(
        absent.contains("no document contains any of: quasar, zebra"),
        "{absent}"
    );
    let nothing = ok(&["search", "--index", &idx, "--query", "?!"]);
    assert!(nothing.contains("the query has no words"), "{nothing}");
    fails(
        &["search", "--index", &idx, "--k", "0", "vitamin"],
        "--k 0 asks for no hits",
    );
    // A query that finds something says nothing of the kind.
    let found = f.search_json(&["the", "vitamin"]);
    assert!(found.get("why_empty").is_none(), "{found}");
}

#[test]
fn normalised_fusion_sums_each_streams_own_scores_put_on_one_scale() {
    let f = Fixture::new();
    let stream = |field: &str| -> Vec<(String, f64)> {
        f.search_json(&["--field", field, "--k", "100", "bone"])["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h["id"].as_str().unwrap().to_string(),
                    h["score"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let (title, text) = (stream("title"), stream("text"));
    assert!(title.len() >= 2 && text.len() >= 2, "{title:?} {text:?}");
    // min-max by hand, a document a stream did not return counting as its lowest (0).
    let norm = |s: &[(String, f64)], id: &str| {
        let (lo, hi) = s
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), (_, x)| {
                (l.min(*x), h.max(*x))
            });
        s.iter().find(|(d, _)| d == id).map_or(0.0, |(_, x)| {
            if hi > lo { (x - lo) / (hi - lo) } else { 1.0 }
        })
    };
    let out = f.search_json(&[
        "--fuse",
        "title,text",
        "--weights",
        "1,2",
        "--combine",
        "minmax",
        "--k",
        "100",
        "bone",
    ]);
    let hits = out["hits"].as_array().unwrap();
    let mut ids: Vec<&str> = title.iter().chain(&text).map(|(d, _)| d.as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(
        hits.len(),
        ids.len(),
        "every document either stream found: {out}"
    );
    for h in hits {
        let id = h["id"].as_str().unwrap();
        let want = norm(&title, id) + 2.0 * norm(&text, id);
        let got = h["score"].as_f64().unwrap();
        assert!((got - want).abs() < 1e-9, "{id}: {got} vs {want}");
    }
    let scores: Vec<f64> = hits.iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    let z = ok(&[
        "search",
        "--index",
        &f.path("idx"),
        "--fuse",
        "title,text",
        "--combine",
        "zscore",
        "bone",
    ]);
    assert!(
        z.contains("z-score normalised score sum (depth 1000)"),
        "{z}"
    );
    fails(
        &[
            "search",
            "--index",
            &f.path("idx"),
            "--fuse",
            "title,text",
            "--combine",
            "max",
            "bone",
        ],
        "expected rrf, sum, minmax or zscore",
    );
}
