//! `heddle-bench scale`: the cost-growth study (issue 18). Reads the comparison runs of
//! one corpus family at several sizes — each a `heddle-bench bench --compare-json` file,
//! labelled by how its indexes were built (`natural`: each engine's own segment count;
//! `one`: merged to one segment) — and writes, per label, a table of every figure for
//! heddle, tantivy and their ratio at each size, with each engine's growth exponent
//! (the slope of log figure against log documents between neighbouring sizes, and the
//! least-squares slope over all of them), and one SVG per family of figures with both
//! engines on a log–log chart.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail, ensure};

use crate::report::{CompareReport, EngineFigures};

/// One measured figure: its name, unit, and how to read it from a run.
struct Figure {
    name: &'static str,
    unit: &'static str,
    family: Family,
    read: fn(&CompareReport, &EngineFigures) -> Option<f64>,
}

/// The figures drawn together in one SVG.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Family {
    Build,
    Size,
    Open,
    Latency,
    Throughput,
}

impl Family {
    const ALL: [Family; 5] = [
        Family::Build,
        Family::Size,
        Family::Open,
        Family::Latency,
        Family::Throughput,
    ];

    fn file_stem(self) -> &'static str {
        match self {
            Family::Build => "scale-build",
            Family::Size => "scale-size",
            Family::Open => "scale-open",
            Family::Latency => "scale-latency",
            Family::Throughput => "scale-throughput",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Family::Build => "Building: time, documents/s and peak RSS",
            Family::Size => "Index size and segments",
            Family::Open => "Opening and serving memory",
            Family::Latency => "Sequential latency",
            Family::Throughput => "Highest open-loop rate held",
        }
    }
}

const MIB: f64 = 1024.0 * 1024.0;

const FIGURES: [Figure; 11] = [
    Figure {
        name: "build time",
        unit: "s",
        family: Family::Build,
        read: |_, e| Some(e.build.seconds),
    },
    Figure {
        name: "documents/s",
        unit: "/s",
        family: Family::Build,
        read: |_, e| Some(e.build.docs_per_sec),
    },
    Figure {
        name: "build peak RSS",
        unit: "MiB",
        family: Family::Build,
        read: |_, e| e.build.peak_rss_kib.map(|k| k as f64 / 1024.0),
    },
    Figure {
        name: "build peak RSS before merges",
        unit: "MiB",
        family: Family::Build,
        read: |_, e| e.build.pre_merge_peak_rss_kib.map(|k| k as f64 / 1024.0),
    },
    Figure {
        name: "index size",
        unit: "MiB",
        family: Family::Size,
        read: |_, e| Some(e.build.bytes as f64 / MIB),
    },
    Figure {
        name: "segments",
        unit: "",
        family: Family::Size,
        read: |_, e| Some(e.build.segments as f64),
    },
    Figure {
        name: "open time",
        unit: "ms",
        family: Family::Open,
        read: |_, e| Some(e.open_secs.median * 1e3),
    },
    Figure {
        name: "serving RSS",
        unit: "MiB",
        family: Family::Open,
        read: |_, e| {
            e.memory
                .as_ref()
                .and_then(|m| m.vm_hwm_kib)
                .map(|k| k as f64 / 1024.0)
        },
    },
    Figure {
        name: "sequential p50",
        unit: "µs",
        family: Family::Latency,
        read: |_, e| sequential(e, |l| l.p50),
    },
    Figure {
        name: "sequential p99",
        unit: "µs",
        family: Family::Latency,
        read: |_, e| sequential(e, |l| l.p99),
    },
    Figure {
        name: "highest rate held",
        unit: "/s",
        family: Family::Throughput,
        read: |r, e| {
            r.held
                .iter()
                .find(|h| h.engine == e.engine)
                .and_then(|h| h.held.as_ref())
                .map(|h| h.rate)
        },
    },
];

/// A quantile of the engine's sequential pass, µs.
fn sequential(
    e: &EngineFigures,
    quantile: fn(&heddle_eval::bench::stats::LatencySummary) -> Option<u64>,
) -> Option<f64> {
    e.sequential
        .as_ref()
        .and_then(|s| quantile(&s.latency_us))
        .map(|v| v as f64)
}

const ENGINES: [&str; 2] = ["heddle", "tantivy"];

/// One labelled run, as given on the command line (`LABEL=FILE`).
pub struct ScaleRun {
    pub label: String,
    pub path: PathBuf,
    pub report: CompareReport,
}

impl ScaleRun {
    /// Reads `LABEL=FILE`.
    pub fn parse(arg: &str) -> anyhow::Result<ScaleRun> {
        let Some((label, file)) = arg.split_once('=') else {
            bail!(
                "{arg:?}: expected LABEL=FILE (e.g. natural=results/scale/171332-natural/compare.json)"
            );
        };
        ensure!(!label.is_empty(), "{arg:?}: the label is empty");
        let path = PathBuf::from(file);
        let report = crate::report::read(&path)?;
        ensure!(
            ENGINES
                .iter()
                .all(|name| report.engines.iter().any(|e| e.engine == *name)),
            "{}: the study needs both heddle and tantivy in every run",
            path.display()
        );
        let run = ScaleRun {
            label: label.to_string(),
            path,
            report,
        };
        ensure!(
            run.docs() > 0,
            "{}: no documents indexed",
            run.path.display()
        );
        Ok(run)
    }

    /// Documents in the corpus (both engines indexed the same number; checked when the
    /// run was made).
    fn docs(&self) -> u64 {
        self.report.engines[0].build.docs
    }

    /// How each engine's index was built, as `heddle-bench bench` recorded it.
    fn settings(&self) -> String {
        self.report
            .engines
            .iter()
            .map(|e| {
                let b = &e.build;
                let memory = match b.memory_bytes {
                    None => "memory not recorded".to_string(),
                    Some(0) => "no budget".to_string(),
                    Some(m) => format!("{} MiB", m >> 20),
                };
                let segments = match b.segment_target {
                    None => "segments not recorded".to_string(),
                    Some(0) => "its own merge policy".to_string(),
                    Some(n) => format!("merged to at most {n}"),
                };
                format!("{}: {} threads, {memory}, {segments}", e.engine, b.threads)
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Refuses a study that cannot be read: two runs of one label at one size (which would
/// the table show?).
pub fn check(runs: &[ScaleRun]) -> anyhow::Result<()> {
    for (i, a) in runs.iter().enumerate() {
        if let Some(b) = runs[..i]
            .iter()
            .find(|b| b.label == a.label && b.docs() == a.docs())
        {
            bail!(
                "{} and {} are both {:?} at {} documents: give each label one run per size",
                b.path.display(),
                a.path.display(),
                a.label,
                a.docs()
            );
        }
    }
    Ok(())
}

/// Every figure of one label: figure → engine → (docs, value) by size.
type Series = BTreeMap<&'static str, BTreeMap<&'static str, Vec<(u64, f64)>>>;

fn series(runs: &[&ScaleRun]) -> Series {
    let mut out = Series::new();
    for run in runs {
        for fig in &FIGURES {
            for e in &run.report.engines {
                let Some(engine) = ENGINES.iter().find(|n| **n == e.engine) else {
                    continue;
                };
                if let Some(v) = (fig.read)(&run.report, e).filter(|v| v.is_finite()) {
                    out.entry(fig.name)
                        .or_default()
                        .entry(engine)
                        .or_default()
                        .push((run.docs(), v));
                }
            }
        }
    }
    for engines in out.values_mut() {
        for points in engines.values_mut() {
            points.sort_by_key(|p| p.0);
        }
    }
    out
}

/// The slope of log value against log docs between two points; `None` if either is not
/// positive or the sizes are equal.
fn slope(a: (u64, f64), b: (u64, f64)) -> Option<f64> {
    let (x0, x1) = ((a.0 as f64).ln(), (b.0 as f64).ln());
    (a.1 > 0.0 && b.1 > 0.0 && x1 != x0).then(|| (b.1.ln() - a.1.ln()) / (x1 - x0))
}

/// The least-squares slope of log value against log docs over every point.
fn fitted_slope(points: &[(u64, f64)]) -> Option<f64> {
    let logs: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.0 > 0 && p.1 > 0.0)
        .map(|p| ((p.0 as f64).ln(), p.1.ln()))
        .collect();
    if logs.len() < 2 {
        return None;
    }
    let n = logs.len() as f64;
    let mx = logs.iter().map(|p| p.0).sum::<f64>() / n;
    let my = logs.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = logs.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = logs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

fn value(v: f64) -> String {
    if v >= 100.0 {
        heddle_eval::progress::thousands(v.round() as u64)
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn exponent(e: Option<f64>) -> String {
    e.map_or("–".to_string(), |e| format!("{e:+.2}"))
}

/// The study as Markdown: per label, one table of every figure at every size, then the
/// growth exponents.
pub fn render(runs: &[ScaleRun]) -> String {
    let mut out = String::new();
    let labels = labels(runs);
    let mut sizes: Vec<u64> = runs.iter().map(ScaleRun::docs).collect();
    sizes.sort_unstable();
    sizes.dedup();
    for label in labels {
        let of_label: Vec<&ScaleRun> = runs.iter().filter(|r| r.label == label).collect();
        let series = series(&of_label);
        let _ = writeln!(out, "### {label}\n");
        let _ = writeln!(out, "Runs:");
        for run in &of_label {
            let _ = writeln!(
                out,
                "- {} documents: `{}` ({}; queries `{}`)",
                heddle_eval::progress::thousands(run.docs()),
                run.path.display(),
                run.settings(),
                run.report.queries
            );
        }
        let _ = writeln!(out);
        let mut head = "| figure |".to_string();
        let mut rule = "|---|".to_string();
        for &n in &sizes {
            let _ = write!(
                head,
                " heddle {n} | tantivy {n} | ratio {n} |",
                n = short_count(n)
            );
            rule.push_str("---|---|---|");
        }
        head.push_str(" heddle exponent | tantivy exponent |");
        rule.push_str("---|---|");
        let _ = writeln!(out, "{head}\n{rule}");
        for fig in &FIGURES {
            let Some(engines) = series.get(fig.name) else {
                continue;
            };
            let unit = if fig.unit.is_empty() {
                String::new()
            } else {
                format!(" ({})", fig.unit)
            };
            let _ = write!(out, "| {}{unit} |", fig.name);
            for &n in &sizes {
                let at = |engine: &str| {
                    engines
                        .get(engine)
                        .and_then(|p| p.iter().find(|p| p.0 == n))
                        .map(|p| p.1)
                };
                let (h, t) = (at("heddle"), at("tantivy"));
                let ratio = match (h, t) {
                    (Some(h), Some(t)) if t > 0.0 => format!("{:.2}", h / t),
                    _ => "–".to_string(),
                };
                let shown = |v: Option<f64>| match v {
                    None => "–".to_string(),
                    // A count (segments) is shown as one.
                    Some(v) if fig.unit.is_empty() => format!("{v:.0}"),
                    Some(v) => value(v),
                };
                let _ = write!(out, " {} | {} | {ratio} |", shown(h), shown(t));
            }
            for engine in ENGINES {
                let points = engines.get(engine).map_or(&[][..], Vec::as_slice);
                let steps: Vec<String> = points
                    .windows(2)
                    .map(|w| exponent(slope(w[0], w[1])))
                    .collect();
                let between = if steps.len() > 1 {
                    format!(" ({})", steps.join(", "))
                } else {
                    String::new()
                };
                let _ = write!(out, " {}{between} |", exponent(fitted_slope(points)));
            }
            let _ = writeln!(out);
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "Exponent: the least-squares slope of log figure against log documents over every \
         size, then (in brackets, with three sizes or more) the slope between each pair of \
         neighbouring sizes; a \
         figure that grows as N^x has exponent x (1: linear, 0: flat)."
    );
    out
}

fn short_count(n: u64) -> String {
    if n >= 1_000_000 {
        let m = n as f64 / 1e6;
        format!("{}M", trim(m))
    } else if n >= 1_000 {
        format!("{}k", trim(n as f64 / 1e3))
    } else {
        n.to_string()
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map_or(s.clone(), str::to_string)
}

/// Writes the table (`scale.md`) and one SVG per figure family into `out`.
pub fn write(runs: &[ScaleRun], out: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let mut written = Vec::new();
    let md = out.join("scale.md");
    std::fs::write(&md, render(runs)).with_context(|| format!("writing {}", md.display()))?;
    written.push(md);
    for family in Family::ALL {
        let path = out.join(format!("{}.svg", family.file_stem()));
        std::fs::write(&path, svg(runs, family))
            .with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

const PANEL_W: f64 = 300.0;
const PANEL_H: f64 = 220.0;
const MARGIN_L: f64 = 64.0;
const MARGIN_T: f64 = 78.0;
const GAP: f64 = 92.0;
/// heddle, tantivy.
const COLOURS: [&str; 2] = ["#1f6fb4", "#d95f02"];
/// One stroke pattern per label, in the order the labels first appear.
const DASHES: [&str; 4] = ["none", "6 4", "2 3", "10 3 2 3"];

/// One drawn line: the label's index, the engine's index, its points.
type Line = (usize, usize, Vec<(u64, f64)>);

/// One family's figures, one panel each: corpus size on a log x axis, the figure on a
/// log y axis, a line per engine and label.
fn svg(runs: &[ScaleRun], family: Family) -> String {
    let figures: Vec<&Figure> = FIGURES.iter().filter(|f| f.family == family).collect();
    let labels = labels(runs);
    let width = MARGIN_L + figures.len() as f64 * (PANEL_W + GAP);
    let height = MARGIN_T + PANEL_H + 70.0 + 18.0 * (labels.len() as f64);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        s,
        r#"<rect width="100%" height="100%" fill="white"/><text x="{MARGIN_L}" y="24" font-size="16">{}</text>"#,
        esc(family.title())
    );
    let _ = writeln!(
        s,
        r##"<text x="{MARGIN_L}" y="44" fill="#555">heddle against tantivy {} by corpus size (log–log); {}</text>"##,
        esc(&runs
            .first()
            .map_or(String::new(), |r| r.report.tantivy_version.clone())),
        esc(&runs
            .first()
            .and_then(|r| r.report.environment.as_ref())
            .map_or("date unknown".to_string(), |e| format!(
                "{} · heddle {}",
                e.started_utc,
                e.build.short()
            )))
    );
    let sizes: Vec<u64> = {
        let mut v: Vec<u64> = runs.iter().map(ScaleRun::docs).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (x_lo, x_hi) = decades(
        sizes.first().copied().unwrap_or(1) as f64,
        sizes.last().copied().unwrap_or(10) as f64,
    );
    for (i, fig) in figures.iter().enumerate() {
        let left = MARGIN_L + i as f64 * (PANEL_W + GAP);
        let lines: Vec<Line> = labels
            .iter()
            .enumerate()
            .flat_map(|(li, label)| {
                let of_label: Vec<&ScaleRun> = runs.iter().filter(|r| r.label == *label).collect();
                let series = series(&of_label);
                ENGINES
                    .iter()
                    .enumerate()
                    .filter_map(|(ei, e)| {
                        series
                            .get(fig.name)
                            .and_then(|m| m.get(e))
                            .map(|p| (li, ei, p.clone()))
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let values: Vec<f64> = lines
            .iter()
            .flat_map(|l| l.2.iter().map(|p| p.1))
            .filter(|v| *v > 0.0)
            .collect();
        let (y_lo, y_hi) = if values.is_empty() {
            (1.0, 10.0)
        } else {
            decades(
                values.iter().copied().fold(f64::INFINITY, f64::min),
                values.iter().copied().fold(0.0, f64::max),
            )
        };
        let px =
            |x: f64| left + (x.log10() - x_lo.log10()) / (x_hi.log10() - x_lo.log10()) * PANEL_W;
        let py = |y: f64| {
            MARGIN_T + PANEL_H
                - (y.max(y_lo).log10() - y_lo.log10()) / (y_hi.log10() - y_lo.log10()) * PANEL_H
        };
        let unit = if fig.unit.is_empty() {
            String::new()
        } else {
            format!(" ({})", fig.unit)
        };
        let _ = writeln!(
            s,
            r##"<text x="{left}" y="{}" font-weight="bold">{}</text><rect x="{left}" y="{MARGIN_T}" width="{PANEL_W}" height="{PANEL_H}" fill="none" stroke="#999"/>"##,
            MARGIN_T - 8.0,
            esc(&format!("{}{unit}", fig.name))
        );
        for tick in log_ticks(y_lo, y_hi) {
            let y = py(tick);
            let _ = writeln!(
                s,
                r##"<line x1="{left}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#eee"/><text x="{:.1}" y="{:.1}" text-anchor="end" fill="#555">{}</text>"##,
                left + PANEL_W,
                left - 4.0,
                y + 4.0,
                esc(&tick_text(tick))
            );
        }
        for &n in &sizes {
            let x = px(n as f64);
            let _ = writeln!(
                s,
                r##"<line x1="{x:.1}" x2="{x:.1}" y1="{MARGIN_T}" y2="{:.1}" stroke="#eee"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" fill="#555">{}</text>"##,
                MARGIN_T + PANEL_H,
                MARGIN_T + PANEL_H + 16.0,
                esc(&short_count(n))
            );
        }
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#555">documents (log)</text>"##,
            left + PANEL_W / 2.0,
            MARGIN_T + PANEL_H + 34.0
        );
        for (li, ei, points) in &lines {
            let path: Vec<String> = points
                .iter()
                .filter(|p| p.1 > 0.0)
                .map(|p| format!("{:.1},{:.1}", px(p.0 as f64), py(p.1)))
                .collect();
            let _ = writeln!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2" stroke-dasharray="{}"/>"#,
                path.join(" "),
                COLOURS[*ei],
                DASHES[li % DASHES.len()]
            );
            for p in path {
                let (x, y) = p.split_once(',').unwrap_or(("0", "0"));
                let _ = writeln!(
                    s,
                    r#"<circle cx="{x}" cy="{y}" r="3" fill="{}"/>"#,
                    COLOURS[*ei]
                );
            }
        }
    }
    // Legend: engines by colour, labels by stroke.
    let mut y = MARGIN_T + PANEL_H + 58.0;
    for (li, label) in labels.iter().enumerate() {
        let mut x = MARGIN_L;
        for (ei, engine) in ENGINES.iter().enumerate() {
            let _ = writeln!(
                s,
                r#"<line x1="{x}" x2="{:.0}" y1="{y:.0}" y2="{y:.0}" stroke="{}" stroke-width="2" stroke-dasharray="{}"/><text x="{:.0}" y="{:.0}">{}</text>"#,
                x + 30.0,
                COLOURS[ei],
                DASHES[li % DASHES.len()],
                x + 36.0,
                y + 4.0,
                esc(&format!("{engine}, {label}"))
            );
            x += 200.0;
        }
        y += 18.0;
    }
    s.push_str("</svg>\n");
    s
}

/// The labels in the order they first appear.
fn labels(runs: &[ScaleRun]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for r in runs {
        if !out.contains(&r.label.as_str()) {
            out.push(&r.label);
        }
    }
    out
}

fn esc(s: &str) -> String {
    heddle_eval::html::escape(s)
}

/// The whole decades around `lo..=hi` (both positive).
fn decades(lo: f64, hi: f64) -> (f64, f64) {
    let lo = 10f64.powf(lo.max(1e-9).log10().floor());
    let mut hi = 10f64.powf(hi.max(1e-9).log10().ceil());
    if hi <= lo {
        hi = lo * 10.0;
    }
    (lo, hi)
}

/// 1, 2 and 5 × 10ⁿ within `lo..=hi`.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut ticks = Vec::new();
    let mut decade = lo;
    while decade <= hi * 1.0001 {
        for m in [1.0, 2.0, 5.0] {
            let t = decade * m;
            if t >= lo * 0.9999 && t <= hi * 1.0001 {
                ticks.push(t);
            }
        }
        decade *= 10.0;
    }
    ticks
}

fn tick_text(v: f64) -> String {
    if v >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if v >= 1e3 {
        format!("{}k", trim(v / 1e3))
    } else if v >= 1.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_growing_as_a_power_has_that_exponent() {
        let points = [(100_000u64, 3.0), (1_000_000, 3.0 * 10f64.powf(0.8))];
        let s = slope(points[0], points[1]).unwrap();
        assert!((s - 0.8).abs() < 1e-9, "{s}");
        let three = [
            (171_332u64, 2.0 * 171_332f64.powf(0.5)),
            (500_000, 2.0 * 500_000f64.powf(0.5)),
            (1_700_000, 2.0 * 1_700_000f64.powf(0.5)),
        ];
        let f = fitted_slope(&three).unwrap();
        assert!((f - 0.5).abs() < 1e-9, "{f}");
        // A flat figure has exponent 0; a zero or a single point has none.
        assert_eq!(slope((1, 5.0), (10, 5.0)), Some(0.0));
        assert_eq!(slope((1, 0.0), (10, 5.0)), None);
        assert_eq!(fitted_slope(&three[..1]), None);
    }

    #[test]
    fn ticks_span_whole_decades() {
        assert_eq!(decades(171_332.0, 1_700_000.0), (100_000.0, 10_000_000.0));
        assert_eq!(log_ticks(100.0, 1000.0), vec![100.0, 200.0, 500.0, 1000.0]);
        assert_eq!(short_count(171_332), "171.3k");
        assert_eq!(short_count(1_700_000), "1.7M");
    }
}
