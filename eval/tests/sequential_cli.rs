//! `heddle-eval bench --sequential N` on a real index: the sequential pass is reported
//! query by query, its slowest queries named and its queries classed by the shares of
//! documents their terms are in (issue 14), on stdout and in the JSON.

mod common;

use heddle_eval::bench::report::BenchReport;

#[test]
fn the_sequential_pass_reports_the_slowest_queries_and_their_classes() {
    let dir = tempfile::tempdir().unwrap();
    // "common" is in every document, "uncommon" in every 4th (25%, not frequent),
    // "needle" in one of 400 (rare).
    let mut lines = String::new();
    for i in 0..400 {
        let mut text = format!("common word{i}");
        if i % 4 == 0 {
            text.push_str(" uncommon");
        }
        if i == 7 {
            text.push_str(" needle");
        }
        lines.push_str(&format!(
            "{{\"_id\":\"d{i}\",\"title\":\"\",\"text\":\"{text}\"}}\n"
        ));
    }
    let index = common::index_of(dir.path(), &lines);
    let queries = dir.path().join("queries.jsonl");
    std::fs::write(
        &queries,
        [
            r#"{"_id":"1","text":"common needle"}"#,
            r#"{"_id":"2","text":"needle"}"#,
            r#"{"_id":"3","text":"common"}"#,
            r#"{"_id":"4","text":"common uncommon word3 word4 word5 word6"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let json = dir.path().join("bench.json");
    let out = common::ok(&[
        "bench",
        "--index",
        index.to_str().unwrap(),
        "--queries",
        queries.to_str().unwrap(),
        "--sequential",
        "400",
        "--rates",
        "100",
        "--samples",
        "200",
        "--min-duration",
        "0",
        "--max-others-cpu",
        "1000",
        "--max-lag-ratio",
        "1000",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(
        out.contains("sequential heddle: 100 passes × 4 queries"),
        "{out}"
    );
    assert!(out.contains("4 worst by latency"), "{out}");
    assert!(out.contains("\"common needle\""), "{out}");
    assert!(out.contains("by document frequency"), "{out}");
    let report: BenchReport =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report.sequential.len(), 1);
    assert_eq!(report.sequential[0].latency_us.count, 400);
    let pq = report.per_query.expect("a per-query section");
    assert_eq!(
        (pq.engines.as_slice(), pq.passes),
        (&["heddle".to_string()][..], 100)
    );
    let class_of = |q: &str| {
        pq.worst
            .iter()
            .find(|w| w.query == q)
            .and_then(|w| w.df_class.clone())
    };
    assert_eq!(class_of("common needle").as_deref(), Some("frequent+rare"));
    assert_eq!(class_of("needle").as_deref(), Some("all-rare"));
    assert_eq!(class_of("common").as_deref(), Some("all-frequent"));
    assert_eq!(
        class_of("common uncommon word3 word4 word5 word6").as_deref(),
        Some("frequent+rare")
    );
    let terms: Vec<(&str, usize)> = pq
        .by_terms
        .iter()
        .map(|c| (c.class.as_str(), c.queries))
        .collect();
    assert_eq!(terms, [("1-2 terms", 3), ("6+ terms", 1)]);
    // The worst list is sorted by the one engine's median, slowest first.
    assert!(pq.worst.windows(2).all(|w| w[0].us[0] >= w[1].us[0]));
}
