//! Paired bootstrap: is run B better than run A on the same queries, and by how much?
//!
//! The statistic is the mean over queries of `B − A`. A resample draws as many queries as
//! there are, with replacement, and takes the mean difference over the draw; the 95%
//! interval is the 2.5th and 97.5th percentiles (nearest rank) of 10,000 such means. The
//! generator is seeded, so the same two runs always give the same interval.

use anyhow::bail;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::metrics::{Evaluation, Metric};

/// Resamples drawn by default.
pub const DEFAULT_RESAMPLES: usize = 10_000;
/// The most resamples accepted: every resample's mean is kept for the percentiles, so the
/// count sizes an allocation (a million is 8 MB, and far past a stable interval).
pub const MAX_RESAMPLES: usize = 1_000_000;
/// The fixed seed ("heddle" in ASCII).
pub const DEFAULT_SEED: u64 = 0x6865_6464_6c65;
/// Per-query differences smaller than this count as ties (floating-point noise).
pub const TIE_EPSILON: f64 = 1e-12;

/// The mean of `b − a` and its percentile bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// True when the interval lies wholly on one side of zero.
    pub fn excludes_zero(&self) -> bool {
        self.low > 0.0 || self.high < 0.0
    }
}

/// The paired bootstrap interval (`level` e.g. 0.95) of the mean of `b[i] − a[i]`.
pub fn paired_bootstrap(a: &[f64], b: &[f64], resamples: usize, seed: u64, level: f64) -> Interval {
    assert_eq!(a.len(), b.len(), "paired samples have equal length");
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| y - x).collect();
    let n = diffs.len();
    if n == 0 || resamples == 0 {
        return Interval {
            mean: 0.0,
            low: 0.0,
            high: 0.0,
        };
    }
    let mean = diffs.iter().sum::<f64>() / n as f64;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| (0..n).map(|_| diffs[rng.random_range(0..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Interval {
        mean,
        low: means[nearest_rank(tail, resamples)],
        high: means[nearest_rank(1.0 - tail, resamples)],
    }
}

/// The 0-based index of the nearest-rank `q` quantile of `n` sorted values.
fn nearest_rank(q: f64, n: usize) -> usize {
    ((q * n as f64).ceil() as usize).clamp(1, n) - 1
}

/// One metric of two runs compared query by query.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub metric: Metric,
    pub mean_a: f64,
    pub mean_b: f64,
    /// `B − A`, with its 95% interval.
    pub diff: Interval,
    /// Queries where B scores higher, lower, the same.
    pub won: usize,
    pub lost: usize,
    pub tied: usize,
}

/// Compares B against A metric by metric. Both must be evaluations of the same queries.
pub fn compare(
    a: &Evaluation,
    b: &Evaluation,
    resamples: usize,
    seed: u64,
) -> anyhow::Result<Vec<Comparison>> {
    if a.metrics != b.metrics || !a.per_query.keys().eq(b.per_query.keys()) {
        bail!("the two evaluations do not cover the same queries and metrics");
    }
    // An interval over no queries is no interval: nothing may be said to exclude zero.
    if a.per_query.is_empty() {
        bail!("no queries to compare: the judgments name none");
    }
    Ok(a.metrics
        .iter()
        .enumerate()
        .map(|(m, &metric)| {
            let (xa, xb) = (a.column(m), b.column(m));
            let mut c = Comparison {
                metric,
                mean_a: a.mean(m),
                mean_b: b.mean(m),
                diff: paired_bootstrap(&xa, &xb, resamples, seed, 0.95),
                won: 0,
                lost: 0,
                tied: 0,
            };
            for (x, y) in xa.iter().zip(&xb) {
                let d = y - x;
                if d > TIE_EPSILON {
                    c.won += 1;
                } else if d < -TIE_EPSILON {
                    c.lost += 1;
                } else {
                    c.tied += 1;
                }
            }
            c
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_constant_difference_has_a_zero_width_interval() {
        let a = [0.1, 0.5, 0.3];
        let b = [0.2, 0.6, 0.4];
        let i = paired_bootstrap(&a, &b, 1000, 1, 0.95);
        for v in [i.mean, i.low, i.high] {
            assert!((v - 0.1).abs() < 1e-12, "{i:?}");
        }
        assert!(i.excludes_zero());
    }

    #[test]
    fn the_interval_is_seeded_and_brackets_the_mean() {
        let a: Vec<f64> = (0..50).map(|i| (i % 7) as f64 / 7.0).collect();
        let b: Vec<f64> = (0..50).map(|i| ((i * 3) % 11) as f64 / 11.0).collect();
        let one = paired_bootstrap(&a, &b, DEFAULT_RESAMPLES, DEFAULT_SEED, 0.95);
        let two = paired_bootstrap(&a, &b, DEFAULT_RESAMPLES, DEFAULT_SEED, 0.95);
        assert_eq!(one, two);
        assert!(one.low < one.mean && one.mean < one.high, "{one:?}");
        let other = paired_bootstrap(&a, &b, DEFAULT_RESAMPLES, DEFAULT_SEED + 1, 0.95);
        assert_ne!(one, other);
    }

    #[test]
    fn a_symmetric_difference_straddles_zero() {
        // Half the queries +0.5, half −0.5: mean 0, and the interval must contain it.
        let a = vec![0.5; 40];
        let b: Vec<f64> = (0..40)
            .map(|i| if i % 2 == 0 { 1.0 } else { 0.0 })
            .collect();
        let i = paired_bootstrap(&a, &b, DEFAULT_RESAMPLES, DEFAULT_SEED, 0.95);
        assert!(i.mean.abs() < 1e-12);
        assert!(i.low < 0.0 && i.high > 0.0 && !i.excludes_zero(), "{i:?}");
        // The standard error is 0.5/√40 ≈ 0.079: the interval is about ±0.155.
        assert!(
            (i.high - 0.155).abs() < 0.03 && (i.low + 0.155).abs() < 0.03,
            "{i:?}"
        );
    }

    #[test]
    fn nearest_rank_indices() {
        assert_eq!(nearest_rank(0.025, 10_000), 249);
        assert_eq!(nearest_rank(0.975, 10_000), 9749);
        assert_eq!(nearest_rank(0.0, 5), 0);
        assert_eq!(nearest_rank(1.0, 5), 4);
    }
}
