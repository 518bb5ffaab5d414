//! The plain-text report on stdout: settings, ladder, environment, warm-up, then one
//! table of latency and one of what the process did, a row per engine and rung. By
//! default every line fits [`WIDTH`](crate::env::render::WIDTH) columns (medians only, the main columns);
//! [`Width::Wide`] (`--wide`) adds `[min–max]` and every column.

use std::fmt::Write;

use crate::env::render::fit;

use super::format::{kib, kib_change, micros, micros_or_dash, rate, spread, spread_or_dash};
use super::{BenchReport, Calibration, LadderRule, RungSummary};
use crate::bench::stats::{P50, P90, P99, P999, Spread};

/// How much a table shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Width {
    /// Fits [`WIDTH`](crate::env::render::WIDTH) columns: medians and the main columns.
    #[default]
    Narrow,
    /// Every column, each figure with `[min–max]` over repetitions.
    Wide,
}

/// Renders the whole report, every line within [`WIDTH`](crate::env::render::WIDTH) columns.
pub fn render_table(report: &BenchReport) -> String {
    render_table_as(report, Width::Narrow)
}

/// Renders the whole report at the chosen width.
pub fn render_table_as(report: &BenchReport, width: Width) -> String {
    let mut out = String::new();
    header(report, &mut out);
    warmups(report, &mut out);
    latency(report, width, &mut out);
    process(report, width, &mut out);
    cpu_time(report, width, &mut out);
    client(report, width, &mut out);
    encoding(report, width, &mut out);
    comparison(report, &mut out);
    notes(report, width, &mut out);
    if !report.complete {
        out.push_str(
            "INCOMPLETE: the run ended before its last rung; these are the rungs it finished\n",
        );
    }
    out
}

/// A spread in the chosen width: the median alone, or with `[min–max]`.
fn fig<T: Copy + PartialEq>(
    s: &crate::bench::stats::Spread<T>,
    width: Width,
    show: impl Fn(T) -> String,
) -> String {
    match width {
        Width::Narrow => show(s.median),
        Width::Wide => spread(s, show),
    }
}

/// A spread at the chosen width: the median alone, or with `[min–max]`; `-` if absent.
pub(crate) fn fig_or_dash<T: Copy + PartialEq>(
    s: &Option<crate::bench::stats::Spread<T>>,
    width: Width,
    show: impl Fn(T) -> String,
) -> String {
    match width {
        Width::Narrow => s
            .as_ref()
            .map_or_else(|| "-".to_string(), |s| show(s.median)),
        Width::Wide => spread_or_dash(s, show),
    }
}

fn header(r: &BenchReport, out: &mut String) {
    let s = &r.settings;
    let _ = writeln!(
        out,
        "heddle-eval bench ({}): {} arrivals, {} on {} cores, in-flight cap {}, top {}",
        r.mode,
        match s.arrivals {
            crate::bench::loadgen::Arrivals::Uniform => "uniform",
            crate::bench::loadgen::Arrivals::Poisson => "poisson",
        },
        match &s.target {
            // Over HTTP one async client thread carries every request.
            Some(_) => "one HTTP client thread".to_string(),
            None => format!("{} workers", s.threads),
        },
        s.cores,
        s.inflight,
        s.k
    );
    if let Some(label) = &s.label {
        let _ = writeln!(out, "  {label}");
    }
    if let Some(ranking) = &s.ranking {
        for l in crate::env::render::wrap(&format!("  heddle ranks with {ranking}")) {
            let _ = writeln!(out, "{l}");
        }
    } else if let (Some(k1), Some(b)) = (s.k1, s.b) {
        let _ = writeln!(out, "  heddle ranks with BM25 k1={k1} b={b}");
    }

    match &s.target {
        Some(url) => {
            let _ = writeln!(out, "{}", fit(format!("  target {url} (over HTTP)")));
        }
        None => {
            let _ = writeln!(out, "{}", fit(format!("  index {}", s.index)));
        }
    }
    let _ = writeln!(
        out,
        "{}",
        fit(format!(
            "  queries {} ({} distinct, seed {})",
            s.queries, s.query_count, s.seed
        ))
    );
    let _ = writeln!(
        out,
        "  ≥{} requests and ≥{} s per rung; {} repetition{}",
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
    if let Some(env) = &r.environment {
        for line in crate::env::render::header(env) {
            let _ = writeln!(out, "{line}");
        }
    }
    out.push('\n');
}

/// One calibration as lines of the table's header (shared with the writes arm's table).
pub(crate) fn calibration_line(c: &Calibration) -> String {
    let last = c.attempts.last();
    let mut line = format!(
        "  calibration {}: open loop at {}/s, mean service {}, utilisation {:.1}% → {}/s",
        c.engine,
        rate(last.map_or(0.0, |a| a.rate)),
        micros(c.mean_service_us.round() as u64),
        100.0 * last.map_or(0.0, |a| a.utilisation),
        rate(c.capacity_per_sec.round()),
    );
    let disturbed: Vec<&str> = c
        .attempts
        .iter()
        .filter(|a| a.rung.disturbed)
        .flat_map(|a| a.rung.disturbed_reasons.iter().map(String::as_str))
        .collect();
    if !disturbed.is_empty() {
        let _ = write!(
            line,
            "\n{}",
            fit(format!(
                "    {} disturbed attempt{} discarded: {}",
                c.attempts.iter().filter(|a| a.rung.disturbed).count(),
                if disturbed.len() == 1 { "" } else { "s" },
                disturbed.join("; ")
            ))
        );
    }
    line
}

fn warmups(r: &BenchReport, out: &mut String) {
    for e in &r.engines {
        let w = &e.warmup;
        let first: Vec<String> = w.first_latencies_us.iter().map(|&us| micros(us)).collect();
        let _ = writeln!(
            out,
            "warm-up {}: opened in {:.3} s; {} queries in {:.2} s ({} failed)",
            e.name, e.open_secs, w.queries, w.duration_secs, w.errors,
        );
        let _ = writeln!(out, "  first: {}", first.join(" "));
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
    let flags: Vec<&str> = [
        (s.overloaded, "OVERLOADED"),
        (s.disturbed, "DISTURBED"),
        (!s.valid, "INVALID"),
    ]
    .into_iter()
    .filter_map(|(on, word)| on.then_some(word))
    .collect();
    if flags.is_empty() {
        "ok".to_string()
    } else {
        flags.join(" ")
    }
}

fn latency(r: &BenchReport, width: Width, out: &mut String) {
    let wide = width == Width::Wide;
    let mut headers = vec!["engine", "offered/s"];
    if wide {
        headers.extend(["achieved/s", "requests"]);
    }
    headers.extend([
        "shed",
        P50.label(),
        P90.label(),
        P99.label(),
        P999.label(),
        "max",
        "status",
    ]);
    let mut t = Table::new(&headers);
    for s in &r.summary {
        let mut row = vec![s.engine.clone(), rate(s.offered_rate)];
        if wide {
            row.push(spread(&s.achieved_rate, |x| format!("{x:.1}")));
            row.push(spread(&s.requests, |x| x.to_string()));
        }
        row.extend([
            fig(&s.shed, width, |x| x.to_string()),
            fig_or_dash(&s.p50_us, width, micros),
            fig_or_dash(&s.p90_us, width, micros),
            fig_or_dash(&s.p99_us, width, micros),
            fig_or_dash(&s.p999_us, width, micros),
            fig_or_dash(&s.max_us, width, micros),
            status(s),
        ]);
        t.row(row);
    }
    let _ = writeln!(out, "latency (due → completion)");
    out.push_str(&t.render());
    out.push('\n');
}

fn process(r: &BenchReport, width: Width, out: &mut String) {
    let wide = width == Width::Wide;
    let mut headers = if wide {
        vec!["engine", "offered/s", "cpu user s", "cpu sys s", "rss peak"]
    } else {
        vec!["engine", "offered/s", "user s", "sys s", "rss peak"]
    };
    if wide {
        headers.push("rss Δ");
    }
    headers.extend(["anon peak", "file peak"]);
    if wide {
        headers.push("minflt");
    }
    headers.push("majflt");
    if wide {
        headers.push("vcsw");
    }
    headers.extend(["ivcsw", "lag p99", "lag max"]);
    let mut t = Table::new(&headers);
    for s in &r.summary {
        let mut row = vec![
            s.engine.clone(),
            rate(s.offered_rate),
            fig(&s.cpu_user_secs, width, |x| format!("{x:.2}")),
            fig(&s.cpu_system_secs, width, |x| format!("{x:.2}")),
            fig_or_dash(&s.rss_peak_kib, width, kib),
        ];
        if wide {
            row.push(spread_or_dash(&s.rss_change_kib, kib_change));
        }
        row.push(fig_or_dash(&s.rss_anon_peak_kib, width, kib));
        row.push(fig_or_dash(&s.rss_file_peak_kib, width, kib));
        if wide {
            row.push(spread(&s.minor_faults, |x| x.to_string()));
        }
        row.push(fig(&s.major_faults, width, |x| x.to_string()));
        if wide {
            row.push(spread(&s.voluntary_switches, |x| x.to_string()));
        }
        row.extend([
            fig(&s.involuntary_switches, width, |x| x.to_string()),
            fig_or_dash(&s.lag_p99_us, width, micros),
            fig_or_dash(&s.lag_max_us, width, micros),
        ]);
        t.row(row);
    }
    let _ = writeln!(
        out,
        "process during each rung (dispatcher lag = how late requests were issued)"
    );
    out.push_str(&t.render());
    out.push('\n');
}

/// The vector and hybrid arms: how much of each request's service time went to
/// encoding its query, and how much to search and fusion. Absent for the text arm.
/// The worker threads' CPU time per request, beside the latency: what the engine did,
/// without the wait for a core that a busy machine adds to every wall-clock figure.
fn cpu_time(r: &BenchReport, width: Width, out: &mut String) {
    if !r.summary.iter().any(|s| s.cpu_p50_us.is_some()) {
        return;
    }
    let mut t = Table::new(&[
        "engine",
        "offered/s",
        "cpu p50",
        "cpu p90",
        "cpu p99",
        "status",
    ]);
    for s in &r.summary {
        t.row(vec![
            s.engine.clone(),
            rate(s.offered_rate),
            fig_or_dash(&s.cpu_p50_us, width, micros),
            fig_or_dash(&s.cpu_p90_us, width, micros),
            fig_or_dash(&s.cpu_p99_us, width, micros),
            status(s),
        ]);
    }
    let _ = writeln!(
        out,
        "service CPU per request (each worker's thread CPU clock around its request)"
    );
    out.push_str(&t.render());
    out.push('\n');
}

fn encoding(r: &BenchReport, width: Width, out: &mut String) {
    if !r.summary.iter().any(|s| s.encode_p50_us.is_some()) {
        return;
    }
    let mut t = Table::new(&[
        "engine",
        "offered/s",
        "encode p50",
        "encode p99",
        "search p50",
        "search p99",
        "batched",
    ]);
    for s in &r.summary {
        t.row(vec![
            s.engine.clone(),
            rate(s.offered_rate),
            fig_or_dash(&s.encode_p50_us, width, micros),
            fig_or_dash(&s.encode_p99_us, width, micros),
            fig_or_dash(&s.search_p50_us, width, micros),
            fig_or_dash(&s.search_p99_us, width, micros),
            fig_or_dash(&s.batched, width, |n| n.to_string()),
        ]);
    }
    let _ = writeln!(
        out,
        "query encoding inside each request (encode = the query to its vector; search = \
         the rest of the service time: retrieval and fusion; batched = requests whose \
         queries were encoded together with others already waiting, --encode-batch)"
    );
    out.push_str(&t.render());
    out.push('\n');
    request_parts(r, width, out);
}

/// The vector and hybrid arms: the four parts of a request's service at one quantile,
/// their sum, and the request's latency at that quantile beside it. Quantiles do not
/// add: the sum of the parts' p99s is an upper bound on a request's, not its p99, and
/// the latency includes any wait for a worker.
fn request_parts(r: &BenchReport, width: Width, out: &mut String) {
    if !r.summary.iter().any(|s| s.text_p50_us.is_some()) {
        return;
    }
    type Pick = fn(&RungSummary) -> [&Option<Spread<u64>>; 5];
    let quantiles: [(&str, Pick); 2] = [
        ("p50", |s| {
            [
                &s.encode_p50_us,
                &s.text_p50_us,
                &s.vector_p50_us,
                &s.fusion_p50_us,
                &s.p50_us,
            ]
        }),
        ("p99", |s| {
            [
                &s.encode_p99_us,
                &s.text_p99_us,
                &s.vector_p99_us,
                &s.fusion_p99_us,
                &s.p99_us,
            ]
        }),
    ];
    for (q, pick) in quantiles {
        let mut t = Table::new(&[
            "engine",
            "offered/s",
            "encode",
            "text",
            "vector",
            "fusion",
            "sum of parts",
            "latency",
        ]);
        for s in &r.summary {
            let [encode, text, vector, fusion, latency] = pick(s);
            let parts = [encode, text, vector, fusion];
            let sum = parts
                .iter()
                .map(|p| p.as_ref().map(|p| p.median))
                .sum::<Option<u64>>();
            t.row(vec![
                s.engine.clone(),
                rate(s.offered_rate),
                fig_or_dash(encode, width, micros),
                fig_or_dash(text, width, micros),
                fig_or_dash(vector, width, micros),
                fig_or_dash(fusion, width, micros),
                sum.map_or_else(|| "-".to_string(), micros),
                fig_or_dash(latency, width, micros),
            ]);
        }
        let _ = writeln!(
            out,
            "where a request's time went, {q} of each part (encode; the text and vector \
             streams' searches; fusion = the rest of the ranking), their sum, and the \
             request's latency {q} (from its due time)"
        );
        out.push_str(&t.render());
        out.push('\n');
    }
}

/// Over HTTP (`--target`): where each latency went. The client's own time per request
/// (the instrument's overhead inside each latency above), and where the server reports
/// its own time per request, that time and the rest of each latency beside it: what the
/// dispatcher, the client, the wire and scheduling added, request by request. Absent for
/// engines in this process.
fn client(r: &BenchReport, width: Width, out: &mut String) {
    let has_server = r.summary.iter().any(|s| s.server_p50_us.is_some());
    if !has_server && !r.summary.iter().any(|s| s.client_p50_us.is_some()) {
        return;
    }
    let mut headers = vec!["engine", "offered/s", "client p50", "client p99"];
    if has_server {
        headers.extend(["server p50", "server p99", "added p50", "added p99"]);
    }
    let mut t = Table::new(&headers);
    for s in &r.summary {
        let mut row = vec![
            s.engine.clone(),
            rate(s.offered_rate),
            fig_or_dash(&s.client_p50_us, width, micros),
            fig_or_dash(&s.client_p99_us, width, micros),
        ];
        if has_server {
            row.extend([
                fig_or_dash(&s.server_p50_us, width, micros),
                fig_or_dash(&s.server_p99_us, width, micros),
                fig_or_dash(&s.added_p50_us, width, micros),
                fig_or_dash(&s.added_p99_us, width, micros),
            ]);
        }
        t.row(row);
    }
    let _ = writeln!(
        out,
        "HTTP client's own time per request (building the body, parsing the answer; part \
         of each latency)"
    );
    if has_server {
        let clock = r
            .summary
            .iter()
            .find_map(|s| s.server_clock.as_deref())
            .unwrap_or("the server's report");
        let line = format!(
            "  server = the server's own time per request, from {clock}; added = each \
             request's latency less its server time (dispatcher, client, wire, scheduling)"
        );
        for l in crate::env::render::wrap(&line) {
            let _ = writeln!(out, "{l}");
        }
    }
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

/// The legend: a line for each mark the tables above hold, none for one they do not.
fn notes(r: &BenchReport, width: Width, out: &mut String) {
    let absent = r.summary.iter().any(|s| {
        [&s.p50_us, &s.p90_us, &s.p99_us, &s.p999_us, &s.lag_p99_us]
            .iter()
            .any(|q| q.is_none())
    });
    if absent {
        let _ = writeln!(
            out,
            "-  absent: fewer than 100 samples beyond the quantile, never estimated (p50 needs {},",
            P50.min_samples()
        );
        let _ = writeln!(
            out,
            "   p90 {}, p99 {}, p99.9 {} requests)",
            P90.min_samples(),
            P99.min_samples(),
            P999.min_samples()
        );
    }
    let overloaded = r.summary.iter().any(|s| s.overloaded);
    let invalid = r.summary.iter().any(|s| !s.valid);
    let overload_note = format!(
        "OVERLOADED: requests were shed at the in-flight cap of {}",
        r.settings.inflight
    );
    match (overloaded, invalid) {
        (true, true) => {
            let _ = writeln!(out, "{overload_note}; INVALID: see the JSON");
        }
        (true, false) => {
            let _ = writeln!(out, "{overload_note}");
        }
        (false, true) => {
            let _ = writeln!(out, "INVALID: see the JSON");
        }
        (false, false) => {}
    }
    if r.summary.iter().any(|s| s.disturbed) {
        let _ = writeln!(
            out,
            "DISTURBED: the machine may have set the figures (lag p99 > {} × p50, a suspend,",
            r.settings.lag_bound()
        );
        let _ = writeln!(
            out,
            "   load above the cores); the JSON's disturbed_reasons say which"
        );
    }
    for s in r.summary.iter().filter(|s| s.disturbed) {
        let reasons: Vec<&str> = r
            .engines
            .iter()
            .flat_map(|e| &e.rungs)
            .filter(|x| x.engine == s.engine && x.rung == s.rung && x.disturbed)
            .flat_map(|x| x.disturbed_reasons.iter().map(String::as_str))
            .collect();
        let _ = writeln!(
            out,
            "{}",
            fit(format!(
                "   {} at {}/s: {}",
                s.engine,
                rate(s.offered_rate),
                reasons.join("; ")
            ))
        );
        let notes: Vec<&str> = r
            .engines
            .iter()
            .flat_map(|e| &e.rungs)
            .filter(|x| x.engine == s.engine && x.rung == s.rung)
            .filter_map(|x| x.cpu_note.as_deref())
            .collect();
        for note in notes {
            let _ = writeln!(out, "{}", fit(format!("     {note}")));
        }
    }
    if r.settings.repeat > 1 {
        let _ = writeln!(
            out,
            "{}",
            match width {
                Width::Wide => format!(
                    "a [b–c]: median a, min b and max c over {} repetitions",
                    r.settings.repeat
                ),
                Width::Narrow => format!(
                    "medians over {} repetitions; --wide shows [min–max] and every column",
                    r.settings.repeat
                ),
            }
        );
    }
}

/// Columns padded to their widest cell: text columns (the first, and any headed in
/// `Table::TEXT`) left-aligned, figures right-aligned. heddle-bench's ratio tables use
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
