//! What one run measured, as named figures: the read ladder's p50, p90 and p99 at each
//! rung and its capacity; the writes arm's read quantiles in and outside commits and the
//! commit's phases. Each is one run's own figure (a quantile of that run's requests):
//! the A/B compares medians of these, never a percentile pooled over runs.

use serde::{Deserialize, Serialize};

use crate::bench::ladder::servers;
use crate::bench::report::BenchReport;
use crate::bench::stats::LatencySummary;
use crate::bench::writes::WritesReport;

/// Which way is better for a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Lower,
    Higher,
}

/// What kind of measurement a figure is, which decides what can disturb it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Measure {
    /// Wall-clock: latency, capacity, commit times. Another tenant's CPU, a late
    /// dispatcher or a suspend can set it, so a disturbed run withholds its verdict.
    #[default]
    Wall,
    /// The worker thread's own CPU time per request: waiting for a core is not in it,
    /// so it stands on a busy machine, gated by its own floor (shared caches and a
    /// sibling hyperthread still move it: the floor says by how much).
    Cpu,
    /// Instructions (and simulated cache misses) counted by callgrind: the same on a
    /// busy machine as on a quiet one; its floor is the build's own nondeterminism.
    Instructions,
}

impl Measure {
    pub fn name(self) -> &'static str {
        match self {
            Measure::Wall => "latency",
            Measure::Cpu => "CPU time",
            Measure::Instructions => "instructions",
        }
    }
}

/// One figure of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// Stable across runs of one A/B: `rung 2 p99`, `in-commit p50`, `commit fsync`.
    pub key: String,
    /// What the regression policy sets a threshold for: `p50`, `p99`, `capacity`, …
    pub kind: String,
    pub better: Better,
    /// µs for times, requests per second for capacity; absent when the run could not
    /// report it (too few samples beyond a quantile: rule 3).
    pub value: Option<f64>,
    /// How the figure is shown: `µs`, `s`, `/s` or `count`.
    pub unit: String,
    /// Reports before CPU time and instructions were measured hold only wall figures.
    #[serde(default)]
    pub measure: Measure,
}

fn latency(key: &str, kind: &str, v: Option<u64>) -> Figure {
    Figure {
        key: key.to_string(),
        kind: kind.to_string(),
        better: Better::Lower,
        value: v.map(|v| v as f64),
        unit: "µs".to_string(),
        measure: Measure::Wall,
    }
}

/// A CPU-time figure: a quantile of the worker threads' CPU time per request, µs.
fn cpu(key: &str, kind: &str, v: Option<u64>) -> Figure {
    Figure {
        measure: Measure::Cpu,
        ..latency(key, kind, v)
    }
}

/// The figures of a cost run: instructions per query for all queries and each
/// document-frequency class (term-count classes overlap them and are left to the cost
/// report), and the simulated cache misses per query over all.
pub fn from_cost(r: &crate::cost::report::CostReport) -> Vec<Figure> {
    let count = |key: String, kind: &str, v: f64| Figure {
        key,
        kind: kind.to_string(),
        better: Better::Lower,
        value: Some(v),
        unit: "count".to_string(),
        measure: Measure::Instructions,
    };
    let mut out = Vec::new();
    for c in r.classes.iter().filter(|c| !c.class.ends_with(" terms")) {
        out.push(count(
            format!("instr/query {}", c.class),
            "instructions",
            c.instructions,
        ));
    }
    if let Some(all) = r.classes.iter().find(|c| c.class == "all") {
        out.push(count(
            "D1 miss/query".to_string(),
            "cache-misses",
            all.d1_misses,
        ));
        out.push(count(
            "LL miss/query".to_string(),
            "cache-misses",
            all.ll_misses,
        ));
    }
    out
}

/// One rung's figures as the ladder measured them.
#[derive(Debug, Clone, PartialEq)]
pub struct RungFigures {
    pub rate: f64,
    pub latency: LatencySummary,
    pub mean_service_us: Option<f64>,
}

/// The ladder's figures: p50, p90, p99 at each rung, then capacity — servers over the
/// mean service time at the lowest rung, the calibration's own rule (docs/PERF.md, "The
/// ladder") applied to every run, so that each run has a capacity of its own.
pub fn ladder(rungs: &[RungFigures], servers: usize) -> Vec<Figure> {
    let mut out = Vec::new();
    for (i, r) in rungs.iter().enumerate() {
        let l = &r.latency;
        out.push(latency(&format!("rung {} p50", i + 1), "p50", l.p50));
        out.push(latency(&format!("rung {} p90", i + 1), "p90", l.p90));
        out.push(latency(&format!("rung {} p99", i + 1), "p99", l.p99));
    }
    let lowest = rungs.iter().min_by(|a, b| a.rate.total_cmp(&b.rate));
    out.push(Figure {
        key: "capacity".to_string(),
        kind: "capacity".to_string(),
        better: Better::Higher,
        value: lowest
            .and_then(|r| r.mean_service_us)
            .filter(|&s| s > 0.0)
            .map(|s| servers as f64 / (s / 1e6)),
        unit: "/s".to_string(),
        measure: Measure::Wall,
    });
    out
}

/// The figures of a one-engine, one-repetition ladder report.
pub fn from_ladder(r: &BenchReport) -> anyhow::Result<Vec<Figure>> {
    let e = r
        .engines
        .first()
        .ok_or_else(|| anyhow::anyhow!("the ladder report has no engine"))?;
    let rungs: Vec<RungFigures> = e
        .rungs
        .iter()
        .filter(|x| x.repetition == 0)
        .map(|x| RungFigures {
            rate: x.offered_rate,
            latency: x.latency_us.clone(),
            mean_service_us: x.service_us.mean,
        })
        .collect();
    let mut out = ladder(&rungs, servers(&r.settings));
    out.extend(cpu_figures(e.rungs.iter().filter(|x| x.repetition == 0)));
    Ok(out)
}

/// Each rung's service CPU p50, p90 and p99 (absent in reports from builds that did not
/// measure it: then no figure at all, rather than an absent one per run).
pub fn cpu_figures<'a>(
    rungs: impl Iterator<Item = &'a crate::bench::report::RungReport>,
) -> Vec<Figure> {
    let mut out = Vec::new();
    for (i, x) in rungs.enumerate() {
        let Some(c) = &x.service_cpu_us else {
            continue;
        };
        out.push(cpu(&format!("rung {} cpu p50", i + 1), "cpu-p50", c.p50));
        out.push(cpu(&format!("rung {} cpu p90", i + 1), "cpu-p90", c.p90));
        out.push(cpu(&format!("rung {} cpu p99", i + 1), "cpu-p99", c.p99));
    }
    out
}

/// Why a ladder run's figures may be the machine's: each of its measured rungs that was
/// disturbed (docs/PERF.md, rule 8), with the reasons. A disturbed calibration attempt
/// is not counted: it was run again, and the ladder's rates came from one that was not.
pub fn disturbed_in_ladder(r: &BenchReport) -> Vec<String> {
    r.engines
        .iter()
        .flat_map(|e| &e.rungs)
        .filter(|x| x.disturbed)
        .map(|x| {
            format!(
                "rung at {}/s: {}",
                x.offered_rate,
                x.disturbed_reasons.join("; ")
            )
        })
        .collect()
}

/// Why a writes run's figures may be the machine's: its first trial, or one of that
/// trial's commit windows, was disturbed (rule 8 applied by the writes arm). A report
/// from a build before the arm judged disturbance: other processes' CPU over the trial.
pub fn disturbed_in_writes(r: &WritesReport) -> Vec<String> {
    let Some(t) = r.trials.first() else {
        return Vec::new();
    };
    let judged = t.run.all_disturbances();
    if !judged.is_empty() {
        return judged;
    }
    let bound = r.settings.others_bound();
    t.run
        .others_cpu
        .filter(|&o| o > bound)
        .map(|o| format!("other processes used {o:.2} cores (at most {bound:.2} may)"))
        .into_iter()
        .collect()
}

/// The writes arm's figures (its first trial): reads in and outside commits, the commit's
/// wall time and phases (median over the trial's commits) and the exclusive window.
pub fn from_writes(r: &WritesReport) -> anyhow::Result<Vec<Figure>> {
    let t = r
        .trials
        .first()
        .ok_or_else(|| anyhow::anyhow!("the writes report has no trial"))?;
    let mut out = Vec::new();
    for (name, class) in [("in-commit", &t.run.in_commit), ("outside", &t.run.outside)] {
        let l = &class.latency_us;
        out.push(latency(&format!("{name} p50"), "p50", l.p50));
        out.push(latency(&format!("{name} p90"), "p90", l.p90));
        out.push(latency(&format!("{name} p99"), "p99", l.p99));
    }
    for (name, class) in [("in-commit", &t.run.in_commit), ("outside", &t.run.outside)] {
        if let Some(c) = &class.cpu_us {
            out.push(cpu(&format!("{name} cpu p50"), "cpu-p50", c.p50));
            out.push(cpu(&format!("{name} cpu p99"), "cpu-p99", c.p99));
        }
    }
    let median = |v: Vec<f64>| crate::bench::stats::spread(&v).map(|s| s.median);
    let secs = |key: String, v: Option<f64>| Figure {
        key,
        kind: "commit".to_string(),
        better: Better::Lower,
        value: v,
        unit: "s".to_string(),
        measure: Measure::Wall,
    };
    out.push(secs(
        "commit wall".to_string(),
        median(t.run.commits.iter().map(|c| c.wall_secs).collect()),
    ));
    let mut names: Vec<&str> = Vec::new();
    for p in t.run.commits.iter().flat_map(|c| &c.phases) {
        if !names.contains(&p.name.as_str()) {
            names.push(&p.name);
        }
    }
    for name in names {
        let v: Vec<f64> = t
            .run
            .commits
            .iter()
            .filter_map(|c| c.phases.iter().find(|p| p.name == name).map(|p| p.secs))
            .collect();
        out.push(secs(format!("commit {name}"), median(v)));
    }
    let exclusive: Vec<f64> = t
        .run
        .commits
        .iter()
        .filter_map(|c| c.exclusive_ns.map(|n| n as f64 / 1e3))
        .collect();
    if !exclusive.is_empty() {
        out.push(Figure {
            key: "commit exclusive".to_string(),
            kind: "exclusive".to_string(),
            better: Better::Lower,
            value: median(exclusive),
            unit: "µs".to_string(),
            measure: Measure::Wall,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(p50: u64, p99: Option<u64>) -> LatencySummary {
        LatencySummary {
            count: 10_000,
            mean: Some(p50 as f64),
            p50: Some(p50),
            p90: Some(p50 * 2),
            p99,
            p999: None,
            max: Some(p50 * 10),
        }
    }

    #[test]
    fn each_rung_gives_three_quantiles_and_the_lowest_gives_capacity() {
        let rungs = [
            RungFigures {
                rate: 500.0,
                latency: summary(300, None),
                mean_service_us: Some(250.0),
            },
            RungFigures {
                rate: 100.0,
                latency: summary(200, Some(900)),
                mean_service_us: Some(200.0),
            },
        ];
        let f = ladder(&rungs, 2);
        let keys: Vec<&str> = f.iter().map(|x| x.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "rung 1 p50",
                "rung 1 p90",
                "rung 1 p99",
                "rung 2 p50",
                "rung 2 p90",
                "rung 2 p99",
                "capacity"
            ]
        );
        assert_eq!(f[2].value, None, "absent stays absent");
        assert_eq!(f[5].value, Some(900.0));
        // 2 servers over 200 µs at the lowest rate (100/s), not the first listed.
        assert_eq!((f[6].value, f[6].better), (Some(10_000.0), Better::Higher));
    }
}
