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
        if self.last.elapsed() >= self.every {
            self.last = Instant::now();
            eprintln!(
                "{}: {} ({:.1} s)",
                self.label,
                what(),
                self.started.elapsed().as_secs_f64()
            );
        }
    }

    /// Always prints.
    pub fn say(&mut self, what: &str) {
        self.last = Instant::now();
        eprintln!(
            "{}: {} ({:.1} s)",
            self.label,
            what,
            self.started.elapsed().as_secs_f64()
        );
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

struct CommitState {
    progress: Progress,
    phase: Option<CommitPhase>,
    done: u64,
    total: u64,
}

impl CommitState {
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
        CommitPhase::Analysis => Some("document"),
        CommitPhase::Reorder => Some("document-level"),
        CommitPhase::Encoding => Some("term"),
        CommitPhase::Write | CommitPhase::Fsync | CommitPhase::Publish => None,
    }
}

impl CommitLines {
    /// Starts the heartbeat; lines go on from `progress`'s, with its label and clock.
    pub fn start(progress: &Progress) -> Self {
        let state = Arc::new(Mutex::new(CommitState {
            progress: Progress {
                last: Instant::now(),
                ..*progress
            },
            phase: None,
            done: 0,
            total: 0,
        }));
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let heartbeat = {
            let (state, stop) = (state.clone(), stop.clone());
            std::thread::spawn(move || {
                let (flag, wake) = &*stop;
                let mut stopped = flag.lock().unwrap_or_else(|e| e.into_inner());
                while !*stopped {
                    stopped = wake
                        .wait_timeout(stopped, Duration::from_millis(250))
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                    if let Ok(mut s) = state.lock()
                        && s.phase.is_some()
                        && s.progress.last.elapsed() >= HEARTBEAT
                    {
                        let line = s.line();
                        s.progress.say(&line);
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
                s.progress.say(&line);
            } else {
                let line = s.line();
                s.progress.tick(|| line);
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
    #[test]
    fn thousands_groups_digits() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(1000), "1,000");
        assert_eq!(super::thousands(171332), "171,332");
        assert_eq!(super::thousands(1234567), "1,234,567");
    }
}
