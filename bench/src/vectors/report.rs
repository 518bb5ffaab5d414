//! The vector comparison's record (JSON), its text table of heddle/peer ratios, and its
//! HTML page with the recall–QPS chart ([`super::svg`]) and the ladder's own sections.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;
use heddle_eval::bench::report::BenchReport;
use heddle_eval::bench::sequential::SequentialReport;
use heddle_eval::html::{Body, Page, Table, environment_body, ladder_sections};
use serde::{Deserialize, Serialize};

use super::child::VectorServeRss;
use super::engines::{VectorBuild, VectorEngine};
use super::sweep::{Matched, Point};
use crate::report::EngineHold;

/// Version of the JSON record's shape.
pub const FORMAT: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SetInfo {
    pub name: String,
    pub describe: String,
    pub base: String,
    pub query_vectors: String,
    pub documents: usize,
    pub queries: usize,
    pub dim: usize,
}

/// One engine's sweep: every effort timed, ascending.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Curve {
    pub engine: VectorEngine,
    pub effort_name: String,
    pub points: Vec<Point>,
}

/// Everything one run measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VectorsReport {
    pub format: u32,
    pub tool: String,
    pub usearch_version: String,
    pub set: SetInfo,
    pub k: usize,
    /// Seconds the brute-force exact answers took (all cores).
    pub truth_seconds: f64,
    pub recall_tolerance: f64,
    pub ladder_recall: f64,
    /// heddle's, then the peer's.
    pub builds: Vec<VectorBuild>,
    pub curves: Vec<Curve>,
    pub matched: Vec<Matched>,
    /// The settings the sequential pass, ladder and memory rungs ran at.
    pub at_ladder: Matched,
    /// Both engines alternating at those settings (empty if skipped).
    pub sequential: Vec<SequentialReport>,
    pub held: Vec<EngineHold>,
    /// heddle's, then the peer's (absent if skipped).
    pub memory: Vec<Option<VectorServeRss>>,
    pub ladder_json: Option<String>,
    pub seconds: f64,
    pub environment: Option<heddle_eval::env::Environment>,
}

/// `12.3 µs`, `1,234 µs`, or `—`.
pub fn us(v: Option<f64>) -> String {
    match v {
        None => "—".to_string(),
        Some(v) if v < 100.0 => format!("{v:.1} µs"),
        Some(v) => format!("{} µs", heddle_eval::progress::thousands(v.round() as u64)),
    }
}

fn ratio(v: Option<f64>) -> String {
    v.map_or("—".to_string(), |r| format!("{r:.2}×"))
}

fn over(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// One line for a target: both settings, their recalls and the check.
pub fn matched_line(m: &Matched) -> String {
    let side = |p: &Option<Point>| match p {
        Some(p) => format!(
            "effort {} (recall {:.4}, p50 {}, p99 {})",
            p.effort,
            p.recall,
            us(p.p50_us.map(|v| v as f64)),
            us(p.p99_us.map(|v| v as f64))
        ),
        None => "not reached".to_string(),
    };
    format!(
        "recall ≥ {}: heddle {}; usearch {}; {}",
        m.target,
        side(&m.heddle),
        side(&m.peer),
        check_words(m)
    )
}

fn check_words(m: &Matched) -> String {
    match (m.equal_recall, m.recall_gap) {
        (true, Some(g)) => format!("equal recall (gap {g:.4})"),
        (false, Some(g)) => format!("NOT at equal recall (gap {g:.4})"),
        _ => "NOT compared: an engine does not reach it".to_string(),
    }
}

/// A figure of both engines and their ratio.
struct Row {
    label: String,
    heddle: String,
    peer: String,
    ratio: Option<f64>,
    note: String,
}

fn rows(r: &VectorsReport) -> Vec<Row> {
    let mut rows = Vec::new();
    for m in &r.matched {
        let pair = |f: fn(&Point) -> Option<f64>| {
            (m.heddle.as_ref().and_then(f), m.peer.as_ref().and_then(f))
        };
        let effort = |p: &Option<Point>| {
            p.as_ref().map_or("—".to_string(), |p| {
                format!("{} ({:.4})", p.effort, p.recall)
            })
        };
        rows.push(Row {
            label: format!("recall ≥ {}: effort (recall)", m.target),
            heddle: effort(&m.heddle),
            peer: effort(&m.peer),
            ratio: None,
            note: check_words(m),
        });
        for (name, f) in [
            (
                "p50",
                (|p: &Point| p.p50_us.map(|v| v as f64)) as fn(&Point) -> Option<f64>,
            ),
            ("p99", |p: &Point| p.p99_us.map(|v| v as f64)),
            ("mean", |p: &Point| p.mean_us),
        ] {
            let (h, p) = pair(f);
            rows.push(Row {
                label: format!("recall ≥ {}: {name}", m.target),
                heddle: us(h),
                peer: us(p),
                ratio: over(h, p),
                note: if m.equal_recall {
                    String::new()
                } else {
                    "not at equal recall".to_string()
                },
            });
        }
    }
    if let [h, p] = &r.sequential[..] {
        for (name, a, b) in [
            ("p50", h.latency_us.p50, p.latency_us.p50),
            ("p99", h.latency_us.p99, p.latency_us.p99),
        ] {
            let (a, b) = (a.map(|v| v as f64), b.map(|v| v as f64));
            rows.push(Row {
                label: format!("sequential, alternating, {name}"),
                heddle: us(a),
                peer: us(b),
                ratio: over(a, b),
                note: format!("at recall ≥ {}", r.ladder_recall),
            });
        }
    }
    if let [h, p] = &r.builds[..] {
        let secs = |b: &VectorBuild| Some(b.seconds);
        rows.push(Row {
            label: format!("build time ({} threads)", h.threads),
            heddle: format!("{:.2} s", h.seconds),
            peer: format!("{:.2} s", p.seconds),
            ratio: over(secs(h), secs(p)),
            note: String::new(),
        });
        let kib = |v: Option<u64>| v.map(|v| v as f64);
        rows.push(Row {
            label: "build peak RSS".to_string(),
            heddle: mib(kib(h.peak_rss_kib)),
            peer: mib(kib(p.peak_rss_kib)),
            ratio: over(kib(h.peak_rss_kib), kib(p.peak_rss_kib)),
            note: "the vectors read are in both".to_string(),
        });
        rows.push(Row {
            label: "index bytes".to_string(),
            heddle: mib(Some(h.bytes as f64 / 1024.0)),
            peer: mib(Some(p.bytes as f64 / 1024.0)),
            ratio: over(Some(h.bytes as f64), Some(p.bytes as f64)),
            note: String::new(),
        });
    }
    if let [Some(h), Some(p)] = &r.memory[..] {
        let kib = |v: Option<u64>| v.map(|v| v as f64);
        rows.push(Row {
            label: "serving peak RSS (VmHWM)".to_string(),
            heddle: mib(kib(h.vm_hwm_kib)),
            peer: mib(kib(p.vm_hwm_kib)),
            ratio: over(kib(h.vm_hwm_kib), kib(p.vm_hwm_kib)),
            note: format!("a rung of {} at {}/s", h.requests, h.rate),
        });
    }
    let held = |name: &str| {
        r.held
            .iter()
            .find(|e| e.engine == name)
            .and_then(|e| e.held.as_ref().map(|h| h.rate))
    };
    if !r.held.is_empty() {
        let (h, p) = (held("heddle"), held("usearch"));
        rows.push(Row {
            label: "highest rate held (ladder)".to_string(),
            heddle: h.map_or("none".to_string(), |v| format!("{v:.0}/s")),
            peer: p.map_or("none".to_string(), |v| format!("{v:.0}/s")),
            ratio: over(h, p),
            note: "above 1: heddle holds more".to_string(),
        });
    }
    rows
}

fn mib(kib: Option<f64>) -> String {
    kib.map_or("—".to_string(), |k| format!("{:.1} MiB", k / 1024.0))
}

/// The text report: the set, the sweep, the matched settings and every ratio.
pub fn render(r: &VectorsReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "== {}: {} × {} vectors, {} queries, recall@{} against brute-force exact search",
        r.set.name, r.set.documents, r.set.dim, r.set.queries, r.k
    );
    if !r.set.describe.is_empty() {
        let _ = writeln!(out, "   {}", r.set.describe);
    }
    for b in &r.builds {
        let _ = writeln!(out, "   {}: {}", b.engine.name(), b.configuration);
    }
    out.push('\n');
    out.push_str(&render_sweep(r));
    out.push('\n');
    let _ = writeln!(
        out,
        "heddle / usearch (above 1: heddle's figure is larger); each target at each engine's cheapest setting reaching it, equal recall = within {}",
        r.recall_tolerance
    );
    let rows = rows(r);
    let w = rows
        .iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(10);
    let _ = writeln!(
        out,
        "{:<w$}  {:>18}  {:>18}  {:>8}  note",
        "figure", "heddle", "usearch", "ratio"
    );
    for row in &rows {
        let _ = writeln!(
            out,
            "{:<w$}  {:>18}  {:>18}  {:>8}  {}",
            row.label,
            row.heddle,
            row.peer,
            ratio(row.ratio),
            row.note
        );
    }
    out
}

/// The sweep as a table: each engine's settings with recall, p50, p99 and QPS.
pub fn render_sweep(r: &VectorsReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<8} {:>7} {:>9} {:>11} {:>11} {:>11} {:>9} {:>8}",
        "engine", "effort", "recall", "p50", "p99", "mean", "QPS (1T)", "samples"
    );
    for c in &r.curves {
        for p in &c.points {
            let _ = writeln!(
                out,
                "{:<8} {:>7} {:>9.4} {:>11} {:>11} {:>11} {:>9} {:>8}",
                c.engine.name(),
                p.effort,
                p.recall,
                us(p.p50_us.map(|v| v as f64)),
                us(p.p99_us.map(|v| v as f64)),
                us(p.mean_us),
                p.qps.map_or("—".to_string(), |q| format!("{q:.0}")),
                p.samples
            );
        }
    }
    out
}

/// Writes report.json, recall-qps.svg and report.html into `out`.
pub fn write_all(
    r: &VectorsReport,
    ladder: Option<&BenchReport>,
    per_query: Option<&str>,
    out: &Path,
) -> anyhow::Result<()> {
    let json = out.join("report.json");
    std::fs::write(&json, serde_json::to_string_pretty(r)?)
        .with_context(|| format!("writing {}", json.display()))?;
    let chart = super::svg::render(r);
    let svg = out.join("recall-qps.svg");
    std::fs::write(&svg, &chart).with_context(|| format!("writing {}", svg.display()))?;
    let html = out.join("report.html");
    page(r, &chart, ladder, per_query).write(&html)?;
    for p in [&json, &svg, &html] {
        eprintln!("vectors: wrote {}", p.display());
    }
    Ok(())
}

/// Reads a report.json.
pub fn read(path: &Path) -> anyhow::Result<VectorsReport> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{}: not a heddle-bench vectors report", path.display()))
}

fn page(
    r: &VectorsReport,
    chart: &str,
    ladder: Option<&BenchReport>,
    per_query: Option<&str>,
) -> Page {
    let date = r
        .environment
        .as_ref()
        .map_or("date unknown".to_string(), |e| e.started_utc.clone());
    let mut page = Page::new(
        &format!(
            "heddle against usearch {} — {}",
            r.usearch_version, r.set.name
        ),
        &format!(
            "{} × {} vectors · {} queries · k {} · {date} · {}",
            r.set.documents, r.set.dim, r.set.queries, r.k, r.tool
        ),
    );
    page.section(
        "environment",
        "Environment",
        environment_body(r.environment.as_ref()),
    );
    let mut set = format!(
        "Documents: {}\nQueries: {}\n",
        r.set.base, r.set.query_vectors
    );
    if !r.set.describe.is_empty() {
        set.push_str(&r.set.describe);
        set.push('\n');
    }
    for b in &r.builds {
        let _ = writeln!(set, "{}: {}", b.engine.name(), b.configuration);
    }
    page.section("set", "The set and the engines", Body::new().pre(&set));
    let table = Table {
        caption: Some(format!(
            "heddle / usearch; above 1: heddle's figure is larger. Each target recall at each engine's cheapest setting reaching it; equal recall = within {}",
            r.recall_tolerance
        )),
        header: ["figure", "heddle", "usearch", "heddle/usearch", "note"]
            .iter()
            .map(|h| h.to_string())
            .collect(),
        rows: rows(r)
            .into_iter()
            .map(|row| {
                (
                    None,
                    vec![row.label, row.heddle, row.peer, ratio(row.ratio), row.note],
                )
            })
            .collect(),
    };
    page.section("ratios", "Ratios", Body::new().table(&table));
    page.section(
        "recall-qps",
        "Recall against queries per second",
        Body::new().svg(
            chart,
            "Each engine's effort swept: recall@k on x, one thread's queries per second on a log y (up and to the right is better); each point labelled with its effort.",
        ),
    );
    page.section("sweep", "The sweep", Body::new().pre(&render_sweep(r)));
    if let Some(l) = ladder {
        ladder_sections(&mut page, l);
    }
    if let Some(text) = per_query {
        page.section(
            "per-query",
            "Per query, heddle against usearch",
            Body::new().pre(text),
        );
    }
    page.section(
        "text",
        "Every figure (the text report)",
        Body::new().pre(&render(r)),
    );
    page
}

/// Several sets' runs in one table: each target's settings and p50/p99 ratios, then each
/// set's build, size and memory ratios.
pub fn render_summary(runs: &[VectorsReport]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "heddle / usearch at equal recall (each engine's cheapest setting reaching the target; one thread, sequential)"
    );
    let _ = writeln!(
        out,
        "{:<12} {:>6}  {:>16} {:>10} {:>10}  {:>16} {:>10} {:>10}  {:>6} {:>6}  check",
        "set",
        "recall",
        "heddle effort",
        "p50",
        "p99",
        "usearch ef",
        "p50",
        "p99",
        "p50 ×",
        "p99 ×"
    );
    for r in runs {
        for m in &r.matched {
            let side = |p: &Option<Point>| match p {
                Some(p) => (
                    format!("{} ({:.3})", p.effort, p.recall),
                    us(p.p50_us.map(|v| v as f64)),
                    us(p.p99_us.map(|v| v as f64)),
                ),
                None => ("not reached".into(), "—".into(), "—".into()),
            };
            let (he, h50, h99) = side(&m.heddle);
            let (pe, p50, p99) = side(&m.peer);
            let _ = writeln!(
                out,
                "{:<12} {:>6}  {:>16} {:>10} {:>10}  {:>16} {:>10} {:>10}  {:>6} {:>6}  {}",
                r.set.name,
                m.target,
                he,
                h50,
                h99,
                pe,
                p50,
                p99,
                ratio(m.p50_ratio),
                ratio(m.p99_ratio),
                if m.equal_recall { "equal" } else { "NOT EQUAL" }
            );
        }
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "{:<12} {:>10} {:>10} {:>12} {:>14} {:>14}",
        "set", "vectors", "build ×", "build RSS ×", "index bytes ×", "serving RSS ×"
    );
    for r in runs {
        let (b_h, b_p) = (r.builds.first(), r.builds.get(1));
        let build = b_h.zip(b_p).map(|(h, p)| h.seconds / p.seconds.max(1e-9));
        let rss = b_h.zip(b_p).and_then(|(h, p)| {
            over(
                h.peak_rss_kib.map(|v| v as f64),
                p.peak_rss_kib.map(|v| v as f64),
            )
        });
        let bytes = b_h
            .zip(b_p)
            .and_then(|(h, p)| over(Some(h.bytes as f64), Some(p.bytes as f64)));
        let serving = match &r.memory[..] {
            [Some(h), Some(p)] => over(
                h.vm_hwm_kib.map(|v| v as f64),
                p.vm_hwm_kib.map(|v| v as f64),
            ),
            _ => None,
        };
        let _ = writeln!(
            out,
            "{:<12} {:>10} {:>10} {:>12} {:>14} {:>14}",
            r.set.name,
            r.set.documents,
            ratio(build),
            ratio(rss),
            ratio(bytes),
            ratio(serving)
        );
    }
    out
}
