//! Work done in a fresh process of this binary, so that its peak resident memory belongs
//! to one engine alone: building an index, and serving one rung of queries.
//!
//! One process holding both engines cannot say whose pages are resident (both indexes
//! are memory-mapped, and the high-water mark is the process's), so the comparison runs
//! these in children and each child reports its own `VmHWM` as one JSON line on stdout.
//! Progress goes to stderr, which the child shares with its parent.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use clap::Args;
use heddle_eval::bench::ladder::warm_up;
use heddle_eval::bench::ladder::{RungSpec, run_rung};
use heddle_eval::bench::loadgen::Arrivals;
use heddle_eval::bench::queries::QueryCycle;
use heddle_eval::bench::report::Settings;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::analysis::Analysis;
use crate::engines::{BuildOptions, BuildStats, Engine};

/// `heddle-bench build-index`: builds one engine's index (used by `bench`).
#[derive(Debug, Clone, Args)]
pub struct BuildIndexArgs {
    /// The engine to build with: heddle or tantivy.
    #[arg(long)]
    pub engine: String,
    /// BEIR directory holding corpus.jsonl (or the file itself).
    #[arg(long)]
    pub corpus: PathBuf,
    /// Where to build it (must not exist).
    #[arg(long)]
    pub index: PathBuf,
    /// The analysis both engines share, or each one's own.
    #[arg(long, value_enum)]
    pub analysis: Analysis,
    /// heddle's analyzer preset (`english`, or `lucene-english` against Lucene's own
    /// analysis).
    #[arg(long, value_name = "PRESET")]
    pub heddle_analyzer: String,
    /// Indexing threads.
    #[arg(long)]
    pub threads: usize,
    /// Segments to merge down to after the build; 0: the engine's own merge policy.
    #[arg(long)]
    pub segments: usize,
    /// Indexing memory in bytes: heddle's writer budget (0: none), tantivy's arena over
    /// all its threads.
    #[arg(long)]
    pub memory_bytes: usize,
}

impl BuildIndexArgs {
    fn options(&self) -> BuildOptions {
        BuildOptions {
            analysis: self.analysis,
            heddle_analyzer: self.heddle_analyzer.clone(),
            threads: self.threads,
            segments: self.segments,
            memory_bytes: self.memory_bytes,
        }
    }
}

/// Runs in the child: builds, then prints the stats with this process's peak RSS.
pub fn build_index(args: &BuildIndexArgs) -> anyhow::Result<()> {
    let engine = Engine::parse(&args.engine)?;
    let mut stats = engine.build(&args.corpus, &args.index, &args.options())?;
    stats.peak_rss_kib = vm_hwm_kib();
    println!("{}", serde_json::to_string(&stats)?);
    Ok(())
}

/// Runs `build-index` in a fresh process and returns what it printed.
pub fn spawn_build(
    engine: Engine,
    corpus: &Path,
    index: &Path,
    options: &BuildOptions,
) -> anyhow::Result<BuildStats> {
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.arg("build-index")
        .arg("--engine")
        .arg(engine.name())
        .arg("--corpus")
        .arg(corpus)
        .arg("--index")
        .arg(index)
        .arg("--analysis")
        .arg(options.analysis.name())
        .arg("--heddle-analyzer")
        .arg(&options.heddle_analyzer)
        .arg("--threads")
        .arg(options.threads.to_string())
        .arg("--segments")
        .arg(options.segments.to_string())
        .arg("--memory-bytes")
        .arg(options.memory_bytes.to_string());
    run_json(cmd, &format!("building the {} index", engine.name()))
}

/// `heddle-bench serve-rss`: one engine, a warm-up and one open-loop rung, in a process
/// of its own (used by `bench` for peak RSS per engine).
#[derive(Debug, Clone, Args)]
pub struct ServeRssArgs {
    /// The engine to serve with: heddle or tantivy.
    #[arg(long)]
    pub engine: String,
    /// The engine's index, as build-index made it.
    #[arg(long)]
    pub index: PathBuf,
    /// The analysis the index was built with.
    #[arg(long, value_enum)]
    pub analysis: Analysis,
    /// The queries: BEIR queries.jsonl or a TREC topics file (`qid<TAB>text`).
    #[arg(long)]
    pub queries: PathBuf,
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
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServeRss {
    pub engine: Engine,
    pub rate: f64,
    pub requests: u64,
    pub shed: u64,
    /// The process's peak RSS over its whole life (open, warm-up, rung), KiB.
    pub vm_hwm_kib: Option<u64>,
    /// Peaks sampled during the rung, KiB.
    pub rss_peak_kib: Option<u64>,
    pub rss_anon_peak_kib: Option<u64>,
    pub rss_file_peak_kib: Option<u64>,
}

/// Runs in the child.
pub fn serve_rss(args: &ServeRssArgs) -> anyhow::Result<()> {
    let engine = Engine::parse(&args.engine)?;
    let backend = engine
        .factory(&args.index, args.analysis)
        .open(&args.index)?;
    let queries = QueryCycle::load(&args.queries, args.seed)?;
    warm_up(&*backend, &queries, queries.len() as u64, args.k);
    let settings = Settings {
        index: args.index.display().to_string(),
        target: None,
        queries: args.queries.display().to_string(),
        query_count: queries.len(),
        arrivals: Arrivals::Uniform,
        threads: args.threads,
        inflight: args.inflight,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        samples: args.requests,
        min_duration_secs: 0.0,
        k: args.k,
        k1: Some(heddle::Bm25Params::default().k1),
        b: Some(heddle::Bm25Params::default().b),
        seed: args.seed,
        repeat: 1,
        baseline: None,
        label: None,
        ranking: None,
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
    let rung = run_rung(&*backend, &spec, &settings, &queries);
    let report = ServeRss {
        engine,
        rate: args.rate,
        requests: rung.requests,
        shed: rung.shed,
        vm_hwm_kib: vm_hwm_kib(),
        rss_peak_kib: rung.memory.vm_rss.map(|t| t.peak),
        rss_anon_peak_kib: rung.memory.rss_anon.map(|t| t.peak),
        rss_file_peak_kib: rung.memory.rss_file.map(|t| t.peak),
    };
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}

/// Runs `serve-rss` in a fresh process.
#[allow(clippy::too_many_arguments)]
pub fn spawn_serve_rss(
    engine: Engine,
    index: &Path,
    analysis: Analysis,
    queries: &Path,
    rate: f64,
    requests: u64,
    threads: usize,
    inflight: usize,
    k: usize,
    seed: u64,
) -> anyhow::Result<ServeRss> {
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.arg("serve-rss")
        .arg("--engine")
        .arg(engine.name())
        .arg("--index")
        .arg(index)
        .arg("--analysis")
        .arg(analysis.name())
        .arg("--queries")
        .arg(queries)
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
    run_json(cmd, &format!("measuring {}'s memory", engine.name()))
}

pub(crate) fn run_json<T: DeserializeOwned>(mut cmd: Command, what: &str) -> anyhow::Result<T> {
    let output = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("{what}: starting {cmd:?}"))?;
    if !output.status.success() {
        bail!("{what}: the child process failed ({})", output.status);
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .with_context(|| format!("{what}: the child printed nothing"))?;
    serde_json::from_str(line).with_context(|| format!("{what}: reading {line:?}"))
}

/// This process's peak resident set (`VmHWM` in /proc/self/status), KiB.
pub fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_vm_hwm(&status)
}

fn parse_vm_hwm(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_high_water_mark() {
        let status = "Name:\tx\nVmPeak:\t  100 kB\nVmHWM:\t    4242 kB\nVmRSS:\t 12 kB\n";
        assert_eq!(parse_vm_hwm(status), Some(4242));
        assert_eq!(parse_vm_hwm("VmRSS: 1 kB\n"), None);
        if cfg!(target_os = "linux") {
            assert!(vm_hwm_kib().is_some_and(|k| k > 0));
        }
    }
}
