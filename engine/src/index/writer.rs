//! The index's single writer: buffers documents, builds a segment, makes it durable, and
//! publishes a new snapshot. Readers wait on nothing but the final pointer swap.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Failpoint, Manifest, Shared, Snapshot};
use crate::directory::{DirLock, fsync_dir};
use crate::document::Document;
use crate::error::{Error, Result};
use crate::segment::{SegmentReader, build_segment, segment_name};

/// What one commit did and where its time went, phase by phase.
#[derive(Debug, Clone, Default)]
pub struct CommitStats {
    pub docs: usize,
    /// The new segment's name; `None` if there was nothing to commit.
    pub segment: Option<String>,
    pub generation: u64,
    /// Tokenization and inversion (parallel).
    pub analysis: Duration,
    /// Term merge and postings/dictionary/store encoding.
    pub encoding: Duration,
    /// Writing segment files (page cache).
    pub write: Duration,
    /// fsync of the segment files and the directory.
    pub fsync: Duration,
    /// Writing, fsyncing and renaming the manifest.
    pub manifest: Duration,
    /// Opening the new segment and swapping the snapshot pointer.
    pub publish: Duration,
    /// The time the snapshot lock was held exclusively (the only time a reader can wait).
    pub exclusive: Duration,
    pub total: Duration,
}

/// Adds documents and commits them. Holds the index's lock file while alive.
pub struct IndexWriter {
    shared: Arc<Shared>,
    _lock: DirLock,
    pool: rayon::ThreadPool,
    manifest: Manifest,
    buffer: Vec<Document>,
    /// Every committed or buffered external id.
    known_ids: HashSet<String>,
    failpoint: Option<Failpoint>,
    /// Set when a commit failed after its manifest rename began: disk and memory may
    /// disagree, so this writer refuses further work; reopen the index.
    poisoned: bool,
}

impl IndexWriter {
    pub(crate) fn new(shared: Arc<Shared>) -> Result<Self> {
        let lock = DirLock::acquire(&shared.dir)?;
        // Another process may have committed since this handle opened: start from disk.
        let manifest = Manifest::load(&shared.dir)?;
        let current = shared.current.read().clone();
        let snapshot = if manifest.generation == current.generation() {
            current
        } else {
            let fresh = Arc::new(Snapshot::open(
                &shared.dir,
                manifest.clone(),
                Some(&current),
            )?);
            *shared.current.write() = fresh.clone();
            fresh
        };
        let mut known_ids = HashSet::new();
        for segment in snapshot.segments() {
            for doc in 0..segment.doc_count() {
                known_ids.insert(segment.stored(doc)?.id.to_string());
            }
        }
        Ok(IndexWriter {
            shared,
            _lock: lock,
            pool: build_pool(0)?,
            manifest,
            buffer: Vec::new(),
            known_ids,
            failpoint: None,
            poisoned: false,
        })
    }

    /// Bounds the threads a commit uses to build its segment (0: one per core).
    pub fn set_threads(&mut self, threads: usize) -> Result<()> {
        self.pool = build_pool(threads)?;
        Ok(())
    }

    /// Buffers a document for the next commit. Rejects an empty id and an id already
    /// committed or buffered; a rejected document leaves the buffer unchanged.
    pub fn add(&mut self, doc: Document) -> Result<()> {
        if doc.id.is_empty() {
            return Err(Error::EmptyId);
        }
        if self.known_ids.contains(&doc.id) {
            return Err(Error::DuplicateId { id: doc.id });
        }
        self.known_ids.insert(doc.id.clone());
        self.buffer.push(doc);
        Ok(())
    }

    /// Documents waiting for the next commit.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Drops the buffered documents; the committed state is untouched.
    pub fn rollback(&mut self) {
        for doc in self.buffer.drain(..) {
            self.known_ids.remove(&doc.id);
        }
    }

    /// Makes a crash-safety test fail the next commits right after `step`.
    #[doc(hidden)]
    pub fn fail_at(&mut self, step: Option<Failpoint>) {
        self.failpoint = step;
    }

    fn check(&self, step: Failpoint) -> Result<()> {
        if self.failpoint == Some(step) {
            return Err(Error::Failpoint(step));
        }
        Ok(())
    }

    /// Builds the buffered documents into a segment, makes it durable, replaces the
    /// manifest atomically and publishes the new snapshot. When this returns `Ok`, the
    /// documents survive a crash and every new [`crate::Searcher`] sees them.
    pub fn commit(&mut self) -> Result<CommitStats> {
        if self.poisoned {
            return Err(Error::InvalidArgument(
                "an earlier commit failed after its manifest rename; reopen the index".into(),
            ));
        }
        let started = Instant::now();
        let mut stats = CommitStats {
            docs: self.buffer.len(),
            generation: self.manifest.generation,
            ..CommitStats::default()
        };
        if self.buffer.is_empty() {
            stats.total = started.elapsed();
            return Ok(stats);
        }
        let dir = self.shared.dir.clone();
        let name = segment_name(self.manifest.next_segment_id);
        let built = build_segment(
            &name,
            &self.buffer,
            &self.manifest.fields,
            &self.shared.analyzer,
            &self.pool,
        );
        stats.analysis = built.analysis;
        stats.encoding = built.encoding;

        let t = Instant::now();
        let mut files = Vec::with_capacity(built.files.len());
        for (component, bytes) in &built.files {
            let path = dir.join(component.file_name(&name));
            std::fs::write(&path, bytes).map_err(|e| Error::io(&path, e))?;
            files.push(path);
        }
        stats.write = t.elapsed();
        self.check(Failpoint::AfterSegmentWrite)?;

        let t = Instant::now();
        for path in &files {
            std::fs::File::open(path)
                .and_then(|f| f.sync_all())
                .map_err(|e| Error::io(path, e))?;
        }
        fsync_dir(&dir)?;
        stats.fsync = t.elapsed();
        self.check(Failpoint::AfterSegmentFsync)?;

        let t = Instant::now();
        let mut next = self.manifest.clone();
        next.generation += 1;
        next.next_segment_id += 1;
        next.segments.push(built.meta.clone());
        let failpoint = self.failpoint;
        // From the rename on, a failure leaves disk and memory possibly disagreeing.
        self.poisoned = true;
        next.store(&dir, |_| match failpoint {
            Some(Failpoint::AfterTempManifest) => {
                Err(Error::Failpoint(Failpoint::AfterTempManifest))
            }
            _ => Ok(()),
        })
        .inspect_err(|e| {
            if matches!(e, Error::Failpoint(_)) {
                self.poisoned = false; // the rename did not happen: the old state stands
            }
        })?;
        stats.manifest = t.elapsed();
        self.check(Failpoint::AfterManifestRename)?;

        let t = Instant::now();
        let segment = Arc::new(SegmentReader::open(&dir, &built.meta)?);
        let previous = self.shared.current.read().clone();
        let mut segments = previous.segments().to_vec();
        segments.push(segment);
        let snapshot = Arc::new(Snapshot::from_parts(next.clone(), segments));
        let swap = Instant::now();
        *self.shared.current.write() = snapshot;
        stats.exclusive = swap.elapsed();
        stats.publish = t.elapsed();
        self.poisoned = false;

        self.manifest = next;
        self.buffer.clear();
        stats.segment = Some(name);
        stats.generation = self.manifest.generation;
        stats.total = started.elapsed();
        Ok(stats)
    }
}

fn build_pool(threads: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("heddle-build-{i}"))
        .build()
        .map_err(|e| Error::InvalidArgument(format!("cannot start {threads} build threads: {e}")))
}
