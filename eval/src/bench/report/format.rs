//! How figures are written for people: durations, rates, sizes and spreads.

use crate::bench::stats::Spread;

/// Microseconds as `412µs`, `3.10ms`, `123.4ms` or `1.25s`.
pub fn micros(us: u64) -> String {
    match us {
        0..1_000 => format!("{us}µs"),
        1_000..10_000 => format!("{:.2}ms", us as f64 / 1e3),
        10_000..1_000_000 => format!("{:.1}ms", us as f64 / 1e3),
        _ => format!("{:.2}s", us as f64 / 1e6),
    }
}

/// A quantile that may be absent: `-` when it is.
pub fn micros_or_dash(us: Option<u64>) -> String {
    us.map_or_else(|| "-".to_string(), micros)
}

/// A rate without trailing zeros: `50`, `1250`, `12.5`, `0.125`.
pub fn rate(r: f64) -> String {
    if r >= 100.0 || r.fract() == 0.0 {
        format!("{r:.0}")
    } else {
        let s = format!("{r:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// KiB as MiB with one decimal.
pub fn kib(k: u64) -> String {
    format!("{:.1}M", k as f64 / 1024.0)
}

/// A signed KiB change as MiB: `+1.5M`, `-0.2M`.
pub fn kib_change(k: i64) -> String {
    format!("{:+.1}M", k as f64 / 1024.0)
}

/// A spread as its median, with `[min–max]` when repetitions disagreed.
/// (Also when they disagreed only beyond the precision shown.)
pub fn spread<T: Copy + PartialEq>(s: &Spread<T>, show: impl Fn(T) -> String) -> String {
    let (median, min, max) = (show(s.median), show(s.min), show(s.max));
    if min == max {
        median
    } else {
        format!("{median} [{min}–{max}]")
    }
}

/// A spread that may be absent.
pub fn spread_or_dash<T: Copy + PartialEq>(
    s: &Option<Spread<T>>,
    show: impl Fn(T) -> String,
) -> String {
    s.as_ref()
        .map_or_else(|| "-".to_string(), |s| spread(s, show))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(micros(412), "412µs");
        assert_eq!(micros(3_104), "3.10ms");
        assert_eq!(micros(123_456), "123.5ms");
        assert_eq!(micros(1_250_000), "1.25s");
        assert_eq!(micros_or_dash(None), "-");
    }

    #[test]
    fn rates_and_spreads() {
        assert_eq!(rate(50.0), "50");
        assert_eq!(rate(12.5), "12.5");
        assert_eq!(rate(1234.0), "1234");
        let s = Spread {
            median: 2,
            min: 1,
            max: 3,
        };
        assert_eq!(spread(&s, |v: u64| v.to_string()), "2 [1–3]");
        assert_eq!(spread(&Spread::single(2u64), |v| v.to_string()), "2");
    }
}
