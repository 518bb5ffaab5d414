//! heddle through the child-engine protocol (the `heddle-child` binary) answers as heddle
//! in-process does, under concurrent requests, and stops cleanly when its stdin closes.

mod common;

use std::process::Command;
use std::sync::Arc;

use heddle_bench::engines::{Engine, HeddleScored, ScoredSearch};
use heddle_bench::peer::backend::{ChildFactory, ChildSpec, QueryForm};
use heddle_eval::bench::Backend;

#[test]
fn the_heddle_child_answers_as_heddle_in_process() {
    let dir = tempfile::tempdir().unwrap();
    common::write_fixture(dir.path(), 300, 40, 11, true);
    let index = dir.path().join("index");
    Engine::Heddle
        .build(
            &dir.path().join("corpus.jsonl"),
            &index,
            &common::matched_build(1, 0, 0),
        )
        .unwrap();
    let exe = env!("CARGO_BIN_EXE_heddle-child").to_string();
    let idx = index.clone();
    let spec = ChildSpec {
        name: "heddle-child".into(),
        command: Arc::new(move || {
            let mut c = Command::new(&exe);
            c.arg("--index").arg(&idx).arg("--threads").arg("3");
            c
        }),
        query_form: QueryForm::Text,
        score_scale: 1.0,
        index: index.clone(),
    };
    let child = Arc::new(ChildFactory::new(spec).start().unwrap());
    assert_eq!(child.process.ready.docs, 300);
    let local = HeddleScored::open(&index).unwrap();
    let queries = heddle_eval::formats::read_topics(&dir.path().join("queries.jsonl")).unwrap();
    // Four threads at once: every answer must reach the request that asked for it.
    std::thread::scope(|s| {
        for t in 0..4 {
            let (child, local, queries) = (child.clone(), &local, &queries);
            s.spawn(move || {
                for q in queries.iter().skip(t).step_by(4) {
                    let want = local.search_scored(&q.text, 10).unwrap();
                    let got = child.search_scored(&q.text, 10).unwrap();
                    assert_eq!(got, want, "{}", q.text);
                    let ids = child.search(&q.text, 3).unwrap();
                    assert_eq!(ids.len(), want.len().min(3));
                }
            });
        }
    });
    // Each search's own account (CPU, service time) was kept: two per query above.
    let own = child.take_own_time().expect("the child answered searches");
    assert_eq!(own.requests, 2 * queries.len() as u64);
    assert_eq!(own.service_us.count, own.requests);
    assert!(own.service_mean_us > 0.0);
    assert!(own.cpu_mean_us > 0.0 && own.cpu_mean_us <= own.service_mean_us * 1.5);
    assert!(child.take_own_time().is_none(), "taking starts over");
    assert_eq!(child.local_server(), Some(child.process.pid()));
    let mem = child.memory();
    assert!(mem.vm_hwm_kib.is_some_and(|k| k > 0));
    assert!(mem.heap.is_none(), "heddle has no managed heap");
    child.process.stop().unwrap();
    assert!(
        child.search("anything", 10).is_err(),
        "a stopped child answers nothing"
    );
}
