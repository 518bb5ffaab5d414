//! Backends whose service time is known exactly: the reference the instrument is tested
//! against. They sleep instead of working, so many can run on two cores.
//!
//! The same [`ServiceModel`] drives the simulated rungs in
//! [`loadgen::simulate_open_loop`](crate::bench::loadgen::simulate_open_loop), so a real
//! rung and a simulated one face the same service times and the same stall.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::{Backend, BackendFactory};

/// How long one request takes when nothing stalls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ServiceTime {
    Constant(Duration),
    /// Exponentially distributed with this mean; draw `n` is a pure function of
    /// `(seed, n)`, so a simulation and a real run can share the sequence.
    Exponential {
        mean: Duration,
        seed: u64,
    },
}

/// A pause during which the backend starts no work: a request that would start in
/// `[at, at + len)` starts at `at + len` instead, as after a stop-the-world pause. With
/// `every`, the pause recurs at `at + k × every` (a machine that keeps being taken away).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stall {
    pub at: Duration,
    pub len: Duration,
    pub every: Option<Duration>,
}

/// A service time distribution and an optional stall, on a clock that starts at zero.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServiceModel {
    pub time: ServiceTime,
    pub stall: Option<Stall>,
}

impl ServiceModel {
    pub fn constant(d: Duration) -> Self {
        ServiceModel {
            time: ServiceTime::Constant(d),
            stall: None,
        }
    }

    pub fn exponential(mean: Duration, seed: u64) -> Self {
        ServiceModel {
            time: ServiceTime::Exponential { mean, seed },
            stall: None,
        }
    }

    pub fn with_stall(mut self, at: Duration, len: Duration) -> Self {
        self.stall = Some(Stall {
            at,
            len,
            every: None,
        });
        self
    }

    /// A stall of `len` at `at` and again every `every` after it.
    pub fn with_recurring_stall(mut self, at: Duration, len: Duration, every: Duration) -> Self {
        assert!(
            len < every,
            "a recurring stall leaves time between its pauses"
        );
        self.stall = Some(Stall {
            at,
            len,
            every: Some(every),
        });
        self
    }

    /// The service time of draw `n`, in nanoseconds.
    pub fn service_ns(&self, n: u64) -> u64 {
        match self.time {
            ServiceTime::Constant(d) => d.as_nanos() as u64,
            ServiceTime::Exponential { mean, seed } => {
                // 53 random bits as a uniform in (0, 1]; -ln(u) is Exp(1).
                let bits = splitmix64(seed ^ splitmix64(n)) >> 11;
                let u = (bits + 1) as f64 / (1u64 << 53) as f64;
                (-u.ln() * mean.as_nanos() as f64).round() as u64
            }
        }
    }

    /// When draw `n` finishes if the backend is asked to start it at `start_ns`.
    pub fn finish_ns(&self, n: u64, start_ns: u64) -> u64 {
        let start = match self.stall {
            Some(s) => {
                let (at, len) = (s.at.as_nanos() as u64, s.len.as_nanos() as u64);
                // The pause that `start_ns` may fall in: the first, or the latest recurrence.
                let from = match s.every.map(|e| e.as_nanos() as u64) {
                    Some(e) if start_ns >= at => at + (start_ns - at) / e * e,
                    _ => at,
                };
                if (from..from + len).contains(&start_ns) {
                    from + len
                } else {
                    start_ns
                }
            }
            None => start_ns,
        };
        start + self.service_ns(n)
    }
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A backend that sleeps per its [`ServiceModel`], on a clock that starts at `epoch`.
/// Calls draw service times in the order they start.
#[derive(Debug)]
pub struct Synthetic {
    model: ServiceModel,
    epoch: Instant,
    calls: AtomicU64,
}

impl Synthetic {
    /// A backend whose clock (and so its stall) starts now.
    pub fn new(model: ServiceModel) -> Self {
        Synthetic::with_epoch(model, Instant::now())
    }

    pub fn with_epoch(model: ServiceModel, epoch: Instant) -> Self {
        Synthetic {
            model,
            epoch,
            calls: AtomicU64::new(0),
        }
    }

    /// How many searches have started.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }
}

impl Backend for Synthetic {
    fn search(&self, _query: &str, _k: usize) -> anyhow::Result<Vec<String>> {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        let start_ns = self.epoch.elapsed().as_nanos() as u64;
        let finish = self.epoch + Duration::from_nanos(self.model.finish_ns(n, start_ns));
        let now = Instant::now();
        if finish > now {
            std::thread::sleep(finish - now);
        }
        Ok(Vec::new())
    }
}

/// Opens a fresh [`Synthetic`] backend (its clock starting at open) under a chosen name;
/// the index path is ignored.
#[derive(Debug, Clone)]
pub struct SyntheticFactory {
    pub name: String,
    pub model: ServiceModel,
}

impl SyntheticFactory {
    pub fn new(name: impl Into<String>, model: ServiceModel) -> Self {
        SyntheticFactory {
            name: name.into(),
            model,
        }
    }
}

impl BackendFactory for SyntheticFactory {
    fn name(&self) -> &str {
        &self.name
    }

    fn open(&self, _index: &Path) -> anyhow::Result<Arc<dyn Backend>> {
        Ok(Arc::new(Synthetic::new(self.model)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn stall_delays_only_starts_inside_it() {
        let m = ServiceModel::constant(Duration::from_millis(1))
            .with_stall(Duration::from_millis(10), Duration::from_millis(5));
        assert_eq!(
            m.finish_ns(0, 9 * MS),
            10 * MS,
            "started before: unaffected"
        );
        assert_eq!(m.finish_ns(0, 10 * MS), 16 * MS);
        assert_eq!(m.finish_ns(0, 14 * MS), 16 * MS);
        assert_eq!(m.finish_ns(0, 15 * MS), 16 * MS, "the stall is half-open");
    }

    #[test]
    fn a_recurring_stall_delays_starts_inside_each_recurrence() {
        let m = ServiceModel::constant(Duration::from_millis(1)).with_recurring_stall(
            Duration::from_millis(10),
            Duration::from_millis(5),
            Duration::from_millis(100),
        );
        assert_eq!(m.finish_ns(0, 5 * MS), 6 * MS, "before the first");
        assert_eq!(m.finish_ns(0, 12 * MS), 16 * MS);
        assert_eq!(m.finish_ns(0, 50 * MS), 51 * MS, "between");
        assert_eq!(m.finish_ns(0, 112 * MS), 116 * MS, "the second");
        assert_eq!(m.finish_ns(0, 1_014 * MS), 1_016 * MS, "the eleventh");
    }

    #[test]
    fn exponential_draws_have_the_configured_mean() {
        let m = ServiceModel::exponential(Duration::from_millis(2), 9);
        let n = 200_000u64;
        let mean = (0..n).map(|i| m.service_ns(i) as f64).sum::<f64>() / n as f64;
        assert!((mean / (2.0 * MS as f64) - 1.0).abs() < 0.01, "mean {mean}");
        assert_eq!(m.service_ns(17), m.service_ns(17), "a pure function of n");
    }
}
