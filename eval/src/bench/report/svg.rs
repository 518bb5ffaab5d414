//! The plot: latency quantiles (p50, p90, p99, p99.9 and max) against offered rate,
//! latency on a log axis, one colour per engine, one line style per quantile, overloaded
//! rungs marked; under it a small panel of what each rung achieved (achieved ÷ offered
//! rate, and the requests shed). Hand-written SVG: a few shapes do not need a plotting
//! crate.
//!
//! The x axis follows one rule in every chart, so that two charts can be laid side by
//! side: offered rate on a log scale spanning whole decades, from the decade at or below
//! the lowest rung to the decade at or above the highest, with ticks at 1, 2 and 5 × 10ⁿ.
//! A rung sits where its rate falls on that fixed scale (docs/PERF.md, "The plot").

use std::fmt::Write;

use super::format::{micros, rate};
use super::{BenchReport, LadderRule, RungSummary, Settings};
use crate::bench::stats::Spread;
use crate::env::Environment;
use crate::html::escape as esc;

const W: f64 = 960.0;
const H: f64 = 780.0;
const LEFT: f64 = 84.0;
const RIGHT: f64 = 700.0;
const TOP: f64 = 104.0;
const BOTTOM: f64 = 520.0;
/// The achieved-rate panel under the plot.
const LOW_TOP: f64 = 600.0;
const LOW_BOTTOM: f64 = 710.0;

const PALETTE: [&str; 6] = [
    "#1f6fb4", "#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e",
];
const OVERLOAD: &str = "#c0392b";
/// Rungs the machine may have disturbed: a dashed ring around the marker.
const DISTURBED: &str = "#e69f00";

/// The quantiles drawn, with their stroke pattern and marker. p90 is the tail a short
/// run has (1,000 requests); max is every run's, however short.
const SERIES: [(&str, &str, Marker); 5] = [
    ("p50", "", Marker::Circle),
    ("p90", "10 3 2 3", Marker::Diamond),
    ("p99", "7 4", Marker::Square),
    ("p99.9", "2 3", Marker::Triangle),
    ("max", "1 4", Marker::Cross),
];

#[derive(Clone, Copy)]
enum Marker {
    Circle,
    Diamond,
    Square,
    Triangle,
    Cross,
}

fn quantile(s: &RungSummary, label: &str) -> Option<Spread<u64>> {
    match label {
        "p50" => s.p50_us,
        "p90" => s.p90_us,
        "p99" => s.p99_us,
        "p99.9" => s.p999_us,
        _ => s.max_us,
    }
}

/// An axis mapping a data range onto pixels, log or linear.
pub(crate) struct Axis {
    pub lo: f64,
    pub hi: f64,
    pub log: bool,
    pub from: f64,
    pub to: f64,
}

impl Axis {
    pub fn px(&self, v: f64) -> f64 {
        let (v, lo, hi) = if self.log {
            (v.max(1e-9).log10(), self.lo.log10(), self.hi.log10())
        } else {
            (v, self.lo, self.hi)
        };
        self.from + (v - lo) / (hi - lo) * (self.to - self.from)
    }
}

/// What a chart was measured on, for its subtitle: the index, the query file, when the
/// run started and which heddle build ran it.
pub(crate) fn provenance(settings: &Settings, env: Option<&Environment>) -> String {
    provenance_lines(settings, env).join(" · ")
}

/// [`provenance`] as two lines for a chart (`index … · queries …`, then the date and the
/// build), paths longer than fit shortened from the left with `…`.
pub(crate) fn provenance_lines(settings: &Settings, env: Option<&Environment>) -> [String; 2] {
    let (date, build) = match env {
        Some(e) => (e.started_utc.clone(), e.build.short()),
        None => (
            "date unknown".to_string(),
            crate::env::Build::this().short(),
        ),
    };
    [
        format!(
            "index {} · queries {}",
            tail(&settings.index, 56),
            tail(&settings.queries, 56)
        ),
        format!("{date} · heddle {build}"),
    ]
}

/// The last `n` characters of `s`, with `…` before them if it was longer.
fn tail(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        return s.to_string();
    }
    let kept: String = s.chars().skip(count - (n - 1)).collect();
    format!("…{kept}")
}

/// Renders the report's summaries as a standalone SVG document.
pub fn render_svg(report: &BenchReport) -> String {
    let engines: Vec<&str> = report.engines.iter().map(|e| e.name.as_str()).collect();
    let mut rates: Vec<f64> = report.summary.iter().map(|s| s.offered_rate).collect();
    rates.sort_by(f64::total_cmp);
    rates.dedup();
    let repeat = report.settings.repeat;

    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="Helvetica, Arial, sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r##"<rect width="{W}" height="{H}" fill="#ffffff"/>"##);
    title(report, &engines, &mut out);

    let values: Vec<u64> = report
        .summary
        .iter()
        .flat_map(|s| SERIES.iter().filter_map(move |(q, _, _)| quantile(s, q)))
        .flat_map(|sp| [sp.min, sp.max])
        .filter(|&v| v > 0)
        .collect();
    if rates.is_empty() || values.is_empty() {
        let _ = writeln!(
            out,
            r##"<text x="{}" y="{}" text-anchor="middle" font-size="15" fill="#555">No quantile had 100 samples beyond it: nothing to plot. Run more samples per rung.</text>"##,
            W / 2.0,
            H / 2.0
        );
        out.push_str("</svg>\n");
        return out;
    }
    let x = x_axis(&rates);
    let y = y_axis(&values);

    overload_bands(report, &rates, &x, &mut out);
    y_grid(&y, &mut out);
    x_ticks(&x, &mut out);
    achieved_panel(report, &engines, &rates, &x, &mut out);
    load_point(report, &x, &mut out);
    let _ = writeln!(
        out,
        r##"<rect x="{LEFT}" y="{TOP}" width="{}" height="{}" fill="none" stroke="#333"/>"##,
        RIGHT - LEFT,
        BOTTOM - TOP
    );

    for (e, engine) in engines.iter().enumerate() {
        let colour = PALETTE[e % PALETTE.len()];
        let rows: Vec<&RungSummary> = {
            let mut r: Vec<&RungSummary> = report
                .summary
                .iter()
                .filter(|s| s.engine == *engine)
                .collect();
            r.sort_by(|a, b| a.offered_rate.total_cmp(&b.offered_rate));
            r
        };
        for &(q, dash, marker) in &SERIES {
            series(
                &rows, q, dash, marker, colour, engine, repeat, &x, &y, &mut out,
            );
        }
    }
    let drawn: Vec<bool> = SERIES
        .iter()
        .map(|(q, _, _)| report.summary.iter().any(|s| quantile(s, q).is_some()))
        .collect();
    // The band is drawn for every overloaded rung; the other marks only on points.
    let plotted = |s: &&RungSummary| SERIES.iter().any(|(q, _, _)| quantile(s, q).is_some());
    let marks = Marks {
        overloaded: report.summary.iter().any(|s| s.overloaded),
        invalid: report.summary.iter().filter(plotted).any(|s| !s.valid),
        disturbed: report.summary.iter().filter(plotted).any(|s| s.disturbed),
    };
    legend(&engines, &drawn, marks, repeat, &mut out);
    out.push_str("</svg>\n");
    out
}

fn title(report: &BenchReport, engines: &[&str], out: &mut String) {
    let s = &report.settings;
    let _ = writeln!(
        out,
        r##"<text x="{LEFT}" y="30" font-size="18" font-weight="bold" fill="#222">Latency against offered load ({})</text>"##,
        esc(&report.mode)
    );
    let runs = if s.repeat > 1 {
        format!("median of {} runs, whiskers min–max", s.repeat)
    } else {
        "one run".to_string()
    };
    let _ = writeln!(
        out,
        r##"<text x="{LEFT}" y="52" font-size="12" fill="#555">{} · {} arrivals · {} workers on {} cores · ≥{} requests per rung · {}</text>"##,
        esc(&engines.join(" vs ")),
        match s.arrivals {
            crate::bench::loadgen::Arrivals::Uniform => "uniform",
            crate::bench::loadgen::Arrivals::Poisson => "Poisson",
        },
        s.threads,
        s.cores,
        s.samples,
        runs
    );
    for (line, y) in provenance_lines(s, report.environment.as_ref())
        .iter()
        .zip([68, 83])
    {
        let _ = writeln!(
            out,
            r##"<text class="subtitle" x="{LEFT}" y="{y}" font-size="12" fill="#555">{}</text>"##,
            esc(line)
        );
    }
    if let Some(label) = &s.label {
        let _ = writeln!(
            out,
            r##"<text x="{LEFT}" y="{}" font-size="12" font-weight="bold" fill="#555">{}</text>"##,
            H - 10.0,
            esc(label)
        );
    }
}

/// The one x-axis rule (see the module's doc): whole decades around the rungs, log scale.
fn x_axis(rates: &[f64]) -> Axis {
    let (lo, hi) = (rates[0].max(1e-3), rates[rates.len() - 1].max(1e-3));
    let lo = 10f64.powf(lo.log10().floor());
    let mut hi = 10f64.powf(hi.log10().ceil());
    if hi <= lo {
        hi = lo * 10.0;
    }
    Axis {
        lo,
        hi,
        log: true,
        from: LEFT,
        to: RIGHT,
    }
}

fn y_axis(values: &[u64]) -> Axis {
    let min = *values.iter().min().expect("non-empty") as f64;
    let max = *values.iter().max().expect("non-empty") as f64;
    let mut lo = 10f64.powf(min.log10().floor());
    let mut hi = 10f64.powf(max.log10().ceil());
    if hi <= lo * 10.0 {
        // Less than a decade of data: keep a full decade around it.
        lo = lo.min(min / 2.0).max(1.0);
        hi = hi.max(max * 2.0);
    }
    Axis {
        lo,
        hi,
        log: true,
        from: BOTTOM,
        to: TOP,
    }
}

fn y_grid(y: &Axis, out: &mut String) {
    let decades = (y.hi / y.lo).log10();
    let mut d = 10f64.powf(y.lo.log10().floor());
    while d <= y.hi * 1.0001 {
        for m in [1.0, 2.0, 5.0] {
            let v = d * m;
            if v < y.lo * 0.9999 || v > y.hi * 1.0001 {
                continue;
            }
            let py = y.px(v);
            let major = m == 1.0;
            let _ = writeln!(
                out,
                r##"<line x1="{LEFT}" x2="{RIGHT}" y1="{py:.1}" y2="{py:.1}" stroke="{}" stroke-width="1"/>"##,
                if major { "#d0d0d0" } else { "#eeeeee" }
            );
            if major || decades <= 3.0 {
                let _ = writeln!(
                    out,
                    r##"<text x="{}" y="{:.1}" text-anchor="end" fill="{}">{}</text>"##,
                    LEFT - 6.0,
                    py + 4.0,
                    if major { "#333" } else { "#888" },
                    tick_label(v)
                );
            }
        }
        d *= 10.0;
    }
    let _ = writeln!(
        out,
        r##"<text transform="translate(20 {:.1}) rotate(-90)" text-anchor="middle" fill="#333">latency, due → completion (log scale)</text>"##,
        (TOP + BOTTOM) / 2.0
    );
}

/// Ticks at 1, 2 and 5 × 10ⁿ (the fixed scale), and each rung marked on the axis with
/// its rate (and, for a derived ladder, its fraction of the estimated capacity) in the
/// achieved-rate panel below.
fn x_ticks(x: &Axis, out: &mut String) {
    let mut d = x.lo;
    while d <= x.hi * 1.0001 {
        for m in [1.0, 2.0, 5.0] {
            let v = d * m;
            if v > x.hi * 1.0001 {
                continue;
            }
            let px = x.px(v);
            let major = m == 1.0;
            let _ = writeln!(
                out,
                r##"<line x1="{px:.1}" x2="{px:.1}" y1="{TOP}" y2="{BOTTOM}" stroke="{}"/><line x1="{px:.1}" x2="{px:.1}" y1="{BOTTOM}" y2="{}" stroke="#333"/><text x="{px:.1}" y="{}" text-anchor="middle" fill="{}">{}</text>"##,
                if major { "#d0d0d0" } else { "#eeeeee" },
                BOTTOM + 5.0,
                BOTTOM + 19.0,
                if major { "#333" } else { "#888" },
                rate(v)
            );
        }
        d *= 10.0;
    }
    let _ = writeln!(
        out,
        r##"<text x="{:.1}" y="{}" text-anchor="middle" fill="#333">offered rate, requests/s (log scale, whole decades: the same scale in every chart)</text>"##,
        (LEFT + RIGHT) / 2.0,
        BOTTOM + 40.0
    );
}

/// The panel under the plot: per rung and engine, the achieved rate as a share of the
/// offered one (a line), labelled with the achieved rate, and the requests shed.
fn achieved_panel(
    report: &BenchReport,
    engines: &[&str],
    rates: &[f64],
    x: &Axis,
    out: &mut String,
) {
    let _ = writeln!(
        out,
        r##"<rect x="{LEFT}" y="{LOW_TOP}" width="{}" height="{}" fill="none" stroke="#333"/>"##,
        RIGHT - LEFT,
        LOW_BOTTOM - LOW_TOP
    );
    let y = Axis {
        lo: 0.0,
        hi: 120.0,
        log: false,
        from: LOW_BOTTOM,
        to: LOW_TOP,
    };
    for v in [0.0, 50.0, 100.0] {
        let py = y.px(v);
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" x2="{RIGHT}" y1="{py:.1}" y2="{py:.1}" stroke="{}"/><text x="{}" y="{:.1}" text-anchor="end" fill="#333">{v}%</text>"##,
            if v == 100.0 { "#999" } else { "#e0e0e0" },
            LEFT - 6.0,
            py + 4.0
        );
    }
    let _ = writeln!(
        out,
        r##"<text x="{LEFT}" y="{}" font-weight="bold" fill="#222">achieved ÷ offered rate per rung (labels: achieved/s; red: requests shed)</text>"##,
        LOW_TOP - 8.0
    );
    let l = &report.ladder;
    for &r in rates {
        let px = x.px(r);
        let fraction = l
            .rates
            .iter()
            .position(|&v| v == r)
            .and_then(|i| l.fractions.get(i))
            .filter(|_| l.rule == LadderRule::Derived);
        let _ = writeln!(
            out,
            r##"<line x1="{px:.1}" x2="{px:.1}" y1="{LOW_BOTTOM}" y2="{}" stroke="#333"/><text x="{px:.1}" y="{}" text-anchor="middle" fill="#555" font-size="10">{}/s{}</text>"##,
            LOW_BOTTOM + 5.0,
            LOW_BOTTOM + 17.0,
            rate(r),
            fraction.map_or(String::new(), |f| format!(" ({}%)", f * 100.0))
        );
    }
    for (e, engine) in engines.iter().enumerate() {
        let colour = PALETTE[e % PALETTE.len()];
        let mut rows: Vec<&RungSummary> = report
            .summary
            .iter()
            .filter(|s| s.engine == *engine && s.offered_rate > 0.0)
            .collect();
        rows.sort_by(|a, b| a.offered_rate.total_cmp(&b.offered_rate));
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .map(|s| {
                let share = (100.0 * s.achieved_rate.median / s.offered_rate).clamp(0.0, 120.0);
                (x.px(s.offered_rate), y.px(share))
            })
            .collect();
        if pts.len() > 1 {
            let p: Vec<String> = pts.iter().map(|(a, b)| format!("{a:.1},{b:.1}")).collect();
            let _ = writeln!(
                out,
                r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="1.5"/>"#,
                p.join(" ")
            );
        }
        for (s, &(px, py)) in rows.iter().zip(&pts) {
            let _ = writeln!(
                out,
                r#"<g class="achieved"><title>{}</title><circle cx="{px:.1}" cy="{py:.1}" r="3" fill="{colour}"/><text x="{px:.1}" y="{:.1}" text-anchor="middle" fill="{colour}" font-size="9">{}</text></g>"#,
                esc(&format!(
                    "{engine} at {}/s: achieved {}/s, shed {}",
                    rate(s.offered_rate),
                    rate(s.achieved_rate.median),
                    s.shed.median
                )),
                py - 6.0 - 10.0 * e as f64,
                rate(s.achieved_rate.median)
            );
            if s.shed.median > 0 || s.overloaded {
                let _ = writeln!(
                    out,
                    r#"<text class="shed" x="{px:.1}" y="{:.1}" text-anchor="middle" fill="{OVERLOAD}" font-size="9">shed {}</text>"#,
                    LOW_BOTTOM - 6.0 - 10.0 * e as f64,
                    s.shed.median
                );
            }
        }
    }
}

fn load_point(report: &BenchReport, x: &Axis, out: &mut String) {
    if let Some(lp) = report
        .ladder
        .load_point
        .filter(|&lp| lp >= x.lo && lp <= x.hi)
    {
        let px = x.px(lp);
        let _ = writeln!(
            out,
            r##"<line x1="{px:.1}" x2="{px:.1}" y1="{TOP}" y2="{BOTTOM}" stroke="#555" stroke-dasharray="3 3"/><text x="{:.1}" y="{}" fill="#555" font-size="10">load point</text>"##,
            px + 3.0,
            TOP + 12.0
        );
    }
}

/// A red band behind every rung where some engine shed requests; bands of neighbouring
/// overloaded rungs merge into one.
fn overload_bands(report: &BenchReport, rates: &[f64], x: &Axis, out: &mut String) {
    let mut bands: Vec<(f64, f64, Vec<String>)> = Vec::new();
    for (i, &r) in rates.iter().enumerate() {
        let shedding: Vec<String> = report
            .summary
            .iter()
            .filter(|s| s.offered_rate == r && s.overloaded)
            .map(|s| format!("{} shed {} at {}/s", s.engine, s.shed.median, rate(r)))
            .collect();
        if shedding.is_empty() {
            continue;
        }
        // Half-way (on the axis' scale) to the neighbouring rungs.
        let px = x.px(r);
        let half = |j: Option<&f64>, edge: f64| j.map_or(edge, |&n| (px + x.px(n)) / 2.0);
        let left = half(i.checked_sub(1).and_then(|j| rates.get(j)), LEFT).max(px - 40.0);
        let right = half(rates.get(i + 1), RIGHT).min(px + 40.0);
        match bands.last_mut() {
            Some(last) if left <= last.1 + 0.5 => {
                last.1 = right;
                last.2.extend(shedding);
            }
            _ => bands.push((left, right, shedding)),
        }
    }
    for (left, right, shedding) in bands {
        let _ = writeln!(
            out,
            r##"<rect x="{left:.1}" y="{TOP}" width="{:.1}" height="{}" fill="{OVERLOAD}" fill-opacity="0.10"><title>overloaded: {}</title></rect><text x="{:.1}" y="{}" text-anchor="middle" fill="{OVERLOAD}" font-size="10">overloaded</text>"##,
            right - left,
            BOTTOM - TOP,
            esc(&shedding.join("; ")),
            (left + right) / 2.0,
            TOP - 6.0
        );
    }
}

/// A tick label: `100µs`, `2ms`, `10ms`, `1s`.
pub(crate) fn tick_label(us: f64) -> String {
    if us < 1e3 {
        format!("{}µs", us.round())
    } else if us < 1e6 {
        format!("{}ms", (us / 1e2).round() / 10.0)
    } else {
        format!("{}s", (us / 1e5).round() / 10.0)
    }
}

#[allow(clippy::too_many_arguments)]
fn series(
    rows: &[&RungSummary],
    q: &str,
    dash: &str,
    marker: Marker,
    colour: &str,
    engine: &str,
    repeat: usize,
    x: &Axis,
    y: &Axis,
    out: &mut String,
) {
    // The line breaks where a quantile is absent: nothing is drawn that was not measured.
    let mut run: Vec<(f64, f64)> = Vec::new();
    let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
    for s in rows {
        match quantile(s, q) {
            Some(v) => run.push((x.px(s.offered_rate), y.px(v.median as f64))),
            None => runs.push(std::mem::take(&mut run)),
        }
    }
    runs.push(run);
    let dash_attr = if dash.is_empty() {
        String::new()
    } else {
        format!(r#" stroke-dasharray="{dash}""#)
    };
    for r in runs.iter().filter(|r| r.len() > 1) {
        let points: Vec<String> = r
            .iter()
            .map(|(px, py)| format!("{px:.1},{py:.1}"))
            .collect();
        let _ = writeln!(
            out,
            r#"<polyline class="series" data-quantile="{q}" points="{}" fill="none" stroke="{colour}" stroke-width="2"{dash_attr}/>"#,
            points.join(" ")
        );
    }
    for s in rows {
        let Some(v) = quantile(s, q) else { continue };
        let (px, py) = (x.px(s.offered_rate), y.px(v.median as f64));
        let mut tip = format!(
            "{engine} {q} at {}/s: {}",
            rate(s.offered_rate),
            micros(v.median)
        );
        if repeat > 1 {
            let _ = write!(tip, " (min {}, max {})", micros(v.min), micros(v.max));
            let _ = writeln!(
                out,
                r#"<line x1="{px:.1}" x2="{px:.1}" y1="{:.1}" y2="{:.1}" stroke="{colour}" stroke-width="1.2"/>"#,
                y.px(v.min as f64),
                y.px(v.max as f64)
            );
        }
        if s.overloaded {
            let _ = write!(tip, "; OVERLOADED, shed {}", s.shed.median);
        }
        if !s.valid {
            tip.push_str("; INVALID rung");
        }
        if s.disturbed {
            tip.push_str("; DISTURBED: the machine may have set this figure");
        }
        let fill = if s.overloaded { "#ffffff" } else { colour };
        let _ = write!(
            out,
            r#"<g class="point" data-quantile="{q}"><title>{}</title>"#,
            esc(&tip)
        );
        draw_marker(marker, px, py, fill, colour, out);
        if s.disturbed {
            disturbed_ring(px, py, out);
        }
        if !s.valid {
            let _ = write!(
                out,
                r##"<path d="M{:.1},{:.1}l12,12m0,-12l-12,12" stroke="#000" stroke-width="1.5"/>"##,
                px - 6.0,
                py - 6.0
            );
        }
        out.push_str("</g>\n");
    }
}

fn disturbed_ring(px: f64, py: f64, out: &mut String) {
    let _ = write!(
        out,
        r#"<circle class="disturbed" cx="{px:.1}" cy="{py:.1}" r="9" fill="none" stroke="{DISTURBED}" stroke-width="2" stroke-dasharray="3 2"/>"#
    );
}

fn draw_marker(m: Marker, px: f64, py: f64, fill: &str, stroke: &str, out: &mut String) {
    let _ = match m {
        Marker::Circle => write!(
            out,
            r#"<circle cx="{px:.1}" cy="{py:.1}" r="4.5" fill="{fill}" stroke="{stroke}" stroke-width="2"/>"#
        ),
        Marker::Square => write!(
            out,
            r#"<rect x="{:.1}" y="{:.1}" width="8" height="8" fill="{fill}" stroke="{stroke}" stroke-width="2"/>"#,
            px - 4.0,
            py - 4.0
        ),
        Marker::Triangle => write!(
            out,
            r#"<path d="M{px:.1},{:.1}L{:.1},{:.1}L{:.1},{:.1}Z" fill="{fill}" stroke="{stroke}" stroke-width="2"/>"#,
            py - 5.5,
            px + 5.0,
            py + 4.0,
            px - 5.0,
            py + 4.0
        ),
        Marker::Diamond => write!(
            out,
            r#"<path d="M{px:.1},{:.1}L{:.1},{py:.1}L{px:.1},{:.1}L{:.1},{py:.1}Z" fill="{fill}" stroke="{stroke}" stroke-width="2"/>"#,
            py - 5.5,
            px + 5.5,
            py + 5.5,
            px - 5.5
        ),
        Marker::Cross => write!(
            out,
            r#"<path d="M{:.1},{:.1}l10,10m0,-10l-10,10" stroke="{stroke}" stroke-width="2"/>"#,
            px - 5.0,
            py - 5.0
        ),
    };
}

/// Which of the rung marks the chart shows, so the legend explains only those.
#[derive(Clone, Copy)]
struct Marks {
    overloaded: bool,
    invalid: bool,
    disturbed: bool,
}

/// `drawn[i]`: whether `SERIES[i]` has any point; one without is labelled absent.
fn legend(engines: &[&str], drawn: &[bool], marks: Marks, repeat: usize, out: &mut String) {
    let x0 = RIGHT + 24.0;
    let tx = x0 + 34.0;
    let text = |out: &mut String, y: f64, s: &str, colour: &str| {
        let _ = writeln!(
            out,
            r#"<text x="{tx:.1}" y="{:.1}" fill="{colour}">{}</text>"#,
            y + 4.0,
            esc(s)
        );
    };
    let heading = |out: &mut String, y: f64, s: &str| {
        let _ = writeln!(
            out,
            r##"<text x="{x0}" y="{y:.1}" font-weight="bold" fill="#222">{s}</text>"##
        );
    };
    let mut y = TOP + 6.0;
    heading(out, y, "engines");
    y += 20.0;
    for (e, engine) in engines.iter().enumerate() {
        let c = PALETTE[e % PALETTE.len()];
        let _ = writeln!(
            out,
            r#"<line x1="{x0}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="{c}" stroke-width="4"/>"#,
            x0 + 26.0
        );
        text(out, y, engine, "#222");
        y += 20.0;
    }
    y += 14.0;
    heading(out, y, "quantiles");
    y += 20.0;
    for (&(q, dash, marker), &drawn) in SERIES.iter().zip(drawn) {
        let _ = write!(
            out,
            r##"<line x1="{x0}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#444" stroke-width="2" stroke-dasharray="{dash}"/>"##,
            x0 + 26.0
        );
        draw_marker(marker, x0 + 13.0, y, "#444", "#444", out);
        out.push('\n');
        if drawn {
            text(out, y, q, "#222");
        } else {
            text(out, y, &format!("{q}: absent at every rung"), "#888");
        }
        y += 20.0;
    }
    y += 14.0;
    if marks.overloaded {
        let _ = write!(
            out,
            r##"<rect x="{x0}" y="{:.1}" width="26" height="16" fill="{OVERLOAD}" fill-opacity="0.10"/>"##,
            y - 8.0
        );
        draw_marker(Marker::Circle, x0 + 13.0, y, "#ffffff", "#444", out);
        out.push('\n');
        text(out, y, "overloaded: requests shed", OVERLOAD);
        text(out, y + 15.0, "(hollow marker, red band)", OVERLOAD);
        y += 40.0;
    }
    if marks.invalid {
        let _ = writeln!(
            out,
            r##"<path d="M{:.1},{:.1}l12,12m0,-12l-12,12" stroke="#000" stroke-width="1.5"/>"##,
            x0 + 7.0,
            y - 6.0
        );
        text(out, y, "invalid rung", "#222");
        y += 26.0;
    }
    if marks.disturbed {
        disturbed_ring(x0 + 13.0, y, out);
        out.push('\n');
        text(out, y, "disturbed: the machine may", DISTURBED);
        text(out, y + 15.0, "have set it (see the JSON)", DISTURBED);
        y += 48.0;
    }
    if !(marks.overloaded || marks.invalid || marks.disturbed) {
        y += 8.0;
    }
    let mut notes = vec![
        "A missing point had fewer than".to_string(),
        "100 samples beyond its quantile".to_string(),
        "(p99 needs 10,000 requests):".to_string(),
        "absent, never estimated.".to_string(),
    ];
    if repeat > 1 {
        notes.push(String::new());
        notes.push(format!("Points: median of {repeat} runs;"));
        notes.push("whiskers: min to max.".to_string());
    }
    for note in notes {
        let _ = writeln!(
            out,
            r##"<text x="{x0}" y="{y:.1}" fill="#666" font-size="11">{note}</text>"##
        );
        y += 15.0;
    }
}
