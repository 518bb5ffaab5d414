//! The machine's 1-minute load average: on a shared machine, whether something else was
//! running while a measurement ran.

/// The 1-minute load average (/proc/loadavg); `None` where the kernel does not say.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
