//! `heddle-eval cost`: the query loop counted under callgrind. These tests run valgrind
//! and skip, saying so, only where it is not installed (`make test` never needs it).

mod common;

use heddle_eval::cost::report::CostReport;

fn valgrind_present() -> bool {
    let found = std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("SKIPPED: valgrind is not installed (apt-get install valgrind)");
    }
    found
}

/// The same queries counted twice by the same build: the A/A floor of instructions,
/// which must be near zero for a 1% threshold to mean anything.
#[test]
fn each_query_is_counted_and_a_second_count_agrees() {
    if !valgrind_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let index = common::index_of(dir.path(), &common::covid_docs(200));
    let q = dir.path().join("queries.jsonl");
    std::fs::write(
        &q,
        "{\"_id\":\"1\",\"text\":\"covid masks\"}\n{\"_id\":\"2\",\"text\":\"vaccine trial results\"}\n{\"_id\":\"3\",\"text\":\"zzzunknownword\"}\n",
    )
    .unwrap();
    let count = |name: &str| -> CostReport {
        let json = dir.path().join(name);
        let out = common::ok(&[
            "cost",
            "--index",
            index.to_str().unwrap(),
            "--queries",
            q.to_str().unwrap(),
            "--count",
            "7",
            "--warmup",
            "3",
            "--jobs",
            "2",
            "--json",
            json.to_str().unwrap(),
        ]);
        assert!(
            out.contains("instr/query") && out.contains("total:"),
            "{out}"
        );
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
    };
    let a = count("a.json");
    assert_eq!(a.per_query.len(), 7, "7 queries, cycling over the file's 3");
    assert_eq!(a.per_query[3].query, "covid masks");
    // Counted in two parts at once (queries 1-4 and 5-7), put back in the set's order.
    assert_eq!(a.jobs, 2);
    assert_eq!(a.per_query[4].query, "vaccine trial results");
    assert!(a.cpu_secs.is_some_and(|c| c > 0.0), "{:?}", a.cpu_secs);
    assert_eq!(
        a.outside_instructions, 0,
        "nothing counted outside the loop"
    );
    assert!(a.per_query.iter().all(|q| q.instructions > 1_000));
    // A query of a word no document holds does less work than one of two common words.
    let unknown = a.per_query[2].instructions;
    assert!(unknown < a.per_query[0].instructions, "{unknown}");
    assert_eq!(a.classes[0].class, "all");
    assert_eq!(
        a.total_instructions,
        a.per_query.iter().map(|q| q.instructions).sum::<u64>()
    );
    let b = count("b.json");
    let floor = (b.total_instructions as f64 / a.total_instructions as f64 - 1.0).abs();
    assert!(floor <= 0.001, "A/A floor {floor}");
}

#[test]
fn a_missing_valgrind_or_index_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q.jsonl");
    std::fs::write(&q, "{\"_id\":\"1\",\"text\":\"covid\"}\n").unwrap();
    common::fails(
        &[
            "cost",
            "--index",
            dir.path().join("nope").to_str().unwrap(),
            "--queries",
            q.to_str().unwrap(),
        ],
        "no such directory",
    );
    let index = common::index_of(dir.path(), &common::covid_docs(5));
    common::fails(
        &[
            "cost",
            "--index",
            index.to_str().unwrap(),
            "--queries",
            q.to_str().unwrap(),
            "--valgrind",
            dir.path().join("no-valgrind").to_str().unwrap(),
        ],
        "no such file",
    );
}
