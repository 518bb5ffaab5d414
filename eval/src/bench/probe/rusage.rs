//! getrusage(RUSAGE_SELF) and the difference between two readings.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The whole process's counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rusage {
    pub user: Duration,
    pub system: Duration,
    pub minor_faults: u64,
    pub major_faults: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
}

/// What the process did between two readings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RusageDelta {
    pub user_secs: f64,
    pub system_secs: f64,
    pub minor_faults: u64,
    pub major_faults: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
}

impl Rusage {
    /// Reads the counters; all zero if the call fails (it cannot for RUSAGE_SELF).
    pub fn now() -> Self {
        Self::read(libc::RUSAGE_SELF)
    }

    /// The same counters summed over the child processes waited for so far (the
    /// callgrind runs of `heddle-eval cost`).
    pub fn children() -> Self {
        Self::read(libc::RUSAGE_CHILDREN)
    }

    fn read(who: libc::c_int) -> Self {
        // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `ru` is a valid, writable `rusage`; getrusage writes only into it.
        if unsafe { libc::getrusage(who, &mut ru) } != 0 {
            return Rusage::default();
        }
        let tv = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec.max(0) as u64)
                + Duration::from_micros(t.tv_usec.max(0) as u64)
        };
        Rusage {
            user: tv(ru.ru_utime),
            system: tv(ru.ru_stime),
            minor_faults: ru.ru_minflt.max(0) as u64,
            major_faults: ru.ru_majflt.max(0) as u64,
            voluntary_switches: ru.ru_nvcsw.max(0) as u64,
            involuntary_switches: ru.ru_nivcsw.max(0) as u64,
        }
    }

    /// What happened from `earlier` to `self`.
    pub fn since(&self, earlier: &Rusage) -> RusageDelta {
        RusageDelta {
            user_secs: self.user.saturating_sub(earlier.user).as_secs_f64(),
            system_secs: self.system.saturating_sub(earlier.system).as_secs_f64(),
            minor_faults: self.minor_faults.saturating_sub(earlier.minor_faults),
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
            voluntary_switches: self
                .voluntary_switches
                .saturating_sub(earlier.voluntary_switches),
            involuntary_switches: self
                .involuntary_switches
                .saturating_sub(earlier.involuntary_switches),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_work_and_faults_show_up() {
        let before = Rusage::now();
        let mut v = vec![0u8; 64 << 20];
        for i in (0..v.len()).step_by(4096) {
            v[i] = 1;
        }
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box((x, &v));
        let d = Rusage::now().since(&before);
        assert!(d.minor_faults >= 1_000, "{d:?}");
        assert!(d.user_secs + d.system_secs > 0.0, "{d:?}");
    }
}
