//! A closed-loop driver, BIASED by design: it exists so that tests can show what the open
//! loop sees and it does not. Never use its figures as measurements.
//!
//! Each client sends its next request only when the previous one has returned (at the
//! scheduled time if that is later) and times it from the moment it was sent. When the
//! engine stalls, the requests that should have arrived during the stall are simply not
//! sent yet, so only the one request caught in the stall looks slow ("coordinated
//! omission"). The time the client fell behind shows up in its dispatch lag instead.

use std::thread;
use std::time::{Duration, Instant};

use super::{CompletionTally, DispatchTally, Outcome, Schedule};
use crate::bench::backend::Backend;
use crate::bench::queries::QueryCycle;

/// One closed-loop client on a virtual clock; `finish` as in
/// [`simulate_open_loop`](super::simulate_open_loop).
pub fn simulate_closed_loop(
    schedule: &Schedule,
    mut finish: impl FnMut(u64, u64) -> u64,
) -> Outcome {
    let mut completions = CompletionTally::default();
    let mut dispatch = DispatchTally::default();
    let mut ready = 0u64;
    for (i, &due) in schedule.due_ns().iter().enumerate() {
        let sent = due.max(ready);
        let done = finish(i as u64, sent);
        dispatch.record_issue(due, sent, true);
        completions.record(sent, sent, done); // timed from the send: the bias
        ready = done;
    }
    Outcome::new(schedule.len() as u64, completions, dispatch)
}

/// `clients` real closed-loop clients; client `c` sends requests `c, c + clients, ...`
/// of `schedule`, each no earlier than due and no earlier than its previous answer.
pub fn run_closed_loop(
    backend: &dyn Backend,
    schedule: &Schedule,
    queries: &QueryCycle,
    k: usize,
    clients: usize,
) -> Outcome {
    let origin = Instant::now();
    let since = |t: Instant| t.saturating_duration_since(origin).as_nanos() as u64;
    let parts: Vec<(CompletionTally, DispatchTally)> = thread::scope(|s| {
        let handles: Vec<_> = (0..clients.max(1))
            .map(|c| {
                s.spawn(move || {
                    let mut completions = CompletionTally::default();
                    let mut dispatch = DispatchTally::default();
                    let due = schedule.due_ns();
                    for i in (c..due.len()).step_by(clients.max(1)) {
                        let due_at = origin + Duration::from_nanos(due[i]);
                        let now = Instant::now();
                        if due_at > now {
                            thread::sleep(due_at - now);
                        }
                        let sent = Instant::now();
                        let result = backend.search(queries.get(i as u64), k);
                        let done = Instant::now();
                        dispatch.record_issue(due[i], since(sent), true);
                        match result {
                            Ok(_) => completions.record(since(sent), since(sent), since(done)),
                            Err(e) => completions.record_error(since(done), &e),
                        }
                    }
                    (completions, dispatch)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("closed-loop client panicked"))
            .collect()
    });
    let mut completions = CompletionTally::default();
    let mut dispatch = DispatchTally::default();
    for (c, d) in &parts {
        completions.add(c);
        dispatch.add(d);
    }
    Outcome::new(schedule.len() as u64, completions, dispatch)
}
