//! Fuzzes heddle's vector graph (HNSW) decoder, validation and walk: any bytes must give an
//! error or a value, never a panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| heddle::fuzzing::graph(data));
