//! How the compared indexes are segmented (`--memory-mib`, `--segments`): heddle in a
//! memory budget writes several segments, a segment target merges each engine down to
//! it, and the natural count leaves each engine's own policy in charge. However built,
//! an index answers as the one-segment index of the same corpus does.

mod common;

use std::path::Path;

use heddle_bench::analysis::Analysis;
use heddle_bench::engines::{BuildStats, Engine, ScoredHit};

fn build(engine: Engine, corpus: &Path, dir: &Path, segments: usize, memory: usize) -> BuildStats {
    let opts = common::matched_build(1, segments, memory);
    engine.build(corpus, dir, &opts).unwrap()
}

fn answers(engine: Engine, dir: &Path, queries: &[String]) -> Vec<Vec<ScoredHit>> {
    let e = engine.scored(dir, Analysis::Matched).unwrap();
    queries
        .iter()
        .map(|q| e.search_scored(q, 10).unwrap())
        .collect()
}

#[test]
fn a_budget_splits_heddle_into_segments_and_a_target_merges_both_engines_down() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // About 1.2 MB of text: several segments under heddle's smallest budget (1 MiB).
    common::write_fixture(&data, 6000, 30, 5, true);
    let corpus = data.join("corpus.jsonl");
    let queries: Vec<String> = heddle_corpus::beir::open_queries(data.join("queries.jsonl"))
        .unwrap()
        .map(|q| q.unwrap().text)
        .collect();

    let one = build(Engine::Heddle, &corpus, &dir.path().join("h1"), 1, 0);
    assert_eq!(one.segments, 1);
    let reference = answers(Engine::Heddle, &dir.path().join("h1"), &queries);

    // In a 1 MiB budget, merged down to at most 2 afterwards.
    let capped = build(Engine::Heddle, &corpus, &dir.path().join("h2"), 2, 1 << 20);
    assert!(
        (1..=2).contains(&capped.segments),
        "{} segments",
        capped.segments
    );
    let published: usize = capped
        .phases
        .iter()
        .find_map(|(p, _)| p.strip_prefix("merge ")?.split(' ').next()?.parse().ok())
        .expect("a merge phase");
    assert!(
        published > 2,
        "the budget wrote {published} segments; the test needs more than the target"
    );
    // Natural: the budget's segments, then heddle's own merge policy, waited for.
    let natural = build(Engine::Heddle, &corpus, &dir.path().join("hn"), 0, 1 << 20);
    assert!(natural.segments >= 1);
    for (stats, name) in [(&capped, "h2"), (&natural, "hn")] {
        assert_eq!(stats.docs, 6000);
        assert_eq!(
            answers(Engine::Heddle, &dir.path().join(name), &queries)
                .iter()
                .map(|hits| hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>())
                .collect::<Vec<_>>(),
            reference
                .iter()
                .map(|hits| hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>())
                .collect::<Vec<_>>(),
            "{name}: the same answers as one segment"
        );
    }

    // tantivy: its own merge policy (natural), and merged down to one.
    let t_natural = build(
        Engine::Tantivy,
        &corpus,
        &dir.path().join("tn"),
        0,
        15 << 20,
    );
    let t_one = build(
        Engine::Tantivy,
        &corpus,
        &dir.path().join("t1"),
        1,
        15 << 20,
    );
    assert_eq!((t_natural.docs, t_one.docs), (6000, 6000));
    assert!(t_natural.segments >= 1);
    assert_eq!(t_one.segments, 1);
}
