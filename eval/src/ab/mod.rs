//! `heddle-eval ab`: two builds of heddle measured in matched, alternating runs of equal
//! length, and a verdict per figure that the machine's measured noise floor allows
//! (docs/PERF.md, rule 9).
//!
//! Flow: [`binary`] (each build: a binary, or a git revision built in release) →
//! [`runner`] (runs in ABBA [`order`], each a `bench` of its own, load recorded around
//! it) → [`figures`] (each run's own quantiles, capacity, commit phases) → [`compare`]
//! (medians of per-run figures, bootstrap interval over pairs, floor, [`policy`]
//! threshold, [`verdict`]) → [`report`] (table, JSON) and [`capture`] (into a markdown
//! file between markers). `--noise N` runs one build against itself: the floor.

pub mod binary;
pub mod capture;
pub mod compare;
pub mod figures;
pub mod order;
pub mod policy;
pub mod report;
pub mod runner;
pub mod verdict;

use std::path::{Path, PathBuf};

use anyhow::{Context, bail, ensure};
use clap::Args;

use self::binary::Build;
use self::policy::Policy;
use self::report::{AB_FORMAT, AbReport, Mode};
use self::runner::{Arm, ProcessRunner, Runner, run_pairs};
use crate::bench::ladder::round_rate;
use crate::env::Environment;

/// `heddle-eval ab`: baseline against candidate, or (`--noise N`) one build against
/// itself.
#[derive(Debug, Clone, Args)]
pub struct AbArgs {
    /// The baseline build: a `heddle-eval` binary, or a git revision of --repo (built in
    /// release in a temporary worktree, once per commit).
    #[arg(long, value_name = "REV|BINARY")]
    pub baseline: String,

    /// The candidate build, as --baseline.
    #[arg(long, value_name = "REV|BINARY", required_unless_present = "noise")]
    pub candidate: Option<String>,

    /// The index every run searches (the writes arm works on copies of it).
    #[arg(long, value_name = "DIR")]
    pub index: PathBuf,

    /// The queries: BEIR queries.jsonl or a TREC topics file (`qid<TAB>text`).
    #[arg(long, value_name = "FILE")]
    pub queries: PathBuf,

    /// Matched pairs of runs (one of each build per pair, alternating which goes first).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub pairs: usize,

    /// Measure the noise floor instead: N pairs of the baseline against itself.
    #[arg(long, value_name = "N", conflicts_with_all = ["candidate", "pairs"])]
    pub noise: Option<usize>,

    /// Compare the writes arm (commit cost on reads) instead of the read ladder.
    #[arg(long)]
    pub writes: bool,

    /// The ladder's rates [default: fractions of the baseline's calibrated capacity].
    #[arg(
        long,
        value_name = "R1,R2,...",
        value_delimiter = ',',
        conflicts_with = "writes"
    )]
    pub rates: Vec<f64>,

    /// The derived ladder's fractions of capacity.
    #[arg(
        long,
        value_name = "F1,F2,...",
        value_delimiter = ',',
        default_value = "0.25,0.5"
    )]
    pub fractions: Vec<f64>,

    /// The writes arm's read rate [default: a quarter of the baseline's capacity].
    #[arg(long, value_name = "R", requires = "writes")]
    pub rate: Option<f64>,

    /// Documents per commit in the writes arm.
    #[arg(long, value_name = "N", default_value_t = 20_000, requires = "writes")]
    pub write_docs: usize,

    /// Commit threads in the writes arm (at most 1024).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "writes", value_parser = crate::cli::thread_count())]
    pub commit_threads: usize,

    /// Where the writes arm's runs copy the index [default: the system's temporary
    /// directory]: its storage is where the commits are measured.
    #[arg(long, value_name = "DIR", requires = "writes")]
    pub scratch: Option<PathBuf>,

    /// Requests per rung, at least (p99 needs 10,000).
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub samples: u64,

    /// Each rung lasts at least this long.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    pub min_duration: f64,

    /// Passed on to each run's bench: worker threads [default: the number of cores; at
    /// most 1024].
    #[arg(long, value_name = "N", value_parser = crate::cli::thread_count())]
    pub threads: Option<usize>,

    /// Passed on to each run's bench: the in-flight cap [default: 4 per worker].
    #[arg(long, value_name = "N")]
    pub inflight: Option<usize>,

    /// Passed on to each run's bench: warm-up queries [default: each query once, at
    /// most 2,000].
    #[arg(long, value_name = "N")]
    pub warmup: Option<u64>,

    /// Passed on to each run's bench: seeds the query order and Poisson arrivals.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,

    /// Passed on to each run's bench (builds before issue 15 do not know it).
    #[arg(long, value_name = "CORES")]
    pub max_others_cpu: Option<f64>,

    /// Passed on to each run's bench, as --max-others-cpu.
    #[arg(long, value_name = "RATIO")]
    pub max_lag_ratio: Option<f64>,

    /// After each run's bench, count this many queries' instructions under callgrind
    /// (`heddle-eval cost`; 0: none). Skipped, and said, without valgrind or when a
    /// build has no `cost` command.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub cost_queries: usize,

    /// The valgrind the instruction counts run under [default: `valgrind` on the PATH].
    #[arg(long, value_name = "PATH")]
    pub valgrind: Option<PathBuf>,

    /// The regression policy [default: eval/regression-policy.json, built in].
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,

    /// The JSON of an earlier `ab --noise` on this machine and workload: its floors
    /// gate the verdicts (with this session's own).
    #[arg(long, value_name = "FILE")]
    pub floor: Option<PathBuf>,

    /// Writes the whole report as JSON here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Writes the report into this markdown file between `<!-- BEGIN heddle capture -->`
    /// and `<!-- END heddle capture -->`, leaving the rest of the file as it was.
    #[arg(long, value_name = "FILE")]
    pub capture_into: Option<PathBuf>,

    /// The git repository revisions are taken from.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,

    /// Where revisions are built and their binaries kept [default: REPO/target/ab].
    #[arg(long, value_name = "DIR")]
    pub build_dir: Option<PathBuf>,
}

/// Everything a session needs but the runner.
pub struct Session {
    pub mode: Mode,
    pub arm: Arm,
    pub baseline: Build,
    pub candidate: Build,
    pub pairs: usize,
    pub bench_args: Vec<String>,
    pub rates: Vec<f64>,
    pub rates_rule: String,
    /// For the environment record: the index the runs read.
    pub index: PathBuf,
    pub policy: Policy,
    /// `--floor`: its path and report.
    pub floor: Option<(String, AbReport)>,
    pub seed: u64,
    /// Whether instructions were counted, and if not why not.
    pub cost_note: String,
}

/// Runs the pairs with `runner` and compares them.
pub fn run_session(runner: &mut dyn Runner, s: Session) -> anyhow::Result<AbReport> {
    let mut environment = Environment::capture(&s.index);
    let runs = run_pairs(runner, s.pairs)?;
    environment.finish();

    let first_env = |side| {
        runs.iter()
            .find(|r| r.side == side)
            .and_then(|r| r.measured.environment.as_ref())
    };
    let comparability = match (
        first_env(order::Side::Baseline),
        first_env(order::Side::Candidate),
    ) {
        (Some(a), Some(b)) => Some(crate::env::compare(&[a, b])),
        _ => None,
    };

    let (floor_file, floor_note, usable) = match &s.floor {
        None => (None, None, None),
        Some((path, f)) => match floor_applies(f, &s, &environment) {
            Ok(()) => (Some(path.clone()), None, Some(f)),
            Err(why) => (
                Some(path.clone()),
                Some(format!("{path} NOT USED ({why}); this session's runs only")),
                None,
            ),
        },
    };
    let measured = |key: &str| -> Option<f64> {
        match s.mode {
            Mode::Noise => compare::noise_floors(&runs)
                .into_iter()
                .find(|(k, _)| k == key)
                .and_then(|(_, f)| f),
            Mode::Ab => usable?
                .figures
                .iter()
                .find(|f| f.key == key)
                .and_then(|f| f.floor),
        }
    };
    let figures = compare::compare(&runs, &s.policy, &measured, s.seed);
    let windows: Vec<f64> = runs.iter().map(|r| r.measured.window_secs).collect();
    let (lo, hi) = windows
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &w| (a.min(w), b.max(w)));
    Ok(AbReport {
        format: AB_FORMAT,
        tool: format!("heddle-eval ab {}", env!("CARGO_PKG_VERSION")),
        mode: s.mode,
        arm: s.arm,
        baseline: s.baseline,
        candidate: s.candidate,
        pairs: s.pairs,
        bench_args: s.bench_args,
        rates: s.rates,
        rates_rule: s.rates_rule,
        environment,
        comparability,
        policy: s.policy,
        floor_file,
        floor_note,
        windows_equal: runs.is_empty() || hi <= lo * 1.05,
        cost: s.cost_note,
        runs,
        figures,
    })
}

/// A floor gates this session only if it was measured the same way on the same kind of
/// machine: an A/A report of the same arm and rates, CPU, kernel and storage.
fn floor_applies(f: &AbReport, s: &Session, env: &Environment) -> Result<(), String> {
    if f.mode != Mode::Noise {
        return Err("not an ab --noise report".to_string());
    }
    if f.arm != s.arm {
        return Err("measured on the other arm".to_string());
    }
    let same_rates = f.rates.len() == s.rates.len()
        && f.rates
            .iter()
            .zip(&s.rates)
            .all(|(a, b)| (a - b).abs() <= 1e-9 * a.abs().max(1.0));
    if !same_rates {
        return Err("measured at other rates".to_string());
    }
    let c = crate::env::compare(&[&f.environment, env]);
    if !c.comparable {
        return Err(format!("measured on another {}", c.reasons().join(", ")));
    }
    Ok(())
}

/// The `bench` arguments every run gets (but `--json` and the rates).
fn bench_args(a: &AbArgs) -> Vec<String> {
    let mut v: Vec<String> = vec![
        "--index".into(),
        a.index.display().to_string(),
        "--queries".into(),
        a.queries.display().to_string(),
        "--samples".into(),
        a.samples.to_string(),
        "--min-duration".into(),
        a.min_duration.to_string(),
        "--seed".into(),
        a.seed.to_string(),
    ];
    let mut opt = |flag: &str, value: Option<String>| {
        if let Some(x) = value {
            v.push(flag.to_string());
            v.push(x);
        }
    };
    opt("--threads", a.threads.map(|x| x.to_string()));
    opt("--inflight", a.inflight.map(|x| x.to_string()));
    opt("--warmup", a.warmup.map(|x| x.to_string()));
    opt("--max-others-cpu", a.max_others_cpu.map(|x| x.to_string()));
    opt("--max-lag-ratio", a.max_lag_ratio.map(|x| x.to_string()));
    if a.writes {
        v.splice(0..0, ["--writes".to_string()]);
        v.extend([
            "--write-docs".into(),
            a.write_docs.to_string(),
            "--commit-threads".into(),
            a.commit_threads.to_string(),
        ]);
        if let Some(d) = &a.scratch {
            v.extend(["--scratch".into(), d.display().to_string()]);
        }
    }
    v
}

/// The baseline's capacity, by its own open-loop calibration (`bench --fractions 1`
/// with one request at the rung: the rung is not used).
fn calibrate(baseline: &Path, a: &AbArgs, workdir: &Path) -> anyhow::Result<f64> {
    let json = workdir.join("calibration.json");
    let mut args: Vec<String> = bench_args(&AbArgs {
        writes: false,
        scratch: None,
        ..a.clone()
    });
    args.extend(["--fractions", "1", "--samples", "1", "--min-duration", "0"].map(String::from));
    crate::note!("ab: calibrating the baseline to derive the rates");
    let status = std::process::Command::new(baseline)
        .arg("bench")
        .args(&args)
        .arg("--json")
        .arg(&json)
        .stdout(std::process::Stdio::null())
        .status()?;
    ensure!(
        status.success(),
        "the baseline's calibration failed ({status})"
    );
    let r = crate::bench::report::read_json(&json)?;
    r.ladder
        .capacity_per_sec
        .context("the calibration reported no capacity")
}

/// Whether each run also counts instructions: valgrind is there and every build has the
/// `cost` command. Never an error: without either, the session measures time only, and
/// the note says why.
fn cost_run(a: &AbArgs, binaries: &[&str]) -> (Option<runner::CostRun>, String) {
    if a.cost_queries == 0 {
        return (
            None,
            "instructions: not counted (--cost-queries 0)".to_string(),
        );
    }
    let valgrind = match crate::cost::callgrind::find_valgrind(a.valgrind.as_deref()) {
        Ok(v) => v,
        Err(e) => return (None, format!("instructions: not counted: {e}")),
    };
    for b in binaries {
        let asked = std::process::Command::new(b)
            .args(["cost", "--help"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        let why = match asked {
            Ok(s) if s.success() => continue,
            Ok(_) => format!("{b} has no `cost` command (an older build)"),
            // Not the build's fault: e.g. a binary still being written (ETXTBSY).
            Err(e) => format!("{b} could not be run ({e})"),
        };
        return (None, format!("instructions: not counted: {why}"));
    }
    let spec = crate::cost::CostSpec {
        index: a.index.clone(),
        queries: a.queries.clone(),
        count: a.cost_queries,
        warmup: 20,
        k: 10,
        jobs: crate::cost::DEFAULT_JOBS,
    };
    let note = format!(
        "instructions: {} queries per run under {}'s callgrind",
        spec.count,
        valgrind.display()
    );
    (Some(runner::CostRun { valgrind, spec }), note)
}

/// The command: builds, rates, runs, verdicts, outputs.
pub fn run(a: &AbArgs) -> anyhow::Result<AbReport> {
    let mode = if a.noise.is_some() {
        Mode::Noise
    } else {
        Mode::Ab
    };
    let pairs = a.noise.unwrap_or(a.pairs);
    ensure!(
        pairs >= 2,
        "at least 2 pairs: one pair has no spread to judge"
    );
    let policy = match &a.policy {
        Some(p) => Policy::read(p)?,
        None => Policy::project(),
    };
    let floor = match &a.floor {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("--floor {}", p.display()))?;
            let r: AbReport = serde_json::from_str(&text)
                .with_context(|| format!("--floor {}: not an ab report", p.display()))?;
            Some((p.display().to_string(), r))
        }
        None => None,
    };
    // Every output is checked before a build or a run: they take minutes.
    if let Some(p) = &a.json {
        crate::output::check_file(p, "--json")?;
    }
    if let Some(p) = &a.capture_into {
        let text = std::fs::read_to_string(p)
            .with_context(|| format!("--capture-into {}", p.display()))?;
        capture::splice(&text, "").with_context(|| format!("--capture-into {}", p.display()))?;
    }

    let cache = a
        .build_dir
        .clone()
        .unwrap_or_else(|| a.repo.join("target/ab"));
    let baseline = binary::prepare(&a.baseline, &a.repo, &cache)?;
    let candidate = match (&a.candidate, mode) {
        (Some(c), Mode::Ab) => binary::prepare(c, &a.repo, &cache)?,
        _ => baseline.clone(),
    };

    let workdir = std::env::temp_dir().join(format!("heddle-ab-{}", std::process::id()));
    std::fs::create_dir_all(&workdir)?;
    let arm = if a.writes { Arm::Writes } else { Arm::Ladder };
    let (rates, rates_rule) = match (arm, a.rate, a.rates.is_empty()) {
        (Arm::Writes, Some(r), _) => (vec![r], "named".to_string()),
        (Arm::Ladder, _, false) => (a.rates.clone(), "named".to_string()),
        (Arm::Writes, None, _) => {
            let c = calibrate(Path::new(&baseline.binary), a, &workdir)?;
            (
                vec![round_rate(0.25 * c)],
                format!("a quarter of the baseline's capacity {}/s", c.round()),
            )
        }
        (Arm::Ladder, _, true) => {
            let c = calibrate(Path::new(&baseline.binary), a, &workdir)?;
            (
                a.fractions.iter().map(|f| round_rate(f * c)).collect(),
                format!(
                    "{:?} × the baseline's capacity {}/s",
                    a.fractions,
                    c.round()
                ),
            )
        }
    };
    let mut args = bench_args(a);
    let joined = rates
        .iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join(",");
    args.extend([
        if arm == Arm::Writes {
            "--rate"
        } else {
            "--rates"
        }
        .to_string(),
        joined,
    ]);
    let (cost, cost_note) = cost_run(a, &[baseline.binary.as_str(), candidate.binary.as_str()]);
    crate::note!("ab: {cost_note}");
    let mut runner = ProcessRunner {
        baseline: PathBuf::from(&baseline.binary),
        candidate: PathBuf::from(&candidate.binary),
        arm,
        args: args.clone(),
        workdir: workdir.clone(),
        cost,
    };
    let session = Session {
        mode,
        arm,
        baseline,
        candidate,
        pairs,
        bench_args: args,
        rates,
        rates_rule,
        index: a.index.clone(),
        policy,
        floor,
        seed: a.seed,
        cost_note,
    };
    let report = match run_session(&mut runner, session) {
        Ok(r) => r,
        Err(e) => bail!(
            "{e:#}\n(each run's JSON and log are kept in {})",
            workdir.display()
        ),
    };
    let _ = std::fs::remove_dir_all(&workdir);

    // The files first: a standard output that cannot be written (a full disk) must not
    // lose the report of a run of many minutes.
    let text = report::render(&report);
    if let Some(p) = &a.json {
        let mut json = serde_json::to_string_pretty(&report)?;
        json.push('\n');
        std::fs::write(p, json).with_context(|| format!("writing {}", p.display()))?;
        crate::note!("ab: wrote {}", p.display());
    }
    if let Some(p) = &a.capture_into {
        let command: Vec<String> = std::env::args().collect();
        capture::capture_into(p, &format!("```text\n$ {}\n{text}```", command.join(" ")))?;
        crate::note!("ab: captured into {}", p.display());
    }
    crate::out!("{text}");
    Ok(report)
}
