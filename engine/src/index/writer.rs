//! The index's single writer: buffers additions and deletions, builds a segment, and
//! publishes both in one atomic commit. Readers wait on nothing but the final pointer
//! swap; merges run on a background thread and publish the same way.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use roaring::RoaringBitmap;

use super::gc::{self, Obsolete};
use super::merge::{MergeStats, run_merge};
use super::merge_policy::{self, MergePolicy};
use super::publish::{self, WriterState};
use super::snapshot::LiveSegment;
use super::{Failpoint, IndexSettings, Manifest, Shared, Snapshot};
use crate::analysis::Analyzer;
use crate::directory::{DirLock, LOCK_FILE};
use crate::document::Document;
use crate::error::{Error, Result};
use crate::segment::deletes::{self, DeleteSet};
use crate::segment::{
    CommitPhase, CommitProgress, DeletesMeta, PhaseReport, Reorder, ReorderProgress, SegmentReader,
    build_segment, segment_name,
};

/// The default of [`IndexWriter::set_max_document_bytes`]: 64 MiB, far above any
/// abstract or article, low enough that one line cannot exhaust memory on its own.
pub const DEFAULT_MAX_DOCUMENT_BYTES: usize = 64 << 20;

/// What one commit did and where its time went, phase by phase.
#[derive(Debug, Clone, Default)]
pub struct CommitStats {
    pub docs: usize,
    /// Documents deleted by this commit (upserts included).
    pub deleted: usize,
    /// Segments this commit dropped because it was a [`IndexWriter::reset`].
    pub replaced_segments: usize,
    /// The new segment's name; `None` if the commit added no documents.
    pub segment: Option<String>,
    pub generation: u64,
    /// Tokenization and inversion (parallel).
    pub analysis: Duration,
    /// Choosing the new segment's document order ([`IndexWriter::set_reorder`]).
    pub reorder: Duration,
    /// Term merge and postings/dictionary/store encoding.
    pub encoding: Duration,
    /// Writing segment and delete files (page cache).
    pub write: Duration,
    /// fsync of the new files and the directory.
    pub fsync: Duration,
    /// Writing, fsyncing and renaming the manifest.
    pub manifest: Duration,
    /// Opening the new segment and swapping the snapshot pointer.
    pub publish: Duration,
    /// The time the snapshot pointer was held exclusively (the only time a reader can wait).
    pub exclusive: Duration,
    pub total: Duration,
}

/// Adds, deletes and commits. Holds the index's lock file while alive.
pub struct IndexWriter {
    shared: Arc<Shared>,
    state: Arc<Mutex<WriterState>>,
    _lock: DirLock,
    pool: rayon::ThreadPool,
    buffer: Vec<Document>,
    /// External ids of committed documents to delete at the next commit.
    pending_deletes: BTreeSet<String>,
    /// Every live committed id and every buffered id.
    known_ids: HashSet<String>,
    policy: MergePolicy,
    max_document_bytes: usize,
    background_merges: bool,
    merge_thread: Option<JoinHandle<()>>,
    /// Set by [`IndexWriter::reset`]: the next commit starts the index over.
    reset: Option<Reset>,
    reorder: Reorder,
    reorder_progress: Option<ReorderProgress>,
    commit_progress: Option<CommitProgress>,
}

/// A pending start-over: the settings the next commit's manifest takes, and what
/// [`IndexWriter::rollback`] restores if it is abandoned.
struct Reset {
    manifest: Manifest,
    analyzer: Arc<Analyzer>,
    committed_ids: HashSet<String>,
}

impl IndexWriter {
    pub(crate) fn new(shared: Arc<Shared>) -> Result<Self> {
        let lock = DirLock::acquire(&shared.dir)?;
        // Another process may have committed since this handle opened: start from disk,
        // and remove whatever a crashed writer left behind.
        let manifest = Manifest::load(&shared.dir)?;
        gc::remove_leftovers(&shared.dir, &manifest)?;
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
        for live in snapshot.segments() {
            live.reader.scan_stored(|doc, id, _| {
                if !live.is_deleted(doc) {
                    known_ids.insert(id.to_string());
                }
                Ok(())
            })?;
        }
        Ok(IndexWriter {
            shared,
            state: Arc::new(Mutex::new(WriterState::new(manifest))),
            _lock: lock,
            pool: build_pool(0)?,
            buffer: Vec::new(),
            pending_deletes: BTreeSet::new(),
            known_ids,
            policy: MergePolicy::default(),
            max_document_bytes: DEFAULT_MAX_DOCUMENT_BYTES,
            background_merges: true,
            merge_thread: None,
            reset: None,
            reorder: Reorder::None,
            reorder_progress: None,
            commit_progress: None,
        })
    }

    /// Bounds the threads a commit uses to build its segment (0: one per core).
    pub fn set_threads(&mut self, threads: usize) -> Result<()> {
        self.pool = build_pool(threads)?;
        Ok(())
    }

    /// How each commit orders the documents of the segment it builds (default
    /// [`Reorder::None`], insertion order). Not stored in the index: the order is a
    /// property of each segment, which any reader reads the same way. Merges keep their
    /// sources' orders, one after the other.
    pub fn set_reorder(&mut self, reorder: Reorder) {
        self.reorder = reorder;
    }

    /// Receives reordering progress during commits (see [`ReorderProgress`]).
    pub fn set_reorder_progress(&mut self, progress: Option<ReorderProgress>) {
        self.reorder_progress = progress;
    }

    /// Tells `observer` each phase of every commit as it starts, progresses and ends
    /// (see [`CommitProgress`]), so that a caller can show a long commit is alive. `None`
    /// (the default) stops the reports; either way the commit does the same work.
    pub fn set_commit_progress(&mut self, observer: Option<CommitProgress>) {
        self.commit_progress = observer;
    }

    /// Sets the policy that bounds the number of segments.
    pub fn set_merge_policy(&mut self, policy: MergePolicy) {
        self.policy = policy;
    }

    /// Largest title + text, in bytes, that [`IndexWriter::add`] accepts (default
    /// [`DEFAULT_MAX_DOCUMENT_BYTES`]). Tokens over the analyzer's length limit are
    /// dropped, not rejected.
    pub fn set_max_document_bytes(&mut self, limit: usize) {
        self.max_document_bytes = limit;
    }

    /// Whether commits start merges in the background (default: yes).
    pub fn set_background_merges(&mut self, enabled: bool) {
        self.background_merges = enabled;
    }

    /// Buffers a document for the next commit. Rejects an empty id and an id already
    /// committed (and not deleted) or buffered; a rejected document changes nothing.
    pub fn add(&mut self, doc: Document) -> Result<()> {
        if doc.id.is_empty() {
            return Err(Error::EmptyId);
        }
        let bytes = doc.title.len() + doc.text.len();
        if bytes > self.max_document_bytes {
            return Err(Error::DocumentTooLarge {
                id: doc.id,
                bytes,
                limit: self.max_document_bytes,
            });
        }
        if self.known_ids.contains(&doc.id) {
            return Err(Error::DuplicateId { id: doc.id });
        }
        self.known_ids.insert(doc.id.clone());
        self.buffer.push(doc);
        Ok(())
    }

    /// Deletes the document with external id `id` at the next commit (or drops it from
    /// the buffer). Returns whether such a document existed.
    pub fn delete(&mut self, id: &str) -> bool {
        if !self.known_ids.remove(id) {
            return false;
        }
        if let Some(pos) = self.buffer.iter().position(|d| d.id == id) {
            self.buffer.remove(pos);
        } else {
            self.pending_deletes.insert(id.to_string());
        }
        true
    }

    /// Replaces the document with the same id, if any, in the same commit.
    pub fn upsert(&mut self, doc: Document) -> Result<()> {
        self.delete(&doc.id);
        self.add(doc)
    }

    /// Documents waiting for the next commit.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Starts the index over at the next commit: that commit drops every committed
    /// document and segment, takes `settings` (analyzer, fields) for the index, and
    /// publishes the documents added after this call, all in one manifest replace. Until
    /// then readers see the old index whole, and a failed or abandoned commit leaves it
    /// as it was: rebuilding an index is a commit like any other, under the writer's
    /// lock. Buffered additions and deletions are dropped; waits for a running merge.
    pub fn reset(&mut self, settings: IndexSettings) -> Result<()> {
        self.wait_for_merges()?;
        self.rollback();
        let mut manifest = Manifest::new(settings.analyzer, settings.per_field);
        manifest.next_segment_id = 0; // taken from the writer's state at commit
        self.reset = Some(Reset {
            analyzer: Arc::new(Analyzer::new(manifest.analyzer.clone())),
            manifest,
            committed_ids: std::mem::take(&mut self.known_ids),
        });
        Ok(())
    }

    /// Undoes [`super::Index::create`] when its first commit failed or never came: the
    /// manifest (generation 0, naming nothing) is removed while the lock is still held,
    /// then the lock file, then the directory itself if `remove_dir` (the caller made
    /// it). A process that opens the lock file after it is unlinked gets a fresh one, in
    /// a directory that is then not removed. Refused once anything was committed.
    pub fn discard_new_index(mut self, remove_dir: bool) -> Result<()> {
        self.wait_for_merges()?;
        let dir = self.shared.dir.clone();
        let manifest = Manifest::load(&dir)?;
        if manifest.generation != 0 || !manifest.segments.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "{}: has commits; only a new, empty index can be discarded",
                dir.display()
            )));
        }
        let manifest_path = dir.join(super::MANIFEST_FILE);
        std::fs::remove_file(&manifest_path).map_err(|e| Error::io(&manifest_path, e))?;
        let lock_path = dir.join(LOCK_FILE);
        std::fs::remove_file(&lock_path).map_err(|e| Error::io(&lock_path, e))?;
        if remove_dir {
            let _ = std::fs::remove_dir(&dir); // not empty: someone else is using it
        }
        Ok(())
    }

    /// Drops buffered additions and deletions, and a pending [`IndexWriter::reset`]; the
    /// committed state is untouched.
    pub fn rollback(&mut self) {
        for doc in self.buffer.drain(..) {
            self.known_ids.remove(&doc.id);
        }
        self.known_ids
            .extend(std::mem::take(&mut self.pending_deletes));
        if let Some(reset) = self.reset.take() {
            self.known_ids = reset.committed_ids;
        }
    }

    /// Makes a crash-safety test fail commits and merges right after `step`.
    #[doc(hidden)]
    pub fn fail_at(&mut self, step: Option<Failpoint>) {
        self.state.lock().failpoint = step;
    }

    /// Builds the buffered documents into a segment, resolves the buffered deletions,
    /// makes both durable, replaces the manifest atomically and publishes the new
    /// snapshot. When this returns `Ok`, the changes survive a crash and every new
    /// [`crate::Searcher`] sees them; on error the previous state stands (unless the error
    /// came after the manifest rename: then the commit is durable and the writer must be
    /// reopened).
    pub fn commit(&mut self) -> Result<CommitStats> {
        let started = Instant::now();
        self.state.lock().ensure_healthy()?;
        let mut stats = CommitStats {
            docs: self.buffer.len(),
            ..CommitStats::default()
        };
        if self.buffer.is_empty() && self.pending_deletes.is_empty() && self.reset.is_none() {
            stats.generation = self.state.lock().manifest.generation;
            stats.total = started.elapsed();
            return Ok(stats);
        }
        // What the new segment is built with and the new snapshot analyzes queries with:
        // a reset's settings, else the index's (only a reset by this writer changes them).
        let analyzer = match &self.reset {
            Some(r) => r.analyzer.clone(),
            None => self.shared.current.read().analyzer().clone(),
        };
        // The expensive part, with no lock held.
        let built = if self.buffer.is_empty() {
            None
        } else {
            let (name, fields) = {
                let mut st = self.state.lock();
                let fields = match &self.reset {
                    Some(r) => r.manifest.fields.clone(),
                    None => st.manifest.fields.clone(),
                };
                (segment_name(st.allocate_segment_id()), fields)
            };
            let built = build_segment(
                &name,
                &self.buffer,
                &fields,
                &analyzer,
                &self.pool,
                &self.reorder,
                self.reorder_progress.clone(),
                self.commit_progress.as_ref(),
            );
            stats.analysis = built.analysis;
            stats.reorder = built.reorder;
            stats.encoding = built.encoding;
            Some(built)
        };

        // Publication: serialised with merges, invisible to readers until the swap.
        let dir = self.shared.dir.clone();
        let observer = self.commit_progress.as_ref();
        let mut st = self.state.lock();
        let t = Instant::now();
        let report = PhaseReport::start(observer, CommitPhase::Write, 1);
        let mut paths = match &built {
            Some(b) => publish::write_segment_files(&dir, &b.meta.name, &b.files)?,
            None => Vec::new(),
        };
        let current = self.shared.current.read().clone();
        let mut next = match &self.reset {
            Some(r) => Manifest {
                generation: st.manifest.generation,
                next_segment_id: st.manifest.next_segment_id,
                ..r.manifest.clone()
            },
            None => st.manifest.clone(),
        };
        next.generation += 1;
        // A reset keeps none of the committed segments: they become garbage below.
        let (mut segments, dropped): (Vec<LiveSegment>, Vec<LiveSegment>) = match self.reset {
            Some(_) => (Vec::new(), current.segments().to_vec()),
            None => (current.segments().to_vec(), Vec::new()),
        };
        let mut replaced: Vec<Arc<DeleteSet>> = Vec::new();
        let mut new_delete_files = Vec::new();
        if !self.pending_deletes.is_empty() && self.reset.is_none() {
            for (i, live) in current.segments().iter().enumerate() {
                let mut hits = RoaringBitmap::new();
                live.reader.scan_stored(|doc, id, _| {
                    if !live.is_deleted(doc) && self.pending_deletes.contains(id) {
                        hits.insert(doc);
                    }
                    Ok(())
                })?;
                if hits.is_empty() {
                    continue;
                }
                stats.deleted += hits.len() as usize;
                if let Some(old) = &live.deletes {
                    hits |= old.bitmap();
                    replaced.push(old.clone());
                }
                let meta = &mut next.segments[i];
                let file = deletes::file_name(&meta.name, next.generation);
                let path = dir.join(&file);
                std::fs::write(&path, deletes::file_bytes(&hits))
                    .map_err(|e| Error::io(&path, e))?;
                paths.push(path);
                meta.deletes = Some(DeletesMeta {
                    file: file.clone(),
                    count: hits.len() as u32,
                });
                new_delete_files.push((i, file, meta.doc_count));
            }
        }
        report.finish();
        stats.write = t.elapsed();
        st.check(Failpoint::AfterSegmentWrite)?;

        let t = Instant::now();
        let report = PhaseReport::start(observer, CommitPhase::Fsync, 1);
        publish::sync_files(&dir, &paths)?;
        report.finish();
        stats.fsync = t.elapsed();
        st.check(Failpoint::AfterSegmentFsync)?;

        let t = Instant::now();
        let report = PhaseReport::start(observer, CommitPhase::Publish, 1);
        for (i, file, doc_count) in new_delete_files {
            segments[i].deletes = Some(Arc::new(DeleteSet::open(&dir, &file, doc_count)?));
        }
        if let Some(b) = &built {
            next.segments.push(b.meta.clone());
            segments.push(LiveSegment {
                reader: Arc::new(SegmentReader::open(&dir, &b.meta)?),
                deletes: None,
            });
        }
        drop(current);
        let opened = t.elapsed();
        let (manifest_time, exclusive) = publish::publish(&self.shared, &mut st, next, |m| {
            Snapshot::from_parts(m, segments, analyzer)
        })?;
        report.finish();
        stats.manifest = manifest_time;
        stats.publish = opened + exclusive;
        stats.exclusive = exclusive;
        for old in replaced {
            st.obsolete.push(Obsolete::deletes(
                Arc::downgrade(&old),
                old.path().to_path_buf(),
            ));
        }
        stats.replaced_segments = dropped.len();
        for old in dropped {
            publish::retire(&dir, &mut st, &old); // and let go of it, for the GC below
        }
        self.reset = None; // its committed ids named documents that are gone
        stats.generation = st.manifest.generation;
        self.buffer.clear();
        self.pending_deletes.clear();
        stats.segment = built.map(|b| b.meta.name);
        publish::collect_garbage(&self.shared, &mut st)?;
        drop(st);
        self.maybe_merge_in_background();
        stats.total = started.elapsed();
        Ok(stats)
    }

    /// Merges segments now, on this thread, until at most `max_segments` remain (one
    /// merge of the smallest adjacent run that gets there). Waits for a background merge
    /// first. Returns `None` if the index already had few enough segments.
    pub fn merge(&mut self, max_segments: usize) -> Result<Option<MergeStats>> {
        self.wait_for_merges()?;
        run_merge(&self.shared, &self.state, |sizes| {
            merge_policy::forced(sizes, max_segments)
        })
    }

    /// Waits for a running background merge; returns its error, if it failed.
    pub fn wait_for_merges(&mut self) -> Result<()> {
        if let Some(handle) = self.merge_thread.take() {
            let _ = handle.join();
        }
        match self.state.lock().merge_error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Removes files of old snapshots that no reader holds any more. Commits and merges
    /// do this themselves; call it after dropping long-lived searchers.
    pub fn collect_garbage(&mut self) -> Result<()> {
        let mut st = self.state.lock();
        publish::collect_garbage(&self.shared, &mut st)
    }

    fn maybe_merge_in_background(&mut self) {
        if !self.background_merges || self.merge_thread.as_ref().is_some_and(|h| !h.is_finished()) {
            return;
        }
        if let Some(done) = self.merge_thread.take() {
            let _ = done.join();
        }
        let sizes: Vec<u64> = self
            .state
            .lock()
            .manifest
            .segments
            .iter()
            .map(|s| s.live_docs() as u64)
            .collect();
        if self.policy.choose(&sizes).is_none() {
            return;
        }
        let (shared, state, policy) = (self.shared.clone(), self.state.clone(), self.policy);
        let spawned = std::thread::Builder::new()
            .name("heddle-merge".into())
            .spawn(move || {
                loop {
                    match run_merge(&shared, &state, |sizes| policy.choose(sizes)) {
                        Ok(Some(_)) => continue,
                        Ok(None) => break,
                        Err(e) => {
                            state.lock().merge_error = Some(e);
                            break;
                        }
                    }
                }
            });
        match spawned {
            Ok(handle) => self.merge_thread = Some(handle),
            Err(e) => self.state.lock().merge_error = Some(Error::io(&self.shared.dir, e)),
        }
    }
}

impl Drop for IndexWriter {
    fn drop(&mut self) {
        if let Some(handle) = self.merge_thread.take() {
            let _ = handle.join();
        }
        let mut st = self.state.lock();
        let _ = publish::collect_garbage(&self.shared, &mut st);
    }
}

fn build_pool(threads: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("heddle-build-{i}"))
        .build()
        .map_err(|e| Error::InvalidArgument(format!("cannot start {threads} build threads: {e}")))
}
