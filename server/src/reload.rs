//! Picking up commits made by other processes: the server's index is reloaded on a short
//! interval. Its own `_bulk` commits need no reload (they publish to the same
//! [`heddle::Index`]), and a reload never makes a search wait: it opens the new snapshot
//! first and only swaps the pointer under the lock.

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// A thread that reloads an index every `every` until dropped.
pub struct Reloader {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Reloader {
    pub fn start(index: heddle::Index, every: Duration) -> std::io::Result<Reloader> {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("heddle-reload".into())
            .spawn(move || {
                let mut failing = false;
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                    // A failed reload (a commit's files half-removed by another process
                    // at that moment) keeps the current snapshot; say so once, not
                    // every interval.
                    match index.reload() {
                        Ok(()) => failing = false,
                        Err(e) if !failing => {
                            failing = true;
                            note!("serve: reloading {}: {e}", index.dir().display());
                        }
                        Err(_) => {}
                    }
                }
            })?;
        Ok(Reloader {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Reloader {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
