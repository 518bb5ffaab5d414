//! Commit progress: an observer the writer tells which phase a commit is in and how far.
//!
//! A commit of a large batch runs for many seconds inside one call; a command line that
//! wants to show it is alive registers a [`CommitProgress`] with
//! [`crate::IndexWriter::set_commit_progress`]:
//!
//! ```
//! use std::sync::Arc;
//! # fn demo(writer: &mut heddle::IndexWriter) {
//! writer.set_commit_progress(Some(Arc::new(|phase: heddle::CommitPhase, done: u64, total: u64| {
//!     eprintln!("commit: {} {done}/{total}", phase.name());
//! })));
//! # }
//! ```
//!
//! Unset (the default) it costs a commit one `Option` test per batch of work.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The phases of a commit, in the order a commit goes through them. A commit reports
/// only the phases it runs: no analysis or encoding without added documents, no reorder
/// without [`crate::Reorder::Bp`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CommitPhase {
    /// Tokenizing and inverting the added documents, in parallel; counted in documents.
    Analysis,
    /// Choosing the new segment's document order; counted in document-levels.
    Reorder,
    /// Merging the terms and encoding postings, dictionary and store; counted in terms
    /// (each build thread's, before they are merged).
    Encoding,
    /// Linking the new segment's vectors into its graph (only for a segment that gets
    /// one); counted in documents.
    Graph,
    /// Writing the segment and delete files; one step.
    Write,
    /// fsync of the new files and the directory; one step.
    Fsync,
    /// Opening the new segment, replacing the manifest and swapping the snapshot that
    /// readers see; one step.
    Publish,
}

impl CommitPhase {
    /// Every phase, in commit order.
    pub const ALL: [CommitPhase; 7] = [
        CommitPhase::Analysis,
        CommitPhase::Reorder,
        CommitPhase::Encoding,
        CommitPhase::Graph,
        CommitPhase::Write,
        CommitPhase::Fsync,
        CommitPhase::Publish,
    ];

    /// Its name in lower case, as [`crate::CommitStats`] names the phase's time.
    pub fn name(self) -> &'static str {
        match self {
            CommitPhase::Analysis => "analysis",
            CommitPhase::Reorder => "reorder",
            CommitPhase::Encoding => "encoding",
            CommitPhase::Write => "write",
            CommitPhase::Graph => "graph",
            CommitPhase::Fsync => "fsync",
            CommitPhase::Publish => "publish",
        }
    }
}

/// Receives `(phase, done, total)`: `done` is 0 when the phase starts and `total` when
/// it ends, and in between grows as the phase works (called from build threads, as
/// often as every thousand documents: the receiver throttles its output).
pub type CommitProgress = Arc<dyn Fn(CommitPhase, u64, u64) + Send + Sync>;

/// One phase's reports: started on creation, ended by [`PhaseReport::finish`].
pub(crate) struct PhaseReport<'a> {
    observer: Option<&'a CommitProgress>,
    phase: CommitPhase,
    done: AtomicU64,
    total: u64,
}

impl<'a> PhaseReport<'a> {
    pub(crate) fn start(
        observer: Option<&'a CommitProgress>,
        phase: CommitPhase,
        total: u64,
    ) -> Self {
        if let Some(o) = observer {
            o(phase, 0, total);
        }
        PhaseReport {
            observer,
            phase,
            done: AtomicU64::new(0),
            total,
        }
    }

    /// `n` more units done (from any thread).
    pub(crate) fn add(&self, n: u64) {
        if let Some(o) = self.observer {
            let done = self.done.fetch_add(n, Ordering::Relaxed) + n;
            o(self.phase, done.min(self.total), self.total);
        }
    }

    /// `done` units done in all (from any thread; the largest reported wins).
    pub(crate) fn set(&self, done: u64) {
        if let Some(o) = self.observer {
            let done = self.done.fetch_max(done, Ordering::Relaxed).max(done);
            o(self.phase, done.min(self.total), self.total);
        }
    }

    pub(crate) fn finish(self) {
        if let Some(o) = self.observer {
            o(self.phase, self.total, self.total);
        }
    }
}
