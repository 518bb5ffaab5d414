//! Running one merge: choose a run of adjacent segments from a snapshot, build the merged
//! segment with no lock held, then publish it, carrying over deletions that arrived while
//! it was being built.

use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use roaring::RoaringBitmap;

use super::publish::{self, WriterState};
use super::snapshot::LiveSegment;
use super::{Failpoint, Shared, Snapshot};
use crate::error::{Error, Result};
use crate::segment::deletes::{self, DeleteSet};
use crate::segment::merger::{MergeSettings, MergeSource, PURGED, merge_segments};
use crate::segment::{DeletesMeta, SegmentMeta, SegmentReader, segment_name};

/// What a merge did.
#[derive(Debug, Clone)]
pub struct MergeStats {
    /// The merged segments' names, in order.
    pub sources: Vec<String>,
    pub segment: String,
    /// Documents in the merged segment.
    pub docs: u32,
    /// Deleted documents dropped for good.
    pub purged: u64,
    pub generation: u64,
    pub build: Duration,
    pub total: Duration,
    /// Documents of the first merged segment whose vector graph links were kept (it had
    /// a graph, lost no document and keeps its ids), so only the others were linked in;
    /// 0 when the graph was built whole, or none was.
    pub graph_reused: u32,
}

/// Merges the run `choose` picks from the published segments' live sizes, if any.
/// Returns `Ok(None)` when there is nothing to merge or another merge is running.
pub(crate) fn run_merge(
    shared: &Shared,
    state: &Mutex<WriterState>,
    choose: impl FnOnce(&[SegmentMeta]) -> Option<Range<usize>>,
) -> Result<Option<MergeStats>> {
    let started = Instant::now();
    let (snapshot, range, name, fields, graph, progress) = {
        let mut st = state.lock();
        st.ensure_healthy()?;
        if st.merging {
            return Ok(None);
        }
        let snapshot = shared.current.read().clone();
        let Some(range) = choose(&snapshot.manifest().segments) else {
            return Ok(None);
        };
        let name = segment_name(st.allocate_segment_id());
        st.merging = true;
        let fields = st.manifest.fields.clone();
        (snapshot, range, name, fields, st.graph, st.progress.clone())
    };
    let settings = MergeSettings {
        graph,
        progress: progress.as_ref(),
    };
    let result = merge_and_publish(
        shared, state, snapshot, range, &name, &fields, &settings, started,
    );
    state.lock().merging = false;
    result.map(Some)
}

#[allow(clippy::too_many_arguments)]
fn merge_and_publish(
    shared: &Shared,
    state: &Mutex<WriterState>,
    snapshot: Arc<Snapshot>,
    range: Range<usize>,
    name: &str,
    fields: &[crate::Field],
    settings: &MergeSettings<'_>,
    started: Instant,
) -> Result<MergeStats> {
    let run: Vec<LiveSegment> = snapshot.segments()[range.clone()].to_vec();
    let sources: Vec<MergeSource<'_>> = run
        .iter()
        .map(|s| MergeSource {
            reader: &s.reader,
            deletes: s.deletes.as_deref(),
        })
        .collect();
    // Each source is verified as `check` verifies it: what the merge's reads below check
    // as they go (postings, stored fields, lengths, their sums at open), and what they
    // would not notice (vector values, the IVF copy of the rows), before anything is
    // written.
    for source in &sources {
        if let Some(problem) = super::vector_problems(source.reader).into_iter().next() {
            return Err(problem);
        }
    }
    // The merged segment's files are written and fsynced before taking the publish
    // lock, which a commit waits on: the name is this merge's alone, and a failed merge
    // removes what it wrote.
    let dir = shared.dir.as_path();
    let merged = merge_segments(dir, name, &sources, fields, settings)?;
    let build = merged.elapsed;
    let graph_reused = merged.graph_reused;
    drop(sources);
    drop(snapshot);
    let source_names: Vec<String> = run.iter().map(|s| s.reader.meta().name.clone()).collect();
    let purged: u64 = run
        .iter()
        .map(|s| s.deletes.as_ref().map_or(0, |d| d.bitmap().len()))
        .sum();

    let (built_meta, doc_maps) = (merged.meta, merged.doc_maps);
    publish::sync_files(dir, &merged.files)?;
    // Written, not read since: the open below reads a few bytes of each file, and
    // should not map the page cache's large folios of all of them.
    for path in &merged.files {
        crate::directory::drop_cached_pages(path);
    }
    let mut st = state.lock();
    st.ensure_healthy()?;
    st.check(Failpoint::AfterSegmentWrite)?;
    let mut paths = Vec::new();

    let current = shared.current.read().clone();
    let start = current
        .segments()
        .iter()
        .position(|s| s.reader.meta().name == source_names[0])
        .filter(|&start| {
            current.segments().len() >= start + run.len()
                && current.segments()[start..start + run.len()]
                    .iter()
                    .zip(&source_names)
                    .all(|(s, n)| &s.reader.meta().name == n)
        })
        .ok_or_else(|| {
            Error::InvalidArgument("the merged segments changed during the merge".into())
        })?;
    // Deletions committed while the merge ran: map them onto the merged segment.
    let mut late = RoaringBitmap::new();
    for (k, now) in current.segments()[start..start + run.len()]
        .iter()
        .enumerate()
    {
        let Some(now) = &now.deletes else { continue };
        let before = run[k]
            .deletes
            .as_ref()
            .map(|d| d.bitmap().clone())
            .unwrap_or_default();
        for doc in now.bitmap() - &before {
            let new = doc_maps[k].get(doc as usize).copied().unwrap_or(PURGED);
            if new != PURGED {
                late.insert(new);
            }
        }
    }
    let mut next = st.manifest.clone();
    next.generation += 1;
    let mut meta = built_meta;
    if !late.is_empty() {
        let file = deletes::file_name(name, next.generation);
        let path = dir.join(&file);
        crate::directory::write_fresh(&path, &deletes::file_bytes(&late))?;
        paths.push(path);
        meta.deletes = Some(DeletesMeta {
            file,
            count: late.len() as u32,
        });
    }
    publish::sync_files(dir, &paths)?;
    st.check(Failpoint::AfterSegmentFsync)?;
    let reader = Arc::new(SegmentReader::open(dir, &meta)?);
    let merged_deletes = match &meta.deletes {
        Some(d) => Some(Arc::new(DeleteSet::open_counted(dir, d, meta.doc_count)?)),
        None => None,
    };
    let docs = meta.doc_count;
    next.segments.splice(start..start + run.len(), [meta]);
    let mut segments = current.segments().to_vec();
    let replaced: Vec<LiveSegment> = segments
        .splice(
            start..start + run.len(),
            [LiveSegment {
                reader,
                deletes: merged_deletes,
            }],
        )
        .collect();
    let analyzer = current.analyzer().clone();
    drop(current);
    drop(run);
    let (_, _) = publish::publish(shared, &mut st, next, |m| {
        Snapshot::from_parts(m, segments, analyzer)
    })?;
    for old in replaced {
        publish::retire(dir, &mut st, &old); // and let go of it, for the GC below
    }
    publish::collect_garbage(shared, &mut st)?;
    Ok(MergeStats {
        sources: source_names,
        segment: name.to_string(),
        docs,
        purged,
        generation: st.manifest.generation,
        build,
        total: started.elapsed(),
        graph_reused,
    })
}
