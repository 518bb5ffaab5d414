//! Resident memory sampled at a fixed period during a rung: start, peak, end and change.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::MemoryStatus;

/// One /proc/self/status field over a rung, in KiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldTrack {
    pub start: u64,
    pub peak: u64,
    pub end: u64,
    /// `end - start`: what the rung left behind.
    pub change: i64,
}

/// VmRSS, RssAnon and RssFile over a rung; a field is `None` where the kernel lacks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MemoryTrack {
    pub vm_rss: Option<FieldTrack>,
    pub rss_anon: Option<FieldTrack>,
    pub rss_file: Option<FieldTrack>,
    pub samples: u64,
}

impl MemoryTrack {
    pub fn starting_at(m: MemoryStatus) -> Self {
        let start = |v: Option<u64>| {
            v.map(|v| FieldTrack {
                start: v,
                peak: v,
                end: v,
                change: 0,
            })
        };
        MemoryTrack {
            vm_rss: start(m.vm_rss),
            rss_anon: start(m.rss_anon),
            rss_file: start(m.rss_file),
            samples: 1,
        }
    }

    /// Folds in one more sample; the last one observed is the end.
    pub fn observe(&mut self, m: MemoryStatus) {
        for (track, v) in [
            (&mut self.vm_rss, m.vm_rss),
            (&mut self.rss_anon, m.rss_anon),
            (&mut self.rss_file, m.rss_file),
        ] {
            if let (Some(t), Some(v)) = (track.as_mut(), v) {
                t.peak = t.peak.max(v);
                t.end = v;
                t.change = v as i64 - t.start as i64;
            }
        }
        self.samples += 1;
    }
}

/// Samples memory now and then every `period` until `stop` receives or its sender is
/// dropped, calling `tick` after each periodic sample; samples once more at the end.
pub fn sample_memory(period: Duration, stop: Receiver<()>, mut tick: impl FnMut()) -> MemoryTrack {
    let mut track = MemoryTrack::starting_at(MemoryStatus::now());
    while let Err(RecvTimeoutError::Timeout) = stop.recv_timeout(period) {
        track.observe(MemoryStatus::now());
        tick();
    }
    track.observe(MemoryStatus::now());
    track
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_peak_and_change() {
        let m = |v| MemoryStatus {
            vm_rss: Some(v),
            rss_anon: Some(v / 2),
            rss_file: None,
        };
        let mut t = MemoryTrack::starting_at(m(100));
        t.observe(m(300));
        t.observe(m(80));
        let vm = t.vm_rss.unwrap();
        assert_eq!((vm.start, vm.peak, vm.end, vm.change), (100, 300, 80, -20));
        assert_eq!(t.rss_anon.unwrap().peak, 150);
        assert_eq!((t.rss_file, t.samples), (None, 3));
    }

    #[test]
    fn samples_periodically_until_stopped() {
        let (tx, rx) = std::sync::mpsc::channel();
        let h = std::thread::spawn(move || {
            let mut ticks = 0;
            let t = sample_memory(Duration::from_millis(5), rx, || ticks += 1);
            (t, ticks)
        });
        std::thread::sleep(Duration::from_millis(60));
        tx.send(()).unwrap();
        let (t, ticks) = h.join().unwrap();
        assert!(ticks >= 2, "{ticks}");
        assert_eq!(t.samples, ticks + 2);
    }
}
