//! Everything the writes arm measured, as one serialisable value: its JSON file is this.

use serde::{Deserialize, Serialize};

use super::scratch::SourceCheck;
use crate::bench::probe::{MemoryTrack, RusageDelta};
use crate::bench::report::{Calibration, LagSummary, Settings, WarmupReport};
use crate::bench::stats::{HistogramDump, LatencySummary, Spread};
use crate::env::Environment;

/// Bumped when a field changes meaning or disappears.
pub const WRITES_FORMAT: u32 = 1;

/// A whole writes-arm run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WritesReport {
    pub format: u32,
    pub tool: String,
    /// Always `open-loop writes`: reads are open loop, latency from the due time.
    pub mode: String,
    /// The read side's settings (as the ladder's; `samples` and `min_duration_secs`
    /// size the one schedule each trial runs).
    pub settings: Settings,
    pub writes: WriteSettings,
    /// Open-loop calibrations, when the rate was derived.
    pub calibrations: Vec<Calibration>,
    /// Each engine's source index, fingerprinted before and after the arm.
    pub sources: Vec<SourceCheck>,
    /// In run order: repetition, then commit threads, then engine.
    pub trials: Vec<TrialReport>,
    /// Per engine and commit-thread count: each figure over the repetitions.
    pub summary: Vec<TrialSummary>,
    /// Where and on what the run was measured; its storage and fsync cost are those of
    /// the scratch directory, where the copies are written and committed to.
    #[serde(default)]
    pub environment: Option<Environment>,
    /// False while the arm is under way (the file is rewritten after every trial).
    #[serde(default = "finished")]
    pub complete: bool,
}

/// Reports written before `complete` existed were written once, at the end.
fn finished() -> bool {
    true
}

/// How the writes were made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WriteSettings {
    /// Reads per second, the same for every trial.
    pub rate: f64,
    /// `named` (`--rate`) or `quarter-capacity`.
    pub rate_rule: String,
    /// The smallest capacity measured, when the rate was derived from it.
    pub capacity_per_sec: Option<f64>,
    pub requests: u64,
    /// From the first read due to the last.
    pub schedule_secs: f64,
    /// When the first write starts, from the schedule's start: a third of the way.
    pub first_write_secs: f64,
    pub docs_per_commit: usize,
    pub source: String,
    /// Batches prepared (at most one commit each).
    pub batches: usize,
    pub commit_every_secs: Option<f64>,
    pub commit_threads: Vec<usize>,
    /// The directory the copies were made in.
    pub scratch: String,
}

/// One engine, one commit-thread count, one repetition: a fresh copy, warmed, read at a
/// fixed rate while the writer commits.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialReport {
    pub engine: String,
    pub repetition: usize,
    pub commit_threads: usize,
    /// Position among all trials, in the order they ran.
    pub sequence: usize,
    pub copy_bytes: u64,
    /// Copying and fsyncing the index.
    pub copy_secs: f64,
    pub open_secs: f64,
    pub warmup: WarmupReport,
    pub rate: f64,
    /// What the trial measured (its fields appear at this level in the JSON).
    #[serde(flatten)]
    pub run: TrialRun,
    pub valid: bool,
    pub invalid_reasons: Vec<String>,
}

/// What a trial measured (the report adds how the index was copied, opened and warmed).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialRun {
    pub requests: u64,
    pub duration_secs: f64,
    pub commits: Vec<CommitRecord>,
    /// Why the writer stopped early, if it did.
    pub writer_error: Option<String>,
    /// Reads due while a write was running: `[add start, commit return)` of any commit.
    pub in_commit: ReadClass,
    /// Every other read.
    pub outside: ReadClass,
    /// The part of `outside` due after the first write started: beside the commits'
    /// aftermath (more segments to search), which the reads before it do not see.
    pub after: ReadClass,
    pub dispatcher_lag_us: LagSummary,
    pub process: RusageDelta,
    pub memory: MemoryTrack,
    pub suspended_secs: Option<f64>,
    /// After the reads: a search for the word every written document carries found
    /// all of them.
    pub all_visible_at_end: bool,
    /// The first read error, if any read failed.
    #[serde(default)]
    pub first_read_error: Option<String>,
    /// The machine's 1-minute load average when the reads started and ended: on a shared
    /// machine, whether something else competed for the cores.
    pub load_start: Option<f64>,
    pub load_end: Option<f64>,
    /// Other processes' CPU use while the reads ran, in cores (this process's readers
    /// and writer excluded): above `Settings::others_bound` the trial was disturbed.
    #[serde(default)]
    pub others_cpu: Option<f64>,
    /// Time the hypervisor took from the machine while the reads ran, in cores.
    #[serde(default)]
    pub steal_cpu: Option<f64>,
    /// Every completed read, in due order: what the plot draws (each read at its due
    /// time). All of them are kept: a trial has tens of thousands at most, and the plot
    /// thins its points itself ([`crate::bench::writes::svg`]). Failed and shed reads
    /// are only counted (in `in_commit` and `outside`).
    #[serde(default)]
    pub samples: Vec<ReadSample>,
    /// The ladder's disturbance rules (docs/PERF.md, rule 8) applied to the whole
    /// trial — other processes' CPU, the dispatcher's lag against the reads' p50, a
    /// suspend — and to each commit's window (its own `disturbed_reasons`): why the
    /// machine, not the engine, may have set these figures. Empty: undisturbed.
    #[serde(default)]
    pub disturbed_reasons: Vec<String>,
}

impl TrialRun {
    /// The trial or any of its windows was disturbed.
    pub fn disturbed(&self) -> bool {
        !self.disturbed_reasons.is_empty()
            || self.commits.iter().any(|c| !c.disturbed_reasons.is_empty())
    }

    /// Every reason, the trial's then each window's (`commit 2: …`).
    pub fn all_disturbances(&self) -> Vec<String> {
        let mut out = self.disturbed_reasons.clone();
        for c in &self.commits {
            for why in &c.disturbed_reasons {
                out.push(format!("commit {}: {why}", c.batch + 1));
            }
        }
        out
    }
}

/// One completed read: `(due, latency)` in microseconds, the due time from the schedule's
/// start (the same origin as a commit's `start_secs`). A pair, so that the JSON stays
/// small: `[1234567, 812]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ReadSample(pub u64, pub u64);

impl ReadSample {
    pub fn due_us(self) -> u64 {
        self.0
    }

    pub fn latency_us(self) -> u64 {
        self.1
    }
}

/// One write: the batch added and committed, and what the committing thread saw after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommitRecord {
    pub batch: usize,
    pub docs: usize,
    /// When `add_documents` was called, seconds from the schedule's start.
    pub start_secs: f64,
    /// When `commit` returned.
    pub end_secs: f64,
    /// `end − start`: the window in which reads count as in-commit.
    pub wall_secs: f64,
    /// `add` (timed by the harness), then the engine's own phases in order.
    pub phases: Vec<Phase>,
    /// How long a reader could have been made to wait, as the engine measures it.
    pub exclusive_ns: Option<u64>,
    /// Hits for the batch's marker word, searched by the committing thread right after
    /// `commit` returned (with `k` above the batch size).
    pub visible_hits: usize,
    /// Exactly the batch's documents came back.
    pub visible: bool,
    pub check_secs: f64,
    /// Other processes' CPU use over this commit's window, in cores.
    #[serde(default)]
    pub others_cpu: Option<f64>,
    /// Why this window's reads may be the machine's (the trial's rules over the window).
    #[serde(default)]
    pub disturbed_reasons: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    pub name: String,
    pub secs: f64,
}

/// Reads of one class (in a commit, or not), by due time.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReadClass {
    /// Requests due in this class: completed + failed + shed.
    pub due: u64,
    pub completed: u64,
    pub shed: u64,
    pub errors: u64,
    /// Due → completion.
    pub latency_us: LatencySummary,
    /// Start of execution → completion.
    pub service_us: LatencySummary,
    /// The worker thread's CPU time per read (absent where not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us: Option<LatencySummary>,
    /// Over HTTP, where the server reports it: its own time per read, and the latency
    /// beyond it, read by read (as the ladder's `server_us` and `added_us`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_us: Option<LatencySummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_us: Option<LatencySummary>,
    pub latency_histogram: HistogramDump,
}

/// One engine at one commit-thread count over the repetitions. Commit figures are per
/// repetition the median over its commits, then spread over repetitions.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialSummary {
    pub engine: String,
    pub commit_threads: usize,
    pub repetitions: usize,
    /// Valid in every repetition.
    pub valid: bool,
    /// A trial or a commit window was disturbed in some repetition (rule 8).
    #[serde(default)]
    pub disturbed: bool,
    /// Every commit of every repetition was visible when it returned, and every
    /// written document at the end.
    pub all_visible: bool,
    pub commits: Spread<u64>,
    pub commit_wall_secs: Option<Spread<f64>>,
    pub phases: Vec<PhaseSpread>,
    pub exclusive_ns: Option<Spread<u64>>,
    pub in_commit: ClassSummary,
    pub outside: ClassSummary,
    pub after: ClassSummary,
    pub rss_change_kib: Option<Spread<i64>>,
    pub rss_peak_kib: Option<Spread<u64>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseSpread {
    pub name: String,
    pub secs: Spread<f64>,
}

/// A [`ReadClass`] over repetitions; a quantile absent in any repetition is absent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassSummary {
    pub due: Spread<u64>,
    pub shed: Spread<u64>,
    pub p50_us: Option<Spread<u64>>,
    pub p90_us: Option<Spread<u64>>,
    pub p99_us: Option<Spread<u64>>,
    pub max_us: Option<Spread<u64>>,
}

/// How a trial's commit threads read in tables and plots: over HTTP (0) the server's own.
pub fn commit_threads_label(threads: usize) -> String {
    match threads {
        0 => "the server's commit threads".to_string(),
        n => crate::progress::plural(n as u64, "commit thread"),
    }
}

/// A trial's commit threads in a table cell: `server` over HTTP (0), else the count.
pub fn threads_cell(threads: usize) -> String {
    match threads {
        0 => "server".to_string(),
        n => n.to_string(),
    }
}
