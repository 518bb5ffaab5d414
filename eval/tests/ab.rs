//! `heddle-eval ab` against backends whose service times are known: a 20% slowdown is a
//! regression in p50 and p99, no change is no change, one build against itself never
//! gets a verdict, a threshold inside the noise floor is ungateable, and the whole
//! command runs end to end with its capture written between the markers only.
//!
//! Most sessions run on the virtual clock (`loadgen::simulate_open_loop`, exact and
//! fast): each run draws new exponential service times, so runs differ as real runs do,
//! by sampling noise. One session sleeps on the real clock.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;
use heddle_eval::ab::binary::Build;
use heddle_eval::ab::figures::{self, Better, Figure, Measure, RungFigures};
use heddle_eval::ab::order::Side;
use heddle_eval::ab::policy::Policy;
use heddle_eval::ab::report::{AbReport, Mode, render};
use heddle_eval::ab::runner::{Arm, InProcessRunner, RunFigures, Runner};
use heddle_eval::ab::verdict::Verdict;
use heddle_eval::ab::{Session, run_session};
use heddle_eval::bench::BenchArgs;
use heddle_eval::bench::backend::synthetic::{ServiceModel, SyntheticFactory};
use heddle_eval::bench::loadgen::{Arrivals, Schedule, simulate_open_loop};
use heddle_eval::bench::stats::LatencySummary;

const RATES: [f64; 2] = [250.0, 500.0];
const WORKERS: usize = 2;

/// The ladder on the virtual clock: Poisson arrivals, exponential service times of a
/// mean per side, new draws every run.
struct Simulated {
    baseline_mean: Duration,
    candidate_mean: Duration,
    seed: u64,
    /// The run (0-based, in session order) whose rungs report a disturbance.
    disturbed_run: Option<usize>,
    /// Instructions per query of each build, as a cost run counts them: the same every
    /// run but for a few instructions of nondeterminism.
    instructions: Option<(f64, f64)>,
}

impl Runner for Simulated {
    fn run(&mut self, side: Side, run_index: usize) -> anyhow::Result<RunFigures> {
        let mean = match side {
            Side::Baseline => self.baseline_mean,
            Side::Candidate => self.candidate_mean,
        };
        let seed = self.seed.wrapping_mul(1_000).wrapping_add(run_index as u64);
        let rungs: Vec<RungFigures> = RATES
            .iter()
            .enumerate()
            .map(|(i, &rate)| {
                let schedule = Schedule::new(Arrivals::Poisson, rate, 10_000, seed ^ i as u64);
                let model = ServiceModel::exponential(mean, seed << 8 | i as u64);
                let o = simulate_open_loop(&schedule, WORKERS, 10_000, |n, start| {
                    model.finish_ns(n, start)
                });
                RungFigures {
                    rate,
                    latency: LatencySummary::of(&o.completions.latency),
                    mean_service_us: o.completions.service.mean_micros(),
                }
            })
            .collect();
        let mut figures = figures::ladder(&rungs, WORKERS);
        if let Some((a, b)) = self.instructions {
            let per_query = match side {
                Side::Baseline => a,
                Side::Candidate => b,
            } + (run_index % 3) as f64; // a few instructions either way
            figures.push(Figure {
                key: "instr/query all".to_string(),
                kind: "instructions".to_string(),
                better: Better::Lower,
                value: Some(per_query),
                unit: "count".to_string(),
                measure: Measure::Instructions,
            });
        }
        Ok(RunFigures {
            figures,
            window_secs: 60.0,
            environment: None,
            disturbed: if self.disturbed_run == Some(run_index) {
                vec!["rung at 250/s: other processes used 1.50 cores".to_string()]
            } else {
                Vec::new()
            },
        })
    }
}

fn build(spec: &str) -> Build {
    Build {
        spec: spec.to_string(),
        binary: "-".to_string(),
        commit: None,
    }
}

fn session(mode: Mode, policy: Policy, floor: Option<AbReport>) -> Session {
    Session {
        mode,
        arm: Arm::Ladder,
        baseline: build("a"),
        candidate: build(if mode == Mode::Ab { "b" } else { "a" }),
        pairs: 4,
        bench_args: Vec::new(),
        rates: RATES.to_vec(),
        rates_rule: "named".to_string(),
        index: std::env::temp_dir().join("heddle-ab-test-index"),
        policy,
        floor: floor.map(|f| ("floor.json".to_string(), f)),
        seed: 7,
        cost_note: String::new(),
    }
}

fn simulated(a_us: u64, b_us: u64, seed: u64) -> Simulated {
    Simulated {
        baseline_mean: Duration::from_micros(a_us),
        candidate_mean: Duration::from_micros(b_us),
        seed,
        disturbed_run: None,
        instructions: None,
    }
}

fn verdict(r: &AbReport, key: &str) -> Verdict {
    r.figures.iter().find(|f| f.key == key).unwrap().verdict
}

#[test]
fn a_20_percent_slowdown_is_a_regression_in_p50_and_p99() {
    let r = run_session(
        &mut simulated(1_000, 1_200, 1),
        session(Mode::Ab, Policy::project(), None),
    )
    .unwrap();
    for key in [
        "rung 1 p50",
        "rung 1 p99",
        "rung 2 p50",
        "rung 2 p99",
        "capacity",
    ] {
        assert_eq!(
            verdict(&r, key),
            Verdict::Regression,
            "{key}\n{}",
            render(&r)
        );
    }
    let p50 = r.figures.iter().find(|f| f.key == "rung 1 p50").unwrap();
    let (lo, hi) = p50.interval.unwrap();
    assert!(lo > 0.1 && hi < 0.3, "[{lo}, {hi}]");
    assert_eq!(p50.pairs.len(), 4);
    // The runs went A B B A A B B A, each with its load recorded.
    let order: String = r.runs.iter().map(|x| x.side.letter()).collect();
    assert_eq!(order, "ABBAABBA");
    assert!(
        r.runs
            .iter()
            .all(|x| x.load_start.is_some() && x.load_end.is_some())
    );
    let text = render(&r);
    assert!(
        text.contains("never a percentile pooled over runs"),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    // Issue 17: the legend explains only the marks the table holds: no figure here is
    // ungateable, and every floor is this session's own.
    assert!(!text.contains("ungateable: limit"), "{text}");
    assert!(
        text.contains("floor r: from this session's runs only"),
        "{text}"
    );
}

/// The same 20% slowdown, with one run of the eight disturbed: its figures are still
/// shown, but no verdict is given on any figure, and the report says which run and why.
#[test]
fn a_disturbed_run_withholds_every_verdict() {
    let mut runner = simulated(1_000, 1_200, 1);
    runner.disturbed_run = Some(5);
    let r = run_session(&mut runner, session(Mode::Ab, Policy::project(), None)).unwrap();
    for f in &r.figures {
        assert_eq!(f.verdict, Verdict::Ungateable, "{}\n{}", f.key, render(&r));
    }
    let p50 = r.figures.iter().find(|f| f.key == "rung 1 p50").unwrap();
    assert!(
        p50.change.unwrap() > 0.1,
        "the figures stand: {}",
        render(&r)
    );
    let text = render(&r);
    assert!(
        text.contains("1 of 8 runs DISTURBED") && text.contains("run 6B: rung at 250/s"),
        "{text}"
    );
    assert!(text.contains("ungateable: limit ≤ floor"), "{text}");
}

/// Issue 35: on a busy machine every run is disturbed and the latency verdicts are
/// withheld, but instructions do not wait for a core: a 2% change in them is still a
/// gateable regression of the right sign, and the report says in one line what it
/// could judge from what.
#[test]
fn instructions_give_a_verdict_when_latency_is_withheld() {
    for (a, b, expected) in [
        (1_000_000.0, 1_020_000.0, Verdict::Regression),
        (1_000_000.0, 980_000.0, Verdict::Improvement),
        (1_000_000.0, 1_000_000.0, Verdict::NoChange),
    ] {
        let mut runner = simulated(1_000, 1_000, 3);
        runner.disturbed_run = Some(2);
        runner.instructions = Some((a, b));
        let r = run_session(&mut runner, session(Mode::Ab, Policy::project(), None)).unwrap();
        let text = render(&r);
        let instr = r
            .figures
            .iter()
            .find(|f| f.key == "instr/query all")
            .unwrap();
        assert_eq!(instr.verdict, expected, "{text}");
        assert!(instr.floor.unwrap() < 0.001, "{text}");
        for f in r.figures.iter().filter(|f| f.measure == Measure::Wall) {
            assert!(f.withheld && f.verdict == Verdict::Ungateable, "{}", f.key);
        }
        assert!(
            text.contains("gateable: instructions (1 of 1, floor ≤ 0.00%)")
                && text.contains("not: latency (withheld: a run was disturbed)"),
            "{text}"
        );
    }
}

/// Two pairs are too few for a verdict: the session's own floor would rest on two runs
/// of each build.
#[test]
fn two_pairs_give_no_verdict() {
    let mut s = session(Mode::Ab, Policy::project(), None);
    s.pairs = 2;
    let r = run_session(&mut simulated(1_000, 1_200, 1), s).unwrap();
    for f in &r.figures {
        assert_eq!(f.verdict, Verdict::Ungateable, "{}\n{}", f.key, render(&r));
    }
    let mut s = session(Mode::Ab, Policy::project(), None);
    s.pairs = 3;
    let r = run_session(&mut simulated(1_000, 1_200, 1), s).unwrap();
    assert_eq!(
        verdict(&r, "rung 1 p50"),
        Verdict::Regression,
        "{}",
        render(&r)
    );
}

#[test]
fn a_20_percent_speedup_is_an_improvement() {
    let r = run_session(
        &mut simulated(1_200, 1_000, 2),
        session(Mode::Ab, Policy::project(), None),
    )
    .unwrap();
    assert_eq!(
        verdict(&r, "rung 1 p50"),
        Verdict::Improvement,
        "{}",
        render(&r)
    );
    assert_eq!(
        verdict(&r, "capacity"),
        Verdict::Improvement,
        "{}",
        render(&r)
    );
}

#[test]
fn no_change_is_reported_as_no_change() {
    for seed in 10..14 {
        let r = run_session(
            &mut simulated(1_000, 1_000, seed),
            session(Mode::Ab, Policy::project(), None),
        )
        .unwrap();
        for f in &r.figures {
            assert!(
                matches!(f.verdict, Verdict::NoChange | Verdict::Ungateable),
                "seed {seed}: {}\n{}",
                f.key,
                render(&r)
            );
        }
        assert_eq!(
            verdict(&r, "rung 1 p50"),
            Verdict::NoChange,
            "{}",
            render(&r)
        );
    }
}

#[test]
fn one_build_against_itself_never_gets_a_verdict() {
    for seed in 20..30 {
        let r = run_session(
            &mut simulated(1_000, 1_000, seed),
            session(Mode::Noise, Policy::project(), None),
        )
        .unwrap();
        for f in &r.figures {
            assert!(
                matches!(f.verdict, Verdict::NoChange | Verdict::Ungateable),
                "seed {seed}: {} {:?}",
                f.key,
                f.verdict
            );
            assert!(f.floor.is_some(), "an A/A session measures every floor");
        }
    }
}

#[test]
fn a_threshold_tighter_than_the_measured_floor_is_ungateable() {
    let floor = run_session(
        &mut simulated(1_000, 1_000, 40),
        session(Mode::Noise, Policy::project(), None),
    )
    .unwrap();
    let floor_p99 = floor
        .figures
        .iter()
        .find(|f| f.key == "rung 2 p99")
        .unwrap()
        .floor
        .unwrap();
    assert!(floor_p99 > 0.0);
    // p99 gated at half its floor; the rest at 15%, above this session's own floors (the
    // range of each build's four runs: up to 8% for a p50 here).
    let tight = Policy::parse(
        &format!(
            r#"{{"default": 0.15, "thresholds": {{"p99": {}}}}}"#,
            floor_p99 / 2.0
        ),
        "tight",
    )
    .unwrap();
    let r = run_session(
        &mut simulated(1_000, 1_200, 41),
        session(Mode::Ab, tight, Some(floor)),
    )
    .unwrap();
    let p99 = r.figures.iter().find(|f| f.key == "rung 2 p99").unwrap();
    assert!(p99.floor.unwrap() >= floor_p99, "the measured floor gates");
    assert_eq!(p99.verdict, Verdict::Ungateable, "{}", render(&r));
    assert_eq!(
        verdict(&r, "rung 2 p50"),
        Verdict::Regression,
        "{}",
        render(&r)
    );
    assert!(r.floor_note.is_none(), "{:?}", r.floor_note);
}

#[test]
fn a_floor_from_other_rates_is_not_used_and_says_why() {
    let mut floor = run_session(
        &mut simulated(1_000, 1_000, 50),
        session(Mode::Noise, Policy::project(), None),
    )
    .unwrap();
    floor.rates = vec![1.0, 2.0];
    let r = run_session(
        &mut simulated(1_000, 1_000, 51),
        session(Mode::Ab, Policy::project(), Some(floor)),
    )
    .unwrap();
    let note = r.floor_note.as_deref().unwrap();
    assert!(
        note.contains("NOT USED") && note.contains("other rates"),
        "{note}"
    );
}

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    bench: BenchArgs,
}

/// The real clock on a shared machine: the slowdown must show in the change and its
/// interval; the verdict is a regression unless this session's own runs were noisier
/// than the threshold, and then it must say ungateable — never no change.
#[test]
fn on_the_real_clock_a_slower_backend_is_a_regression_unless_the_floor_forbids() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q.jsonl");
    std::fs::write(&q, "{\"_id\":\"1\",\"text\":\"covid\"}\n").unwrap();
    let args = Cli::try_parse_from([
        "bench",
        "--index",
        dir.path().to_str().unwrap(),
        "--queries",
        q.to_str().unwrap(),
        "--rates",
        "400",
        "--samples",
        "1000",
        "--min-duration",
        "0",
        "--threads",
        "8",
        "--inflight",
        "10000",
        "--warmup",
        "5",
    ])
    .unwrap()
    .bench;
    let model = |ms: u64| ServiceModel::constant(Duration::from_micros(ms));
    let mut runner = InProcessRunner {
        baseline: Box::new(SyntheticFactory::new("a", model(2_000))),
        candidate: Box::new(SyntheticFactory::new("b", model(3_000))),
        args,
    };
    let mut s = session(Mode::Ab, Policy::project(), None);
    s.rates = vec![400.0];
    let r = run_session(&mut runner, s).unwrap();
    let p50 = r.figures.iter().find(|f| f.key == "rung 1 p50").unwrap();
    let (lo, _) = p50.interval.unwrap();
    assert!(p50.change.unwrap() > 0.3 && lo > 0.1, "{}", render(&r));
    // Sleeping backends do not need the CPU, but a busy machine delays their wake-ups:
    // a disturbed run withholds the verdict, as a floor above the threshold does.
    let disturbed = r.runs.iter().any(|x| !x.measured.disturbed.is_empty());
    let expected = if p50.floor.unwrap() < p50.threshold && !disturbed {
        Verdict::Regression
    } else {
        Verdict::Ungateable
    };
    assert_eq!(p50.verdict, expected, "{}", render(&r));
    assert!(r.windows_equal, "{}", render(&r));
}

/// A heddle index of a few documents, built by the binary, and one query.
fn tiny_index(dir: &Path) -> (PathBuf, PathBuf) {
    let index = common::index_of(dir, &common::covid_docs(50));
    let q = dir.join("queries.jsonl");
    std::fs::write(&q, "{\"_id\":\"1\",\"text\":\"covid masks\"}\n").unwrap();
    (index, q)
}

#[test]
fn ab_runs_end_to_end_and_captures_between_the_markers_only() {
    let dir = tempfile::tempdir().unwrap();
    let (index, q) = tiny_index(dir.path());
    let bin = env!("CARGO_BIN_EXE_heddle-eval");
    let doc = dir.path().join("RESULTS.md");
    let before = "# Results\n\nsome text ✓\r\n<!-- BEGIN heddle capture -->\nold capture\n<!-- END heddle capture -->\n\n## After\ntrailing";
    std::fs::write(&doc, before).unwrap();
    let json = dir.path().join("ab.json");
    let out = common::ok(&[
        "ab",
        "--baseline",
        bin,
        "--candidate",
        bin,
        "--index",
        index.to_str().unwrap(),
        "--queries",
        q.to_str().unwrap(),
        "--pairs",
        "3",
        "--rates",
        "300",
        "--samples",
        "300",
        "--min-duration",
        "0",
        "--warmup",
        "5",
        "--json",
        json.to_str().unwrap(),
        "--capture-into",
        doc.to_str().unwrap(),
    ]);
    assert!(
        out.contains("rung 1 p50") && out.contains("verdict:"),
        "{out}"
    );
    assert!(out.contains("environment: heddle"), "{out}");
    let report: AbReport = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report.runs.len(), 6);
    // The same binary twice: the runs' environments agree on everything but nothing.
    assert!(report.comparability.as_ref().unwrap().comparable);
    for f in &report.figures {
        assert!(
            matches!(f.verdict, Verdict::NoChange | Verdict::Ungateable),
            "{} {:?}",
            f.key,
            f.verdict
        );
    }
    // Issue 35: each run also counted its queries' instructions under callgrind (where
    // valgrind is installed; without it the report says so and the session goes on).
    let valgrind = std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let instr = report.figures.iter().find(|f| f.key == "instr/query all");
    if valgrind {
        let instr = instr.expect("instruction figures with valgrind installed");
        assert_eq!(instr.verdict, Verdict::NoChange, "{out}");
        assert!(
            instr.floor.unwrap() <= 0.001,
            "A/A instruction floor: {out}"
        );
        assert!(
            out.contains("gateable: ") && out.contains("instructions ("),
            "{out}"
        );
    } else {
        eprintln!("SKIPPED the instruction figures: valgrind is not installed");
        assert!(
            instr.is_none() && out.contains("instructions: not counted"),
            "{out}"
        );
    }
    let after = std::fs::read_to_string(&doc).unwrap();
    let (head, rest) = after.split_once("<!-- BEGIN heddle capture -->").unwrap();
    assert_eq!(head, "# Results\n\nsome text ✓\r\n");
    let (captured, tail) = rest.split_once("<!-- END heddle capture -->").unwrap();
    assert_eq!(tail, "\n\n## After\ntrailing", "the rest byte-identical");
    assert!(
        captured.contains("$ ") && captured.contains("rung 1 p50"),
        "{captured}"
    );
    assert!(!captured.contains("old capture"));
}

#[test]
fn a_capture_file_without_markers_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("notes.md");
    std::fs::write(&doc, "no markers here\n").unwrap();
    let bin = env!("CARGO_BIN_EXE_heddle-eval");
    common::fails(
        &[
            "ab",
            "--baseline",
            bin,
            "--candidate",
            bin,
            "--index",
            dir.path().to_str().unwrap(),
            "--queries",
            doc.to_str().unwrap(),
            "--capture-into",
            doc.to_str().unwrap(),
        ],
        "exactly one",
    );
    assert_eq!(std::fs::read_to_string(&doc).unwrap(), "no markers here\n");
}

/// Counts, per figure, how often each verdict came out over `sessions` sessions.
fn tally(reports: &[AbReport]) -> Vec<(String, usize, usize, usize, usize)> {
    let mut out: Vec<(String, usize, usize, usize, usize)> = Vec::new();
    for r in reports {
        for f in &r.figures {
            let i = match out.iter().position(|x| x.0 == f.key) {
                Some(i) => i,
                None => {
                    out.push((f.key.clone(), 0, 0, 0, 0));
                    out.len() - 1
                }
            };
            match f.verdict {
                Verdict::Regression => out[i].1 += 1,
                Verdict::Improvement => out[i].2 += 1,
                Verdict::NoChange => out[i].3 += 1,
                Verdict::Ungateable => out[i].4 += 1,
            }
        }
    }
    out
}

fn print_tally(title: &str, reports: &[AbReport]) {
    println!(
        "\n{title} ({} sessions): figure, regression, improvement, no change, ungateable",
        reports.len()
    );
    for (k, r, i, n, u) in tally(reports) {
        println!("| {k} | {r} | {i} | {n} | {u} |");
    }
}

/// docs/PERF.md's detection and false-positive rates. Not part of `make test` (minutes):
/// `cargo test --release -p heddle-eval --test ab -- --ignored --nocapture rates`
#[test]
#[ignore]
fn detection_and_false_positive_rates() {
    let sessions: u64 = std::env::var("HEDDLE_AB_SESSIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let sim = |a, b, seed| {
        run_session(
            &mut simulated(a, b, seed),
            session(Mode::Ab, Policy::project(), None),
        )
        .unwrap()
    };
    let slow: Vec<AbReport> = (0..sessions)
        .map(|s| sim(1_000, 1_200, 1_000 + s))
        .collect();
    print_tally("virtual clock, B 20% slower", &slow);
    let same: Vec<AbReport> = (0..sessions)
        .map(|s| sim(1_000, 1_000, 5_000 + s))
        .collect();
    print_tally("virtual clock, A/A", &same);

    let real: u64 = std::env::var("HEDDLE_AB_REAL_SESSIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q.jsonl");
    std::fs::write(&q, "{\"_id\":\"1\",\"text\":\"covid\"}\n").unwrap();
    let args = Cli::try_parse_from([
        "bench",
        "--index",
        dir.path().to_str().unwrap(),
        "--queries",
        q.to_str().unwrap(),
        "--rates",
        "2000",
        "--samples",
        "10000",
        "--min-duration",
        "0",
        "--threads",
        "16",
        "--inflight",
        "100000",
        "--warmup",
        "20",
    ])
    .unwrap()
    .bench;
    let model = |us: u64| ServiceModel::exponential(Duration::from_micros(us), 9);
    let real_session = |b_us: u64| {
        let mut runner = InProcessRunner {
            baseline: Box::new(SyntheticFactory::new("a", model(2_000))),
            candidate: Box::new(SyntheticFactory::new("b", model(b_us))),
            args: args.clone(),
        };
        let mut s = session(Mode::Ab, Policy::project(), None);
        s.rates = vec![2_000.0];
        run_session(&mut runner, s).unwrap()
    };
    let slow: Vec<AbReport> = (0..real).map(|_| real_session(2_400)).collect();
    print_tally(
        "real clock, sleeping Exp(2 ms) vs Exp(2.4 ms), 2000/s, 16 workers",
        &slow,
    );
    let same: Vec<AbReport> = (0..real).map(|_| real_session(2_000)).collect();
    print_tally("real clock, A/A", &same);
}
