//! Everything a bench run measured, as one serialisable value: the JSON file is this.

use serde::{Deserialize, Serialize};

use crate::bench::loadgen::Arrivals;
use crate::bench::probe::{MemoryTrack, RusageDelta};
use crate::bench::sequential::SequentialReport;
use crate::bench::sequential::per_query::PerQueryReport;
use crate::bench::stats::{HistogramDump, LatencySummary, Spread};
use crate::env::Environment;

/// Bumped when a field changes meaning or disappears.
pub const FORMAT_VERSION: u32 = 1;

/// A whole run: settings, the ladder and how it was chosen, every rung of every
/// repetition of every engine, and the per-rung summaries over repetitions.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchReport {
    pub format: u32,
    pub tool: String,
    /// Always `open-loop`: latency runs from each request's due time.
    pub mode: String,
    pub settings: Settings,
    pub ladder: LadderPlan,
    pub engines: Vec<EngineRun>,
    /// One entry per engine and rung: each figure's median, min and max over repetitions.
    pub summary: Vec<RungSummary>,
    /// Where and on what the run was measured (absent from reports before it existed).
    #[serde(default)]
    pub environment: Option<Environment>,
    /// False while the run is under way: the file is rewritten after every rung, so a
    /// run that was interrupted leaves every finished rung, marked incomplete.
    #[serde(default = "finished")]
    pub complete: bool,
    /// The sequential pass (`--sequential`), one per engine; empty without it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sequential: Vec<SequentialReport>,
    /// The sequential pass query by query: worst queries and query classes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_query: Option<PerQueryReport>,
}

/// Reports written before `complete` existed were written once, at the end.
fn finished() -> bool {
    true
}

/// The settings every rung ran with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// The index searched, or with `--target` the URL driven.
    pub index: String,
    /// `bench --target`: the search server's URL (`http://HOST:PORT/INDEX`) that every
    /// request went to; absent for engines in this process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    pub queries: String,
    pub query_count: usize,
    pub arrivals: Arrivals,
    /// Worker threads executing requests.
    pub threads: usize,
    /// Most requests due but unfinished; one more is shed.
    pub inflight: usize,
    /// CPU cores available to the process.
    pub cores: usize,
    /// Requests per rung at least (more if the minimum duration needs them).
    pub samples: u64,
    pub min_duration_secs: f64,
    pub k: usize,
    /// heddle's BM25 parameters (`--k1`, `--b`); absent in reports from before they were
    /// recorded, and in runs that do not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k1: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b: Option<f64>,
    pub seed: u64,
    pub repeat: usize,
    /// The engine the comparison's ratios divide by; absent: the first engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// The run's label (`--label`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// `--arm vector` or `hybrid`: what ranks each request, the query's encoding
    /// included (absent for the text arm: BM25 over the flat field at `k1`, `b`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranking: Option<String>,
    /// `--max-others-cpu`: other processes' CPU use, in cores, above which a rung is
    /// disturbed; absent: `OTHERS_SHARE_OF_CORES` of `cores`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_others_cpu: Option<f64>,
    /// `--max-lag-ratio`: the dispatcher lag p99 over latency p50 above which a rung is
    /// disturbed; absent: `LAG_P99_OVER_P50`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_lag_ratio: Option<f64>,
}

impl Settings {
    /// Other processes' CPU use, in cores, above which a rung counts as disturbed.
    pub fn others_bound(&self) -> f64 {
        self.max_others_cpu
            .unwrap_or(crate::bench::probe::OTHERS_SHARE_OF_CORES * self.cores as f64)
    }

    /// The lag p99 over latency p50 above which a rung counts as disturbed.
    pub fn lag_bound(&self) -> f64 {
        self.max_lag_ratio
            .unwrap_or(crate::bench::probe::LAG_P99_OVER_P50)
    }
}

/// How the rates were chosen (docs/PERF.md, "The ladder").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LadderRule {
    /// Given with `--rates`.
    Named,
    /// Fractions of the capacity estimated by an open-loop calibration rung.
    Derived,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LadderPlan {
    pub rule: LadderRule,
    /// Offered rates in requests per second, in the order the rungs ran.
    pub rates: Vec<f64>,
    /// For a derived ladder: each rung's fraction of `capacity_per_sec`.
    pub fractions: Vec<f64>,
    /// For a derived ladder: the smallest capacity estimated over the engines.
    pub capacity_per_sec: Option<f64>,
    /// The engine whose capacity set the ladder.
    pub basis_engine: Option<String>,
    /// The reference load point (half the estimated capacity) for a derived ladder.
    pub load_point: Option<f64>,
    pub calibrations: Vec<Calibration>,
}

/// An engine's open-loop calibration: one or more low-rate rungs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Calibration {
    pub engine: String,
    /// Servers in the capacity estimate: `min(threads, cores)`.
    pub servers: usize,
    pub attempts: Vec<CalibrationAttempt>,
    /// Mean service time in the last attempt, µs.
    pub mean_service_us: f64,
    /// `servers / mean service time`, per second.
    pub capacity_per_sec: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CalibrationAttempt {
    pub rate: f64,
    pub mean_service_us: f64,
    /// `rate × mean service time / servers`.
    pub utilisation: f64,
    pub rung: RungReport,
}

/// One engine's run: opening, warm-up and every measured rung.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EngineRun {
    pub name: String,
    pub open_secs: f64,
    pub warmup: WarmupReport,
    /// In run order: repetition, then rung.
    pub rungs: Vec<RungReport>,
}

/// The warm-up pass: queries run one after another right after opening the index. Its
/// figures describe a cold start; they are not a load measurement.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WarmupReport {
    pub queries: u64,
    pub errors: u64,
    /// The latencies of the first queries after opening, in order, µs.
    pub first_latencies_us: Vec<u64>,
    pub latency_us: LatencySummary,
    pub duration_secs: f64,
    pub process: RusageDelta,
    pub memory: MemoryTrack,
}

/// One rung: its load, what it measured, and what the process did meanwhile.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RungReport {
    pub engine: String,
    /// 0-based repetition of the ladder.
    pub repetition: usize,
    /// 0-based position in the ladder.
    pub rung: usize,
    /// 0-based position among all measured rungs of the run, in the order they ran
    /// (engines alternate at each rung).
    pub sequence: usize,
    pub offered_rate: f64,
    /// Completed requests per second of the rung.
    pub achieved_rate: f64,
    pub requests: u64,
    pub completed: u64,
    pub shed: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    pub duration_secs: f64,
    /// Some requests were shed: the rung offered more than the engine served.
    pub overloaded: bool,
    /// False if the machine was suspended or requests failed; see `invalid_reasons`.
    pub valid: bool,
    pub invalid_reasons: Vec<String>,
    /// Due → completion.
    pub latency_us: LatencySummary,
    /// Start of execution → completion (no queueing).
    pub service_us: LatencySummary,
    /// The workers' busy time a completed request: the mean service time, except that
    /// a batch (`--encode-batch`) counts its time once, not once a request in it. What
    /// the calibration divides into the workers; absent without worker threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_us_per_request: Option<f64>,
    /// The worker thread's own CPU time over each request's service (its thread CPU
    /// clock, `CLOCK_THREAD_CPUTIME_ID`): the work, without the wait for a core. Absent
    /// where requests were not served on worker threads (an async HTTP client).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_cpu_us: Option<LatencySummary>,
    /// For a disturbed rung: whether its CPU time per request was disturbed too
    /// (see `ladder::cpu_steadiness`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_note: Option<String>,
    /// How late the dispatcher issued requests: the instrument's health.
    pub dispatcher_lag_us: LagSummary,
    /// Over HTTP (`--target`): the time per request spent in the client itself,
    /// building the request and parsing the answer (part of the latency above).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_us: Option<LatencySummary>,
    /// Over HTTP, when the server reports its own time on each request
    /// (`X-Heddle-Service-Micros`, or Elasticsearch's `took`): that time, per completed
    /// request that carried it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_us: Option<LatencySummary>,
    /// ... and for the same requests, latency less the server's time: what the
    /// dispatcher, the client, the wire and scheduling added, request by request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_us: Option<LatencySummary>,
    /// Which clock `server_us` comes from (the coarsest seen in the rung).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_clock: Option<String>,
    /// The vector and hybrid arms: per request, the time spent encoding the query
    /// (inside its service time) ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encode_us: Option<LatencySummary>,
    /// ... and the rest of its service time (search and fusion), ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_us: Option<LatencySummary>,
    /// ... of which the text (BM25) stream's search, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_us: Option<LatencySummary>,
    /// ... the vector stream's search ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_us: Option<LatencySummary>,
    /// ... and the rest: fusion, tie order, the kept hits' ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fusion_us: Option<LatencySummary>,
    /// Over HTTP: requests that found no open connection and opened one, its setup in
    /// their latency (the pool holds one per in-flight request, so this is 0 unless the
    /// server closed connections during the rung).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connects_in_latency: Option<u64>,
    /// `--encode-batch`: requests a worker took together with others already waiting,
    /// their queries encoded in one run of the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batched: Option<u64>,
    pub process: RusageDelta,
    pub memory: MemoryTrack,
    /// Time the machine spent suspended during the rung, if known.
    pub suspended_secs: Option<f64>,
    /// The machine's 1-minute load average when the rung started and ended (for the
    /// reader: it counts this process's own threads too).
    #[serde(default)]
    pub load_start: Option<f64>,
    #[serde(default)]
    pub load_end: Option<f64>,
    /// Other processes' CPU use during the rung, in cores (what disturbs it).
    #[serde(default)]
    pub others_cpu: Option<f64>,
    /// Time the hypervisor took from the machine during the rung, in cores (recorded,
    /// not a disturbance: on these VMs it is a share of whatever the VM runs).
    #[serde(default)]
    pub steal_cpu: Option<f64>,
    /// The machine may have set the figures (docs/PERF.md, rule 8): see
    /// `disturbed_reasons`. Unlike an invalid rung, its figures stand as measured.
    #[serde(default)]
    pub disturbed: bool,
    #[serde(default)]
    pub disturbed_reasons: Vec<String>,
    pub histograms: RungHistograms,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LagSummary {
    pub p99: Option<u64>,
    pub max: Option<u64>,
}

/// The raw histograms of a rung, to merge or re-plot later.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RungHistograms {
    pub latency: HistogramDump,
    pub service: HistogramDump,
    pub dispatcher_lag: HistogramDump,
}

/// One engine at one rung over all repetitions. A quantile is absent if it was absent
/// in any repetition.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RungSummary {
    pub engine: String,
    pub rung: usize,
    pub offered_rate: f64,
    pub repetitions: usize,
    /// Shed in any repetition.
    pub overloaded: bool,
    /// Valid in every repetition.
    pub valid: bool,
    /// Disturbed in any repetition.
    #[serde(default)]
    pub disturbed: bool,
    pub achieved_rate: Spread<f64>,
    pub requests: Spread<u64>,
    pub shed: Spread<u64>,
    pub duration_secs: Spread<f64>,
    pub p50_us: Option<Spread<u64>>,
    pub p90_us: Option<Spread<u64>>,
    pub p99_us: Option<Spread<u64>>,
    pub p999_us: Option<Spread<u64>>,
    pub max_us: Option<Spread<u64>>,
    pub cpu_user_secs: Spread<f64>,
    pub cpu_system_secs: Spread<f64>,
    pub rss_peak_kib: Option<Spread<u64>>,
    pub rss_change_kib: Option<Spread<i64>>,
    pub rss_anon_peak_kib: Option<Spread<u64>>,
    pub rss_file_peak_kib: Option<Spread<u64>>,
    pub minor_faults: Spread<u64>,
    pub major_faults: Spread<u64>,
    pub voluntary_switches: Spread<u64>,
    pub involuntary_switches: Spread<u64>,
    pub lag_p99_us: Option<Spread<u64>>,
    pub lag_max_us: Option<Spread<u64>>,
    /// The worker threads' CPU time per request (`RungReport::service_cpu_us`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_p50_us: Option<Spread<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_p90_us: Option<Spread<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_p99_us: Option<Spread<u64>>,
    /// Over HTTP: the client's own time per request (`RungReport::client_us`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_p50_us: Option<Spread<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_p99_us: Option<Spread<u64>>,
    /// Over HTTP: the server's own time per request (`RungReport::server_us`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_p50_us: Option<Spread<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_p99_us: Option<Spread<u64>>,
    /// Over HTTP: the latency beyond the server's time (`RungReport::added_us`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_p50_us: Option<Spread<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_p99_us: Option<Spread<u64>>,
    /// Which clock the server's times come from, if any rung has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_clock: Option<String>,
    /// The vector and hybrid arms: query encoding and the rest of the service time
    /// (`RungReport::encode_us`, `search_us`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encode_p50_us: Option<Spread<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encode_p99_us: Option<Spread<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_p50_us: Option<Spread<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_p99_us: Option<Spread<u64>>,
    /// The parts of the search (`RungReport::text_us`, `vector_us`, `fusion_us`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_p50_us: Option<Spread<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_p99_us: Option<Spread<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_p50_us: Option<Spread<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_p99_us: Option<Spread<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fusion_p50_us: Option<Spread<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fusion_p99_us: Option<Spread<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batched: Option<Spread<u64>>,
}
