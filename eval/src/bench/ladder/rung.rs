//! One rung: the open-loop load with every probe around it and progress on stderr.

use std::time::Duration;

use crate::bench::backend::Backend;
use crate::bench::loadgen::{LiveRung, Outcome, Progress, Schedule, run_open_loop};
use crate::bench::probe::{
    CpuReading, MemoryTrack, RusageDelta, Signals, SuspendClock, disturbances, load_average,
    measure,
};
use crate::bench::queries::QueryCycle;
use crate::bench::report::format::micros_or_dash;
use crate::bench::report::{LagSummary, RungHistograms, RungReport, Settings};
use crate::bench::stats::{LatencySummary, P50, P99};

/// What to run: one engine at one rate.
#[derive(Debug, Clone)]
pub struct RungSpec<'a> {
    pub engine: &'a str,
    /// Names the rung in progress lines (`rung 2/6 rep 1/3`, `calibration`).
    pub label: &'a str,
    pub repetition: usize,
    pub rung: usize,
    pub rate: f64,
    pub requests: u64,
    /// Seeds Poisson arrivals.
    pub seed: u64,
    /// A calibration rung (any shed request disturbs it).
    pub calibration: bool,
}

/// Runs one rung and reports it.
pub fn run_rung(
    backend: &dyn Backend,
    spec: &RungSpec<'_>,
    settings: &Settings,
    queries: &QueryCycle,
) -> RungReport {
    let schedule = Schedule::new(
        settings.arrivals,
        spec.rate,
        spec.requests as usize,
        spec.seed,
    );
    let live = LiveRung::new(settings.threads, settings.inflight, spec.requests);
    crate::note!(
        "bench: {} {} @ {}/s: {} requests",
        spec.engine,
        spec.label,
        spec.rate,
        spec.requests
    );
    let load_start = load_average();
    let server = backend.local_server();
    let cpu_start = CpuReading::now_with(server);
    // Starts the client's own clock over (warm-up and earlier rungs are not this rung).
    let _ = backend.take_client_time();
    let (outcome, probes) = measure(
        || crate::note!("bench: {}", progress_line(spec, &live.progress())),
        || run_open_loop(backend, &schedule, queries, settings.k, &live),
    );
    let cpu_end = CpuReading::now_with(server);
    let others_cpu = cpu_end.others_since(&cpu_start);
    let steal_cpu = cpu_end.steal_since(&cpu_start);
    let load_end = load_average();
    let mut report = rung_report(
        spec,
        &outcome,
        probes.process,
        probes.memory,
        probes.suspended,
    );
    report.client_us = backend.take_client_time().map(|h| LatencySummary::of(&h));
    if backend.issuer().is_some() {
        report.connects_in_latency = Some(outcome.completions.connected);
    }
    if backend.batch_limit() > 1 {
        report.batched = Some(outcome.completions.batched);
    }
    report.load_start = load_start;
    report.load_end = load_end;
    report.others_cpu = others_cpu;
    report.steal_cpu = steal_cpu;
    mark_disturbed(&mut report, &outcome, spec.calibration, settings);
    crate::note!(
        "bench: {} {} @ {}/s: done in {:.1} s, p50 {}, p99 {}, shed {}{}{}{}",
        spec.engine,
        spec.label,
        spec.rate,
        report.duration_secs,
        micros_or_dash(report.latency_us.p50),
        micros_or_dash(report.latency_us.p99),
        report.shed,
        match (report.connects_in_latency, report.batched) {
            (Some(n), _) if n > 0 => format!(", {n} opened a connection"),
            (_, Some(n)) => format!(", {n} encoded in batches"),
            _ => String::new(),
        },
        if report.overloaded {
            " (OVERLOADED)"
        } else {
            ""
        },
        if report.disturbed {
            format!(" DISTURBED: {}", report.disturbed_reasons.join("; "))
        } else {
            String::new()
        }
    );
    report
}

/// Judges the rung by its probes ([`disturbances`]) and records why it is disturbed.
pub(crate) fn mark_disturbed(
    report: &mut RungReport,
    outcome: &Outcome,
    calibration: bool,
    settings: &Settings,
) {
    let signals = Signals {
        lag_p99_us: outcome.dispatch.lag.nearest_rank(P99),
        latency_p50_us: outcome.completions.latency.nearest_rank(P50),
        max_lag_ratio: settings.lag_bound(),
        suspended: report.suspended_secs.map(Duration::from_secs_f64),
        others_cpu: report.others_cpu,
        max_others_cpu: settings.others_bound(),
        shed: report.shed,
        calibration,
    };
    report.disturbed_reasons = disturbances(&signals);
    report.disturbed = !report.disturbed_reasons.is_empty();
}

/// How far a rung's service CPU p50 may stray from its engine's other rungs' median and
/// still count as steady: a tenth.
pub const CPU_STEADY: f64 = 0.10;

/// Says, for each disturbed rung of one engine's run, whether its CPU time per request
/// was disturbed too: its service CPU p50 against the median of the engine's other
/// rungs' (undisturbed ones if there are any). The thread CPU clock leaves out the wait
/// for a core, which is what other processes, a late dispatcher and a suspend add; it
/// keeps what shared caches, a busy sibling hyperthread or a lower clock add, which this
/// comparison would show.
pub fn cpu_steadiness(rungs: &mut [RungReport]) {
    let p50 = |r: &RungReport| r.service_cpu_us.as_ref().and_then(|c| c.p50);
    let reference = |quiet: bool, skip: usize, rungs: &[RungReport]| -> Option<f64> {
        let v: Vec<f64> = rungs
            .iter()
            .enumerate()
            .filter(|&(i, r)| i != skip && (!quiet || !r.disturbed))
            .filter_map(|(_, r)| p50(r).map(|x| x as f64))
            .collect();
        crate::bench::stats::spread(&v).map(|s| s.median)
    };
    for i in 0..rungs.len() {
        if !rungs[i].disturbed {
            rungs[i].cpu_note = None;
            continue;
        }
        let Some(own) = p50(&rungs[i]) else {
            continue;
        };
        let (basis, median) = match reference(true, i, &*rungs) {
            Some(r) => ("undisturbed rungs", r),
            None => match reference(false, i, &*rungs) {
                Some(r) => ("other rungs", r),
                None => continue,
            },
        };
        let change = own as f64 / median - 1.0;
        rungs[i].cpu_note = Some(if change.abs() <= CPU_STEADY {
            format!(
                "latency disturbed, CPU time not: service CPU p50 {own}µs is within {:.0}% of                  the {basis}' {median:.0}µs",
                100.0 * CPU_STEADY
            )
        } else {
            format!(
                "CPU time disturbed too: service CPU p50 {own}µs is {:+.0}% from the {basis}'                  {median:.0}µs",
                100.0 * change
            )
        });
    }
}

/// The disturbances that bear on a calibration rung's one figure, the service time (a
/// worker's time per request): other processes' CPU, a suspend, a shed request. The
/// dispatcher's lag is charged to latency, not to service, so it is left out: on this
/// project's VMs the hypervisor's steal puts the lag p99 above the p50 at every rate,
/// and refusing on it refused every calibration (docs/PERF.md, rule 8).
pub(crate) fn service_disturbances(report: &RungReport, settings: &Settings) -> Vec<String> {
    disturbances(&Signals {
        lag_p99_us: None,
        latency_p50_us: None,
        max_lag_ratio: settings.lag_bound(),
        suspended: report.suspended_secs.map(Duration::from_secs_f64),
        others_cpu: report.others_cpu,
        max_others_cpu: settings.others_bound(),
        shed: report.shed,
        calibration: true,
    })
}

/// `heddle rung 2/6 rep 1/1 @ 100/s: 1234/2000 done, p50 1.2ms, p99 -, shed 0`
fn progress_line(spec: &RungSpec<'_>, p: &Progress) -> String {
    format!(
        "{} {} @ {}/s: {}",
        spec.engine,
        spec.label,
        spec.rate,
        p.line()
    )
}

/// Turns what a rung recorded into its report.
pub(crate) fn rung_report(
    spec: &RungSpec<'_>,
    outcome: &Outcome,
    process: RusageDelta,
    memory: MemoryTrack,
    suspended: Option<Duration>,
) -> RungReport {
    let c = &outcome.completions;
    let mut invalid_reasons = Vec::new();
    if let Some(s) = suspended.filter(|s| *s > SuspendClock::THRESHOLD) {
        invalid_reasons.push(format!("machine suspended for {:.1} s", s.as_secs_f64()));
    }
    if c.errors > 0 {
        invalid_reasons.push(format!(
            "{} requests failed (first: {})",
            c.errors,
            c.first_error.as_deref().unwrap_or("?")
        ));
    }
    RungReport {
        engine: spec.engine.to_string(),
        repetition: spec.repetition,
        rung: spec.rung,
        sequence: 0,
        offered_rate: spec.rate,
        achieved_rate: outcome.achieved_rate(),
        requests: outcome.requests,
        completed: outcome.completed(),
        shed: outcome.shed(),
        errors: c.errors,
        first_error: c.first_error.clone(),
        duration_secs: outcome.elapsed_ns as f64 / 1e9,
        overloaded: outcome.shed() > 0,
        valid: invalid_reasons.is_empty(),
        invalid_reasons,
        latency_us: LatencySummary::of(&c.latency),
        service_us: LatencySummary::of(&c.service),
        busy_us_per_request: (c.busy_ns > 0 && c.completed() > 0)
            .then(|| c.busy_ns as f64 / 1e3 / c.completed() as f64),
        service_cpu_us: (!c.cpu.is_empty()).then(|| LatencySummary::of(&c.cpu)),
        cpu_note: None,
        dispatcher_lag_us: LagSummary {
            p99: outcome.dispatch.lag.reported(P99),
            max: outcome.dispatch.lag.max_micros(),
        },
        client_us: None,
        server_us: (!c.server.is_empty()).then(|| LatencySummary::of(&c.server)),
        added_us: (!c.added.is_empty()).then(|| LatencySummary::of(&c.added)),
        encode_us: (!c.encode.is_empty()).then(|| LatencySummary::of(&c.encode)),
        search_us: (!c.search.is_empty()).then(|| LatencySummary::of(&c.search)),
        text_us: (!c.text.is_empty()).then(|| LatencySummary::of(&c.text)),
        vector_us: (!c.vector.is_empty()).then(|| LatencySummary::of(&c.vector)),
        fusion_us: (!c.fusion.is_empty()).then(|| LatencySummary::of(&c.fusion)),
        server_clock: c.server_clock.map(|k| k.describe().to_string()),
        connects_in_latency: None,
        batched: None,
        process,
        memory,
        suspended_secs: suspended.map(|s| s.as_secs_f64()),
        load_start: None,
        load_end: None,
        others_cpu: None,
        steal_cpu: None,
        disturbed: false,
        disturbed_reasons: Vec::new(),
        histograms: RungHistograms {
            latency: c.latency.dump(),
            service: c.service.dump(),
            dispatcher_lag: outcome.dispatch.lag.dump(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::loadgen::{CompletionTally, DispatchTally};
    use crate::bench::stats::LatencySummary;

    fn rung(disturbed: bool, cpu_p50: Option<u64>) -> RungReport {
        let spec = RungSpec {
            engine: "e",
            label: "r",
            repetition: 0,
            rung: 0,
            rate: 100.0,
            requests: 1,
            seed: 0,
            calibration: false,
        };
        let outcome = Outcome::new(1, CompletionTally::default(), DispatchTally::default());
        let mut r = rung_report(
            &spec,
            &outcome,
            RusageDelta::default(),
            MemoryTrack::default(),
            None,
        );
        r.disturbed = disturbed;
        r.service_cpu_us = cpu_p50.map(|p| LatencySummary {
            count: 10_000,
            mean: Some(p as f64),
            p50: Some(p),
            p90: None,
            p99: None,
            p999: None,
            max: Some(p),
        });
        r
    }

    #[test]
    fn a_disturbed_rung_says_whether_its_cpu_time_was_disturbed_too() {
        let mut rungs = vec![
            rung(false, Some(400)),
            rung(true, Some(430)),
            rung(false, Some(410)),
            rung(true, Some(520)),
        ];
        cpu_steadiness(&mut rungs);
        assert_eq!(rungs[0].cpu_note, None, "an undisturbed rung needs no note");
        let steady = rungs[1].cpu_note.as_deref().unwrap();
        assert!(
            steady.starts_with("latency disturbed, CPU time not") && steady.contains("400µs"),
            "{steady}"
        );
        // 520 against the undisturbed rungs' median 400: +30%.
        let moved = rungs[3].cpu_note.as_deref().unwrap();
        assert!(
            moved.starts_with("CPU time disturbed too") && moved.contains("+30%"),
            "{moved}"
        );
        // Every rung disturbed: judged against the others.
        let mut all = vec![
            rung(true, Some(400)),
            rung(true, Some(405)),
            rung(true, Some(800)),
        ];
        cpu_steadiness(&mut all);
        assert!(all[0].cpu_note.as_deref().unwrap().contains("other rungs"));
        assert!(
            all[2]
                .cpu_note
                .as_deref()
                .unwrap()
                .starts_with("CPU time disturbed too")
        );
        // Without CPU time (an async client), nothing is said.
        let mut none = vec![rung(true, None), rung(false, None)];
        cpu_steadiness(&mut none);
        assert!(none.iter().all(|r| r.cpu_note.is_none()));
    }
}
