//! The calibration rung: an open loop at a low rate that measures the service time from
//! which a derived ladder's rates follow (docs/PERF.md, "The ladder").

use anyhow::ensure;

use super::plan::{
    CALIBRATION_MAX_ATTEMPTS, CALIBRATION_UTILISATION, MAX_CALIBRATION_UTILISATION,
    MAX_DISTURBED_ATTEMPTS, round_rate, servers,
};
use super::rung::{RungSpec, run_rung, service_disturbances};
use crate::bench::backend::Backend;
use crate::bench::queries::QueryCycle;
use crate::bench::report::{Calibration, CalibrationAttempt, Settings};
use crate::bench::stats::P50;

/// A calibration rung lasts at most about this long, unless that leaves fewer requests
/// than p50 needs.
const MAX_SECS: f64 = 30.0;

/// Estimates `engine`'s capacity as `servers / mean service time`, the service time
/// measured by an open-loop rung at [`CALIBRATION_UTILISATION`].
///
/// The first rung's rate comes from `hint_service_us` (the warm-up's mean); only the
/// open-loop measurement enters the estimate. A sequential loop runs each query on a hot
/// cache right after the previous one and so is faster than an idle open loop; basing
/// capacity on it would put every rung higher than intended. If the rung turns out
/// busier than [`MAX_CALIBRATION_UTILISATION`], it is repeated at a rate from its own
/// measurement.
///
/// A rung disturbed in its service time (shed requests, a suspend, other processes
/// over their bound: `service_disturbances`) is never used: it is run again, up to
/// [`MAX_DISTURBED_ATTEMPTS`] times, and then the calibration is refused with an error
/// that says why. A lagging dispatcher delays requests, not the work on them, so it
/// leaves the measured service time standing.
pub fn calibrate(
    backend: &dyn Backend,
    engine: &str,
    hint_service_us: f64,
    samples: u64,
    settings: &Settings,
    queries: &QueryCycle,
) -> anyhow::Result<Calibration> {
    let servers = servers(settings);
    let mut guess_us = hint_service_us.max(1.0);
    let mut attempts: Vec<CalibrationAttempt> = Vec::new();
    let (mut busy, mut disturbed) = (0, 0);
    loop {
        let rate = round_rate(CALIBRATION_UTILISATION * servers as f64 / (guess_us / 1e6));
        let by_time = (rate * MAX_SECS).ceil() as u64;
        let requests = samples.min(by_time.max(P50.min_samples()));
        let label = format!("calibration {}", attempts.len() + 1);
        let spec = RungSpec {
            engine,
            label: &label,
            repetition: 0,
            rung: attempts.len(),
            rate,
            requests,
            seed: settings.seed,
            calibration: true,
        };
        let rung = run_rung(backend, &spec, settings, queries);
        // A worker busy on a batch serves several requests at once: its time counts once.
        let mean_us = rung
            .busy_us_per_request
            .or(rung.service_us.mean)
            .unwrap_or(guess_us)
            .max(1.0);
        let utilisation = rate * (mean_us / 1e6) / servers as f64;
        // What bears on the service time; a lagging dispatcher alone still marks the
        // rung disturbed in the report, but its service time stands.
        let service = service_disturbances(&rung, settings);
        let was_disturbed = !service.is_empty();
        let reasons = service.join("; ");
        attempts.push(CalibrationAttempt {
            rate,
            mean_service_us: mean_us,
            utilisation,
            rung,
        });
        if was_disturbed {
            disturbed += 1;
            ensure!(
                disturbed < MAX_DISTURBED_ATTEMPTS,
                "{engine}: the calibration was disturbed {disturbed} times in a row (last: \
                 {reasons}); a derived ladder never takes its capacity from a disturbed \
                 calibration. Run again on a quieter machine, or name the rates with --rates"
            );
            // A disturbed rung measured the machine, not the engine: nothing it says
            // informs the next attempt, which runs at the same rate.
            continue;
        }
        disturbed = 0;
        busy += 1;
        if utilisation <= MAX_CALIBRATION_UTILISATION || busy >= CALIBRATION_MAX_ATTEMPTS {
            break;
        }
        guess_us = mean_us;
    }
    let mean_service_us = attempts
        .last()
        .expect("at least one attempt")
        .mean_service_us;
    Ok(Calibration {
        engine: engine.to_string(),
        servers,
        attempts,
        mean_service_us,
        capacity_per_sec: servers as f64 / (mean_service_us / 1e6),
    })
}
