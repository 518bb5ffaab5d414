//! What the instrument cannot vouch for, it says (issue 15): a disturbed calibration is
//! refused, output paths fail before any rung, the JSON survives an interrupted run, each
//! rung's distribution is written as HdrHistogram prints it, and the default table fits
//! 100 columns.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use heddle_eval::bench::backend::synthetic::{ServiceModel, SyntheticFactory};
use heddle_eval::bench::report::{Width, read_json, render_table, render_table_as};
use heddle_eval::bench::{BackendFactory, BenchArgs, run};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    bench: BenchArgs,
}

fn queries(dir: &Path) -> PathBuf {
    let q = dir.join("queries.jsonl");
    std::fs::write(
        &q,
        "{\"_id\":\"1\",\"text\":\"covid transmission\"}\n{\"_id\":\"2\",\"text\":\"masks\"}\n",
    )
    .unwrap();
    q
}

/// `--max-others-cpu 1000 --max-lag-ratio 1000`: on this shared machine the CPU and
/// the dispatcher lag other tenants cause would disturb rungs at random; these tests
/// inject the disturbance they are about (shed requests behind a stalling backend).
fn args(dir: &Path, extra: &[&str]) -> BenchArgs {
    let q = queries(dir);
    let mut argv: Vec<String> = [
        "bench",
        "--index",
        dir.join("index").to_str().unwrap(),
        "--queries",
        q.to_str().unwrap(),
        "--threads",
        "2",
        "--min-duration",
        "0",
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

fn engine(name: &str, model: ServiceModel) -> Vec<Box<dyn BackendFactory>> {
    vec![Box::new(SyntheticFactory::new(name, model))]
}

const MS: Duration = Duration::from_millis(1);

#[test]
fn a_disturbed_calibration_is_refused_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    // Every 100 ms the backend starts nothing for 40 ms: at the calibration's 100/s
    // (the default hint without a warm-up), 4 requests fall due in each pause and the
    // in-flight cap of 2 sheds them, in every attempt.
    let stalling = ServiceModel::constant(Duration::from_micros(200)).with_recurring_stall(
        Duration::ZERO,
        40 * MS,
        100 * MS,
    );
    let a = args(
        dir.path(),
        &[
            "--warmup",
            "0",
            "--calibration-samples",
            "200",
            "--inflight",
            "2",
            "--samples",
            "200",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let err = run(&a, &engine("stalling", stalling))
        .unwrap_err()
        .to_string();
    assert!(err.contains("disturbed 3 times"), "{err}");
    assert!(err.contains("a calibration rung shed"), "{err}");
    assert!(err.contains("never takes its capacity"), "{err}");
    assert!(
        !json.exists(),
        "no ladder was derived, so nothing was reported"
    );
}

/// A lagging dispatcher delays requests, not the work on them: a calibration whose only
/// disturbance is the lag is flagged but used (its service time stands), not retried or
/// refused. On this project's VMs the lag p99 exceeds the p50 at every rate.
#[test]
fn a_lagging_dispatcher_alone_does_not_refuse_a_calibration() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = args(
        dir.path(),
        &[
            "--warmup",
            "0",
            "--calibration-samples",
            "200",
            "--fractions",
            "0.2",
            "--samples",
            "200",
        ],
    );
    // Any lag at all counts: every rung is disturbed by it.
    a.max_lag_ratio = Some(1e-9);
    let report = run(&a, &engine("steady", ServiceModel::constant(2 * MS))).unwrap();
    let c = &report.ladder.calibrations[0];
    assert_eq!(c.attempts.len(), 1, "not run again for the lag");
    let rung = &c.attempts[0].rung;
    assert!(
        rung.disturbed
            && rung
                .disturbed_reasons
                .iter()
                .all(|r| r.contains("dispatcher lag")),
        "{:?}",
        rung.disturbed_reasons
    );
    assert!(!report.ladder.rates.is_empty());
}

#[test]
fn a_calibration_disturbed_once_is_run_again_and_only_the_clean_attempt_counts() {
    let dir = tempfile::tempdir().unwrap();
    // One 300 ms pause at the start: the first attempt sheds, the second does not.
    let once = ServiceModel::constant(2 * MS).with_stall(Duration::ZERO, 300 * MS);
    let a = args(
        dir.path(),
        &[
            "--warmup",
            "0",
            "--calibration-samples",
            "200",
            "--inflight",
            "2",
            "--fractions",
            "0.2",
            "--samples",
            "200",
        ],
    );
    let report = run(&a, &engine("once", once)).unwrap();
    let c = &report.ladder.calibrations[0];
    assert!(c.attempts.len() >= 2, "{} attempts", c.attempts.len());
    let first = &c.attempts[0].rung;
    assert!(
        first.disturbed && first.shed > 0,
        "{:?}",
        first.disturbed_reasons
    );
    let last = c.attempts.last().unwrap();
    assert!(!last.rung.disturbed, "{:?}", last.rung.disturbed_reasons);
    assert_eq!(
        c.mean_service_us, last.mean_service_us,
        "capacity from the clean attempt"
    );
    let table = render_table(&report);
    assert!(table.contains("disturbed attempt"), "{table}");
}

#[test]
fn output_paths_are_checked_before_the_first_rung() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    // A stall so long that reaching any rung would take minutes: the errors must come
    // before it.
    let slow = || engine("slow", ServiceModel::constant(Duration::from_secs(60)));
    let started = Instant::now();
    let under_a_file = file.join("out.json");
    let a = args(
        dir.path(),
        &["--rates", "1", "--json", under_a_file.to_str().unwrap()],
    );
    let err = format!("{:#}", run(&a, &slow()).unwrap_err());
    assert!(err.contains("--json"), "{err}");
    let a = args(
        dir.path(),
        &["--rates", "1", "--svg", dir.path().to_str().unwrap()],
    );
    let err = format!("{:#}", run(&a, &slow()).unwrap_err());
    assert!(
        err.contains("--svg") && err.contains("is a directory"),
        "{err}"
    );
    let a = args(
        dir.path(),
        &["--rates", "1", "--hgrm", file.to_str().unwrap()],
    );
    let err = format!("{:#}", run(&a, &slow()).unwrap_err());
    assert!(err.contains("--hgrm"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(30), "no rung ran");
}

#[test]
fn the_default_table_fits_100_columns_and_wide_shows_the_spreads() {
    let dir = tempfile::tempdir().unwrap();
    let hgrm = dir.path().join("hgrm");
    let a = args(
        dir.path(),
        &[
            "--rates",
            "300,600",
            "--samples",
            "300",
            "--repeat",
            "2",
            "--warmup",
            "10",
            "--inflight",
            "10000",
            "--hgrm",
            hgrm.to_str().unwrap(),
        ],
    );
    let engines: Vec<Box<dyn BackendFactory>> = vec![
        Box::new(SyntheticFactory::new(
            "baseline",
            ServiceModel::constant(MS),
        )),
        Box::new(SyntheticFactory::new(
            "candidate",
            ServiceModel::exponential(MS, 3),
        )),
    ];
    let report = run(&a, &engines).unwrap();
    let narrow = render_table(&report);
    for line in narrow.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    assert!(narrow.contains("--wide shows [min–max]"), "{narrow}");
    let wide = render_table_as(&report, Width::Wide);
    assert!(
        wide.contains("achieved/s") && wide.contains("minflt"),
        "{wide}"
    );
    assert!(wide.contains('[') && !narrow.contains("achieved/s"));

    // One .hgrm file per measured rung: 2 engines × 2 rates × 2 repetitions.
    let mut files: Vec<String> = std::fs::read_dir(&hgrm)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files.len(), 8, "{files:?}");
    assert!(
        files.contains(&"candidate-rep2-rung1-300.hgrm".to_string()),
        "{files:?}"
    );
    let text = std::fs::read_to_string(hgrm.join("baseline-rep1-rung2-600.hgrm")).unwrap();
    assert!(text.starts_with("       Value     Percentile TotalCount 1/(1-Percentile)\n\n"));
    assert!(text.contains("Total count    =          300]"), "{text}");
}

#[test]
fn an_interrupted_bench_leaves_valid_json_of_the_finished_rungs() {
    let dir = tempfile::tempdir().unwrap();
    let index = common::index_of(dir.path(), &common::covid_docs(50));
    let q = queries(dir.path());
    let json = dir.path().join("out/ladder.json");
    std::fs::create_dir(dir.path().join("out")).unwrap(); // outputs' directories are never made
    // Six rungs of 1 s each; the run is interrupted after the second has been written.
    let child = Command::new(env!("CARGO_BIN_EXE_heddle-eval"))
        .args(["bench", "--index", index.to_str().unwrap()])
        .args(["--queries", q.to_str().unwrap()])
        .args(["--rates", "200,200,200,200,200,200", "--samples", "200"])
        .args(["--min-duration", "0", "--warmup", "5"])
        .args(["--json", json.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let rungs = read_json(&json).map_or(0, |r| r.engines[0].rungs.len());
        if rungs >= 2 {
            break;
        }
        assert!(Instant::now() < deadline, "no rung written in 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SIGKILL, the harshest interruption (a crash, an OOM kill) and the one no
    // environment can ignore: a shell that starts jobs in the background without job
    // control has them ignore SIGINT, and the child would then finish every rung.
    // SAFETY: kill sends a signal to the child this test started; it touches no memory.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGKILL);
    }
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success(), "interrupted");
    assert!(out.stdout.is_empty(), "no table: the run did not finish");

    let report = read_json(&json).expect("valid JSON");
    assert!(!report.complete, "marked incomplete");
    let rungs = &report.engines[0].rungs;
    assert!((2..6).contains(&rungs.len()), "{} rungs", rungs.len());
    for r in rungs {
        assert_eq!(r.completed + r.shed + r.errors, r.requests, "a whole rung");
        assert_eq!(r.histograms.latency.count, r.completed);
    }
    assert_eq!(report.summary.len(), rungs.len());
    assert!(report.environment.is_some());
    assert!(render_table(&report).contains("INCOMPLETE"));
}

#[test]
fn the_binary_prints_the_table_once() {
    let dir = tempfile::tempdir().unwrap();
    let index = common::index_of(dir.path(), &common::covid_docs(50));
    let q = queries(dir.path());
    let out = common::ok(&[
        "bench",
        "--index",
        index.to_str().unwrap(),
        "--queries",
        q.to_str().unwrap(),
        "--rates",
        "200",
        "--samples",
        "50",
        "--min-duration",
        "0",
        "--warmup",
        "2",
    ]);
    assert_eq!(
        out.matches("heddle-eval bench (open-loop)").count(),
        1,
        "{out}"
    );
}

/// Issue 17: many rungs and three repetitions still fit 100 columns by default, and the
/// legend names only the marks the table holds: OVERLOADED and INVALID were explained
/// when no rung was either.
#[test]
fn many_rungs_fit_100_columns_and_the_legend_names_only_the_marks_shown() {
    let dir = tempfile::tempdir().unwrap();
    let a = args(
        dir.path(),
        &[
            "--rates",
            "1000,1500,2000,2500,3000,3500,4000,4500,5000,5500,6000,7000",
            "--samples",
            "100",
            "--repeat",
            "3",
            "--warmup",
            "10",
            "--inflight",
            "100000",
        ],
    );
    let engines: Vec<Box<dyn BackendFactory>> = vec![
        Box::new(SyntheticFactory::new(
            "heddle",
            ServiceModel::constant(Duration::from_micros(200)),
        )),
        Box::new(SyntheticFactory::new(
            "tantivy",
            ServiceModel::exponential(Duration::from_micros(200), 3),
        )),
    ];
    let mut report = run(&a, &engines).unwrap();
    assert_eq!(report.summary.len(), 24);
    for s in &mut report.summary {
        (s.overloaded, s.valid, s.disturbed) = (false, true, false);
    }
    let fits = |text: &str| {
        for line in text.lines() {
            assert!(line.chars().count() <= 100, "{line}");
        }
    };
    let clean = render_table(&report);
    fits(&clean);
    for mark in ["OVERLOADED", "INVALID", "DISTURBED"] {
        assert!(!clean.contains(mark), "{mark} in:\n{clean}");
    }
    assert!(clean.contains("-  absent"), "{clean}"); // p99 from 100 samples: absent

    report.summary[3].overloaded = true;
    let overloaded = render_table(&report);
    fits(&overloaded);
    assert!(
        overloaded.contains("OVERLOADED: requests were shed"),
        "{overloaded}"
    );
    assert!(!overloaded.contains("INVALID"), "{overloaded}");

    report.summary[3].overloaded = false;
    report.summary[5].valid = false;
    let invalid = render_table(&report);
    assert!(invalid.contains("INVALID: see the JSON"), "{invalid}");
    assert!(!invalid.contains("OVERLOADED"), "{invalid}");
}
