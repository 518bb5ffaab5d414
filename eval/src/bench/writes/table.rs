//! The writes arm's plain-text report: settings and source checks, every trial with its
//! commits, then the summary over repetitions and the trade of commit time against the
//! reads' tail. By default every line fits [`WIDTH`](crate::env::render::WIDTH) columns (long lines wrap, figures
//! are medians over repetitions); [`Width::Wide`] (`--wide`) prints each on one line with
//! `[min–max]`.

use std::fmt::Write;

use super::model::{ClassSummary, ReadClass, TrialReport, TrialSummary, WritesReport};
use crate::bench::loadgen::Arrivals;
use crate::bench::report::Width;
use crate::bench::report::format::{kib, kib_change, micros, micros_or_dash, rate};
use crate::bench::report::{calibration_line, fig_or_dash};
use crate::bench::stats::Spread;
use crate::env::render::wrap;
use crate::progress::plural;

/// The report within [`WIDTH`](crate::env::render::WIDTH) columns.
pub fn render(r: &WritesReport) -> String {
    render_as(r, Width::Narrow)
}

/// The report at the chosen width.
pub fn render_as(r: &WritesReport, width: Width) -> String {
    let mut out = String::new();
    header(r, &mut out);
    for t in &r.trials {
        trial(t, &mut out);
    }
    summary(r, width, &mut out);
    match width {
        Width::Wide => out,
        Width::Narrow => out.lines().flat_map(wrap).map(|l| l + "\n").collect(),
    }
}

/// Seconds as `412µs`, `35.1ms` or `4.31s`.
pub fn secs(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.0}µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.1}ms", s * 1e3)
    } else {
        format!("{s:.2}s")
    }
}

/// Nanoseconds as `210ns`, `3.1µs`, or as [`micros`] beyond.
pub fn nanos(ns: u64) -> String {
    match ns {
        0..1_000 => format!("{ns}ns"),
        1_000..100_000 => format!("{:.1}µs", ns as f64 / 1e3),
        _ => micros(ns.div_ceil(1_000)),
    }
}

fn header(r: &WritesReport, out: &mut String) {
    let s = &r.settings;
    let w = &r.writes;
    let _ = writeln!(
        out,
        "{} ({}): {} arrivals, {} workers on {} cores, in-flight cap {}, top {}",
        r.tool,
        r.mode,
        match s.arrivals {
            Arrivals::Uniform => "uniform",
            Arrivals::Poisson => "poisson",
        },
        s.threads,
        s.cores,
        s.inflight,
        s.k
    );
    let _ = writeln!(
        out,
        "  index {}, queries {} ({} distinct, seed {}); {}",
        s.index,
        s.queries,
        s.query_count,
        s.seed,
        plural(s.repeat as u64, "repetition")
    );
    if let (Some(k1), Some(b)) = (s.k1, s.b) {
        let _ = writeln!(out, "  heddle ranks with BM25 k1={k1} b={b}");
    }
    let basis = match (w.rate_rule.as_str(), w.capacity_per_sec) {
        ("quarter-capacity", Some(c)) => format!(
            "a quarter of the smallest capacity measured, {}/s",
            rate(c.round())
        ),
        _ => "--rate".to_string(),
    };
    let _ = writeln!(
        out,
        "  reads: {}/s ({basis}), {} requests due over {:.1} s",
        rate(w.rate),
        w.requests,
        w.schedule_secs
    );
    let cadence = match w.commit_every_secs {
        Some(e) => format!(
            "then one every {e} s while reads are due ({} prepared)",
            w.batches
        ),
        None => "one commit".to_string(),
    };
    let threads: Vec<String> = w
        .commit_threads
        .iter()
        .map(|&t| match t {
            0 => "the server's".to_string(),
            t => t.to_string(),
        })
        .collect();
    let _ = writeln!(
        out,
        "  writes: {} documents a commit from {}; first at {:.1} s (a third of the way), {cadence}; commit threads {}",
        w.docs_per_commit,
        w.source,
        w.first_write_secs,
        threads.join(", ")
    );
    match &r.settings.target {
        Some(url) => {
            let _ = writeln!(
                out,
                "  each trial writes into the target {url} (ids {}…) and deletes what it wrote",
                super::TARGET_ID_PREFIX
            );
        }
        None => {
            let _ = writeln!(out, "  each trial on a fresh copy made in {}", w.scratch);
        }
    }
    if let Some(env) = &r.environment {
        for line in crate::env::render::header(env) {
            let _ = writeln!(out, "{line}");
        }
    }
    for c in &r.calibrations {
        let _ = writeln!(out, "{}", calibration_line(c));
    }
    for src in &r.sources {
        let after = src
            .after
            .map_or("not checked".to_string(), |a| format!("{:016x}", a.hash));
        let _ = writeln!(
            out,
            "  source {}: {} files, {} bytes; hash before {:016x}, after {after}: {}",
            src.dir,
            src.before.files,
            src.before.bytes,
            src.before.hash,
            if src.identical() {
                "byte-identical"
            } else {
                "CHANGED"
            }
        );
    }
    out.push('\n');
}

fn class_line(name: &str, c: &ReadClass) -> String {
    format!(
        "    {name:<10} {} due, {} done, {} shed{}; p50 {}, p90 {}, p99 {}, max {}",
        c.due,
        c.completed,
        c.shed,
        if c.errors > 0 {
            format!(", {} FAILED", c.errors)
        } else {
            String::new()
        },
        micros_or_dash(c.latency_us.p50),
        micros_or_dash(c.latency_us.p90),
        micros_or_dash(c.latency_us.p99),
        micros_or_dash(c.latency_us.max)
    ) + &c.cpu_us.as_ref().map_or(String::new(), |u| {
        format!(
            "; CPU p50 {}, p99 {}",
            micros_or_dash(u.p50),
            micros_or_dash(u.p99)
        )
    }) + &match (&c.server_us, &c.added_us) {
        // Over HTTP: how much of it the server's own time was, and what the rest added.
        (Some(s), Some(a)) => format!(
            "; server p50 {}, p99 {}; added p50 {}, p99 {}",
            micros_or_dash(s.p50),
            micros_or_dash(s.p99),
            micros_or_dash(a.p50),
            micros_or_dash(a.p99)
        ),
        _ => String::new(),
    }
}

fn trial(t: &TrialReport, out: &mut String) {
    let _ = writeln!(
        out,
        "trial {}: {}, {}, repetition {}: copy {} in {}, open {}, warm-up {} queries (mean {}); {} reads in {:.1} s; {}",
        t.sequence + 1,
        t.engine,
        super::model::commit_threads_label(t.commit_threads),
        t.repetition + 1,
        kib(t.copy_bytes / 1024),
        secs(t.copy_secs),
        secs(t.open_secs),
        t.warmup.queries,
        t.warmup
            .latency_us
            .mean
            .map_or("-".to_string(), |m| micros(m.round() as u64)),
        t.run.requests,
        t.run.duration_secs,
        match (t.valid, t.run.disturbed()) {
            (true, false) => "ok".to_string(),
            (true, true) => "DISTURBED (figures stand as measured; see below)".to_string(),
            (false, _) => format!("INVALID: {}", t.invalid_reasons.join("; ")),
        }
    );
    for why in t.run.all_disturbances() {
        let _ = writeln!(out, "    DISTURBED: {why}");
    }
    for c in &t.run.commits {
        let phases: Vec<String> = c
            .phases
            .iter()
            .map(|p| format!("{} {}", p.name, secs(p.secs)))
            .collect();
        let _ = writeln!(
            out,
            "    commit {}: {} documents at {:.2} s, {} until commit returned: {}; exclusive {}; visible {}/{} right after (check {})",
            c.batch + 1,
            c.docs,
            c.start_secs,
            secs(c.wall_secs),
            phases.join(", "),
            c.exclusive_ns.map_or("not measured".to_string(), nanos),
            c.visible_hits,
            c.docs,
            secs(c.check_secs)
        );
    }
    if let Some(e) = &t.run.writer_error {
        let _ = writeln!(out, "    writer stopped: {e}");
    }
    let _ = writeln!(out, "{}", class_line("in commit", &t.run.in_commit));
    let _ = writeln!(out, "{}", class_line("outside", &t.run.outside));
    let _ = writeln!(out, "{}", class_line("  after", &t.run.after));
    let rss = t.run.memory.vm_rss.map_or("-".to_string(), |m| {
        format!(
            "{} → {} ({}, peak {})",
            kib(m.start),
            kib(m.end),
            kib_change(m.change),
            kib(m.peak)
        )
    });
    let _ = writeln!(
        out,
        "    RSS {rss}; CPU {:.2} s user, {:.2} s system; dispatcher lag p99 {}, max {}; load {} → {}",
        t.run.process.user_secs,
        t.run.process.system_secs,
        micros_or_dash(t.run.dispatcher_lag_us.p99),
        micros_or_dash(t.run.dispatcher_lag_us.max),
        t.run
            .load_start
            .map_or("-".to_string(), |l| format!("{l:.2}")),
        t.run
            .load_end
            .map_or("-".to_string(), |l| format!("{l:.2}"))
    );
}

fn summary(r: &WritesReport, width: Width, out: &mut String) {
    let us = |s: &Option<Spread<u64>>| fig_or_dash(s, width, micros);
    let reps = r.settings.repeat;
    let loads: Vec<f64> = r
        .trials
        .iter()
        .flat_map(|t| [t.run.load_start, t.run.load_end])
        .flatten()
        .collect();
    let load = match (
        loads.iter().copied().reduce(f64::min),
        loads.iter().copied().reduce(f64::max),
    ) {
        (Some(lo), Some(hi)) => format!(
            "; 1-minute load average {lo:.2}–{hi:.2} on {} cores",
            r.settings.cores
        ),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "\nsummary: {} over {}{load}",
        match width {
            Width::Wide => "median [min–max]",
            Width::Narrow if reps > 1 => "medians (--wide: [min–max])",
            Width::Narrow => "figures",
        },
        plural(reps as u64, "repetition")
    );
    for s in &r.summary {
        let phases: Vec<String> = s
            .phases
            .iter()
            .map(|p| format!("{} {}", p.name, fig_or_dash(&Some(p.secs), width, secs)))
            .collect();
        let _ = writeln!(
            out,
            "  {}, {}: {} a commit ({} a run): {}; exclusive {}{}",
            s.engine,
            super::model::commit_threads_label(s.commit_threads),
            fig_or_dash(&s.commit_wall_secs, width, secs),
            fig_or_dash(&Some(s.commits), width, |n| n.to_string()),
            phases.join(", "),
            fig_or_dash(&s.exclusive_ns, width, nanos),
            match (s.valid, s.all_visible) {
                (true, true) => String::new(),
                (_, false) => "; NOT ALL VISIBLE".to_string(),
                (false, true) => "; INVALID".to_string(),
            }
        );
    }
    out.push('\n');
    let mut rows = vec![vec![
        "engine".to_string(),
        "threads".to_string(),
        "reads".to_string(),
        "due".to_string(),
        "shed".to_string(),
        "p50".to_string(),
        "p90".to_string(),
        "p99".to_string(),
        "max".to_string(),
    ]];
    for s in &r.summary {
        for (name, c) in [
            ("in commit", &s.in_commit),
            ("outside", &s.outside),
            ("  after", &s.after),
        ] {
            rows.push(class_row(s, name, c, width));
        }
    }
    out.push_str(&grid(&rows));
    out.push('\n');

    let mut trade = vec![vec![
        "engine".to_string(),
        "threads".to_string(),
        "commit".to_string(),
        "in-commit p50".to_string(),
        "p90".to_string(),
        "max".to_string(),
        "outside p50".to_string(),
        "p90".to_string(),
        "max".to_string(),
        "RSS change".to_string(),
    ]];
    for s in &r.summary {
        trade.push(vec![
            s.engine.clone(),
            crate::bench::writes::threads_cell(s.commit_threads),
            fig_or_dash(&s.commit_wall_secs, width, secs),
            us(&s.in_commit.p50_us),
            us(&s.in_commit.p90_us),
            us(&s.in_commit.max_us),
            us(&s.outside.p50_us),
            us(&s.outside.p90_us),
            us(&s.outside.max_us),
            fig_or_dash(&s.rss_change_kib, width, kib_change),
        ]);
    }
    let _ = writeln!(out, "the trade: commit duration against the reads' tail");
    out.push_str(&grid(&trade));
    let _ = writeln!(
        out,
        "\n  in commit: reads due between a batch's add_documents call and its commit's return; \
         after: the outside reads due after the first write began; \
         a quantile is shown only with 100 samples beyond it (docs/PERF.md)"
    );
}

fn class_row(s: &TrialSummary, name: &str, c: &ClassSummary, width: Width) -> Vec<String> {
    let us = |s: &Option<Spread<u64>>| fig_or_dash(s, width, micros);
    vec![
        s.engine.clone(),
        crate::bench::writes::threads_cell(s.commit_threads),
        name.to_string(),
        fig_or_dash(&Some(c.due), width, |n| n.to_string()),
        fig_or_dash(&Some(c.shed), width, |n| n.to_string()),
        us(&c.p50_us),
        us(&c.p90_us),
        us(&c.p99_us),
        us(&c.max_us),
    ]
}

/// Left-aligned columns two spaces apart, indented by two.
fn grid(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|v| v.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::from("  ");
        for (c, v) in r.iter().enumerate() {
            line.push_str(v);
            if c + 1 < r.len() {
                let pad = widths[c] - v.chars().count() + 2;
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(secs(0.000_412), "412µs");
        assert_eq!(secs(0.0351), "35.1ms");
        assert_eq!(secs(4.312), "4.31s");
        assert_eq!(nanos(210), "210ns");
        assert_eq!(nanos(3_140), "3.1µs");
        assert_eq!(nanos(2_500_000), "2.50ms");
    }

    #[test]
    fn grid_aligns_columns() {
        let g = grid(&[
            vec!["a".into(), "bb".into()],
            vec!["ccc".into(), "d".into()],
        ]);
        assert_eq!(g, "  a    bb\n  ccc  d\n");
    }
}
