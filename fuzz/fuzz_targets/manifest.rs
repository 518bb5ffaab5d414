//! Fuzzes heddle's manifest decoder: any bytes must give an error or a value, never a panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| heddle::fuzzing::manifest(data));
