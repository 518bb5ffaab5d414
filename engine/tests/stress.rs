//! Concurrency stress: a writer adds, deletes and commits in a loop while background
//! merges run and two readers search. Asserts that no deleted document is returned by a
//! snapshot that includes its delete, and that counts only move in whole commits. Every
//! third batch is large enough for the writer's smallest memory budget to flush it in
//! several segments, so that commits of many segments run beside merges and readers.
//!
//! Runs for `HEDDLE_STRESS_SECS` seconds (default 3; `make stress` runs longer).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use heddle::{Document, Index, IndexSettings, MergePolicy, SearchOptions};

const BATCH: usize = 10;
/// Each commit deletes the batch committed this many commits earlier.
const LAG: u64 = 3;

#[test]
fn writer_merges_and_two_readers_agree_on_every_commit() {
    let secs: u64 = std::env::var("HEDDLE_STRESS_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(dir.path(), IndexSettings::default()).unwrap();
    // Commit generation → every batch deleted by commits up to it.
    let log: Arc<Mutex<BTreeMap<u64, u64>>> = Arc::new(Mutex::new(BTreeMap::new()));
    let stop = Arc::new(AtomicBool::new(false));

    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (index, log, stop) = (index.clone(), log.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut checks = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let searcher = index.searcher();
                    let generation = searcher.generation();
                    let hits = searcher
                        .search(
                            "every",
                            &SearchOptions {
                                k: 1_000_000,
                                ..Default::default()
                            },
                        )
                        .unwrap();
                    assert_eq!(
                        hits.len() as u64,
                        searcher.num_docs(),
                        "hits = live documents"
                    );
                    let mut per_batch: BTreeMap<u64, usize> = BTreeMap::new();
                    for h in &hits {
                        let b: u64 = h.id[1..h.id.find('-').unwrap()].parse().unwrap();
                        *per_batch.entry(b).or_default() += 1;
                    }
                    for (b, n) in &per_batch {
                        assert_eq!(*n, BATCH, "generation {generation}: batch {b} is partial");
                    }
                    // Batches below this were deleted by a commit this snapshot includes.
                    let deleted_below = log
                        .lock()
                        .unwrap()
                        .range(..=generation)
                        .next_back()
                        .map_or(0, |(_, d)| *d);
                    if let Some((b, _)) = per_batch.iter().next() {
                        assert!(
                            *b >= deleted_below,
                            "generation {generation}: deleted batch {b} returned"
                        );
                    }
                    checks += 1;
                }
                checks
            })
        })
        .collect();

    let mut writer = index.writer().unwrap();
    writer.set_memory_budget(heddle::MIN_MEMORY_BUDGET);
    let mut most_segments = 0;
    writer.set_merge_policy(MergePolicy {
        max_segments: 4,
        merge_factor: 3,
        ..MergePolicy::default()
    });
    let started = Instant::now();
    let mut b = 0u64;
    while started.elapsed() < Duration::from_secs(secs) {
        for i in 0..BATCH {
            let mut text = format!("every batch{b} word{i}");
            if b.is_multiple_of(3) {
                // About 40 KB: ten of them outgrow a flush of the smallest budget.
                for k in 0..5_000 {
                    text.push_str(&format!(" pad{}", (k * 7 + i) % 3_000));
                }
            }
            writer
                .add(Document::new(format!("b{b}-{i}"), "", text))
                .unwrap();
        }
        if b >= LAG {
            for i in 0..BATCH {
                assert!(writer.delete(&format!("b{}-{i}", b - LAG)));
            }
        }
        let stats = writer.commit().unwrap();
        most_segments = most_segments.max(stats.segments.len());
        let deleted_below = if b >= LAG { b - LAG + 1 } else { 0 };
        log.lock().unwrap().insert(stats.generation, deleted_below);
        b += 1;
    }
    writer.wait_for_merges().unwrap();
    stop.store(true, Ordering::Relaxed);
    let checks: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    assert!(
        checks > 0 && b > LAG,
        "{checks} reader checks over {b} commits"
    );
    assert_eq!(index.num_docs(), LAG * BATCH as u64);
    assert!(
        most_segments > 1,
        "no commit published more than one segment"
    );
    assert!(heddle::check_index(dir.path()).is_ok());
}
