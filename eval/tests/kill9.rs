//! Crash safety by brute force: a child process commits numbered batches in a loop and is
//! killed with SIGKILL at random moments. After every kill the index must open, pass a
//! full consistency check, and hold exactly the batches the child logged as committed,
//! plus possibly the one in flight: whole, never in part.
//!
//! `HEDDLE_KILLS` sets the number of kills (default 50; `make stress` runs 1,000).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use heddle::{Index, IndexSettings, SearchOptions};

const BATCH: usize = 20;

/// A small deterministic generator for the kill delays (no dependency needed).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// Batch number → documents found, from one search over every document.
fn batches_present(dir: &Path) -> BTreeMap<u64, usize> {
    let index = Index::open(dir).expect("the index opens after a kill");
    let hits = index
        .searcher()
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
        index.num_docs(),
        "every document has the word"
    );
    let mut batches = BTreeMap::new();
    for h in hits {
        let b: u64 = h.id[1..h.id.find('-').unwrap()].parse().unwrap();
        *batches.entry(b).or_insert(0) += 1;
    }
    batches
}

fn logged(log: &Path) -> BTreeSet<u64> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.parse().unwrap())
        .collect()
}

#[test]
fn sigkill_at_random_moments_never_loses_or_splits_a_commit() {
    let kills: usize = std::env::var("HEDDLE_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("idx");
    let log = tmp.path().join("committed.log");
    Index::create(&dir, IndexSettings::default()).unwrap();
    let mut rng = Lcg(0x5eed);
    let mut unlogged_commits = 0;
    let mut committed_batches = 0;
    for kill in 0..kills {
        let mut child = Command::new(env!("CARGO_BIN_EXE_heddle-eval"))
            .args(["crash-writer", "--index"])
            .arg(&dir)
            .arg("--log")
            .arg(&log)
            .args(["--batch", &BATCH.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(5 + rng.next() % 200));
        if let Ok(Some(status)) = child.try_wait() {
            let out = child.wait_with_output().unwrap();
            panic!(
                "kill {kill}: the writer exited by itself ({status}): {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();

        let report = heddle::check_index(&dir);
        assert!(report.is_ok(), "kill {kill}: {:?}", report.problems);
        let present = batches_present(&dir);
        let logged = logged(&log);
        for (b, n) in &present {
            assert_eq!(*n, BATCH, "kill {kill}: batch {b} is partial");
        }
        let committed: BTreeSet<u64> = present.keys().copied().collect();
        let expected: BTreeSet<u64> = (0..committed.len() as u64).collect();
        assert_eq!(
            committed, expected,
            "kill {kill}: batches commit in order, none lost"
        );
        assert!(
            logged.is_subset(&committed),
            "kill {kill}: a logged commit was lost: logged {:?}, committed 0..{}",
            logged.difference(&committed).collect::<Vec<_>>(),
            committed.len()
        );
        // Committed but not logged: the batch in flight when the child died.
        let in_flight = committed.difference(&logged).count();
        assert!(
            in_flight <= unlogged_commits + 1,
            "kill {kill}: more than one unlogged commit"
        );
        unlogged_commits = in_flight;
        committed_batches = committed.len();
    }
    // The kills must land among commits, not only during start-up.
    assert!(
        committed_batches >= kills / 2,
        "only {committed_batches} batches committed in {kills} runs"
    );
    eprintln!(
        "{kills} kills, {committed_batches} batches committed, {} merges' worth of segments",
        Index::open(&dir).unwrap().segments().len()
    );
}
