//! The chart ANN benchmarks draw: recall@k on x (linear), one thread's queries per
//! second on a log y, one line per engine through its settings (each labelled with its
//! effort), up and to the right is better; the target recalls as dotted verticals and
//! the settings the ladder ran at ringed. Hand-written SVG, as heddle-eval's plots.

use std::fmt::Write as _;

use heddle_eval::html::escape;

use super::report::VectorsReport;
use super::sweep::Point;

const W: f64 = 900.0;
const H: f64 = 560.0;
const LEFT: f64 = 90.0;
const RIGHT: f64 = 700.0;
const TOP: f64 = 70.0;
const BOTTOM: f64 = 480.0;
const COLOURS: [&str; 4] = ["#1f6fb4", "#d95f02", "#1b9e77", "#7570b3"];

/// The x range: from a tenth below the lowest recall drawn (at most 0.8, so that the
/// targets are always in view) to 1.
pub fn x_range(points: &[&Point]) -> (f64, f64) {
    let lowest = points.iter().map(|p| p.recall).fold(1.0, f64::min);
    let lo = ((lowest - 0.02) * 10.0).floor() / 10.0;
    (lo.clamp(0.0, 0.8), 1.0)
}

/// The y range on whole decades around every QPS drawn.
pub fn y_range(points: &[&Point]) -> (f64, f64) {
    let qps: Vec<f64> = points
        .iter()
        .filter_map(|p| p.qps)
        .filter(|q| *q > 0.0)
        .collect();
    if qps.is_empty() {
        return (1.0, 10.0);
    }
    let lo = qps.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = qps.iter().copied().fold(0.0, f64::max);
    let lo = 10f64.powf(lo.log10().floor());
    let mut hi = 10f64.powf(hi.log10().ceil());
    if hi <= lo {
        hi = lo * 10.0;
    }
    (lo, hi)
}

fn x_px(v: f64, (lo, hi): (f64, f64)) -> f64 {
    LEFT + (v - lo) / (hi - lo) * (RIGHT - LEFT)
}

fn y_px(v: f64, (lo, hi): (f64, f64)) -> f64 {
    BOTTOM - (v.max(lo).log10() - lo.log10()) / (hi.log10() - lo.log10()) * (BOTTOM - TOP)
}

/// The whole chart as a standalone SVG document.
pub fn render(r: &VectorsReport) -> String {
    let all: Vec<&Point> = r.curves.iter().flat_map(|c| &c.points).collect();
    let (xr, yr) = (x_range(&all), y_range(&all));
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = write!(s, r##"<rect width="{W}" height="{H}" fill="#fff"/>"##);
    let _ = write!(
        s,
        r#"<text x="{LEFT}" y="28" font-size="16">{}: recall@{} against queries per second (one thread)</text>"#,
        escape(&r.set.name),
        r.k
    );
    let _ = write!(
        s,
        r##"<text x="{LEFT}" y="48" fill="#555">{} × {} vectors, {} queries · heddle {} · usearch {} · {}</text>"##,
        r.set.documents,
        r.set.dim,
        r.set.queries,
        escape(
            &r.curves
                .first()
                .map_or(String::new(), |c| c.effort_name.clone())
        ),
        r.usearch_version,
        escape(
            &r.environment
                .as_ref()
                .map_or("date unknown".to_string(), |e| e.started_utc.clone())
        )
    );
    // Axes and grid.
    let _ = write!(
        s,
        r##"<rect x="{LEFT}" y="{TOP}" width="{}" height="{}" fill="none" stroke="#999"/>"##,
        RIGHT - LEFT,
        BOTTOM - TOP
    );
    let mut x = xr.0;
    while x <= xr.1 + 1e-9 {
        let px = x_px(x, xr);
        let _ = write!(
            s,
            r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{BOTTOM}" stroke="#eee"/><text x="{px:.1}" y="{}" text-anchor="middle">{x:.2}</text>"##,
            BOTTOM + 18.0
        );
        x += if xr.1 - xr.0 > 0.5 { 0.1 } else { 0.05 };
    }
    let mut decade = yr.0;
    while decade <= yr.1 * 1.0001 {
        for m in [1.0, 2.0, 5.0] {
            let v = decade * m;
            if v > yr.1 * 1.0001 {
                break;
            }
            let py = y_px(v, yr);
            let _ = write!(
                s,
                r##"<line x1="{LEFT}" y1="{py:.1}" x2="{RIGHT}" y2="{py:.1}" stroke="{}"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
                if m == 1.0 { "#ddd" } else { "#f3f3f3" },
                LEFT - 6.0,
                py + 4.0,
                qps_label(v)
            );
        }
        decade *= 10.0;
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">recall@{} (against brute-force exact search)</text>"#,
        (LEFT + RIGHT) / 2.0,
        BOTTOM + 40.0,
        r.k
    );
    let _ = write!(
        s,
        r#"<text transform="translate(24 {}) rotate(-90)" text-anchor="middle">queries per second, one thread (log)</text>"#,
        (TOP + BOTTOM) / 2.0
    );
    // Target recalls.
    for m in &r.matched {
        if m.target >= xr.0 {
            let px = x_px(m.target, xr);
            let _ = write!(
                s,
                r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{BOTTOM}" stroke="#888" stroke-dasharray="2 3"/><text x="{px:.1}" y="{}" text-anchor="middle" fill="#666">{}</text>"##,
                TOP - 4.0,
                m.target
            );
        }
    }
    // One line per engine.
    let chosen = [&r.at_ladder.heddle, &r.at_ladder.peer];
    for (i, c) in r.curves.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let pts: Vec<(f64, f64, &Point)> = c
            .points
            .iter()
            .filter_map(|p| {
                p.qps
                    .map(|q| (x_px(p.recall.max(xr.0), xr), y_px(q, yr), p))
            })
            .collect();
        let path: Vec<String> = pts
            .iter()
            .map(|(x, y, _)| format!("{x:.1},{y:.1}"))
            .collect();
        let _ = write!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
            path.join(" ")
        );
        for (x, y, p) in &pts {
            let _ = write!(
                s,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="3.5" fill="{colour}"><title>{} effort {}: recall {:.4}, {:.0} queries/s</title></circle><text x="{:.1}" y="{:.1}" font-size="10" fill="{colour}">{}</text>"#,
                c.engine.name(),
                p.effort,
                p.recall,
                p.qps.unwrap_or(0.0),
                x + 5.0,
                y - 5.0,
                p.effort
            );
            let ringed = chosen
                .get(i)
                .and_then(|c| c.as_ref())
                .is_some_and(|c| c.effort == p.effort);
            if ringed {
                let _ = write!(
                    s,
                    r#"<circle cx="{x:.1}" cy="{y:.1}" r="8" fill="none" stroke="{colour}" stroke-width="1.5"/>"#
                );
            }
        }
        let ly = TOP + 20.0 + 22.0 * i as f64;
        let _ = write!(
            s,
            r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="2"/><text x="{}" y="{}">{}</text>"#,
            RIGHT + 16.0,
            RIGHT + 40.0,
            RIGHT + 46.0,
            ly + 4.0,
            escape(c.engine.name())
        );
        let _ = write!(
            s,
            r##"<text x="{}" y="{}" font-size="10" fill="#666">effort: {}</text>"##,
            RIGHT + 46.0,
            ly + 16.0,
            escape(&c.effort_name)
        );
    }
    let _ = write!(
        s,
        r##"<text x="{}" y="{}" font-size="10" fill="#666">ringed: the settings of the ladder (recall ≥ {})</text>"##,
        RIGHT + 16.0,
        TOP + 30.0 + 22.0 * r.curves.len() as f64,
        r.ladder_recall
    );
    s.push_str("</svg>\n");
    s
}

fn qps_label(v: f64) -> String {
    if v >= 1000.0 {
        format!("{}k", (v / 1000.0).round())
    } else {
        format!("{v:.0}")
    }
}
