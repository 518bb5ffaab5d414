//! The rules that choose a ladder's rates (stated, with why, in docs/PERF.md).

use crate::bench::report::{Calibration, LadderPlan, LadderRule, Settings};

/// A derived ladder's rungs as fractions of the estimated capacity: doubling steps,
/// which spread evenly on the plot's log axis, plus 3/4 where latency starts to bend,
/// and 2× so that every derived ladder shows the engine overloaded and shedding.
pub const FRACTIONS: [f64; 6] = [0.125, 0.25, 0.5, 0.75, 1.0, 2.0];

/// The reference load point of a derived ladder: half the estimated capacity, where
/// queueing is present but the engine is far from its limit.
pub const LOAD_POINT_FRACTION: f64 = 0.5;

/// The utilisation a calibration rung aims at: low enough that requests almost never
/// queue, so its latency is the service time of an otherwise idle open loop.
pub const CALIBRATION_UTILISATION: f64 = 0.05;

/// A calibration rung that turns out busier than this is repeated at a lower rate.
pub const MAX_CALIBRATION_UTILISATION: f64 = 0.2;

pub const CALIBRATION_MAX_ATTEMPTS: usize = 3;

/// Disturbed calibration rungs in a row after which the calibration is refused.
pub const MAX_DISTURBED_ATTEMPTS: usize = 3;

/// Requests in a rung: at least `samples`, and enough to last `min_duration_secs`.
pub fn requests_for(rate: f64, samples: u64, min_duration_secs: f64) -> u64 {
    let for_duration = (rate * min_duration_secs).ceil();
    samples.max(if for_duration.is_finite() {
        for_duration as u64
    } else {
        0
    })
}

/// `r` to three significant figures, so derived rates read as rates (1,230 not 1,234.57).
pub fn round_rate(r: f64) -> f64 {
    if r <= 0.0 || !r.is_finite() {
        return r;
    }
    let scale = 10f64.powi(2 - r.log10().floor() as i32);
    (r * scale).round() / scale
}

/// Servers in a capacity estimate: workers beyond the cores cannot run a CPU-bound
/// search any faster. Over HTTP (one client thread) the server's threads are unknown:
/// this machine's cores, a guess (docs/PERF.md: for a server, name the rates).
pub fn servers(settings: &Settings) -> usize {
    if settings.target.is_some() {
        return settings.cores.max(1);
    }
    settings.threads.min(settings.cores).max(1)
}

/// The ladder of `--rates`, in the order given.
pub fn named(rates: &[f64]) -> LadderPlan {
    LadderPlan {
        rule: LadderRule::Named,
        rates: rates.to_vec(),
        fractions: Vec::new(),
        capacity_per_sec: None,
        basis_engine: None,
        load_point: None,
        calibrations: Vec::new(),
    }
}

/// The ladder derived from calibrations: [`FRACTIONS`] of the *smallest* estimated
/// capacity, so that every rung below 1× is under capacity for every engine and a
/// ratio at those rungs compares latency, not shedding.
pub fn derived(calibrations: Vec<Calibration>) -> LadderPlan {
    derived_with(calibrations, &FRACTIONS)
}

/// [`derived`] with other fractions of the smallest capacity (`--fractions`).
pub fn derived_with(calibrations: Vec<Calibration>, fractions: &[f64]) -> LadderPlan {
    let basis = calibrations
        .iter()
        .min_by(|a, b| a.capacity_per_sec.total_cmp(&b.capacity_per_sec))
        .expect("at least one engine calibrated");
    let capacity = basis.capacity_per_sec;
    LadderPlan {
        rule: LadderRule::Derived,
        rates: fractions.iter().map(|f| round_rate(f * capacity)).collect(),
        fractions: fractions.to_vec(),
        capacity_per_sec: Some(capacity),
        basis_engine: Some(basis.engine.clone()),
        load_point: Some(round_rate(LOAD_POINT_FRACTION * capacity)),
        calibrations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calibration(engine: &str, capacity: f64) -> Calibration {
        Calibration {
            engine: engine.to_string(),
            servers: 2,
            attempts: Vec::new(),
            mean_service_us: 2e6 / capacity,
            capacity_per_sec: capacity,
        }
    }

    #[test]
    fn derived_rates_are_fractions_of_the_slowest_engine() {
        let plan = derived(vec![
            calibration("fast", 9_000.0),
            calibration("slow", 4_000.0),
        ]);
        assert_eq!(
            plan.rates,
            vec![500.0, 1_000.0, 2_000.0, 3_000.0, 4_000.0, 8_000.0]
        );
        assert_eq!(plan.basis_engine.as_deref(), Some("slow"));
        assert_eq!(plan.load_point, Some(2_000.0));
        assert_eq!(plan.rule, LadderRule::Derived);
    }

    #[test]
    fn other_fractions_shape_the_derived_ladder() {
        let plan = derived_with(vec![calibration("only", 1_000.0)], &[0.25, 0.5, 2.0]);
        assert_eq!(plan.rates, vec![250.0, 500.0, 2_000.0]);
        assert_eq!(plan.fractions, vec![0.25, 0.5, 2.0]);
        assert_eq!(plan.load_point, Some(500.0));
    }

    #[test]
    fn rates_round_to_three_significant_figures() {
        assert_eq!(round_rate(1_234.567), 1_230.0);
        assert_eq!(round_rate(0.123_45), 0.123);
        assert_eq!(round_rate(50.0), 50.0);
    }

    #[test]
    fn requests_cover_samples_and_duration() {
        assert_eq!(requests_for(100.0, 2_000, 5.0), 2_000);
        assert_eq!(requests_for(1_000.0, 2_000, 5.0), 5_000);
        assert_eq!(requests_for(1_000.0, 10, 0.0), 10);
    }
}
