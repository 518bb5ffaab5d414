//! The ladder: which rates to offer (named, or derived from an open-loop calibration),
//! the warm-up pass, and the rungs themselves — each engine in turn at each rate, so
//! that engines compared in one run face the same machine at the same moments.

mod calibrate;
mod plan;
mod rung;
mod warmup;

pub use calibrate::calibrate;
pub use plan::{
    CALIBRATION_MAX_ATTEMPTS, CALIBRATION_UTILISATION, FRACTIONS, LOAD_POINT_FRACTION,
    MAX_CALIBRATION_UTILISATION, MAX_DISTURBED_ATTEMPTS, derived, derived_with, named,
    requests_for, round_rate, servers,
};
pub use rung::{CPU_STEADY, RungSpec, cpu_steadiness, run_rung};
pub use warmup::{first_error, warm_up};

use crate::bench::backend::Backend;
use crate::bench::queries::QueryCycle;
use crate::bench::report::{RungReport, Settings};

/// Runs the whole ladder `settings.repeat` times: for each repetition, for each rate,
/// every engine in turn (A B A B …). Returns each engine's rungs in run order, and shows
/// them to `after_rung` after every rung (to write them as the run goes).
pub fn run_ladder(
    engines: &[(&str, &dyn Backend)],
    rates: &[f64],
    settings: &Settings,
    queries: &QueryCycle,
    after_rung: &mut dyn FnMut(&[Vec<RungReport>]),
) -> Vec<Vec<RungReport>> {
    let mut out = vec![Vec::new(); engines.len()];
    let mut sequence = 0;
    for repetition in 0..settings.repeat {
        for (rung, &rate) in rates.iter().enumerate() {
            // The same arrivals for every engine at this rung; new ones each repetition.
            let seed = settings.seed ^ ((repetition as u64) << 32) ^ rung as u64;
            for (e, &(name, backend)) in engines.iter().enumerate() {
                let label = format!(
                    "rung {}/{} rep {}/{}",
                    rung + 1,
                    rates.len(),
                    repetition + 1,
                    settings.repeat
                );
                let spec = RungSpec {
                    engine: name,
                    label: &label,
                    repetition,
                    rung,
                    rate,
                    requests: requests_for(rate, settings.samples, settings.min_duration_secs),
                    seed,
                    calibration: false,
                };
                let mut report = run_rung(backend, &spec, settings, queries);
                report.sequence = sequence;
                sequence += 1;
                out[e].push(report);
                cpu_steadiness(&mut out[e]);
                after_rung(&out);
            }
        }
    }
    out
}
