//! One writer per index: an advisory lock on `dir/LOCK`, released by the OS when the
//! holder exits, so a crashed writer never leaves a stale lock behind.
//!
//! The lock (`flock`) belongs to the open file description, which every copy of the
//! descriptor shares, and a process that forks while the lock is held — any thread of
//! the caller spawning a child — hands its child such a copy until the child execs.
//! Closing our descriptor alone would then leave the lock held by the child for that
//! moment, and a writer opened right after would be refused as `Locked`. So the lock is
//! released explicitly before the file is closed: unlocking through any copy releases it
//! for all of them. The one case this changes for the worse: a process that forks
//! without exec'ing while it holds a writer shares the lock with its child, and now
//! whichever of the two drops its writer first releases it for both. A writer is not
//! meant to be shared across such a fork in any case.

use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::error::{Error, Result};

pub(crate) const LOCK_FILE: &str = "LOCK";

/// Holds the exclusive lock until dropped.
#[derive(Debug)]
pub(crate) struct DirLock {
    file: File,
}

impl DirLock {
    pub(crate) fn acquire(dir: &Path) -> Result<Self> {
        let path = dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            // A planted symlink is not followed (nor a FIFO waited on): the lock file is
            // one more index name that must be a regular file.
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&path)
            .map_err(|e| match std::fs::symlink_metadata(&path) {
                Ok(m) if !m.file_type().is_file() => Error::NotRegular {
                    path: path.clone(),
                    found: super::kind_of(m.file_type()),
                },
                _ => Error::io(&path, e),
            })?;
        let file_type = file
            .metadata()
            .map_err(|e| Error::io(&path, e))?
            .file_type();
        if !file_type.is_file() {
            return Err(Error::NotRegular {
                path,
                found: super::kind_of(file_type),
            });
        }
        match file.try_lock() {
            Ok(()) => Ok(DirLock { file }),
            Err(TryLockError::WouldBlock) => Err(Error::Locked {
                path: dir.to_path_buf(),
            }),
            Err(TryLockError::Error(e)) => Err(Error::io(&path, e)),
        }
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        // An error here leaves the lock to be released when the last copy closes, as
        // before; there is nothing better to do with it in a destructor.
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A copy of the descriptor outliving the lock, as a child forked by another thread
    /// holds one until it execs, must not keep the directory locked.
    #[test]
    fn a_released_lock_is_free_while_a_copy_of_its_descriptor_lives() {
        let dir = tempfile::tempdir().unwrap();
        let lock = DirLock::acquire(dir.path()).unwrap();
        let forked_copy = lock.file.try_clone().unwrap();
        drop(lock);
        let again = DirLock::acquire(dir.path());
        assert!(again.is_ok(), "released lock still held: {again:?}");
        drop(forked_copy);
    }

    #[test]
    fn a_held_lock_refuses_a_second_holder() {
        let dir = tempfile::tempdir().unwrap();
        let _lock = DirLock::acquire(dir.path()).unwrap();
        match DirLock::acquire(dir.path()) {
            Err(Error::Locked { path }) => assert_eq!(path, dir.path()),
            other => panic!("expected Locked, got {other:?}"),
        }
    }
}
