//! Making the runs: a [`Runner`] measures one build once; [`run_pairs`] drives it in
//! matched pairs (ABBA…) and records the machine's load around every run.
//!
//! [`ProcessRunner`] runs each build's own `heddle-eval bench` binary in a process of its
//! own (the real A/B); [`InProcessRunner`] runs the instrument in this process against a
//! backend per side (the synthetic backends of the tests and of docs/PERF.md's
//! detection-rate measurement).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

use super::figures::{self, Figure};
use super::order::{Side, abba};
use crate::bench::{BackendFactory, BenchArgs};
use crate::env::{Environment, LoadAverage};

/// What one run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFigures {
    pub figures: Vec<Figure>,
    /// How long the measured part lasted (every rung, or the writes trial's reads):
    /// every run of an A/B must have the same.
    pub window_secs: f64,
    /// The environment the run's own report carries (absent from older builds).
    pub environment: Option<Environment>,
    /// Why the machine, not the build, may have set this run's figures (its disturbed
    /// rungs, or other processes' CPU during the writes trial); empty when undisturbed.
    /// One disturbed run withholds every verdict of the session.
    #[serde(default)]
    pub disturbed: Vec<String>,
}

/// Measures a build once.
pub trait Runner {
    fn run(&mut self, side: Side, run_index: usize) -> anyhow::Result<RunFigures>;
}

/// One run of the A/B, as made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// 0-based position in the session.
    pub order: usize,
    pub pair: usize,
    pub side: Side,
    pub load_start: Option<f64>,
    pub load_end: Option<f64>,
    #[serde(flatten)]
    pub measured: RunFigures,
}

/// Runs `pairs` matched pairs in ABBA order.
pub fn run_pairs(runner: &mut dyn Runner, pairs: usize) -> anyhow::Result<Vec<RunRecord>> {
    let mut out = Vec::new();
    for (order, (pair, side)) in abba(pairs).into_iter().enumerate() {
        crate::note!(
            "ab: run {}/{}: pair {} {}",
            order + 1,
            2 * pairs,
            pair + 1,
            match side {
                Side::Baseline => "baseline (A)",
                Side::Candidate => "candidate (B)",
            }
        );
        let load_start = LoadAverage::now().map(|l| l.one);
        let measured = runner
            .run(side, order)
            .with_context(|| format!("run {} (pair {}, {side:?})", order + 1, pair + 1))?;
        out.push(RunRecord {
            order,
            pair,
            side,
            load_start,
            load_end: LoadAverage::now().map(|l| l.one),
            measured,
        });
    }
    Ok(out)
}

/// What is measured: the read ladder, or the writes arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arm {
    Ladder,
    Writes,
}

/// The window of a ladder report: the sum of its rungs' durations (each rung's length
/// is set by its schedule, so equal settings give equal windows).
fn ladder_window(r: &crate::bench::report::BenchReport) -> f64 {
    r.engines
        .iter()
        .flat_map(|e| &e.rungs)
        .map(|x| x.duration_secs)
        .sum()
}

/// Each build's `heddle-eval` binary, run as `BIN bench ARGS --json FILE`.
pub struct ProcessRunner {
    pub baseline: PathBuf,
    pub candidate: PathBuf,
    pub arm: Arm,
    /// Every `bench` argument but `--json`: the same for both builds.
    pub args: Vec<String>,
    /// Where each run's JSON and log go.
    pub workdir: PathBuf,
    /// After each run's bench, the build's query loop counted under callgrind (its
    /// figures join the run's); `None`: no instruction figures.
    pub cost: Option<CostRun>,
}

/// How [`ProcessRunner`] counts instructions: which valgrind, on what.
#[derive(Debug, Clone)]
pub struct CostRun {
    pub valgrind: PathBuf,
    pub spec: crate::cost::CostSpec,
}

impl ProcessRunner {
    fn binary(&self, side: Side) -> &Path {
        match side {
            Side::Baseline => &self.baseline,
            Side::Candidate => &self.candidate,
        }
    }
}

impl Runner for ProcessRunner {
    fn run(&mut self, side: Side, run_index: usize) -> anyhow::Result<RunFigures> {
        let json = self
            .workdir
            .join(format!("run-{:02}-{}.json", run_index + 1, side.letter()));
        let log = json.with_extension("log");
        let status = Command::new(self.binary(side))
            .arg("bench")
            .args(&self.args)
            .arg("--json")
            .arg(&json)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log)?)
            .status()
            .with_context(|| format!("running {}", self.binary(side).display()))?;
        if !status.success() {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(5).collect();
            bail!(
                "{} bench failed ({status}); its last lines:\n{}",
                self.binary(side).display(),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
        let mut measured = match self.arm {
            Arm::Ladder => {
                let r = crate::bench::report::read_json(&json)?;
                RunFigures {
                    figures: figures::from_ladder(&r)?,
                    window_secs: ladder_window(&r),
                    disturbed: figures::disturbed_in_ladder(&r),
                    environment: r.environment,
                }
            }
            Arm::Writes => {
                let r = crate::bench::writes::read_json(&json)?;
                RunFigures {
                    figures: figures::from_writes(&r)?,
                    window_secs: r.trials.first().map_or(0.0, |t| t.run.duration_secs),
                    disturbed: figures::disturbed_in_writes(&r),
                    environment: r.environment,
                }
            }
        };
        if let Some(c) = &self.cost {
            let tag = format!("{:02}-{}", run_index + 1, side.letter());
            let r =
                crate::cost::measure(&c.valgrind, self.binary(side), &c.spec, &self.workdir, &tag)
                    .context("counting instructions under callgrind")?;
            crate::note!(
                "ab: run {}: {} instructions per query ({:.0} s under callgrind)",
                run_index + 1,
                crate::cost::report::count(
                    r.total_instructions as f64 / r.per_query.len().max(1) as f64
                ),
                r.wall_secs
            );
            measured.figures.extend(figures::from_cost(&r));
        }
        Ok(measured)
    }
}

/// The ladder in this process, with one engine per side.
pub struct InProcessRunner {
    pub baseline: Box<dyn BackendFactory>,
    pub candidate: Box<dyn BackendFactory>,
    pub args: BenchArgs,
}

impl Runner for InProcessRunner {
    fn run(&mut self, side: Side, _run_index: usize) -> anyhow::Result<RunFigures> {
        let factory = match side {
            Side::Baseline => &self.baseline,
            Side::Candidate => &self.candidate,
        };
        let r = crate::bench::measure(&self.args, std::slice::from_ref(factory))?;
        Ok(RunFigures {
            figures: figures::from_ladder(&r)?,
            window_secs: ladder_window(&r),
            disturbed: figures::disturbed_in_ladder(&r),
            environment: r.environment,
        })
    }
}
