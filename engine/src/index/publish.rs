//! The one protocol by which anything becomes part of the index, shared by commits and
//! merges: write and fsync new files, replace the manifest atomically, swap the snapshot
//! pointer, then let go of what is no longer named. The [`WriterState`] mutex serialises
//! publications (a commit and a background merge); readers never take it.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::gc::{self, Obsolete};
use super::snapshot::LiveSegment;
use super::{Failpoint, Manifest, Shared, Snapshot};
use crate::directory::fsync_dir;
use crate::error::{Error, Result};
use crate::segment::CommitProgress;
use crate::segment::SegmentComponent;
use crate::vectors::GraphSettings;

/// What the writer and its merges share, behind one mutex.
pub(crate) struct WriterState {
    /// The last published manifest; `shared.current` always matches it.
    pub manifest: Manifest,
    /// Segment numbers handed out (to commits and merges), never reused.
    pub next_segment_id: u64,
    pub failpoint: Option<Failpoint>,
    /// Set when a publication failed after its manifest rename began: disk and memory
    /// may disagree, so the writer refuses further work until reopened.
    pub poisoned: bool,
    /// Files waiting for the last reader of their snapshot to let go.
    pub obsolete: Vec<Obsolete>,
    /// A merge is running (one at a time).
    pub merging: bool,
    /// The error of the last background merge, reported by `wait_for_merges`.
    pub merge_error: Option<Error>,
    /// Which segments the writer's builds and merges give a vector graph.
    pub graph: GraphSettings,
    /// The commit observer, told of a merge's graph building too (merges run on other
    /// threads, outside any commit).
    pub progress: Option<CommitProgress>,
}

impl WriterState {
    pub(crate) fn new(manifest: Manifest) -> Self {
        WriterState {
            next_segment_id: manifest.next_segment_id,
            manifest,
            failpoint: None,
            poisoned: false,
            obsolete: Vec::new(),
            merging: false,
            merge_error: None,
            graph: GraphSettings::default(),
            progress: None,
        }
    }

    pub(crate) fn check(&self, step: Failpoint) -> Result<()> {
        if self.failpoint == Some(step) {
            return Err(Error::Failpoint(step));
        }
        Ok(())
    }

    pub(crate) fn allocate_segment_id(&mut self) -> u64 {
        let id = self.next_segment_id;
        // Never wraps: publishing refuses a number above the manifest's maximum first.
        self.next_segment_id = self.next_segment_id.saturating_add(1);
        id
    }

    pub(crate) fn ensure_healthy(&self) -> Result<()> {
        if self.poisoned {
            return Err(Error::InvalidArgument(
                "an earlier commit or merge failed after its manifest rename; reopen the index"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// Writes a segment's files (not yet fsynced: see [`sync_files`]), each created fresh
/// ([`crate::directory::create_fresh`]). On failure removes the files it created, and
/// only those: a symlink planted under one of the names stays where it was.
pub(crate) fn write_segment_files(
    dir: &Path,
    name: &str,
    files: &[(SegmentComponent, Vec<u8>)],
) -> Result<Vec<std::path::PathBuf>> {
    let mut paths = Vec::with_capacity(files.len());
    for (component, bytes) in files {
        let path = dir.join(component.file_name(name));
        let written = crate::directory::write_fresh(&path, bytes);
        if matches!(written, Err(Error::NotRegular { .. })) {
            // Not created by us: not ours to remove.
        } else {
            paths.push(path);
        }
        if let Err(e) = written {
            for path in &paths {
                let _ = std::fs::remove_file(path);
            }
            return Err(e);
        }
    }
    Ok(paths)
}

/// fsyncs `paths` and the directory holding them.
pub(crate) fn sync_files(dir: &Path, paths: &[std::path::PathBuf]) -> Result<()> {
    for path in paths {
        crate::directory::open_regular(path)?
            .sync_all()
            .map_err(|e| Error::io(path, e))?;
    }
    fsync_dir(dir)
}

/// Replaces the manifest with `next` and publishes `snapshot` (built from `next`) to
/// readers. Call with the state lock held. Returns the time the snapshot pointer was
/// held exclusively.
pub(crate) fn publish(
    shared: &Shared,
    state: &mut WriterState,
    mut next: Manifest,
    snapshot: impl FnOnce(Manifest) -> Snapshot,
) -> Result<(Duration, Duration)> {
    let started = Instant::now();
    next.next_segment_id = next.next_segment_id.max(state.next_segment_id);
    // Refused before anything is replaced: a manifest every reader would refuse.
    let limit = super::manifest::MAX_COUNTER;
    if next.generation > limit || next.next_segment_id > limit {
        return Err(Error::InvalidArgument(format!(
            "the index has used up its generations or segment numbers ({limit}): build a new \
             index in another directory and put it in this one's place (a rebuild in place, \
             as `index --force`, keeps the numbers so that readers never see one reused)"
        )));
    }
    let failpoint = state.failpoint;
    // From the rename on, disk and memory may disagree until the swap below.
    state.poisoned = true;
    let stored = next.store(&shared.dir, |_| match failpoint {
        Some(Failpoint::AfterTempManifest) => Err(Error::Failpoint(Failpoint::AfterTempManifest)),
        _ => Ok(()),
    });
    if let Err(e) = stored {
        if matches!(e, Error::Failpoint(Failpoint::AfterTempManifest)) {
            state.poisoned = false; // the rename did not happen: the old state stands
        }
        return Err(e);
    }
    let manifest_time = started.elapsed();
    state.check(Failpoint::AfterManifestRename)?;
    let snapshot = Arc::new(snapshot(next.clone()));
    let swap = Instant::now();
    *shared.current.write() = snapshot;
    let exclusive = swap.elapsed();
    state.manifest = next;
    state.poisoned = false;
    Ok((manifest_time, exclusive))
}

/// Queues the files of a segment the published manifest no longer names (merged away
/// or dropped by a reset) for removal once no snapshot holds it.
pub(crate) fn retire(dir: &Path, state: &mut WriterState, old: &LiveSegment) {
    let meta = old.reader.meta();
    let files = meta
        .components()
        .into_iter()
        .map(|c| dir.join(c.file_name(&meta.name)))
        .collect();
    state
        .obsolete
        .push(Obsolete::segment(Arc::downgrade(&old.reader), files));
    if let Some(d) = &old.deletes {
        state
            .obsolete
            .push(Obsolete::deletes(Arc::downgrade(d), d.path().to_path_buf()));
    }
}

/// Removes what no snapshot uses any more.
pub(crate) fn collect_garbage(shared: &Shared, state: &mut WriterState) -> Result<()> {
    let failpoint = state.failpoint;
    gc::collect(&shared.dir, &mut state.obsolete, failpoint)
}
