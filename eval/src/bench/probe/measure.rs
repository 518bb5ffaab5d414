//! Every probe around one piece of work: resident memory sampled on its own thread (with
//! a progress callback every few seconds), the process's getrusage and suspend time.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use super::{MemoryTrack, Rusage, RusageDelta, SuspendClock, sample_memory};

/// How often resident memory is sampled.
const SAMPLE_PERIOD: Duration = Duration::from_millis(100);
/// `progress` runs every this many samples (4 s: "at least every 5 seconds").
const PROGRESS_EVERY_SAMPLES: u32 = 40;

/// What the probes saw while the work ran.
pub struct Measured {
    pub process: RusageDelta,
    pub memory: MemoryTrack,
    pub suspended: Option<Duration>,
}

/// Runs `work` with memory sampled beside it and `progress` called every 4 s, and returns
/// its result with what the probes saw.
pub fn measure<R>(mut progress: impl FnMut() + Send, work: impl FnOnce() -> R) -> (R, Measured) {
    let rusage = Rusage::now();
    let clock = SuspendClock::now();
    let (stop, stopped) = mpsc::channel::<()>();
    let (result, memory) = thread::scope(|s| {
        let sampler = s.spawn(move || {
            let mut samples = 0u32;
            sample_memory(SAMPLE_PERIOD, stopped, || {
                samples += 1;
                if samples.is_multiple_of(PROGRESS_EVERY_SAMPLES) {
                    progress();
                }
            })
        });
        let result = work();
        drop(stop);
        (result, sampler.join().expect("the memory sampler panicked"))
    });
    let measured = Measured {
        process: Rusage::now().since(&rusage),
        memory,
        suspended: SuspendClock::now().suspended_since(&clock),
    };
    (result, measured)
}
