//! The plot: latency quantiles (p50, p99, p99.9) against offered rate, latency on a log
//! axis, one colour per engine, one line style per quantile, overloaded rungs marked.
//! Hand-written SVG: a few shapes do not need a plotting crate.

use std::fmt::Write;

use super::format::{micros, rate};
use super::{BenchReport, LadderRule, RungSummary};
use crate::bench::stats::Spread;

const W: f64 = 960.0;
const H: f64 = 600.0;
const LEFT: f64 = 84.0;
const RIGHT: f64 = 700.0;
const TOP: f64 = 78.0;
const BOTTOM: f64 = 520.0;

const PALETTE: [&str; 6] = [
    "#1f6fb4", "#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e",
];
const OVERLOAD: &str = "#c0392b";
/// Rungs the machine may have disturbed: a dashed ring around the marker.
const DISTURBED: &str = "#e69f00";

/// The quantiles drawn, with their stroke pattern and marker.
const SERIES: [(&str, &str, Marker); 3] = [
    ("p50", "", Marker::Circle),
    ("p99", "7 4", Marker::Square),
    ("p99.9", "2 3", Marker::Triangle),
];

#[derive(Clone, Copy)]
enum Marker {
    Circle,
    Square,
    Triangle,
}

fn quantile(s: &RungSummary, label: &str) -> Option<Spread<u64>> {
    match label {
        "p50" => s.p50_us,
        "p99" => s.p99_us,
        _ => s.p999_us,
    }
}

/// An axis mapping a data range onto pixels, log or linear.
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    from: f64,
    to: f64,
}

impl Axis {
    fn px(&self, v: f64) -> f64 {
        let (v, lo, hi) = if self.log {
            (v.max(1e-9).log10(), self.lo.log10(), self.hi.log10())
        } else {
            (v, self.lo, self.hi)
        };
        self.from + (v - lo) / (hi - lo) * (self.to - self.from)
    }
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
    x_ticks(report, &rates, &x, &mut out);
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
    legend(&engines, &drawn, repeat, &mut out);
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
    if let Some(label) = &s.label {
        let _ = writeln!(
            out,
            r##"<text x="{LEFT}" y="{}" font-size="12" font-weight="bold" fill="#555">{}</text>"##,
            H - 10.0,
            esc(label)
        );
    }
}

fn x_axis(rates: &[f64]) -> Axis {
    let (lo, hi) = (rates[0], rates[rates.len() - 1]);
    let log = lo > 0.0 && hi / lo >= 4.0;
    let (lo, hi) = if log {
        (lo / 1.3, hi * 1.3)
    } else if hi > lo {
        let pad = (hi - lo) * 0.1;
        ((lo - pad).max(0.0), hi + pad)
    } else {
        (lo * 0.5, hi * 1.5)
    };
    Axis {
        lo,
        hi,
        log,
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

fn x_ticks(report: &BenchReport, rates: &[f64], x: &Axis, out: &mut String) {
    let derived = report.ladder.rule == LadderRule::Derived;
    for &r in rates {
        let px = x.px(r);
        let _ = writeln!(
            out,
            r##"<line x1="{px:.1}" x2="{px:.1}" y1="{TOP}" y2="{BOTTOM}" stroke="#f0f0f0"/><line x1="{px:.1}" x2="{px:.1}" y1="{BOTTOM}" y2="{}" stroke="#333"/>"##,
            BOTTOM + 5.0
        );
        let _ = writeln!(
            out,
            r##"<text x="{px:.1}" y="{}" text-anchor="middle" fill="#333">{}</text>"##,
            BOTTOM + 19.0,
            rate(r)
        );
        let l = &report.ladder;
        let fraction = l
            .rates
            .iter()
            .position(|&x| x == r)
            .and_then(|i| l.fractions.get(i));
        if let (true, Some(f)) = (derived, fraction) {
            let _ = writeln!(
                out,
                r##"<text x="{px:.1}" y="{}" text-anchor="middle" fill="#888" font-size="10">{}%</text>"##,
                BOTTOM + 32.0,
                f * 100.0
            );
        }
    }
    let axis = if derived {
        "offered rate, requests/s (and % of estimated capacity)"
    } else {
        "offered rate, requests/s"
    };
    let _ = writeln!(
        out,
        r##"<text x="{:.1}" y="{}" text-anchor="middle" fill="#333">{axis}{}</text>"##,
        (LEFT + RIGHT) / 2.0,
        BOTTOM + 52.0,
        if x.log { ", log scale" } else { "" }
    );
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
fn tick_label(us: f64) -> String {
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
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"{dash_attr}/>"#,
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
        let _ = write!(out, "<g><title>{}</title>", esc(&tip));
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
    };
}

/// `drawn[i]`: whether `SERIES[i]` has any point; one without is labelled absent.
fn legend(engines: &[&str], drawn: &[bool], repeat: usize, out: &mut String) {
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
    let _ = writeln!(
        out,
        r##"<path d="M{:.1},{:.1}l12,12m0,-12l-12,12" stroke="#000" stroke-width="1.5"/>"##,
        x0 + 7.0,
        y - 6.0
    );
    text(out, y, "invalid rung", "#222");
    y += 26.0;
    disturbed_ring(x0 + 13.0, y, out);
    out.push('\n');
    text(out, y, "disturbed: the machine may", DISTURBED);
    text(out, y + 15.0, "have set it (see the JSON)", DISTURBED);
    y += 48.0;
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

/// Escapes text for SVG character data and attribute values.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
