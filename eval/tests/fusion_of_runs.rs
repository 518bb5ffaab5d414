//! Issue 33, item 15: the hybrid arm's ranking is the RRF fusion of the runs the text
//! and vector arms write, tie for tie. Near-duplicate documents score the same BM25;
//! a run file is read in trec_eval's order (score, then id descending), so the fusion
//! must rank each stream's ties that way too, and cut the fused list's ties that way.

mod common;

use std::collections::HashMap;
use std::path::Path;

use common::ok;

/// (doc id, score) of each query of a TREC run, in trec_eval's order.
fn read_run(path: &Path) -> HashMap<String, Vec<(String, f64)>> {
    let mut by_query: HashMap<String, Vec<(String, f64)>> = HashMap::new();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        by_query
            .entry(cols[0].to_string())
            .or_default()
            .push((cols[2].to_string(), cols[4].parse().unwrap()));
    }
    for entries in by_query.values_mut() {
        entries.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
    }
    by_query
}

/// RRF (k = 60, weights 1) of `runs` as read, parts summed smallest first (as heddle's
/// fusion sums them, so that equal sums are equal bit for bit), in trec_eval's order.
fn rrf(runs: &[&[(String, f64)]]) -> Vec<(String, f64)> {
    let mut parts: HashMap<&str, Vec<f64>> = HashMap::new();
    for run in runs {
        for (rank, (id, _)) in run.iter().enumerate() {
            parts
                .entry(id)
                .or_default()
                .push(1.0 / (60.0 + (rank + 1) as f64));
        }
    }
    let mut fused: Vec<(String, f64)> = parts
        .into_iter()
        .map(|(id, mut p)| {
            p.sort_by(f64::total_cmp);
            (id.to_string(), p.iter().sum())
        })
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
    fused
}

fn assert_same(got: &[(String, f64)], want: &[(String, f64)], what: &str) {
    let ids = |r: &[(String, f64)]| r.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(got), ids(want), "{what}: the order");
    for ((id, g), (_, w)) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 1e-12,
            "{what}: {id} scores {g}, the runs' fusion {w}"
        );
    }
}

#[test]
fn the_hybrid_ranking_is_the_fusion_of_the_runs_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    // Three near-duplicates (equal BM25 for the query), in ascending id order in the
    // corpus: the engine ranks their tie a, b, c, a run file is read c, b, a.
    let docs = [
        ("dup-a", "covid masks", 0.5),
        ("dup-b", "covid masks", 0.7),
        ("dup-c", "covid masks", 0.6),
        ("other-x", "covid vaccines trial results", 0.9),
        ("zeta", "bread baking", 0.8),
    ];
    let mut corpus = String::new();
    let mut vectors = String::new();
    for (id, text, v) in docs {
        corpus.push_str(&format!(
            "{{\"_id\":\"{id}\",\"title\":\"\",\"text\":\"{text}\"}}\n"
        ));
        vectors.push_str(&format!("{{\"_id\":\"{id}\",\"vector\":[{v}, 0.0]}}\n"));
    }
    std::fs::write(path("c.jsonl"), corpus).unwrap();
    std::fs::write(path("v.jsonl"), vectors).unwrap();
    std::fs::write(
        path("q.jsonl"),
        "{\"_id\":\"q1\",\"text\":\"covid masks\"}\n",
    )
    .unwrap();
    std::fs::write(path("qv.jsonl"), "{\"_id\":\"q1\",\"vector\":[1.0, 0.0]}\n").unwrap();
    let idx = path("idx");
    ok(&[
        "index",
        "--corpus",
        &path("c.jsonl"),
        "--index",
        &idx,
        "--vectors",
        &path("v.jsonl"),
    ]);
    let (queries, query_vectors) = (path("q.jsonl"), path("qv.jsonl"));
    let search = |arm: &str, out: &str, extra: &[&str]| {
        let mut args = vec![
            "search",
            "--index",
            &idx,
            "--queries",
            &queries,
            "--run-out",
            out,
            "--arm",
            arm,
        ];
        if arm != "text" {
            args.extend(["--query-vectors", &query_vectors]);
            args.extend(["--vector-search", "exact"]);
        }
        args.extend(extra);
        ok(&args);
        read_run(Path::new(out)).remove("q1").unwrap()
    };
    let text = search("text", &path("text.run"), &[]);
    let vector = search("vector", &path("vector.run"), &[]);
    // The tie the test is about is there: three documents of one BM25 score.
    assert!(text[0].1 == text[2].1 && text[2].1 > text[3].1, "{text:?}");
    let want = rrf(&[&text, &vector]);
    let hybrid = search("hybrid", &path("hybrid.run"), &[]);
    assert_same(&hybrid, &want, "hybrid");
    // dup-c (text rank 1, vector rank 4) and other-x (4 and 1) tie in the fusion: the
    // one hit kept is the one trec_eval reads first.
    assert_eq!(want[0].1, want[1].1, "{want:?}");
    let first = search("hybrid", &path("hybrid1.run"), &["--k", "1"]);
    assert_same(&first, &want[..1], "hybrid --k 1");
}
