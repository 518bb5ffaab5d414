//! How many threads the encoder's kernels use.
//!
//! The matrix products and (for long texts) attention split their work over rayon's global
//! pool, which `RAYON_NUM_THREADS` sizes when it is first used; unset, it is one thread a
//! logical core. `CANDLE_NUM_THREADS` (candle's pool, which now runs nothing while encoding:
//! candle only reads the weights) is set alike for any other candle code in the process.
//! A program that runs one encoder per worker thread wants 1, so that N workers are N
//! threads; a program that encodes one text at a time and wants it fast wants the number
//! of cores.

use std::num::NonZeroUsize;

/// Makes the encoder's kernels use `threads` threads each call (`1`: the calling thread only).
///
/// # Safety
///
/// Sets environment variables, which is sound only while no other thread of the process
/// reads or writes the environment: call it first thing in `main`, before any thread
/// exists. It must also come before the first encoding, or rayon's pool keeps the size it
/// was first given.
pub unsafe fn set_kernel_threads(threads: NonZeroUsize) {
    let value = threads.to_string();
    // SAFETY: the caller promises that no other thread exists yet (see above).
    unsafe {
        std::env::set_var("RAYON_NUM_THREADS", &value);
        std::env::set_var("CANDLE_NUM_THREADS", &value);
    }
}
