//! The Lucene comparison's table: every figure of the three engines (four with
//! --tantivy), with the like-for-like ratio (heddle-child / lucene: both through the
//! protocol), the protocol's own cost (heddle / heddle-child) and, with tantivy, heddle /
//! tantivy (both in this process).

use std::fmt::Write;

use heddle_eval::bench::report::Table;
use heddle_eval::bench::report::format::{kib, micros, rate};
use heddle_eval::bench::sequential::per_query::{ClassRow, PerQueryReport};

use super::{Figures, HEDDLE, HEDDLE_CHILD, LUCENE, LuceneReport, TANTIVY};
use crate::analysis::{Analysis, Peer};

/// A row's figures (heddle, heddle-child, lucene, tantivy), `None` where not measured.
type Four = [Option<f64>; 4];

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
        _ => "-".to_string(),
    }
}

/// A table row; the tantivy column and its ratio only when `tantivy` (it ran).
fn cells(label: &str, v: Four, tantivy: bool, show: impl Fn(f64) -> String) -> Vec<String> {
    let shown = if tantivy { 4 } else { 3 };
    let mut row = vec![label.to_string()];
    row.extend(v[..shown].iter().map(|x| x.map_or("-".to_string(), &show)));
    row.push(ratio(v[1], v[2]));
    row.push(ratio(v[0], v[1]));
    if tantivy {
        row.push(ratio(v[0], v[3]));
    }
    row
}

fn each(r: &LuceneReport, f: impl Fn(&Figures) -> Option<f64>) -> Four {
    let get = |name: &str| r.engines.iter().find(|e| e.engine == name).and_then(&f);
    [get(HEDDLE), get(HEDDLE_CHILD), get(LUCENE), get(TANTIVY)]
}

fn secs(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}

fn us(v: f64) -> String {
    micros(v.round() as u64)
}

/// A class's per-query-median quantile for one engine of a two-engine report.
fn class_q(r: Option<&PerQueryReport>, class: &str, engine: &str, p99: bool) -> Option<f64> {
    let r = r?;
    let i = r.engines.iter().position(|e| e == engine)?;
    let row: &ClassRow = r.by_df.iter().find(|c| c.class == class)?;
    let q = row.us.get(i)?;
    Some(if p99 { q.p99 } else { q.p50 })
}

/// The table, with the settings and caveats it needs to be read.
pub fn render(r: &LuceneReport) -> String {
    let mut out = String::new();
    let native = r.analysis == Analysis::Native;
    let _ = writeln!(
        out,
        "heddle vs Lucene {} — {}, BM25 k1 {} b {}",
        r.lucene_version,
        r.analysis.label(Peer::Lucene),
        r.k1,
        r.b
    );
    let agreement = if native {
        "agreement (reported, not required: the engines see different tokens)"
    } else {
        "agreement"
    };
    let explained = if native { " over heddle's tokens" } else { "" };
    let _ = writeln!(
        out,
        "  {agreement}: {:.1}% identical or tied, {:.1}% with the one-byte length code explained{explained} ({} queries); protocol changed {} answers",
        100.0 * r.agreement.agreeing,
        100.0 * r.agreement.agreeing_explained,
        r.agreement.queries,
        r.protocol_mismatches
    );
    let _ = writeln!(
        out,
        "  JIT warm-up per child start: whole passes over the queries until a pass mean is within {:.0}% of the one before (at least {}, at most {} passes)",
        100.0 * r.warm_rule.tolerance,
        r.warm_rule.min_passes,
        r.warm_rule.max_passes
    );
    let tantivy = r.engines.iter().any(|e| e.engine == TANTIVY);
    if let Some(a) = &r.tantivy_agreement {
        let _ = writeln!(
            out,
            "  heddle against tantivy: {:.1}% identical or tied, {:.1}% with tantivy's length code explained ({} queries)",
            100.0 * a.agreeing,
            100.0 * a.agreeing_explained,
            a.queries
        );
    }
    let mut header = vec![
        "figure",
        HEDDLE,
        HEDDLE_CHILD,
        LUCENE,
        "child/lucene",
        "heddle/child",
    ];
    if tantivy {
        header.insert(4, TANTIVY);
        header.push("heddle/tantivy");
    }
    let mut t = Table::new(&header);
    t.row(cells("build", each(r, |f| f.build_secs), tantivy, secs));
    if let Some(a) = r.lucene_build.analysis_seconds {
        t.row(cells(
            "  lucene + heddle's analysis",
            [None, None, Some(r.lucene_build.seconds + a), None],
            tantivy,
            secs,
        ));
    }
    t.row(cells(
        "documents/s",
        each(r, |f| f.docs_per_sec),
        tantivy,
        |v| format!("{v:.0}"),
    ));
    t.row(cells(
        "index bytes",
        each(r, |f| f.index_bytes.map(|b| b as f64)),
        tantivy,
        |v| format!("{:.1} MB", v / 1e6),
    ));
    t.row(cells(
        "segments",
        each(r, |f| f.segments.map(|s| s as f64)),
        tantivy,
        |v| format!("{v}"),
    ));
    t.row(cells(
        "build peak RSS",
        each(r, |f| f.build_peak_rss_kib.map(|k| k as f64)),
        tantivy,
        |v| kib(v as u64),
    ));
    t.row(cells(
        "open (start → ready)",
        each(r, |f| f.open_secs.map(|s| s.median)),
        tantivy,
        secs,
    ));
    t.row(cells(
        "open (engine's own)",
        each(r, |f| f.open_engine_secs.map(|s| s.median)),
        tantivy,
        secs,
    ));
    let seq = |p: fn(&heddle_eval::bench::stats::LatencySummary) -> Option<u64>| {
        move |f: &Figures| {
            f.sequential
                .as_ref()
                .and_then(|s| p(&s.latency_us))
                .map(|v| v as f64)
        }
    };
    t.row(cells(
        "sequential p50",
        each(r, seq(|l| l.p50)),
        tantivy,
        us,
    ));
    t.row(cells(
        "sequential p99",
        each(r, seq(|l| l.p99)),
        tantivy,
        us,
    ));
    let classes: Vec<String> = r
        .per_query
        .as_ref()
        .map(|p| p.by_df.iter().map(|c| c.class.clone()).collect())
        .unwrap_or_default();
    for class in &classes {
        for (p99, name) in [(false, "p50"), (true, "p99")] {
            let v = [
                class_q(r.per_query_protocol.as_ref(), class, HEDDLE, p99),
                class_q(r.per_query.as_ref(), class, HEDDLE_CHILD, p99),
                class_q(r.per_query.as_ref(), class, LUCENE, p99),
                class_q(r.per_query_tantivy.as_ref(), class, TANTIVY, p99),
            ];
            t.row(cells(&format!("  {class} query {name}"), v, tantivy, us));
        }
    }
    // CPU per query: an engine in this process from its own thread; a child from its
    // answers (its searching thread), so the protocol's parent side is left out of both.
    let cpu_p50 = |f: &Figures| match f.engine.as_str() {
        HEDDLE | TANTIVY => f
            .sequential
            .as_ref()
            .and_then(|s| s.cpu_us.as_ref())
            .and_then(|c| c.p50)
            .map(|v| v as f64),
        _ => f
            .child_time
            .as_ref()
            .and_then(|c| c.cpu_us.p50)
            .map(|v| v as f64),
    };
    let cpu_mean = |f: &Figures| match f.engine.as_str() {
        HEDDLE | TANTIVY => f
            .sequential
            .as_ref()
            .and_then(|s| s.cpu_us.as_ref())
            .and_then(|c| c.mean),
        _ => f.child_time.as_ref().map(|c| c.cpu_mean_us),
    };
    let one = |v: f64| format!("{v:.1} µs");
    t.row(cells(
        "CPU per query p50 (searching thread)",
        each(r, cpu_p50),
        tantivy,
        us,
    ));
    t.row(cells("CPU per query mean", each(r, cpu_mean), tantivy, one));
    t.row(cells(
        "  child's own service time p50",
        each(r, |f| {
            f.child_time
                .as_ref()
                .and_then(|c| c.service_us.p50)
                .map(|v| v as f64)
        }),
        tantivy,
        us,
    ));
    t.row(cells(
        "  parent's CPU per query p50 (client)",
        each(r, |f| {
            (f.engine != HEDDLE && f.engine != TANTIVY)
                .then_some(())
                .and(f.sequential.as_ref())
                .and_then(|s| s.cpu_us.as_ref())
                .and_then(|c| c.p50)
                .map(|v| v as f64)
        }),
        tantivy,
        us,
    ));
    t.row(cells(
        "highest rate held",
        each(r, |f| {
            f.held
                .as_ref()
                .and_then(|h| h.held.as_ref())
                .map(|h| h.rate)
        }),
        tantivy,
        rate,
    ));
    let mem = |g: fn(&super::backend::ChildRss) -> Option<u64>| {
        move |f: &Figures| f.memory.as_ref().and_then(g).map(|v| v as f64)
    };
    t.row(cells(
        "peak RSS (memory rung)",
        each(r, mem(|m| m.vm_hwm_kib)),
        tantivy,
        |v| kib(v as u64),
    ));
    t.row(cells(
        "  anonymous (heap, code)",
        each(r, mem(|m| m.rss_anon_kib)),
        tantivy,
        |v| kib(v as u64),
    ));
    t.row(cells(
        "  file-backed (index)",
        each(r, mem(|m| m.rss_file_kib)),
        tantivy,
        |v| kib(v as u64),
    ));
    t.row(cells(
        "  JVM heap used",
        each(r, mem(|m| m.heap.map(|h| h.heap_used / 1024))),
        tantivy,
        |v| kib(v as u64),
    ));
    t.row(cells(
        "  GC collections",
        each(r, mem(|m| m.heap.map(|h| h.gc_count))),
        tantivy,
        |v| format!("{v}"),
    ));
    t.row(cells(
        "  GC time",
        each(r, mem(|m| m.heap.map(|h| h.gc_millis))),
        tantivy,
        |v| format!("{v} ms"),
    ));
    t.row(cells(
        "  longest GC pause",
        each(r, mem(|m| m.heap.map(|h| h.longest_gc_millis))),
        tantivy,
        |v| format!("{v} ms"),
    ));
    t.row(cells(
        "warm-up passes (sequential)",
        each(r, |f| {
            f.warm_up.first().map(|w| w.pass_means_us.len() as f64)
        }),
        tantivy,
        |v| format!("{v}"),
    ));
    out.push_str(&t.render());
    let _ = writeln!(
        out,
        "child/lucene: both through the same protocol (the like-for-like ratio; below 1: heddle's figure is smaller).\n\
         heddle/child: heddle in this process over heddle through the protocol (below 1: the protocol's cost).\n\
         {}\
         CPU per query: the thread that searched, in the sequential pass (a child's from its own answers).\n\
         {}\n\
         Lucene searches with IndexSearcher.search(query, k): its collector counts hits exactly up to 1,000\n\
         before it may skip documents that cannot compete; heddle counts none.",
        if tantivy {
            "heddle/tantivy: both in this process, tantivy as `heddle-bench bench` runs it (its index of heddle's tokens).\n"
        } else {
            ""
        },
        if native {
            "NATIVE: each engine analyses the text itself (build times include it) and answers its own question:\n\
             the figures are each engine with its own analysis, not the same work."
        } else {
            "Lucene's build time is its own indexing of heddle's pre-analysed tokens; heddle's includes its analysis."
        }
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(analysis: Analysis) -> LuceneReport {
        LuceneReport {
            analysis,
            analysis_label: analysis.label(Peer::Lucene).to_string(),
            corpus: "c".into(),
            queries: "q".into(),
            lucene_version: "9.9.1".into(),
            k1: 0.9,
            b: 0.4,
            warm_rule: super::super::backend::WarmRule {
                min_passes: 3,
                max_passes: 30,
                tolerance: 0.05,
            },
            agreement: crate::agreement::report((HEDDLE, LUCENE), 10, 100, Vec::new()),
            protocol_mismatches: 0,
            lucene_build: super::super::lucene::LuceneBuild::one_document(),
            engines: Vec::new(),
            per_query: None,
            per_query_protocol: None,
            tantivy_agreement: None,
            per_query_tantivy: None,
            memory_rate: None,
            environment: None,
        }
    }

    #[test]
    fn the_table_names_its_analysis_and_a_native_one_says_the_answers_differ() {
        let native = render(&report(Analysis::Native));
        let head = native.lines().next().unwrap();
        assert!(
            head.contains(
                "NATIVE analysis (heddle lucene-english vs Lucene EnglishAnalyzer: different tokens, different answers)"
            ),
            "{native}"
        );
        assert!(native.contains("reported, not required"), "{native}");
        assert!(!native.contains("pre-analysed"), "{native}");
        let matched = render(&report(Analysis::Matched));
        assert!(
            matched.lines().next().unwrap().contains("matched analysis"),
            "{matched}"
        );
        assert!(!matched.contains("NATIVE"), "{matched}");
        assert!(matched.contains("length code explained"), "{matched}");
    }

    #[test]
    fn tantivy_gets_a_column_and_a_ratio_only_when_it_ran() {
        let without = render(&report(Analysis::Matched));
        assert!(!without.contains("heddle/tantivy"), "{without}");
        let mut with = report(Analysis::Matched);
        for (engine, secs) in [(HEDDLE, 1.0), (TANTIVY, 4.0)] {
            with.engines.push(Figures {
                engine: engine.into(),
                build_secs: Some(secs),
                ..Default::default()
            });
        }
        let table = render(&with);
        assert!(table.contains("heddle/tantivy"), "{table}");
        let build = table
            .lines()
            .find(|l| l.starts_with("build "))
            .unwrap_or_else(|| panic!("no build row: {table}"));
        assert!(build.trim_end().ends_with("0.25×"), "{build}");
    }

    #[test]
    fn ratios_divide_the_right_way_and_leave_gaps() {
        let show = |v: f64| format!("{v}");
        let row = cells(
            "x",
            [Some(1.0), Some(2.0), Some(4.0), Some(8.0)],
            false,
            show,
        );
        assert_eq!(row, ["x", "1", "2", "4", "0.50×", "0.50×"]);
        let row = cells(
            "x",
            [Some(1.0), Some(2.0), Some(4.0), Some(8.0)],
            true,
            show,
        );
        assert_eq!(row, ["x", "1", "2", "4", "8", "0.50×", "0.50×", "0.12×"]);
        let row = cells("x", [None, Some(3.0), None, None], true, show);
        assert_eq!(row[5], "-");
        assert_eq!(row[6], "-");
        assert_eq!(row[7], "-");
        assert_eq!(row[1], "-");
    }
}
