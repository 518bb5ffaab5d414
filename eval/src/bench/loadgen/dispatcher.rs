//! The real open-loop rung: one dispatcher thread issues requests at their due times and
//! never waits for a result; a pool of worker threads executes them.

use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use super::{CompletionTally, DispatchTally, LiveRung, Outcome, RequestTimes, Schedule};
use crate::bench::backend::Backend;
use crate::bench::queries::QueryCycle;

/// Time for the workers to start before the first request is due.
const START_LEAD: Duration = Duration::from_millis(5);

struct Job {
    index: u64,
    due_ns: u64,
}

/// Runs one rung of `schedule` against `backend` with `live.threads()` workers, request
/// `i` asking `queries.get(i)` for the top `k`. Returns when every admitted request has
/// finished. `live` can be read meanwhile for progress.
pub fn run_open_loop(
    backend: &dyn Backend,
    schedule: &Schedule,
    queries: &QueryCycle,
    k: usize,
    live: &LiveRung,
) -> Outcome {
    run_open_loop_from(backend, schedule, queries, k, live, open_loop_origin())
}

/// A rung's start a little ahead of now, so that its workers are running by then.
pub fn open_loop_origin() -> Instant {
    Instant::now() + START_LEAD
}

/// [`run_open_loop`] with a start chosen by the caller (see [`open_loop_origin`]), so
/// that another thread can act at known points of the schedule (the writes arm).
pub fn run_open_loop_from(
    backend: &dyn Backend,
    schedule: &Schedule,
    queries: &QueryCycle,
    k: usize,
    live: &LiveRung,
    origin: Instant,
) -> Outcome {
    let (tx, rx) = mpsc::channel::<Job>();
    let rx = Mutex::new(rx);
    let dispatch = thread::scope(|s| {
        for slot in &live.workers {
            let rx = &rx;
            s.spawn(move || work(backend, queries, k, origin, rx, slot, live));
        }
        // The dispatcher gets its own thread so that its timer slack setting stays there.
        s.spawn(move || dispatch(schedule, origin, tx, live))
            .join()
            .expect("the dispatcher panicked")
    });
    Outcome::new(schedule.len() as u64, live.take_completions(), dispatch)
}

fn dispatch(
    schedule: &Schedule,
    origin: Instant,
    tx: mpsc::Sender<Job>,
    live: &LiveRung,
) -> DispatchTally {
    tighten_timer_slack();
    let mut tally = DispatchTally::default();
    for (i, &due_ns) in schedule.due_ns().iter().enumerate() {
        sleep_until(origin + Duration::from_nanos(due_ns));
        let issued_ns = since(origin, Instant::now());
        let admitted = live.admission.try_admit();
        tally.record_issue(due_ns, issued_ns, admitted);
        if admitted {
            let job = Job {
                index: i as u64,
                due_ns,
            };
            tx.send(job)
                .expect("workers live until the sender is dropped");
        } else {
            live.shed.fetch_add(1, Ordering::Relaxed);
        }
        live.issued.fetch_add(1, Ordering::Relaxed);
    }
    tally
}

fn work(
    backend: &dyn Backend,
    queries: &QueryCycle,
    k: usize,
    origin: Instant,
    rx: &Mutex<Receiver<Job>>,
    slot: &Mutex<CompletionTally>,
    live: &LiveRung,
) {
    loop {
        let Ok(job) = rx.lock().expect("job queue poisoned").recv() else {
            return; // the dispatcher is done and the queue is empty
        };
        let start = Instant::now();
        let result = backend.search(queries.get(job.index), k);
        let done = Instant::now();
        {
            let mut tally = slot.lock().expect("worker tally poisoned");
            let (start_ns, done_ns) = (since(origin, start), since(origin, done));
            tally.log(RequestTimes {
                index: job.index,
                due_ns: job.due_ns,
                start_ns,
                done_ns,
                ok: result.is_ok(),
            });
            match result {
                Ok(_) => tally.record(job.due_ns, start_ns, done_ns),
                Err(e) => tally.record_error(done_ns, &e),
            }
        }
        live.admission.release();
    }
}

fn since(origin: Instant, t: Instant) -> u64 {
    t.saturating_duration_since(origin).as_nanos() as u64
}

fn sleep_until(t: Instant) {
    let now = Instant::now();
    if t > now {
        thread::sleep(t - now);
    }
}

/// Asks the kernel to wake this thread within 1 ns of its deadline instead of the default
/// 50 µs slack, so that the dispatcher's lag reflects the machine rather than a default.
fn tighten_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument and touches no memory of ours;
    // it changes only the calling thread's timer slack. Failure leaves the default.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}
