//! `bench` end to end through [`heddle_eval::bench::run`] with synthetic engines: the
//! flags parse, the table, JSON and SVG hold every figure, engines alternate, and a
//! derived ladder comes from an open-loop calibration.

use std::path::Path;
use std::time::Duration;

use clap::Parser;
use heddle_eval::bench::backend::synthetic::{ServiceModel, SyntheticFactory};
use heddle_eval::bench::report::{LadderRule, Width, read_json, render_table, render_table_as};
use heddle_eval::bench::{BackendFactory, BenchArgs, run};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    bench: BenchArgs,
}

fn args(dir: &Path, extra: &[&str]) -> BenchArgs {
    let queries = dir.join("queries.jsonl");
    std::fs::write(
        &queries,
        "{\"_id\":\"1\",\"text\":\"covid transmission\"}\n{\"_id\":\"2\",\"text\":\"mask efficacy\"}\n",
    )
    .unwrap();
    let mut argv = vec![
        "bench".to_string(),
        "--index".to_string(),
        dir.join("index").display().to_string(),
        "--queries".to_string(),
        queries.display().to_string(),
        "--threads".to_string(),
        "2".to_string(),
        "--min-duration".to_string(),
        "0".to_string(),
        // Sleeping backends do not compete for the CPU: another tenant's load (and the
        // dispatcher lag it causes) on this shared machine must not refuse their
        // calibration; these tests are about other things.
        "--max-others-cpu".to_string(),
        "1000".to_string(),
        "--max-lag-ratio".to_string(),
        "1000".to_string(),
    ];
    argv.extend(extra.iter().map(|s| s.to_string()));
    Cli::try_parse_from(argv).unwrap().bench
}

fn synthetic(name: &str, service_us: u64) -> Box<dyn BackendFactory> {
    Box::new(SyntheticFactory::new(
        name,
        ServiceModel::constant(Duration::from_micros(service_us)),
    ))
}

#[test]
fn named_ladder_writes_table_json_and_svg_with_every_figure() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out/bench.json");
    let svg = dir.path().join("out/bench.svg");
    std::fs::create_dir(dir.path().join("out")).unwrap(); // outputs' directories are never made
    let a = args(
        dir.path(),
        &[
            "--rates",
            "500,1000",
            "--samples",
            "300",
            "--warmup",
            "20",
            // No shedding even if the machine stalls: every rung keeps its 300 samples.
            "--inflight",
            "10000",
            "--json",
            json.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
        ],
    );
    let report = run(&a, &[synthetic("synthetic", 1_000)]).unwrap();

    let back = read_json(&json).unwrap();
    assert_eq!(back.ladder.rule, LadderRule::Named);
    assert_eq!(back.ladder.rates, vec![500.0, 1_000.0]);
    let rungs = &back.engines[0].rungs;
    assert_eq!(rungs.len(), 2);
    for r in rungs {
        assert_eq!((r.requests, r.completed + r.shed), (300, 300));
        assert!(r.latency_us.p50.unwrap() >= 1_000);
        assert_eq!(
            r.latency_us.p99, None,
            "300 samples: p99 absent, not estimated"
        );
        assert!(r.latency_us.max.is_some() && r.valid);
        assert_eq!(r.histograms.latency.count, r.completed);
        assert!(r.dispatcher_lag_us.max.is_some());
        assert!(r.process.user_secs >= 0.0 && r.memory.samples >= 2);
        assert!(r.achieved_rate > 0.0 && r.duration_secs > 0.0);
        assert!(r.suspended_secs.is_some());
    }
    assert_eq!(back.engines[0].warmup.queries, 20);
    let env = back
        .environment
        .as_ref()
        .expect("the report carries its environment");
    assert!(
        env.started_utc <= *env.ended_utc.as_ref().unwrap(),
        "{env:?}"
    );
    assert_eq!(env.storage.dir, a.index.display().to_string());
    assert_eq!(back.summary.len(), 2);
    assert_eq!(back.summary[0].p99_us, None);

    let text = std::fs::read_to_string(&json).unwrap();
    assert!(
        text.contains("\"p99\":null"),
        "absent quantiles are null in JSON"
    );

    let table = render_table_as(&report, Width::Wide);
    for needle in [
        "offered/s",
        "achieved/s",
        "shed",
        "p99.9",
        "lag p99",
        "rss peak",
        "minflt",
        "warm-up synthetic",
        "environment: heddle",
        "fsync (24 each)",
    ] {
        assert!(table.contains(needle), "table lacks {needle:?}:\n{table}");
    }

    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.starts_with("<svg") && plot.trim_end().ends_with("</svg>"));
    for needle in ["synthetic", "p50", "p99.9", "log scale", "<polyline"] {
        assert!(plot.contains(needle), "svg lacks {needle:?}");
    }
}

#[test]
fn engines_alternate_rung_by_rung_and_overload_is_marked() {
    let dir = tempfile::tempdir().unwrap();
    // b takes 4 ms on 2 workers (capacity 500/s): 1,000/s overloads it with a cap of 2.
    let a = args(
        dir.path(),
        &[
            "--rates",
            "200,1000",
            "--samples",
            "60",
            "--warmup",
            "2",
            "--inflight",
            "2",
            "--repeat",
            "2",
            "--engines",
            "b,a",
        ],
    );
    let report = run(&a, &[synthetic("a", 500), synthetic("b", 4_000)]).unwrap();
    let names: Vec<&str> = report.engines.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["b", "a"], "--engines picks and orders");
    // Run order: rep 0 rung 0 (b, a), rep 0 rung 1 (b, a), rep 1 ...
    let seq =
        |e: usize| -> Vec<usize> { report.engines[e].rungs.iter().map(|r| r.sequence).collect() };
    assert_eq!(seq(0), [0, 2, 4, 6]);
    assert_eq!(seq(1), [1, 3, 5, 7]);
    let b_top = report
        .summary
        .iter()
        .find(|s| s.engine == "b" && s.rung == 1)
        .unwrap();
    assert!(b_top.overloaded && b_top.shed.min > 0);
    assert_eq!(b_top.repetitions, 2);
    let table = render_table(&report);
    assert!(
        table.contains("OVERLOADED") && table.contains("comparison"),
        "{table}"
    );
}

#[test]
fn without_rates_the_ladder_is_derived_from_an_open_loop_calibration() {
    let dir = tempfile::tempdir().unwrap();
    let a = args(
        dir.path(),
        &[
            "--samples",
            "100",
            "--calibration-samples",
            "200",
            "--warmup",
            "10",
        ],
    );
    let report = run(&a, &[synthetic("synthetic", 300)]).unwrap();
    let l = &report.ladder;
    assert_eq!(l.rule, LadderRule::Derived);
    assert_eq!(l.rates.len(), 6);
    let c = &l.calibrations[0];
    let last = c.attempts.last().unwrap();
    assert!(
        last.utilisation <= 0.2,
        "calibration ran at low utilisation: {last:?}"
    );
    assert!(c.mean_service_us >= 300.0);
    let cap = l.capacity_per_sec.unwrap();
    assert!((l.load_point.unwrap() / cap - 0.5).abs() < 0.01);
    assert!(l.rates.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn unknown_engine_is_an_error_naming_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    let a = args(dir.path(), &["--rates", "10", "--engines", "tantivy"]);
    let err = run(&a, &[synthetic("heddle", 100)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("tantivy") && err.contains("heddle"), "{err}");
}
