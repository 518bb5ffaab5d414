//! The index as a whole: the manifest that names its segments, the snapshot readers
//! search, and the one writer that publishes new snapshots.
//!
//! A commit becomes visible in exactly one place: [`writer::IndexWriter::commit`] renames
//! the new manifest over the old one (durability), then swaps the in-memory snapshot
//! pointer (visibility). Everything expensive happens before either.

mod check;
mod failpoint;
mod gc;
mod manifest;
mod merge;
mod merge_policy;
mod publish;
mod snapshot;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::RwLock;

pub use check::{CheckReport, check_index};
pub use failpoint::Failpoint;
pub use manifest::MANIFEST_FILE;
pub(crate) use manifest::Manifest;
pub use merge::MergeStats;
pub use merge_policy::MergePolicy;
pub(crate) use snapshot::Snapshot;
pub use writer::{CommitStats, DEFAULT_MAX_DOCUMENT_BYTES, IndexWriter};

use crate::analysis::{Analyzer, AnalyzerConfig};
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
}

/// State shared by an index handle, its searchers and its writer.
pub(crate) struct Shared {
    pub(crate) dir: PathBuf,
    pub(crate) analyzer: Arc<Analyzer>,
    /// The published snapshot. The lock is held only to clone or replace the `Arc`.
    pub(crate) current: RwLock<Arc<Snapshot>>,
}

/// An open index directory. Cheap to clone; all clones see the same published snapshot.
#[derive(Clone)]
pub struct Index {
    shared: Arc<Shared>,
}

impl Index {
    /// Creates an empty index in `dir` (created if missing; must be empty if present).
    pub fn create(dir: impl AsRef<Path>, settings: IndexSettings) -> Result<Index> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let mut entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
        if entries.next().is_some() {
            return Err(Error::NotEmpty {
                path: dir.to_path_buf(),
            });
        }
        let manifest = Manifest::new(settings.analyzer, settings.per_field);
        manifest.store(dir, |_| Ok(()))?;
        Index::open(dir)
    }

    /// Opens the index in `dir` at its last committed state.
    pub fn open(dir: impl AsRef<Path>) -> Result<Index> {
        let dir = dir.as_ref().to_path_buf();
        let manifest = Manifest::load(&dir)?;
        let analyzer = Arc::new(Analyzer::new(manifest.analyzer.clone()));
        let snapshot = Snapshot::open(&dir, manifest, None)?;
        Ok(Index {
            shared: Arc::new(Shared {
                dir,
                analyzer,
                current: RwLock::new(Arc::new(snapshot)),
            }),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    pub fn analyzer(&self) -> &Analyzer {
        &self.shared.analyzer
    }

    /// A searcher over the snapshot published now. It keeps that snapshot (and its
    /// files' maps) alive for as long as it lives, whatever commits happen meanwhile.
    pub fn searcher(&self) -> Searcher {
        let snapshot = self.shared.current.read().clone();
        Searcher::new(snapshot, self.shared.analyzer.clone())
    }

    /// Picks up a commit made by another process (this process's own writer publishes
    /// to its `Index` directly). Segments already open are reused.
    pub fn reload(&self) -> Result<()> {
        let manifest = Manifest::load(&self.shared.dir)?;
        let old = self.shared.current.read().clone();
        if manifest.generation == old.generation() {
            return Ok(());
        }
        let snapshot = Snapshot::open(&self.shared.dir, manifest, Some(&old))?;
        *self.shared.current.write() = Arc::new(snapshot);
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

    /// Fields new segments index (`flat`, and `title`/`text` with per-field postings).
    pub fn fields(&self) -> Vec<crate::Field> {
        self.shared.current.read().manifest().fields.clone()
    }
}
