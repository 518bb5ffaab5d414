//! The index as a whole: the manifest that names its segments, the snapshot readers
//! search, and the one writer that publishes new snapshots.
//!
//! A commit becomes visible in exactly one place: [`writer::IndexWriter::commit`] renames
//! the new manifest over the old one (durability), then swaps the in-memory snapshot
//! pointer (visibility). Everything expensive happens before either.

mod check;
mod gc;
mod ids;
mod manifest;
mod merge;
mod merge_policy;
mod publish;
mod snapshot;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::RwLock;

pub use crate::failpoint::Failpoint;
pub(crate) use check::vector_problems;
pub use check::{CheckReport, check_index};
pub use manifest::MANIFEST_FILE;
pub(crate) use manifest::Manifest;
pub use merge::MergeStats;
pub use merge_policy::MergePolicy;
pub(crate) use snapshot::{LiveSegment, Snapshot};
pub use writer::{
    AfterFlush, CommitStats, DEFAULT_MAX_DOCUMENT_BYTES, IndexWriter, MIN_MEMORY_BUDGET,
};

use crate::analysis::{Analyzer, AnalyzerConfig};
use crate::directory::{DirLock, LOCK_FILE, fsync_dir};
use crate::error::{Error, Result};
use crate::search::Searcher;
use crate::segment::SegmentMeta;

/// How a new index is set up. Stored in its manifest; fixed for the index's life.
#[derive(Debug, Clone, Default)]
pub struct IndexSettings {
    pub analyzer: AnalyzerConfig,
    /// Also index title and text as fields of their own (for per-field scoring and
    /// fusion). The flat field is always indexed.
    pub per_field: bool,
    /// Store a dense vector of this many dimensions (1 to [`crate::MAX_VECTOR_DIM`]) with
    /// every document, for [`Searcher::search_vector_exact`]: each added document must
    /// then have one. `None` (the default): no vectors, and documents must have none.
    pub vector_dim: Option<usize>,
}

/// State shared by an index handle, its searchers and its writer.
pub(crate) struct Shared {
    pub(crate) dir: PathBuf,
    /// The published snapshot. The lock is held only to clone or replace the `Arc`.
    pub(crate) current: RwLock<Arc<Snapshot>>,
}

/// An open index directory. Cheap to clone; all clones see the same published snapshot.
#[derive(Clone)]
pub struct Index {
    shared: Arc<Shared>,
}

/// How many times opening an index starts over from a newer manifest when a file the
/// previous one named has been removed meanwhile (see [`open_latest`]).
const OPEN_ATTEMPTS: u32 = 16;

impl Index {
    /// Creates an empty index in `dir`: created if missing (its creation made durable),
    /// otherwise it must be empty. The emptiness check and the first manifest happen
    /// under the writer lock, so of two processes creating one index, one gets an error.
    /// Files a crashed creation can leave (`LOCK`, `MANIFEST.tmp`) do not count.
    pub fn create(dir: impl AsRef<Path>, settings: IndexSettings) -> Result<Index> {
        let dir = dir.as_ref();
        let manifest = Manifest::for_settings(&settings)?;
        create_dir_durably(dir)?;
        // Look before locking, so that a directory of someone else's files is refused
        // without a LOCK file being left in it; then look again under the lock.
        refuse_unless_empty(dir)?;
        {
            let _lock = DirLock::acquire(dir)?;
            refuse_unless_empty(dir)?;
            manifest.store(dir, |_| Ok(()))?;
        }
        Index::open(dir)
    }

    /// Empties an index that another format version wrote, so that it can be rebuilt in
    /// this one (`heddle-eval index --force`; its "rebuild the index" advice). Under the
    /// writer lock: the old manifest must be a sound heddle file of another version; it is
    /// replaced by an empty manifest of this version with the generation and segment
    /// numbers carried on (no file name is reused), and the old files, which this heddle
    /// cannot read, are removed. A crash before the rebuild's commit leaves an empty index.
    pub fn clear_other_version(dir: impl AsRef<Path>, settings: IndexSettings) -> Result<Index> {
        let dir = dir.as_ref();
        {
            let _lock = DirLock::acquire(dir)?;
            let path = dir.join(MANIFEST_FILE);
            let bytes = crate::directory::read_regular(&path)?;
            let (version, body) = crate::segment::footer::verify_any_version(&path, &bytes)?;
            if version == crate::segment::FORMAT_VERSION {
                return Err(Error::InvalidArgument(format!(
                    "{}: is of this format version; open it instead",
                    path.display()
                )));
            }
            // The two numbers every version's manifest has kept, read without the rest.
            #[derive(serde::Deserialize)]
            struct Numbers {
                generation: u64,
                next_segment_id: u64,
            }
            let old: Numbers = serde_json::from_slice(body).map_err(|e| Error::Manifest {
                path: path.clone(),
                detail: e.to_string(),
            })?;
            let mut manifest = Manifest::for_settings(&settings)?;
            manifest.generation = old.generation.saturating_add(1);
            manifest.next_segment_id = old.next_segment_id.max(1);
            manifest.store(dir, |_| Ok(()))?;
            gc::remove_leftovers(dir, &manifest)?;
        }
        Index::open(dir)
    }

    /// Opens the index in `dir` at its last committed state. A writer in another
    /// process may publish and remove files while this runs; opening starts over from
    /// the newer manifest then, a bounded number of times.
    pub fn open(dir: impl AsRef<Path>) -> Result<Index> {
        let dir = dir.as_ref().to_path_buf();
        let snapshot = open_latest(&dir, None)?.expect("no previous snapshot to match");
        Ok(Index {
            shared: Arc::new(Shared {
                dir,
                current: RwLock::new(Arc::new(snapshot)),
            }),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// The analyzer of the published snapshot (a rebuild may change it).
    pub fn analyzer(&self) -> Arc<Analyzer> {
        self.shared.current.read().analyzer().clone()
    }

    /// A searcher over the snapshot published now. It keeps that snapshot (and its
    /// files' maps) alive for as long as it lives, whatever commits happen meanwhile.
    pub fn searcher(&self) -> Searcher {
        Searcher::new(self.shared.current.read().clone())
    }

    /// Picks up a commit made by another process (this process's own writer publishes
    /// to its `Index` directly). Segments already open are reused.
    pub fn reload(&self) -> Result<()> {
        let old = self.shared.current.read().clone();
        if let Some(snapshot) = open_latest(&self.shared.dir, Some(&old))? {
            // A commit through this handle's own writer may have published a newer
            // snapshot while this one was opening: replace only the snapshot it started
            // from, never step back over such a commit.
            let mut current = self.shared.current.write();
            if Arc::ptr_eq(&current, &old) {
                *current = Arc::new(snapshot);
            }
        }
        Ok(())
    }

    /// Takes the index's writer lock. Fails with [`Error::Locked`] if another writer,
    /// in this process or another, holds it.
    pub fn writer(&self) -> Result<IndexWriter> {
        IndexWriter::new(self.shared.clone())
    }

    /// The segments of the published snapshot, oldest first.
    pub fn segments(&self) -> Vec<SegmentMeta> {
        self.shared.current.read().manifest().segments.clone()
    }

    /// Committed documents, not counting deleted ones.
    pub fn num_docs(&self) -> u64 {
        self.shared.current.read().live_docs()
    }

    /// The generation of the published snapshot (bumped by every commit).
    pub fn generation(&self) -> u64 {
        self.shared.current.read().generation()
    }

    /// Distinct terms summed over segments (a term in two segments counts twice).
    pub fn term_count(&self) -> u64 {
        self.shared
            .current
            .read()
            .manifest()
            .segments
            .iter()
            .map(|s| s.terms.flat)
            .sum()
    }

    /// The dimension of the index's vectors; `None` if it stores none.
    pub fn vector_dim(&self) -> Option<usize> {
        self.shared.current.read().vector_dim()
    }

    /// Fields new segments index (`flat`, and `title`/`text` with per-field postings).
    pub fn fields(&self) -> Vec<crate::Field> {
        self.shared.current.read().manifest().fields.clone()
    }
}

/// Opens the snapshot the directory's manifest names, or `None` if that is `previous`'s
/// generation. A file named by the manifest can vanish before it is opened only if a
/// newer manifest no longer names it (a merge or rebuild published, then collected the
/// file): start over from that manifest, as Lucene's reader does. A file missing while
/// the manifest stands still is damage, and its error is returned.
fn open_latest(dir: &Path, previous: Option<&Snapshot>) -> Result<Option<Snapshot>> {
    let mut attempts = 0;
    loop {
        let manifest = Manifest::load(dir)?;
        let generation = manifest.generation;
        if previous.is_some_and(|p| p.generation() == generation) {
            return Ok(None);
        }
        let err = match Snapshot::open(dir, manifest, previous) {
            Ok(snapshot) => return Ok(Some(snapshot)),
            Err(e) if e.is_not_found() => e,
            Err(e) => return Err(e),
        };
        attempts += 1;
        if Manifest::load(dir)?.generation == generation {
            return Err(err);
        }
        if attempts >= OPEN_ATTEMPTS {
            return Err(Error::KeptChanging {
                path: dir.to_path_buf(),
                attempts,
            });
        }
    }
}

/// Creates `dir` and any missing parents, and fsyncs the parent of each directory it
/// created, so that a reported success survives a power loss.
fn create_dir_durably(dir: &Path) -> Result<()> {
    let mut missing = Vec::new();
    let mut at = dir;
    while !at.exists() {
        missing.push(at);
        match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => at = p,
            _ => break,
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    for created in missing.iter().rev() {
        let parent = created
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        fsync_dir(parent)?;
    }
    Ok(())
}

/// Refuses a directory that holds anything but what a crashed [`Index::create`] can
/// leave behind. Names a few of the entries found, so the user sees whose they are.
fn refuse_unless_empty(dir: &Path) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let leftover = name == LOCK_FILE || name == format!("{MANIFEST_FILE}.tmp");
        if !leftover || entry.file_type().is_ok_and(|t| !t.is_file()) {
            found.push(name);
        }
    }
    refuse_entries(dir, found)
}

/// Refuses a directory that holds entries under names heddle does not write (anything
/// but `MANIFEST`, `LOCK` and the names of [`crate::segment::names::classify`]),
/// naming a few of them.
fn refuse_foreign(dir: &Path) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let ours = name == MANIFEST_FILE
            || name == LOCK_FILE
            || crate::segment::names::classify(&name).is_some();
        if !ours {
            found.push(name);
        }
    }
    refuse_entries(dir, found)
}

/// `NotEmpty` naming a few of `found`, if there are any.
fn refuse_entries(dir: &Path, mut found: Vec<String>) -> Result<()> {
    if found.is_empty() {
        return Ok(());
    }
    found.sort();
    let more = found.len().saturating_sub(5);
    found.truncate(5);
    let mut listed = found.join(", ");
    if more > 0 {
        listed.push_str(&format!(" and {more} more"));
    }
    Err(Error::NotEmpty {
        path: dir.to_path_buf(),
        found: listed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_makes_every_directory_it_creates_durable_in_its_parent() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b/idx");
        crate::directory::take_synced_dirs();
        Index::create(&dir, IndexSettings::default()).unwrap();
        let synced = crate::directory::take_synced_dirs();
        for parent in [
            tmp.path().to_path_buf(),
            tmp.path().join("a"),
            tmp.path().join("a/b"),
        ] {
            assert!(
                synced.contains(&parent),
                "{parent:?} not fsynced: {synced:?}"
            );
        }
        // The first manifest's rename, in the index directory itself.
        assert!(synced.contains(&dir), "{synced:?}");
    }
}
