//! `heddle-eval embed` end to end with the real all-MiniLM-L6-v2 on a handful of short
//! texts (the model is fetched into the default model cache when absent, as the encoder's
//! own tests do): vectors files that `index --vectors` and `search --query-vectors` take,
//! and a second run that reads the cache instead of encoding.

mod common;

use common::{fails, ok};

const CORPUS: &str = r#"{"_id": "bats", "title": "Bats", "text": "Bats are a natural reservoir of coronaviruses."}
{"_id": "masks", "title": "Face masks", "text": "Surgical masks reduce the spread of respiratory droplets."}
{"_id": "vaccine", "title": "", "text": "The vaccine trial reported a strong antibody response."}
{"_id": "bread", "title": "Sourdough", "text": "Bake the loaf at a high temperature with steam."}
"#;

const QUERIES: &str = r#"{"_id": "q-bats", "text": "which animals carry coronaviruses"}
{"_id": "q-bread", "text": "how to bake bread"}
{"_id": "q-masks", "text": "do face coverings stop droplets"}
"#;

#[test]
fn embed_writes_vectors_that_index_and_search_take_and_caches_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = |rel: &str| dir.path().join(rel).to_string_lossy().into_owned();
    std::fs::create_dir(dir.path().join("corpus")).unwrap();
    std::fs::write(dir.path().join("corpus/corpus.jsonl"), CORPUS).unwrap();
    std::fs::write(dir.path().join("queries.jsonl"), QUERIES).unwrap();
    let embed = [
        "embed",
        "--corpus",
        &path("corpus"),
        "--queries",
        &path("queries.jsonl"),
        "--out",
        &path("corpus.vectors.jsonl"),
        "--queries-out",
        &path("queries.vectors.jsonl"),
        "--cache",
        &path("cache"),
        "--threads",
        "2",
        "--batch",
        "3",
    ];
    let first = ok(&embed);
    assert!(
        first.contains("4 documents, 4 encoded now (0 from the cache)"),
        "{first}"
    );
    assert!(first.contains("3 queries, 3 encoded now"), "{first}");

    ok(&[
        "index",
        "--corpus",
        &path("corpus"),
        "--index",
        &path("idx"),
        "--vectors",
        &path("corpus.vectors.jsonl"),
    ]);
    ok(&[
        "search",
        "--index",
        &path("idx"),
        "--query-vectors",
        &path("queries.vectors.jsonl"),
        "--run-out",
        &path("dense.run"),
    ]);
    let run = std::fs::read_to_string(dir.path().join("dense.run")).unwrap();
    for (query, doc) in [
        ("q-bats", "bats"),
        ("q-bread", "bread"),
        ("q-masks", "masks"),
    ] {
        assert!(
            run.lines()
                .any(|l| l.starts_with(&format!("{query} Q0 {doc} 1 "))),
            "{query} should find {doc} first:\n{run}"
        );
    }

    // The second run reads the cache: nothing is encoded, the files are the same.
    let before = std::fs::read(dir.path().join("corpus.vectors.jsonl")).unwrap();
    let second = ok(&embed);
    assert!(
        second.contains("4 documents, all from the cache"),
        "{second}"
    );
    assert!(second.contains("3 queries, all from the cache"), "{second}");
    assert_eq!(
        std::fs::read(dir.path().join("corpus.vectors.jsonl")).unwrap(),
        before
    );

    fails(
        &[
            "embed",
            "--corpus",
            &path("corpus"),
            "--batch",
            "0",
            "--cache",
            &path("cache"),
        ],
        "--batch must be at least 1",
    );
}
