//! Removing files no snapshot uses: those of segments merged away and delete sets
//! replaced, once the last reader lets go; and, when a writer opens, what a crash left.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Weak;

use super::Failpoint;
use super::manifest::Manifest;
use crate::directory::fsync_dir;
use crate::error::{Error, Result};
use crate::segment::SegmentReader;
use crate::segment::deletes::DeleteSet;
use crate::segment::names;

/// Something the current manifest no longer names, with the files to remove once no
/// snapshot holds it.
pub(crate) struct Obsolete {
    holder: Holder,
    files: Vec<PathBuf>,
}

enum Holder {
    Segment(Weak<SegmentReader>),
    Deletes(Weak<DeleteSet>),
}

impl Obsolete {
    pub(crate) fn segment(reader: Weak<SegmentReader>, files: Vec<PathBuf>) -> Self {
        Obsolete {
            holder: Holder::Segment(reader),
            files,
        }
    }

    pub(crate) fn deletes(set: Weak<DeleteSet>, file: PathBuf) -> Self {
        Obsolete {
            holder: Holder::Deletes(set),
            files: vec![file],
        }
    }

    fn in_use(&self) -> bool {
        match &self.holder {
            Holder::Segment(w) => w.strong_count() > 0,
            Holder::Deletes(w) => w.strong_count() > 0,
        }
    }
}

/// Removes the files of every obsolete item no snapshot holds any more; keeps the rest
/// for a later pass. `failpoint` stops after the first removal (crash-safety tests).
pub(crate) fn collect(
    dir: &Path,
    obsolete: &mut Vec<Obsolete>,
    failpoint: Option<Failpoint>,
) -> Result<()> {
    let mut removed_any = false;
    let mut i = 0;
    while i < obsolete.len() {
        if obsolete[i].in_use() {
            i += 1;
            continue;
        }
        let item = obsolete.swap_remove(i);
        for file in &item.files {
            match std::fs::remove_file(file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(file, e)),
            }
            if failpoint == Some(Failpoint::DuringFileRemoval) {
                return Err(Error::Failpoint(Failpoint::DuringFileRemoval));
            }
            removed_any = true;
        }
    }
    if removed_any {
        fsync_dir(dir)?;
    }
    Ok(())
}

/// Removes heddle files in `dir` that `manifest` does not name: segment files and
/// delete sets written by a commit or merge that crashed before its manifest rename,
/// files of a merge's sources whose removal was interrupted, and `MANIFEST.tmp`. Only
/// regular files whose names heddle writes ([`names::classify`]) are touched: a user's
/// `seg-notes`, a directory or a symlink is left alone, whatever its name. Call with the
/// writer lock held.
pub(crate) fn remove_leftovers(dir: &Path, manifest: &Manifest) -> Result<Vec<String>> {
    let used: HashSet<String> = manifest.segments.iter().flat_map(|s| s.files()).collect();
    let mut removed = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        // A name that is not UTF-8 is not one heddle writes.
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if names::classify(&name).is_none() || used.contains(&name) {
            continue;
        }
        let path = entry.path();
        // `DirEntry::file_type` does not follow symlinks.
        let file_type = entry.file_type().map_err(|e| Error::io(&path, e))?;
        if !file_type.is_file() {
            continue;
        }
        match std::fs::remove_file(&path) {
            Ok(()) => removed.push(name),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&path, e)),
        }
    }
    if !removed.is_empty() {
        fsync_dir(dir)?;
    }
    Ok(removed)
}
