//! The comparison's own report: every figure of both engines as heddle/tantivy ratios,
//! as a table on stdout and a JSON file, and the median of several runs' JSON files.
//!
//! A ratio above 1 means heddle's figure is the larger: slower, bigger, or (for
//! documents per second) faster. The last column says which, in words.
//!
//! Below the table, issue 6's checks of each engine (`held`): the highest rate it held,
//! and whether under twice that rate it degraded rather than collapsed.

use std::fmt::Write;
use std::path::Path;

use anyhow::Context;
use heddle_eval::bench::report::format::{kib, micros, rate};
use heddle_eval::bench::report::{BenchReport, Table};
use heddle_eval::bench::stats::{Spread, spread};
use heddle_eval::env::render::wrap;
use serde::{Deserialize, Serialize};

use crate::agreement::AgreementReport;
use crate::child::ServeRss;
use crate::engines::BuildStats;
use heddle_eval::bench::sequential::SequentialReport;

pub mod held;
pub mod html;
pub use held::{
    Accounting, EngineHold, HELD_LABEL, HeldRung, OVERLOAD_LABEL, Overload, OverloadRung,
    P99_OVER_LOW_P50, RSS_GROWTH_LIMIT, held_rung, hold, holds, overload,
};

/// Bumped when a field changes meaning or disappears.
pub const COMPARE_FORMAT: u32 = 2;

/// The machine a run measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Machine {
    pub cpu: String,
    pub cores: usize,
    pub memory_kib: Option<u64>,
    /// The 1-minute load average when the run started and when it ended: other work on
    /// a shared machine, which alternation spreads over both engines but cannot remove.
    #[serde(default)]
    pub load_start: Option<f64>,
    #[serde(default)]
    pub load_end: Option<f64>,
}

impl Machine {
    /// This machine, with the load average now as the end of the run.
    pub fn this(load_start: Option<f64>) -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .and_then(|l| l.split_once(':'))
            .map_or("unknown".to_string(), |(_, v)| v.trim().to_string());
        let memory_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().strip_suffix("kB"))
                .and_then(|v| v.trim().parse().ok())
        });
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_kib,
            load_start,
            load_end: heddle_eval::bench::probe::load_average(),
        }
    }
}

/// One engine's figures outside the ladder.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EngineFigures {
    pub engine: String,
    pub build: BuildStats,
    /// The index was reused from an earlier run (its build figures are that run's).
    pub reused: bool,
    /// Seconds to open the index, over `open_rounds` opens alternating with the other
    /// engine's (the files are in the page cache: a warm open).
    pub open_secs: Spread<f64>,
    pub sequential: Option<SequentialReport>,
    pub memory: Option<ServeRss>,
}

/// Whether a larger figure is better for its engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Lower,
    Higher,
}

/// What a ratio measures, for the words in the last column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Time,
    Rate,
    Size,
}

/// One compared figure.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RatioRow {
    /// Stable across runs (a derived ladder's rates are not): `ladder 3 p50`.
    pub key: String,
    /// As shown: `ladder 0.5×C (1,230/s) p50`.
    pub label: String,
    pub kind: Kind,
    pub better: Better,
    pub heddle: Option<f64>,
    pub tantivy: Option<f64>,
    /// heddle / tantivy.
    pub ratio: Option<f64>,
    pub note: String,
    /// Taken from a ladder rung the machine disturbed (docs/PERF.md, rule 8) for either
    /// engine: the ratio may be the machine's (absent from runs before it was marked).
    #[serde(default)]
    pub disturbed: bool,
}

impl RatioRow {
    fn new(key: &str, label: &str, kind: Kind, heddle: Option<f64>, tantivy: Option<f64>) -> Self {
        let ratio = match (heddle, tantivy) {
            (Some(h), Some(t)) if t > 0.0 => Some(h / t),
            _ => None,
        };
        RatioRow {
            key: key.to_string(),
            label: label.to_string(),
            kind,
            better: if kind == Kind::Rate {
                Better::Higher
            } else {
                Better::Lower
            },
            heddle,
            tantivy,
            ratio,
            note: String::new(),
            disturbed: false,
        }
    }

    fn disturbed(mut self, disturbed: bool) -> Self {
        self.disturbed = disturbed;
        self
    }

    fn note(mut self, note: &str) -> Self {
        self.note = note.to_string();
        self
    }
}

/// The whole comparison run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompareReport {
    pub format: u32,
    pub tool: String,
    pub tantivy_version: String,
    /// `matched` or `native`.
    pub analysis: String,
    pub analysis_label: String,
    pub corpus: String,
    pub queries: String,
    pub machine: Machine,
    pub engines: Vec<EngineFigures>,
    pub agreement: Option<AgreementReport>,
    /// The ladder's JSON (`--json`), if written.
    pub ladder_json: Option<String>,
    /// The rate of the memory rung each engine ran in a process of its own.
    pub memory_rate: Option<f64>,
    pub ratios: Vec<RatioRow>,
    /// Issue 6's checks per engine: the highest rate held, and what it did under twice
    /// that (absent from runs before them).
    #[serde(default)]
    pub held: Vec<EngineHold>,
    /// The sequential pass query by query: ratio distribution, worst queries, classes
    /// (absent from runs before it, and when the pass did not run).
    #[serde(default)]
    pub per_query: Option<heddle_eval::bench::sequential::per_query::PerQueryReport>,
    /// Where and on what the run was measured: build, machine, the workdir's storage
    /// and fsync cost, load (absent from runs before it).
    #[serde(default)]
    pub environment: Option<heddle_eval::env::Environment>,
}

fn secs_to_us(s: f64) -> u64 {
    (s * 1e6).round() as u64
}

/// Every ratio of one run.
pub fn ratios(engines: &[EngineFigures], ladder: Option<&BenchReport>) -> Vec<RatioRow> {
    let get = |name: &str| engines.iter().find(|e| e.engine == name);
    let (Some(h), Some(t)) = (get("heddle"), get("tantivy")) else {
        return Vec::new();
    };
    let mut rows = vec![
        RatioRow::new(
            "build seconds",
            "index build time",
            Kind::Time,
            Some(h.build.seconds),
            Some(t.build.seconds),
        ),
        RatioRow::new(
            "build docs/s",
            "documents per second",
            Kind::Rate,
            Some(h.build.docs_per_sec),
            Some(t.build.docs_per_sec),
        ),
        RatioRow::new(
            "index bytes",
            "index size on disk",
            Kind::Size,
            Some(h.build.bytes as f64),
            Some(t.build.bytes as f64),
        ),
        RatioRow::new(
            "build peak rss",
            "build peak RSS (own process)",
            Kind::Size,
            h.build.peak_rss_kib.map(|k| k as f64 * 1024.0),
            t.build.peak_rss_kib.map(|k| k as f64 * 1024.0),
        ),
        RatioRow::new(
            "open seconds",
            "open time (median, warm cache)",
            Kind::Time,
            Some(h.open_secs.median),
            Some(t.open_secs.median),
        ),
    ];
    if let (Some(hs), Some(ts)) = (&h.sequential, &t.sequential) {
        for (q, hv, tv) in [
            ("p50", hs.latency_us.p50, ts.latency_us.p50),
            ("p99", hs.latency_us.p99, ts.latency_us.p99),
            ("max", hs.latency_us.max, ts.latency_us.max),
        ] {
            rows.push(RatioRow::new(
                &format!("sequential {q}"),
                &format!("sequential {q}"),
                Kind::Time,
                hv.map(|v| v as f64 / 1e6),
                tv.map(|v| v as f64 / 1e6),
            ));
        }
    }
    if let Some(l) = ladder {
        rows.extend(ladder_rows(l));
        rows.extend(held_row(&holds(l)));
    }
    if let (Some(hm), Some(tm)) = (&h.memory, &t.memory) {
        let kib_row = |key: &str, label: &str, a: Option<u64>, b: Option<u64>| {
            RatioRow::new(
                key,
                label,
                Kind::Size,
                a.map(|k| k as f64 * 1024.0),
                b.map(|k| k as f64 * 1024.0),
            )
        };
        rows.push(kib_row(
            "serve peak rss",
            "serving peak RSS (own process, VmHWM)",
            hm.vm_hwm_kib,
            tm.vm_hwm_kib,
        ));
        rows.push(kib_row(
            "serve anon peak",
            "  of which anonymous (rung peak)",
            hm.rss_anon_peak_kib,
            tm.rss_anon_peak_kib,
        ));
        rows.push(kib_row(
            "serve file peak",
            "  of which file-backed (rung peak)",
            hm.rss_file_peak_kib,
            tm.rss_file_peak_kib,
        ));
    }
    rows
}

/// p50 and p99 at every rung, from the ladder's summary (medians over repetitions).
fn ladder_rows(l: &BenchReport) -> Vec<RatioRow> {
    let mut rows = Vec::new();
    for (i, &r) in l.ladder.rates.iter().enumerate() {
        let find = |e: &str| l.summary.iter().find(|s| s.engine == e && s.rung == i);
        let (Some(h), Some(t)) = (find("heddle"), find("tantivy")) else {
            continue;
        };
        let at = held::at(r, held::fraction_of_c(l, i));
        let note = match (h.overloaded, t.overloaded) {
            (true, true) => "both OVERLOADED: compares shedding",
            (true, false) => "heddle OVERLOADED: compares shedding",
            (false, true) => "tantivy OVERLOADED: compares shedding",
            _ if !h.valid || !t.valid => "invalid rung",
            _ => "",
        };
        let disturbed = h.disturbed || t.disturbed;
        for (q, hv, tv) in [
            ("p50", &h.p50_us, &t.p50_us),
            ("p99", &h.p99_us, &t.p99_us),
            ("cpu p50", &h.cpu_p50_us, &t.cpu_p50_us),
        ] {
            if q.starts_with("cpu") && (hv.is_none() || tv.is_none()) {
                continue; // a ladder from before CPU time was measured
            }
            rows.push(
                RatioRow::new(
                    &format!("ladder {} {q}", i + 1),
                    &format!("ladder {at} {q}"),
                    Kind::Time,
                    hv.map(|s| s.median as f64 / 1e6),
                    tv.map(|s| s.median as f64 / 1e6),
                )
                .note(note)
                .disturbed(disturbed),
            );
        }
    }
    // The top rung is past both engines' capacity by design: what each completed there
    // is its throughput under overload, on this machine at that moment.
    if let Some(top) = l.ladder.rates.len().checked_sub(1) {
        let find = |e: &str| l.summary.iter().find(|s| s.engine == e && s.rung == top);
        if let (Some(h), Some(t)) = (find("heddle"), find("tantivy")) {
            let note = if h.overloaded && t.overloaded {
                ""
            } else {
                "not both overloaded: a lower bound on throughput"
            };
            rows.push(
                RatioRow::new(
                    "ladder top achieved",
                    &format!(
                        "throughput at the top rung ({}/s offered)",
                        rate(l.ladder.rates[top])
                    ),
                    Kind::Rate,
                    Some(h.achieved_rate.median),
                    Some(t.achieved_rate.median),
                )
                .note(note)
                .disturbed(h.disturbed || t.disturbed),
            );
        }
    }
    rows
}

/// The highest rate each engine held, as a ratio (held::held_rung has the rule).
fn held_row(holds: &[EngineHold]) -> Option<RatioRow> {
    let get = |name: &str| holds.iter().find(|h| h.engine == name);
    let (h, t) = (get("heddle")?, get("tantivy")?);
    let rate = |e: &EngineHold| e.held.as_ref().map(|r| r.rate);
    let mut notes = Vec::new();
    for e in [h, t] {
        match &e.held {
            None => notes.push(format!("{} holds no rung", e.engine)),
            Some(r) if r.top => {
                notes.push(format!("{} held the top rung: a lower bound", e.engine))
            }
            Some(_) => {}
        }
    }
    Some(
        RatioRow::new("held rate", HELD_LABEL, Kind::Rate, rate(h), rate(t))
            .note(&notes.join("; ")),
    )
}

fn show(kind: Kind, v: f64) -> String {
    match kind {
        Kind::Time if v < 1.0 => micros(secs_to_us(v)),
        Kind::Time => format!("{v:.2}s"),
        Kind::Rate => format!("{v:.0}/s"),
        Kind::Size => kib((v / 1024.0).round() as u64),
    }
}

/// `heddle 1.80× slower`, `heddle 1.25× smaller`, `same`.
fn reading(row: &RatioRow, ratio: f64) -> String {
    if (ratio - 1.0).abs() < 0.005 {
        return "same".to_string();
    }
    let heddle_larger = ratio > 1.0;
    let factor = if heddle_larger { ratio } else { 1.0 / ratio };
    let word = match (row.kind, heddle_larger) {
        (Kind::Time, true) => "slower",
        (Kind::Time, false) => "faster",
        (Kind::Rate, true) => "faster",
        (Kind::Rate, false) => "slower",
        (Kind::Size, true) => "larger",
        (Kind::Size, false) => "smaller",
    };
    format!("heddle {factor:.2}× {word}")
}

/// Labels longer than this keep their parenthesis as a numbered note under the table.
const LABEL_MAX: usize = 40;

/// What would widen the ratio table past 100 columns, as numbered notes under it: a long
/// label's parenthesis and a row's note. Equal texts share a number.
#[derive(Default)]
struct Footnotes(Vec<String>);

impl Footnotes {
    fn mark(&mut self, text: String) -> String {
        let n = match self.0.iter().position(|t| *t == text) {
            Some(i) => i + 1,
            None => {
                self.0.push(text);
                self.0.len()
            }
        };
        format!("[{n}]")
    }

    /// `label` as it is if short; else `head [n]`, its parenthesis the note.
    fn label(&mut self, label: &str) -> String {
        match label.split_once(" (") {
            Some((head, rest)) if label.chars().count() > LABEL_MAX => {
                let why = rest.strip_suffix(')').unwrap_or(rest);
                format!("{head} {}", self.mark(format!("{head}: {why}")))
            }
            _ => label.to_string(),
        }
    }

    fn render(&self, out: &mut String) {
        for (i, text) in self.0.iter().enumerate() {
            for line in wrap(&format!("[{}] {text}", i + 1)) {
                let _ = writeln!(out, "{line}");
            }
        }
    }
}

/// What marks a ratio from a disturbed rung, and what the mark means.
fn disturbed_mark(disturbed: bool) -> &'static str {
    if disturbed { " D" } else { "" }
}

const DISTURBED_LEGEND: &str = "D: from a ladder rung the machine disturbed for either engine \
     (docs/PERF.md, rule 8): the ratio may be the machine's; the cpu rows are the least affected";

/// The ratio table of one run.
pub fn render_ratios(report: &CompareReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "heddle vs tantivy {} — {}",
        report.tantivy_version, report.analysis_label
    );
    let m = &report.machine;
    let load = |l: Option<f64>| l.map_or("?".to_string(), |l| format!("{l:.2}"));
    let _ = writeln!(
        out,
        "  corpus {}, queries {}; machine: {}, {} cores, load average {} at start, {} at end",
        report.corpus,
        report.queries,
        m.cpu,
        m.cores,
        load(m.load_start),
        load(m.load_end)
    );
    if let Some(env) = &report.environment {
        for line in heddle_eval::env::render::header(env) {
            let _ = writeln!(out, "{line}");
        }
    }
    for e in &report.engines {
        let b = &e.build;
        let phases: Vec<String> = b
            .phases
            .iter()
            .map(|(p, s)| format!("{p} {s:.2}s"))
            .collect();
        let _ = writeln!(
            out,
            "  {}: {} docs, {} segment{}, {} indexing threads{}; {}",
            e.engine,
            b.docs,
            b.segments,
            if b.segments == 1 { "" } else { "s" },
            b.threads,
            if e.reused { " (reused index)" } else { "" },
            phases.join(", ")
        );
    }
    if let Some(a) = &report.agreement {
        let _ = writeln!(
            out,
            "  agreement: {:.1}% of {} queries agree on the top {} ({} identical, {} tied at the cut); {} more differ by tantivy's length code alone, {} otherwise",
            100.0 * a.agreeing,
            a.queries,
            a.k,
            a.identical,
            a.tie_at_cut,
            a.length_code,
            a.differs
        );
    }
    if let Some(r) = report.memory_rate {
        let _ = writeln!(
            out,
            "  RSS: each engine in a fresh process (open, warm-up, one open-loop rung at {}/s)",
            rate(r)
        );
    }
    let mut t = Table::new(&["figure", "heddle", "tantivy", "heddle/tantivy", "reading"]);
    let mut notes = Footnotes::default();
    for row in &report.ratios {
        let cell = |v: Option<f64>| v.map_or("-".to_string(), |v| show(row.kind, v));
        let label = notes.label(&row.label);
        let mut reading_cell = row.ratio.map_or(String::new(), |r| reading(row, r));
        if !row.note.is_empty() {
            reading_cell = format!("{reading_cell} {}", notes.mark(row.note.clone()))
                .trim_start()
                .to_string();
        }
        t.row(vec![
            label,
            cell(row.heddle),
            cell(row.tantivy),
            row.ratio.map_or("-".to_string(), |r| {
                format!("{r:.2}×{}", disturbed_mark(row.disturbed))
            }),
            reading_cell,
        ]);
    }
    let _ = writeln!(
        out,
        "\nratios (heddle / tantivy; above 1: heddle's figure is larger)"
    );
    out.push_str(&t.render());
    if report.ratios.iter().any(|r| r.disturbed) {
        let _ = writeln!(out, "{DISTURBED_LEGEND}");
    }
    notes.render(&mut out);
    out.push_str(&held::render(&report.held));
    // The prose above the table, wrapped where it runs past 100 columns.
    out.lines().flat_map(wrap).map(|l| l + "\n").collect()
}

/// Reads one run's JSON. Format 1's per-query section had two engines' fields by
/// name; it is left out of an older run rather than misread (nothing combines it).
pub fn read(path: &Path) -> anyhow::Result<CompareReport> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut json: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    if json.get("format").and_then(serde_json::Value::as_u64) < Some(2)
        && let Some(object) = json.as_object_mut()
    {
        object.remove("per_query");
    }
    serde_json::from_value(json).with_context(|| format!("parsing {}", path.display()))
}

/// Writes one run's JSON (its directory exists: `heddle_eval::output`).
pub fn write(report: &CompareReport, path: &Path) -> anyhow::Result<()> {
    std::fs::write(path, serde_json::to_string_pretty(report)?)
        .with_context(|| format!("writing {}", path.display()))
}

/// Several runs' ratios: for each figure, each engine's median [min–max] over runs and
/// the ratio's median [min–max] (of the per-run ratios; each run's engines ran
/// alternating, so a run's ratio is the comparable unit).
pub fn render_summary(runs: &[CompareReport]) -> String {
    let mut out = String::new();
    let Some(first) = runs.first() else {
        return out;
    };
    let _ = writeln!(
        out,
        "{} runs of heddle vs tantivy {} — {}; median [min–max] over runs",
        runs.len(),
        first.tantivy_version,
        first.analysis_label
    );
    let loads: Vec<String> = runs
        .iter()
        .map(|r| {
            let l = |x: Option<f64>| x.map_or("?".to_string(), |x| format!("{x:.1}"));
            format!("{}→{}", l(r.machine.load_start), l(r.machine.load_end))
        })
        .collect();
    let _ = writeln!(
        out,
        "  machine: {}, {} cores; load average per run (start→end): {}",
        first.machine.cpu,
        first.machine.cores,
        loads.join(", ")
    );
    // Which recorded fields differ between the runs combined here, and whether the CPU,
    // kernel or storage does (then the runs are not comparable).
    let envs: Vec<&heddle_eval::env::Environment> =
        runs.iter().filter_map(|r| r.environment.as_ref()).collect();
    if envs.len() < runs.len() {
        let _ = writeln!(
            out,
            "  {} of {} runs record no environment: whether they compare is unknown",
            runs.len() - envs.len(),
            runs.len()
        );
    }
    if envs.len() > 1 {
        let labels: Vec<String> = (1..=envs.len()).map(|i| format!("run {i}")).collect();
        for line in heddle_eval::env::compare(&envs).lines(&labels) {
            let _ = writeln!(out, "  {line}");
        }
    }
    let agreeing: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.agreement.as_ref().map(|a| a.agreeing * 100.0))
        .collect();
    let explained: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.agreement.as_ref().map(|a| a.agreeing_explained * 100.0))
        .collect();
    if let (Some(s), Some(e)) = (spread(&agreeing), spread(&explained)) {
        let _ = writeln!(
            out,
            "  agreement: {} % of queries identical or tied at the cut; {} % with those differing by the length code alone",
            fmt_spread(&s, |v| format!("{v:.1}")),
            fmt_spread(&e, |v| format!("{v:.1}"))
        );
    }
    let mut t = Table::new(&["figure", "heddle", "tantivy", "heddle/tantivy", "reading"]);
    let mut notes = Footnotes::default();
    for row in &first.ratios {
        let same: Vec<&RatioRow> = runs
            .iter()
            .filter_map(|r| r.ratios.iter().find(|x| x.key == row.key))
            .collect();
        let col = |get: fn(&RatioRow) -> Option<f64>| -> Option<Spread<f64>> {
            let v: Vec<f64> = same.iter().filter_map(|r| get(r)).collect();
            if v.len() == same.len() {
                spread(&v)
            } else {
                None
            }
        };
        let (h, tv, ratio) = (col(|r| r.heddle), col(|r| r.tantivy), col(|r| r.ratio));
        let label = if !row.key.starts_with("ladder") {
            notes.label(&row.label)
        } else {
            // Rates differ between runs of a derived ladder: show the fraction only.
            row.label
                .split_once(" (")
                .map_or(row.label.clone(), |(a, b)| {
                    format!("{a}{}", b.split_once(')').map_or("", |(_, q)| q))
                })
        };
        let noted: Vec<&str> = same
            .iter()
            .map(|r| r.note.as_str())
            .filter(|n| !n.is_empty())
            .collect();
        let mut reading_cell = ratio.map_or(String::new(), |s| reading(row, s.median));
        if !noted.is_empty() {
            let note = format!(
                "{} of {}: {}",
                noted.len(),
                heddle_eval::progress::plural(same.len() as u64, "run"),
                noted[0]
            );
            reading_cell = format!("{reading_cell} {}", notes.mark(note))
                .trim_start()
                .to_string();
        }
        let disturbed = same.iter().any(|r| r.disturbed);
        t.row(vec![
            label,
            h.map_or("-".into(), |s| fmt_spread(&s, |v| show(row.kind, v))),
            tv.map_or("-".into(), |s| fmt_spread(&s, |v| show(row.kind, v))),
            ratio.map_or("-".into(), |s| {
                fmt_spread(&s, |v| format!("{v:.2}×")) + disturbed_mark(disturbed)
            }),
            reading_cell,
        ]);
    }
    out.push_str(&t.render());
    if runs.iter().flat_map(|r| &r.ratios).any(|r| r.disturbed) {
        let _ = writeln!(out, "{DISTURBED_LEGEND} (in any run)");
    }
    notes.render(&mut out);
    let held: Vec<&[EngineHold]> = runs.iter().map(|r| r.held.as_slice()).collect();
    out.push_str(&held::render_runs(&held));
    out.lines().flat_map(wrap).map(|l| l + "\n").collect()
}

pub(crate) fn fmt_spread(s: &Spread<f64>, f: impl Fn(f64) -> String) -> String {
    let (m, a, b) = (f(s.median), f(s.min), f(s.max));
    if a == b {
        m
    } else {
        format!("{m} [{a}–{b}]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kind: Kind, h: f64, t: f64) -> RatioRow {
        RatioRow::new("k", "k", kind, Some(h), Some(t))
    }

    #[test]
    fn ratios_read_in_words_the_right_way_round() {
        let slow = row(Kind::Time, 2.0, 1.0);
        assert_eq!(slow.ratio, Some(2.0));
        assert_eq!(reading(&slow, 2.0), "heddle 2.00× slower");
        assert_eq!(
            reading(&row(Kind::Time, 1.0, 2.0), 0.5),
            "heddle 2.00× faster"
        );
        let rate = row(Kind::Rate, 300.0, 100.0);
        assert_eq!(rate.better, Better::Higher);
        assert_eq!(reading(&rate, 3.0), "heddle 3.00× faster");
        assert_eq!(
            reading(&row(Kind::Size, 1.0, 4.0), 0.25),
            "heddle 4.00× smaller"
        );
        assert_eq!(reading(&row(Kind::Size, 1.0, 1.0), 1.0), "same");
        assert_eq!(
            RatioRow::new("k", "k", Kind::Time, Some(1.0), None).ratio,
            None
        );
    }

    fn engine_hold(engine: &str, rate: Option<f64>, top: bool) -> EngineHold {
        EngineHold {
            engine: engine.to_string(),
            low_p50_us: Some(100),
            p99_bound_us: Some(1_000),
            held: rate.map(|rate| HeldRung {
                rung: 0,
                rate,
                fraction: None,
                p99_us: 500,
                top,
            }),
            overload: None,
            per_repetition: Vec::new(),
            rate_spread: None,
        }
    }

    #[test]
    fn the_held_rate_row_is_heddle_over_tantivy_and_never_invents_a_rate() {
        let row = held_row(&[
            engine_hold("tantivy", Some(1_000.0), false),
            engine_hold("heddle", Some(1_500.0), true),
        ])
        .unwrap();
        assert_eq!(
            (row.key.as_str(), row.label.as_str()),
            ("held rate", HELD_LABEL)
        );
        assert_eq!((row.kind, row.better), (Kind::Rate, Better::Higher));
        assert_eq!(row.ratio, Some(1.5));
        assert_eq!(row.note, "heddle held the top rung: a lower bound");
        let row = held_row(&[
            engine_hold("heddle", Some(1_500.0), false),
            engine_hold("tantivy", None, false),
        ])
        .unwrap();
        assert_eq!((row.tantivy, row.ratio), (None, None));
        assert_eq!(row.note, "tantivy holds no rung");
    }

    #[test]
    fn a_report_written_before_the_held_checks_still_reads() {
        let report = CompareReport {
            format: COMPARE_FORMAT,
            tool: "t".to_string(),
            tantivy_version: "0".to_string(),
            analysis: "matched".to_string(),
            analysis_label: "matched".to_string(),
            corpus: "c".to_string(),
            queries: "q".to_string(),
            machine: Machine {
                cpu: "cpu".to_string(),
                cores: 2,
                memory_kib: None,
                load_start: None,
                load_end: None,
            },
            engines: Vec::new(),
            agreement: None,
            ladder_json: None,
            memory_rate: None,
            ratios: Vec::new(),
            held: vec![engine_hold("heddle", Some(1.0), false)],
            per_query: None,
            environment: None,
        };
        let mut json = serde_json::to_value(&report).unwrap();
        json.as_object_mut().unwrap().remove("held");
        json.as_object_mut().unwrap().remove("per_query");
        let old: CompareReport = serde_json::from_value(json).unwrap();
        assert!(old.held.is_empty());
        assert!(!render_ratios(&old).contains(HELD_LABEL));
        assert!(render_ratios(&report).contains(HELD_LABEL));
    }

    /// Issue 17: the ratio table was 149 columns wide (a label's explanation and a row's
    /// note in the cells); they are numbered notes under it now.
    #[test]
    fn the_ratio_table_fits_100_columns_with_its_explanations_as_notes() {
        let mut top = RatioRow::new(
            "top",
            "throughput at the top rung (200/s offered)",
            Kind::Rate,
            Some(201.0),
            Some(200.0),
        );
        top.note = "not both overloaded: a lower bound on throughput".to_string();
        let mut held = RatioRow::new("held", HELD_LABEL, Kind::Rate, None, None);
        held.note = "heddle holds no rung; tantivy holds no rung".to_string();
        let report = CompareReport {
            format: COMPARE_FORMAT,
            tool: "t".to_string(),
            tantivy_version: "0".to_string(),
            analysis: "matched".to_string(),
            analysis_label: "matched".to_string(),
            corpus: "a/rather/long/path/to/a/corpus/directory/corpus.jsonl".to_string(),
            queries: "a/rather/long/path/to/a/corpus/directory/queries.jsonl".to_string(),
            machine: Machine::this(None),
            engines: Vec::new(),
            agreement: None,
            ladder_json: None,
            memory_rate: None,
            ratios: vec![
                RatioRow::new(
                    "build",
                    "index build time",
                    Kind::Time,
                    Some(1.0),
                    Some(2.0),
                ),
                top,
                held,
            ],
            held: vec![engine_hold("heddle", Some(1.0), false)],
            per_query: None,
            environment: None,
        };
        for text in [
            render_ratios(&report),
            render_summary(&[report.clone(), report.clone(), report]),
        ] {
            for line in text.lines() {
                assert!(line.chars().count() <= 100, "{line}\n{text}");
            }
            assert!(text.contains("throughput at the top rung [1]"), "{text}");
            assert!(
                text.contains("[1] throughput at the top rung: 200/s offered"),
                "{text}"
            );
            assert!(text.contains("same [2]"), "{text}");
            assert!(
                text.contains("not both overloaded: a lower bound on throughput"),
                "{text}"
            );
            assert!(text.contains("highest rate held ["), "{text}");
        }
    }

    #[test]
    fn summarise_names_the_fields_that_differ_and_refuses_another_kernel() {
        let tmp = std::env::temp_dir().join("heddle-bench-env-test");
        let env = heddle_eval::env::Environment::capture(&tmp);
        let mut run = CompareReport {
            format: COMPARE_FORMAT,
            tool: "t".to_string(),
            tantivy_version: "0".to_string(),
            analysis: "matched".to_string(),
            analysis_label: "matched".to_string(),
            corpus: "c".to_string(),
            queries: "q".to_string(),
            machine: Machine::this(None),
            engines: Vec::new(),
            agreement: None,
            ladder_json: None,
            memory_rate: None,
            ratios: Vec::new(),
            held: Vec::new(),
            per_query: None,
            environment: Some(env.clone()),
        };
        let same = render_summary(&[run.clone(), run.clone()]);
        assert!(same.contains("every recorded field is the same"), "{same}");
        let mut other = run.clone();
        other.environment.as_mut().unwrap().machine.kernel = Some("9.9.9-other".to_string());
        let text = render_summary(&[run.clone(), other]);
        assert!(text.contains("kernel (kernel): run 1 "), "{text}");
        assert!(
            text.contains("run 2 9.9.9-other") && text.contains("NOT COMPARABLE"),
            "{text}"
        );
        run.environment = None;
        let text = render_summary(&[run.clone(), run]);
        assert!(text.contains("2 of 2 runs record no environment"), "{text}");
    }

    #[test]
    fn times_show_in_the_instruments_units() {
        assert_eq!(show(Kind::Time, 0.000_412), "412µs");
        assert_eq!(show(Kind::Time, 12.5), "12.50s");
        assert_eq!(show(Kind::Size, 2.0 * 1024.0 * 1024.0), "2.0M");
    }
}
