//! The recall-matched comparison: each engine's effort swept into a recall–latency curve,
//! and at each target recall the cheapest setting of each engine that reaches it — the
//! smallest effort, found by bisection on the effort with recall alone — then timed.
//! Two engines are compared at a target only if the settings found are at equal recall:
//! both reach it, and their recalls differ by at most a tolerance (the agreement check).
//!
//! The curve is not interpolated: a latency quoted at recall 0.95 is that of a setting
//! measured to reach 0.95, never one estimated between two settings.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One engine at one effort: its recall and its timings in a sequential pass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub effort: usize,
    /// Mean recall@k over the queries.
    pub recall: f64,
    /// Timed searches (whole passes over the queries).
    pub samples: u64,
    pub passes: u64,
    /// Over every timed search, µs; each quantile only with 100 samples beyond it.
    pub p50_us: Option<u64>,
    pub p99_us: Option<u64>,
    pub mean_us: Option<f64>,
    /// Each query's median over the passes, then the median over the queries, µs.
    pub query_median_p50_us: Option<f64>,
    /// One thread's queries per second: 10⁶ over the mean of the per-query medians.
    pub qps: Option<f64>,
}

/// The smallest effort in `lo..=hi` whose recall reaches `target`, given that recall
/// does not fall as effort grows; `recall_of` measures one effort (the caller caches).
/// `None` if `hi` does not reach it. `lo` is taken to be below it unless it is `1`.
pub fn min_effort_reaching(
    lo: usize,
    hi: usize,
    target: f64,
    recall_of: &mut dyn FnMut(usize) -> anyhow::Result<f64>,
) -> anyhow::Result<Option<usize>> {
    anyhow::ensure!(
        1 <= lo && lo <= hi,
        "efforts {lo} to {hi}: not a range from 1 up"
    );
    if recall_of(hi)? < target {
        return Ok(None);
    }
    if recall_of(lo)? >= target {
        return Ok(Some(lo));
    }
    // Invariant: recall(lo) < target ≤ recall(hi).
    let (mut lo, mut hi) = (lo, hi);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if recall_of(mid)? >= target {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(Some(hi))
}

/// Where to start bisecting for `target` from the recalls already known: the largest
/// known effort below it (or 1) and the smallest known effort reaching it (or `max`).
pub fn bracket(known: &BTreeMap<usize, f64>, target: f64, max: usize) -> (usize, usize) {
    let hi = known
        .iter()
        .filter(|&(_, &r)| r >= target)
        .map(|(&e, _)| e)
        .min()
        .unwrap_or(max);
    let lo = known
        .iter()
        .filter(|&(&e, &r)| r < target && e < hi)
        .map(|(&e, _)| e)
        .max()
        .map_or(1, |e| e);
    (lo.min(hi), hi)
}

/// Both engines at one target recall.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Matched {
    pub target: f64,
    /// heddle's cheapest setting reaching the target (absent: none of those swept did).
    pub heddle: Option<Point>,
    /// The peer's.
    pub peer: Option<Point>,
    /// The two settings' recalls differ by this much (both present).
    pub recall_gap: Option<f64>,
    /// The agreement check: both reach the target and the gap is within the tolerance.
    pub equal_recall: bool,
    /// heddle over the peer at these settings (p50, p99 of every timed search; mean).
    pub p50_ratio: Option<f64>,
    pub p99_ratio: Option<f64>,
    pub mean_ratio: Option<f64>,
}

/// Pairs two settings found for `target`, checks them and takes the ratios.
pub fn matched(target: f64, heddle: Option<Point>, peer: Option<Point>, tolerance: f64) -> Matched {
    let gap = match (&heddle, &peer) {
        (Some(h), Some(p)) => Some((h.recall - p.recall).abs()),
        _ => None,
    };
    let reaches = |p: &Option<Point>| p.as_ref().is_some_and(|p| p.recall >= target);
    let equal_recall = reaches(&heddle) && reaches(&peer) && gap.is_some_and(|g| g <= tolerance);
    let ratio = |f: fn(&Point) -> Option<f64>| match (&heddle, &peer) {
        (Some(h), Some(p)) => match (f(h), f(p)) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        },
        _ => None,
    };
    Matched {
        target,
        p50_ratio: ratio(|p| p.p50_us.map(|v| v as f64)),
        p99_ratio: ratio(|p| p.p99_us.map(|v| v as f64)),
        mean_ratio: ratio(|p| p.mean_us),
        heddle,
        peer,
        recall_gap: gap,
        equal_recall,
    }
}

/// The efforts of a `--efforts`-style list: positive, deduplicated, ascending.
pub fn efforts(list: &[usize]) -> anyhow::Result<Vec<usize>> {
    anyhow::ensure!(!list.is_empty(), "an effort list needs at least one value");
    if let Some(bad) = list.iter().find(|&&e| e == 0) {
        anyhow::bail!("effort {bad}: efforts are at least 1");
    }
    let mut v = list.to_vec();
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// Recall targets: each in (0, 1], ascending.
pub fn targets(list: &[f64]) -> anyhow::Result<Vec<f64>> {
    anyhow::ensure!(!list.is_empty(), "at least one target recall");
    if let Some(bad) = list.iter().find(|&&r| !(r > 0.0 && r <= 1.0)) {
        anyhow::bail!("target recall {bad}: expected a number above 0 and at most 1");
    }
    let mut v = list.to_vec();
    v.sort_by(f64::total_cmp);
    v.dedup();
    Ok(v)
}
