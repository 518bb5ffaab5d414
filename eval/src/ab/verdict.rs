//! From matched pairs of per-run figures to a verdict: the median of each build's
//! per-run figures, their relative change with a bootstrap interval over the pairs,
//! the noise floor, and regression / improvement / no change / ungateable.
//!
//! The rule, for a figure where lower is better (reversed for capacity):
//!
//! - **ungateable** when its threshold is not above the noise floor (two runs of one
//!   build differed by as much: a verdict would fire on noise), or when fewer than
//!   [`MIN_PAIRS`] pairs have the figure;
//! - **regression** when the change exceeds the threshold *and* the 95% interval lies
//!   wholly above zero; **improvement** the mirror image;
//! - **no change** otherwise.
//!
//! Why both: the threshold says how large a change matters; the interval says the
//! change is not one lucky pair. And since every pair's change within the floor keeps
//! the change of medians within it too (medians are monotone), an A/A comparison whose
//! pairs stay within the floor can never reach a threshold above it.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::figures::Better;
use crate::bench::stats::spread;

/// Fewest pairs with a figure for it to get a verdict: with two, the session's own
/// floor rests on two runs of each build and the bootstrap has four resamples to draw
/// from; a real-clock A/A of two pairs called a regression.
pub const MIN_PAIRS: usize = 3;
/// Bootstrap resamples of the pairs.
pub const RESAMPLES: usize = 2_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Regression,
    Improvement,
    NoChange,
    Ungateable,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Regression => "REGRESSION",
            Verdict::Improvement => "improvement",
            Verdict::NoChange => "no change",
            Verdict::Ungateable => "ungateable",
        }
    }
}

/// The nearest-rank median (an observed value, as every median in the project).
pub fn median(v: &[f64]) -> Option<f64> {
    spread(v).map(|s| s.median)
}

/// `median(b) / median(a) − 1` over the pairs where both are present.
pub fn change(pairs: &[(f64, f64)]) -> Option<f64> {
    let a: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let b: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let (ma, mb) = (median(&a)?, median(&b)?);
    (ma > 0.0).then(|| mb / ma - 1.0)
}

/// A 95% percentile-bootstrap interval of [`change`]: pairs are resampled whole (a pair
/// shares its moment of the machine), [`RESAMPLES`] times, from a fixed seed.
pub fn interval(pairs: &[(f64, f64)], seed: u64) -> Option<(f64, f64)> {
    if pairs.len() < MIN_PAIRS {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut changes: Vec<f64> = (0..RESAMPLES)
        .filter_map(|_| {
            let sample: Vec<(f64, f64)> = (0..pairs.len())
                .map(|_| pairs[rng.random_range(0..pairs.len())])
                .collect();
            change(&sample)
        })
        .collect();
    changes.sort_by(f64::total_cmp);
    let at =
        |q: f64| changes[((q * changes.len() as f64).ceil() as usize).clamp(1, changes.len()) - 1];
    (!changes.is_empty()).then(|| (at(0.025), at(0.975)))
}

/// The largest relative difference between the two runs of a pair, `|b/a − 1|`: for
/// A/A pairs, the run-to-run spread of one build (the noise floor).
pub fn spread_of_pairs(pairs: &[(f64, f64)]) -> Option<f64> {
    pairs
        .iter()
        .filter(|(a, _)| *a > 0.0)
        .map(|(a, b)| (b / a - 1.0).abs())
        .reduce(f64::max)
}

/// The verdict on one figure (see the module's rule).
pub fn decide(
    pairs: usize,
    change: Option<f64>,
    interval: Option<(f64, f64)>,
    floor: Option<f64>,
    threshold: f64,
    better: Better,
) -> Verdict {
    let (Some(c), Some((lo, hi))) = (change, interval) else {
        return Verdict::Ungateable;
    };
    if pairs < MIN_PAIRS || floor.is_none_or(|f| threshold <= f) {
        return Verdict::Ungateable;
    }
    // Worse means higher for a time, lower for a rate.
    let (worse, worse_lo, worse_hi) = match better {
        Better::Lower => (c, lo, hi),
        Better::Higher => (-c, -hi, -lo),
    };
    if worse > threshold && worse_lo > 0.0 {
        Verdict::Regression
    } else if worse < -threshold && worse_hi < 0.0 {
        Verdict::Improvement
    } else {
        Verdict::NoChange
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_change_is_of_medians_and_the_interval_brackets_it() {
        let pairs = [
            (100.0, 120.0),
            (102.0, 121.0),
            (99.0, 119.0),
            (101.0, 122.0),
        ];
        // Nearest-rank medians: 100 and 120.
        assert!((change(&pairs).unwrap() - 0.2).abs() < 1e-12);
        let (lo, hi) = interval(&pairs, 1).unwrap();
        assert!(
            lo > 0.15 && hi < 0.25 && lo <= 0.2 && 0.2 <= hi,
            "{lo} {hi}"
        );
        assert_eq!(interval(&pairs, 1), interval(&pairs, 1), "seeded");
        assert_eq!(interval(&pairs[..1], 1), None);
    }

    #[test]
    fn the_floor_is_the_largest_pair_difference() {
        let f = spread_of_pairs(&[(100.0, 103.0), (100.0, 95.0), (0.0, 1.0)]).unwrap();
        assert!((f - 0.05).abs() < 1e-12);
    }

    #[test]
    fn a_threshold_at_or_below_the_floor_is_ungateable() {
        let v = |floor, threshold| {
            decide(
                4,
                Some(0.2),
                Some((0.1, 0.3)),
                Some(floor),
                threshold,
                Better::Lower,
            )
        };
        assert_eq!(v(0.05, 0.10), Verdict::Regression);
        assert_eq!(v(0.10, 0.10), Verdict::Ungateable);
        assert_eq!(v(0.12, 0.10), Verdict::Ungateable);
        assert_eq!(
            decide(4, Some(0.2), Some((0.1, 0.3)), None, 0.1, Better::Lower),
            Verdict::Ungateable,
            "no floor measured"
        );
        assert_eq!(
            decide(
                1,
                Some(0.2),
                Some((0.1, 0.3)),
                Some(0.0),
                0.1,
                Better::Lower
            ),
            Verdict::Ungateable
        );
    }

    #[test]
    fn both_the_threshold_and_the_interval_decide() {
        let d = |c, lo, hi, better| decide(4, Some(c), Some((lo, hi)), Some(0.01), 0.05, better);
        assert_eq!(d(0.2, 0.1, 0.3, Better::Lower), Verdict::Regression);
        assert_eq!(
            d(0.2, -0.01, 0.3, Better::Lower),
            Verdict::NoChange,
            "interval spans 0"
        );
        assert_eq!(
            d(0.04, 0.03, 0.05, Better::Lower),
            Verdict::NoChange,
            "under the threshold"
        );
        assert_eq!(d(-0.2, -0.3, -0.1, Better::Lower), Verdict::Improvement);
        // Capacity: higher is better, so a 20% drop is the regression.
        assert_eq!(d(-0.2, -0.3, -0.1, Better::Higher), Verdict::Regression);
        assert_eq!(d(0.2, 0.1, 0.3, Better::Higher), Verdict::Improvement);
    }
}
