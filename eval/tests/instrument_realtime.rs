//! The real, threaded dispatcher against synthetic backends on the real clock.
//!
//! Sleeps only ever overshoot, so every lower bound here is exact on any machine, however
//! busy, and so are the checks made request by request from a rung's log. Upper bounds
//! are not: a shared 2-core CI machine can wake a thread late by milliseconds, or by tens
//! of them when loaded. So a test with an upper bound measures the machine while it runs
//! — a thread beside it that sleeps 1 ms at a time and records how late it wakes
//! ([`with_noise`]), and the dispatcher's lag and the workers' oversleep that the run
//! records itself (the sampler alone misses delays that hit only the rung's threads) —
//! widens the bound by what it measured, and where the delay is too large to tell the
//! property from it, says so on stderr ("SKIPPED ...", shown by `-- --nocapture`) and
//! skips that bound only. On a quiet machine every bound is asserted, so the tests still
//! fail when the instrument is broken. The exact shed test does not depend on timing at
//! all: its backend holds every request until the count is in.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use heddle_eval::bench::Backend;
use heddle_eval::bench::backend::synthetic::{ServiceModel, Synthetic};
use heddle_eval::bench::loadgen::closed::run_closed_loop;
use heddle_eval::bench::loadgen::{
    Arrivals, LiveRung, Outcome, Schedule, open_loop_origin, run_open_loop, run_open_loop_from,
};
use heddle_eval::bench::queries::QueryCycle;
use heddle_eval::bench::stats::{LatencyHistogram, LatencySummary, P50};

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

/// How late this machine woke a sleeping thread while a test ran, in microseconds.
struct Noise {
    oversleep: LatencyHistogram,
}

impl Noise {
    /// The worst oversleep of a 1 ms sleep.
    fn worst(&self) -> u64 {
        self.oversleep.max_micros().unwrap_or(0)
    }

    /// The median oversleep: how late a typical wake-up was.
    fn median(&self) -> u64 {
        self.oversleep.nearest_rank(P50).unwrap_or(0)
    }

    fn describe(&self) -> String {
        format!(
            "{} wake-ups, median {} µs late, worst {} µs",
            self.oversleep.len(),
            self.median(),
            self.worst()
        )
    }
}

/// Runs `f` while a thread beside it sleeps 1 ms at a time and records how late it wakes:
/// the machine's own scheduling delay, measured during the test rather than assumed.
fn with_noise<T>(f: impl FnOnce() -> T) -> (T, Noise) {
    let stop = AtomicBool::new(false);
    thread::scope(|s| {
        let sampler = s.spawn(|| {
            let mut oversleep = LatencyHistogram::new();
            while !stop.load(Ordering::Relaxed) {
                let t = Instant::now();
                thread::sleep(Duration::from_millis(1));
                let late = t.elapsed().saturating_sub(Duration::from_millis(1));
                oversleep.record_nanos(late.as_nanos() as u64);
            }
            oversleep
        });
        let out = f();
        stop.store(true, Ordering::Relaxed);
        let oversleep = sampler.join().expect("the noise sampler panicked");
        (out, Noise { oversleep })
    })
}

/// Says on stderr which check a test skipped and why; the rest of the test still runs.
fn skip(test: &str, what: &str, why: String) {
    eprintln!("{test}: SKIPPED {what}: {why}");
}

#[test]
fn at_low_utilisation_the_real_p50_is_the_service_time() {
    const TEST: &str = "at_low_utilisation_the_real_p50_is_the_service_time";
    let _turn = one_at_a_time();
    // 2 ms sleeps, 200/s on 2 workers: 20% utilisation, and with uniform arrivals 5 ms
    // apart nothing queues. The in-flight cap is one no machine delay reaches: this test
    // is not about shedding. Exact: p50 and service p50 are at least 2 ms.
    let backend = Synthetic::new(ServiceModel::constant(Duration::from_millis(2)));
    let schedule = Schedule::new(Arrivals::Uniform, 200.0, 300, 0);
    let live = LiveRung::new(2, 10_000, 300);
    let (out, noise) = with_noise(|| run_open_loop(&backend, &schedule, &queries(), 10, &live));
    let lat = LatencySummary::of(&out.completions.latency);
    let svc = LatencySummary::of(&out.completions.service);
    let p50 = lat.p50.expect("300 samples report p50");
    let s50 = svc.p50.unwrap();
    let lag50 = out.dispatch.lag.nearest_rank(P50).expect("300 issues");
    eprintln!(
        "{TEST}: p50 {p50} µs, service p50 {s50} µs, dispatcher lag p50 {lag50} µs; \
         machine: {}",
        noise.describe()
    );
    assert!(p50 >= 2 * MS, "p50 {p50} µs");
    assert!(s50 >= 2 * MS, "service p50 {s50} µs");
    assert_eq!((out.completed(), out.shed(), out.requests), (300, 0, 300));

    // A request wakes three threads: the dispatcher at its due time, a worker, and the
    // worker again at the end of its sleep. The typical wake-up delay is the largest of
    // the workers' median oversleep, the dispatcher's median lag and the sampler's median
    // oversleep; on a quiet machine it is well under 0.1 ms and p50 is within 1.5 ms of
    // the service time. Past 1 ms the workers are busy long enough for requests to queue
    // behind each other, p50 is no longer the service time, and the bound is skipped. (A
    // dispatcher late by itself would be skipped too, as a busy machine: its lag is in
    // every report, as the instrument's health.)
    let typical = (s50 - 2 * MS).max(lag50).max(noise.median());
    if typical > MS {
        let why = format!("a typical wake-up was {typical} µs late (over 1 ms)");
        skip(TEST, "the p50 upper bound", why);
    } else {
        let p50_max = 3_500 + 3 * typical;
        assert!(p50 <= p50_max, "p50 {p50} µs over {p50_max} µs");
    }
    // 1.5 s of requests: the rate is off by 10% only if the end is 150 ms late.
    if noise.worst() > 50 * MS {
        let why = format!("a wake-up was {} µs late", noise.worst());
        skip(TEST, "the achieved rate", why);
    } else {
        let rate = out.achieved_rate();
        assert!((rate / 200.0 - 1.0).abs() < 0.1, "achieved rate {rate}/s");
    }
}

#[test]
fn latency_runs_from_the_due_time_not_from_the_start() {
    let _turn = one_at_a_time();
    // One worker, 5 ms per request, 10 requests due 1 ms apart: request i starts after
    // the i before it, so it completes no earlier than 5(i+1) ms and its latency is at
    // least 4i + 5 ms — 41 ms for the last — on any machine, as sleeps only overshoot.
    // Timed from its start it would be 5 ms plus the machine's delay.
    let backend = Synthetic::new(ServiceModel::constant(Duration::from_millis(5)));
    let schedule = Schedule::new(Arrivals::Uniform, 1_000.0, 10, 0);
    let live = LiveRung::logged(1, 100, 10);
    let out = run_open_loop(&backend, &schedule, &queries(), 10, &live);
    let max = out.completions.latency.max_micros().unwrap();
    assert!(max >= 41 * MS, "max latency {max} µs");

    // How late the machine ran the requests does not matter to the rest either: request
    // by request, the latency recorded is completion minus the time the schedule made it
    // due (not its issue, not its start), and the service time is completion minus start.
    // This is exact, so the test needs no upper bound on the real clock.
    let log = out.completions.log.as_ref().expect("a logged rung");
    assert_eq!(log.len(), 10);
    let (mut from_due, mut from_start) = (LatencyHistogram::new(), LatencyHistogram::new());
    for r in log {
        assert_eq!(r.due_ns, schedule.due_ns()[r.index as usize], "{r:?}");
        assert!(r.due_ns <= r.start_ns && r.start_ns <= r.done_ns, "{r:?}");
        from_due.record_nanos(r.done_ns - r.due_ns);
        from_start.record_nanos(r.done_ns - r.start_ns);
    }
    assert_eq!(out.completions.latency.dump(), from_due.dump(), "latency");
    assert_eq!(out.completions.service.dump(), from_start.dump(), "service");
}

#[test]
fn a_real_stall_fills_the_open_loop_tail_and_the_closed_loop_hides_it() {
    const TEST: &str = "a_real_stall_fills_the_open_loop_tail_and_the_closed_loop_hides_it";
    let _turn = one_at_a_time();
    // 200/s for 1 s, 0.5 ms service on one worker (ρ ≈ 0.1), a 300 ms stall from 200 ms
    // on the rung's own clock, and "slow" is over T = 100 ms. Exact: every request due in
    // the stall's first 200 ms (at 200, 205, ..., 400 ms: 41 of them) waits for its end,
    // so at least 41 are slow on any machine; a loop that timed from the start of service
    // would show one.
    const RATE: f64 = 200.0;
    const SLOW: u64 = 100 * MS;
    let (at, len) = (Duration::from_millis(200), Duration::from_millis(300));
    let model = ServiceModel::constant(Duration::from_micros(500)).with_stall(at, len);
    let schedule = Schedule::new(Arrivals::Uniform, RATE, 200, 0);

    let origin = open_loop_origin();
    let backend = Synthetic::with_epoch(model, origin);
    let live = LiveRung::new(1, 10_000, 200);
    let (open, noise) =
        with_noise(|| run_open_loop_from(&backend, &schedule, &queries(), 10, &live, origin));
    let open_slow = open.completions.latency.count_above(SLOW);
    // Theory: the backlog drains at 1 − ρ, so λ (L − T) / (1 − ρ) ≈ 45 requests are slow.
    // ρ comes from the service times measured in this run (the stalled request left out),
    // so a machine that stretches every 0.5 ms sleep is accounted for; a wake-up up to
    // `late` behind moves the crossing by at most about 2 late / (1 − ρ) of due time.
    let svc = &open.completions.service;
    let n = svc.len() as f64;
    let svc_max = svc.max_micros().unwrap() as f64;
    let typical_svc = (svc.mean_micros().unwrap() * n - svc_max) / (n - 1.0);
    let rho = RATE * typical_svc / 1e6;
    let late = noise.worst().max(open.dispatch.lag.max_micros().unwrap());
    let excess_s = len.as_secs_f64() - SLOW as f64 / 1e6 + 2.0 * late as f64 / 1e6;
    let bound = (1.25 * RATE * excess_s / (1.0 - rho)).ceil() as u64 + 3;
    eprintln!(
        "{TEST}: open loop: {open_slow} over 100 ms (at least 41, theory at most {bound}), \
         service {typical_svc:.0} µs (ρ {rho:.2}); machine: {}",
        noise.describe()
    );
    assert_eq!(open.shed(), 0);
    assert!(open_slow >= 41, "open loop: {open_slow} over 100 ms");
    // At ρ 0.5 or a wake-up 50 ms late the bound reaches the 160 requests due from the
    // stall on: it could no longer tell a backlog that drains from one that never does.
    if rho > 0.5 || late > SLOW / 2 {
        let why = format!(
            "the machine stretched a 0.5 ms service to {typical_svc:.0} µs (ρ {rho:.2}) \
             and woke a thread {late} µs late: the drain after the stall measures the machine"
        );
        skip(TEST, "the open loop's upper bound", why);
    } else {
        assert!(
            open_slow <= bound,
            "open loop: {open_slow} over 100 ms, theory at most {bound} \
             (ρ {rho:.2}, wake-ups up to {late} µs late)"
        );
    }

    // The closed loop sends the next request only when the last returns and times it from
    // the send: the stall shows as the one request caught in it. More are slow only if the
    // machine holds a thread for most of 100 ms; then the count is skipped.
    let backend = Synthetic::new(model);
    let (closed, noise) = with_noise(|| run_closed_loop(&backend, &schedule, &queries(), 10, 1));
    let closed_slow = closed.completions.latency.count_above(SLOW);
    eprintln!(
        "{TEST}: closed loop: {closed_slow} over 100 ms; machine: {}",
        noise.describe()
    );
    if noise.worst() > SLOW / 2 {
        let why = format!("a wake-up was {} µs late", noise.worst());
        skip(TEST, "the closed loop's count", why);
    } else {
        assert!(
            (1..=3).contains(&closed_slow),
            "closed loop: {closed_slow} over 100 ms"
        );
    }
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

impl Gate {
    fn closed() -> Self {
        Gate {
            open: Mutex::new(false),
            cv: Condvar::new(),
        }
    }

    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.cv.notify_all();
    }
}

/// Runs `schedule` against `backend`, whose requests `gate` holds, and opens the gate once
/// the dispatcher has issued every request: what is admitted until then is exact, whatever
/// the timing.
fn run_gated(backend: &dyn Backend, gate: &Gate, schedule: &Schedule, live: &LiveRung) -> Outcome {
    let q = queries();
    let requests = schedule.len() as u64;
    thread::scope(|s| {
        let run = s.spawn(|| run_open_loop(backend, schedule, &q, 10, live));
        let deadline = Instant::now() + Duration::from_secs(30);
        while live.progress().issued < requests {
            assert!(
                Instant::now() < deadline,
                "dispatcher stuck: {:?}",
                live.progress().issued
            );
            thread::sleep(Duration::from_millis(2));
        }
        gate.open();
        run.join().unwrap()
    })
}

#[test]
fn real_shedding_is_exact_whatever_the_timing() {
    // Nothing finishes until all 50 requests are due, so exactly `inflight` = 5 are
    // admitted (2 executing, 3 queued) and 45 are shed.
    let gate = Gate::closed();
    let schedule = Schedule::new(Arrivals::Uniform, 1_000.0, 50, 0);
    let live = LiveRung::new(2, 5, 50);
    let out = run_gated(&gate, &gate, &schedule, &live);
    assert_eq!(out.shed(), 45);
    assert_eq!(out.completed(), 5);
    assert_eq!(out.dispatch.issued, 50);
}

/// A backend that holds every request until the test opens the gate, takes up to three
/// waiting requests together, and answers each of a batch 1 ms after the one before.
struct BatchingGate {
    gate: Gate,
    /// Each call's number of requests, in order.
    calls: Mutex<Vec<usize>>,
}

impl Backend for BatchingGate {
    fn search(&self, query: &str, k: usize) -> anyhow::Result<Vec<String>> {
        self.calls.lock().unwrap().push(1);
        self.gate.search(query, k)
    }

    fn batch_limit(&self) -> usize {
        3
    }

    fn answer_batch(
        &self,
        queries: &[&str],
        _k: usize,
        done: &mut dyn FnMut(usize, anyhow::Result<heddle_eval::bench::backend::Answer>),
    ) {
        self.calls.lock().unwrap().push(queries.len());
        let _ = self.gate.search("", 1);
        for i in 0..queries.len() {
            thread::sleep(Duration::from_millis(1));
            let answer = heddle_eval::bench::backend::Answer {
                ids: vec!["d1".to_string()],
                server: None,
                parts: None,
            };
            done(i, Ok(answer));
        }
    }
}

#[test]
fn a_worker_batches_only_requests_already_waiting_and_each_is_done_at_its_own_answer() {
    // One worker, the gate closed: the first request is taken alone (nothing waits yet)
    // and held; the other seven queue behind it. Opened, the worker takes them three,
    // three and one at a time, as they wait: no batch is bigger than the backend's
    // limit, none waits to fill, and every request is recorded once.
    let backend = BatchingGate {
        gate: Gate::closed(),
        calls: Mutex::new(Vec::new()),
    };
    let schedule = Schedule::new(Arrivals::Uniform, 1_000.0, 8, 0);
    let live = LiveRung::logged(1, 8, 8);
    let out = run_gated(&backend, &backend.gate, &schedule, &live);
    // The first request is taken as soon as it is due; on a machine slow enough to wake
    // the worker after the second was due too, the first call holds both. Every later
    // call takes what waits, up to three.
    let calls = backend.calls.lock().unwrap().clone();
    let first = calls[0];
    assert!((1..=3).contains(&first), "{calls:?}");
    let mut greedy = vec![first];
    let mut left = 8 - first;
    while left > 0 {
        greedy.push(left.min(3));
        left -= left.min(3);
    }
    assert_eq!(calls, greedy);
    if first == 1 {
        assert_eq!(calls, [1, 3, 3, 1]);
    }
    assert_eq!(out.completed(), 8);
    assert_eq!(out.shed(), 0);
    let batches: Vec<usize> = calls.iter().copied().filter(|&n| n > 1).collect();
    assert_eq!(
        (out.completions.batches, out.completions.batched),
        (batches.len() as u64, batches.iter().sum::<usize>() as u64)
    );

    // The workers' busy time counts a batch once: the first request's service time
    // (held at the gate) and each later batch from its start to its last answer, less
    // than the sum of the service times of the requests in it.
    let mut sorted = out.completions.log.clone().expect("a logged rung");
    sorted.sort_by_key(|r| r.index);
    let (mut busy, mut at) = (0, 0);
    for &n in &calls {
        let batch = &sorted[at..at + n];
        at += n;
        busy += batch.iter().map(|r| r.done_ns).max().unwrap() - batch[0].start_ns;
    }
    assert_eq!(out.completions.busy_ns, busy);
    let service: u64 = sorted.iter().map(|r| r.done_ns - r.start_ns).sum();
    assert!(busy < service, "busy {busy} ns, service {service} ns");

    // A batch's requests share its start and are each done when their own answer is:
    // 1 ms apart at least (sleeps only overshoot), never all at the batch's end.
    let mut log = out.completions.log.clone().expect("a logged rung");
    log.sort_by_key(|r| r.index);
    let mut start = 0;
    for &n in &calls {
        let batch = &log[start..start + n];
        start += n;
        assert!(
            batch.iter().all(|r| r.start_ns == batch[0].start_ns),
            "{batch:?}"
        );
        if n > 1 {
            for (i, r) in batch.iter().enumerate() {
                assert!(
                    r.done_ns >= r.start_ns + (i as u64 + 1) * 1_000_000,
                    "{batch:?}"
                );
            }
            assert!(
                batch.windows(2).all(|w| w[0].done_ns < w[1].done_ns),
                "{batch:?}"
            );
        }
    }
}
