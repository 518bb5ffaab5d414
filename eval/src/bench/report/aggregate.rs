//! Repetitions folded into one summary per engine and rung.

use super::model::{RungReport, RungSummary};
use crate::bench::stats::{spread, spread_all};

/// Summaries of `rungs` (any order), one per engine and rung, ordered by engine as first
/// seen and then by rung.
pub fn summarise(rungs: &[RungReport]) -> Vec<RungSummary> {
    let mut keys: Vec<(&str, usize)> = Vec::new();
    for r in rungs {
        if !keys.contains(&(r.engine.as_str(), r.rung)) {
            keys.push((&r.engine, r.rung));
        }
    }
    let engine_order = |e: &str| rungs.iter().position(|r| r.engine == e);
    keys.sort_by_key(|&(e, rung)| (engine_order(e), rung));
    keys.into_iter()
        .map(|(engine, rung)| {
            let reps: Vec<&RungReport> = rungs
                .iter()
                .filter(|r| r.engine == engine && r.rung == rung)
                .collect();
            summarise_one(&reps)
        })
        .collect()
}

fn summarise_one(reps: &[&RungReport]) -> RungSummary {
    let f = |get: fn(&RungReport) -> f64| {
        spread(&reps.iter().map(|r| get(r)).collect::<Vec<_>>()).expect("at least one repetition")
    };
    let u = |get: fn(&RungReport) -> u64| {
        spread(&reps.iter().map(|r| get(r)).collect::<Vec<_>>()).expect("at least one repetition")
    };
    let o = |get: fn(&RungReport) -> Option<u64>| {
        spread_all(&reps.iter().map(|r| get(r)).collect::<Vec<_>>())
    };
    let first = reps[0];
    RungSummary {
        engine: first.engine.clone(),
        rung: first.rung,
        offered_rate: first.offered_rate,
        repetitions: reps.len(),
        overloaded: reps.iter().any(|r| r.overloaded),
        valid: reps.iter().all(|r| r.valid),
        disturbed: reps.iter().any(|r| r.disturbed),
        achieved_rate: f(|r| r.achieved_rate),
        requests: u(|r| r.requests),
        shed: u(|r| r.shed),
        duration_secs: f(|r| r.duration_secs),
        p50_us: o(|r| r.latency_us.p50),
        p90_us: o(|r| r.latency_us.p90),
        p99_us: o(|r| r.latency_us.p99),
        p999_us: o(|r| r.latency_us.p999),
        max_us: o(|r| r.latency_us.max),
        cpu_user_secs: f(|r| r.process.user_secs),
        cpu_system_secs: f(|r| r.process.system_secs),
        rss_peak_kib: o(|r| r.memory.vm_rss.map(|t| t.peak)),
        rss_change_kib: spread_all(
            &reps
                .iter()
                .map(|r| r.memory.vm_rss.map(|t| t.change))
                .collect::<Vec<_>>(),
        ),
        rss_anon_peak_kib: o(|r| r.memory.rss_anon.map(|t| t.peak)),
        rss_file_peak_kib: o(|r| r.memory.rss_file.map(|t| t.peak)),
        minor_faults: u(|r| r.process.minor_faults),
        major_faults: u(|r| r.process.major_faults),
        voluntary_switches: u(|r| r.process.voluntary_switches),
        involuntary_switches: u(|r| r.process.involuntary_switches),
        lag_p99_us: o(|r| r.dispatcher_lag_us.p99),
        lag_max_us: o(|r| r.dispatcher_lag_us.max),
        cpu_p50_us: o(|r| r.service_cpu_us.as_ref().and_then(|c| c.p50)),
        cpu_p90_us: o(|r| r.service_cpu_us.as_ref().and_then(|c| c.p90)),
        cpu_p99_us: o(|r| r.service_cpu_us.as_ref().and_then(|c| c.p99)),
        client_p50_us: o(|r| r.client_us.as_ref().and_then(|c| c.p50)),
        client_p99_us: o(|r| r.client_us.as_ref().and_then(|c| c.p99)),
        server_p50_us: o(|r| r.server_us.as_ref().and_then(|c| c.p50)),
        server_p99_us: o(|r| r.server_us.as_ref().and_then(|c| c.p99)),
        added_p50_us: o(|r| r.added_us.as_ref().and_then(|c| c.p50)),
        added_p99_us: o(|r| r.added_us.as_ref().and_then(|c| c.p99)),
        encode_p50_us: o(|r| r.encode_us.as_ref().and_then(|c| c.p50)),
        encode_p99_us: o(|r| r.encode_us.as_ref().and_then(|c| c.p99)),
        search_p50_us: o(|r| r.search_us.as_ref().and_then(|c| c.p50)),
        search_p99_us: o(|r| r.search_us.as_ref().and_then(|c| c.p99)),
        text_p50_us: o(|r| r.text_us.as_ref().and_then(|c| c.p50)),
        text_p99_us: o(|r| r.text_us.as_ref().and_then(|c| c.p99)),
        vector_p50_us: o(|r| r.vector_us.as_ref().and_then(|c| c.p50)),
        vector_p99_us: o(|r| r.vector_us.as_ref().and_then(|c| c.p99)),
        fusion_p50_us: o(|r| r.fusion_us.as_ref().and_then(|c| c.p50)),
        fusion_p99_us: o(|r| r.fusion_us.as_ref().and_then(|c| c.p99)),
        batched: o(|r| r.batched),
        // The coarser clock (Elasticsearch's took) if any repetition had it.
        server_clock: reps
            .iter()
            .filter_map(|r| r.server_clock.clone())
            .reduce(|a, b| if b.starts_with("took") { b } else { a }),
    }
}
