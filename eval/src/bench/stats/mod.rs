//! Latency statistics: HDR histograms in microseconds, nearest-rank quantiles, and the
//! rule that a quantile is reported only with at least 100 samples beyond it.
//!
//! ```
//! use heddle_eval::bench::stats::{LatencyHistogram, P50, P99};
//! let mut h = LatencyHistogram::new();
//! for us in 1..=1_000 {
//!     h.record_micros(us);
//! }
//! assert_eq!(h.reported(P50), Some(500)); // rank 500 of 1,000; 500 samples beyond it
//! assert_eq!(h.reported(P99), None); // only 10 samples beyond rank 990: absent
//! ```

mod histogram;
mod quantile;
mod spread;

pub use histogram::{HistogramDump, LatencyHistogram};
pub use quantile::{LatencySummary, MIN_BEYOND, P50, P90, P99, P999, Quantile, REPORTED};
pub use spread::{Spread, spread, spread_all};
