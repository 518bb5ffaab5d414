//! Fuzzes heddle's IVF (vector lists) decoder and validation: any bytes must give an
//! error or a value, never a panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| heddle::fuzzing::ivf(data));
