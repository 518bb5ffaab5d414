//! Read-only memory maps of immutable segment files.

use std::fs::File;
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use crate::error::{Error, Result};

/// An immutable file mapped into memory. Empty files are represented without a map
/// (mapping zero bytes is an error on Linux).
pub(crate) struct MappedFile {
    path: PathBuf,
    map: Option<Mmap>,
}

impl MappedFile {
    pub(crate) fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        let map = if len == 0 {
            None
        } else {
            // SAFETY: heddle never modifies a segment file after its commit: files are
            // written once under a fresh name, fsynced, and only then referenced by a
            // manifest; they are deleted (never truncated or rewritten) once unused. A
            // process outside heddle that truncates the file while it is mapped would
            // cause SIGBUS; that is outside the contract of an index directory, as it is
            // for every mmap-based engine.
            Some(unsafe { Mmap::map(&file) }.map_err(|e| Error::io(path, e))?)
        };
        Ok(MappedFile {
            path: path.to_path_buf(),
            map,
        })
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}
