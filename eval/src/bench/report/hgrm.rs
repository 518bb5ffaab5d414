//! A rung's latency histogram in HdrHistogram's percentile-distribution text (`.hgrm`),
//! the form `wrk2 --latency` prints and HdrHistogram's plotter reads: values in
//! milliseconds, percentiles stepping in halves towards 100% (5 ticks per half).
//!
//! ```text
//!        Value     Percentile TotalCount 1/(1-Percentile)
//!
//!        0.412 0.000000000000          1           1.00
//!        …
//! #[Mean    =        0.523, StdDeviation   =        0.101]
//! #[Max     =        3.101, Total count    =        10000]
//! #[Buckets =           22, SubBuckets     =         2048]
//! ```

use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::RungReport;
use super::format::rate;
use crate::bench::stats::LatencyHistogram;

/// Percentile steps per halving of the distance to 100% (HdrHistogram's default).
pub const TICKS_PER_HALF: u32 = 5;

/// The histogram's percentile distribution; values (µs) printed in milliseconds.
pub fn percentile_distribution(h: &LatencyHistogram) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "{:>12} {:>14} {:>10} {:>14}\n\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    let steps = h.quantile_steps(TICKS_PER_HALF);
    for (value_us, quantile, total) in &steps {
        let ms = *value_us as f64 / 1e3;
        if *quantile < 1.0 {
            let _ = writeln!(
                out,
                "{ms:12.3} {quantile:2.12} {total:10} {:14.2}",
                1.0 / (1.0 - quantile)
            );
        } else {
            let _ = writeln!(out, "{ms:12.3} {quantile:2.12} {total:10}");
        }
    }
    let ms = |us: f64| us / 1e3;
    let _ = writeln!(
        out,
        "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]",
        ms(h.mean_micros().unwrap_or(0.0)),
        ms(h.stdev_micros().unwrap_or(0.0))
    );
    let _ = writeln!(
        out,
        "#[Max     = {:12.3}, Total count    = {:12}]",
        ms(h.max_micros().unwrap_or(0) as f64),
        h.len()
    );
    let _ = writeln!(
        out,
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        h.buckets(),
        h.sub_buckets()
    );
    out
}

/// Where a rung's file goes: `DIR/ENGINE-rep1-rung2-500.hgrm` (1-based, offered rate).
pub fn rung_path(dir: &Path, r: &RungReport) -> PathBuf {
    let engine: String = r
        .engine
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!(
        "{engine}-rep{}-rung{}-{}.hgrm",
        r.repetition + 1,
        r.rung + 1,
        rate(r.offered_rate)
    ))
}

/// Writes a rung's latency distribution into `dir`.
pub fn write_rung(dir: &Path, r: &RungReport) -> anyhow::Result<PathBuf> {
    let path = rung_path(dir, r);
    let h = LatencyHistogram::from_dump(&r.histograms.latency);
    std::fs::write(&path, percentile_distribution(&h))
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<(f64, f64, u64)> {
        text.lines()
            .skip(2)
            .take_while(|l| !l.starts_with('#'))
            .map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                (
                    w[0].parse().unwrap(),
                    w[1].parse().unwrap(),
                    w[2].parse().unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn the_distribution_reads_as_hdrhistogram_writes_it() {
        let mut h = LatencyHistogram::new();
        for us in 1..=1_000 {
            h.record_micros(us);
        }
        let text = percentile_distribution(&h);
        let mut lines = text.lines();
        assert_eq!(
            lines.next().unwrap(),
            "       Value     Percentile TotalCount 1/(1-Percentile)"
        );
        assert_eq!(lines.next().unwrap(), "");
        let rows = parse(&text);
        assert_eq!(rows[0], (0.001, 0.0, 1), "the first value, 0th percentile");
        let last = rows.last().unwrap();
        assert_eq!(
            (last.0, last.1, last.2),
            (1.0, 1.0, 1_000),
            "max, 100%, every sample"
        );
        assert!(
            rows.windows(2)
                .all(|w| w[0].1 <= w[1].1 && w[0].2 <= w[1].2)
        );
        // At the 50% step, the value is the nearest-rank median (500 µs = 0.5 ms).
        let median = rows.iter().find(|r| r.1 == 0.5).unwrap();
        assert_eq!((median.0, median.2), (0.5, 500));
        assert!(
            text.contains("#[Max     =        1.000, Total count    =         1000]"),
            "{text}"
        );
        assert!(text.contains("SubBuckets     =         2048]"), "{text}");
    }
}
