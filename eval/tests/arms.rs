//! The three arms as a user runs them: `--arm text|vector|hybrid` in `search` and
//! `quality`, query vectors encoded as each query runs or read from a file, and the
//! refusals. The index's vectors come from the hashing encoder (a bag-of-words stand-in
//! for the model), so every expected ranking is computed here from its definition.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{fails, ok};
use heddle::{AnalyzerConfig, Document, Index, IndexSettings};
use heddle_eval::quality::{HashingEncoder, TextEncoder};

const DIM: usize = 32;
const ENCODER: &str = "hashing:32";

const DOCS: &[(&str, &str, &str)] = &[
    (
        "d1",
        "Vitamin D and bone density",
        "Vitamin D supplements raise bone density.",
    ),
    (
        "d2",
        "Bone fractures",
        "Fractures in older adults and vitamin intake.",
    ),
    (
        "d3",
        "Statins",
        "Statins lower cholesterol and cardiovascular risk.",
    ),
    (
        "d4",
        "Exercise",
        "Exercise improves bone health and cardiovascular fitness.",
    ),
    ("d5", "Vitamin C", "Vitamin C and the common cold."),
    ("d6", "Sleep", "Sleep duration and memory."),
    (
        "d7",
        "Masks",
        "Masks reduce droplet spread of respiratory viruses.",
    ),
];

fn doc_vector(title: &str, text: &str) -> Vec<f32> {
    HashingEncoder { dim: DIM }
        .encode(&format!("{title} {text}"))
        .unwrap()
}

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let settings = IndexSettings {
            analyzer: AnalyzerConfig::english(),
            vector_dim: Some(DIM),
            ..Default::default()
        };
        let index = Index::create(root.join("idx"), settings).unwrap();
        let mut w = index.writer().unwrap();
        for (id, title, text) in DOCS {
            w.add(Document::new(*id, *title, *text).with_vector(doc_vector(title, text)))
                .unwrap();
        }
        w.commit().unwrap();
        // A plain index without vectors, for the refusals.
        let plain = Index::create(root.join("plain"), IndexSettings::default()).unwrap();
        let mut w = plain.writer().unwrap();
        w.add(Document::new("p1", "t", "bone")).unwrap();
        w.commit().unwrap();
        Fixture { _dir: dir, root }
    }

    fn path(&self, rel: &str) -> String {
        self.root.join(rel).to_string_lossy().into_owned()
    }

    /// `search --json` on the vector index: (id, score) best first.
    fn search(&self, extra: &[&str]) -> Vec<(String, f64)> {
        let idx = self.path("idx");
        let args = [
            &["search", "--index", &idx, "--json", "--k", "100"][..],
            extra,
        ]
        .concat();
        let out: serde_json::Value = serde_json::from_str(ok(&args).trim()).unwrap();
        out["hits"]
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
    }
}

/// Every document by inner product with `query`'s encoding, computed in f64 here.
fn by_inner_product(query: &[f32]) -> Vec<(String, f64)> {
    let mut scored: Vec<(String, f64)> = DOCS
        .iter()
        .map(|(id, title, text)| {
            let v = doc_vector(title, text);
            let dot = v
                .iter()
                .zip(query)
                .map(|(a, b)| *a as f64 * *b as f64)
                .sum();
            (id.to_string(), dot)
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored
}

fn ids(ranked: &[(String, f64)]) -> Vec<&str> {
    ranked.iter().map(|(id, _)| id.as_str()).collect()
}

#[test]
fn the_vector_arm_ranks_every_document_by_inner_product_with_the_encoded_query() {
    let f = Fixture::new();
    let query = "bone density and vitamin";
    let got = f.search(&["--arm", "vector", "--encoder", ENCODER, query]);
    let want = by_inner_product(&HashingEncoder { dim: DIM }.encode(query).unwrap());
    assert_eq!(
        got.len(),
        DOCS.len(),
        "the vector arm scores every document"
    );
    // Equal scores may order either way between f32 and f64 arithmetic: compare scores
    // position by position, and ids where the scores are apart.
    for (g, w) in got.iter().zip(&want) {
        assert!((g.1 - w.1).abs() < 1e-5, "{got:?} against {want:?}");
    }
    assert_eq!(got[0].0, want[0].0, "{got:?}");
    assert_eq!(got[0].0, "d1", "the document sharing most words");
    // The oracle path gives the same here: segments this small have no graph.
    let exact = f.search(&[
        "--arm",
        "vector",
        "--encoder",
        ENCODER,
        "--vector-search",
        "exact",
        query,
    ]);
    assert_eq!(ids(&exact), ids(&got));
    let idx = f.path("idx");
    let said = |extra: &[&str]| {
        let args = [
            &[
                "search",
                "--index",
                &idx,
                "--arm",
                "vector",
                "--encoder",
                ENCODER,
            ][..],
            extra,
            &[query][..],
        ]
        .concat();
        ok(&args)
    };
    assert!(said(&[]).contains("vector inner product (HNSW, ef 64)"));
    assert!(said(&["--vector-search", "exact"]).contains("vector inner product (exact)"));
}

#[test]
fn the_hybrid_arm_is_rrf_of_the_text_and_vector_arms() {
    let f = Fixture::new();
    let query = "vitamin bone cardiovascular";
    let text = f.search(&[query]);
    let vector = f.search(&["--arm", "vector", "--encoder", ENCODER, query]);
    let hybrid = f.search(&["--arm", "hybrid", "--encoder", ENCODER, query]);
    // Each stream as its run file is read (ties by id, descending: trec_eval's order,
    // which `search` of one query does not print), and the fusion's ties the same way.
    let trec_order = |a: &(String, f64), b: &(String, f64)| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0));
    let mut fused: BTreeMap<String, f64> = BTreeMap::new();
    for stream in [&text, &vector] {
        let mut stream = stream.clone();
        stream.sort_by(trec_order);
        for (rank, (id, _)) in stream.into_iter().enumerate() {
            *fused.entry(id).or_default() += 1.0 / (60.0 + rank as f64 + 1.0);
        }
    }
    let mut want: Vec<(String, f64)> = fused.into_iter().collect();
    want.sort_by(trec_order);
    assert_eq!(ids(&hybrid), ids(&want));
    for (g, w) in hybrid.iter().zip(&want) {
        assert!((g.1 - w.1).abs() < 1e-12, "{hybrid:?} against {want:?}");
    }
    // The hybrid arm's text stream follows --field, and --combine works on it.
    let z = f.search(&[
        "--arm",
        "hybrid",
        "--encoder",
        ENCODER,
        "--combine",
        "zscore",
        query,
    ]);
    assert_eq!(z.len(), want.len());
    assert_ne!(
        z.iter().map(|h| h.1).collect::<Vec<_>>(),
        hybrid.iter().map(|h| h.1).collect::<Vec<_>>()
    );
}

fn write_query_vectors(dir: &Path, lines: &str) -> String {
    let path = dir.join("qv.jsonl");
    std::fs::write(&path, lines).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn quality_reads_query_vectors_by_id_and_ranks_with_them() {
    let f = Fixture::new();
    // Query 1's vector is d6's own: it must come first whatever the query's text says.
    let d6 = doc_vector(DOCS[5].1, DOCS[5].2);
    let q2 = HashingEncoder { dim: DIM }.encode("statins").unwrap();
    let qv = write_query_vectors(
        &f.root,
        &format!(
            "{}\n\n{}\n",
            serde_json::json!({"_id": "1", "vector": d6}),
            serde_json::json!({"_id": "2", "vector": q2})
        ),
    );
    std::fs::write(f.root.join("topics.tsv"), "1\tvitamin bone\n2\tstatins\n").unwrap();
    std::fs::write(f.root.join("q.qrels"), "1 0 d6 1\n2 0 d3 1\n").unwrap();
    let run = f.path("v.run");
    let out = ok(&[
        "quality",
        "--index",
        &f.path("idx"),
        "--queries",
        &f.path("topics.tsv"),
        "--qrels",
        &f.path("q.qrels"),
        "--arm",
        "vector",
        "--query-vectors",
        &qv,
        "--run-out",
        &run,
        "--json",
    ]);
    let out: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(out["ndcg_cut_10"].as_f64(), Some(1.0), "{out}");
    assert!(
        out["ranking"].as_str().unwrap().contains("qv.jsonl"),
        "{out}"
    );
    let lines = std::fs::read_to_string(&run).unwrap();
    let first: Vec<&str> = lines.lines().next().unwrap().split_whitespace().collect();
    assert_eq!((first[0], first[2]), ("1", "d6"), "{lines}");
}

#[test]
fn bad_query_vector_files_are_refused_naming_file_and_line() {
    let f = Fixture::new();
    let idx = f.path("idx");
    let search = |qv: &str| {
        std::fs::write(f.root.join("topics.tsv"), "1\tvitamin\n").unwrap();
        vec![
            "search".to_string(),
            "--index".into(),
            idx.clone(),
            "--queries".into(),
            f.path("topics.tsv"),
            "--arm".into(),
            "vector".into(),
            "--query-vectors".into(),
            qv.to_string(),
            "--run-out".into(),
            f.path("x.run"),
        ]
    };
    let one = vec![1.0f32; DIM];
    let cases: Vec<(String, &str)> = vec![
        ("not json\n".into(), "qv.jsonl:1: invalid JSON"),
        (
            format!(
                "{}\n{{\"_id\": \"2\"}}\n",
                serde_json::json!({"_id": "1", "vector": one})
            ),
            "qv.jsonl:2: missing field \"vector\"",
        ),
        (
            "{\"_id\": \"1\", \"vector\": []}\n".into(),
            "qv.jsonl:1: field \"vector\" is empty",
        ),
        (
            "{\"_id\": \"1\", \"vector\": [1e39]}\n".into(),
            "not a finite f32",
        ),
        (
            format!(
                "{}\n{}\n",
                serde_json::json!({"_id": "1", "vector": one}),
                serde_json::json!({"_id": "2", "vector": [1.0]})
            ),
            "qv.jsonl:2: vector has 1 values, expected 32 (the dimension of line 1)",
        ),
        (
            format!(
                "{}\n{}\n",
                serde_json::json!({"_id": "1", "vector": one}),
                serde_json::json!({"_id": "1", "vector": one})
            ),
            "qv.jsonl:2: duplicate id \"1\", first seen at line 1",
        ),
        ("\n".into(), "qv.jsonl: holds no query vectors"),
        (
            format!("{}\n", serde_json::json!({"_id": "9", "vector": one})),
            "query 1 has no vector in",
        ),
        (
            format!(
                "{}\n",
                serde_json::json!({"_id": "1", "vector": [1.0, 0.0]})
            ),
            "dimension",
        ),
    ];
    for (content, needle) in cases {
        let qv = write_query_vectors(&f.root, &content);
        let args = search(&qv);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        fails(&args, needle);
    }
}

#[test]
fn arms_and_flags_that_do_not_fit_are_refused() {
    let f = Fixture::new();
    let (idx, plain) = (f.path("idx"), f.path("plain"));
    fails(
        &[
            "search",
            "--index",
            &plain,
            "--arm",
            "vector",
            "--encoder",
            ENCODER,
            "bone",
        ],
        "vector",
    );
    fails(
        &[
            "search",
            "--index",
            &idx,
            "--arm",
            "text",
            "--combine",
            "sum",
            "bone",
        ],
        "give --fuse or --arm hybrid",
    );
    fails(
        &[
            "search", "--index", &idx, "--arm", "vector", "--field", "title", "bone",
        ],
        "the vector arm has none",
    );
    std::fs::write(f.root.join("t.tsv"), "1\tbone\n").unwrap();
    let (topics, run) = (f.path("t.tsv"), f.path("t.run"));
    fails(
        &[
            "search",
            "--index",
            &idx,
            "--queries",
            &topics,
            "--run-out",
            &run,
            "--query-vectors",
            "x.jsonl",
        ],
        "--query-vectors is for the vector stream",
    );
    // Without --queries, query vectors alone make a dense run, which needs --run-out.
    fails(
        &[
            "search",
            "--index",
            &idx,
            "--query-vectors",
            "x.jsonl",
            "bone",
        ],
        "--query-vectors needs --run-out",
    );
    fails(
        &[
            "search",
            "--index",
            &idx,
            "--arm",
            "vector",
            "--encoder",
            "hashing:0",
            "bone",
        ],
        "DIM must be a number from 1 to 65536",
    );
    fails(
        &[
            "search",
            "--index",
            &idx,
            "--arm",
            "vector",
            "--encoder",
            "bert",
            "bone",
        ],
        "expected minilm, minilm-int8 or hashing:DIM",
    );
    // An encoder of another width than the index's vectors.
    fails(
        &[
            "search",
            "--index",
            &idx,
            "--arm",
            "vector",
            "--encoder",
            "hashing:8",
            "bone",
        ],
        "dimension",
    );
}

#[test]
fn the_bench_runs_the_hybrid_arm_with_each_querys_encoding_inside_its_latency() {
    let f = Fixture::new();
    std::fs::write(
        f.root.join("queries.jsonl"),
        "{\"_id\": \"1\", \"text\": \"vitamin bone\"}\n{\"_id\": \"2\", \"text\": \"statins risk\"}\n",
    )
    .unwrap();
    let json = f.path("bench.json");
    let table = ok(&[
        "bench",
        "--index",
        &f.path("idx"),
        "--queries",
        &f.path("queries.jsonl"),
        "--arm",
        "hybrid",
        "--encoder",
        ENCODER,
        "--rates",
        "100",
        "--samples",
        "300",
        "--min-duration",
        "0",
        "--warmup",
        "5",
        "--sequential",
        "0",
        "--json",
        &json,
    ]);
    assert!(
        table.contains("query encoding inside each request"),
        "{table}"
    );
    assert!(
        table.contains("heddle ranks with the hybrid arm"),
        "{table}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rung = &report["engines"][0]["rungs"][0];
    assert_eq!(rung["errors"], 0, "{rung}");
    // Every request completed or was shed (a loaded machine's dispatcher may fall
    // behind the in-flight cap; shedding is the instrument working, not an error).
    let (completed, shed) = (&rung["completed"], &rung["shed"]);
    assert_eq!(
        completed.as_u64().unwrap() + shed.as_u64().unwrap(),
        300,
        "{rung}"
    );
    assert!(completed.as_u64().unwrap() >= 150, "{rung}");
    let (encode, search) = (&rung["encode_us"], &rung["search_us"]);
    assert!(encode["p50"].as_u64().is_some(), "{rung}");
    assert!(search["p50"].as_u64().is_some(), "{rung}");
    // Encoding and search are parts of the service time: together at most its maximum
    // (each rounded up to a microsecond).
    let service_max = rung["service_us"]["max"].as_u64().unwrap();
    assert!(encode["max"].as_u64().unwrap() <= service_max + 1, "{rung}");
    // The four parts of the service time: each request's parts are timed inside it,
    // so their means add to at most the service time's mean, and the parts account
    // for most of it (the rest is taking the snapshot and copying the ids).
    let mean = |part: &str| {
        rung[part]["mean"]
            .as_f64()
            .unwrap_or_else(|| panic!("{part}: {rung}"))
    };
    let parts = ["encode_us", "text_us", "vector_us", "fusion_us"].map(mean);
    let (sum, service) = (parts.iter().sum::<f64>(), mean("service_us"));
    assert!(sum <= service + 1.0, "parts {parts:?}, service {service}");
    assert!(sum >= 0.5 * service, "parts {parts:?}, service {service}");
    assert!(
        parts.iter().all(|&p| p > 0.0),
        "each part took time: {parts:?}"
    );
    for q in ["p50", "p99"] {
        assert!(
            table.contains(&format!("where a request's time went, {q}")),
            "{table}"
        );
    }
    assert_eq!(
        report["settings"]["ranking"],
        format!(
            "the hybrid arm (encoder {ENCODER}, hnsw vector search, ef 64, each stream fused 1000 deep)"
        )
    );
    // The text arm has no encoding to report.
    let text = ok(&[
        "bench",
        "--index",
        &f.path("idx"),
        "--queries",
        &f.path("queries.jsonl"),
        "--rates",
        "100",
        "--samples",
        "200",
        "--min-duration",
        "0",
        "--warmup",
        "5",
        "--sequential",
        "0",
    ]);
    assert!(!text.contains("query encoding"), "{text}");
}
