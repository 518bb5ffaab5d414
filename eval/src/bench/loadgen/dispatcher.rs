//! The real open-loop rung: one dispatcher thread issues requests at their due times and
//! never waits for a result; a pool of worker threads executes them — or, for a backend
//! that is an [`Issue`]r (the HTTP backend's async client), the dispatcher hands each
//! request to it at its due time and its completion is recorded where it ends.

use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::cpu;
use super::{Admission, CompletionTally, DispatchTally, LiveRung, Outcome, RequestTimes, Schedule};
use crate::bench::backend::{Answer, Backend, Finished, Issue};
use crate::bench::queries::QueryCycle;

/// Time for the workers to start before the first request is due.
const START_LEAD: Duration = Duration::from_millis(5);

struct Job {
    index: u64,
    due_ns: u64,
}

/// Runs one rung of `schedule` against `backend` with `live.threads()` workers (none for
/// an [`Issue`]r), request `i` asking `queries.get(i)` for the top `k`. Returns when every admitted request has
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
    if let Some(issuer) = backend.issuer() {
        return run_issued(issuer, schedule, queries, k, live, origin);
    }
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
    dispatch_with(schedule, origin, live, |job| {
        tx.send(job)
            .expect("workers live until the sender is dropped");
    })
}

/// The dispatcher's loop: each request at its due time, admitted (and handed to `start`)
/// or shed, never waiting for a result.
fn dispatch_with(
    schedule: &Schedule,
    origin: Instant,
    live: &LiveRung,
    mut start: impl FnMut(Job),
) -> DispatchTally {
    tighten_timer_slack();
    let mut tally = DispatchTally::default();
    for (i, &due_ns) in schedule.due_ns().iter().enumerate() {
        sleep_until(origin + Duration::from_nanos(due_ns));
        let issued_ns = since(origin, Instant::now());
        let admitted = live.admission.try_admit();
        tally.record_issue(due_ns, issued_ns, admitted);
        if admitted {
            start(Job {
                index: i as u64,
                due_ns,
            });
        } else {
            live.shed.fetch_add(1, Ordering::Relaxed);
        }
        live.issued.fetch_add(1, Ordering::Relaxed);
    }
    tally
}

/// The rung with an [`Issue`]r: the dispatcher hands each admitted request to it at its
/// due time; each completion records itself and releases its place under the cap, on
/// whatever thread it ends. Returns when every issued request has been recorded.
fn run_issued(
    issuer: &dyn Issue,
    schedule: &Schedule,
    queries: &QueryCycle,
    k: usize,
    live: &LiveRung,
    origin: Instant,
) -> Outcome {
    // Each pending request holds a sender; the receiver sees the channel close when the
    // last one has been recorded.
    let (all_done, wait) = mpsc::channel::<()>();
    let slot = live.workers[0].clone();
    let dispatch = thread::scope(|s| {
        s.spawn(|| {
            dispatch_with(schedule, origin, live, |job| {
                let pending = Pending {
                    index: job.index,
                    due_ns: job.due_ns,
                    origin,
                    slot: slot.clone(),
                    admission: live.admission.clone(),
                    _all_done: all_done.clone(),
                    recorded: false,
                };
                issuer.issue(
                    queries.get(job.index),
                    k,
                    Box::new(move |finished: Finished| pending.finish(finished)),
                );
            })
        })
        .join()
        .expect("the dispatcher panicked")
    });
    drop(all_done);
    let _ = wait.recv();
    Outcome::new(schedule.len() as u64, live.take_completions(), dispatch)
}

/// An issued request until it is recorded. Its place under the in-flight cap is released
/// when it is dropped, after its completion is recorded; dropped unrecorded (the issuer
/// dropped its callback), it counts as a failed request.
struct Pending {
    index: u64,
    due_ns: u64,
    origin: Instant,
    slot: Arc<Mutex<CompletionTally>>,
    admission: Arc<Admission>,
    _all_done: mpsc::Sender<()>,
    recorded: bool,
}

impl Pending {
    fn finish(mut self, f: Finished) {
        let mut tally = self.slot.lock().expect("rung tally poisoned");
        if f.connected {
            tally.connected += 1;
        }
        let job = Job {
            index: self.index,
            due_ns: self.due_ns,
        };
        // The async client's requests are not served on a thread of their own: no CPU.
        record(
            &mut tally,
            &job,
            self.origin,
            f.started,
            f.done,
            f.result,
            None,
        );
        drop(tally);
        self.recorded = true;
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.recorded {
            let done_ns = since(self.origin, Instant::now());
            let error = anyhow::anyhow!("the client dropped the request unanswered");
            if let Ok(mut tally) = self.slot.lock() {
                tally.record_error(done_ns, &error);
            }
        }
        self.admission.release();
    }
}

/// A worker: takes the next request (and, where the backend answers several together,
/// every other one already waiting, up to its [`Backend::batch_limit`]) and records each
/// as it is done. A batch's thread CPU is shared evenly between its requests.
fn work(
    backend: &dyn Backend,
    queries: &QueryCycle,
    k: usize,
    origin: Instant,
    rx: &Mutex<Receiver<Job>>,
    slot: &Mutex<CompletionTally>,
    live: &LiveRung,
) {
    let limit = backend.batch_limit().max(1);
    loop {
        let jobs = {
            let rx = rx.lock().expect("job queue poisoned");
            let Ok(first) = rx.recv() else {
                return; // the dispatcher is done and the queue is empty
            };
            let mut jobs = vec![first];
            // Only what is waiting now: a batch never waits to fill.
            while jobs.len() < limit {
                match rx.try_recv() {
                    Ok(job) => jobs.push(job),
                    Err(_) => break,
                }
            }
            jobs
        };
        let start = Instant::now();
        if let [job] = jobs.as_slice() {
            let (result, cpu_ns) =
                cpu::on_this_thread(|| backend.answer(queries.get(job.index), k));
            let done = Instant::now();
            let mut tally = slot.lock().expect("worker tally poisoned");
            tally.busy_ns += since(start, done);
            record(&mut tally, job, origin, start, done, result, cpu_ns);
            drop(tally);
            live.admission.release();
        } else {
            answer_batch(backend, queries, k, origin, &jobs, start, slot, live);
        }
    }
}

/// Runs a batch of `jobs` taken together, recording each request and releasing its place
/// under the in-flight cap as soon as its own answer is ready, and its share of the
/// batch's thread CPU once the batch is over (so a batched request's log line has no CPU).
#[allow(clippy::too_many_arguments)]
fn answer_batch(
    backend: &dyn Backend,
    queries: &QueryCycle,
    k: usize,
    origin: Instant,
    jobs: &[Job],
    start: Instant,
    slot: &Mutex<CompletionTally>,
    live: &LiveRung,
) {
    let texts: Vec<&str> = jobs.iter().map(|j| queries.get(j.index)).collect();
    let mut answered = vec![false; jobs.len()];
    let mut ok = 0u64;
    let mut last = start;
    let ((), cpu_ns) = cpu::on_this_thread(|| {
        backend.answer_batch(&texts, k, &mut |i, result| {
            // A repeated or unknown index is the backend's bug; only the first answer of
            // each request counts.
            if answered.get(i).is_none_or(|&a| a) {
                return;
            }
            answered[i] = true;
            let done = Instant::now();
            last = last.max(done);
            ok += u64::from(result.is_ok());
            let mut tally = slot.lock().expect("worker tally poisoned");
            record(&mut tally, &jobs[i], origin, start, done, result, None);
            drop(tally);
            live.admission.release();
        });
    });
    let mut tally = slot.lock().expect("worker tally poisoned");
    for (job, _) in jobs.iter().zip(&answered).filter(|(_, a)| !**a) {
        let e = anyhow::anyhow!("the backend answered fewer requests than it took");
        let done = Instant::now();
        last = last.max(done);
        record(&mut tally, job, origin, start, done, Err(e), None);
        live.admission.release();
    }
    tally.batches += 1;
    tally.batched += jobs.len() as u64;
    tally.busy_ns += since(start, last);
    if let Some(ns) = cpu_ns {
        for _ in 0..ok {
            tally.record_cpu(ns / jobs.len() as u64);
        }
    }
}

/// Records one finished request: latency from its due time (the tally's one rule), its
/// service time from `start`, and the server's own time if it gave one.
fn record(
    tally: &mut CompletionTally,
    job: &Job,
    origin: Instant,
    start: Instant,
    done: Instant,
    result: anyhow::Result<Answer>,
    cpu_ns: Option<u64>,
) {
    let (start_ns, done_ns) = (since(origin, start), since(origin, done));
    let server = result.as_ref().ok().and_then(|a| a.server);
    let parts = result.as_ref().ok().and_then(|a| a.parts);
    tally.log(RequestTimes {
        index: job.index,
        due_ns: job.due_ns,
        start_ns,
        done_ns,
        ok: result.is_ok(),
        server_us: server.map(|s| s.micros),
        cpu_ns,
    });
    match result {
        Ok(_) => {
            tally.record(job.due_ns, start_ns, done_ns);
            if let Some(ns) = cpu_ns {
                tally.record_cpu(ns);
            }
            if let Some(server) = server {
                tally.record_server(job.due_ns, done_ns, server);
            }
            if let Some(parts) = parts {
                tally.record_parts(start_ns, done_ns, parts);
            }
        }
        Err(e) => tally.record_error(done_ns, &e),
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
