//! `--baseline`, `--fractions` and `--label`, the flags a comparison binary (bench/'s
//! heddle-bench) sets: which engine the ratios divide by, a derived ladder's rungs, and a
//! label naming the run.

use std::path::Path;
use std::time::Duration;

use clap::Parser;
use heddle_eval::bench::backend::synthetic::{ServiceModel, SyntheticFactory};
use heddle_eval::bench::report::render_table;
use heddle_eval::bench::{BackendFactory, BenchArgs, run};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    bench: BenchArgs,
}

fn args(dir: &Path, extra: &[&str]) -> BenchArgs {
    let queries = dir.join("queries.jsonl");
    std::fs::write(&queries, "{\"_id\":\"1\",\"text\":\"covid\"}\n").unwrap();
    let mut argv: Vec<String> = [
        "bench",
        "--index",
        dir.to_str().unwrap(),
        "--queries",
        queries.to_str().unwrap(),
        "--threads",
        "2",
        "--min-duration",
        "0",
        "--warmup",
        "5",
        "--inflight",
        "10000",
        // Sleeping backends do not compete for the CPU: another tenant's load (and the
        // dispatcher lag it causes) on this shared machine must not refuse their
        // calibration; these tests are about other things.
        "--max-others-cpu",
        "1000",
        "--max-lag-ratio",
        "1000",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    argv.extend(extra.iter().map(|s| s.to_string()));
    Cli::try_parse_from(argv).unwrap().bench
}

fn engines() -> Vec<Box<dyn BackendFactory>> {
    let constant = |name: &str, us: u64| -> Box<dyn BackendFactory> {
        Box::new(SyntheticFactory::new(
            name,
            ServiceModel::constant(Duration::from_micros(us)),
        ))
    };
    vec![constant("fast", 1_000), constant("slow", 4_000)]
}

#[test]
fn ratios_divide_by_the_named_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let a = args(
        dir.path(),
        &["--rates", "50", "--samples", "200", "--baseline", "slow"],
    );
    let report = run(&a, &engines()).unwrap();
    assert_eq!(report.settings.baseline.as_deref(), Some("slow"));
    let table = render_table(&report);
    assert!(table.contains("median over slow's"), "{table}");
    let row = table
        .lines()
        .skip_while(|l| !l.starts_with("comparison"))
        .find(|l| l.contains("fast"))
        .unwrap_or_else(|| panic!("no ratio row for fast:\n{table}"));
    // 1 ms over 4 ms (plus the same overheads on both): well below 1.
    let ratio: f64 = row
        .split_whitespace()
        .find_map(|w| w.strip_suffix('×'))
        .and_then(|r| r.parse().ok())
        .unwrap();
    assert!(ratio < 0.6, "{row}");
}

#[test]
fn without_a_baseline_the_first_engine_is_divided_by() {
    let dir = tempfile::tempdir().unwrap();
    let a = args(dir.path(), &["--rates", "50", "--samples", "200"]);
    let table = render_table(&run(&a, &engines()).unwrap());
    assert!(table.contains("median over fast's"), "{table}");
}

#[test]
fn a_baseline_that_is_not_run_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = args(
        dir.path(),
        &["--rates", "50", "--engines", "fast", "--baseline", "slow"],
    );
    let err = run(&a, &engines()).unwrap_err().to_string();
    assert!(err.contains("--baseline"), "{err}");
}

#[test]
fn fractions_shape_a_derived_ladder_and_conflict_with_rates() {
    let dir = tempfile::tempdir().unwrap();
    let a = args(
        dir.path(),
        &[
            "--engines",
            "fast",
            "--fractions",
            "0.1,0.2",
            "--samples",
            "200",
            "--calibration-samples",
            "200",
        ],
    );
    let report = run(&a, &engines()).unwrap();
    assert_eq!(report.ladder.fractions, vec![0.1, 0.2]);
    let c = report.ladder.capacity_per_sec.unwrap();
    assert_eq!(report.ladder.rates.len(), 2);
    assert!((report.ladder.rates[1] / c - 0.2).abs() < 0.01);

    let both = args(dir.path(), &["--rates", "50", "--fractions", "0.5"]);
    let err = run(&both, &engines()).unwrap_err().to_string();
    assert!(err.contains("--fractions"), "{err}");
}

#[test]
fn a_label_heads_the_table_and_the_plot() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("plot.svg");
    let a = args(
        dir.path(),
        &[
            "--rates",
            "50",
            "--samples",
            "200",
            "--engines",
            "fast",
            "--label",
            "native analysis <each engine's own>",
            "--svg",
            svg.to_str().unwrap(),
        ],
    );
    let report = run(&a, &engines()).unwrap();
    assert!(
        render_table(&report).contains("\n  native analysis <each engine's own>\n"),
        "{}",
        render_table(&report)
    );
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(
        plot.contains("native analysis &lt;each engine"),
        "escaped in the SVG"
    );
}
