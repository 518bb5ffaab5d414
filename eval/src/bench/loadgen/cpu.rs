//! The calling thread's own CPU clock: time this thread ran on a core, not the time it
//! waited for one. Read around each request's service by the worker that serves it.

/// Nanoseconds of CPU the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`), or
/// `None` where the clock is not available.
pub fn thread_cpu_ns() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec through a valid pointer to ours.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The CPU the calling thread used while `f` ran, with `f`'s result.
pub fn on_this_thread<T>(f: impl FnOnce() -> T) -> (T, Option<u64>) {
    let before = thread_cpu_ns();
    let out = f();
    let after = thread_cpu_ns();
    let used = before.zip(after).map(|(b, a)| a.saturating_sub(b));
    (out, used)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_work_uses_cpu_and_sleeping_does_not() {
        // A fixed amount of work, not a wall-clock span: on a loaded machine 30 ms of
        // wall time may hold only a few ms on a core, but 50 million dependent additions
        // take at least 10 ms of CPU on any core this runs on (≤ 5 GHz, one a cycle).
        let ((), busy) = on_this_thread(|| {
            let mut x = 0u64;
            for _ in 0..50_000_000u64 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        });
        let ((), asleep) =
            on_this_thread(|| std::thread::sleep(std::time::Duration::from_millis(30)));
        let (busy, asleep) = (busy.unwrap(), asleep.unwrap());
        // The sleep used next to none of a core.
        assert!(busy > 5_000_000, "busy {busy} ns");
        assert!(asleep < busy / 5, "asleep {asleep} ns, busy {busy} ns");
    }
}
