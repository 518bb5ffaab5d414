//! The plain-text report on stdout: settings, ladder, warm-up, then one table of latency
//! and one of what the process did, a row per engine and rung.

use std::fmt::Write;

use super::format::{kib, kib_change, micros, micros_or_dash, rate, spread, spread_or_dash};
use super::{BenchReport, Calibration, LadderRule, RungSummary};
use crate::bench::stats::{P50, P90, P99, P999};

/// Renders the whole report.
pub fn render_table(report: &BenchReport) -> String {
    let mut out = String::new();
    header(report, &mut out);
    warmups(report, &mut out);
    latency(report, &mut out);
    process(report, &mut out);
    comparison(report, &mut out);
    notes(report, &mut out);
    out
}

fn header(r: &BenchReport, out: &mut String) {
    let s = &r.settings;
    let _ = writeln!(
        out,
        "heddle-eval bench ({}): {} arrivals, {} workers on {} cores, in-flight cap {}, top {}",
        r.mode,
        match s.arrivals {
            crate::bench::loadgen::Arrivals::Uniform => "uniform",
            crate::bench::loadgen::Arrivals::Poisson => "poisson",
        },
        s.threads,
        s.cores,
        s.inflight,
        s.k
    );
    if let Some(label) = &s.label {
        let _ = writeln!(out, "  {label}");
    }
    let _ = writeln!(
        out,
        "  index {}, queries {} ({} distinct, seed {}); ≥{} requests and ≥{} s per rung; {} repetition{}",
        s.index,
        s.queries,
        s.query_count,
        s.seed,
        s.samples,
        s.min_duration_secs,
        s.repeat,
        if s.repeat == 1 { "" } else { "s" }
    );
    let l = &r.ladder;
    match l.rule {
        LadderRule::Named => {
            let rates: Vec<String> = l.rates.iter().map(|&x| rate(x)).collect();
            let _ = writeln!(out, "  ladder: named, {} /s", rates.join(", "));
        }
        LadderRule::Derived => {
            let _ = writeln!(
                out,
                "  ladder: derived, {} × capacity {}/s (from {}); load point {}/s",
                l.fractions
                    .iter()
                    .map(|f| f.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                rate(l.capacity_per_sec.unwrap_or(0.0)),
                l.basis_engine.as_deref().unwrap_or("?"),
                rate(l.load_point.unwrap_or(0.0))
            );
            for c in &l.calibrations {
                let _ = writeln!(out, "{}", calibration_line(c));
            }
        }
    }
    out.push('\n');
}

/// One calibration as a line of the table's header (shared with the writes arm's table).
pub(crate) fn calibration_line(c: &Calibration) -> String {
    let last = c.attempts.last();
    format!(
        "  calibration {}: open loop at {}/s, mean service {}, utilisation {:.1}% → capacity {}/s ({} servers)",
        c.engine,
        rate(last.map_or(0.0, |a| a.rate)),
        micros(c.mean_service_us.round() as u64),
        100.0 * last.map_or(0.0, |a| a.utilisation),
        rate(c.capacity_per_sec.round()),
        c.servers
    )
}

fn warmups(r: &BenchReport, out: &mut String) {
    for e in &r.engines {
        let w = &e.warmup;
        let first: Vec<String> = w.first_latencies_us.iter().map(|&us| micros(us)).collect();
        let _ = writeln!(
            out,
            "warm-up {}: opened in {:.3} s; {} queries in {:.2} s ({} failed); first: {}",
            e.name,
            e.open_secs,
            w.queries,
            w.duration_secs,
            w.errors,
            first.join(" ")
        );
        let _ = writeln!(
            out,
            "  p50 {}, p99 {}, max {}; faults {} minor, {} major; RSS {}",
            micros_or_dash(w.latency_us.p50),
            micros_or_dash(w.latency_us.p99),
            micros_or_dash(w.latency_us.max),
            w.process.minor_faults,
            w.process.major_faults,
            w.memory.vm_rss.map_or("-".to_string(), |t| format!(
                "{} ({})",
                kib(t.end),
                kib_change(t.change)
            ))
        );
    }
    out.push('\n');
}

fn status(s: &RungSummary) -> String {
    match (s.overloaded, s.valid) {
        (false, true) => "ok".to_string(),
        (true, true) => "OVERLOADED".to_string(),
        (false, false) => "INVALID".to_string(),
        (true, false) => "OVERLOADED INVALID".to_string(),
    }
}

fn latency(r: &BenchReport, out: &mut String) {
    let mut t = Table::new(&[
        "engine",
        "offered/s",
        "achieved/s",
        "requests",
        "shed",
        P50.label(),
        P90.label(),
        P99.label(),
        P999.label(),
        "max",
        "status",
    ]);
    for s in &r.summary {
        t.row(vec![
            s.engine.clone(),
            rate(s.offered_rate),
            spread(&s.achieved_rate, |x| format!("{x:.1}")),
            spread(&s.requests, |x| x.to_string()),
            spread(&s.shed, |x| x.to_string()),
            spread_or_dash(&s.p50_us, micros),
            spread_or_dash(&s.p90_us, micros),
            spread_or_dash(&s.p99_us, micros),
            spread_or_dash(&s.p999_us, micros),
            spread_or_dash(&s.max_us, micros),
            status(s),
        ]);
    }
    let _ = writeln!(out, "latency (due → completion)");
    out.push_str(&t.render());
    out.push('\n');
}

fn process(r: &BenchReport, out: &mut String) {
    let mut t = Table::new(&[
        "engine",
        "offered/s",
        "cpu user s",
        "cpu sys s",
        "rss peak",
        "rss Δ",
        "anon peak",
        "file peak",
        "minflt",
        "majflt",
        "vcsw",
        "ivcsw",
        "lag p99",
        "lag max",
    ]);
    for s in &r.summary {
        t.row(vec![
            s.engine.clone(),
            rate(s.offered_rate),
            spread(&s.cpu_user_secs, |x| format!("{x:.2}")),
            spread(&s.cpu_system_secs, |x| format!("{x:.2}")),
            spread_or_dash(&s.rss_peak_kib, kib),
            spread_or_dash(&s.rss_change_kib, kib_change),
            spread_or_dash(&s.rss_anon_peak_kib, kib),
            spread_or_dash(&s.rss_file_peak_kib, kib),
            spread(&s.minor_faults, |x| x.to_string()),
            spread(&s.major_faults, |x| x.to_string()),
            spread(&s.voluntary_switches, |x| x.to_string()),
            spread(&s.involuntary_switches, |x| x.to_string()),
            spread_or_dash(&s.lag_p99_us, micros),
            spread_or_dash(&s.lag_max_us, micros),
        ]);
    }
    let _ = writeln!(
        out,
        "process during each rung (dispatcher lag = how late requests were issued)"
    );
    out.push_str(&t.render());
    out.push('\n');
}

/// With several engines: each one's median p50 and p99 over the baseline's
/// (`--baseline`, or else the first engine's), rung by rung (docs/PERF.md: comparisons
/// are quoted as ratios).
fn comparison(r: &BenchReport, out: &mut String) {
    let named = r
        .settings
        .baseline
        .as_deref()
        .filter(|b| r.engines.iter().any(|e| e.name == *b));
    let Some(base) = named.or(r.engines.first().map(|e| e.name.as_str())) else {
        return;
    };
    if r.engines.len() < 2 {
        return;
    }
    let mut t = Table::new(&["offered/s", "engine", "p50 ratio", "p99 ratio", "note"]);
    let ratio = |a: &Option<crate::bench::stats::Spread<u64>>,
                 b: &Option<crate::bench::stats::Spread<u64>>| {
        match (a, b) {
            (Some(a), Some(b)) if b.median > 0 => {
                format!("{:.2}×", a.median as f64 / b.median as f64)
            }
            _ => "-".to_string(),
        }
    };
    for s in r.summary.iter().filter(|s| s.engine != base) {
        let Some(b) = r
            .summary
            .iter()
            .find(|b| b.engine == base && b.rung == s.rung)
        else {
            continue;
        };
        let note = if s.overloaded || b.overloaded {
            "overloaded: compares shedding, not latency"
        } else if !s.valid || !b.valid {
            "invalid rung"
        } else {
            ""
        };
        t.row(vec![
            rate(s.offered_rate),
            s.engine.clone(),
            ratio(&s.p50_us, &b.p50_us),
            ratio(&s.p99_us, &b.p99_us),
            note.to_string(),
        ]);
    }
    let _ = writeln!(
        out,
        "comparison (each engine's median over {base}'s, same rung)"
    );
    out.push_str(&t.render());
    out.push('\n');
}

fn notes(r: &BenchReport, out: &mut String) {
    let _ = writeln!(
        out,
        "-  absent: fewer than 100 samples beyond the quantile (p50 needs {}, p90 {}, p99 {}, p99.9 {} requests); never estimated",
        P50.min_samples(),
        P90.min_samples(),
        P99.min_samples(),
        P999.min_samples()
    );
    let _ = writeln!(
        out,
        "OVERLOADED: requests were shed at the in-flight cap of {}; INVALID: see the JSON's invalid_reasons",
        r.settings.inflight
    );
    if r.settings.repeat > 1 {
        let _ = writeln!(
            out,
            "a [b–c]: median a, min b and max c over {} repetitions",
            r.settings.repeat
        );
    }
}

/// Columns padded to their widest cell: text columns (the first, and any headed in
/// [`Table::TEXT`]) left-aligned, figures right-aligned. heddle-bench's ratio tables use
/// it too.
pub struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    const TEXT: [&'static str; 4] = ["engine", "status", "note", "reading"];

    pub fn new(headers: &[&str]) -> Self {
        Table {
            rows: vec![headers.iter().map(|h| h.to_string()).collect()],
        }
    }

    fn is_text(&self, c: usize) -> bool {
        c == 0 || Self::TEXT.contains(&self.rows[0].get(c).map_or("", String::as_str))
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn render(&self) -> String {
        let cols = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let width = |c: usize| {
            self.rows
                .iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..cols).map(width).collect();
        let mut out = String::new();
        for row in &self.rows {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                let pad = widths[c] - cell.chars().count();
                if c > 0 {
                    line.push_str("  ");
                }
                if self.is_text(c) {
                    line.push_str(cell);
                    line.extend(std::iter::repeat_n(' ', pad));
                } else {
                    line.extend(std::iter::repeat_n(' ', pad));
                    line.push_str(cell);
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}
