//! heddle-eval: the commands a user types (index, add, search) and the instrument that
//! measures heddle (bench).

pub mod ab;
pub mod allocator;
pub mod bench;
pub mod cli;
pub mod cost;
#[cfg(feature = "embed")]
pub mod embed;
pub mod encoding;
pub mod env;
pub mod formats;
pub mod html;
pub mod progress;
pub mod quality;
pub mod serve;
pub mod vectors;
