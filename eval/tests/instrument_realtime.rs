//! The real, threaded dispatcher against synthetic backends on the real clock. Sleeps
//! only ever overshoot, so lower bounds are exact; upper bounds are generous because a
//! shared 2-core CI machine can be late by milliseconds. The exact shed test does not
//! depend on timing at all: its backend holds every request until the count is in.

use std::sync::{Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use heddle_eval::bench::Backend;
use heddle_eval::bench::backend::synthetic::{ServiceModel, Synthetic};
use heddle_eval::bench::loadgen::closed::run_closed_loop;
use heddle_eval::bench::loadgen::{Arrivals, LiveRung, Schedule, run_open_loop};
use heddle_eval::bench::queries::QueryCycle;
use heddle_eval::bench::stats::LatencySummary;

const MS: u64 = 1_000;

/// Timing tests take turns: on two cores, two of them sleeping and waking at once would
/// measure each other.
static TIMING: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    TIMING.lock().unwrap_or_else(|e| e.into_inner())
}

fn queries() -> QueryCycle {
    QueryCycle::new(vec!["covid transmission".to_string()], 0)
}

#[test]
fn at_low_utilisation_the_real_p50_is_the_service_time() {
    let _turn = one_at_a_time();
    // 2 ms sleeps, 200/s on 2 workers: 20% utilisation, and with uniform arrivals 5 ms
    // apart nothing queues. Tolerance: p50 within [2 ms, 3.5 ms] (wake-up and hand-off
    // on a busy machine), service time within [2 ms, 3 ms].
    let backend = Synthetic::new(ServiceModel::constant(Duration::from_millis(2)));
    let schedule = Schedule::new(Arrivals::Uniform, 200.0, 300, 0);
    let live = LiveRung::new(2, 8, 300);
    let out = run_open_loop(&backend, &schedule, &queries(), 10, &live);
    let lat = LatencySummary::of(&out.completions.latency);
    let svc = LatencySummary::of(&out.completions.service);
    let p50 = lat.p50.expect("300 samples report p50");
    assert!((2 * MS..=3_500).contains(&p50), "p50 {p50} µs");
    let s50 = svc.p50.unwrap();
    assert!((2 * MS..=3 * MS).contains(&s50), "service p50 {s50} µs");
    assert_eq!((out.completed(), out.shed(), out.requests), (300, 0, 300));
    assert!(
        (out.achieved_rate() / 200.0 - 1.0).abs() < 0.1,
        "{}",
        out.achieved_rate()
    );
    assert!(out.dispatch.lag.max_micros().is_some());
}

#[test]
fn latency_runs_from_the_due_time_not_from_the_start() {
    let _turn = one_at_a_time();
    // One worker, 5 ms per request, 10 requests due 1 ms apart: request i starts after
    // the i before it, so it completes no earlier than 5(i+1) ms and its latency is at
    // least 4i + 5 ms — 41 ms for the last. Its service time stays 5 ms.
    let backend = Synthetic::new(ServiceModel::constant(Duration::from_millis(5)));
    let schedule = Schedule::new(Arrivals::Uniform, 1_000.0, 10, 0);
    let live = LiveRung::new(1, 100, 10);
    let out = run_open_loop(&backend, &schedule, &queries(), 10, &live);
    let max = out.completions.latency.max_micros().unwrap();
    assert!((41 * MS..=150 * MS).contains(&max), "max latency {max} µs");
    assert!(out.completions.service.max_micros().unwrap() < 30 * MS);
}

#[test]
fn a_real_stall_fills_the_open_loop_tail_and_the_closed_loop_hides_it() {
    let _turn = one_at_a_time();
    // 400/s, 0.5 ms service on one worker (ρ ≈ 0.2), a 250 ms stall 300 ms in. Theory:
    // 400 × (250 + 0.5 − 100) ms / (1 − ρ) ≈ 75 requests over 100 ms. Accept 50–110
    // (service time stretches on a loaded machine); the closed loop must show at most
    // 3 (one, plus any machine hiccup of 100 ms).
    let model = ServiceModel::constant(Duration::from_micros(500))
        .with_stall(Duration::from_millis(300), Duration::from_millis(250));
    let schedule = Schedule::new(Arrivals::Uniform, 400.0, 600, 0);
    let live = LiveRung::new(1, 10_000, 600);
    let open = run_open_loop(&Synthetic::new(model), &schedule, &queries(), 10, &live);
    let open_slow = open.completions.latency.count_above(100 * MS);
    assert_eq!(open.shed(), 0);

    let closed = run_closed_loop(&Synthetic::new(model), &schedule, &queries(), 10, 1);
    let closed_slow = closed.completions.latency.count_above(100 * MS);
    assert!(
        (50..=110).contains(&open_slow),
        "open loop: {open_slow} over 100 ms"
    );
    assert!(
        (1..=3).contains(&closed_slow),
        "closed loop: {closed_slow} over 100 ms"
    );
}

/// A backend that holds every request until the test opens the gate.
struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl Backend for Gate {
    fn search(&self, _query: &str, _k: usize) -> anyhow::Result<Vec<String>> {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.cv.wait(open).unwrap();
        }
        Ok(vec!["d1".to_string()])
    }
}

#[test]
fn real_shedding_is_exact_whatever_the_timing() {
    // Nothing finishes until all 50 requests are due, so exactly `inflight` = 5 are
    // admitted (2 executing, 3 queued) and 45 are shed.
    let gate = Gate {
        open: Mutex::new(false),
        cv: Condvar::new(),
    };
    let schedule = Schedule::new(Arrivals::Uniform, 1_000.0, 50, 0);
    let live = LiveRung::new(2, 5, 50);
    let q = queries();
    let out = thread::scope(|s| {
        let run = s.spawn(|| run_open_loop(&gate, &schedule, &q, 10, &live));
        let deadline = Instant::now() + Duration::from_secs(30);
        while live.progress().issued < 50 {
            assert!(
                Instant::now() < deadline,
                "dispatcher stuck: {:?}",
                live.progress().issued
            );
            thread::sleep(Duration::from_millis(2));
        }
        *gate.open.lock().unwrap() = true;
        gate.cv.notify_all();
        run.join().unwrap()
    });
    assert_eq!(out.shed(), 45);
    assert_eq!(out.completed(), 5);
    assert_eq!(out.dispatch.issued, 50);
}
