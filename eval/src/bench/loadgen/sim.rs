//! The open-loop rung on a virtual clock: a discrete-event simulation of the dispatcher
//! and its workers, sharing their rules, for exact tests of the instrument.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Admission, CompletionTally, DispatchTally, Outcome, Schedule};

/// Simulates [`run_open_loop`](super::run_open_loop) with `workers` workers and an
/// in-flight cap of `inflight`. `finish(i, start_ns)` says when request `i`, started at
/// `start_ns`, completes (e.g. [`ServiceModel::finish_ns`]).
///
/// The simulated dispatcher is never late. Workers take requests first come, first
/// served, each from the queue as soon as it is free, as the real pool does. A
/// completion at the same instant as a due time is counted first (the real system has no
/// exact ties).
///
/// [`ServiceModel::finish_ns`]: crate::bench::backend::synthetic::ServiceModel::finish_ns
pub fn simulate_open_loop(
    schedule: &Schedule,
    workers: usize,
    inflight: usize,
    mut finish: impl FnMut(u64, u64) -> u64,
) -> Outcome {
    assert!(workers >= 1, "at least one worker");
    let admission = Admission::new(inflight);
    let mut free_at: BinaryHeap<Reverse<u64>> = (0..workers).map(|_| Reverse(0)).collect();
    let mut unfinished: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    let mut completions = CompletionTally::default();
    let mut dispatch = DispatchTally::default();
    for (i, &due) in schedule.due_ns().iter().enumerate() {
        while unfinished.peek().is_some_and(|&Reverse(t)| t <= due) {
            unfinished.pop();
            admission.release();
        }
        let admitted = admission.try_admit();
        dispatch.record_issue(due, due, admitted);
        if admitted {
            let Reverse(free) = free_at.pop().expect("one entry per worker");
            let start = free.max(due);
            let done = finish(i as u64, start);
            free_at.push(Reverse(done));
            unfinished.push(Reverse(done));
            completions.record(due, start, done);
        }
    }
    Outcome::new(schedule.len() as u64, completions, dispatch)
}
