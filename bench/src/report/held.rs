//! Issue 6's two checks of each engine on the ladder: the highest rate it *held*, and
//! whether under twice that rate it *degraded* (shed what it could not serve, memory
//! flat, every request accounted for) rather than collapsed.
//!
//! Held: in every repetition the rung shed at most [`MAX_SHED_FRACTION`] of its
//! requests, it is valid, and its p99 is at most [`P99_OVER_LOW_P50`] times the p50 at
//! the ladder's lowest rung (each the median over repetitions) — the *slower* engine's
//! p50 when several engines ran, so that every engine is held to one latency bound. The
//! held rate is the highest such rung's offered rate; it is also found repetition by
//! repetition, and reported with its spread over them.
//!
//! One bound for all: with each engine's own p50, the faster engine had the tighter
//! bound and was "held" at a lower rate while faster at every rung, p50 and p99 (GCIDE,
//! issue 14: heddle 0.6–0.7× tantivy at ¼ and ½ C, yet holding no rung against
//! tantivy's ¼ C, in two runs of three).
//!
//! Under twice that rate: at the first rung offering at least twice the held rate, the
//! peak RSS sampled while the engine ran that rung is at most [`RSS_GROWTH_LIMIT`] times
//! the largest such peak at the rungs at or below the held rate, and in every repetition
//! offered = completed + shed + failed. Both engines run in one process, so the RSS is
//! the process's: it holds the idle engine's pages too, which dilutes a growth but does
//! not invent one.

use std::fmt::Write;

use heddle_eval::bench::report::format::{kib, micros, rate};
use heddle_eval::bench::report::{BenchReport, LadderRule, RungReport, RungSummary, summarise};
use heddle_eval::bench::stats::spread;

use super::fmt_spread;
use serde::{Deserialize, Serialize};

/// A held rung shed at most this fraction of its requests in every repetition. Before,
/// one shed request of 10,000 flipped a whole ladder step (issue 15: 2 of 10,000 shed at
/// ½ C halved heddle's held rate against tantivy's). A thousandth cannot move a held
/// rung's p99: counting every shed request as slower than all the rest moves the p99 of
/// 10,000 requests from rank 9,900 to at most 9,910 — within the 100 samples beyond it
/// that rule 3 asks for — while a backlog the engine does not serve (an overload) sheds
/// far more than that.
pub const MAX_SHED_FRACTION: f64 = 0.001;

/// A held rung's p99 is at most this many times the engine's p50 at the lowest rung.
pub const P99_OVER_LOW_P50: u64 = 10;

/// Under twice the held rate, RSS may grow to this many times its peak at or below it.
pub const RSS_GROWTH_LIMIT: f64 = 1.10;

/// Derived rates are rounded to three significant figures (each within 0.5%), so the rung
/// meant as twice another may offer up to 1% less than twice its rounded rate.
const RATE_TOLERANCE: f64 = 0.01;

/// The ratio row's label (and the heading of its lines).
pub const HELD_LABEL: &str =
    "highest rate held (shed ≤ 0.1%, p99 ≤ 10× the slower engine's low-rate p50)";

/// The heading of the degradation lines.
pub const OVERLOAD_LABEL: &str = "under twice the rate held (degrade, not collapse: RSS ≤ 1.10× its peak at or below the held rate; offered = completed + shed + failed)";

/// One engine's two checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EngineHold {
    pub engine: String,
    /// p50 at the ladder's lowest rung (median over repetitions), µs: the engine's own
    /// latency with next to no load.
    pub low_p50_us: Option<u64>,
    /// The highest rung held; absent: none was.
    pub held: Option<HeldRung>,
    /// What happened under twice the held rate; absent when no rung was held.
    pub overload: Option<Overload>,
    /// The p99 bound a held rung kept: [`P99_OVER_LOW_P50`] × the largest `low_p50_us`
    /// of the engines compared (absent: none had a low-rate p50).
    #[serde(default)]
    pub p99_bound_us: Option<u64>,
    /// The held rate found in each repetition alone (absent: none held in it), and
    /// its spread over the repetitions that held one.
    #[serde(default)]
    pub per_repetition: Vec<Option<f64>>,
    #[serde(default)]
    pub rate_spread: Option<heddle_eval::bench::stats::Spread<f64>>,
}

/// The highest rung an engine held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldRung {
    /// 0-based position in the ladder.
    pub rung: usize,
    pub rate: f64,
    /// The rung's fraction of C, for a derived ladder.
    pub fraction: Option<f64>,
    /// Median over repetitions.
    pub p99_us: u64,
    /// The ladder's top rung: the engine may hold more than the ladder offered.
    pub top: bool,
}

/// Under twice the held rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Overload {
    /// Twice the held rate.
    pub target_rate: f64,
    /// The rung at or first above the target; absent: the ladder does not reach it.
    pub at: Option<OverloadRung>,
    /// The ladder's highest rate, to say how far short it fell.
    pub top_rate: f64,
}

/// The rung at (or first above) twice the held rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverloadRung {
    pub rung: usize,
    pub rate: f64,
    pub fraction: Option<f64>,
    /// Completed requests per second (median over repetitions).
    pub achieved_rate: f64,
    /// Peak RSS sampled while this engine ran the rung (median over repetitions), KiB.
    pub rss_kib: Option<u64>,
    /// The largest of those peaks at the rungs at or below the held rate, KiB.
    pub held_peak_rss_kib: Option<u64>,
    /// `rss_kib / held_peak_rss_kib`.
    pub rss_ratio: Option<f64>,
    /// `rss_ratio ≤ RSS_GROWTH_LIMIT`; absent when RSS was not sampled.
    pub rss_pass: Option<bool>,
    /// Every request of the rung, summed over repetitions.
    pub requests: Accounting,
    /// In every repetition, offered = completed + shed + failed.
    pub accounted: bool,
}

impl OverloadRung {
    /// Both parts of the degradation check passed.
    pub fn pass(&self) -> bool {
        self.rss_pass == Some(true) && self.accounted
    }
}

/// What became of a rung's requests (summed over repetitions, when added up).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Accounting {
    pub repetitions: usize,
    /// Requests scheduled.
    pub offered: u64,
    pub completed: u64,
    /// Refused at the in-flight cap: counted, never executed.
    pub shed: u64,
    /// Failed by the engine.
    pub failed: u64,
    /// Requests in none of the counts above (or counted twice), repetition by
    /// repetition: a request still queued when the rung ended would be one.
    pub unaccounted: u64,
}

impl Accounting {
    /// One repetition of a rung.
    pub fn of(r: &RungReport) -> Self {
        Accounting::from_counts(r.requests, r.completed, r.shed, r.errors)
    }

    /// One repetition, from its counts.
    pub fn from_counts(offered: u64, completed: u64, shed: u64, failed: u64) -> Self {
        Accounting {
            repetitions: 1,
            offered,
            completed,
            shed,
            failed,
            unaccounted: offered.abs_diff(completed + shed + failed),
        }
    }

    pub fn add(&mut self, other: &Accounting) {
        self.repetitions += other.repetitions;
        self.offered += other.offered;
        self.completed += other.completed;
        self.shed += other.shed;
        self.failed += other.failed;
        self.unaccounted += other.unaccounted;
    }
}

/// Both checks for every engine of the ladder, in the summary's engine order.
pub fn holds(l: &BenchReport) -> Vec<EngineHold> {
    let mut names: Vec<&str> = Vec::new();
    for s in &l.summary {
        if !names.contains(&s.engine.as_str()) {
            names.push(&s.engine);
        }
    }
    let fraction = |i: usize| fraction_of_c(l, i);
    let rungs_of = |name: &str| -> Vec<&RungSummary> {
        l.summary.iter().filter(|s| s.engine == name).collect()
    };
    let bound = common_bound(&names.iter().map(|n| rungs_of(n)).collect::<Vec<_>>());
    names
        .into_iter()
        .map(|name| {
            let rungs = rungs_of(name);
            let counts = |i: usize| {
                let mut total = Accounting::default();
                for r in l.engines.iter().filter(|e| e.name == name) {
                    for rep in r.rungs.iter().filter(|r| r.rung == i) {
                        total.add(&Accounting::of(rep));
                    }
                }
                total
            };
            let mut h = hold(name, &rungs, fraction, counts, bound);
            h.per_repetition = per_repetition(l, name, bound);
            let held: Vec<f64> = h.per_repetition.iter().flatten().copied().collect();
            h.rate_spread = spread(&held);
            h
        })
        .collect()
}

/// One p99 bound for every engine: [`P99_OVER_LOW_P50`] × the slowest low-rate p50 of
/// the engines (each given by its rung summaries).
pub fn common_bound(engines: &[Vec<&RungSummary>]) -> Option<u64> {
    engines
        .iter()
        .filter_map(|rungs| held_rung(rungs, None).0)
        .max()
        .map(|p50| P99_OVER_LOW_P50.saturating_mul(p50))
}

/// The held rate of each repetition on its own (the same rule on that repetition's rungs).
fn per_repetition(l: &BenchReport, name: &str, bound: Option<u64>) -> Vec<Option<f64>> {
    let mine: Vec<&RungReport> = l
        .engines
        .iter()
        .filter(|e| e.name == name)
        .flat_map(|e| &e.rungs)
        .collect();
    let reps = mine.iter().map(|r| r.repetition + 1).max().unwrap_or(0);
    (0..reps)
        .map(|rep| {
            let rungs: Vec<RungReport> = mine
                .iter()
                .filter(|r| r.repetition == rep)
                .map(|r| (*r).clone())
                .collect();
            let summaries = summarise(&rungs);
            held_rung(&summaries.iter().collect::<Vec<_>>(), bound)
                .1
                .map(|h| h.rate)
        })
        .collect()
}

/// Both checks for one engine, from its rung summaries (any order); `fraction` gives a
/// rung's fraction of C, `counts` its requests over repetitions and `bound` the p99 a
/// held rung keeps (`None`: [`P99_OVER_LOW_P50`] × this engine's own low-rate p50).
pub fn hold(
    engine: &str,
    rungs: &[&RungSummary],
    fraction: impl Fn(usize) -> Option<f64>,
    counts: impl Fn(usize) -> Accounting,
    bound: Option<u64>,
) -> EngineHold {
    let (low_p50_us, held) = held_rung(rungs, bound);
    let p99_bound_us = bound.or(low_p50_us.map(|p| P99_OVER_LOW_P50.saturating_mul(p)));
    let held = held.map(|h| HeldRung {
        fraction: fraction(h.rung),
        ..h
    });
    let overload = held.as_ref().map(|h| {
        let mut o = overload(rungs, h, counts);
        if let Some(at) = o.at.as_mut() {
            at.fraction = fraction(at.rung);
        }
        o
    });
    EngineHold {
        engine: engine.to_string(),
        low_p50_us,
        p99_bound_us,
        held,
        overload,
        per_repetition: Vec::new(),
        rate_spread: None,
    }
}

/// The held-rate rule: the engine's p50 at the ladder's lowest rung, and the highest
/// rung that shed at most [`MAX_SHED_FRACTION`] of its requests in every repetition, was
/// valid and kept p99 ≤ `bound` (`None`: [`P99_OVER_LOW_P50`] × that p50).
pub fn held_rung(rungs: &[&RungSummary], bound: Option<u64>) -> (Option<u64>, Option<HeldRung>) {
    let by_rate = |a: &&&RungSummary, b: &&&RungSummary| a.offered_rate.total_cmp(&b.offered_rate);
    let Some(lowest) = rungs.iter().min_by(by_rate) else {
        return (None, None);
    };
    let Some(low_p50) = lowest.p50_us.map(|s| s.median) else {
        return (None, None);
    };
    let bound = bound.unwrap_or(P99_OVER_LOW_P50.saturating_mul(low_p50));
    let top_rate = rungs
        .iter()
        .map(|s| s.offered_rate)
        .fold(f64::MIN, f64::max);
    let held = rungs
        .iter()
        .filter(|s| s.valid && sheds_within_bound(s))
        .filter(|s| s.p99_us.is_some_and(|p| p.median <= bound))
        .max_by(by_rate)
        .map(|s| HeldRung {
            rung: s.rung,
            rate: s.offered_rate,
            fraction: None,
            p99_us: s.p99_us.map_or(0, |p| p.median),
            top: s.offered_rate >= top_rate,
        });
    (Some(low_p50), held)
}

/// Every repetition shed at most [`MAX_SHED_FRACTION`] of its requests: the most any
/// repetition shed against the fewest any offered, so no repetition can exceed it.
fn sheds_within_bound(s: &RungSummary) -> bool {
    s.shed.max as f64 <= MAX_SHED_FRACTION * s.requests.min as f64
}

/// The degradation check at the first rung offering at least twice `held`'s rate.
pub fn overload(
    rungs: &[&RungSummary],
    held: &HeldRung,
    counts: impl Fn(usize) -> Accounting,
) -> Overload {
    let target_rate = 2.0 * held.rate;
    let top_rate = rungs
        .iter()
        .map(|s| s.offered_rate)
        .fold(f64::MIN, f64::max);
    let at = rungs
        .iter()
        .filter(|s| s.offered_rate > held.rate)
        .filter(|s| s.offered_rate >= target_rate * (1.0 - RATE_TOLERANCE))
        .min_by(|a, b| a.offered_rate.total_cmp(&b.offered_rate))
        .map(|s| {
            let rss_kib = s.rss_peak_kib.map(|r| r.median);
            let held_peak_rss_kib = rungs
                .iter()
                .filter(|r| r.offered_rate <= held.rate)
                .filter_map(|r| r.rss_peak_kib.map(|p| p.median))
                .max();
            let rss_ratio = match (rss_kib, held_peak_rss_kib) {
                (Some(a), Some(b)) if b > 0 => Some(a as f64 / b as f64),
                _ => None,
            };
            let requests = counts(s.rung);
            OverloadRung {
                rung: s.rung,
                rate: s.offered_rate,
                fraction: None,
                achieved_rate: s.achieved_rate.median,
                rss_kib,
                held_peak_rss_kib,
                rss_ratio,
                rss_pass: rss_ratio.map(|r| r <= RSS_GROWTH_LIMIT),
                accounted: requests.repetitions > 0 && requests.unaccounted == 0,
                requests,
            }
        });
    Overload {
        target_rate,
        at,
        top_rate,
    }
}

/// Rung `i`'s fraction of C, for a derived ladder.
pub(crate) fn fraction_of_c(l: &BenchReport, i: usize) -> Option<f64> {
    match l.ladder.rule {
        LadderRule::Derived => l.ladder.fractions.get(i).copied(),
        LadderRule::Named => None,
    }
}

/// `1.5×C (2780/s)` for a derived ladder, `2780/s` for a named one.
pub(crate) fn at(rate_per_sec: f64, fraction: Option<f64>) -> String {
    match fraction {
        Some(f) => format!("{f}×C ({}/s)", rate(rate_per_sec)),
        None => format!("{}/s", rate(rate_per_sec)),
    }
}

fn pass_word(pass: bool) -> &'static str {
    if pass { "PASS" } else { "FAIL" }
}

/// One run's lines: the rung each engine held and what it did under twice that.
pub fn render(holds: &[EngineHold]) -> String {
    let mut out = String::new();
    if holds.is_empty() {
        return out;
    }
    let width = holds.iter().map(|h| h.engine.len()).max().unwrap_or(0);
    let _ = writeln!(out, "\n{HELD_LABEL}:");
    for h in holds {
        let bound = h.p99_bound_us.map_or("-".to_string(), micros);
        let line = match (&h.held, h.low_p50_us) {
            (_, None) => "no p50 at the lowest rung: no rung can be held".to_string(),
            (None, Some(p50)) => format!(
                "holds no rung: none shed at most 0.1%, was valid and had a reportable p99 ≤ {bound} (own low-rate p50 {})",
                micros(p50)
            ),
            (Some(r), Some(p50)) => format!(
                "{}: p99 {} ≤ {bound} (own low-rate p50 {}){}{}",
                at(r.rate, r.fraction),
                micros(r.p99_us),
                micros(p50),
                if r.top {
                    " (the top rung: it may hold more)"
                } else {
                    ""
                },
                repetitions_note(h)
            ),
        };
        let _ = writeln!(out, "  {:width$}  {line}", h.engine);
    }
    let _ = writeln!(out, "{OVERLOAD_LABEL}:");
    for h in holds {
        let line = match &h.overload {
            None => "no rung held: nothing to check".to_string(),
            Some(o) => match &o.at {
                None => format!(
                    "the ladder does not reach 2 × the held rate ({}/s; top rung {}/s)",
                    rate(o.target_rate),
                    rate(o.top_rate)
                ),
                Some(a) => overload_line(a),
            },
        };
        let _ = writeln!(out, "  {:width$}  {line}", h.engine);
    }
    out
}

fn overload_line(a: &OverloadRung) -> String {
    let rss = match (a.rss_kib, a.held_peak_rss_kib, a.rss_ratio, a.rss_pass) {
        (Some(now), Some(before), Some(ratio), Some(pass)) => format!(
            "RSS {} against {} = {ratio:.2}× {}",
            kib(now),
            kib(before),
            pass_word(pass)
        ),
        _ => "RSS not sampled".to_string(),
    };
    let q = &a.requests;
    let mut counts = format!(
        "{} offered = {} completed + {} shed + {} failed",
        q.offered, q.completed, q.shed, q.failed
    );
    if q.unaccounted > 0 {
        let _ = write!(counts, ", {} unaccounted", q.unaccounted);
    }
    if q.repetitions > 1 {
        let _ = write!(counts, " (over {} repetitions)", q.repetitions);
    }
    let verdict = match a.rss_pass {
        None => "degrades: not shown (no RSS)",
        Some(_) if a.pass() => "degrades: PASS",
        Some(_) => "degrades: FAIL",
    };
    format!(
        "at {}: {rss}; {counts} (accounted: {}); completed {}/s; {verdict}",
        at(a.rate, a.fraction),
        pass_word(a.accounted),
        rate(a.achieved_rate),
    )
}

/// `; by repetition 2780 [1390–2780]/s, held in 3 of 3`, with several repetitions.
fn repetitions_note(h: &EngineHold) -> String {
    if h.per_repetition.len() < 2 {
        return String::new();
    }
    let held = h.per_repetition.iter().flatten().count();
    let spread = h.rate_spread.as_ref().map_or("-".to_string(), |s| {
        fmt_spread(s, |v| format!("{}/s", rate(v)))
    });
    format!(
        "; repetition by repetition {spread}, held in {held} of {}",
        h.per_repetition.len()
    )
}

/// Several runs' lines: per engine, where it held and, under twice that, the median
/// [min–max] RSS ratio and shed count, and in how many runs each part passed.
pub fn render_runs(runs: &[&[EngineHold]]) -> String {
    let mut out = String::new();
    let mut names: Vec<&str> = Vec::new();
    for h in runs.iter().flat_map(|r| r.iter()) {
        if !names.contains(&h.engine.as_str()) {
            names.push(&h.engine);
        }
    }
    if names.is_empty() {
        return out;
    }
    let n = runs.len();
    let width = names.iter().map(|e| e.len()).max().unwrap_or(0);
    let _ = writeln!(out, "\n{HELD_LABEL}, run by run:");
    for name in &names {
        let each: Vec<String> = runs
            .iter()
            .map(|r| match r.iter().find(|h| h.engine == *name) {
                None => "-".to_string(),
                Some(EngineHold { held: None, .. }) => "none".to_string(),
                Some(EngineHold { held: Some(h), .. }) => match h.fraction {
                    Some(f) => format!("{f}×C"),
                    None => format!("{}/s", rate(h.rate)),
                },
            })
            .collect();
        let _ = writeln!(out, "  {name:width$}  {}", each.join(", "));
    }
    let _ = writeln!(out, "{OVERLOAD_LABEL}, over {n} runs:");
    for name in &names {
        let at: Vec<&OverloadRung> = runs
            .iter()
            .filter_map(|r| r.iter().find(|h| h.engine == *name))
            .filter_map(|h| h.overload.as_ref()?.at.as_ref())
            .collect();
        if at.is_empty() {
            let _ = writeln!(
                out,
                "  {name:width$}  the ladder reaches 2 × the held rate in no run"
            );
            continue;
        }
        let ratios: Vec<f64> = at.iter().filter_map(|a| a.rss_ratio).collect();
        let rss = spread(&ratios).map_or("RSS not sampled".to_string(), |s| {
            format!(
                "RSS ratio {}, ≤ {RSS_GROWTH_LIMIT:.2} in {} of {}",
                fmt_spread(&s, |v| format!("{v:.2}×")),
                at.iter().filter(|a| a.rss_pass == Some(true)).count(),
                at.len()
            )
        });
        let shed: Vec<f64> = at.iter().map(|a| a.requests.shed as f64).collect();
        let shed = spread(&shed).map_or("-".to_string(), |s| fmt_spread(&s, |v| format!("{v:.0}")));
        let _ = writeln!(
            out,
            "  {name:width$}  reached in {} of {n} runs; {rss}; shed {shed}; every request accounted in {} of {}; degrades (both) in {} of {}",
            at.len(),
            at.iter().filter(|a| a.accounted).count(),
            at.len(),
            at.iter().filter(|a| a.pass()).count(),
            at.len()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use heddle_eval::bench::stats::Spread;

    /// One engine at one rung, one repetition: what the rules read, the rest zero.
    fn rung(i: usize, rate: f64, shed: u64, p50: u64, p99: Option<u64>, rss: u64) -> RungSummary {
        RungSummary {
            engine: "e".to_string(),
            rung: i,
            offered_rate: rate,
            repetitions: 1,
            overloaded: shed > 0,
            valid: true,
            disturbed: false,
            achieved_rate: Spread::single(rate),
            requests: Spread::single(10_000),
            shed: Spread::single(shed),
            duration_secs: Spread::single(10_000.0 / rate),
            p50_us: Some(Spread::single(p50)),
            p90_us: None,
            p99_us: p99.map(Spread::single),
            p999_us: None,
            max_us: None,
            cpu_user_secs: Spread::single(0.0),
            cpu_system_secs: Spread::single(0.0),
            rss_peak_kib: Some(Spread::single(rss)),
            rss_change_kib: None,
            rss_anon_peak_kib: None,
            rss_file_peak_kib: None,
            minor_faults: Spread::single(0),
            major_faults: Spread::single(0),
            voluntary_switches: Spread::single(0),
            involuntary_switches: Spread::single(0),
            lag_p99_us: None,
            lag_max_us: None,
            cpu_p50_us: None,
            cpu_p90_us: None,
            cpu_p99_us: None,
            client_p50_us: None,
            client_p99_us: None,
            server_p50_us: None,
            server_p99_us: None,
            added_p50_us: None,
            added_p99_us: None,
            server_clock: None,
            encode_p50_us: None,
            encode_p99_us: None,
            search_p50_us: None,
            search_p99_us: None,
            text_p50_us: None,
            text_p99_us: None,
            vector_p50_us: None,
            vector_p99_us: None,
            fusion_p50_us: None,
            fusion_p99_us: None,
            batched: None,
        }
    }

    fn refs(v: &[RungSummary]) -> Vec<&RungSummary> {
        v.iter().collect()
    }

    fn held_rate(v: &[RungSummary]) -> Option<f64> {
        held_rung(&refs(v), None).1.map(|h| h.rate)
    }

    /// Low-rate p50 100µs; rungs at 100, 200, 400/s that all hold.
    fn clean() -> Vec<RungSummary> {
        vec![
            rung(0, 100.0, 0, 100, Some(300), 1000),
            rung(1, 200.0, 0, 110, Some(500), 1000),
            rung(2, 400.0, 0, 120, Some(900), 1000),
        ]
    }

    fn balanced(_: usize) -> Accounting {
        Accounting::from_counts(10_000, 6_000, 4_000, 0)
    }

    /// Two engines, the first faster at every rung, p50 and p99: against its own
    /// low-rate p50 it would hold nothing while the slower one holds 200/s; against one
    /// bound (the slower engine's), it holds as high.
    #[test]
    fn every_engine_is_held_to_the_slower_engines_bound() {
        let fast = [
            rung(0, 100.0, 0, 100, Some(1_200), 1_000),
            rung(1, 200.0, 0, 150, Some(1_500), 1_000),
            rung(2, 400.0, 5, 900, Some(9_000), 1_000),
        ];
        let slow = [
            rung(0, 100.0, 0, 200, Some(1_900), 1_000),
            rung(1, 200.0, 0, 300, Some(2_000), 1_000),
            rung(2, 400.0, 5, 1_800, Some(18_000), 1_000),
        ];
        let own = |v: &[RungSummary]| held_rung(&refs(v), None).1.map(|h| h.rate);
        assert_eq!((own(&fast), own(&slow)), (None, Some(200.0)));
        let bound = common_bound(&[refs(&fast), refs(&slow)]);
        assert_eq!(bound, Some(2_000));
        let rate = |v: &[RungSummary]| held_rung(&refs(v), bound).1.map(|h| h.rate);
        assert_eq!((rate(&fast), rate(&slow)), (Some(200.0), Some(200.0)));
        let h = hold("fast", &refs(&fast), |_| None, balanced, bound);
        assert_eq!(h.p99_bound_us, Some(2_000));
    }

    #[test]
    fn the_held_rate_is_the_highest_rung_that_sheds_nothing_within_10x_the_low_p50() {
        let v = clean();
        let (low, held) = held_rung(&refs(&v), None);
        assert_eq!(low, Some(100), "the p50 of the lowest rung");
        let held = held.unwrap();
        assert_eq!((held.rung, held.rate, held.p99_us), (2, 400.0, 900));
        assert!(held.top);
        // Order of the summaries does not matter: the lowest rung is the lowest rate.
        let mut r = clean();
        r.reverse();
        assert_eq!(held_rung(&refs(&r), None).0, Some(100));
        assert_eq!(held_rate(&r), Some(400.0));
    }

    #[test]
    fn a_rung_that_shed_more_than_a_thousandth_is_not_held_and_exactly_that_is() {
        let mut v = clean();
        v[2] = rung(2, 400.0, 10, 120, Some(900), 1000); // 10 of 10,000
        assert_eq!(held_rate(&v), Some(400.0));
        v[2] = rung(2, 400.0, 11, 120, Some(900), 1000);
        assert_eq!(held_rate(&v), Some(200.0));
        // Past the bound in one repetition only (the median is 0) is past it.
        let mut v = clean();
        v[2].shed = Spread {
            median: 0,
            min: 0,
            max: 11,
        };
        v[2].overloaded = true;
        assert_eq!(held_rate(&v), Some(200.0));
        // Issue 15: 2 of 10,000 shed at ½ C no longer halves the held rate.
        v[2].shed.max = 2;
        assert_eq!(held_rate(&v), Some(400.0));
    }

    #[test]
    fn a_p99_past_10x_the_low_rate_p50_is_not_held_and_exactly_10x_is() {
        let mut v = clean();
        v[2].p99_us = Some(Spread::single(1_010)); // 10.1 × 100µs
        assert_eq!(held_rate(&v), Some(200.0));
        v[2].p99_us = Some(Spread::single(1_000)); // 10 × 100µs
        assert_eq!(held_rate(&v), Some(400.0));
        // The bound is the lowest rung's p50, not the rung's own.
        v[2].p50_us = Some(Spread::single(1_000));
        v[2].p99_us = Some(Spread::single(1_500));
        assert_eq!(held_rate(&v), Some(200.0));
    }

    #[test]
    fn an_invalid_rung_or_one_without_a_p99_is_not_held() {
        let mut v = clean();
        v[2].valid = false;
        assert_eq!(held_rate(&v), Some(200.0));
        let mut v = clean();
        v[2].p99_us = None;
        assert_eq!(held_rate(&v), Some(200.0));
    }

    #[test]
    fn an_engine_that_holds_no_rung_says_so() {
        let v = vec![
            rung(0, 100.0, 11, 100, Some(300), 1000),
            rung(1, 200.0, 90, 100, Some(2_000), 1000),
        ];
        let h = hold("e", &refs(&v), |_| None, balanced, None);
        assert_eq!(
            (h.low_p50_us, &h.held, &h.overload),
            (Some(100), &None, &None)
        );
        let text = render(&[h]);
        assert!(text.contains("holds no rung"), "{text}");
        assert!(text.contains("no rung held: nothing to check"), "{text}");
        let mut v = v;
        v[0].p50_us = None;
        assert_eq!(held_rung(&refs(&v), None), (None, None));
    }

    /// Held at 200/s; rungs at 390 (under 2×), 400 (at 2×) and 800/s above it.
    fn ladder(rss_at_2x: u64) -> Vec<RungSummary> {
        vec![
            rung(0, 100.0, 0, 100, Some(300), 900),
            rung(1, 200.0, 0, 100, Some(500), 1000),
            rung(2, 390.0, 5, 100, Some(5_000), 5000),
            rung(3, 400.0, 4_000, 100, None, rss_at_2x),
            rung(4, 800.0, 9_000, 100, None, 9000),
        ]
    }

    #[test]
    fn under_twice_the_held_rate_rss_may_grow_10_percent_and_no_more() {
        for (rss, pass) in [(1100, true), (1110, false), (1000, true)] {
            let v = ladder(rss);
            let h = hold("e", &refs(&v), |_| None, balanced, None);
            assert_eq!(h.held.as_ref().unwrap().rate, 200.0);
            let o = h.overload.unwrap();
            assert_eq!(o.target_rate, 400.0);
            let at = o.at.unwrap();
            assert_eq!(
                at.rung, 3,
                "the rung at twice the held rate, not 390/s or 800/s"
            );
            assert_eq!(
                at.held_peak_rss_kib,
                Some(1000),
                "the peak at or below held"
            );
            assert_eq!(at.rss_pass, Some(pass), "RSS {rss} against 1000");
            assert_eq!(at.pass(), pass);
        }
    }

    #[test]
    fn twice_the_held_rate_allows_for_rounded_rates_and_else_takes_the_next_rung_up() {
        // C = 1,847/s: 0.75 C rounds up to 1,390/s (held), 1.5 C down to 2,770/s, 0.4%
        // under twice 1,390.
        let v = vec![
            rung(0, 462.0, 0, 100, Some(300), 1000),
            rung(1, 1_390.0, 0, 100, Some(500), 1000),
            rung(2, 2_770.0, 50, 100, None, 1000),
        ];
        let h = hold("e", &refs(&v), |_| None, balanced, None);
        assert_eq!(h.overload.unwrap().at.map(|a| a.rung), Some(2));
        // 1.9× is not twice: with nothing above, the ladder does not reach it.
        let v = vec![
            rung(0, 100.0, 0, 100, Some(300), 1000),
            rung(1, 190.0, 0, 100, Some(500), 1000),
            rung(2, 361.0, 50, 100, None, 1000),
        ];
        let h = hold("e", &refs(&v), |_| None, balanced, None);
        let o = h.overload.clone().unwrap();
        assert_eq!((o.at, o.target_rate, o.top_rate), (None, 380.0, 361.0));
        let text = render(&[h]);
        assert!(
            text.contains("the ladder does not reach 2 × the held rate (380/s; top rung 361/s)"),
            "{text}"
        );
    }

    #[test]
    fn every_request_offered_under_twice_the_held_rate_is_accounted_for() {
        let v = ladder(1000);
        let check = |counts: Accounting| {
            let h = hold("e", &refs(&v), |_| None, |_| counts, None);
            h.overload.unwrap().at.unwrap()
        };
        let at = check(Accounting::from_counts(10_000, 6_000, 3_999, 1));
        assert!(at.accounted && at.pass());
        // One request neither completed, shed nor failed (still queued, say).
        let at = check(Accounting::from_counts(10_000, 6_000, 3_999, 0));
        assert_eq!(at.requests.unaccounted, 1);
        assert!(!at.accounted && !at.pass());
        // Repetitions that err both ways do not cancel out.
        let mut two = Accounting::from_counts(10_000, 6_001, 4_000, 0);
        two.add(&Accounting::from_counts(10_000, 5_999, 4_000, 0));
        let at = check(two);
        assert_eq!((at.requests.repetitions, at.requests.unaccounted), (2, 2));
        assert!(!at.accounted);
        // No repetition found: nothing is shown to be accounted for.
        assert!(!check(Accounting::default()).accounted);
    }

    #[test]
    fn the_lines_name_the_rung_the_figures_and_the_verdicts() {
        let v = ladder(1050);
        let h = hold(
            "heddle",
            &refs(&v),
            |i| Some([0.25, 0.5, 0.975, 1.0, 2.0][i]),
            balanced,
            None,
        );
        let text = render(std::slice::from_ref(&h));
        for needle in [
            HELD_LABEL,
            "heddle  0.5×C (200/s): p99 500µs ≤ 1.00ms (own low-rate p50 100µs)",
            OVERLOAD_LABEL,
            "at 1×C (400/s): RSS 1.0M against 1.0M = 1.05× PASS",
            "10000 offered = 6000 completed + 4000 shed + 0 failed (accounted: PASS)",
            "degrades: PASS",
        ] {
            assert!(text.contains(needle), "lacks {needle:?}:\n{text}");
        }
        let failing = hold("heddle", &refs(&ladder(1200)), |_| None, balanced, None);
        let text = render(std::slice::from_ref(&failing));
        for needle in [
            "at 400/s: RSS 1.2M against 1.0M = 1.20× FAIL",
            "degrades: FAIL",
        ] {
            assert!(text.contains(needle), "lacks {needle:?}:\n{text}");
        }
        let runs: Vec<&[EngineHold]> =
            vec![std::slice::from_ref(&h), std::slice::from_ref(&failing)];
        let text = render_runs(&runs);
        for needle in [
            "heddle  0.5×C, 200/s",
            "reached in 2 of 2 runs; RSS ratio 1.05× [1.05×–1.20×], ≤ 1.10 in 1 of 2",
            "every request accounted in 2 of 2; degrades (both) in 1 of 2",
        ] {
            assert!(text.contains(needle), "lacks {needle:?}:\n{text}");
        }
    }
}
