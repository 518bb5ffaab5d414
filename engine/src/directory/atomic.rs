//! Durable writes: a file's bytes reach the disk before anything refers to them, and a
//! replaced file is either wholly old or wholly new.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Writes `bytes` to a new file at `path` (replacing a regular leftover of a failed
/// attempt, refusing a symlink or anything else: [`super::create_fresh`]) and fsyncs it.
/// The directory entry is made durable by the caller's later `fsync_dir`.
pub(crate) fn write_durably(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = super::create_fresh(path)?;
    file.write_all(bytes).map_err(|e| Error::io(path, e))?;
    file.sync_all().map_err(|e| Error::io(path, e))
}

/// Makes the directory's entries (creations, renames) durable.
pub(crate) fn fsync_dir(dir: &Path) -> Result<()> {
    #[cfg(test)]
    SYNCED_DIRS.with(|s| s.borrow_mut().push(dir.to_path_buf()));
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

/// Replaces `dir/name` atomically: write `dir/name.tmp`, fsync, rename over `name`,
/// fsync the directory. A crash at any point leaves either the old or the new file.
/// `after_tmp` runs between the fsync of the temporary file and the rename (failpoints).
pub(crate) fn atomic_replace(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    after_tmp: impl FnOnce() -> Result<()>,
) -> Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    let dest = dir.join(name);
    write_durably(&tmp, bytes)?;
    after_tmp()?;
    fs::rename(&tmp, &dest).map_err(|e| Error::io(&dest, e))?;
    fsync_dir(dir)
}

#[cfg(test)]
thread_local! {
    /// Every directory this thread fsynced, for tests that durability is not forgotten
    /// (a missing directory fsync is invisible until the power fails).
    static SYNCED_DIRS: std::cell::RefCell<Vec<std::path::PathBuf>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The directories this thread fsynced since the last call.
#[cfg(test)]
pub(crate) fn take_synced_dirs() -> Vec<std::path::PathBuf> {
    SYNCED_DIRS.with(|s| std::mem::take(&mut *s.borrow_mut()))
}
