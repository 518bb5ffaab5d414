//! What a rung recorded: per-request latency and service time, sheds, and the
//! dispatcher's own lag — and the one place where latency is defined.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::Admission;
use crate::bench::backend::{AnswerParts, ServerClock, ServerTime};
use crate::bench::report::format::micros_or_dash;
use crate::bench::stats::{LatencyHistogram, P50, P99};

/// What the workers saw, all times in nanoseconds from the rung's start.
#[derive(Debug, Clone, Default)]
pub struct CompletionTally {
    /// Due → completion, per completed request.
    pub latency: LatencyHistogram,
    /// Start of execution → completion: the service time, without queueing.
    pub service: LatencyHistogram,
    /// The worker thread's own CPU time over each request's service (its thread CPU
    /// clock): the work done, without the time the thread waited for a core. Empty
    /// when requests were not served on worker threads (an issuer's async client).
    pub cpu: LatencyHistogram,
    /// Over HTTP, per completed request whose server said: the server's own time on it.
    pub server: LatencyHistogram,
    /// ... and the rest of its latency (due → completion less the server's time): what
    /// the dispatcher, the client, the wire and scheduling added, request by request.
    pub added: LatencyHistogram,
    /// The coarsest clock the server's times came from.
    pub server_clock: Option<ServerClock>,
    /// The vector and hybrid arms, per completed request: the time spent encoding the
    /// query (inside its service time) ...
    pub encode: LatencyHistogram,
    /// ... and the rest of its service time: search and fusion, ...
    pub search: LatencyHistogram,
    /// ... of which the text (BM25) stream's search, ...
    pub text: LatencyHistogram,
    /// ... the vector stream's search ...
    pub vector: LatencyHistogram,
    /// ... and the rest of the ranking (fusion, tie order, the kept hits' ids).
    pub fusion: LatencyHistogram,
    /// Over HTTP, requests that found no open connection ready and opened one: its
    /// setup is in their latency.
    pub connected: u64,
    /// Batches of more than one request a worker took together (`bench --encode-batch`),
    /// and the requests in them.
    pub batches: u64,
    pub batched: u64,
    /// The workers' busy time: each single request's service time, and each batch's
    /// start to its last answer once (its requests' service times overlap).
    pub busy_ns: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    pub last_done_ns: u64,
    /// Every admitted request's times, when the rung keeps them ([`LiveRung::logged`]):
    /// for an arm that splits a rung by when requests were due (the writes arm).
    pub log: Option<Vec<RequestTimes>>,
}

/// One admitted request, in nanoseconds from the rung's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestTimes {
    /// The request's position in the schedule.
    pub index: u64,
    pub due_ns: u64,
    pub start_ns: u64,
    pub done_ns: u64,
    /// False if the backend failed it.
    pub ok: bool,
    /// The server's own time on it, in microseconds, if it said.
    pub server_us: Option<u64>,
    /// The worker thread's CPU time on it, in nanoseconds, if it was measured.
    pub cpu_ns: Option<u64>,
}

impl CompletionTally {
    /// Records a completed request. Latency runs from when the request was *due* — not
    /// from when it was issued or started — so waiting behind earlier requests, or behind
    /// a late dispatcher, counts as the latency it is.
    pub fn record(&mut self, due_ns: u64, start_ns: u64, done_ns: u64) {
        self.latency.record_nanos(done_ns.saturating_sub(due_ns));
        self.service.record_nanos(done_ns.saturating_sub(start_ns));
        self.last_done_ns = self.last_done_ns.max(done_ns);
    }

    /// Records the CPU time the worker thread used on a completed request.
    pub fn record_cpu(&mut self, cpu_ns: u64) {
        self.cpu.record_nanos(cpu_ns);
    }

    /// Records the server's own account of a completed request (after [`record`]): its
    /// time, and the latency beyond it.
    ///
    /// [`record`]: CompletionTally::record
    pub fn record_server(&mut self, due_ns: u64, done_ns: u64, server: ServerTime) {
        self.server.record_micros(server.micros);
        let latency_us = done_ns.saturating_sub(due_ns).div_ceil(1_000);
        self.added
            .record_micros(latency_us.saturating_sub(server.micros));
        self.server_clock = self.server_clock.max(Some(server.clock));
    }

    /// Records where a completed request's service time (after [`record`]) went: its
    /// query's encoding, each stream's search, and the fusion; the service time less
    /// the encoding is its search.
    ///
    /// [`record`]: CompletionTally::record
    pub fn record_parts(&mut self, start_ns: u64, done_ns: u64, parts: AnswerParts) {
        self.encode.record_micros(parts.encode);
        let service_us = done_ns.saturating_sub(start_ns).div_ceil(1_000);
        self.search
            .record_micros(service_us.saturating_sub(parts.encode));
        self.text.record_micros(parts.text);
        self.vector.record_micros(parts.vector);
        self.fusion.record_micros(parts.fusion);
    }

    /// Records a request the backend failed. It has no latency: a fast failure must not
    /// pass for a fast answer. A rung with errors is invalid.
    pub fn record_error(&mut self, done_ns: u64, error: &anyhow::Error) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(format!("{error:#}"));
        }
        self.last_done_ns = self.last_done_ns.max(done_ns);
    }

    pub fn completed(&self) -> u64 {
        self.latency.len()
    }

    pub fn add(&mut self, other: &CompletionTally) {
        self.latency.add(&other.latency);
        self.service.add(&other.service);
        self.cpu.add(&other.cpu);
        self.server.add(&other.server);
        self.added.add(&other.added);
        self.encode.add(&other.encode);
        self.search.add(&other.search);
        self.text.add(&other.text);
        self.vector.add(&other.vector);
        self.fusion.add(&other.fusion);
        self.server_clock = self.server_clock.max(other.server_clock);
        self.connected += other.connected;
        self.batches += other.batches;
        self.batched += other.batched;
        self.busy_ns += other.busy_ns;
        self.errors += other.errors;
        if self.first_error.is_none() {
            self.first_error.clone_from(&other.first_error);
        }
        self.last_done_ns = self.last_done_ns.max(other.last_done_ns);
        if let (Some(mine), Some(theirs)) = (self.log.as_mut(), other.log.as_ref()) {
            mine.extend_from_slice(theirs);
        }
    }

    /// Keeps `times` if this tally keeps a log.
    pub fn log(&mut self, times: RequestTimes) {
        if let Some(log) = self.log.as_mut() {
            log.push(times);
        }
    }
}

/// What the dispatcher did.
#[derive(Debug, Clone, Default)]
pub struct DispatchTally {
    pub issued: u64,
    pub shed: u64,
    /// Issue time − due time, per request: the instrument's health. A late dispatcher
    /// still charges the delay to latency, but a large lag means the machine, not the
    /// engine, set the figures.
    pub lag: LatencyHistogram,
    pub last_issue_ns: u64,
}

impl DispatchTally {
    pub fn record_issue(&mut self, due_ns: u64, issued_ns: u64, admitted: bool) {
        self.issued += 1;
        if !admitted {
            self.shed += 1;
        }
        self.lag.record_nanos(issued_ns.saturating_sub(due_ns));
        self.last_issue_ns = self.last_issue_ns.max(issued_ns);
    }

    pub fn add(&mut self, other: &DispatchTally) {
        self.issued += other.issued;
        self.shed += other.shed;
        self.lag.add(&other.lag);
        self.last_issue_ns = self.last_issue_ns.max(other.last_issue_ns);
    }
}

/// The result of one rung's load.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Requests scheduled: completed + errors + shed.
    pub requests: u64,
    pub completions: CompletionTally,
    pub dispatch: DispatchTally,
    /// From the rung's start to the last completion (or the last issue, if later).
    pub elapsed_ns: u64,
}

impl Outcome {
    pub fn new(requests: u64, completions: CompletionTally, dispatch: DispatchTally) -> Self {
        let elapsed_ns = completions.last_done_ns.max(dispatch.last_issue_ns);
        Outcome {
            requests,
            completions,
            dispatch,
            elapsed_ns,
        }
    }

    pub fn completed(&self) -> u64 {
        self.completions.completed()
    }

    pub fn shed(&self) -> u64 {
        self.dispatch.shed
    }

    /// Completed requests per second of the rung.
    pub fn achieved_rate(&self) -> f64 {
        if self.elapsed_ns == 0 {
            return 0.0;
        }
        self.completed() as f64 / (self.elapsed_ns as f64 / 1e9)
    }
}

/// The shared state of a running rung: the in-flight cap and one tally per worker (each
/// locked only by its worker, and by [`progress`](Self::progress) now and then; with an
/// [`Issue`](crate::bench::backend::Issue)r, the first is locked by each completion).
/// Shared with the completions of issued requests, which outlive any borrow.
#[derive(Debug)]
pub struct LiveRung {
    pub(super) admission: Arc<Admission>,
    pub(super) workers: Vec<Arc<Mutex<CompletionTally>>>,
    pub(super) issued: AtomicU64,
    pub(super) shed: AtomicU64,
    total: u64,
    logged: bool,
}

/// A rung's state part-way through, for progress lines.
#[derive(Debug, Clone)]
pub struct Progress {
    pub total: u64,
    pub issued: u64,
    pub done: u64,
    pub shed: u64,
    pub latency: LatencyHistogram,
}

impl Progress {
    /// `1234/2000 done, p50 1.2ms, p99 -, shed 0`: the body of every progress line.
    pub fn line(&self) -> String {
        format!(
            "{}/{} done, p50 {}, p99 {}, shed {}",
            self.done,
            self.total,
            micros_or_dash(self.latency.reported(P50)),
            micros_or_dash(self.latency.reported(P99)),
            self.shed
        )
    }
}

impl LiveRung {
    /// A rung of `total` requests on `threads` workers with at most `inflight` unfinished.
    pub fn new(threads: usize, inflight: usize, total: u64) -> Self {
        assert!(threads >= 1, "at least one worker");
        LiveRung {
            admission: Arc::new(Admission::new(inflight)),
            workers: (0..threads).map(|_| Arc::default()).collect(),
            issued: AtomicU64::new(0),
            shed: AtomicU64::new(0),
            total,
            logged: false,
        }
    }

    /// A rung that also keeps every admitted request's times
    /// ([`CompletionTally::log`]).
    pub fn logged(threads: usize, inflight: usize, total: u64) -> Self {
        let mut live = LiveRung::new(threads, inflight, total);
        for w in &live.workers {
            w.lock().expect("fresh").log = Some(Vec::new());
        }
        live.logged = true;
        live
    }

    pub fn threads(&self) -> usize {
        self.workers.len()
    }

    pub fn progress(&self) -> Progress {
        let mut tally = CompletionTally::default();
        for w in &self.workers {
            tally.add(&w.lock().expect("worker tally poisoned"));
        }
        Progress {
            total: self.total,
            issued: self.issued.load(Ordering::Relaxed),
            done: tally.completed() + tally.errors,
            shed: self.shed.load(Ordering::Relaxed),
            latency: tally.latency,
        }
    }

    pub(super) fn take_completions(&self) -> CompletionTally {
        let mut all = CompletionTally {
            log: self.logged.then(Vec::new),
            ..CompletionTally::default()
        };
        for w in &self.workers {
            all.add(&std::mem::take(
                &mut *w.lock().expect("worker tally poisoned"),
            ));
        }
        all
    }
}
