//! `heddle-eval bench`: an open-loop latency ladder whose tail figures can be trusted.
//!
//! Data flows one way: [`queries`] and a [`backend`] feed the [`loadgen`], which records
//! into [`stats`] while [`probe`] watches the process; [`ladder`] decides the rates and
//! runs the rungs; [`report`] prints the table and writes the JSON and the SVG. The
//! second arm, [`writes`] (`--writes`), reads at one rate while a writer commits, and
//! reports the reads due during a commit apart from the rest. Before the ladder,
//! [`sequential`] (`--sequential N`) times queries one after another and reports them
//! query by query. The rules the figures obey, and how each is tested, are in
//! docs/PERF.md.

pub mod backend;
pub(crate) mod cli;
pub mod ladder;
pub mod loadgen;
pub mod probe;
pub mod queries;
pub mod report;
pub mod sequential;
pub mod stats;
pub mod writes;

pub use backend::{
    Backend, BackendFactory, CommitReport, HeddleFactory, Unsupported, WriteOptions,
};
pub use cli::{BenchArgs, engines_for, measure, run};
