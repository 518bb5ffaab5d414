//! The environment a measurement was taken in: this build, the machine, the storage under
//! the index, what an fsync costs there, and the machine's load at the start and end.
//! Every report carries one ([`Environment`]) so that a reader can tell whether two runs
//! compare ([`compare()`]); every table summarises it in its header ([`render`]).
//!
//! Anything the system does not expose is `None` — `null` in JSON, `unknown` in text —
//! and never guessed.
//!
//! ```no_run
//! use heddle_eval::env::Environment;
//! let mut env = Environment::capture(std::path::Path::new("/tmp/index"));
//! // ... the run ...
//! env.finish();
//! for line in heddle_eval::env::render::header(&env) {
//!     println!("{line}");
//! }
//! ```

mod build;
pub mod clock;
pub mod compare;
pub mod fsync;
mod machine;
pub mod render;
mod storage;

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use build::Build;
pub use compare::{Comparability, Difference, Group, compare};
pub use fsync::{FsyncCost, Timing};
pub use machine::Machine;
pub use storage::{Storage, VmDirty};

/// Where and on what a run was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    pub build: Build,
    pub machine: Machine,
    /// The storage of the index directory (for the writes arm: of the scratch copies).
    pub storage: Storage,
    /// fsync cost measured on that filesystem at the start.
    pub fsync: Option<FsyncCost>,
    /// Why `fsync` is absent, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsync_unknown: Option<String>,
    pub started_utc: String,
    pub ended_utc: Option<String>,
    pub load_start: Option<LoadAverage>,
    pub load_end: Option<LoadAverage>,
    /// Machine or storage fields that read differently at the end than at the start.
    #[serde(default)]
    pub changed_during_run: Vec<String>,
}

/// /proc/loadavg: runnable (and uninterruptible) tasks, averaged over 1, 5 and 15 min.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoadAverage {
    pub one: f64,
    pub five: f64,
    pub fifteen: f64,
}

impl LoadAverage {
    pub fn now() -> Option<LoadAverage> {
        let text = std::fs::read_to_string("/proc/loadavg").ok()?;
        let mut it = text.split_whitespace().map(|w| w.parse::<f64>().ok());
        Some(LoadAverage {
            one: it.next()??,
            five: it.next()??,
            fifteen: it.next()??,
        })
    }
}

impl Environment {
    /// Reads everything now, for a run on the index at `index_dir` (which need not exist
    /// yet), including the fsync probe beside it (about a second at most).
    pub fn capture(index_dir: &Path) -> Self {
        let (fsync, fsync_unknown) = match fsync::measure(index_dir) {
            Ok(f) => (Some(f), None),
            Err(e) => (None, Some(e)),
        };
        Environment {
            build: Build::this(),
            machine: Machine::read(),
            storage: Storage::of(index_dir),
            fsync,
            fsync_unknown,
            started_utc: clock::utc_now(),
            ended_utc: None,
            load_start: LoadAverage::now(),
            load_end: None,
            changed_during_run: Vec::new(),
        }
    }

    /// Marks the end of the run: the time, the load, and which machine or storage fields
    /// changed meanwhile. Calling it again moves the end.
    pub fn finish(&mut self) {
        self.ended_utc = Some(clock::utc_now());
        self.load_end = LoadAverage::now();
        let mut now = self.clone();
        now.machine = Machine::read();
        now.storage = Storage::of(Path::new(&self.storage.dir));
        self.changed_during_run = compare(&[self, &now])
            .differences
            .into_iter()
            .map(|d| d.field.to_string())
            .collect();
    }

    /// The highest 1-minute load average seen at the start or end, if any was read.
    pub fn peak_load(&self) -> Option<f64> {
        [self.load_start, self.load_end]
            .into_iter()
            .flatten()
            .map(|l| l.one)
            .reduce(f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_capture_on_linux_knows_the_essentials_and_says_unknown_for_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let mut env = Environment::capture(&tmp.path().join("index"));
        assert!(env.machine.kernel.is_some() && env.machine.logical_cores.is_some());
        assert!(env.storage.fs_type.is_some() && env.load_start.is_some());
        assert!(env.fsync.is_some(), "{:?}", env.fsync_unknown);
        assert!(env.started_utc.ends_with('Z') && env.ended_utc.is_none());
        env.finish();
        assert!(env.ended_utc.is_some() && env.load_end.is_some());
        assert!(
            env.changed_during_run.is_empty(),
            "{:?}",
            env.changed_during_run
        );
        let json = serde_json::to_string(&env).unwrap();
        let back: Environment = serde_json::from_str(&json).unwrap();
        assert_eq!(back, env);
        for line in render::header(&env) {
            assert!(line.chars().count() <= render::WIDTH, "{line}");
        }
    }
}
