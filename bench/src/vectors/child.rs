//! The vector comparison's work in processes of their own, as [`crate::child`] does it
//! for the text engines: each build, and each engine's memory rung, in a fresh process
//! whose peak resident memory (`VmHWM`) is that engine's alone. The child prints one JSON
//! line on stdout; progress goes to stderr.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use clap::Args;
use heddle_eval::bench::BackendFactory;
use heddle_eval::bench::ladder::{RungSpec, run_rung, warm_up};
use heddle_eval::bench::loadgen::Arrivals;
use heddle_eval::bench::queries::QueryCycle;
use heddle_eval::bench::report::Settings;
use serde::{Deserialize, Serialize};

use super::data::Vectors;
use super::engines::{self, VectorBuild, VectorBuildOptions, VectorEngine, VectorFactory};
use crate::child::{run_json, vm_hwm_kib};

/// `heddle-bench vectors-build`: builds one engine's index of a vector set.
#[derive(Debug, Clone, Args)]
pub struct VectorsBuildArgs {
    /// The engine: heddle or usearch.
    #[arg(long)]
    pub engine: String,
    /// The documents' vectors (JSONL embeddings or the binary form).
    #[arg(long)]
    pub base: PathBuf,
    /// Where to build it (must not exist).
    #[arg(long)]
    pub index: PathBuf,
    /// Build threads.
    #[arg(long)]
    pub threads: usize,
    /// heddle: segments to merge down to (0: as the commit leaves them).
    #[arg(long)]
    pub segments: usize,
}

/// Runs in the child.
pub fn build(args: &VectorsBuildArgs) -> anyhow::Result<()> {
    let engine = VectorEngine::parse(&args.engine)?;
    let docs = Vectors::read(&args.base)?;
    let input_rss_kib = current_rss_kib();
    let mut stats = engines::build(
        engine,
        &docs,
        &args.index,
        &VectorBuildOptions {
            threads: args.threads,
            segments: args.segments,
        },
    )?;
    stats.peak_rss_kib = vm_hwm_kib();
    stats.input_rss_kib = input_rss_kib;
    println!("{}", serde_json::to_string(&stats)?);
    Ok(())
}

/// Runs `vectors-build` in a fresh process.
pub fn spawn_build(
    engine: VectorEngine,
    base: &Path,
    index: &Path,
    opts: &VectorBuildOptions,
) -> anyhow::Result<VectorBuild> {
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.arg("vectors-build")
        .arg("--engine")
        .arg(engine.name())
        .arg("--base")
        .arg(base)
        .arg("--index")
        .arg(index)
        .arg("--threads")
        .arg(opts.threads.to_string())
        .arg("--segments")
        .arg(opts.segments.to_string());
    run_json(cmd, &format!("building the {} vector index", engine.name()))
}

/// `heddle-bench vectors-serve-rss`: one engine at one effort, a warm-up and one
/// open-loop rung.
#[derive(Debug, Clone, Args)]
pub struct VectorsServeArgs {
    /// The engine: heddle or usearch.
    #[arg(long)]
    pub engine: String,
    /// Its index, as vectors-build made it.
    #[arg(long)]
    pub index: PathBuf,
    /// The query vectors.
    #[arg(long)]
    pub query_vectors: PathBuf,
    /// The search effort.
    #[arg(long)]
    pub effort: usize,
    /// Offered rate, requests per second.
    #[arg(long)]
    pub rate: f64,
    /// Requests in the rung.
    #[arg(long)]
    pub requests: u64,
    /// Worker threads executing requests.
    #[arg(long)]
    pub threads: usize,
    /// Most requests due but unfinished; one due beyond that is shed.
    #[arg(long)]
    pub inflight: usize,
    /// Hits per query.
    #[arg(long)]
    pub k: usize,
    /// Seeds the query order.
    #[arg(long)]
    pub seed: u64,
}

/// What a serving child reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorServeRss {
    pub engine: VectorEngine,
    pub effort: usize,
    pub rate: f64,
    pub requests: u64,
    pub shed: u64,
    /// Resident memory with the query vectors read, before the index is opened, KiB
    /// (the same for both engines).
    pub before_open_kib: Option<u64>,
    /// The process's peak over its life (open, warm-up, rung), KiB.
    pub vm_hwm_kib: Option<u64>,
    /// Peaks sampled during the rung, KiB.
    pub rss_peak_kib: Option<u64>,
    pub rss_anon_peak_kib: Option<u64>,
    pub rss_file_peak_kib: Option<u64>,
}

/// Runs in the child.
pub fn serve_rss(args: &VectorsServeArgs) -> anyhow::Result<()> {
    let engine = VectorEngine::parse(&args.engine)?;
    let queries = Arc::new(Vectors::read(&args.query_vectors)?);
    let before_open_kib = current_rss_kib();
    let factory = VectorFactory {
        engine,
        dir: args.index.clone(),
        effort: args.effort,
        queries: queries.clone(),
        threads: args.threads,
    };
    let backend = factory.open(&args.index)?;
    let cycle = QueryCycle::new(query_texts(queries.len()), args.seed);
    warm_up(&*backend, &cycle, cycle.len() as u64, args.k);
    let settings = Settings {
        index: args.index.display().to_string(),
        target: None,
        queries: args.query_vectors.display().to_string(),
        query_count: cycle.len(),
        arrivals: Arrivals::Uniform,
        threads: args.threads,
        inflight: args.inflight,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        samples: args.requests,
        min_duration_secs: 0.0,
        k: args.k,
        k1: None,
        b: None,
        seed: args.seed,
        repeat: 1,
        baseline: None,
        label: None,
        ranking: Some(format!("vector, effort {}", args.effort)),
        max_others_cpu: None,
        max_lag_ratio: None,
    };
    let spec = RungSpec {
        engine: engine.name(),
        label: "memory rung",
        repetition: 0,
        rung: 0,
        rate: args.rate,
        requests: args.requests,
        seed: args.seed,
        calibration: false,
    };
    let rung = run_rung(&*backend, &spec, &settings, &cycle);
    let report = VectorServeRss {
        engine,
        effort: args.effort,
        rate: args.rate,
        requests: rung.requests,
        shed: rung.shed,
        before_open_kib,
        vm_hwm_kib: vm_hwm_kib(),
        rss_peak_kib: rung.memory.vm_rss.map(|t| t.peak),
        rss_anon_peak_kib: rung.memory.rss_anon.map(|t| t.peak),
        rss_file_peak_kib: rung.memory.rss_file.map(|t| t.peak),
    };
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}

/// Runs `vectors-serve-rss` in a fresh process.
#[allow(clippy::too_many_arguments)]
pub fn spawn_serve_rss(
    engine: VectorEngine,
    index: &Path,
    query_vectors: &Path,
    effort: usize,
    rate: f64,
    requests: u64,
    threads: usize,
    inflight: usize,
    k: usize,
    seed: u64,
) -> anyhow::Result<VectorServeRss> {
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.arg("vectors-serve-rss")
        .arg("--engine")
        .arg(engine.name())
        .arg("--index")
        .arg(index)
        .arg("--query-vectors")
        .arg(query_vectors)
        .arg("--effort")
        .arg(effort.to_string())
        .arg("--rate")
        .arg(rate.to_string())
        .arg("--requests")
        .arg(requests.to_string())
        .arg("--threads")
        .arg(threads.to_string())
        .arg("--inflight")
        .arg(inflight.to_string())
        .arg("--k")
        .arg(k.to_string())
        .arg("--seed")
        .arg(seed.to_string());
    run_json(
        cmd,
        &format!("measuring {}'s serving memory", engine.name()),
    )
}

/// The request texts of `n` query vectors: their numbers.
pub fn query_texts(n: usize) -> Vec<String> {
    (0..n).map(|i| i.to_string()).collect()
}

/// This process's resident set now (`VmRSS`), KiB.
fn current_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
}
