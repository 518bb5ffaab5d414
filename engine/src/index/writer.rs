//! The index's single writer: buffers additions and deletions within a memory budget,
//! writing a segment no reader sees each time the buffer fills, and publishes all of
//! them and the deletions in one atomic commit. Readers wait on nothing but the final
//! pointer swap; merges run on a background thread and publish the same way.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use roaring::RoaringBitmap;

use super::gc::{self, Obsolete};
use super::ids::{Fingerprints, IdHasher};
use super::merge::{MergeStats, run_merge};
use super::merge_policy::{self, MergePolicy};
use super::publish::{self, WriterState};
use super::snapshot::LiveSegment;
use super::{Failpoint, IndexSettings, Manifest, Shared, Snapshot};
use crate::analysis::Analyzer;
use crate::directory::{DirLock, LOCK_FILE, fsync_dir};
use crate::document::Document;
use crate::error::{Error, Result};
use crate::segment::deletes::{self, DeleteSet};
use crate::segment::{
    BuiltSegment, CommitPhase, CommitProgress, DeletesMeta, PhaseReport, Reorder, ReorderProgress,
    SegmentMeta, SegmentReader, build_segment, segment_name,
};
use crate::vectors::GraphSettings;

/// The default of [`IndexWriter::set_max_document_bytes`]: 64 MiB, far above any
/// abstract or article, low enough that one line cannot exhaust memory on its own.
pub const DEFAULT_MAX_DOCUMENT_BYTES: usize = 64 << 20;

/// What a segment build holds beyond its documents, per byte of them, until the first
/// flush measures it (see [`IndexWriter::set_memory_budget`]): the first segment is then
/// an eighth of what the id fingerprints leave of the budget, a probe that stays within
/// it unless the build needs more
/// than 7 bytes a byte of documents (measured: 1 to 3 on real and synthetic text, and 28
/// on a test corpus where every fifth word is unique; docs/DECISIONS.md).
const INITIAL_BUILD_RATIO: f64 = 7.0;

/// The smallest memory budget: below it a build's fixed costs (each field's maps, each
/// file's buffers) outweigh the documents, the measured ratio grows as segments shrink,
/// and flushes would shrink to a few documents each.
pub const MIN_MEMORY_BUDGET: usize = 1 << 20;

/// What one commit did and where its time went, phase by phase.
#[derive(Debug, Clone, Default)]
pub struct CommitStats {
    pub docs: usize,
    /// Documents deleted by this commit (upserts included).
    pub deleted: usize,
    /// Segments this commit dropped because it was a [`IndexWriter::reset`].
    pub replaced_segments: usize,
    /// The last new segment's name; `None` if the commit added no documents.
    pub segment: Option<String>,
    /// Every segment this commit published, in order: those the memory budget flushed
    /// while documents were added, then the last one.
    pub segments: Vec<String>,
    pub generation: u64,
    /// Tokenization and inversion (parallel), summed over the commit's segments, as are
    /// reorder, encoding, write and fsync.
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
    /// Heap bytes of the buffered documents' strings and vectors
    /// ([`Document::heap_bytes`]).
    buffer_text_bytes: usize,
    /// Fingerprint → how many buffered documents have it.
    buffer_ids: HashMap<u64, u32>,
    /// Segments written since the last commit, which no manifest names yet, in order.
    flushed: Vec<Flushed>,
    /// The ids of every document in `flushed`, less those deleted since.
    flushed_ids: Fingerprints,
    /// Deletions of flushed documents, by id: for each, how many segments had been
    /// flushed when it was made (it deletes the latest holder among those). Resolved
    /// against the segments' stored ids at commit.
    flushed_deletes: BTreeMap<String, Vec<u32>>,
    /// External ids of committed documents to delete at the next commit.
    pending_deletes: BTreeSet<String>,
    /// Every live committed id, as fingerprints (see [`super::ids`]).
    committed_ids: Fingerprints,
    hasher: IdHasher,
    memory_budget: usize,
    /// The build's heap per byte of the buffered documents (`buffer_memory`), the most
    /// any flush of this writer measured; `None` before the first.
    build_ratio: Option<f64>,
    high_water: usize,
    /// A flushed segment's fsync failed: no commit until a rollback.
    flush_failed: bool,
    /// Phase times of the flushes since the last commit.
    flush_stats: CommitStats,
    policy: MergePolicy,
    max_document_bytes: usize,
    background_merges: bool,
    merge_thread: Option<JoinHandle<()>>,
    /// Set by [`IndexWriter::reset`]: the next commit starts the index over.
    reset: Option<Reset>,
    reorder: Reorder,
    reorder_progress: Option<ReorderProgress>,
    commit_progress: Option<CommitProgress>,
    after_flush: Option<AfterFlush>,
}

/// Called after each segment the memory budget made the writer write (see
/// [`IndexWriter::set_after_flush`]).
pub type AfterFlush = Arc<dyn Fn() + Send + Sync>;

/// A pending start-over: the settings the next commit's manifest takes, and what
/// [`IndexWriter::rollback`] restores if it is abandoned.
struct Reset {
    manifest: Manifest,
    analyzer: Arc<Analyzer>,
    committed_ids: Fingerprints,
}

/// A segment the memory budget wrote before the commit: durable on disk, named by no
/// manifest, so no reader sees it; the commit publishes it, a rollback removes it.
struct Flushed {
    meta: SegmentMeta,
    /// Its files, each fsynced (with the directory) when it was written.
    files: Vec<PathBuf>,
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
        let hasher = IdHasher::new();
        let mut fingerprints = Vec::with_capacity(snapshot.live_docs() as usize);
        for live in snapshot.segments() {
            live.reader.scan_stored(|doc, id, _| {
                if !live.is_deleted(doc) {
                    fingerprints.push(hasher.fingerprint(id));
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
            buffer_text_bytes: 0,
            buffer_ids: HashMap::new(),
            flushed: Vec::new(),
            flushed_ids: Fingerprints::default(),
            flushed_deletes: BTreeMap::new(),
            pending_deletes: BTreeSet::new(),
            committed_ids: Fingerprints::from_unsorted(fingerprints),
            hasher,
            memory_budget: usize::MAX,
            build_ratio: None,
            high_water: 0,
            flush_failed: false,
            flush_stats: CommitStats::default(),
            policy: MergePolicy::default(),
            max_document_bytes: DEFAULT_MAX_DOCUMENT_BYTES,
            background_merges: true,
            merge_thread: None,
            reset: None,
            reorder: Reorder::None,
            reorder_progress: None,
            commit_progress: None,
            after_flush: None,
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
        self.state.lock().progress = observer.clone();
        self.commit_progress = observer;
    }

    /// Calls `hook` after each segment build the memory budget makes the writer do, once
    /// the build's memory is freed (whether writing its files then succeeded or not):
    /// the place for a program to
    /// hand that memory back to the system (glibc keeps what a process frees), which is
    /// the program's choice, not the library's. `None` (the default) calls nothing.
    pub fn set_after_flush(&mut self, hook: Option<AfterFlush>) {
        self.after_flush = hook;
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

    /// Which of the segments this writer builds and merges get a graph for approximate
    /// vector search, and how it is built (default [`GraphSettings::default`]: segments
    /// of at least [`crate::vectors::DEFAULT_GRAPH_MIN_DOCS`] documents, in an index with
    /// vectors). Not stored in the index: each segment records whether it has one. A
    /// merge that has already started keeps the settings it started with. Settings no
    /// graph can be built with (`m` outside 2 to [`crate::vectors::MAX_M`],
    /// `ef_construction` 0) are refused.
    pub fn set_graph(&mut self, settings: GraphSettings) -> Result<()> {
        settings.check()?;
        self.state.lock().graph = settings;
        Ok(())
    }

    /// Bounds the memory the writer holds for documents not yet written (default: no
    /// bound, one segment a commit). When the buffered documents and the segment build
    /// they would need reach `bytes`, the writer builds them into a segment, writes and
    /// fsyncs it, and frees them; no reader sees that segment until
    /// [`IndexWriter::commit`] publishes it with the others, in one manifest replace.
    ///
    /// Accounted: the buffered documents' strings, vectors and slots and their id
    /// fingerprints, the fingerprints of every committed and flushed id (8 bytes a document, which
    /// grow with the index: counting them keeps the writer's memory flat as the corpus
    /// grows, at the cost of smaller segments) ([`IndexWriter::memory_used`]), and the
    /// heap the build holds at most, which each build measures from its structures (term
    /// maps, postings, lengths, encoded files) and the next flush threshold leaves room
    /// for. The documents always keep at least a quarter of the budget (an index of
    /// millions of ids under a tiny budget goes over it rather than write segments of a
    /// few documents). Beyond the budget: pending deletions' ids, `--reorder bp`'s graph,
    /// merges (which hold their output in memory), and the allocator's own slack (which
    /// a program can hand back after each flush: `heddle-eval index` does).
    /// Budgets below [`MIN_MEMORY_BUDGET`] are raised to it.
    pub fn set_memory_budget(&mut self, bytes: usize) {
        self.memory_budget = bytes.max(MIN_MEMORY_BUDGET);
    }

    /// Heap bytes the writer holds now between builds (what the memory budget counts):
    /// the buffered documents and every id fingerprint.
    pub fn memory_used(&self) -> usize {
        self.buffer_memory() + self.id_memory()
    }

    /// Heap bytes of the buffered documents and their fingerprints: what a build grows
    /// with (the learned build ratio is per byte of these).
    fn buffer_memory(&self) -> usize {
        self.buffer.capacity() * std::mem::size_of::<Document>()
            + self.buffer_text_bytes
            + self.buffer_ids.capacity() * (std::mem::size_of::<(u64, u32)>() + 1)
    }

    /// The most the writer's accounting reached: [`IndexWriter::memory_used`] (buffered
    /// documents and id fingerprints), and during each segment build, that plus the
    /// build's own measured heap.
    pub fn memory_high_water(&self) -> usize {
        self.high_water.max(self.memory_used())
    }

    /// Heap bytes of the id fingerprints of committed and flushed documents: 8 bytes a
    /// document, counted in the budget.
    pub fn id_memory(&self) -> usize {
        self.committed_ids.heap_bytes()
            // A reset keeps the old index's ids until its commit, for a rollback.
            + self.reset.as_ref().map_or(0, |r| r.committed_ids.heap_bytes())
            + self.flushed_ids.heap_bytes()
    }

    /// Buffers a document for the next commit. Rejects an empty id, an id already
    /// committed (and not deleted), flushed or buffered, and a vector that does not fit
    /// the index ([`Error::DocumentVector`]); a rejected document changes nothing. May
    /// first write the buffered documents as a segment (see
    /// [`IndexWriter::set_memory_budget`]); an error doing so leaves them buffered.
    pub fn add(&mut self, doc: Document) -> Result<()> {
        self.refuse_unfit(&doc)?;
        let fp = self.hasher.fingerprint(&doc.id);
        self.add_fingerprinted(doc, fp)
    }

    /// An empty id, a document over the size limit, or a vector that does not fit the
    /// index: checked before anything changes, so a refused document changes nothing.
    fn refuse_unfit(&self, doc: &Document) -> Result<()> {
        if doc.id.is_empty() {
            return Err(Error::EmptyId);
        }
        let bytes = doc.title.len() + doc.text.len();
        if bytes > self.max_document_bytes {
            return Err(Error::DocumentTooLarge {
                id: doc.id.clone(),
                bytes,
                limit: self.max_document_bytes,
            });
        }
        crate::vectors::check_document(doc, self.vector_dim())
    }

    /// [`IndexWriter::add`] after [`IndexWriter::refuse_unfit`], `fp` being the id's
    /// fingerprint.
    fn add_fingerprinted(&mut self, doc: Document, fp: u64) -> Result<()> {
        if self.holds(&doc.id, fp)? {
            return Err(Error::DuplicateId { id: doc.id });
        }
        let doc_bytes = doc.heap_bytes();
        self.make_room_for(doc_bytes)?;
        self.buffer_text_bytes += doc_bytes;
        *self.buffer_ids.entry(fp).or_insert(0) += 1;
        self.buffer.push(doc);
        self.high_water = self.high_water.max(self.memory_used());
        Ok(())
    }

    /// Writes the buffer as a segment first if buffering `doc_bytes` more would not fit
    /// the budget. An error leaves the buffer as it was.
    fn make_room_for(&mut self, doc_bytes: usize) -> Result<()> {
        if !self.buffer.is_empty() && self.over_budget_with(doc_bytes) {
            self.flush()?;
        }
        Ok(())
    }

    /// Whether buffering `more` bytes would leave no room for building the buffer in
    /// what the id fingerprints leave of the budget (at least a quarter of it).
    fn over_budget_with(&self, more: usize) -> bool {
        let ratio = self.build_ratio.unwrap_or(INITIAL_BUILD_RATIO);
        let held = (self.buffer_memory() + more + std::mem::size_of::<Document>()) as f64;
        let room = self
            .memory_budget
            .saturating_sub(self.id_memory())
            .max(self.memory_budget / 4);
        held * (1.0 + ratio) >= room as f64
    }

    /// Whether a live, uncommitted-delete-free document has external id `id` (with
    /// fingerprint `fp`). A fingerprint hit is confirmed against the documents
    /// themselves, so a collision never rejects a new id; only true hits pay a scan.
    fn holds(&self, id: &str, fp: u64) -> Result<bool> {
        if self.holds_uncommitted(id, fp)? {
            return Ok(true);
        }
        if self.committed_ids.count(fp) > 0 && !self.pending_deletes.contains(id) {
            let current = self.shared.current.read().clone();
            for live in current.segments() {
                if stored_ids_contain(&live.reader, Some(live), id)? {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Whether a document added since the last commit (buffered, or in a segment
    /// written for the next commit) and not deleted since has external id `id`. A
    /// program feeding a file uses it to refuse an id the file repeats, where an upsert
    /// would silently keep the later copy; it costs no memory per id.
    pub fn is_uncommitted(&self, id: &str) -> Result<bool> {
        self.holds_uncommitted(id, self.hasher.fingerprint(id))
    }

    fn holds_uncommitted(&self, id: &str, fp: u64) -> Result<bool> {
        if self.buffer_ids.get(&fp).is_some_and(|&n| n > 0)
            && self.buffer.iter().any(|d| d.id == id)
        {
            return Ok(true);
        }
        if self.flushed_ids.count(fp) == 0 {
            return Ok(false);
        }
        // A hit: a repeated id (an error the caller reports) or a collision. Each
        // deletion of `id` took one of its copies.
        let mut copies = 0;
        for f in &self.flushed {
            let reader = SegmentReader::open(&self.shared.dir, &f.meta)?;
            if stored_ids_contain(&reader, None, id)? {
                copies += 1;
            }
        }
        let deleted = self.flushed_deletes.get(id).map_or(0, Vec::len);
        Ok(copies > deleted)
    }

    /// Deletes the document with external id `id` at the next commit (or drops it from
    /// the buffer). Returns whether such a document existed.
    ///
    /// A document already flushed or committed is found by its id's fingerprint and
    /// not confirmed (that would read stored fields on every delete): the commit
    /// deletes exactly the documents with this id. With 64-bit keyed fingerprints the
    /// answer is wrong only if `id` is absent and collides with a present id's
    /// fingerprint: odds of about n / 2^64 for n documents (docs/DECISIONS.md).
    pub fn delete(&mut self, id: &str) -> bool {
        let fp = self.hasher.fingerprint(id);
        self.delete_fingerprinted(id, fp)
    }

    fn delete_fingerprinted(&mut self, id: &str, fp: u64) -> bool {
        if self.buffer_ids.get(&fp).is_some_and(|&n| n > 0)
            && let Some(pos) = self.buffer.iter().position(|d| d.id == id)
        {
            let doc = self.buffer.remove(pos);
            self.buffer_text_bytes -= doc.heap_bytes();
            if let Some(n) = self.buffer_ids.get_mut(&fp) {
                *n -= 1;
                if *n == 0 {
                    self.buffer_ids.remove(&fp);
                }
            }
            return true;
        }
        // The latest holder first: an id deleted from an older segment and added again
        // lives in the newer one.
        if self.flushed_ids.count(fp) > 0 {
            self.flushed_ids.remove(fp);
            self.flushed_deletes
                .entry(id.to_string())
                .or_default()
                .push(self.flushed.len() as u32);
            return true;
        }
        if self.reset.is_none()
            && self.committed_ids.count(fp) > 0
            && !self.pending_deletes.contains(id)
        {
            self.committed_ids.remove(fp);
            self.pending_deletes.insert(id.to_string());
            return true;
        }
        false
    }

    /// Replaces the document with the same id, if any, in the same commit. A document
    /// [`IndexWriter::add`] would refuse for itself (empty id, too large, a vector that
    /// does not fit) is refused before anything is deleted.
    pub fn upsert(&mut self, doc: Document) -> Result<()> {
        self.refuse_unfit(&doc)?;
        let fp = self.hasher.fingerprint(&doc.id);
        self.replace(doc, fp)
    }

    /// Deletes the holder of `doc`'s id, if any, and adds `doc`. The budget's flush, the
    /// step that can fail, comes first: a failure leaves the old copy in place.
    fn replace(&mut self, doc: Document, fp: u64) -> Result<()> {
        self.make_room_for(doc.heap_bytes())?;
        self.delete_fingerprinted(&doc.id, fp);
        self.add_fingerprinted(doc, fp)
    }

    /// [`IndexWriter::upsert`] for a program feeding a file, in which a repeated id is
    /// an error (which copy is meant?) while an id already committed is replaced: an id
    /// added since the last commit (and not deleted since) is refused with
    /// [`Error::DuplicateId`], changing nothing. One call, so the id is looked up once
    /// (asking [`IndexWriter::is_uncommitted`] first would fingerprint it twice).
    pub fn upsert_refusing_repeats(&mut self, doc: Document) -> Result<()> {
        self.refuse_unfit(&doc)?;
        let fp = self.hasher.fingerprint(&doc.id);
        if self.holds_uncommitted(&doc.id, fp)? {
            return Err(Error::DuplicateId { id: doc.id });
        }
        self.replace(doc, fp)
    }

    /// Documents waiting for the next commit: buffered, and in segments already
    /// written for it (less those deleted since).
    pub fn buffered(&self) -> usize {
        self.buffer.len()
            + self
                .flushed
                .iter()
                .map(|f| f.meta.doc_count as usize)
                .sum::<usize>()
                .saturating_sub(self.flushed_deletes.values().map(Vec::len).sum())
    }

    /// Segments written for the next commit and not yet published.
    pub fn flushed_segments(&self) -> usize {
        self.flushed.len()
    }

    /// Starts the index over at the next commit: that commit drops every committed
    /// document and segment, takes `settings` (analyzer, fields, vector dimension) for
    /// the index, and publishes the documents added after this call, all in one manifest
    /// replace. Until
    /// then readers see the old index whole, and a failed or abandoned commit leaves it
    /// as it was: rebuilding an index is a commit like any other, under the writer's
    /// lock. Buffered additions and deletions are dropped; waits for a running merge.
    /// Refused ([`Error::NotEmpty`]) when the directory holds anything heddle does not
    /// write: a rebuild replaces an index, never a directory someone else also uses.
    pub fn reset(&mut self, settings: IndexSettings) -> Result<()> {
        let mut manifest = Manifest::for_settings(&settings)?; // bad settings change nothing
        super::refuse_foreign(&self.shared.dir)?;
        self.wait_for_merges()?;
        self.rollback();
        manifest.next_segment_id = 0; // taken from the writer's state at commit
        self.reset = Some(Reset {
            analyzer: Arc::new(Analyzer::new(manifest.analyzer.clone())),
            manifest,
            committed_ids: std::mem::take(&mut self.committed_ids),
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
        self.rollback(); // and the segments flushed for the commit that never came
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

    /// Drops buffered additions and deletions, the segments flushed for the next
    /// commit (their files are removed), and a pending [`IndexWriter::reset`]; the
    /// committed state is untouched.
    pub fn rollback(&mut self) {
        self.clear_buffer();
        self.discard_flushed();
        self.flush_failed = false;
        self.flush_stats = CommitStats::default();
        self.committed_ids.restore_removed();
        self.pending_deletes.clear();
        if let Some(reset) = self.reset.take() {
            self.committed_ids = reset.committed_ids;
        }
    }

    fn clear_buffer(&mut self) {
        // New, empty containers: the old ones' capacity is memory the budget counts.
        self.buffer = Vec::new();
        self.buffer_ids = HashMap::new();
        self.buffer_text_bytes = 0;
    }

    /// Removes the flushed segments' files. Not after a commit failed past its
    /// manifest rename (the writer is poisoned): the manifest on disk may name them,
    /// and the next writer's [`gc::remove_leftovers`] removes them if it does not. A
    /// removal that fails leaves the file to that same clean-up.
    fn discard_flushed(&mut self) {
        let flushed = std::mem::take(&mut self.flushed);
        self.flushed_ids = Fingerprints::default();
        self.flushed_deletes.clear();
        if flushed.is_empty() || self.state.lock().poisoned {
            return;
        }
        for path in flushed.iter().flat_map(|f| &f.files) {
            let _ = std::fs::remove_file(path);
        }
        let _ = fsync_dir(&self.shared.dir);
    }

    /// Makes a crash-safety test fail commits and merges right after `step`.
    #[doc(hidden)]
    pub fn fail_at(&mut self, step: Option<Failpoint>) {
        self.state.lock().failpoint = step;
    }

    /// The vector dimension new documents must have: a reset's, else the index's (only
    /// a reset by this writer changes it).
    fn vector_dim(&self) -> Option<u32> {
        match &self.reset {
            Some(r) => r.manifest.vector_dim,
            None => self.shared.current.read().manifest().vector_dim,
        }
    }

    /// The analyzer new segments are built with: a reset's, else the index's (only a
    /// reset by this writer changes it).
    fn build_analyzer(&self) -> Arc<Analyzer> {
        match &self.reset {
            Some(r) => r.analyzer.clone(),
            None => self.shared.current.read().analyzer().clone(),
        }
    }

    /// Builds the buffered documents into a segment, writes and fsyncs its files (no
    /// manifest names them yet), and frees the buffer. Takes the state lock only for a
    /// segment number: the files are this writer's alone until it publishes them.
    fn flush(&mut self) -> Result<()> {
        let Some(built) = self.build_buffer(true) else {
            return Ok(());
        };
        let dir = self.shared.dir.clone();
        let observer = self.commit_progress.clone();
        let t = Instant::now();
        let report = PhaseReport::start(observer.as_ref(), CommitPhase::Write, 1);
        let written = self.write_built(built);
        report.finish();
        self.flush_stats.write += t.elapsed();
        // The build is freed, written or not.
        if let Some(hook) = &self.after_flush {
            hook();
        }
        let paths = written?;
        let t = Instant::now();
        let report = PhaseReport::start(observer.as_ref(), CommitPhase::Fsync, 1);
        let synced = publish::sync_files(&dir, &paths);
        report.finish();
        self.flush_stats.fsync += t.elapsed();
        if synced.is_err() {
            // The buffer is freed, so the documents cannot be rebuilt, and a second
            // fsync may succeed over lost pages: no commit until a rollback.
            self.flush_failed = true;
        } else {
            // Not read again before the commit, which would otherwise map their cached
            // pages as large folios (directory/cache.rs).
            for path in &paths {
                crate::directory::drop_cached_pages(path);
            }
        }
        synced
    }

    /// Builds the buffer into a segment (none if it is empty), counting the build's
    /// heap against the budget and, if `learn` (a flush), learning its ratio for the
    /// next threshold.
    fn build_buffer(&mut self, learn: bool) -> Option<BuiltSegment> {
        if self.buffer.is_empty() {
            return None;
        }
        let analyzer = self.build_analyzer();
        let (name, fields, vector_dim, graph) = {
            let mut st = self.state.lock();
            let manifest = match &self.reset {
                Some(r) => &r.manifest,
                None => &st.manifest,
            };
            let (fields, vector_dim) = (manifest.fields.clone(), manifest.vector_dim);
            (
                segment_name(st.allocate_segment_id()),
                fields,
                vector_dim,
                st.graph,
            )
        };
        let built = build_segment(
            &name,
            &self.buffer,
            &fields,
            vector_dim,
            &graph,
            &analyzer,
            &self.pool,
            &self.reorder,
            self.reorder_progress.clone(),
            self.commit_progress.as_ref(),
        );
        let held = self.buffer_memory();
        self.high_water = self.high_water.max(self.memory_used() + built.heap_bytes);
        // Only a flush teaches the ratio: it is built at the threshold's size, which the
        // ratio is for. A commit's last build is whatever remained, and a small build's
        // fixed costs (maps, file headers) would inflate a ratio that never comes down.
        if learn {
            let ratio = built.heap_bytes as f64 / held.max(1) as f64;
            self.build_ratio = Some(self.build_ratio.map_or(ratio, |r| r.max(ratio)));
        }
        self.flush_stats.analysis += built.analysis;
        self.flush_stats.reorder += built.reorder;
        self.flush_stats.encoding += built.encoding;
        Some(built)
    }

    /// Writes a built segment's files (not fsynced) and makes it a flushed segment of
    /// the next commit, freeing the buffer it was built from. A failed write removes
    /// what it wrote and leaves the buffer as it was.
    fn write_built(&mut self, built: BuiltSegment) -> Result<Vec<PathBuf>> {
        let dir = self.shared.dir.clone();
        let name = built.meta.name.clone();
        // On failure it removed what it created (and nothing else).
        let files = publish::write_segment_files(&dir, &name, &built.files)?;
        let ids = self
            .buffer
            .iter()
            .map(|d| self.hasher.fingerprint(&d.id))
            .collect();
        self.flushed_ids.insert(ids);
        self.flushed.push(Flushed {
            meta: built.meta,
            files: files.clone(),
        });
        self.clear_buffer();
        Ok(files)
    }

    /// Writes the buffered documents as a last segment, resolves the buffered deletions
    /// (of committed documents and of documents in segments flushed since the last
    /// commit), makes them durable, and publishes every new segment and deletion in one
    /// manifest replace. When this returns `Ok`, the changes survive a crash and every
    /// new [`crate::Searcher`] sees them; on error the previous state stands and the
    /// writer keeps what it was given, to commit again or roll back (unless the error
    /// came after the manifest rename: then the commit is durable and the writer must be
    /// reopened).
    pub fn commit(&mut self) -> Result<CommitStats> {
        let started = Instant::now();
        self.state.lock().ensure_healthy()?;
        if self.buffer.is_empty()
            && self.flushed.is_empty()
            && self.pending_deletes.is_empty()
            && self.reset.is_none()
        {
            return Ok(CommitStats {
                generation: self.state.lock().manifest.generation,
                total: started.elapsed(),
                ..CommitStats::default()
            });
        }
        if self.flush_failed {
            return Err(Error::InvalidArgument(
                "a segment written for this commit could not be fsynced; roll back".into(),
            ));
        }
        let analyzer = self.build_analyzer();
        // The expensive part, with no lock held.
        let last = self.build_buffer(false);

        // Publication: serialised with merges, invisible to readers until the swap.
        let dir = self.shared.dir.clone();
        let observer = self.commit_progress.clone();
        let observer = observer.as_ref();
        let state = self.state.clone();
        let mut st = state.lock();
        let t = Instant::now();
        let report = PhaseReport::start(observer, CommitPhase::Write, 1);
        if let Some(built) = last {
            // From here a failed commit keeps it as a flushed segment, like the others.
            self.write_built(built)?;
        }
        let mut stats = CommitStats {
            docs: self.flushed.iter().map(|f| f.meta.doc_count as usize).sum(),
            ..self.flush_stats.clone()
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
        let mut paths = Vec::new();
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
                let file = write_delete_file(&dir, meta, next.generation, &hits, &mut paths)?;
                new_delete_files.push((i, file, meta.doc_count));
            }
        }
        // The flushed segments, opened now, and the deletions of their documents made
        // since they were written (a delete file of this generation, like any other).
        let mut readers = Vec::with_capacity(self.flushed.len());
        for f in &self.flushed {
            readers.push(SegmentReader::open(&dir, &f.meta)?);
        }
        let hits = resolve_flushed_deletes(&readers, &self.flushed_deletes)?;
        let mut flushed = Vec::with_capacity(self.flushed.len());
        for ((f, reader), hits) in self.flushed.iter().zip(readers).zip(hits) {
            let mut meta = f.meta.clone();
            let mut deleted = None;
            stats.docs -= hits.len() as usize;
            if !hits.is_empty() {
                deleted = Some(write_delete_file(
                    &dir,
                    &mut meta,
                    next.generation,
                    &hits,
                    &mut paths,
                )?);
            }
            flushed.push((meta, reader, deleted));
        }
        report.finish();
        stats.write += t.elapsed();
        st.check(Failpoint::AfterSegmentWrite)?;

        // Every file the manifest will name for the first time: the segments flushed
        // earlier were fsynced then (a second fsync of a clean file costs little), the
        // last one and the delete files now.
        paths.extend(self.flushed.iter().flat_map(|f| f.files.iter().cloned()));
        let t = Instant::now();
        let report = PhaseReport::start(observer, CommitPhase::Fsync, 1);
        let synced = publish::sync_files(&dir, &paths);
        report.finish();
        if synced.is_err() {
            // As in `flush`: the last segment's documents are freed, and a retried fsync
            // may succeed over pages the kernel dropped. No commit until a rollback.
            self.flush_failed = true;
        }
        synced?;
        stats.fsync += t.elapsed();
        st.check(Failpoint::AfterSegmentFsync)?;

        let t = Instant::now();
        let report = PhaseReport::start(observer, CommitPhase::Publish, 1);
        for (i, file, doc_count) in new_delete_files {
            segments[i].deletes = Some(Arc::new(DeleteSet::open(&dir, &file, doc_count)?));
        }
        for (meta, reader, deleted) in flushed {
            let deletes = match deleted {
                Some(file) => Some(Arc::new(DeleteSet::open(&dir, &file, meta.doc_count)?)),
                None => None,
            };
            stats.segments.push(meta.name.clone());
            next.segments.push(meta);
            segments.push(LiveSegment {
                reader: Arc::new(reader),
                deletes,
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
        stats.generation = st.manifest.generation;
        stats.segment = stats.segments.last().cloned();
        // Published: the flushed segments' ids are committed ids now. (After a reset,
        // the committed ids were emptied by it: they named documents that are gone.)
        self.flushed.clear();
        self.flushed_deletes.clear();
        self.committed_ids
            .compact_and_extend(self.flushed_ids.take_surviving());
        self.reset = None;
        self.pending_deletes.clear();
        self.flush_stats = CommitStats::default();
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
        run_merge(&self.shared, &self.state, |segments| {
            merge_policy::forced(&merge_policy::live_sizes(segments), max_segments)
        })
    }

    /// Merges every segment into one, now, on this thread, building the merged segment's
    /// vector graph as [`IndexWriter::set_graph`] says; a lone segment is rewritten only
    /// if those settings want a graph it lacks (an index built with graphs deferred).
    /// Waits for a background merge first. Returns `None` if there was nothing to do.
    /// The commit observer, if one is set, is told of the graph's progress.
    pub fn merge_into_one(&mut self) -> Result<Option<MergeStats>> {
        self.wait_for_merges()?;
        let (lone_lacks_graph, graph) = {
            let st = self.state.lock();
            let lacks = match st.manifest.segments.as_slice() {
                [only] => only.vector_dim.is_some() && !only.vector_graph,
                _ => false,
            };
            (lacks, st.graph)
        };
        run_merge(&self.shared, &self.state, |segments| match segments {
            [] => None,
            [only] => (lone_lacks_graph && graph.wants(only.live_docs())).then_some(0..1),
            _ => Some(0..segments.len()),
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
        if self
            .policy
            .choose_for(&self.state.lock().manifest.segments)
            .is_none()
        {
            return;
        }
        let (shared, state, policy) = (self.shared.clone(), self.state.clone(), self.policy);
        let spawned = std::thread::Builder::new()
            .name("heddle-merge".into())
            .spawn(move || {
                loop {
                    match run_merge(&shared, &state, |segments| policy.choose_for(segments)) {
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
        self.discard_flushed(); // never published: nobody else will name them
        let mut st = self.state.lock();
        let _ = publish::collect_garbage(&self.shared, &mut st);
    }
}

/// Whether `reader` holds a document with external id `id` not deleted in `live`.
fn stored_ids_contain(
    reader: &SegmentReader,
    live: Option<&LiveSegment>,
    id: &str,
) -> Result<bool> {
    let mut found = false;
    reader.scan_stored(|doc, stored, _| {
        if stored == id && !live.is_some_and(|l| l.is_deleted(doc)) {
            found = true;
        }
        Ok(())
    })?;
    Ok(found)
}

/// Which documents of the flushed segments (`readers`, in flush order) the deletions
/// made since they were written take: each deletion of an id, made when `k` segments
/// had been flushed, takes the latest copy of that id among the first `k` not taken by
/// an earlier one (an id deleted, added again and flushed later lives on in the later
/// segment). One bitmap per segment; a scan of stored ids only if there are deletions.
fn resolve_flushed_deletes(
    readers: &[SegmentReader],
    deletes: &BTreeMap<String, Vec<u32>>,
) -> Result<Vec<RoaringBitmap>> {
    let mut hits = vec![RoaringBitmap::new(); readers.len()];
    if deletes.is_empty() {
        return Ok(hits);
    }
    // Every copy of a deleted id: (segment, doc), in flush order.
    let mut copies: BTreeMap<&str, Vec<(u32, u32)>> = BTreeMap::new();
    for (segment, reader) in readers.iter().enumerate() {
        reader.scan_stored(|doc, id, _| {
            if let Some((key, _)) = deletes.get_key_value(id) {
                copies
                    .entry(key.as_str())
                    .or_default()
                    .push((segment as u32, doc));
            }
            Ok(())
        })?;
    }
    for (id, flushed_before) in deletes {
        let Some(copies) = copies.get_mut(id.as_str()) else {
            continue; // a fingerprint collision: nothing had this id
        };
        for &k in flushed_before {
            if let Some(pos) = copies.iter().rposition(|&(segment, _)| segment < k) {
                let (segment, doc) = copies.remove(pos);
                hits[segment as usize].insert(doc);
            }
        }
    }
    Ok(hits)
}

/// Writes `hits` as segment `meta`'s delete file of `generation` (not fsynced: its path
/// joins `paths`, which the commit fsyncs), names it in `meta`, and returns its name.
fn write_delete_file(
    dir: &Path,
    meta: &mut SegmentMeta,
    generation: u64,
    hits: &RoaringBitmap,
    paths: &mut Vec<PathBuf>,
) -> Result<String> {
    let file = deletes::file_name(&meta.name, generation);
    let path = dir.join(&file);
    crate::directory::write_fresh(&path, &deletes::file_bytes(hits))?;
    paths.push(path);
    meta.deletes = Some(DeletesMeta {
        file: file.clone(),
        count: hits.len() as u32,
    });
    Ok(file)
}

/// The most build threads a writer takes: beyond any machine's cores, low enough that a
/// typo (`--threads 100000`) is refused instead of starting thousands of threads.
pub const MAX_THREADS: usize = 1024;

fn build_pool(threads: usize) -> Result<rayon::ThreadPool> {
    if threads > MAX_THREADS {
        return Err(Error::InvalidArgument(format!(
            "{threads} build threads: at most {MAX_THREADS} (0: one per core)"
        )));
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("heddle-build-{i}"))
        .build()
        .map_err(|e| Error::InvalidArgument(format!("cannot start {threads} build threads: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{Index, IndexSettings};

    /// About 700 bytes of text, a few words of its own.
    fn doc(i: usize) -> Document {
        let text: Vec<String> = (0..100)
            .map(|j| format!("w{}", (i * 31 + j) % 977))
            .collect();
        Document::new(format!("d{i}"), "title", text.join(" "))
    }

    fn writer(dir: &std::path::Path, budget: usize) -> (Index, IndexWriter) {
        let index = Index::create(dir, IndexSettings::default()).unwrap();
        let mut w = index.writer().unwrap();
        w.set_threads(1).unwrap();
        w.set_memory_budget(budget);
        (index, w)
    }

    /// The first segment a budget flushes, in documents, for a writer that already holds
    /// `ids` committed fingerprints.
    fn first_segment_with(ids: usize, budget: usize) -> usize {
        let dir = tempfile::tempdir().unwrap();
        let (_index, mut w) = writer(dir.path(), budget);
        w.committed_ids = Fingerprints::from_unsorted(
            (0..ids as u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .collect(),
        );
        let mut i = 0;
        while w.flushed_segments() == 0 {
            w.add(doc(i)).unwrap();
            i += 1;
        }
        w.flushed[0].meta.doc_count as usize
    }

    /// Fingerprints grow with the index: counted in the budget, they take room from the
    /// documents (so memory stays flat as the index grows), but never more than three
    /// quarters of it (or a huge index under a small budget would flush every document).
    #[test]
    fn committed_ids_take_room_from_the_documents_but_leave_them_a_quarter() {
        let budget = 4 << 20;
        let alone = first_segment_with(0, budget);
        let half = first_segment_with(budget / 2 / 8, budget);
        let over = first_segment_with(2 * budget / 8, budget);
        let share = |n: usize| n as f64 / alone as f64;
        assert!(alone > 40, "{alone} documents in the first segment");
        assert!(
            (0.35..0.65).contains(&share(half)),
            "ids of half the budget: {half} documents against {alone}"
        );
        assert!(
            (0.15..0.35).contains(&share(over)),
            "ids of twice the budget: {over} documents against {alone}"
        );
    }

    #[test]
    fn is_uncommitted_follows_an_id_through_buffer_flush_delete_and_commit() {
        let dir = tempfile::tempdir().unwrap();
        let (_index, mut w) = writer(dir.path(), MIN_MEMORY_BUDGET);
        w.add(doc(0)).unwrap();
        assert!(w.is_uncommitted("d0").unwrap(), "buffered");
        let mut i = 1;
        while w.flushed_segments() == 0 {
            w.add(doc(i)).unwrap();
            i += 1;
        }
        assert!(w.buffer.iter().all(|d| d.id != "d0"));
        assert!(w.is_uncommitted("d0").unwrap(), "in a flushed segment");
        assert!(!w.is_uncommitted("d-never").unwrap());
        assert!(w.delete("d0"));
        assert!(
            !w.is_uncommitted("d0").unwrap(),
            "deleted from the flushed segment"
        );
        w.add(doc(0)).unwrap();
        assert!(w.is_uncommitted("d0").unwrap(), "added again");
        w.commit().unwrap();
        assert!(
            !w.is_uncommitted("d0").unwrap(),
            "committed: in the index, no longer pending"
        );
        assert!(matches!(w.add(doc(0)), Err(Error::DuplicateId { .. })));
    }
}
