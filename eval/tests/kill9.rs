//! Crash safety by brute force: a child process commits numbered batches in a loop and is
//! killed with SIGKILL at random moments. After every kill the index must open, pass a
//! full consistency check, and hold exactly the batches the child logged as committed,
//! plus possibly the one in flight: whole, never in part.
//!
//! The second test gives the writer a small memory budget and batches larger than it, so
//! that each commit publishes several segments written before it, and kills land
//! between those flushes too: a flushed segment must never become visible on its own,
//! and the next writer must remove its files.
//!
//! `HEDDLE_KILLS` sets the number of kills (default 50, and 20 with flushes; `make
//! stress` runs 1,000).

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

fn seg_files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("seg-"))
        .collect()
}

fn named_files(index: &Index) -> BTreeSet<String> {
    index.segments().iter().flat_map(|s| s.files()).collect()
}

#[test]
fn sigkill_at_random_moments_never_loses_or_splits_a_commit() {
    let kills = kills(50);
    let report = kill_repeatedly(kills, BATCH, &[], 5..205);
    // The kills must land among commits, not only during start-up.
    assert!(
        report.committed_batches >= kills / 2,
        "only {} batches committed in {kills} runs",
        report.committed_batches
    );
}

#[test]
fn sigkill_between_flushes_of_one_commit_never_publishes_part_of_it() {
    let kills = kills(20);
    // About 300 KB a batch of 100: several flushes of a 1 MiB budget's share each.
    let report = kill_repeatedly(
        kills,
        FLUSHING_BATCH,
        &[
            "--memory-bytes",
            &heddle::MIN_MEMORY_BUDGET.to_string(),
            "--pad-words",
            "400",
        ],
        50..650,
    );
    assert!(
        report.committed_batches >= kills / 4,
        "only {} batches committed in {kills} runs",
        report.committed_batches
    );
    assert!(
        report.kills_leaving_flushed >= kills / 4,
        "only {} of {kills} kills left flushed, unpublished segments",
        report.kills_leaving_flushed
    );
}

const FLUSHING_BATCH: usize = 100;

fn kills(default: usize) -> usize {
    std::env::var("HEDDLE_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct KillReport {
    committed_batches: usize,
    /// Kills after which segment files no manifest names were on disk.
    kills_leaving_flushed: usize,
}

/// Runs the crash writer with `extra` arguments and kills it `kills` times, each after
/// a delay drawn from `delays` (ms), checking the index after every kill.
fn kill_repeatedly(
    kills: usize,
    batch: usize,
    extra: &[&str],
    delays: std::ops::Range<u64>,
) -> KillReport {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("idx");
    let log = tmp.path().join("committed.log");
    Index::create(&dir, IndexSettings::default()).unwrap();
    let mut rng = Lcg(0x5eed);
    let mut unlogged_commits = 0;
    let mut committed_batches = 0;
    let mut kills_leaving_flushed = 0;
    for kill in 0..kills {
        let mut child = Command::new(env!("CARGO_BIN_EXE_heddle-eval"))
            .args(["crash-writer", "--index"])
            .arg(&dir)
            .arg("--log")
            .arg(&log)
            .args(["--batch", &batch.to_string()])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let spread = delays.end - delays.start;
        std::thread::sleep(Duration::from_millis(delays.start + rng.next() % spread));
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
            assert_eq!(*n, batch, "kill {kill}: batch {b} is partial");
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

        // Files of segments written but never published (flushed, or a commit's last
        // one) are the next writer's to remove, and only those.
        let index = Index::open(&dir).unwrap();
        if seg_files(&dir) != named_files(&index) {
            kills_leaving_flushed += 1;
        }
        drop(index.writer().unwrap());
        assert_eq!(
            seg_files(&dir),
            named_files(&index),
            "kill {kill}: files left behind"
        );
    }
    eprintln!(
        "{kills} kills, {committed_batches} batches committed, {kills_leaving_flushed} \
         left unpublished files, {} segments",
        Index::open(&dir).unwrap().segments().len()
    );
    KillReport {
        committed_batches,
        kills_leaving_flushed,
    }
}
