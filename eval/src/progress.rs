//! Progress lines on stderr for long-running commands: at most one a second, and during
//! a commit ([`CommitLines`]) never more than [`HEARTBEAT`] without one. They go to
//! stderr whether or not it is a terminal: a log of a long build shows where it went.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use heddle::{CommitPhase, CommitProgress};

#[derive(Clone, Copy)]
pub struct Progress {
    label: &'static str,
    started: Instant,
    last: Instant,
    every: Duration,
}

impl Progress {
    pub fn new(label: &'static str) -> Self {
        let now = Instant::now();
        Progress {
            label,
            started: now,
            last: now,
            every: Duration::from_secs(1),
        }
    }

    /// Prints `what` if a second has passed since the last line.
    pub fn tick(&mut self, what: impl FnOnce() -> String) {
        if let Some(line) = self.tick_line(what) {
            crate::note!("{line}");
        }
    }

    /// Always prints.
    pub fn say(&mut self, what: &str) {
        crate::note!("{}", self.line(what));
    }

    /// The line [`Progress::tick`] would print, if any.
    fn tick_line(&mut self, what: impl FnOnce() -> String) -> Option<String> {
        (self.last.elapsed() >= self.every).then(|| self.line(&what()))
    }

    /// The line [`Progress::say`] prints, counted as printed.
    fn line(&mut self, what: &str) -> String {
        self.last = Instant::now();
        format!(
            "{}: {} ({:.1} s)",
            self.label,
            what,
            self.started.elapsed().as_secs_f64()
        )
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

pub use heddle_corpus::stats::plural;

/// The longest a commit goes without a progress line: a phase with nothing new to
/// report (one long fsync) is named again after this long.
pub const HEARTBEAT: Duration = Duration::from_secs(2);

/// A commit's progress as lines on stderr: a line when a phase starts (`index: commit:
/// analysis of 171,332 documents (1.0 s)`), at most one a second as it advances, and the
/// phase again after [`HEARTBEAT`] of silence, from a thread of its own. Stops when
/// dropped.
pub struct CommitLines {
    state: Arc<Mutex<CommitState>>,
    stop: Arc<(Mutex<bool>, Condvar)>,
    heartbeat: Option<JoinHandle<()>>,
}

/// Where a [`CommitLines`] line goes: stderr, or a test's list.
type Sink = Arc<dyn Fn(&str) + Send + Sync>;

struct CommitState {
    progress: Progress,
    phase: Option<CommitPhase>,
    done: u64,
    total: u64,
    sink: Sink,
}

impl CommitState {
    /// Always writes `what`.
    fn say(&mut self, what: &str) {
        let line = self.progress.line(what);
        (self.sink)(&line);
    }

    /// Writes `what` if a second has passed since the last line.
    fn tick(&mut self, what: impl FnOnce() -> String) {
        if let Some(line) = self.progress.tick_line(what) {
            (self.sink)(&line);
        }
    }

    fn line(&self) -> String {
        match self.phase {
            None => "commit: starting".to_string(),
            Some(p) if unit(p).is_some() => format!(
                "commit: {} {:.0}%",
                p.name(),
                100.0 * self.done as f64 / self.total.max(1) as f64
            ),
            Some(p) => format!("commit: {}", p.name()),
        }
    }
}

/// What a phase counts, if it counts anything.
fn unit(phase: CommitPhase) -> Option<&'static str> {
    match phase {
        CommitPhase::Analysis | CommitPhase::Graph => Some("document"),
        CommitPhase::Reorder => Some("document-level"),
        CommitPhase::Encoding => Some("term"),
        CommitPhase::Write | CommitPhase::Fsync | CommitPhase::Publish => None,
    }
}

impl CommitLines {
    /// Starts the heartbeat; lines go on from `progress`'s, with its label and clock.
    pub fn start(progress: &Progress) -> Self {
        Self::with_heartbeat(progress, HEARTBEAT, Arc::new(|line| crate::note!("{line}")))
    }

    /// [`CommitLines::start`], the phase named again after `heartbeat` of silence, each
    /// line given to `sink`.
    fn with_heartbeat(progress: &Progress, heartbeat: Duration, sink: Sink) -> Self {
        let state = Arc::new(Mutex::new(CommitState {
            progress: Progress {
                last: Instant::now(),
                ..*progress
            },
            phase: None,
            done: 0,
            total: 0,
            sink,
        }));
        // Woken this often to see whether the silence has lasted long enough.
        let poll = heartbeat.min(Duration::from_millis(250));
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let heartbeat = {
            let (state, stop) = (state.clone(), stop.clone());
            std::thread::spawn(move || {
                let (flag, wake) = &*stop;
                let mut stopped = flag.lock().unwrap_or_else(|e| e.into_inner());
                while !*stopped {
                    stopped = wake
                        .wait_timeout(stopped, poll)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                    if let Ok(mut s) = state.lock()
                        && s.phase.is_some()
                        && s.progress.last.elapsed() >= heartbeat
                    {
                        let line = s.line();
                        s.say(&line);
                    }
                }
            })
        };
        CommitLines {
            state,
            stop,
            heartbeat: Some(heartbeat),
        }
    }

    /// Commits `writer` with its phases shown on stderr (after `progress`'s lines), and
    /// leaves the writer without an observer again.
    pub fn commit(
        writer: &mut heddle::IndexWriter,
        progress: &Progress,
    ) -> heddle::Result<heddle::CommitStats> {
        let lines = CommitLines::start(progress);
        writer.set_commit_progress(Some(lines.observer()));
        let stats = writer.commit();
        writer.set_commit_progress(None);
        stats
    }

    /// The observer to give [`heddle::IndexWriter::set_commit_progress`].
    pub fn observer(&self) -> CommitProgress {
        let state = self.state.clone();
        Arc::new(move |phase, done, total| {
            let Ok(mut s) = state.lock() else {
                return;
            };
            (s.done, s.total) = (done, total);
            if s.phase != Some(phase) {
                s.phase = Some(phase);
                let line = match unit(phase) {
                    Some(unit) => format!("commit: {} of {}", phase.name(), plural(total, unit)),
                    None => format!("commit: {}", phase.name()),
                };
                s.say(&line);
            } else {
                let line = s.line();
                s.tick(|| line);
            }
        })
    }
}

impl Drop for CommitLines {
    fn drop(&mut self) {
        let (flag, wake) = &*self.stop;
        *flag.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_all();
        if let Some(h) = self.heartbeat.take() {
            let _ = h.join();
        }
    }
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_silent_commit_phase_is_named_again_after_the_heartbeat() {
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink: Sink = {
            let lines = lines.clone();
            Arc::new(move |line| lines.lock().unwrap().push(line.to_string()))
        };
        let commit =
            CommitLines::with_heartbeat(&Progress::new("test"), Duration::from_millis(20), sink);
        // One call, then no progress at all: a long fsync.
        (commit.observer())(CommitPhase::Fsync, 0, 0);
        let fsync_lines = || {
            let lines = lines.lock().unwrap();
            lines
                .iter()
                .filter(|l| l.starts_with("test: commit: fsync ("))
                .count()
        };
        // However slow the machine, the heartbeat comes; wait for it generously.
        let deadline = Instant::now() + Duration::from_secs(10);
        while fsync_lines() < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        drop(commit);
        assert!(
            fsync_lines() >= 2,
            "the phase said once, then again in the silence: {:?}",
            lines.lock().unwrap()
        );
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(1000), "1,000");
        assert_eq!(super::thousands(171332), "171,332");
        assert_eq!(super::thousands(1234567), "1,234,567");
    }
}
