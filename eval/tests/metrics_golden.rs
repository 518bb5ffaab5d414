//! Every measure against trec_eval's own figures on a hand-made case.
//!
//! `data/metrics/case.qrels` and `case.run` hold ties in score (trec_eval breaks them by
//! document id, descending, whatever the rank column says), unjudged documents, graded
//! and negative relevance, judgments of grade 0, a query with no relevant document (q2),
//! a judged query the run does not retrieve for (q3) and a retrieved query without
//! judgments (q7). `expected.tsv` was written by
//! `scripts/golden_metrics.py case.qrels case.run` with pytrec_eval-terrier 0.5.11
//! (trec_eval's C code) under Python 3.11, with `-c` semantics (see the script).

use std::path::PathBuf;

use heddle_eval::quality::{self, Metric, Run};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/metrics")
        .join(name)
}

#[test]
fn every_measure_matches_trec_eval_on_the_hand_made_case() {
    let qrels = quality::read_qrels(&data("case.qrels")).unwrap();
    let run = Run::read_trec_file(&data("case.run")).unwrap();
    let expected = std::fs::read_to_string(data("expected.tsv")).unwrap();
    let rows: Vec<(&str, &str, f64)> = expected
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (c[0], c[1], c[2].parse().unwrap())
        })
        .collect();
    let mut metrics: Vec<Metric> = Vec::new();
    for (name, _, _) in &rows {
        let m = Metric::parse(name).unwrap();
        assert_eq!(m.trec_name(), *name);
        if !metrics.contains(&m) {
            metrics.push(m);
        }
    }
    assert_eq!(metrics.len(), 13, "{metrics:?}");
    let eval = quality::evaluate(&run, &qrels, &metrics);
    assert_eq!(eval.queries(), 6, "q1–q6; q7 has no judgments");
    for (name, qid, want) in rows {
        let m = metrics.iter().position(|&m| m.trec_name() == name).unwrap();
        let got = if qid == "all" {
            eval.mean(m)
        } else {
            eval.per_query[qid][m]
        };
        assert!(
            (got - want).abs() < 1e-12,
            "{name} {qid}: {got} vs trec_eval {want}"
        );
    }
}

#[test]
fn ties_are_broken_by_descending_document_id_as_trec_eval_does() {
    // q1: d2 and dx tie at 4.0, dx goes first, so the first relevant document (d2) is
    // third; by ascending id, or by the rank column, it would be second.
    let qrels = quality::read_qrels(&data("case.qrels")).unwrap();
    let run = Run::read_trec_file(&data("case.run")).unwrap();
    let ids: Vec<&str> = run.get("q4").iter().map(|e| e.doc_id.as_str()).collect();
    assert_eq!(ids, ["g3", "g2", "g10", "g1"]);
    let rr = Metric::RecipRank(None).score(run.get("q1"), &qrels["q1"]);
    assert!((rr - 1.0 / 3.0).abs() < 1e-15, "{rr}");
}
