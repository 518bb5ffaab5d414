//! How many threads candle's CPU kernels use.
//!
//! candle reads two environment variables: `RAYON_NUM_THREADS` sizes each matrix product
//! (gemm's rayon parallelism; candle asks for that many threads on every call) and
//! `CANDLE_NUM_THREADS` sizes its pool for element-wise kernels (fixed at first use).
//! Unset, both are the number of physical cores. A program that runs one encoder per
//! worker thread wants 1, so that N workers are N threads; a program that encodes one text
//! at a time and wants it fast wants the number of cores.

use std::num::NonZeroUsize;

/// Makes candle's kernels use `threads` threads each call (`1`: the calling thread only).
///
/// # Safety
///
/// Sets environment variables, which is sound only while no other thread of the process
/// reads or writes the environment: call it first thing in `main`, before any thread
/// exists. It must also come before the first encoding, or candle's element-wise pool
/// keeps the size it was first given.
pub unsafe fn set_kernel_threads(threads: NonZeroUsize) {
    let value = threads.to_string();
    // SAFETY: the caller promises that no other thread exists yet (see above).
    unsafe {
        std::env::set_var("RAYON_NUM_THREADS", &value);
        std::env::set_var("CANDLE_NUM_THREADS", &value);
    }
}
