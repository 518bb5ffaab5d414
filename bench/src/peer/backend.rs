//! An engine in a child process behind the instrument's `Backend`: each `search` is one
//! request over the child-engine protocol ([`crate::protocol`]), made on the calling
//! worker's thread and waited for there, so the open-loop load generator drives it
//! exactly as an in-process engine — latency from each request's due time, its
//! in-flight cap, shedding, the same queries in the same order — and the protocol's
//! cost is inside every latency (the heddle child measures that cost).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use heddle::Analyzer;
use heddle_eval::bench::queries::QueryCycle;
use heddle_eval::bench::stats::{LatencyHistogram, LatencySummary};
use heddle_eval::bench::{Backend, BackendFactory};
use serde::{Deserialize, Serialize};

use crate::engines::{ScoredHit, ScoredSearch};
use crate::protocol::{ChildMemory, ChildProcess};

/// How a child is started and how its queries are written.
#[derive(Clone)]
pub struct ChildSpec {
    /// The engine's name in every report.
    pub name: String,
    /// Makes the command that starts the child serving its index.
    pub command: Arc<dyn Fn() -> Command + Send + Sync>,
    /// What the child is sent for a query: the text itself (the heddle child analyses
    /// it) or heddle's tokens of it, space-separated (Lucene over pre-analysed tokens).
    pub query_form: QueryForm,
    /// Each score the child returns is multiplied by this for the agreement check
    /// (Lucene's BM25 leaves out heddle's constant factor k1 + 1).
    pub score_scale: f64,
    /// The index it serves (for reports).
    pub index: PathBuf,
}

/// What a query becomes on the wire.
#[derive(Clone)]
pub enum QueryForm {
    Text,
    /// Analysed in this process, inside the timed call, by heddle's analyzer.
    Tokens(Arc<Analyzer>),
}

impl QueryForm {
    pub fn apply(&self, query: &str) -> String {
        match self {
            QueryForm::Text => query.to_string(),
            QueryForm::Tokens(a) => a.tokens(query).join(" "),
        }
    }
}

/// The JIT warm-up rule: whole passes over the query set, one query after another,
/// until a pass's mean latency is within `tolerance` of the pass before it (at least
/// `min_passes`, at most `max_passes`). Applied to every child, heddle's too.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct WarmRule {
    pub min_passes: usize,
    pub max_passes: usize,
    pub tolerance: f64,
}

/// What a warm-up did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Warmed {
    pub engine: String,
    pub pass_means_us: Vec<f64>,
    /// Whether the last two passes were within the tolerance.
    pub stable: bool,
}

/// Runs the warm-up rule on `backend`.
pub fn warm(
    backend: &dyn Backend,
    name: &str,
    queries: &QueryCycle,
    k: usize,
    rule: &WarmRule,
) -> Warmed {
    let mut means: Vec<f64> = Vec::new();
    let n = queries.len().max(1);
    let stable = |m: &[f64]| {
        m.len() >= rule.min_passes.max(2) && {
            let (a, b) = (m[m.len() - 2], m[m.len() - 1]);
            (b - a).abs() <= rule.tolerance * a.max(1e-9)
        }
    };
    while means.len() < rule.max_passes.max(1) && !stable(&means) {
        let t = Instant::now();
        for i in 0..n as u64 {
            let _ = backend.search(queries.get(i), k);
        }
        means.push(t.elapsed().as_secs_f64() * 1e6 / n as f64);
        eprintln!(
            "warm-up {name}: pass {} mean {:.1} µs",
            means.len(),
            means[means.len() - 1]
        );
    }
    Warmed {
        engine: name.to_string(),
        stable: stable(&means),
        pass_means_us: means,
    }
}

/// Opens a child engine for the instrument: starts the process, and warms it up by the
/// rule when `warm` holds a query set.
#[derive(Clone)]
pub struct ChildFactory {
    pub spec: ChildSpec,
    pub warm: Option<(Arc<QueryCycle>, usize, WarmRule)>,
    /// Every warm-up this factory ran (for the report).
    pub warmed: Arc<std::sync::Mutex<Vec<Warmed>>>,
}

impl ChildFactory {
    pub fn new(spec: ChildSpec) -> Self {
        ChildFactory {
            spec,
            warm: None,
            warmed: Default::default(),
        }
    }

    /// Starts the child, without the warm-up.
    pub fn start(&self) -> anyhow::Result<ChildBackend> {
        let process = ChildProcess::spawn(&self.spec.name, (self.spec.command)())?;
        Ok(ChildBackend {
            process,
            form: self.spec.query_form.clone(),
            scale: self.spec.score_scale,
            own: Mutex::new(OwnTime::default()),
        })
    }
}

impl BackendFactory for ChildFactory {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn open(&self, _index: &Path) -> anyhow::Result<Arc<dyn Backend>> {
        let backend = self.start()?;
        if let Some((queries, k, rule)) = &self.warm {
            let w = warm(&backend, &self.spec.name, queries, *k, rule);
            self.warmed.lock().expect("poisoned").push(w);
        }
        Ok(Arc::new(backend))
    }

    fn source_dir(&self, _index: &Path) -> PathBuf {
        self.spec.index.clone()
    }
}

/// A running child engine.
pub struct ChildBackend {
    pub process: ChildProcess,
    form: QueryForm,
    scale: f64,
    /// The child's own account of each search it answered since the last
    /// [`take_own_time`](ChildBackend::take_own_time).
    own: Mutex<OwnTime>,
}

/// Each search's searching-thread CPU and service time, as the child reported them.
struct OwnTime {
    cpu: LatencyHistogram,
    service: LatencyHistogram,
    cpu_ns: u64,
    service_ns: u64,
}

impl Default for OwnTime {
    fn default() -> Self {
        OwnTime {
            cpu: LatencyHistogram::new(),
            service: LatencyHistogram::new(),
            cpu_ns: 0,
            service_ns: 0,
        }
    }
}

/// What a child said its searches cost it: the CPU of the thread that ran each one
/// (Lucene's `ThreadMXBean.getCurrentThreadCpuTime`, heddle-child's
/// `CLOCK_THREAD_CPUTIME_ID`) and its own service time, from reading the request to its
/// answer (writing the answer is not in it). The parent's side of the protocol is not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChildTime {
    pub requests: u64,
    /// Per request, µs (rounded up to the µs, as every latency).
    pub cpu_us: LatencySummary,
    pub service_us: LatencySummary,
    /// Exact means from the nanosecond sums, µs.
    pub cpu_mean_us: f64,
    pub service_mean_us: f64,
}

impl ChildBackend {
    fn hits(&self, query: &str, k: usize) -> anyhow::Result<Vec<(f64, String)>> {
        let wire = self.form.apply(query);
        let (hits, service_ns, cpu_ns) = self.process.search(&wire, k)?;
        let mut own = self.own.lock().expect("own time poisoned");
        own.cpu.record_nanos(cpu_ns);
        own.service.record_nanos(service_ns);
        own.cpu_ns += cpu_ns;
        own.service_ns += service_ns;
        Ok(hits)
    }

    /// The child's own CPU and service time per search since the last call, and starts
    /// over; `None` if it answered no search.
    pub fn take_own_time(&self) -> Option<ChildTime> {
        let own = std::mem::take(&mut *self.own.lock().expect("own time poisoned"));
        let n = own.cpu.len();
        (n > 0).then(|| ChildTime {
            requests: n,
            cpu_us: LatencySummary::of(&own.cpu),
            service_us: LatencySummary::of(&own.service),
            cpu_mean_us: own.cpu_ns as f64 / n as f64 / 1e3,
            service_mean_us: own.service_ns as f64 / n as f64 / 1e3,
        })
    }

    /// The child's peak and current memory (/proc) and its managed heap, if any.
    pub fn memory(&self) -> ChildRss {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.process.pid()))
            .unwrap_or_default();
        ChildRss {
            vm_hwm_kib: status_kib(&status, "VmHWM:"),
            rss_anon_kib: status_kib(&status, "RssAnon:"),
            rss_file_kib: status_kib(&status, "RssFile:"),
            heap: self.process.memory(),
        }
    }
}

/// A child's memory as /proc and the child itself report it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ChildRss {
    /// Peak resident set over the child's life, KiB.
    pub vm_hwm_kib: Option<u64>,
    /// Resident anonymous memory (heap, JIT code, thread stacks) now, KiB.
    pub rss_anon_kib: Option<u64>,
    /// Resident file-backed memory (the mapped index, the JVM's own files) now, KiB.
    pub rss_file_kib: Option<u64>,
    /// A JVM's heap and its garbage collections so far.
    pub heap: Option<ChildMemory>,
}

pub(crate) fn status_kib(status: &str, key: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
}

impl Backend for ChildBackend {
    fn search(&self, query: &str, k: usize) -> anyhow::Result<Vec<String>> {
        Ok(self.hits(query, k)?.into_iter().map(|(_, id)| id).collect())
    }

    /// The child's CPU is the system measured, not another tenant's.
    fn local_server(&self) -> Option<u32> {
        Some(self.process.pid())
    }
}

impl ScoredSearch for ChildBackend {
    fn search_scored(&self, query: &str, k: usize) -> anyhow::Result<Vec<ScoredHit>> {
        Ok(self
            .hits(query, k)?
            .into_iter()
            .map(|(score, id)| ScoredHit {
                id,
                score: score * self.scale,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A backend whose passes get faster until they settle.
    struct Settling {
        calls: Mutex<u64>,
    }
    impl Backend for Settling {
        fn search(&self, _q: &str, _k: usize) -> anyhow::Result<Vec<String>> {
            let mut c = self.calls.lock().unwrap();
            *c += 1;
            // 3 queries a pass: the first pass sleeps, the rest do not.
            if *c <= 3 {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Ok(vec![])
        }
    }

    #[test]
    fn the_warm_up_runs_until_two_passes_agree() {
        let b = Settling {
            calls: Mutex::new(0),
        };
        let q = QueryCycle::new(vec!["a".into(), "b".into(), "c".into()], 1);
        let rule = WarmRule {
            min_passes: 2,
            max_passes: 20,
            tolerance: 10.0,
        };
        // A huge tolerance: any two passes agree, so it stops at the minimum.
        assert_eq!(warm(&b, "x", &q, 10, &rule).pass_means_us.len(), 2);
        let b = Settling {
            calls: Mutex::new(0),
        };
        let rule = WarmRule {
            min_passes: 2,
            max_passes: 20,
            tolerance: 0.5,
        };
        let w = warm(&b, "x", &q, 10, &rule);
        // Pass 1 slow (≈5 ms a query), 2 fast: 1→2 differs, 2→3 agrees.
        assert!(w.stable);
        // (Fast passes are sub-µs and noisy, so a later pair may differ too.)
        assert!(w.pass_means_us.len() >= 3, "{:?}", w.pass_means_us);
        let rule = WarmRule {
            min_passes: 1,
            max_passes: 1,
            tolerance: 0.0,
        };
        assert!(!warm(&b, "x", &q, 10, &rule).stable);
    }

    #[test]
    fn reads_proc_status_fields() {
        let s = "VmHWM:\t  1000 kB\nRssAnon:\t 300 kB\nRssFile:\t 600 kB\n";
        assert_eq!(status_kib(s, "VmHWM:"), Some(1000));
        assert_eq!(status_kib(s, "RssFile:"), Some(600));
        assert_eq!(status_kib(s, "RssShmem:"), None);
    }
}
