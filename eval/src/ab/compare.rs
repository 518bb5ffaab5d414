//! Every figure of an A/B (or A/A) session, compared: each pair's two figures, the
//! median of each build's per-run figures, the change with its bootstrap interval, the
//! noise floor it is gated against, the policy's threshold and the verdict.

use serde::{Deserialize, Serialize};

use super::figures::{Better, Figure, Measure};
use super::order::Side;
use super::policy::Policy;
use super::runner::RunRecord;
use super::verdict::{Verdict, change, decide, interval, median, spread_of_pairs};

/// Where a figure's noise floor came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FloorSource {
    /// An A/A session (`--noise`), read with `--floor`.
    Measured,
    /// This session's own runs: how far apart one build's runs came out.
    InRun,
    /// Both: the larger is used.
    Both,
    /// Neither: the figure cannot be gated.
    None,
}

/// One figure over the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureResult {
    pub key: String,
    pub kind: String,
    pub better: Better,
    pub unit: String,
    /// Pair by pair: (baseline, candidate); absent where that run could not report it.
    pub pairs: Vec<(Option<f64>, Option<f64>)>,
    pub median_baseline: Option<f64>,
    pub median_candidate: Option<f64>,
    /// `median(candidate) / median(baseline) − 1`.
    pub change: Option<f64>,
    pub interval: Option<(f64, f64)>,
    /// The run-to-run spread of one build for this figure (the larger of the measured
    /// and the in-run one).
    pub floor: Option<f64>,
    pub floor_source: FloorSource,
    pub threshold: f64,
    pub verdict: Verdict,
    /// Wall clock, CPU time or instructions (older reports: wall clock).
    #[serde(default)]
    pub measure: Measure,
    /// The verdict was withheld because a run was disturbed (a wall-clock figure only).
    #[serde(default)]
    pub withheld: bool,
}

/// The figure `key` of every run, by pair and side.
fn pairs_of(records: &[RunRecord], key: &str, pairs: usize) -> Vec<(Option<f64>, Option<f64>)> {
    let mut out = vec![(None, None); pairs];
    for r in records {
        let v = r
            .measured
            .figures
            .iter()
            .find(|f| f.key == key)
            .and_then(|f| f.value);
        match r.side {
            Side::Baseline => out[r.pair].0 = v,
            Side::Candidate => out[r.pair].1 = v,
        }
    }
    out
}

/// How far apart one build's runs of this session came out: for each build, its largest
/// figure over its smallest, less one; the larger of the two builds'. Noise measured in
/// this very session, drift included. `None` until each build has two runs with the
/// figure.
///
/// Not only the runs that ran back to back (ABBA puts B B and A A side by side): with
/// four pairs those are three differences, and an A/A session whose three happened to
/// be close gave a verdict on the fourth (a real-clock A/A at load 5 did). The range
/// over all of a build's runs holds every one of those differences and the rest.
fn in_run_floor(records: &[RunRecord], key: &str) -> Option<f64> {
    let values = |side: Side| -> Vec<f64> {
        records
            .iter()
            .filter(|r| r.side == side)
            .filter_map(|r| {
                r.measured
                    .figures
                    .iter()
                    .find(|f| f.key == key)
                    .and_then(|f| f.value)
            })
            .collect()
    };
    let range = |v: Vec<f64>| -> Option<f64> {
        let lo = v.iter().copied().reduce(f64::min)?;
        let hi = v.iter().copied().reduce(f64::max)?;
        (v.len() >= 2 && lo > 0.0).then(|| hi / lo - 1.0)
    };
    let a = range(values(Side::Baseline))?;
    let b = range(values(Side::Candidate))?;
    Some(a.max(b))
}

/// Compares every figure the runs share. `measured_floor(key)` is the floor an A/A
/// session measured for it, if one is given; `seed` fixes the bootstrap.
pub fn compare(
    records: &[RunRecord],
    policy: &Policy,
    measured_floor: &dyn Fn(&str) -> Option<f64>,
    seed: u64,
) -> Vec<FigureResult> {
    let pairs = records.iter().map(|r| r.pair + 1).max().unwrap_or(0);
    // A run the machine may have set (rule 8) withholds every wall-clock verdict: its
    // figures are shown, but no threshold can tell a regression from the disturbance.
    // CPU time and instructions do not include the wait for a core; their own floors
    // gate them.
    let disturbed = records.iter().any(|r| !r.measured.disturbed.is_empty());
    let mut keys: Vec<&Figure> = Vec::new();
    for f in records.iter().flat_map(|r| &r.measured.figures) {
        if !keys.iter().any(|k| k.key == f.key) {
            keys.push(f);
        }
    }
    keys.into_iter()
        .map(|f| {
            let by_pair = pairs_of(records, &f.key, pairs);
            let both: Vec<(f64, f64)> = by_pair
                .iter()
                .filter_map(|&(a, b)| Some((a?, b?)))
                .collect();
            let a: Vec<f64> = both.iter().map(|p| p.0).collect();
            let b: Vec<f64> = both.iter().map(|p| p.1).collect();
            let (measured, in_run) = (measured_floor(&f.key), in_run_floor(records, &f.key));
            let (floor, floor_source) = match (measured, in_run) {
                (Some(m), Some(i)) => (Some(m.max(i)), FloorSource::Both),
                (Some(m), None) => (Some(m), FloorSource::Measured),
                (None, Some(i)) => (Some(i), FloorSource::InRun),
                (None, None) => (None, FloorSource::None),
            };
            let threshold = policy.threshold(&f.key, &f.kind);
            let change = change(&both);
            let interval = interval(&both, seed);
            FigureResult {
                key: f.key.clone(),
                kind: f.kind.clone(),
                better: f.better,
                unit: f.unit.clone(),
                pairs: by_pair,
                median_baseline: median(&a),
                median_candidate: median(&b),
                change,
                interval,
                floor,
                floor_source,
                threshold,
                verdict: if disturbed && f.measure == Measure::Wall {
                    Verdict::Ungateable
                } else {
                    decide(both.len(), change, interval, floor, threshold, f.better)
                },
                measure: f.measure,
                withheld: disturbed && f.measure == Measure::Wall,
            }
        })
        .collect()
}

/// An A/A session's floor per figure: the largest difference between the two runs of a
/// pair (the same build both times), with the median of each side for reference.
pub fn noise_floors(records: &[RunRecord]) -> Vec<(String, Option<f64>)> {
    let pairs = records.iter().map(|r| r.pair + 1).max().unwrap_or(0);
    let mut keys: Vec<String> = Vec::new();
    for f in records.iter().flat_map(|r| &r.measured.figures) {
        if !keys.contains(&f.key) {
            keys.push(f.key.clone());
        }
    }
    keys.into_iter()
        .map(|k| {
            let both: Vec<(f64, f64)> = pairs_of(records, &k, pairs)
                .into_iter()
                .filter_map(|(a, b)| Some((a?, b?)))
                .collect();
            let floor = spread_of_pairs(&both);
            (k, floor)
        })
        .collect()
}
