//! An HDR histogram of microseconds at 3 significant digits, with nearest-rank reads.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::quantile::Quantile;

/// Latencies in whole microseconds (rounded up, so a latency is never understated).
/// Values are kept to 3 significant digits: exact below 2,048 µs, within 0.1% above.
/// Anything above an hour is recorded as an hour.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    h: Histogram<u64>,
}

/// The raw content of a histogram: every non-empty bucket as `[value, count]`, where
/// `value` is the highest value the bucket holds. Recording each pair back into an HDR
/// histogram of the same precision rebuilds it exactly, so a later tool can merge rungs
/// or re-plot them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistogramDump {
    pub unit: String,
    pub significant_digits: u8,
    pub count: u64,
    pub buckets: Vec<[u64; 2]>,
}

impl LatencyHistogram {
    pub const SIGNIFICANT_DIGITS: u8 = 3;
    /// One hour in microseconds.
    pub const MAX_MICROS: u64 = 3_600_000_000;

    pub fn new() -> Self {
        let h = Histogram::new_with_max(Self::MAX_MICROS, Self::SIGNIFICANT_DIGITS)
            .expect("constant bounds are valid");
        LatencyHistogram { h }
    }

    pub fn record_micros(&mut self, us: u64) {
        self.h.saturating_record(us.min(Self::MAX_MICROS));
    }

    /// Records a duration in nanoseconds, rounded up to the microsecond.
    pub fn record_nanos(&mut self, ns: u64) {
        self.record_micros(ns.div_ceil(1_000));
    }

    pub fn add(&mut self, other: &LatencyHistogram) {
        self.h
            .add(&other.h)
            .expect("histograms with the same bounds always add");
    }

    pub fn len(&self) -> u64 {
        self.h.len()
    }

    pub fn is_empty(&self) -> bool {
        self.h.is_empty()
    }

    pub fn mean_micros(&self) -> Option<f64> {
        (!self.is_empty()).then(|| self.h.mean())
    }

    pub fn max_micros(&self) -> Option<u64> {
        (!self.is_empty()).then(|| self.h.max())
    }

    /// The nearest-rank value of `q` whatever the sample count; `None` when empty.
    /// Use [`reported`](Self::reported) for anything printed.
    pub fn nearest_rank(&self, q: Quantile) -> Option<u64> {
        let rank = q.rank(self.len());
        let mut seen = 0u64;
        for v in self.h.iter_recorded() {
            seen += v.count_at_value();
            if seen >= rank {
                return Some(v.value_iterated_to());
            }
        }
        None
    }

    /// The nearest-rank value of `q`, or `None` when fewer than
    /// [`MIN_BEYOND`](super::MIN_BEYOND) samples lie beyond it.
    pub fn reported(&self, q: Quantile) -> Option<u64> {
        if q.is_reportable(self.len()) {
            self.nearest_rank(q)
        } else {
            None
        }
    }

    /// The standard deviation of the recorded values, µs; `None` when empty.
    pub fn stdev_micros(&self) -> Option<f64> {
        (!self.is_empty()).then(|| self.h.stdev())
    }

    /// `(value µs, quantile reached, samples at or below)` at HdrHistogram's percentile
    /// steps: `ticks` per halving of the distance to 100%, ending at the maximum (1.0).
    pub fn quantile_steps(&self, ticks: u32) -> Vec<(u64, f64, u64)> {
        let mut total = 0;
        self.h
            .iter_quantiles(ticks)
            .map(|v| {
                total += v.count_since_last_iteration();
                (v.value_iterated_to(), v.quantile_iterated_to(), total)
            })
            .collect()
    }

    /// HdrHistogram's bucket count at this precision and range.
    pub fn buckets(&self) -> u8 {
        self.h.buckets()
    }

    /// Sub-buckets per bucket: the smallest power of two above `2 × 10^digits`.
    pub fn sub_buckets(&self) -> u64 {
        (2 * 10u64.pow(u32::from(Self::SIGNIFICANT_DIGITS))).next_power_of_two()
    }

    /// How many samples exceed `us` (to the histogram's precision).
    pub fn count_above(&self, us: u64) -> u64 {
        self.h
            .iter_recorded()
            .filter(|v| v.value_iterated_to() > us)
            .map(|v| v.count_at_value())
            .sum()
    }

    pub fn dump(&self) -> HistogramDump {
        HistogramDump {
            unit: "us".to_string(),
            significant_digits: Self::SIGNIFICANT_DIGITS,
            count: self.len(),
            buckets: self
                .h
                .iter_recorded()
                .map(|v| [v.value_iterated_to(), v.count_at_value()])
                .collect(),
        }
    }

    /// Rebuilds a histogram from [`dump`](Self::dump).
    pub fn from_dump(dump: &HistogramDump) -> Self {
        let mut out = LatencyHistogram::new();
        for &[value, count] in &dump.buckets {
            out.h
                .record_n(value.min(Self::MAX_MICROS), count)
                .expect("value clamped to bounds");
        }
        out
    }
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{P50, P99};
    use super::*;

    #[test]
    fn nanoseconds_round_up_to_microseconds() {
        let mut h = LatencyHistogram::new();
        h.record_nanos(1_000);
        h.record_nanos(1_001);
        assert_eq!(h.nearest_rank(P50), Some(1));
        assert_eq!(h.max_micros(), Some(2));
    }

    #[test]
    fn dump_round_trips_and_merges() {
        let mut a = LatencyHistogram::new();
        for us in [5, 5, 900, 12_345, 7_000_000] {
            a.record_micros(us);
        }
        let back = LatencyHistogram::from_dump(&a.dump());
        assert_eq!(back.dump(), a.dump());
        let mut merged = back.clone();
        merged.add(&a);
        assert_eq!(merged.len(), 10);
        assert_eq!(merged.nearest_rank(P99), a.max_micros());
    }

    #[test]
    fn count_above_counts_strictly_greater() {
        let mut h = LatencyHistogram::new();
        for us in [10, 20, 30, 40] {
            h.record_micros(us);
        }
        assert_eq!(h.count_above(20), 2);
        assert_eq!(h.count_above(0), 4);
    }
}
