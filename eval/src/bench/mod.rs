//! `heddle-eval bench`: an open-loop latency ladder whose tail figures can be trusted.
//!
//! Data flows one way: [`queries`] and a [`backend`] feed the [`loadgen`], which records
//! into [`stats`] while [`probe`] watches the process; [`ladder`] decides the rates and
//! runs the rungs; [`report`] prints the table and writes the JSON and the SVG. The rules
//! the figures obey, and how each is tested, are in docs/PERF.md.

pub mod backend;
mod cli;
pub mod ladder;
pub mod loadgen;
pub mod probe;
pub mod queries;
pub mod report;
pub mod stats;

pub use backend::{Backend, BackendFactory, HeddleFactory, Unsupported};
pub use cli::{BenchArgs, default_engines, run};
