//! Suspend detection: CLOCK_BOOTTIME counts time asleep, CLOCK_MONOTONIC does not, so
//! growth of their difference during a rung means the machine was suspended.

use std::time::Duration;

/// The gap between the boot-time and monotonic clocks at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuspendClock {
    gap_ns: Option<i128>,
}

impl SuspendClock {
    /// A rung is invalid if the machine slept longer than this during it.
    pub const THRESHOLD: Duration = Duration::from_secs(1);

    pub fn now() -> Self {
        SuspendClock { gap_ns: gap_ns() }
    }

    /// How much time the machine spent suspended since `earlier`; `None` if unknown.
    pub fn suspended_since(&self, earlier: &SuspendClock) -> Option<Duration> {
        let grown = self.gap_ns? - earlier.gap_ns?;
        Some(Duration::from_nanos(grown.max(0) as u64))
    }
}

#[cfg(target_os = "linux")]
fn gap_ns() -> Option<i128> {
    let read = |clock| {
        // SAFETY: an all-zero `timespec` is valid; clock_gettime writes only into it.
        let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
        // SAFETY: `ts` is a valid, writable `timespec`.
        let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
        (rc == 0).then(|| i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec))
    };
    // Monotonic first, then boot time: scheduling between the reads can only make the
    // gap look larger by microseconds, far below the threshold.
    let mono = read(libc::CLOCK_MONOTONIC)?;
    let boot = read(libc::CLOCK_BOOTTIME)?;
    Some(boot - mono)
}

#[cfg(not(target_os = "linux"))]
fn gap_ns() -> Option<i128> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn no_suspend_within_a_test() {
        let a = SuspendClock::now();
        std::thread::sleep(Duration::from_millis(5));
        let slept = SuspendClock::now().suspended_since(&a).unwrap();
        assert!(slept < SuspendClock::THRESHOLD, "{slept:?}");
    }

    #[test]
    fn growth_is_the_difference() {
        let a = SuspendClock { gap_ns: Some(10) };
        let b = SuspendClock {
            gap_ns: Some(2_000_000_010),
        };
        assert_eq!(b.suspended_since(&a), Some(Duration::from_secs(2)));
        assert_eq!(b.suspended_since(&SuspendClock { gap_ns: None }), None);
    }
}
