//! Fuzzes heddle's vectors decoder and exact scan: any bytes must give an error or a
//! value, never a panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| heddle::fuzzing::vectors(data));
