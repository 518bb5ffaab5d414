//! Trials folded into one summary per engine and commit-thread count: every figure as
//! the median with min and max over the repetitions (docs/PERF.md, rule 6).

use super::model::{ClassSummary, PhaseSpread, ReadClass, TrialReport, TrialSummary};
use crate::bench::stats::{spread, spread_all};

/// One summary per (engine, commit threads), in the order first run.
pub fn summarise(trials: &[TrialReport]) -> Vec<TrialSummary> {
    let mut keys: Vec<(&str, usize)> = Vec::new();
    for t in trials {
        if !keys.contains(&(t.engine.as_str(), t.commit_threads)) {
            keys.push((&t.engine, t.commit_threads));
        }
    }
    keys.into_iter()
        .map(|(engine, threads)| {
            let reps: Vec<&TrialReport> = trials
                .iter()
                .filter(|t| t.engine == engine && t.commit_threads == threads)
                .collect();
            summarise_one(&reps)
        })
        .collect()
}

/// The median of one trial's commits of a figure (nearest rank, as everywhere).
fn per_trial(
    t: &TrialReport,
    get: impl Fn(&super::model::CommitRecord) -> Option<f64>,
) -> Option<f64> {
    let v: Option<Vec<f64>> = t.run.commits.iter().map(get).collect();
    spread(&v?).map(|s| s.median)
}

fn summarise_one(reps: &[&TrialReport]) -> TrialSummary {
    let first = reps[0];
    // Phase names in the order of the first commit that has them.
    let names: Vec<String> = reps
        .iter()
        .flat_map(|t| t.run.commits.first())
        .flat_map(|c| c.phases.iter().map(|p| p.name.clone()))
        .fold(Vec::new(), |mut acc, n| {
            if !acc.contains(&n) {
                acc.push(n);
            }
            acc
        });
    let phases = names
        .into_iter()
        .filter_map(|name| {
            let values: Vec<Option<f64>> = reps
                .iter()
                .map(|t| {
                    per_trial(t, |c| {
                        c.phases.iter().find(|p| p.name == name).map(|p| p.secs)
                    })
                })
                .collect();
            spread_all(&values).map(|secs| PhaseSpread { name, secs })
        })
        .collect();
    let exclusive: Vec<Option<u64>> = reps
        .iter()
        .map(|t| {
            let v: Option<Vec<u64>> = t.run.commits.iter().map(|c| c.exclusive_ns).collect();
            spread(&v?).map(|s| s.median)
        })
        .collect();
    TrialSummary {
        engine: first.engine.clone(),
        commit_threads: first.commit_threads,
        repetitions: reps.len(),
        valid: reps.iter().all(|t| t.valid),
        disturbed: reps.iter().any(|t| t.run.disturbed()),
        all_visible: reps
            .iter()
            .all(|t| t.run.all_visible_at_end && t.run.commits.iter().all(|c| c.visible)),
        commits: spread(
            &reps
                .iter()
                .map(|t| t.run.commits.len() as u64)
                .collect::<Vec<_>>(),
        )
        .expect("at least one repetition"),
        commit_wall_secs: spread_all(
            &reps
                .iter()
                .map(|t| per_trial(t, |c| Some(c.wall_secs)))
                .collect::<Vec<_>>(),
        ),
        phases,
        exclusive_ns: spread_all(&exclusive),
        in_commit: class(reps, |t| &t.run.in_commit),
        outside: class(reps, |t| &t.run.outside),
        after: class(reps, |t| &t.run.after),
        rss_change_kib: spread_all(
            &reps
                .iter()
                .map(|t| t.run.memory.vm_rss.map(|m| m.change))
                .collect::<Vec<_>>(),
        ),
        rss_peak_kib: spread_all(
            &reps
                .iter()
                .map(|t| t.run.memory.vm_rss.map(|m| m.peak))
                .collect::<Vec<_>>(),
        ),
    }
}

fn class(reps: &[&TrialReport], get: fn(&TrialReport) -> &ReadClass) -> ClassSummary {
    let u = |f: fn(&ReadClass) -> u64| {
        spread(&reps.iter().map(|t| f(get(t))).collect::<Vec<_>>())
            .expect("at least one repetition")
    };
    let o = |f: fn(&ReadClass) -> Option<u64>| {
        spread_all(&reps.iter().map(|t| f(get(t))).collect::<Vec<_>>())
    };
    ClassSummary {
        due: u(|c| c.due),
        shed: u(|c| c.shed),
        p50_us: o(|c| c.latency_us.p50),
        p90_us: o(|c| c.latency_us.p90),
        p99_us: o(|c| c.latency_us.p99),
        max_us: o(|c| c.latency_us.max),
    }
}
