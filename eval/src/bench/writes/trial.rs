//! One trial of the writes arm: open-loop reads at a fixed rate, and a writer thread that
//! adds and commits a batch a third of the way through the schedule (and, with
//! `--commit-every`, every so often after), on an index the caller has already copied,
//! opened and warmed. Reads are then split by due time: inside a write, or not.

use std::thread;
use std::time::{Duration, Instant};

use super::batches::{ALL_MARKER, Batch};
use super::model::{CommitRecord, Phase, ReadClass, ReadSample, TrialRun};
use crate::bench::backend::Backend;
use crate::bench::loadgen::{
    LiveRung, Outcome, RequestTimes, Schedule, open_loop_origin, run_open_loop_from,
};
use crate::bench::probe::{CpuReading, Measured, Signals, disturbances, load_average, measure};
use crate::bench::queries::QueryCycle;
use crate::bench::report::{LagSummary, Settings};
use crate::bench::stats::{LatencyHistogram, LatencySummary, P50, P99};

/// The first write starts this far through the schedule (by time): reads before it show
/// the engine undisturbed, reads after it show the aftermath.
pub const FIRST_WRITE_FRACTION: f64 = 1.0 / 3.0;

/// What to run.
#[derive(Debug, Clone)]
pub struct TrialSpec<'a> {
    pub engine: &'a str,
    /// Names the trial in progress lines.
    pub label: &'a str,
    pub rate: f64,
    pub requests: u64,
    /// Seeds Poisson arrivals.
    pub seed: u64,
    /// Commit a further batch this often after the first, while reads are still due.
    pub commit_every: Option<Duration>,
}

impl TrialSpec<'_> {
    pub fn schedule(&self, settings: &Settings) -> Schedule {
        Schedule::new(
            settings.arrivals,
            self.rate,
            self.requests as usize,
            self.seed,
        )
    }
}

/// When the first write starts, in nanoseconds from the schedule's start.
pub fn first_write_ns(schedule: &Schedule) -> u64 {
    let last = schedule.due_ns().last().copied().unwrap_or(0);
    (last as f64 * FIRST_WRITE_FRACTION).round() as u64
}

/// How many batches the writer may start: the first, then one every `every` while the
/// schedule still has reads due.
pub fn batches_needed(schedule: &Schedule, every: Option<Duration>) -> usize {
    let Some(every) = every.filter(|e| !e.is_zero()) else {
        return 1;
    };
    let last = schedule.due_ns().last().copied().unwrap_or(0);
    let span = last.saturating_sub(first_write_ns(schedule));
    1 + (span.saturating_sub(1) / every.as_nanos().max(1) as u64) as usize
}

/// Runs one trial on `backend`, which must have been opened for writes.
pub fn run_trial(
    backend: &dyn Backend,
    spec: &TrialSpec<'_>,
    settings: &Settings,
    queries: &QueryCycle,
    batches: &[Batch],
) -> TrialRun {
    let schedule = spec.schedule(settings);
    let last_due = schedule.due_ns().last().copied().unwrap_or(0);
    let first_write = first_write_ns(&schedule);
    let live = LiveRung::logged(settings.threads, settings.inflight, spec.requests);
    crate::note!(
        "bench: {} {} @ {}/s: {} requests over {:.1} s; first write at {:.1} s",
        spec.engine,
        spec.label,
        spec.rate,
        spec.requests,
        last_due as f64 / 1e9,
        first_write as f64 / 1e9
    );
    let load_start = load_average();
    let cpu_start = CpuReading::now();
    let origin = open_loop_origin();
    let progress = || {
        let p = live.progress().line();
        crate::note!("bench: {} {}: {p}", spec.engine, spec.label);
    };
    let ((outcome, (commits, writer_error)), probes) = measure(progress, || {
        thread::scope(|s| {
            let writer = s.spawn(move || {
                let mut commits = Vec::new();
                let plan = WritePlan {
                    origin,
                    first_ns: first_write,
                    every: spec.commit_every,
                    last_due_ns: last_due,
                };
                let error = write(backend, batches, &plan, spec, &mut commits).err();
                (commits, error.map(|e| format!("{e:#}")))
            });
            let outcome =
                run_open_loop_from(backend, &schedule, queries, settings.k, &live, origin);
            let written = writer.join().expect("the writer thread panicked");
            (outcome, written)
        })
    });
    let Measured {
        process,
        memory,
        suspended,
    } = probes;
    let cpu_end = CpuReading::now();
    let others_cpu = cpu_end.others_since(&cpu_start);
    let steal_cpu = cpu_end.steal_since(&cpu_start);
    let load_end = load_average();

    let written: usize = commits.iter().map(|c| c.docs).sum();
    let all_visible_at_end = match backend.search(ALL_MARKER, written + 1) {
        Ok(hits) => hits.len() == written,
        Err(_) => false,
    };
    let windows: Vec<(u64, u64)> = commits
        .iter()
        .map(|c| (secs_to_ns(c.start_secs), secs_to_ns(c.end_secs)))
        .collect();
    let Split {
        in_commit,
        outside,
        after,
    } = split(&schedule, &outcome, &windows);
    let samples = samples(&outcome);
    let mut commits = commits;
    let disturbed_reasons = disturbances(&Signals {
        lag_p99_us: outcome.dispatch.lag.nearest_rank(P99),
        latency_p50_us: outcome.completions.latency.nearest_rank(P50),
        max_lag_ratio: settings.lag_bound(),
        suspended,
        others_cpu,
        max_others_cpu: settings.others_bound(),
        shed: 0,
        calibration: false,
    });
    for c in &mut commits {
        c.disturbed_reasons = window_disturbances(c, settings);
    }
    TrialRun {
        requests: spec.requests,
        duration_secs: outcome.elapsed_ns as f64 / 1e9,
        commits,
        writer_error,
        in_commit,
        outside,
        after,
        dispatcher_lag_us: LagSummary {
            p99: outcome.dispatch.lag.reported(P99),
            max: outcome.dispatch.lag.max_micros(),
        },
        process,
        memory,
        suspended_secs: suspended.map(|d| d.as_secs_f64()),
        all_visible_at_end,
        first_read_error: outcome.completions.first_error.clone(),
        load_start,
        load_end,
        others_cpu,
        steal_cpu,
        samples,
        disturbed_reasons,
    }
}

/// The rules a commit's window can be judged by on its own: other processes' CPU over
/// the window. (The dispatcher's lag and a suspend are judged over the whole trial:
/// its lag is not kept request by request.) A window shorter than a scheduler tick
/// reads other processes' CPU too coarsely to judge and is left undisturbed.
pub fn window_disturbances(c: &CommitRecord, settings: &Settings) -> Vec<String> {
    if c.wall_secs < 0.05 {
        return Vec::new();
    }
    disturbances(&Signals {
        others_cpu: c.others_cpu,
        max_others_cpu: settings.others_bound(),
        max_lag_ratio: settings.lag_bound(),
        ..Signals::default()
    })
}

/// Every completed read as `(due, latency)` in microseconds, in due order (the log is in
/// completion order).
pub fn samples(outcome: &Outcome) -> Vec<ReadSample> {
    let log: &[RequestTimes] = outcome.completions.log.as_deref().unwrap_or_default();
    let mut v: Vec<ReadSample> = log
        .iter()
        .filter(|r| r.ok)
        .map(|r| {
            ReadSample(
                r.due_ns / 1_000,
                r.done_ns.saturating_sub(r.due_ns).div_ceil(1_000),
            )
        })
        .collect();
    v.sort_unstable();
    v
}

struct WritePlan {
    origin: Instant,
    first_ns: u64,
    every: Option<Duration>,
    last_due_ns: u64,
}

/// The writer thread: each batch added and committed at its time, then searched for by
/// the same thread to check that the commit is visible as soon as it returns.
fn write(
    backend: &dyn Backend,
    batches: &[Batch],
    plan: &WritePlan,
    spec: &TrialSpec<'_>,
    commits: &mut Vec<CommitRecord>,
) -> anyhow::Result<()> {
    let since = |t: Instant| t.saturating_duration_since(plan.origin).as_nanos() as u64;
    for (b, batch) in batches.iter().enumerate() {
        let due = match (b, plan.every) {
            (0, _) => plan.first_ns,
            (_, Some(every)) => plan.first_ns + b as u64 * every.as_nanos() as u64,
            (_, None) => break,
        };
        if b > 0 && due >= plan.last_due_ns {
            break;
        }
        let at = plan.origin + Duration::from_nanos(due);
        let now = Instant::now();
        if at > now {
            thread::sleep(at - now);
        }
        let cpu_start = CpuReading::now();
        let start = Instant::now();
        backend.add_documents(&batch.docs)?;
        let added = Instant::now();
        let report = backend.commit()?;
        let end = Instant::now();
        let others_cpu = CpuReading::now().others_since(&cpu_start);
        let hits = backend.search(&batch.marker, batch.docs.len() + 1)?;
        let visible_hits = hits.len();
        let visible = batch.is_exactly(hits);
        let checked = Instant::now();
        let mut phases = vec![Phase {
            name: "add".to_string(),
            secs: (added - start).as_secs_f64(),
        }];
        phases.extend(report.phases.iter().map(|(name, d)| Phase {
            name: name.clone(),
            secs: d.as_secs_f64(),
        }));
        let record = CommitRecord {
            batch: b,
            docs: batch.docs.len(),
            start_secs: since(start) as f64 / 1e9,
            end_secs: since(end) as f64 / 1e9,
            wall_secs: (end - start).as_secs_f64(),
            phases,
            exclusive_ns: report.exclusive.map(|d| d.as_nanos() as u64),
            visible_hits,
            visible,
            check_secs: (checked - end).as_secs_f64(),
            others_cpu,
            disturbed_reasons: Vec::new(),
        };
        crate::note!(
            "bench: {} {}: commit {} of {} documents in {:.3} s{}",
            spec.engine,
            spec.label,
            b + 1,
            record.docs,
            record.wall_secs,
            if visible {
                String::new()
            } else {
                format!(
                    "; NOT VISIBLE: {visible_hits} hits for {} documents",
                    record.docs
                )
            }
        );
        commits.push(record);
    }
    Ok(())
}

fn secs_to_ns(secs: f64) -> u64 {
    (secs * 1e9).round() as u64
}

/// A trial's reads by due time.
#[derive(Debug, Clone)]
pub struct Split {
    /// Due inside a write window.
    pub in_commit: ReadClass,
    /// Every other read.
    pub outside: ReadClass,
    /// The part of `outside` due after the first window opened: reads beside the
    /// commits' aftermath (a new segment to search, memory not yet returned), which
    /// reads before the first write do not see.
    pub after: ReadClass,
}

/// Splits a trial's reads by due time: inside any window `[start, end)`, or not. A
/// request missing from the log was shed.
pub fn split(schedule: &Schedule, outcome: &Outcome, windows: &[(u64, u64)]) -> Split {
    let first = windows.iter().map(|w| w.0).min().unwrap_or(u64::MAX);
    // 0: before the first write, 1: in a write, 2: outside, after the first write began.
    let class = |due: u64| {
        if windows.iter().any(|&(s, e)| s <= due && due < e) {
            1
        } else if due >= first {
            2
        } else {
            0
        }
    };
    let mut tallies: [ClassTally; 3] = Default::default();
    let due_ns = schedule.due_ns();
    for &due in due_ns {
        tallies[class(due)].due += 1;
    }
    let mut seen = vec![false; due_ns.len()];
    let log: &[RequestTimes] = outcome.completions.log.as_deref().unwrap_or_default();
    for r in log {
        seen[r.index as usize] = true;
        let t = &mut tallies[class(r.due_ns)];
        if r.ok {
            t.latency.record_nanos(r.done_ns.saturating_sub(r.due_ns));
            t.service.record_nanos(r.done_ns.saturating_sub(r.start_ns));
            if let Some(cpu) = r.cpu_ns {
                t.cpu.record_nanos(cpu);
            }
            if let Some(server) = r.server_us {
                t.server.record_micros(server);
                let latency_us = r.done_ns.saturating_sub(r.due_ns).div_ceil(1_000);
                t.added.record_micros(latency_us.saturating_sub(server));
            }
        } else {
            t.errors += 1;
        }
    }
    for (i, &due) in due_ns.iter().enumerate() {
        if !seen[i] {
            tallies[class(due)].shed += 1;
        }
    }
    let [before, in_commit, after] = tallies;
    let mut outside = before;
    outside.add(&after);
    Split {
        in_commit: in_commit.into_class(),
        outside: outside.into_class(),
        after: after.into_class(),
    }
}

#[derive(Default)]
struct ClassTally {
    due: u64,
    shed: u64,
    errors: u64,
    latency: LatencyHistogram,
    service: LatencyHistogram,
    cpu: LatencyHistogram,
    server: LatencyHistogram,
    added: LatencyHistogram,
}

impl ClassTally {
    fn add(&mut self, other: &ClassTally) {
        self.due += other.due;
        self.shed += other.shed;
        self.errors += other.errors;
        self.latency.add(&other.latency);
        self.service.add(&other.service);
        self.cpu.add(&other.cpu);
        self.server.add(&other.server);
        self.added.add(&other.added);
    }

    fn into_class(self) -> ReadClass {
        ReadClass {
            due: self.due,
            completed: self.latency.len(),
            shed: self.shed,
            errors: self.errors,
            latency_us: LatencySummary::of(&self.latency),
            service_us: LatencySummary::of(&self.service),
            cpu_us: (!self.cpu.is_empty()).then(|| LatencySummary::of(&self.cpu)),
            server_us: (!self.server.is_empty()).then(|| LatencySummary::of(&self.server)),
            added_us: (!self.added.is_empty()).then(|| LatencySummary::of(&self.added)),
            latency_histogram: self.latency.dump(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::loadgen::{Arrivals, CompletionTally, DispatchTally};

    #[test]
    fn the_first_write_is_a_third_of_the_way_and_batches_fill_the_rest() {
        let s = Schedule::new(Arrivals::Uniform, 100.0, 901, 0); // 0 .. 9 s
        assert_eq!(first_write_ns(&s), 3_000_000_000);
        assert_eq!(batches_needed(&s, None), 1);
        assert_eq!(batches_needed(&s, Some(Duration::from_secs(2))), 3); // 3, 5, 7 s
        assert_eq!(batches_needed(&s, Some(Duration::from_secs(3))), 2); // 3, 6 s; 9 s is the end
    }

    #[test]
    fn a_commit_window_is_judged_by_other_processes_cpu_over_it() {
        let settings_bound = |cores: usize| crate::bench::report::Settings {
            index: String::new(),
            target: None,
            queries: String::new(),
            query_count: 1,
            arrivals: Arrivals::Uniform,
            threads: 2,
            inflight: 8,
            cores,
            samples: 1,
            min_duration_secs: 0.0,
            k: 10,
            k1: None,
            b: None,
            seed: 0,
            repeat: 1,
            baseline: None,
            label: None,
            ranking: None,
            max_others_cpu: None,
            max_lag_ratio: None,
        };
        let window = |others: Option<f64>, wall_secs: f64| CommitRecord {
            batch: 0,
            docs: 1,
            start_secs: 1.0,
            end_secs: 1.0 + wall_secs,
            wall_secs,
            phases: Vec::new(),
            exclusive_ns: None,
            visible_hits: 1,
            visible: true,
            check_secs: 0.0,
            others_cpu: others,
            disturbed_reasons: Vec::new(),
        };
        let s = settings_bound(2); // at most 0.5 cores for others
        let busy = window_disturbances(&window(Some(1.84), 0.4), &s);
        assert_eq!(busy.len(), 1);
        assert!(
            busy[0].contains("other processes used 1.84 cores"),
            "{busy:?}"
        );
        assert!(window_disturbances(&window(Some(0.5), 0.4), &s).is_empty());
        assert!(window_disturbances(&window(None, 0.4), &s).is_empty());
        // Too short to read other processes' CPU over: not judged.
        assert!(window_disturbances(&window(Some(1.84), 0.01), &s).is_empty());
    }

    #[test]
    fn reads_split_by_due_time_and_missing_ones_were_shed() {
        let s = Schedule::new(Arrivals::Uniform, 1_000.0, 10, 0); // due 0, 1, … 9 ms
        let mut c = CompletionTally {
            log: Some(Vec::new()),
            ..CompletionTally::default()
        };
        for i in 0..10u64 {
            let due = i * 1_000_000;
            if i == 4 || i == 8 {
                continue; // shed
            }
            let ok = i != 6;
            let done = due
                + if (3..6).contains(&i) {
                    2_000_000
                } else {
                    1_000_000
                };
            c.log(RequestTimes {
                index: i,
                due_ns: due,
                start_ns: due,
                done_ns: done,
                ok,
                server_us: None,
                cpu_ns: Some(500_000),
            });
        }
        let outcome = Outcome::new(10, c, DispatchTally::default());
        // The plot's samples: the 7 completed reads, in due order, latency in µs.
        let kept = samples(&outcome);
        assert_eq!(kept.len(), 7);
        assert_eq!((kept[4].due_us(), kept[4].latency_us()), (5_000, 2_000));
        // One write over [3 ms, 6 ms): requests 3, 4, 5 are due inside it.
        let Split {
            in_commit: inside,
            outside,
            after,
        } = split(&s, &outcome, &[(3_000_000, 6_000_000)]);
        assert_eq!((inside.due, inside.completed, inside.shed), (3, 2, 1));
        assert_eq!(inside.latency_us.max, Some(2_000)); // exact below 2,048 µs
        assert_eq!(
            (outside.due, outside.completed, outside.shed, outside.errors),
            (7, 5, 1, 1)
        );
        assert_eq!(outside.latency_us.max, Some(1_000));
        // After the window opened and outside it: requests 6 (failed) to 9 (8 shed).
        assert_eq!(
            (after.due, after.completed, after.shed, after.errors),
            (4, 2, 1, 1)
        );
    }
}
