//! When each request of a rung is due: constant spacing or seeded Poisson arrivals.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// How arrivals are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// Request `i` is due at `i / rate`.
    #[default]
    Uniform,
    /// Exponential inter-arrival times with mean `1 / rate`, from a seeded generator.
    Poisson,
}

/// The due time of every request of a rung, in nanoseconds from the rung's start.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    rate: f64,
    due_ns: Vec<u64>,
}

impl Schedule {
    /// `n` requests at `rate` per second. Poisson schedules are a pure function of `seed`.
    pub fn new(arrivals: Arrivals, rate: f64, n: usize, seed: u64) -> Self {
        assert!(
            rate.is_finite() && rate > 0.0,
            "rate must be positive, got {rate}"
        );
        let due_ns = match arrivals {
            Arrivals::Uniform => (0..n)
                .map(|i| (i as f64 * 1e9 / rate).round() as u64)
                .collect(),
            Arrivals::Poisson => {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let mut t = 0.0f64;
                (0..n)
                    .map(|i| {
                        if i > 0 {
                            let u: f64 = rng.random(); // [0, 1)
                            t += -(1.0 - u).ln() / rate;
                        }
                        (t * 1e9).round() as u64
                    })
                    .collect()
            }
        };
        Schedule { rate, due_ns }
    }

    /// The offered rate, per second.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    pub fn len(&self) -> usize {
        self.due_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.due_ns.is_empty()
    }

    /// Due times in nanoseconds from the rung's start, non-decreasing.
    pub fn due_ns(&self) -> &[u64] {
        &self.due_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_spacing_is_exact() {
        let s = Schedule::new(Arrivals::Uniform, 1_000.0, 4, 0);
        assert_eq!(s.due_ns(), &[0, 1_000_000, 2_000_000, 3_000_000]);
    }

    #[test]
    fn poisson_is_seeded_and_has_the_offered_rate() {
        let a = Schedule::new(Arrivals::Poisson, 500.0, 50_000, 3);
        assert_eq!(a, Schedule::new(Arrivals::Poisson, 500.0, 50_000, 3));
        assert_ne!(a, Schedule::new(Arrivals::Poisson, 500.0, 50_000, 4));
        assert!(a.due_ns().windows(2).all(|w| w[0] <= w[1]));
        let span = *a.due_ns().last().unwrap() as f64 / 1e9;
        let rate = (a.len() - 1) as f64 / span;
        assert!((rate / 500.0 - 1.0).abs() < 0.02, "rate {rate}");
    }
}
