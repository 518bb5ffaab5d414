//! Read-only memory maps of immutable segment files.

use std::path::{Path, PathBuf};

use memmap2::Mmap;

use super::sigbus::{self, Registration};
use crate::error::{Error, Result};

/// An immutable file mapped into memory. Empty files are represented without a map
/// (mapping zero bytes is an error on Linux).
pub(crate) struct MappedFile {
    path: PathBuf,
    /// Dropped before the map: a released range is never one the handler patches.
    registration: Option<Registration>,
    map: Option<Mmap>,
}

impl MappedFile {
    pub(crate) fn open(path: &Path) -> Result<Self> {
        // A regular file only: a FIFO must not block the open, a symlink is damage.
        let file = super::open_regular(path)?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        let map = if len == 0 {
            None
        } else {
            // SAFETY: heddle never modifies a segment file after its commit: files are
            // written once under a fresh name, fsynced, and only then referenced by a
            // manifest; they are deleted (never truncated or rewritten) once unused. A
            // process outside heddle that truncates the file while it is mapped makes
            // reads past the new end raise SIGBUS: the registration below turns that
            // into an error of the requests that read the file ([`super::sigbus`]).
            Some(unsafe { Mmap::map(&file) }.map_err(|e| Error::io(path, e))?)
        };
        let registration = map
            .as_ref()
            .map(|m| sigbus::register(m.as_ptr(), m.len(), path));
        Ok(MappedFile {
            path: path.to_path_buf(),
            registration,
            map,
        })
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// An error if a read of the map found the file shrunk under it: the bytes read
    /// since are zeros standing in for pages that no longer exist.
    #[inline]
    pub(crate) fn check_intact(&self) -> Result<()> {
        if self.registration.as_ref().is_some_and(|r| r.faulted()) {
            return Err(Error::ChangedInPlace {
                path: self.path.clone(),
            });
        }
        Ok(())
    }
}
