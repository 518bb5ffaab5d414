//! The vector comparison's parts: recall against brute-force exact search, the search for
//! each engine's cheapest setting reaching a recall and the check that two engines are
//! compared at equal recall, both engines behind the instrument's backend, the vector
//! files, and `heddle-bench vectors` end to end on a small seeded set.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use heddle_bench::vectors::data::{Mixture, Vectors, noisy_copies};
use heddle_bench::vectors::engines::{
    self, VectorBuildOptions, VectorEngine, VectorFactory, heddle_options, query_number,
};
use heddle_bench::vectors::sweep::{self, Point};
use heddle_bench::vectors::truth::{exact_top_k, recall};
use heddle_eval::bench::BackendFactory;

fn set(rows: &[&[f32]]) -> Vectors {
    let mut v = Vectors::new(rows[0].len());
    for r in rows {
        v.push_normalised(r).unwrap();
    }
    v
}

fn ids(v: &[u32]) -> Vec<String> {
    v.iter().map(|d| d.to_string()).collect()
}

#[test]
fn exact_answers_are_the_highest_inner_products_lower_number_first_on_ties() {
    let docs = set(&[
        &[1.0, 0.0],
        &[0.0, 1.0],
        &[1.0, 1.0],
        &[1.0, 0.0],
        &[-1.0, 0.0],
    ]);
    let queries = set(&[&[1.0, 0.0], &[0.0, 1.0], &[1.0, 0.2]]);
    let exact = exact_top_k(&docs, &queries, 3, 2);
    assert_eq!(exact[0], vec![0, 3, 2], "ties (0 and 3) by number");
    assert_eq!(exact[1], vec![1, 2, 0]);
    assert_eq!(exact[2], vec![0, 3, 2]);
    // As many threads as queries or more gives the same answers.
    assert_eq!(exact_top_k(&docs, &queries, 3, 8), exact);
    // k above the set: every document, ranked.
    assert_eq!(exact_top_k(&docs, &queries, 9, 1)[0], vec![0, 3, 2, 1, 4]);
}

#[test]
fn recall_is_the_share_of_each_exact_top_k_found_averaged_over_queries() {
    let exact = vec![vec![1, 2, 3, 4], vec![5, 6, 7, 8]];
    // All of the first, half of the second (order does not matter).
    let found = vec![ids(&[4, 3, 2, 1]), ids(&[6, 5, 90, 91])];
    assert!((recall(&exact, &found, 4) - 0.75).abs() < 1e-12);
    // Only the first k answers count; unparsable ids are misses.
    let found = vec![ids(&[9, 9, 9, 9, 1, 2, 3, 4]), vec!["x".into(); 4]];
    assert_eq!(recall(&exact, &found, 4), 0.0);
    // A short answer counts what it has.
    let found = vec![ids(&[1]), ids(&[5, 6, 7, 8])];
    assert!((recall(&exact, &found, 4) - (0.25 + 1.0) / 2.0).abs() < 1e-12);
    // Recall@2 against the first two of each exact answer.
    let found = vec![ids(&[2, 1]), ids(&[7, 8])];
    assert!((recall(&exact, &found, 2) - 0.5).abs() < 1e-12);
}

#[test]
fn the_cheapest_effort_reaching_a_recall_is_found_by_bisection() {
    // Recall rises with effort: 0.5 at 1, reaching 0.9 first at 37, 0.99 at 300.
    let curve = |e: usize| -> f64 {
        if e >= 300 {
            0.99
        } else if e >= 37 {
            0.9 + (e - 37) as f64 * 1e-4
        } else {
            0.5 + e as f64 * 0.01
        }
    };
    let mut asked = Vec::new();
    let mut recall_of = |e: usize| -> anyhow::Result<f64> {
        asked.push(e);
        Ok(curve(e))
    };
    assert_eq!(
        sweep::min_effort_reaching(1, 512, 0.9, &mut recall_of).unwrap(),
        Some(37)
    );
    assert!(asked.len() <= 12, "bisection, not a scan: {asked:?}");
    assert_eq!(
        sweep::min_effort_reaching(1, 512, 0.99, &mut |e| Ok(curve(e))).unwrap(),
        Some(300)
    );
    assert_eq!(
        sweep::min_effort_reaching(1, 200, 0.99, &mut |e| Ok(curve(e))).unwrap(),
        None,
        "not reached within the range"
    );
    assert_eq!(
        sweep::min_effort_reaching(40, 64, 0.9, &mut |e| Ok(curve(e))).unwrap(),
        Some(40),
        "the lowest effort already reaches it"
    );
    // The bracket starts from the sweep's known recalls.
    let known: BTreeMap<usize, f64> = [1, 16, 64, 512].iter().map(|&e| (e, curve(e))).collect();
    assert_eq!(sweep::bracket(&known, 0.9, 512), (16, 64));
    assert_eq!(sweep::bracket(&known, 0.995, 512), (64, 512));
    assert_eq!(sweep::bracket(&known, 0.4, 512), (1, 1));
}

fn point(effort: usize, recall: f64, p50: u64) -> Point {
    Point {
        effort,
        recall,
        samples: 10_000,
        passes: 10,
        p50_us: Some(p50),
        p99_us: Some(p50 * 3),
        mean_us: Some(p50 as f64 * 1.2),
        query_median_p50_us: Some(p50 as f64),
        qps: Some(1e6 / (p50 as f64 * 1.2)),
    }
}

#[test]
fn engines_are_compared_only_at_equal_recall() {
    let m = sweep::matched(
        0.95,
        Some(point(8, 0.953, 400)),
        Some(point(40, 0.958, 100)),
        0.01,
    );
    assert!(m.equal_recall);
    assert!((m.recall_gap.unwrap() - 0.005).abs() < 1e-12);
    assert!((m.p50_ratio.unwrap() - 4.0).abs() < 1e-12);
    assert!((m.p99_ratio.unwrap() - 4.0).abs() < 1e-12);
    // Both reach the target, but one far beyond the other: not a fair comparison.
    let m = sweep::matched(
        0.95,
        Some(point(8, 0.953, 400)),
        Some(point(40, 0.99, 100)),
        0.01,
    );
    assert!(!m.equal_recall);
    assert!(m.p50_ratio.is_some(), "the ratio is still shown, marked");
    // An engine that does not reach it.
    let m = sweep::matched(
        0.99,
        Some(point(128, 0.97, 900)),
        Some(point(512, 0.995, 300)),
        0.05,
    );
    assert!(!m.equal_recall, "0.97 is below the target");
    let m = sweep::matched(0.99, None, Some(point(512, 0.995, 300)), 0.01);
    assert!(!m.equal_recall && m.p50_ratio.is_none() && m.recall_gap.is_none());
}

#[test]
fn effort_and_target_lists_are_checked() {
    assert_eq!(sweep::efforts(&[8, 1, 8, 3]).unwrap(), vec![1, 3, 8]);
    assert!(sweep::efforts(&[]).is_err());
    assert!(
        sweep::efforts(&[0, 4])
            .unwrap_err()
            .to_string()
            .contains("effort 0")
    );
    assert_eq!(sweep::targets(&[0.99, 0.9]).unwrap(), vec![0.9, 0.99]);
    assert!(sweep::targets(&[1.2]).is_err());
    assert!(sweep::targets(&[0.0]).is_err());
}

#[test]
fn heddles_effort_is_its_graph_walks_ef() {
    let o = heddle_options(10, 7);
    assert_eq!(o.k, 10);
    assert_eq!(o.effort, heddle::SearchEffort::Candidates(7));
    assert_eq!(
        heddle_options(5, 0).effort,
        heddle::SearchEffort::Candidates(1)
    );
}

#[test]
fn vector_files_round_trip_and_bad_ones_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let m = Mixture::new(5, 8, 0.5, 3);
    let docs = m.documents(40);
    let path = dir.path().join("base.bin");
    docs.write(&path).unwrap();
    assert_eq!(Vectors::read(&path).unwrap(), docs);
    // Every vector is unit length.
    for v in docs.iter() {
        let norm: f32 = v.iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-5);
    }
    // Truncated: the error says where it ends.
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 4]).unwrap();
    let e = format!("{:#}", Vectors::read(&path).unwrap_err());
    assert!(
        e.contains("base.bin") && e.contains("ends in vector 39"),
        "{e}"
    );
    // JSONL (heddle-eval embed's cache): a bad line is named by number.
    let jsonl = dir.path().join("v.jsonl");
    std::fs::write(
        &jsonl,
        "{\"_id\":\"a\",\"vector\":[3,4]}\n{\"_id\":\"b\",\"vector\":[1,0]}\n",
    )
    .unwrap();
    let v = Vectors::read(&jsonl).unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!(v.row(0), &[0.6, 0.8]);
    std::fs::write(
        &jsonl,
        "{\"_id\":\"a\",\"vector\":[3,4]}\n{\"_id\":\"b\",\"vector\":[1,0,2]}\n",
    )
    .unwrap();
    let e = format!("{:#}", Vectors::read(&jsonl).unwrap_err());
    assert!(
        e.contains("v.jsonl:2") && e.contains("3 dimensions, expected 2"),
        "{e}"
    );
    std::fs::write(&jsonl, "{\"_id\":\"a\",\"vector\":[0,0]}\n").unwrap();
    let e = format!("{:#}", Vectors::read(&jsonl).unwrap_err());
    assert!(e.contains("v.jsonl:1") && e.contains("zero vector"), "{e}");
}

#[test]
fn made_sets_are_seeded() {
    let m = Mixture::new(10, 16, 1.0, 7);
    assert_eq!(m.documents(50), Mixture::new(10, 16, 1.0, 7).documents(50));
    assert_ne!(m.documents(50), Mixture::new(10, 16, 1.0, 8).documents(50));
    assert_ne!(
        m.documents(5).rows,
        m.queries(5).rows,
        "queries are other draws"
    );
    let source = m.documents(20);
    let a = noisy_copies(&source, 70, 0.5, 1);
    assert_eq!(a.len(), 70);
    assert_eq!(a, noisy_copies(&source, 70, 0.5, 1));
    assert_ne!(a, noisy_copies(&source, 70, 0.5, 2));
    // Without noise a copy is its source.
    let exact = noisy_copies(&source, 40, 0.0, 1);
    assert_eq!(exact.row(25), source.row(5));
    // With it, near its source (cosine well above a random pair's).
    let cos: f32 = a
        .row(25)
        .iter()
        .zip(source.row(5))
        .map(|(x, y)| x * y)
        .sum();
    assert!(cos > 0.7 && cos < 0.9999, "{cos}");
}

/// Both engines built from one small seeded set; heddle with a graph (above its
/// 2,048-document floor). On one thread: a parallel build links in whatever order the
/// threads reach the documents, and under `make test`'s load usearch's graph once found
/// 0.988 of the exact top 10 at ef 4,500 (0.99 asserted below); one thread makes both
/// graphs, and so the recalls asserted, the same on every run (usearch 1.0, heddle 1.0
/// and 0.897 at ef 1).
fn built(dir: &Path) -> (Vectors, Vectors) {
    let m = Mixture::new(40, 16, 1.0, 11);
    let (docs, queries) = (m.documents(4_500), m.queries(60));
    for engine in VectorEngine::ALL {
        let b = engines::build(
            engine,
            &docs,
            &dir.join(engine.name()),
            &VectorBuildOptions {
                threads: 1,
                segments: 1,
            },
        )
        .unwrap();
        assert_eq!((b.vectors, b.dim, b.segments), (4_500, 16, 1));
        assert!(b.bytes > 4_500 * 16 * 4, "{engine:?}: {} bytes", b.bytes);
    }
    (docs, queries)
}

#[test]
fn both_engines_answer_behind_the_instruments_backend() {
    let dir = tempfile::tempdir().unwrap();
    let (docs, queries) = built(dir.path());
    let exact = exact_top_k(&docs, &queries, 10, 2);
    let queries = std::sync::Arc::new(queries);
    let mut recall_at = BTreeMap::new();
    for (engine, efforts) in [
        (VectorEngine::Heddle, [1, 10_000]),
        (VectorEngine::Usearch, [10, 4_500]),
    ] {
        for effort in efforts {
            let backend = VectorFactory {
                engine,
                dir: dir.path().join(engine.name()),
                effort,
                queries: queries.clone(),
                threads: 2,
            }
            .open(Path::new("ignored"))
            .unwrap();
            let found: Vec<Vec<String>> = (0..queries.len())
                .map(|i| backend.search(&i.to_string(), 10).unwrap())
                .collect();
            assert!(
                found.iter().all(|f| f.len() == 10),
                "{engine:?}: 10 hits each"
            );
            recall_at.insert((engine, effort), recall(&exact, &found, 10));
            let e = backend.search("60", 10).unwrap_err().to_string();
            assert!(
                e.contains("\"60\"") && e.contains("not a query number"),
                "{e}"
            );
        }
    }
    // An ef beyond the documents walks the whole graph: heddle's scores are f32, the
    // yardstick's f64, so only a near-tie could differ.
    assert!(
        recall_at[&(VectorEngine::Heddle, 10_000)] >= 0.995,
        "{recall_at:?}"
    );
    assert!(
        recall_at[&(VectorEngine::Usearch, 4_500)] >= 0.99,
        "{recall_at:?}"
    );
    // ef 1 (raised to k) finds less: the effort reaches the engine.
    assert!(
        recall_at[&(VectorEngine::Heddle, 1)] < recall_at[&(VectorEngine::Heddle, 10_000)] - 0.05,
        "{recall_at:?}"
    );
}

#[test]
fn request_texts_are_query_numbers() {
    assert_eq!(query_number("0", 3).unwrap(), 0);
    assert_eq!(query_number(" 2 ", 3).unwrap(), 2);
    for bad in ["3", "-1", "q1", ""] {
        assert!(query_number(bad, 3).is_err(), "{bad:?}");
    }
}

#[test]
fn the_vectors_command_runs_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_heddle-bench");
    let data = dir.path().join("data");
    let made = Command::new(bin)
        .args(["vectors-data", "mixture", "--n", "4500", "--dim", "16"])
        .args([
            "--clusters",
            "40",
            "--queries",
            "50",
            "--seed",
            "3",
            "--out",
        ])
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let out = dir.path().join("out");
    let run = |extra: &[&str]| {
        Command::new(bin)
            .arg("vectors")
            .arg("--base")
            .arg(data.join("base.bin"))
            .arg("--query-vectors")
            .arg(data.join("queries.bin"))
            .arg("--out")
            .arg(&out)
            .args(["--name", "tiny", "--heddle-efforts", "1,4,16,64"])
            .args(["--usearch-efforts", "10,32,128", "--recalls", "0.8,0.9"])
            .args(["--ladder-recall", "0.9", "--recall-tolerance", "0.2"])
            .args(["--sweep-samples", "100", "--sequential-samples", "100"])
            .args(["--rates", "200", "--samples", "100", "--min-duration", "0"])
            .args(["--memory-requests", "50", "--index-threads", "2"])
            .args(extra)
            .output()
            .unwrap()
    };
    let first = run(&[]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&first.stdout),
        String::from_utf8_lossy(&first.stderr),
    );
    assert!(first.status.success(), "{stdout}\n{stderr}");
    for needle in [
        "== tiny: 4500 × 16 vectors, 50 queries, recall@10",
        "recall ≥ 0.9: p50",
        "recall ≥ 0.8: effort (recall)",
        "sequential, alternating, p50",
        "build time (2 threads)",
        "index bytes",
        "serving peak RSS (VmHWM)",
        "highest rate held (ladder)",
    ] {
        assert!(
            stdout.contains(needle),
            "stdout lacks {needle:?}:\n{stdout}"
        );
    }
    assert!(stderr.contains("building in a fresh process"), "{stderr}");
    let report = heddle_bench::vectors::report::read(&out.join("report.json")).unwrap();
    assert_eq!(report.curves.len(), 2);
    assert_eq!(report.builds.len(), 2);
    assert!(report.builds.iter().all(|b| b.peak_rss_kib.is_some()));
    assert!(report.memory.iter().all(|m| m.is_some()));
    assert_eq!(report.matched.len(), 2);
    for m in &report.matched {
        for p in [&m.heddle, &m.peer].into_iter().flatten() {
            assert!(p.recall >= m.target, "a matched setting reaches its target");
        }
    }
    let svg = std::fs::read_to_string(out.join("recall-qps.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("heddle") && svg.contains("usearch"));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for needle in [
        "<section id=\"recall-qps\">",
        "<section id=\"ratios\">",
        "<section id=\"ladder\">",
    ] {
        assert!(html.contains(needle), "the page lacks {needle}");
    }
    // A second run reuses both indexes.
    let second = run(&["--no-ladder"]);
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{stderr}");
    assert_eq!(stderr.matches("reusing").count(), 2, "{stderr}");
    // The instrument's own request flags are refused.
    let refused = run(&["--queries", "x.tsv"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("sets --queries itself"));
}
