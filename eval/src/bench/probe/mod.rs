//! What the process did during a rung: CPU time, page faults and context switches
//! (getrusage), resident memory sampled from /proc/self/status, and suspend detection;
//! the machine's load average and other processes' CPU use beside it, and whether all
//! that disturbed a rung.

mod disturbance;
mod listener;
mod load;
mod measure;
mod others;
mod rusage;
mod sampler;
mod status;
mod suspend;

pub use disturbance::{
    LAG_P99_OVER_P50, OTHERS_SHARE_OF_CORES, SUSPEND_NOTICE, Signals, disturbances,
};
pub use listener::{listener_pid, process_cpu};
pub use load::load_average;
pub use measure::{Measured, measure};
pub use others::CpuReading;
pub use rusage::{Rusage, RusageDelta};
pub use sampler::{FieldTrack, MemoryTrack, sample_memory};
pub use status::MemoryStatus;
pub use suspend::SuspendClock;
