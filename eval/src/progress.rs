//! Progress lines on stderr for long-running commands: at most one a second.

use std::time::{Duration, Instant};

pub struct Progress {
    label: &'static str,
    started: Instant,
    last: Instant,
    every: Duration,
}

impl Progress {
    pub fn new(label: &'static str) -> Self {
        let now = Instant::now();
        Progress {
            label,
            started: now,
            last: now,
            every: Duration::from_secs(1),
        }
    }

    /// Prints `what` if a second has passed since the last line.
    pub fn tick(&mut self, what: impl FnOnce() -> String) {
        if self.last.elapsed() >= self.every {
            self.last = Instant::now();
            eprintln!(
                "{}: {} ({:.1} s)",
                self.label,
                what(),
                self.started.elapsed().as_secs_f64()
            );
        }
    }

    /// Always prints.
    pub fn say(&self, what: &str) {
        eprintln!(
            "{}: {} ({:.1} s)",
            self.label,
            what,
            self.started.elapsed().as_secs_f64()
        );
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

pub use heddle_corpus::stats::plural;

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_groups_digits() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(1000), "1,000");
        assert_eq!(super::thousands(171332), "171,332");
        assert_eq!(super::thousands(1234567), "1,234,567");
    }
}
