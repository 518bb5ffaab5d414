//! The warm-up pass: queries one after another right after the index is opened, so that
//! the first rung does not pay for page faults and cold caches — reported on its own.

use std::time::{Duration, Instant};

use crate::bench::backend::Backend;
use crate::bench::probe::{MemoryStatus, MemoryTrack, Rusage};
use crate::bench::queries::QueryCycle;
use crate::bench::report::WarmupReport;
use crate::bench::stats::{LatencyHistogram, LatencySummary};

/// How many of the first latencies are kept one by one.
const FIRST: usize = 10;
/// A progress line at least this often, as during rungs.
const PROGRESS_EVERY: Duration = Duration::from_secs(4);

/// Runs `n` queries of the cycle sequentially. This is a closed loop on purpose: it
/// measures a cold start, not behaviour under load, and nothing is derived from it
/// except the rate of the first calibration attempt.
pub fn warm_up(backend: &dyn Backend, queries: &QueryCycle, n: u64, k: usize) -> WarmupReport {
    let rusage = Rusage::now();
    let mut memory = MemoryTrack::starting_at(MemoryStatus::now());
    let started = Instant::now();
    let mut latency = LatencyHistogram::new();
    let mut first = Vec::with_capacity(FIRST);
    let mut errors = 0;
    let mut last_line = started;
    for i in 0..n {
        if last_line.elapsed() >= PROGRESS_EVERY {
            last_line = Instant::now();
            crate::note!("bench: warm-up {i}/{n} queries");
        }
        let t = Instant::now();
        let ok = backend.search(queries.get(i), k).is_ok();
        let ns = t.elapsed().as_nanos() as u64;
        if !ok {
            errors += 1;
            continue;
        }
        latency.record_nanos(ns);
        if first.len() < FIRST {
            first.push(ns.div_ceil(1_000));
        }
    }
    memory.observe(MemoryStatus::now());
    WarmupReport {
        queries: n,
        errors,
        first_latencies_us: first,
        latency_us: LatencySummary::of(&latency),
        duration_secs: started.elapsed().as_secs_f64(),
        process: Rusage::now().since(&rusage),
        memory,
    }
}

/// What the first query's error says, for a warm-up in which every query failed: the
/// cause (an index without vectors for the vector arm, a server refusing the query)
/// belongs in the message, not only the count.
pub fn first_error(backend: &dyn Backend, queries: &QueryCycle, k: usize) -> String {
    match backend.search(queries.get(0), k) {
        Err(e) => format!("{e:#}"),
        Ok(_) => "the first query succeeds when asked again".to_string(),
    }
}
