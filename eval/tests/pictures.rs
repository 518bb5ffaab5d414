//! The pictures and the HTML report (issue 17, items 14–16): the writes arm's plot holds
//! a band per commit phase and a point per read; the ladder's plot has p90, max, the
//! achieved-rate panel and a subtitle naming what was measured; `--html` writes one file
//! that fetches nothing and holds the environment, the tables and the charts, with every
//! text escaped.

mod common;

use std::time::Duration;

use clap::Parser;
use common::{covid_docs, index_of, ok};
use heddle_eval::bench::backend::synthetic::{ServiceModel, SyntheticFactory};
use heddle_eval::bench::report::render_svg;
use heddle_eval::bench::{BenchArgs, run};

/// One file, nothing fetched: no external `src`/`href`, no stylesheet link, no script.
fn assert_self_contained(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..80]);
    assert!(html.trim_end().ends_with("</html>"));
    for bad in [
        "src=\"http",
        "href=\"http",
        "src='http",
        "href='http",
        "<link",
        "<script",
        "@import",
        "url(",
    ] {
        assert!(!html.contains(bad), "the page holds {bad:?}");
    }
    assert!(html.contains("@media print"), "a print stylesheet");
    assert!(html.contains("<section id=\"environment\">"));
    assert!(
        html.contains("environment: heddle"),
        "the environment's lines"
    );
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

#[test]
fn the_writes_arm_draws_a_band_per_phase_and_a_point_per_read_and_writes_html() {
    let dir = tempfile::tempdir().unwrap();
    let index = index_of(dir.path(), &covid_docs(300));
    let queries = dir.path().join("queries.jsonl");
    std::fs::write(
        &queries,
        "{\"_id\":\"1\",\"text\":\"covid transmission\"}\n{\"_id\":\"2\",\"text\":\"masks\"}\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap(); // outputs' directories are never made
    let p = |name: &str| out.join(name).display().to_string();
    ok(&[
        "bench",
        "--writes",
        "--index",
        index.to_str().unwrap(),
        "--queries",
        queries.to_str().unwrap(),
        "--rate",
        "300",
        "--samples",
        "450",
        "--min-duration",
        "0",
        "--write-docs",
        "40",
        "--commit-every",
        "0.25",
        "--commit-threads",
        "1",
        "--warmup",
        "10",
        "--inflight",
        "10000",
        "--scratch",
        &p("scratch"),
        "--json",
        &p("writes.json"),
        "--svg",
        &p("writes.svg"),
        "--html",
        &p("writes.html"),
    ]);
    let report = heddle_eval::bench::writes::read_json(&out.join("writes.json")).unwrap();
    let svg = std::fs::read_to_string(out.join("writes.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(count(&svg, "class=\"trial\""), report.trials.len());
    let phases: usize = report
        .trials
        .iter()
        .flat_map(|t| &t.run.commits)
        .map(|c| c.phases.len())
        .sum();
    assert!(
        phases >= 2 * 7,
        "two commits or more, add and six heddle phases"
    );
    assert_eq!(count(&svg, "class=\"phase\""), phases);
    let exclusive = report
        .trials
        .iter()
        .flat_map(|t| &t.run.commits)
        .filter(|c| c.exclusive_ns.is_some())
        .count();
    assert_eq!(count(&svg, "class=\"exclusive\""), exclusive);
    assert!(exclusive >= 2, "heddle reports its exclusive window");
    // Below MAX_POINTS every completed read is drawn, and the JSON keeps them all.
    let t = &report.trials[0];
    assert_eq!(
        t.run.samples.len() as u64,
        t.run.in_commit.completed + t.run.outside.completed
    );
    assert_eq!(count(&svg, "class=\"read\""), t.run.samples.len());
    assert!(
        t.run
            .samples
            .windows(2)
            .all(|w| w[0].due_us() <= w[1].due_us())
    );
    let lines = [
        t.run.outside.latency_us.p50,
        t.run.outside.latency_us.p99,
        t.run.in_commit.latency_us.p50,
        t.run.in_commit.latency_us.p99,
    ];
    assert_eq!(
        count(&svg, "class=\"quantile\""),
        lines.iter().flatten().count()
    );
    assert!(svg.contains("class=\"subtitle\""));
    let version = format!("heddle {}", env!("CARGO_PKG_VERSION"));
    assert!(svg.contains(&version), "{version:?} not in the subtitle");

    let html = std::fs::read_to_string(out.join("writes.html")).unwrap();
    assert_self_contained(&html);
    assert_eq!(count(&html, "<svg"), 1, "the plot, inline");
    assert_eq!(count(&html, "class=\"phase\""), phases);
    assert!(html.contains("<section id=\"summary\">") && html.contains("<table>"));
    assert!(html.contains("in-commit p99") && html.contains("the trade"));
    assert_eq!(report.settings.repeat, 1);
    assert!(
        html.contains("40 documents per commit; medians over 1 repetition,"),
        "plurals from the helper, not '(s)'"
    );
    // A trial of one commit says so in the singular.
    let mut one = report.clone();
    one.trials.truncate(1);
    one.trials[0].run.commits.truncate(1);
    let svg = heddle_eval::bench::writes::svg::render_svg(&one);
    assert!(svg.contains(">1 commit of 40 documents · "), "one commit");
}

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    bench: BenchArgs,
}

#[test]
fn the_ladder_plot_has_p90_max_the_achieved_panel_and_a_subtitle() {
    let dir = tempfile::tempdir().unwrap();
    let queries = dir.path().join("queries.jsonl");
    // A query text a page must escape.
    std::fs::write(
        &queries,
        "{\"_id\":\"1\",\"text\":\"<b>covid</b> & masks\"}\n{\"_id\":\"2\",\"text\":\"mask efficacy\"}\n",
    )
    .unwrap();
    let svg = dir.path().join("out/bench.svg");
    let html = dir.path().join("out/bench.html");
    std::fs::create_dir(dir.path().join("out")).unwrap(); // outputs' directories are never made
    let argv: Vec<String> = [
        "bench",
        "--index",
        &dir.path().join("index").display().to_string(),
        "--queries",
        &queries.display().to_string(),
        "--threads",
        "2",
        "--min-duration",
        "0",
        "--max-others-cpu",
        "1000",
        "--max-lag-ratio",
        "1000",
        "--rates",
        "500,1000",
        // 1,000 requests a rung: p90 is reportable, p99 is not.
        "--samples",
        "1000",
        "--warmup",
        "20",
        "--inflight",
        "10000",
        // The page shows query texts only in the sequential pass's per-query report.
        "--sequential",
        "4",
        "--svg",
        &svg.display().to_string(),
        "--html",
        &html.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let args = Cli::try_parse_from(argv).unwrap().bench;
    let factory = SyntheticFactory::new(
        "synthetic",
        ServiceModel::constant(Duration::from_micros(500)),
    );
    let report = run(&args, &[Box::new(factory)]).unwrap();
    assert!(
        report
            .summary
            .iter()
            .all(|s| s.p90_us.is_some() && s.p99_us.is_none())
    );

    let plot = std::fs::read_to_string(&svg).unwrap();
    for q in ["p50", "p90", "max"] {
        assert_eq!(
            count(&plot, &format!("class=\"series\" data-quantile=\"{q}\"")),
            1,
            "one {q} line"
        );
        assert_eq!(
            count(&plot, &format!("class=\"point\" data-quantile=\"{q}\"")),
            2,
            "a {q} point per rung"
        );
    }
    assert_eq!(
        count(&plot, "data-quantile=\"p99\""),
        0,
        "absent, not drawn"
    );
    assert_eq!(count(&plot, "class=\"achieved\""), report.summary.len());
    let env = report.environment.as_ref().unwrap();
    // Two lines (paths of the temporary directory are short enough to show whole).
    for line in [
        format!(
            "index {} · queries {}</text>",
            dir.path().join("index").display(),
            queries.display()
        ),
        format!("{} · heddle {}</text>", env.started_utc, env.build.short()),
    ] {
        assert!(plot.contains(&line), "{line:?} not in the plot");
    }
    // The fixed x scale: whole decades around 500 and 1,000/s, ticks at 1, 2, 5 × 10ⁿ.
    for tick in [">100</text>", ">200</text>", ">500</text>", ">1000</text>"] {
        assert!(plot.contains(tick), "{tick}");
    }
    // The legend explains only the marks the chart shows: none on a clean ladder, and
    // each mark's entry (alone) when one rung bears it.
    let legend = [
        "overloaded: requests shed",
        "invalid rung",
        "disturbed: the machine may",
    ];
    let mut clean = report.clone();
    for s in &mut clean.summary {
        (s.overloaded, s.valid, s.disturbed) = (false, true, false);
    }
    let unmarked = render_svg(&clean);
    for entry in legend {
        assert!(!unmarked.contains(entry), "{entry:?} with no such rung");
    }
    for (i, marked) in legend.iter().enumerate() {
        let mut one = clean.clone();
        let s = &mut one.summary[0];
        match i {
            0 => s.overloaded = true,
            1 => s.valid = false,
            _ => s.disturbed = true,
        }
        let svg = render_svg(&one);
        for (j, entry) in legend.iter().enumerate() {
            assert_eq!(
                svg.contains(entry),
                i == j,
                "{entry:?} when only {marked:?}"
            );
        }
    }

    // Issue 35: the ladder table's state column comes right after the rate, where it
    // stays on screen however wide the figures make the table, and a disturbed rung's row
    // is shaded as an overloaded one is.
    let mut one = clean.clone();
    one.summary[0].disturbed = true;
    let shaded = heddle_eval::html::bench_page(&one).render();
    assert!(
        shaded.contains("<th>engine</th><th>offered/s</th><th>state</th>"),
        "the state third"
    );
    assert_eq!(count(&shaded, "<tr class=\"disturbed\">"), 1);
    assert!(shaded.contains("tr.disturbed td {"), "a shade for it");
    assert_eq!(
        count(
            &heddle_eval::html::bench_page(&clean).render(),
            "<tr class=\"disturbed\">"
        ),
        0
    );

    let page = std::fs::read_to_string(&html).unwrap();
    assert_self_contained(&page);
    assert!(page.contains("<section id=\"ladder\">") && page.contains("<th>p90</th>"));
    assert_eq!(count(&page, "<svg"), 1);
    assert!(page.contains("class=\"series\" data-quantile=\"p90\""));
    assert!(
        page.contains("&lt;b&gt;covid"),
        "the query text shown, escaped"
    );
    assert!(!page.contains("<b>covid"), "never raw");
}

#[test]
fn quality_html_escapes_query_texts_and_holds_every_query() {
    let dir = tempfile::tempdir().unwrap();
    let index = index_of(dir.path(), &covid_docs(20));
    let queries = dir.path().join("queries.jsonl");
    std::fs::write(
        &queries,
        "{\"_id\":\"q10\",\"text\":\"mask efficacy\"}\n{\"_id\":\"q1\",\"text\":\"<script>alert(1)</script> & covid\"}\n{\"_id\":\"q2\",\"text\":\"masks\"}\n",
    )
    .unwrap();
    let qrels = dir.path().join("qrels.tsv");
    std::fs::write(
        &qrels,
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq10\td3\t1\n",
    )
    .unwrap();
    let html = dir.path().join("report/quality.html");
    std::fs::create_dir(dir.path().join("report")).unwrap(); // outputs' directories are never made
    let stdout = ok(&[
        "quality",
        "--index",
        index.to_str().unwrap(),
        "--queries",
        queries.to_str().unwrap(),
        "--qrels",
        qrels.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert!(
        stdout.contains("nDCG@10"),
        "the text output is unchanged: {stdout}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert_self_contained(&page);
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; covid"));
    assert!(page.contains("<section id=\"per-query\">") && page.contains("<td>q2</td>"));
    assert!(page.contains("<th>nDCG@10</th>"));
    // The text output's natural order, not the strings': q2 before q10.
    let at = |id: &str| page.find(&format!("<td>{id}</td>")).unwrap();
    assert!(at("q1") < at("q2") && at("q2") < at("q10"), "q1, q2, q10");
    assert!(
        page.contains(" · 3 queries · "),
        "the subtitle counts queries"
    );
}
