//! `bench` ranks with the BM25 parameters it is given and says which (issue 17), and
//! reads TREC topics files as well as BEIR queries.

mod common;

use std::sync::Arc;

use heddle_eval::bench::{Backend, BackendFactory, HeddleFactory};

/// "covid" twice in a long document, once in a short one: with b = 0 the long one
/// leads, with b = 1 length normalisation puts the short one first.
fn corpus() -> String {
    let filler = "words ".repeat(60);
    format!(
        "{{\"_id\":\"long\",\"title\":\"\",\"text\":\"covid covid {filler}\"}}\n\
         {{\"_id\":\"short\",\"title\":\"\",\"text\":\"covid masks\"}}\n\
         {{\"_id\":\"other\",\"title\":\"\",\"text\":\"masks only\"}}\n"
    )
}

#[test]
fn the_heddle_backend_ranks_with_its_bm25_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let index = common::index_of(dir.path(), &corpus());
    let top = |k1: f64, b: f64| {
        let factory = HeddleFactory {
            bm25: heddle::Bm25Params::new(k1, b).unwrap(),
            ranking: None,
            encode_batch: 1,
        };
        let backend: Arc<dyn Backend> = factory.open(&index).unwrap();
        backend.search("covid", 1).unwrap()
    };
    assert_eq!(top(1.2, 0.0), ["long"]);
    assert_eq!(top(1.2, 1.0), ["short"]);
    let default: Arc<dyn Backend> = HeddleFactory::default().open(&index).unwrap();
    assert_eq!(default.search("covid", 1).unwrap(), top(1.2, 0.75));
}

#[test]
fn the_bench_report_names_its_bm25_parameters_and_reads_trec_topics() {
    let dir = tempfile::tempdir().unwrap();
    let index = common::index_of(dir.path(), &corpus());
    let topics = dir.path().join("topics.tsv");
    std::fs::write(&topics, "1\tcovid\n2\tmasks\n").unwrap();
    let json = dir.path().join("bench.json");
    let run = |extra: &[&str]| {
        let base = [
            "bench",
            "--index",
            index.to_str().unwrap(),
            "--queries",
            topics.to_str().unwrap(),
            "--rates",
            "100",
            "--samples",
            "20",
            "--min-duration",
            "0",
            "--warmup",
            "2",
            "--json",
            json.to_str().unwrap(),
        ];
        let out = common::ok(&[&base[..], extra].concat());
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        (out, report)
    };
    let (out, report) = run(&[]);
    assert!(
        out.contains("heddle ranks with BM25 k1=1.2 b=0.75"),
        "{out}"
    );
    assert_eq!(report["settings"]["k1"], 1.2);
    assert_eq!(report["settings"]["b"], 0.75);
    assert_eq!(report["settings"]["query_count"], 2);
    let (out, report) = run(&["--k1", "0.9", "--b", "0.4"]);
    assert!(out.contains("heddle ranks with BM25 k1=0.9 b=0.4"), "{out}");
    assert_eq!(report["settings"]["k1"], 0.9);
    // The writes arm's report names them too.
    let writes = common::ok(&[
        "bench",
        "--writes",
        "--index",
        index.to_str().unwrap(),
        "--queries",
        topics.to_str().unwrap(),
        "--rate",
        "100",
        "--samples",
        "30",
        "--min-duration",
        "0",
        "--warmup",
        "2",
        "--write-docs",
        "5",
        "--commit-threads",
        "1",
        "--k1",
        "0.9",
        "--b",
        "0.4",
    ]);
    assert!(
        writes.contains("heddle ranks with BM25 k1=0.9 b=0.4"),
        "{writes}"
    );
    common::fails(
        &["bench", "--index", "x", "--queries", "y", "--b", "2"],
        "--b 2.0",
    );
}
