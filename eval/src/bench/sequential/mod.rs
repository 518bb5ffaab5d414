//! The sequential pass: one query after another on one thread (a closed loop, on
//! purpose), pass by pass over the query set, the engines alternating pass by pass
//! (A B A B …) so that drift of the machine falls on both.
//!
//! This is the latency of a query on an otherwise idle engine with hot caches — the
//! figure most benchmarks quote. It is not a load measurement (the open-loop ladder is);
//! it is reported beside it because it is the easiest to compare with other work. The
//! latencies go into the instrument's histograms, so quantiles obey the same rule: each
//! is printed only with 100 samples beyond it. [`per_query`] digests it query by query.

pub mod per_query;

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::bench::Backend;
use crate::bench::loadgen::cpu::on_this_thread;
use crate::bench::queries::QueryCycle;
use crate::bench::report::format::{micros, micros_or_dash};
use crate::bench::stats::{LatencyHistogram, LatencySummary, Spread, spread};

/// One engine's sequential figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SequentialReport {
    pub engine: String,
    pub passes: u64,
    pub queries_per_pass: usize,
    pub errors: u64,
    /// Every query of every pass, µs.
    pub latency_us: LatencySummary,
    /// The thread's CPU time on every query of every pass, µs (absent where the clock
    /// is not available).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us: Option<LatencySummary>,
    /// Each pass's mean latency, µs: median, min and max over passes (the drift).
    pub pass_mean_us: Option<Spread<f64>>,
    /// Each query's median over the passes, µs (`None` if every run of it failed), in
    /// the query set's order; digested by `per_query`, not written out whole.
    #[serde(skip)]
    pub per_query_median_us: Vec<Option<f64>>,
    /// Each query's median CPU time over the passes, µs, as `per_query_median_us`.
    #[serde(skip)]
    pub per_query_cpu_median_us: Vec<Option<f64>>,
}

/// Passes needed for `samples` queries (at least one).
pub fn passes_for(samples: u64, queries: usize) -> u64 {
    samples.div_ceil(queries.max(1) as u64).max(1)
}

/// Runs `passes` passes of every query for each engine, alternating engines pass by pass.
pub fn run_sequential(
    engines: &[(&str, &dyn Backend)],
    queries: &QueryCycle,
    passes: u64,
    k: usize,
) -> Vec<SequentialReport> {
    let n = queries.len();
    let mut hist: Vec<LatencyHistogram> = engines.iter().map(|_| LatencyHistogram::new()).collect();
    let mut cpu: Vec<LatencyHistogram> = engines.iter().map(|_| LatencyHistogram::new()).collect();
    let mut means: Vec<Vec<f64>> = vec![Vec::new(); engines.len()];
    let mut errors = vec![0u64; engines.len()];
    // [engine][query]: that query's latency in each pass, µs.
    let mut per_query: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); n]; engines.len()];
    let mut per_query_cpu: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); n]; engines.len()];
    let started = Instant::now();
    let mut last_line = started;
    for pass in 0..passes {
        if last_line.elapsed() >= Duration::from_secs(4) {
            last_line = Instant::now();
            crate::note!(
                "sequential: pass {pass}/{passes} ({:.0} s)",
                started.elapsed().as_secs_f64()
            );
        }
        for (e, &(_, backend)) in engines.iter().enumerate() {
            let mut total_ns = 0u64;
            for i in 0..n as u64 {
                let t = Instant::now();
                let (result, cpu_ns) = on_this_thread(|| backend.search(queries.get(i), k));
                let ns = t.elapsed().as_nanos() as u64;
                if result.is_ok() {
                    hist[e].record_nanos(ns);
                    total_ns += ns;
                    per_query[e][i as usize].push(ns as f64 / 1_000.0);
                    if let Some(c) = cpu_ns {
                        cpu[e].record_nanos(c);
                        per_query_cpu[e][i as usize].push(c as f64 / 1_000.0);
                    }
                } else {
                    errors[e] += 1;
                }
            }
            means[e].push(total_ns as f64 / 1_000.0 / n.max(1) as f64);
        }
    }
    engines
        .iter()
        .enumerate()
        .map(|(e, &(name, _))| SequentialReport {
            engine: name.to_string(),
            passes,
            queries_per_pass: n,
            errors: errors[e],
            latency_us: LatencySummary::of(&hist[e]),
            cpu_us: (!cpu[e].is_empty()).then(|| LatencySummary::of(&cpu[e])),
            pass_mean_us: spread(&means[e]),
            per_query_median_us: per_query[e].iter().map(|v| per_query::median(v)).collect(),
            per_query_cpu_median_us: per_query_cpu[e]
                .iter()
                .map(|v| per_query::median(v))
                .collect(),
        })
        .collect()
}

/// One line per engine: its passes, quantiles and the drift of its pass means.
pub fn render(reports: &[SequentialReport]) -> String {
    let mut out = String::new();
    for r in reports {
        out.push_str(&format!(
            "sequential {}: {} passes × {} queries, p50 {}, p90 {}, p99 {}, max {}; pass means {}{}{}\n",
            r.engine,
            r.passes,
            r.queries_per_pass,
            micros_or_dash(r.latency_us.p50),
            micros_or_dash(r.latency_us.p90),
            micros_or_dash(r.latency_us.p99),
            micros_or_dash(r.latency_us.max),
            r.pass_mean_us.map_or("-".to_string(), |s| format!(
                "{} [{}–{}]",
                micros(s.median.round() as u64),
                micros(s.min.round() as u64),
                micros(s.max.round() as u64)
            )),
            if r.errors > 0 {
                format!(", {} FAILED", r.errors)
            } else {
                String::new()
            },
            r.cpu_us.as_ref().map_or(String::new(), |c| format!(
                "; CPU p50 {}, p90 {}, p99 {}",
                micros_or_dash(c.p50),
                micros_or_dash(c.p90),
                micros_or_dash(c.p99)
            ))
        ));
    }
    // Within 100 columns: a long line goes on, indented, on the next.
    out.lines()
        .flat_map(crate::env::render::wrap)
        .map(|l| l + "\n")
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Records the order in which engines were asked.
    struct Logging<'a> {
        name: &'static str,
        log: &'a Mutex<Vec<&'static str>>,
    }

    impl Backend for Logging<'_> {
        fn search(&self, _query: &str, _k: usize) -> anyhow::Result<Vec<String>> {
            self.log.lock().unwrap().push(self.name);
            Ok(Vec::new())
        }
    }

    #[test]
    fn engines_alternate_pass_by_pass_and_every_query_is_timed() {
        let log = Mutex::new(Vec::new());
        let a = Logging {
            name: "a",
            log: &log,
        };
        let b = Logging {
            name: "b",
            log: &log,
        };
        let queries = QueryCycle::new(vec!["x".into(), "y".into(), "z".into()], 1);
        let reports = run_sequential(&[("a", &a), ("b", &b)], &queries, 2, 10);
        let log = log.into_inner().unwrap();
        assert_eq!(
            log,
            ["a", "a", "a", "b", "b", "b", "a", "a", "a", "b", "b", "b"]
        );
        assert_eq!(reports[0].latency_us.count, 6);
        assert_eq!(reports[1].passes, 2);
        assert!(reports[0].latency_us.p50.is_none(), "6 samples: no p50");
        assert!(reports[0].latency_us.max.is_some());
    }

    #[test]
    fn passes_cover_the_samples() {
        assert_eq!(passes_for(10_000, 50), 200);
        assert_eq!(passes_for(10_001, 50), 201);
        assert_eq!(passes_for(0, 50), 1);
    }
}
