//! Whether the machine, rather than the engine, may have set a rung's figures: the rung
//! is then *disturbed*, and says so in the table, the plot and the JSON. A disturbed
//! rung is still reported (its figures are what happened); a disturbed calibration is
//! never used (docs/PERF.md, rule 8).

use std::time::Duration;

/// The dispatcher's lag p99 may be at most this fraction of the rung's latency p50.
/// Lag is charged to latency (rule 1); when 1% of requests were issued later than the
/// median request took altogether, the tail is the dispatcher's (another tenant holding
/// the core it needed), not the engine's. Not lower: on this project's 2-core VMs a
/// quiet machine's timer wake-ups alone reach tens of µs at p99, the order of a fast
/// query's whole latency, while a compile beside the bench put the lag p99 at 1.7–3.4×
/// the p50 (docs/PERF.md, rule 8).
pub const LAG_P99_OVER_P50: f64 = 1.0;

/// Other processes may use this share of the machine's cores, on average over a rung,
/// before the rung is disturbed: a quarter (half a core on the project's 2-core VMs).
/// An idle VM's own daemons use a few hundredths of a core; a build beside the bench
/// uses one or two.
pub const OTHERS_SHARE_OF_CORES: f64 = 0.25;

/// A suspend of this long or more has "fired" the suspend detector (the clocks it
/// compares are read microseconds apart, so anything above is a real suspend).
pub const SUSPEND_NOTICE: Duration = Duration::from_millis(1);

/// What a rung's probes saw, as far as disturbance goes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Signals {
    /// Nearest-rank p99 of the dispatcher's lag, µs, whatever the sample count (this
    /// is a detector, not a published quantile).
    pub lag_p99_us: Option<u64>,
    /// Nearest-rank p50 of the rung's latency, µs.
    pub latency_p50_us: Option<u64>,
    /// The lag p99 may be at most this many times the p50: [`LAG_P99_OVER_P50`] unless
    /// `--max-lag-ratio` says otherwise.
    pub max_lag_ratio: f64,
    pub suspended: Option<Duration>,
    /// Other processes' CPU use over the rung, in cores ([`CpuReading`]).
    ///
    /// [`CpuReading`]: super::CpuReading
    pub others_cpu: Option<f64>,
    /// Other processes may use at most this many cores: [`OTHERS_SHARE_OF_CORES`] of
    /// the cores unless `--max-others-cpu` says otherwise.
    pub max_others_cpu: f64,
    pub shed: u64,
    /// A calibration rung: its whole purpose is an idle open loop, so any shed request
    /// means something else held the machine.
    pub calibration: bool,
}

/// Why the rung is disturbed; empty when it is not.
pub fn disturbances(s: &Signals) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(lag), Some(p50)) = (s.lag_p99_us, s.latency_p50_us)
        && lag as f64 > s.max_lag_ratio * p50 as f64
    {
        out.push(format!(
            "dispatcher lag p99 {lag}µs exceeds {} × the latency p50 {p50}µs",
            s.max_lag_ratio
        ));
    }
    if let Some(d) = s.suspended.filter(|d| *d >= SUSPEND_NOTICE) {
        out.push(format!(
            "the machine was suspended for {:.3} s",
            d.as_secs_f64()
        ));
    }
    if let Some(o) = s.others_cpu.filter(|&o| o > s.max_others_cpu) {
        out.push(format!(
            "other processes used {o:.2} cores (at most {:.2} may)",
            s.max_others_cpu
        ));
    }
    if s.calibration && s.shed > 0 {
        out.push(format!("a calibration rung shed {} requests", s.shed));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet() -> Signals {
        Signals {
            lag_p99_us: Some(20),
            latency_p50_us: Some(1_000),
            max_lag_ratio: LAG_P99_OVER_P50,
            suspended: Some(Duration::ZERO),
            others_cpu: Some(0.1),
            max_others_cpu: 0.5,
            shed: 0,
            calibration: true,
        }
    }

    #[test]
    fn a_quiet_rung_is_not_disturbed() {
        assert!(disturbances(&quiet()).is_empty());
        let unknown = Signals {
            max_others_cpu: 0.5,
            max_lag_ratio: 1.0,
            ..Signals::default()
        };
        assert!(
            disturbances(&unknown).is_empty(),
            "unknown is not disturbed"
        );
    }

    #[test]
    fn each_signal_alone_disturbs_at_its_bound_and_not_before() {
        let lag = |us| Signals {
            lag_p99_us: Some(us),
            ..quiet()
        };
        assert!(disturbances(&lag(1_000)).is_empty(), "exactly the p50");
        assert_eq!(disturbances(&lag(1_001)).len(), 1);
        let suspended = Signals {
            suspended: Some(Duration::from_millis(5)),
            ..quiet()
        };
        assert!(disturbances(&suspended)[0].contains("suspended"));
        let busy = Signals {
            others_cpu: Some(0.51),
            ..quiet()
        };
        assert!(disturbances(&busy)[0].contains("other processes used 0.51 cores"));
        let exactly = Signals {
            others_cpu: Some(0.5),
            ..quiet()
        };
        assert!(
            disturbances(&exactly).is_empty(),
            "others exactly at the bound"
        );
        let shed = Signals { shed: 1, ..quiet() };
        assert!(disturbances(&shed)[0].contains("calibration rung shed 1"));
        let measured = Signals {
            calibration: false,
            ..shed
        };
        assert!(
            disturbances(&measured).is_empty(),
            "a measured rung that sheds is overloaded, not disturbed"
        );
    }
}
