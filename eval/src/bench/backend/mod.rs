//! The engine behind the instrument: the harness drives a [`Backend`] and never an engine
//! type, so that heddle, tantivy and the synthetic test backends run through the same code.

mod heddle;
pub mod synthetic;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use self::heddle::HeddleFactory;

/// One opened index, shared by every worker thread of a rung.
pub trait Backend: Send + Sync {
    /// Runs `query` and returns the external ids of the top `k` documents, best first.
    /// Query analysis belongs to the call: it is part of the latency being measured.
    fn search(&self, query: &str, k: usize) -> anyhow::Result<Vec<String>>;

    /// [`search`](Backend::search), with the engine's own account of its time on the
    /// request where it gives one (a server's `X-Heddle-Service-Micros` or `took`). The
    /// rung's workers call this; an engine in this process has nothing to add.
    fn answer(&self, query: &str, k: usize) -> anyhow::Result<Answer> {
        Ok(Answer {
            ids: self.search(query, k)?,
            server: None,
            parts: None,
        })
    }

    /// The most requests a worker takes together when they are already waiting, for
    /// [`answer_batch`](Backend::answer_batch): 1 (the default) takes one at a time.
    fn batch_limit(&self) -> usize {
        1
    }

    /// Answers requests a worker took together (up to [`batch_limit`](Backend::batch_limit)),
    /// calling `done(i, answer)` for request `i` as soon as its answer is ready: a request
    /// is done when its own answer is, not when the batch is. A request never called back
    /// is failed. The default answers them one after another.
    fn answer_batch(
        &self,
        queries: &[&str],
        k: usize,
        done: &mut dyn FnMut(usize, anyhow::Result<Answer>),
    ) {
        answer_each(self, queries, k, done);
    }

    /// This backend as an [`Issue`]r, if it can start a search and return at once (an
    /// async client): the rung then hands each request to it at its due time instead of
    /// to a worker thread. `None` (the default): the rung's workers call
    /// [`answer`](Backend::answer), one request each at a time.
    fn issuer(&self) -> Option<&dyn Issue> {
        None
    }

    /// The share of the documents that hold each distinct term of `query`, as this
    /// engine analyses it; `None` if the engine cannot say. Classes queries in the
    /// sequential pass's per-query report (frequent, rare), outside any timing.
    fn term_shares(&self, query: &str) -> anyhow::Result<Option<Vec<f64>>> {
        let _ = query;
        Ok(None)
    }

    /// The time this backend spent in its own client code since the last call (for a
    /// backend reached over a network: building each request, parsing each answer), one
    /// value per request, and starts over; `None` for an engine called in-process. The
    /// rung reports it, so that the instrument's own overhead is visible.
    fn take_client_time(&self) -> Option<crate::bench::stats::LatencyHistogram> {
        None
    }

    /// The pid of a process on this machine that does this backend's work (the server
    /// behind a loopback `--target`): its CPU is the system measured, not another
    /// tenant disturbing the rung. `None` for an engine in this process.
    fn local_server(&self) -> Option<u32> {
        None
    }

    /// Adds documents (the writes arm). Engines that cannot write return [`Unsupported`].
    fn add_documents(&self, docs: &[::heddle::Document]) -> anyhow::Result<()> {
        let _ = docs;
        Err(Unsupported::new("add_documents").into())
    }

    /// Makes added documents durable and visible to every search that starts after it
    /// returns, this thread's included (the writes arm). Reports where the time went.
    fn commit(&self) -> anyhow::Result<CommitReport> {
        Err(Unsupported::new("commit").into())
    }
}

/// [`Backend::answer_batch`] as one request after another: the default, and what a backend
/// that batches does with what it cannot batch.
pub(crate) fn answer_each<B: Backend + ?Sized>(
    backend: &B,
    queries: &[&str],
    k: usize,
    done: &mut dyn FnMut(usize, anyhow::Result<Answer>),
) {
    for (i, q) in queries.iter().enumerate() {
        done(i, backend.answer(q, k));
    }
}

/// A backend that starts a search and returns at once, and reports its end through a
/// callback: no thread waits on a request in flight (the HTTP backend's async client).
pub trait Issue: Send + Sync {
    /// Starts `query` for the top `k` now; `done` is called once, on another thread,
    /// when it has finished or failed. Dropping `done` uncalled is a failed request.
    fn issue(&self, query: &str, k: usize, done: Done);
}

/// What an [`Issue`]r calls back with.
pub type Done = Box<dyn FnOnce(Finished) + Send + 'static>;

/// One issued request's end.
#[derive(Debug)]
pub struct Finished {
    /// When the request began executing (its service time runs from here).
    pub started: std::time::Instant,
    /// When its answer had been read and parsed.
    pub done: std::time::Instant,
    pub result: anyhow::Result<Answer>,
    /// It had to open its connection (none was ready): the connection's setup is in
    /// its latency.
    pub connected: bool,
}

/// One search's result as the rung records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// External ids, best first.
    pub ids: Vec<String>,
    /// The server's own time on the request, if it said.
    pub server: Option<ServerTime>,
    /// The vector and hybrid arms: where the request's service time went.
    pub parts: Option<AnswerParts>,
}

/// Where a vector or hybrid request's time went inside its service, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnswerParts {
    /// Encoding the query into its vector.
    pub encode: u64,
    /// The BM25 stream's search.
    pub text: u64,
    /// The vector stream's search.
    pub vector: u64,
    /// The rest of the ranking: fusion, tie order, the kept hits' ids.
    pub fusion: u64,
}

impl AnswerParts {
    /// From the ranking's own account.
    pub fn of(parts: &crate::quality::RequestParts) -> AnswerParts {
        let us = |d: std::time::Duration| d.as_micros() as u64;
        AnswerParts {
            encode: us(parts.encode),
            text: us(parts.text),
            vector: us(parts.vector),
            fusion: us(parts.fusion),
        }
    }
}

/// A server's own time on one request, as it reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerTime {
    pub micros: u64,
    pub clock: ServerClock,
}

/// Where a [`ServerTime`] came from, finest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ServerClock {
    /// heddle's `X-Heddle-Service-Micros` response header: microseconds.
    Header,
    /// Elasticsearch's `took`: whole milliseconds, truncated, so a floor (a `took` of 0
    /// is anything under 1 ms) and the time added beside it an upper bound.
    Took,
}

impl ServerClock {
    /// How reports name it.
    pub fn describe(self) -> &'static str {
        match self {
            ServerClock::Header => "X-Heddle-Service-Micros (µs)",
            ServerClock::Took => "took (whole ms, truncated: a floor)",
        }
    }
}

/// What one commit cost, in the engine's own terms (the writes arm, docs/PERF.md).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommitReport {
    /// Where the commit's time went, in the order the phases ran, each named as the
    /// engine names it (heddle: analysis, encoding, write, fsync, manifest, publish).
    /// The harness times `add_documents` itself; it is not repeated here.
    pub phases: Vec<(String, Duration)>,
    /// How long a reader could have been made to wait (heddle: the time the snapshot
    /// pointer's write lock was held); `None` where the engine does not measure it.
    pub exclusive: Option<Duration>,
}

/// How the writes arm opens an index for writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    /// Most threads a commit may use to build its segment (`--commit-threads`).
    pub threads: usize,
}

/// An engine the bench can run: a name for reports and a way to open an index.
pub trait BackendFactory: Send + Sync {
    /// The engine's name in tables, JSON and plots, and in `--engines`.
    fn name(&self) -> &str;

    /// Opens the index at `index` for searching.
    fn open(&self, index: &Path) -> anyhow::Result<Arc<dyn Backend>>;

    /// The directory that `open(index)` reads: the writes arm copies it, works on the
    /// copy and checks afterwards that this one is byte-identical. An engine that keeps
    /// its index elsewhere than `index` says where.
    fn source_dir(&self, index: &Path) -> PathBuf {
        index.to_path_buf()
    }

    /// Opens the index at `dir` (a copy the writes arm made of [`source_dir`]) for
    /// searching and writing. Engines that cannot write return [`Unsupported`].
    ///
    /// [`source_dir`]: BackendFactory::source_dir
    fn open_for_writes(
        &self,
        dir: &Path,
        options: &WriteOptions,
    ) -> anyhow::Result<Arc<dyn Backend>> {
        let _ = (dir, options);
        Err(Unsupported::new("open_for_writes").into())
    }
}

/// The operation a backend does not implement; callers can downcast to it to skip an arm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    pub operation: &'static str,
}

impl Unsupported {
    pub fn new(operation: &'static str) -> Self {
        Unsupported { operation }
    }
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "this backend does not support `{}`", self.operation)
    }
}

impl std::error::Error for Unsupported {}
