//! Each kind of run as a [`Page`]: the ladder (`bench`), the writes arm (`bench
//! --writes`) and `quality`. heddle-bench builds its comparison's page from the same
//! parts ([`ladder_sections`], [`environment_body`]).

use std::collections::HashMap;

use super::{Body, Page, Table};
use crate::bench::report::format::{kib, micros, rate, spread, spread_or_dash};
use crate::bench::report::{BenchReport, Width, provenance, render_svg, render_table_as};
use crate::bench::writes::{self, WritesReport};
use crate::cli::display::natural_cmp;
use crate::env::Environment;
use crate::progress::plural;
use crate::quality::Evaluation;

/// The environment as the text tables print it, or a sentence if there is none.
pub fn environment_body(env: Option<&Environment>) -> Body {
    match env {
        Some(e) => Body::new().pre(&crate::env::render::header(e).join("\n")),
        None => Body::new().paragraph("The report carries no environment."),
    }
}

/// A ladder run: environment, the ladder as a table, the plot, the sequential pass and
/// its per-query report if any, and the full text table.
pub fn bench_page(report: &BenchReport) -> Page {
    let mut page = Page::new(
        &format!("{}: latency against offered load", report.tool),
        &provenance(&report.settings, report.environment.as_ref()),
    );
    page.section(
        "environment",
        "Environment",
        environment_body(report.environment.as_ref()),
    );
    ladder_sections(&mut page, report);
    page
}

/// The ladder's sections: its table, the plot, the sequential pass (and per-query
/// figures) if run, and the whole text table with every column.
pub fn ladder_sections(page: &mut Page, report: &BenchReport) {
    if !report.complete {
        page.section(
            "incomplete",
            "Incomplete",
            Body::new().paragraph("The run did not finish: only the rungs it finished are here."),
        );
    }
    page.section(
        "ladder",
        "The ladder",
        Body::new().table(&ladder_table(report)),
    );
    page.section(
        "plot",
        "Plot",
        Body::new().svg(
            &render_svg(report),
            "Latency quantiles against offered rate (log scales); below, the achieved rate and \
             the requests shed per rung.",
        ),
    );
    if !report.sequential.is_empty() {
        page.section(
            "sequential",
            "Sequential pass",
            Body::new().pre(&crate::bench::sequential::render(&report.sequential)),
        );
    }
    if let Some(p) = &report.per_query {
        page.section(
            "per-query",
            "Per query",
            Body::new().pre(&crate::bench::sequential::per_query::render(p)),
        );
    }
    page.section(
        "table",
        "Every figure (the text table, every column)",
        Body::new().pre(&render_table_as(report, Width::Wide)),
    );
}

/// One row per engine and rung: medians over repetitions, `[min–max]` where they differ.
fn ladder_table(report: &BenchReport) -> Table {
    // The state second, where it stays on screen however wide the figures make the
    // table (at 1280 px the last column scrolled off).
    let header = [
        "engine",
        "offered/s",
        "state",
        "achieved/s",
        "requests",
        "shed",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "max",
        "service CPU p50",
        "cpu user+sys s",
        "rss peak",
    ];
    let mut rows: Vec<&crate::bench::report::RungSummary> = report.summary.iter().collect();
    rows.sort_by(|a, b| {
        a.offered_rate
            .total_cmp(&b.offered_rate)
            .then(a.engine.cmp(&b.engine))
    });
    Table {
        caption: Some(format!(
            "{} repetition{}; quantiles nearest-rank, absent (—) with fewer than 100 samples beyond them",
            report.settings.repeat,
            if report.settings.repeat == 1 { "" } else { "s" }
        )),
        header: header.iter().map(|h| h.to_string()).collect(),
        rows: rows
            .into_iter()
            .map(|s| {
                let q = |v: &Option<crate::bench::stats::Spread<u64>>| {
                    v.as_ref().map_or("—".to_string(), |v| spread(v, micros))
                };
                let mut state = Vec::new();
                if s.overloaded {
                    state.push("overloaded");
                }
                if !s.valid {
                    state.push("invalid");
                }
                if s.disturbed {
                    state.push("disturbed");
                }
                let class = if !s.valid {
                    Some("invalid")
                } else if s.overloaded {
                    Some("overloaded")
                } else if s.disturbed {
                    Some("disturbed")
                } else {
                    None
                };
                (
                    class,
                    vec![
                        s.engine.clone(),
                        rate(s.offered_rate),
                        if state.is_empty() {
                            "ok".to_string()
                        } else {
                            state.join(", ")
                        },
                        spread(&s.achieved_rate, rate),
                        spread(&s.requests, |v| v.to_string()),
                        spread(&s.shed, |v| v.to_string()),
                        q(&s.p50_us),
                        q(&s.p90_us),
                        q(&s.p99_us),
                        q(&s.p999_us),
                        q(&s.max_us),
                        q(&s.cpu_p50_us),
                        format!("{:.2}", s.cpu_user_secs.median + s.cpu_system_secs.median),
                        spread_or_dash(&s.rss_peak_kib, kib),
                    ],
                )
            })
            .collect(),
    }
}

/// A writes-arm run: environment, the summary per engine and commit-thread count, the
/// plot (one panel per trial), and the whole text report.
pub fn writes_page(report: &WritesReport, text: &str) -> Page {
    let mut page = Page::new(
        &format!("{}: what a commit costs the reads beside it", report.tool),
        &provenance(&report.settings, report.environment.as_ref()),
    );
    page.section(
        "environment",
        "Environment",
        environment_body(report.environment.as_ref()),
    );
    let q = |v: &Option<crate::bench::stats::Spread<u64>>| {
        v.as_ref().map_or("—".to_string(), |v| spread(v, micros))
    };
    let summary = Table {
        caption: Some(format!(
            "reads at {}/s; {} per commit; medians over {}, [min–max] where they differ",
            rate(report.writes.rate),
            plural(report.writes.docs_per_commit as u64, "document"),
            plural(report.settings.repeat as u64, "repetition")
        )),
        header: [
            "engine",
            "commit threads",
            "commits",
            "commit wall",
            "exclusive",
            "outside p50",
            "outside p99",
            "in-commit p50",
            "in-commit p99",
            "in-commit max",
            "shed outside / in commit",
            "state",
        ]
        .iter()
        .map(|h| h.to_string())
        .collect(),
        rows: report
            .summary
            .iter()
            .map(|s| {
                (
                    if !s.valid {
                        Some("invalid")
                    } else if s.disturbed {
                        Some("disturbed")
                    } else {
                        None
                    },
                    vec![
                        s.engine.clone(),
                        crate::bench::writes::threads_cell(s.commit_threads),
                        spread(&s.commits, |v| v.to_string()),
                        spread_or_dash(&s.commit_wall_secs, writes::table::secs),
                        spread_or_dash(&s.exclusive_ns, writes::table::nanos),
                        q(&s.outside.p50_us),
                        q(&s.outside.p99_us),
                        q(&s.in_commit.p50_us),
                        q(&s.in_commit.p99_us),
                        q(&s.in_commit.max_us),
                        format!("{} / {}", s.outside.shed.median, s.in_commit.shed.median),
                        match (s.valid, s.all_visible, s.disturbed) {
                            (true, true, false) => "ok".to_string(),
                            (true, true, true) => "disturbed".to_string(),
                            (false, _, _) => "invalid".to_string(),
                            (true, false, _) => "NOT all visible".to_string(),
                        },
                    ],
                )
            })
            .collect(),
    };
    page.section("summary", "Summary", Body::new().table(&summary));
    page.section(
        "plot",
        "Reads over time, commits as bands",
        Body::new().svg(
            &writes::svg::render_svg(report),
            "Each read at its due time and its latency (log scale); each commit's phases as \
             bands, the exclusive window in black; outside and in-commit p50 and p99 as lines.",
        ),
    );
    page.section(
        "report",
        "Every figure (the text report)",
        Body::new().pre(text),
    );
    page
}

/// A `quality` run: the means, every query's figures with its text, and the environment.
pub fn quality_page(
    index: &str,
    ranking: &str,
    eval: &Evaluation,
    texts: &HashMap<String, String>,
    env: &Environment,
) -> Page {
    let mut page = Page::new(
        "heddle-eval quality",
        &format!(
            "index {index} · {} · {} · heddle {}",
            plural(eval.queries() as u64, "query"),
            env.started_utc,
            env.build.short()
        ),
    );
    page.section("environment", "Environment", environment_body(Some(env)));
    let means = Table {
        caption: Some(format!("ranking: {ranking}")),
        header: vec!["metric".to_string(), "mean".to_string()],
        rows: eval
            .metrics
            .iter()
            .enumerate()
            .map(|(m, metric)| (None, vec![metric.label(), format!("{:.4}", eval.mean(m))]))
            .collect(),
    };
    page.section("means", "Means", Body::new().table(&means));
    let mut header = vec!["query".to_string(), "text".to_string()];
    header.extend(eval.metrics.iter().map(|m| m.label()));
    // In the text output's order: `2` before `10`.
    let mut queries: Vec<(&String, &Vec<f64>)> = eval.per_query.iter().collect();
    queries.sort_by(|a, b| natural_cmp(a.0, b.0));
    let per_query = Table {
        caption: Some("every judged query (one without results scores 0)".to_string()),
        header,
        rows: queries
            .into_iter()
            .map(|(qid, values)| {
                let mut row = vec![qid.clone(), texts.get(qid).cloned().unwrap_or_default()];
                row.extend(values.iter().map(|v| format!("{v:.4}")));
                (None, row)
            })
            .collect(),
    };
    page.section("per-query", "Per query", Body::new().table(&per_query));
    page
}
