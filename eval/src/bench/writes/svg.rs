//! The writes arm's picture: what a commit costs the reads beside it. One panel per
//! trial: every read as a point at its due time (x, seconds from the schedule's start)
//! and its latency (y, log scale); each commit's phases as coloured bands across the
//! plot, in the order the writer ran them; the exclusive window (the only time a reader
//! can be made to wait) as a dark bar; and the outside and in-commit p50 and p99 as
//! horizontal lines.
//!
//! Points: all of a trial's completed reads up to [`MAX_POINTS`]. Beyond it the plot
//! (only the plot: the JSON keeps every sample) thins deterministically: every read due
//! inside a commit and every read slower than the trial's own 99th percentile is drawn,
//! and every k-th of the others in due order, k chosen so that about [`MAX_POINTS`] are
//! drawn. The panel says which it did.

use std::fmt::Write;

use super::model::{CommitRecord, ReadSample, TrialReport, WritesReport};
use crate::bench::report::format::micros;
use crate::bench::report::{Axis, provenance_lines, tick_label};
use crate::html::escape as esc;
use crate::progress::plural;

/// Most points a panel draws (an SVG of tens of thousands of circles is slow to show).
pub const MAX_POINTS: usize = 5_000;

const W: f64 = 960.0;
const PANEL_H: f64 = 440.0;
/// The title and subtitle above the first panel.
const HEAD: f64 = 76.0;
const LEFT: f64 = 84.0;
const RIGHT: f64 = 720.0;
/// Within a panel.
const TOP: f64 = 70.0;
const BOTTOM: f64 = 380.0;

const OUTSIDE: &str = "#1f6fb4";
const IN_COMMIT: &str = "#d95f02";
const EXCLUSIVE: &str = "#111111";
/// Phase colours, by the phase's position among the names the report uses.
const PHASES: [&str; 8] = [
    "#a6cee3", "#b2df8a", "#fdbf6f", "#cab2d6", "#fb9a99", "#ffff99", "#d9d9d9", "#8dd3c7",
];

/// Every trial of the report, one panel under the other, as one SVG document.
pub fn render_svg(report: &WritesReport) -> String {
    let n = report.trials.len().max(1);
    let h = HEAD + PANEL_H * n as f64;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" font-family="Helvetica, Arial, sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r##"<rect width="{W}" height="{h}" fill="#ffffff"/>"##);
    let _ = writeln!(
        out,
        r##"<text x="{LEFT}" y="26" font-size="18" font-weight="bold" fill="#222">What a commit costs the reads beside it ({} reads/s)</text>"##,
        crate::bench::report::format::rate(report.writes.rate)
    );
    for (line, y) in provenance_lines(&report.settings, report.environment.as_ref())
        .iter()
        .zip([46, 61])
    {
        let _ = writeln!(
            out,
            r##"<text class="subtitle" x="{LEFT}" y="{y}" fill="#555">{}</text>"##,
            esc(line)
        );
    }
    if report.trials.is_empty() {
        let _ = writeln!(
            out,
            r##"<text x="{}" y="120" text-anchor="middle" fill="#555">No trial finished: nothing to plot.</text>"##,
            W / 2.0
        );
    }
    let names = phase_names(report);
    for (i, t) in report.trials.iter().enumerate() {
        let _ = writeln!(
            out,
            r#"<g class="trial" transform="translate(0 {})">"#,
            HEAD + PANEL_H * i as f64
        );
        panel(report, t, &names, &mut out);
        out.push_str("</g>\n");
    }
    out.push_str("</svg>\n");
    out
}

/// The phase names of every commit, in first-seen order: one colour each.
fn phase_names(report: &WritesReport) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for c in report.trials.iter().flat_map(|t| &t.run.commits) {
        for p in &c.phases {
            if !names.contains(&p.name) {
                names.push(p.name.clone());
            }
        }
    }
    names
}

fn phase_colour(names: &[String], name: &str) -> &'static str {
    let i = names.iter().position(|n| n == name).unwrap_or(0);
    PHASES[i % PHASES.len()]
}

/// Which reads a panel draws, and a sentence saying so.
pub fn thin(samples: &[ReadSample], windows: &[(u64, u64)]) -> (Vec<ReadSample>, String) {
    if samples.len() <= MAX_POINTS {
        return (
            samples.to_vec(),
            format!("every read drawn ({})", samples.len()),
        );
    }
    let mut latencies: Vec<u64> = samples.iter().map(|s| s.latency_us()).collect();
    latencies.sort_unstable();
    // Nearest rank, as everywhere.
    let p99 = latencies[(latencies.len() * 99).div_ceil(100).saturating_sub(1)];
    let keep = |s: &ReadSample| {
        s.latency_us() > p99
            || windows
                .iter()
                .any(|&(a, b)| a <= s.due_us() && s.due_us() < b)
    };
    let kept = samples.iter().filter(|s| keep(s)).count();
    let rest = samples.len() - kept;
    let k = rest.div_ceil(MAX_POINTS.saturating_sub(kept).max(1)).max(1);
    let mut i = 0usize;
    let drawn: Vec<ReadSample> = samples
        .iter()
        .filter(|s| {
            if keep(s) {
                return true;
            }
            i += 1;
            (i - 1).is_multiple_of(k)
        })
        .copied()
        .collect();
    let note = format!(
        "{} of {} reads drawn: all in a commit or above the trial's p99, every {k}th of the rest",
        drawn.len(),
        samples.len()
    );
    (drawn, note)
}

/// The commit windows in microseconds from the schedule's start.
fn windows(commits: &[CommitRecord]) -> Vec<(u64, u64)> {
    commits
        .iter()
        .map(|c| {
            (
                (c.start_secs * 1e6) as u64,
                (c.end_secs * 1e6).ceil() as u64,
            )
        })
        .collect()
}

fn panel(report: &WritesReport, t: &TrialReport, names: &[String], out: &mut String) {
    let run = &t.run;
    let _ = writeln!(
        out,
        r##"<text x="{LEFT}" y="22" font-size="14" font-weight="bold" fill="#222">{}, {}, repetition {} of {}{}</text>"##,
        esc(&t.engine),
        esc(&super::model::commit_threads_label(t.commit_threads)),
        t.repetition + 1,
        report.settings.repeat,
        if t.valid { "" } else { " — INVALID" }
    );
    let windows = windows(&run.commits);
    let (drawn, note) = thin(&run.samples, &windows);
    let _ = writeln!(
        out,
        r##"<text x="{LEFT}" y="40" font-size="11" fill="#666">{} of {} · {}; shed: {} outside, {} in a commit</text>"##,
        plural(run.commits.len() as u64, "commit"),
        plural(report.writes.docs_per_commit as u64, "document"),
        esc(&note),
        run.outside.shed,
        run.in_commit.shed
    );

    let span_us = run
        .samples
        .last()
        .map(|s| s.due_us())
        .into_iter()
        .chain(windows.iter().map(|w| w.1))
        .chain([(report.writes.schedule_secs * 1e6) as u64, 1])
        .max()
        .unwrap_or(1) as f64;
    let x = Axis {
        lo: 0.0,
        hi: span_us * 1.02,
        log: false,
        from: LEFT,
        to: RIGHT,
    };
    let lines = [
        ("outside p50", run.outside.latency_us.p50, OUTSIDE, ""),
        ("outside p99", run.outside.latency_us.p99, OUTSIDE, "7 4"),
        ("in-commit p50", run.in_commit.latency_us.p50, IN_COMMIT, ""),
        (
            "in-commit p99",
            run.in_commit.latency_us.p99,
            IN_COMMIT,
            "7 4",
        ),
    ];
    let values: Vec<u64> = run
        .samples
        .iter()
        .map(|s| s.latency_us())
        .chain(lines.iter().filter_map(|l| l.1))
        .filter(|&v| v > 0)
        .collect();
    let (lo, hi) = match (values.iter().min(), values.iter().max()) {
        (Some(&lo), Some(&hi)) => (lo as f64, hi as f64),
        _ => (100.0, 10_000.0),
    };
    let mut ylo = 10f64.powf(lo.log10().floor());
    let mut yhi = 10f64.powf(hi.log10().ceil());
    if yhi <= ylo * 10.0 {
        ylo = ylo.min(lo / 2.0).max(1.0);
        yhi = yhi.max(hi * 2.0);
    }
    let y = Axis {
        lo: ylo,
        hi: yhi,
        log: true,
        from: BOTTOM,
        to: TOP,
    };

    // Bands first, behind everything.
    for c in &run.commits {
        bands(c, names, &x, out);
    }
    grid(&x, &y, out);
    let _ = writeln!(
        out,
        r##"<rect x="{LEFT}" y="{TOP}" width="{}" height="{}" fill="none" stroke="#333"/>"##,
        RIGHT - LEFT,
        BOTTOM - TOP
    );
    out.push_str("<g class=\"reads\">\n");
    for s in &drawn {
        let inside = windows
            .iter()
            .any(|&(a, b)| a <= s.due_us() && s.due_us() < b);
        let _ = writeln!(
            out,
            r#"<circle class="read" cx="{:.1}" cy="{:.1}" r="1.6" fill="{}" fill-opacity="0.55"/>"#,
            x.px(s.due_us() as f64),
            y.px(s.latency_us().max(1) as f64),
            if inside { IN_COMMIT } else { OUTSIDE }
        );
    }
    out.push_str("</g>\n");
    for &(label, v, colour, dash) in &lines {
        let Some(v) = v else { continue };
        let py = y.px(v.max(1) as f64);
        let _ = writeln!(
            out,
            r#"<line class="quantile" x1="{LEFT}" x2="{RIGHT}" y1="{py:.1}" y2="{py:.1}" stroke="{colour}" stroke-width="1.5" stroke-dasharray="{dash}"><title>{label}: {}</title></line>"#,
            esc(&micros(v))
        );
    }
    legend(run, names, &lines, out);
}

/// One commit's phases as consecutive bands from its start, and the exclusive window at
/// the end of its `publish` phase (where the engine swaps the snapshot), or at the
/// commit's end if there is no such phase. The window is drawn at least 2 px wide: it is
/// usually microseconds in a commit of seconds.
fn bands(c: &CommitRecord, names: &[String], x: &Axis, out: &mut String) {
    let mut at = c.start_secs * 1e6;
    let mut publish_end = None;
    for p in &c.phases {
        let w = p.secs * 1e6;
        let (x0, x1) = (x.px(at), x.px(at + w));
        let _ = writeln!(
            out,
            r#"<rect class="phase" data-phase="{}" x="{x0:.2}" y="{TOP}" width="{:.2}" height="{}" fill="{}" fill-opacity="0.7"><title>commit {} {}: {}</title></rect>"#,
            esc(&p.name),
            (x1 - x0).max(0.5),
            BOTTOM - TOP,
            phase_colour(names, &p.name),
            c.batch + 1,
            esc(&p.name),
            esc(&super::table::secs(p.secs))
        );
        at += w;
        if p.name == "publish" {
            publish_end = Some(at);
        }
    }
    if let Some(ns) = c.exclusive_ns {
        let end = publish_end.unwrap_or(c.end_secs * 1e6);
        let (x1, x0) = (x.px(end), x.px(end - ns as f64 / 1e3));
        let w = (x1 - x0).max(2.0);
        let _ = writeln!(
            out,
            r#"<rect class="exclusive" x="{:.2}" y="{TOP}" width="{w:.2}" height="{}" fill="{EXCLUSIVE}" fill-opacity="0.8"><title>commit {}: exclusive {}</title></rect>"#,
            x1 - w,
            BOTTOM - TOP,
            c.batch + 1,
            esc(&super::table::nanos(ns))
        );
    }
}

fn grid(x: &Axis, y: &Axis, out: &mut String) {
    let mut d = 10f64.powf(y.lo.log10().floor());
    while d <= y.hi * 1.0001 {
        if d >= y.lo * 0.9999 {
            let py = y.px(d);
            let _ = writeln!(
                out,
                r##"<line x1="{LEFT}" x2="{RIGHT}" y1="{py:.1}" y2="{py:.1}" stroke="#d0d0d0"/><text x="{}" y="{:.1}" text-anchor="end" fill="#333">{}</text>"##,
                LEFT - 6.0,
                py + 4.0,
                tick_label(d)
            );
        }
        d *= 10.0;
    }
    let _ = writeln!(
        out,
        r##"<text transform="translate(20 {:.1}) rotate(-90)" text-anchor="middle" fill="#333">read latency, due → completion (log)</text>"##,
        (TOP + BOTTOM) / 2.0
    );
    // Seconds: a step of 1, 2 or 5 × 10^n giving at most 12 ticks.
    let span = (x.hi - x.lo) / 1e6;
    let step = [1.0, 2.0, 5.0]
        .iter()
        .flat_map(|m| (-3..4).map(move |e| m * 10f64.powi(e)))
        .filter(|s| span / s <= 12.0)
        .fold(f64::INFINITY, f64::min);
    let mut s = 0.0;
    while s * 1e6 <= x.hi {
        let px = x.px(s * 1e6);
        let _ = writeln!(
            out,
            r##"<line x1="{px:.1}" x2="{px:.1}" y1="{BOTTOM}" y2="{}" stroke="#333"/><text x="{px:.1}" y="{}" text-anchor="middle" fill="#333">{}</text>"##,
            BOTTOM + 5.0,
            BOTTOM + 18.0,
            trim(s)
        );
        s += step;
    }
    let _ = writeln!(
        out,
        r##"<text x="{:.1}" y="{}" text-anchor="middle" fill="#333">due time, seconds from the schedule's start</text>"##,
        (LEFT + RIGHT) / 2.0,
        BOTTOM + 36.0
    );
}

fn trim(s: f64) -> String {
    let t = format!("{s:.3}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn legend(
    run: &super::model::TrialRun,
    names: &[String],
    lines: &[(&str, Option<u64>, &str, &str)],
    out: &mut String,
) {
    let x0 = RIGHT + 20.0;
    let mut y = TOP + 4.0;
    let text = |out: &mut String, y: f64, s: &str| {
        let _ = writeln!(
            out,
            r##"<text x="{:.1}" y="{:.1}" fill="#222">{}</text>"##,
            x0 + 32.0,
            y + 4.0,
            esc(s)
        );
    };
    for (name, colour) in [
        ("read due outside a commit", OUTSIDE),
        ("read due in a commit", IN_COMMIT),
    ] {
        let _ = writeln!(
            out,
            r#"<circle cx="{:.1}" cy="{y:.1}" r="3" fill="{colour}"/>"#,
            x0 + 13.0
        );
        text(out, y, name);
        y += 17.0;
    }
    for &(label, v, colour, dash) in lines {
        let _ = writeln!(
            out,
            r#"<line x1="{x0}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="{colour}" stroke-width="1.5" stroke-dasharray="{dash}"/>"#,
            x0 + 26.0
        );
        text(
            out,
            y,
            &match v {
                Some(v) => format!("{label} {}", micros(v)),
                None => format!("{label}: absent"),
            },
        );
        y += 17.0;
    }
    y += 6.0;
    let used: Vec<&String> = names
        .iter()
        .filter(|n| {
            run.commits
                .iter()
                .any(|c| c.phases.iter().any(|p| &p.name == *n))
        })
        .collect();
    for name in used {
        let _ = writeln!(
            out,
            r#"<rect x="{x0}" y="{:.1}" width="26" height="12" fill="{}" fill-opacity="0.7"/>"#,
            y - 6.0,
            phase_colour(names, name)
        );
        text(out, y, &format!("phase: {name}"));
        y += 16.0;
    }
    let _ = writeln!(
        out,
        r#"<rect x="{:.1}" y="{:.1}" width="4" height="12" fill="{EXCLUSIVE}"/>"#,
        x0 + 11.0,
        y - 6.0
    );
    text(out, y, "exclusive window (≥ 2 px)");
    y += 22.0;
    for note in [
        "Quantiles with fewer than 100",
        "samples beyond them are absent.",
    ] {
        let _ = writeln!(
            out,
            r##"<text x="{x0}" y="{y:.1}" fill="#666" font-size="11">{note}</text>"##
        );
        y += 14.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinning_keeps_commit_reads_and_the_tail_and_a_stride_of_the_rest() {
        let samples: Vec<ReadSample> = (0..20_000u64)
            .map(|i| ReadSample(i * 100, if i % 1000 == 7 { 50_000 } else { 500 }))
            .collect();
        let (all, note) = thin(&samples[..100], &[]);
        assert_eq!(all.len(), 100);
        assert!(note.contains("every read"), "{note}");
        // One window over due times [1 s, 1.1 s): reads 10,000 to 10,999.
        let (drawn, note) = thin(&samples, &[(1_000_000, 1_100_000)]);
        assert!(drawn.len() <= MAX_POINTS + 1_000 && drawn.len() >= MAX_POINTS / 2);
        assert!(note.contains("of 20000 reads drawn"), "{note}");
        let in_window = drawn
            .iter()
            .filter(|s| (1_000_000..1_100_000).contains(&s.due_us()))
            .count();
        assert_eq!(in_window, 1_000, "every read in a commit");
        assert_eq!(
            drawn.iter().filter(|s| s.latency_us() == 50_000).count(),
            20,
            "every read of the tail"
        );
        assert_eq!(thin(&samples, &[(1_000_000, 1_100_000)]).0, drawn);
    }
}
