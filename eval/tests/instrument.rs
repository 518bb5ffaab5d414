//! The instrument proved on a virtual clock: the open-loop rules run as a discrete-event
//! simulation against service times known exactly, so every assertion is exact (or, for
//! random service times, statistical with a fixed seed) and no test depends on how busy
//! the machine is. docs/PERF.md, "How the instrument is tested", explains each one.

use std::time::Duration;

use heddle_eval::bench::backend::synthetic::ServiceModel;
use heddle_eval::bench::loadgen::closed::simulate_closed_loop;
use heddle_eval::bench::loadgen::{Arrivals, Outcome, Schedule, simulate_open_loop};
use heddle_eval::bench::stats::{LatencySummary, P50, P99};

const MS: u64 = 1_000;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Runs `model` open-loop on the virtual clock.
fn open(schedule: &Schedule, workers: usize, inflight: usize, model: ServiceModel) -> Outcome {
    simulate_open_loop(schedule, workers, inflight, |i, start| {
        model.finish_ns(i, start)
    })
}

// 1. At low utilisation the measured p50 is the configured service time.

#[test]
fn constant_service_at_low_utilisation_measures_exactly_the_service_time() {
    // 2 ms service, 50 requests/s on 2 workers: utilisation 5%; nothing ever queues.
    let schedule = Schedule::new(Arrivals::Uniform, 50.0, 1_000, 1);
    let out = open(&schedule, 2, 8, ServiceModel::constant(ms(2)));
    let s = LatencySummary::of(&out.completions.latency);
    assert_eq!(
        s.p50,
        Some(2 * MS),
        "tolerance: none (values under 2,048 µs are exact)"
    );
    assert_eq!(s.max, Some(2 * MS));
    assert_eq!((out.completed(), out.shed()), (1_000, 0));
}

#[test]
fn exponential_service_at_low_utilisation_has_the_distributions_quantiles() {
    // Exp(mean 2 ms) under Poisson arrivals at 1% utilisation: p50 is 2 ms × ln 2 and
    // p99 is 2 ms × ln 100, within sampling error (3% and 5%: about 3 standard errors at
    // 20,000 samples). The seed is fixed, so the run is the same every time.
    let mean = ms(2);
    let schedule = Schedule::new(Arrivals::Poisson, 10.0, 20_000, 5);
    let out = open(&schedule, 2, 8, ServiceModel::exponential(mean, 11));
    let s = LatencySummary::of(&out.completions.latency);
    let expect_p50 = 2_000.0 * 2f64.ln();
    let expect_p99 = 2_000.0 * 100f64.ln();
    let p50 = s.p50.expect("20,000 samples report p50") as f64;
    let p99 = s.p99.expect("20,000 samples report p99") as f64;
    assert!(
        (p50 / expect_p50 - 1.0).abs() < 0.03,
        "p50 {p50} vs {expect_p50}"
    );
    assert!(
        (p99 / expect_p99 - 1.0).abs() < 0.05,
        "p99 {p99} vs {expect_p99}"
    );
}

// 2. A stall shows in the open loop's tail as theory predicts; a closed loop hides it.

/// Requests slower than `threshold_ms` after one stall of `stall_ms` on a single worker
/// with constant service `service_ms`, arrivals every `1 / rate`: requests due during
/// the stall wait for its end, and the backlog then drains at `1 - ρ` per unit of time,
/// so `rate × (stall + service − threshold) / (1 − ρ)` of them exceed the threshold —
/// about stall × rate when ρ is small.
fn expected_slow(rate: f64, stall_ms: f64, service_ms: f64, threshold_ms: f64) -> f64 {
    let rho = rate * service_ms / 1e3;
    rate * (stall_ms + service_ms - threshold_ms) / 1e3 / (1.0 - rho)
}

#[test]
fn a_stall_shows_in_the_open_loop_tail_as_theory_predicts_but_a_closed_loop_shows_one() {
    // 100 requests/s, 1 ms service (ρ = 0.1), a 500 ms stall starting at 2.0005 s.
    let model = ServiceModel::constant(ms(1)).with_stall(Duration::from_micros(2_000_500), ms(500));
    let schedule = Schedule::new(Arrivals::Uniform, 100.0, 1_000, 0);
    let threshold = 50 * MS;
    let expected = expected_slow(100.0, 500.0, 1.0, 50.0); // 50.1

    let open = open(&schedule, 1, 1_000, model);
    let slow = open.completions.latency.count_above(threshold);
    assert!(
        (slow as f64 - expected).abs() <= 1.0,
        "open loop: {slow} requests over 50 ms, theory {expected:.1}"
    );
    assert!((45..=55).contains(&slow), "≈ stall × rate = 50");
    // The request due just after the stall began waited for all of it.
    let max = open.completions.latency.max_micros().unwrap();
    assert!((490 * MS..=501 * MS).contains(&max), "max {max} µs");
    assert_eq!(open.shed(), 0);

    let closed = simulate_closed_loop(&schedule, |i, start| model.finish_ns(i, start));
    assert_eq!(
        closed.completions.latency.count_above(threshold),
        1,
        "the closed loop sends nothing while it waits, so only one request looks slow"
    );
    assert_eq!(
        closed.completions.latency.max_micros(),
        open.completions.latency.max_micros()
    );
    // What the closed loop hid is visible as its lateness in sending.
    assert!(closed.dispatch.lag.count_above(threshold) >= 40);
}

#[test]
fn a_stall_under_poisson_arrivals_on_two_workers_matches_theory_on_average() {
    // 200/s on 2 workers, 1 ms service (ρ = 0.1), a 1 s stall: theory ≈ 211 requests
    // over 50 ms. One seed's count varies by about 9% (the arrivals during the stall and
    // the drain are random), so the mean over 20 seeds (standard error about 2%) must
    // be within 6%; the closed loop sees one slow request in every run.
    let model = ServiceModel::constant(ms(1)).with_stall(ms(3_000), ms(1_000));
    let rho = 200.0 * 0.001 / 2.0;
    let expected = 200.0 * (1.0 + 0.001 - 0.05) / (1.0 - rho);
    let mut ratios = Vec::new();
    for seed in 0..20 {
        let schedule = Schedule::new(Arrivals::Poisson, 200.0, 2_000, seed);
        let out = open(&schedule, 2, 10_000, model);
        ratios.push(out.completions.latency.count_above(50 * MS) as f64 / expected);
        let closed = simulate_closed_loop(&schedule, |i, start| model.finish_ns(i, start));
        assert_eq!(
            closed.completions.latency.count_above(50 * MS),
            1,
            "seed {seed}"
        );
    }
    let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
    assert!(
        (mean - 1.0).abs() < 0.06,
        "mean ratio to theory {mean:.3}: {ratios:?}"
    );
}

// 3. Shedding is exact when the offered load exceeds a capacity we control.

#[test]
fn shed_count_is_exact_beyond_a_known_capacity() {
    // One worker, 10 ms per request (capacity 100/s), 1,000 requests at 1,000/s, at most
    // 4 in flight. Requests 0–3 fill the cap; from then on each completion (every 10 ms,
    // at the same instant as a due time) frees one slot for the request due then:
    // admitted = 4 + |{10, 20, ..., 990}| = 103, shed = 897.
    let schedule = Schedule::new(Arrivals::Uniform, 1_000.0, 1_000, 0);
    let out = open(&schedule, 1, 4, ServiceModel::constant(ms(10)));
    assert_eq!(out.completed(), 103);
    assert_eq!(out.shed(), 897);
    assert_eq!(out.completed() + out.shed(), out.requests);
    // Admitted requests wait behind at most 3 others: latency ≤ 4 services (to the
    // histogram's 0.1% precision).
    assert!(out.completions.latency.max_micros().unwrap() <= 40 * MS + 40);
}

#[test]
fn nothing_is_shed_below_capacity_and_the_cap_bounds_the_queue() {
    let schedule = Schedule::new(Arrivals::Uniform, 90.0, 2_000, 0);
    let out = open(&schedule, 1, 4, ServiceModel::constant(ms(10)));
    assert_eq!(
        out.shed(),
        0,
        "90% utilisation with uniform arrivals never queues"
    );
    let over = Schedule::new(Arrivals::Uniform, 150.0, 3_000, 0);
    let out = open(&over, 1, 4, ServiceModel::constant(ms(10)));
    // Capacity 100/s of 150/s offered: a third is shed, give or take the first cap-full.
    assert!((995..=1_005).contains(&out.shed()), "shed {}", out.shed());
}

// 4. A quantile with too few samples beyond it is absent.

#[test]
fn p99_is_absent_at_2_000_samples_and_present_at_10_000() {
    let model = ServiceModel::exponential(ms(1), 3);
    for (n, p99_present) in [(2_000, false), (9_999, false), (10_000, true)] {
        let schedule = Schedule::new(Arrivals::Uniform, 100.0, n, 0);
        let out = open(&schedule, 2, 8, model);
        let s = LatencySummary::of(&out.completions.latency);
        assert_eq!(s.p99.is_some(), p99_present, "{n} samples");
        assert!(s.p50.is_some() && s.max.is_some());
        assert_eq!(s.p999, None, "p99.9 needs 100,000");
    }
    assert_eq!(P99.min_samples(), 10_000);
    assert_eq!(P50.min_samples(), 200);
}
