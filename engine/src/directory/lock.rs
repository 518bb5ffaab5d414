//! One writer per index: an advisory lock on `dir/LOCK`, released by the OS when the
//! holder exits, so a crashed writer never leaves a stale lock behind.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;

use crate::error::{Error, Result};

pub(crate) const LOCK_FILE: &str = "LOCK";

/// Holds the exclusive lock until dropped.
#[derive(Debug)]
pub(crate) struct DirLock {
    _file: File,
}

impl DirLock {
    pub(crate) fn acquire(dir: &Path) -> Result<Self> {
        let path = dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => Ok(DirLock { _file: file }),
            Err(TryLockError::WouldBlock) => Err(Error::Locked {
                path: dir.to_path_buf(),
            }),
            Err(TryLockError::Error(e)) => Err(Error::io(&path, e)),
        }
    }
}
