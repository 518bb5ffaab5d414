//! Nearest-rank quantiles and the minimum-sample rule, in exact integer arithmetic.

use serde::{Deserialize, Serialize};

use super::LatencyHistogram;

/// A quantile is reported only when at least this many samples lie beyond it: the value
/// is then decided by many observations, not by the few slowest. With fewer it is absent.
pub const MIN_BEYOND: u64 = 100;

/// A quantile as an exact fraction `num / den`, so that rank arithmetic never rounds
/// (`0.99 * 10_000.0` is not 9,900 in floating point).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantile {
    num: u64,
    den: u64,
    label: &'static str,
}

pub const P50: Quantile = Quantile::new(1, 2, "p50");
pub const P90: Quantile = Quantile::new(9, 10, "p90");
pub const P99: Quantile = Quantile::new(99, 100, "p99");
pub const P999: Quantile = Quantile::new(999, 1000, "p99.9");

/// The quantiles every rung reports, in column order.
pub const REPORTED: [Quantile; 4] = [P50, P90, P99, P999];

impl Quantile {
    /// `num / den` with `0 < num < den`.
    pub const fn new(num: u64, den: u64, label: &'static str) -> Self {
        assert!(
            num > 0 && num < den,
            "a quantile lies strictly between 0 and 1"
        );
        Quantile { num, den, label }
    }

    /// The name used in tables and progress lines (`p99.9`).
    pub fn label(self) -> &'static str {
        self.label
    }

    /// The nearest rank among `n` sorted samples (1-based): the smallest rank `r` with
    /// `r / n >= q`, i.e. `ceil(q * n)`, and at least 1.
    pub fn rank(self, n: u64) -> u64 {
        let r = (u128::from(n) * u128::from(self.num)).div_ceil(u128::from(self.den));
        (r as u64).max(1)
    }

    /// How many of `n` samples lie strictly beyond the nearest rank.
    pub fn beyond(self, n: u64) -> u64 {
        n.saturating_sub(self.rank(n))
    }

    /// Whether `n` samples are enough to report this quantile.
    pub fn is_reportable(self, n: u64) -> bool {
        n > 0 && self.beyond(n) >= MIN_BEYOND
    }

    /// The fewest samples that make this quantile reportable: p50 200, p90 1,000,
    /// p99 10,000, p99.9 100,000. (`n - ceil(qn) = floor(n(1-q))`, so the bound is
    /// `ceil(MIN_BEYOND / (1 - q))`.)
    pub fn min_samples(self) -> u64 {
        (MIN_BEYOND * self.den).div_ceil(self.den - self.num)
    }
}

/// The latency figures of one histogram: each quantile absent when too few samples lie
/// beyond it, `max` absent only when there are no samples. Microseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean: Option<f64>,
    pub p50: Option<u64>,
    pub p90: Option<u64>,
    pub p99: Option<u64>,
    pub p999: Option<u64>,
    pub max: Option<u64>,
}

impl LatencySummary {
    pub fn of(h: &LatencyHistogram) -> Self {
        LatencySummary {
            count: h.len(),
            mean: h.mean_micros(),
            p50: h.reported(P50),
            p90: h.reported(P90),
            p99: h.reported(P99),
            p999: h.reported(P999),
            max: h.max_micros(),
        }
    }

    /// The value of one of the [`REPORTED`] quantiles.
    pub fn get(&self, q: Quantile) -> Option<u64> {
        match q.label {
            "p50" => self.p50,
            "p90" => self.p90,
            "p99" => self.p99,
            "p99.9" => self.p999,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The naive oracle: sort, then take the `ceil(q n)`-th value.
    fn oracle(values: &[u64], q: f64) -> u64 {
        let mut v = values.to_vec();
        v.sort_unstable();
        let rank = ((q * v.len() as f64) - 1e-9).ceil().max(1.0) as usize;
        v[rank - 1]
    }

    #[test]
    fn min_samples_match_the_rule_as_stated() {
        assert_eq!(P50.min_samples(), 200);
        assert_eq!(P90.min_samples(), 1_000);
        assert_eq!(P99.min_samples(), 10_000);
        assert_eq!(P999.min_samples(), 100_000);
        for q in REPORTED {
            let n = q.min_samples();
            assert!(q.is_reportable(n), "{} at {n}", q.label());
            assert!(!q.is_reportable(n - 1), "{} at {}", q.label(), n - 1);
        }
    }

    #[test]
    fn rank_is_exact_where_floating_point_is_not() {
        assert_eq!(P99.rank(10_000), 9_900);
        assert_eq!(P99.rank(9_999), 9_900);
        assert_eq!(P999.rank(100_000), 99_900);
        assert_eq!(P50.rank(1), 1);
        assert_eq!(P50.rank(0), 1);
    }

    #[test]
    fn nearest_rank_matches_a_sorted_oracle() {
        // Values below 2,048 µs are stored exactly at 3 significant digits.
        let mut state = 7u64;
        let values: Vec<u64> = (0..5_000)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 33) % 2_000
            })
            .collect();
        let mut h = LatencyHistogram::new();
        for &v in &values {
            h.record_micros(v);
        }
        for (q, f) in [(P50, 0.5), (P90, 0.9), (P99, 0.99), (P999, 0.999)] {
            assert_eq!(h.nearest_rank(q), Some(oracle(&values, f)), "{}", q.label());
        }
    }

    #[test]
    fn issue_4_quantile_with_too_few_samples_beyond_is_absent() {
        let mut h = LatencyHistogram::new();
        for us in 0..9_999 {
            h.record_micros(100 + us % 50);
        }
        let s = LatencySummary::of(&h);
        assert!(s.p50.is_some() && s.p90.is_some());
        assert_eq!(s.p99, None, "9,999 samples leave 99 beyond p99");
        assert_eq!(s.p999, None);
        assert!(s.max.is_some(), "max is always known");
        h.record_micros(120);
        assert!(
            LatencySummary::of(&h).p99.is_some(),
            "10,000 samples suffice"
        );

        let empty = LatencySummary::of(&LatencyHistogram::new());
        assert_eq!((empty.p50, empty.max, empty.mean), (None, None, None));
    }
}
