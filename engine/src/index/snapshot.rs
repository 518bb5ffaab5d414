//! An immutable view of the index: the segments of one manifest generation, opened,
//! each with the delete set that generation names.

use std::path::Path;
use std::sync::Arc;

use super::Manifest;
use crate::analysis::Analyzer;
use crate::error::Result;
use crate::field::{Field, FieldCounts};
use crate::segment::SegmentReader;
use crate::segment::deletes::DeleteSet;

/// A segment as one snapshot sees it.
#[derive(Clone)]
pub(crate) struct LiveSegment {
    pub reader: Arc<SegmentReader>,
    pub deletes: Option<Arc<DeleteSet>>,
}

impl LiveSegment {
    #[inline]
    pub(crate) fn is_deleted(&self, doc: u32) -> bool {
        self.deletes.as_ref().is_some_and(|d| d.contains(doc))
    }
}

pub(crate) struct Snapshot {
    manifest: Manifest,
    /// Built from `manifest.analyzer`: a rebuild may change it, so it travels with the
    /// snapshot rather than with the index handle.
    analyzer: Arc<Analyzer>,
    segments: Vec<LiveSegment>,
    /// Internal doc id of each segment's first document.
    doc_bases: Vec<u64>,
    /// Documents in the segments, deleted ones included (BM25's N; see DECISIONS.md).
    doc_count: u64,
    live_docs: u64,
    tokens: FieldCounts,
}

impl Snapshot {
    /// Opens the segments and delete files `manifest` names, reusing those already open
    /// in `previous` (segments by name, delete sets by file name, the analyzer if its
    /// configuration is unchanged).
    pub(crate) fn open(
        dir: &Path,
        manifest: Manifest,
        previous: Option<&Snapshot>,
    ) -> Result<Self> {
        let mut segments = Vec::with_capacity(manifest.segments.len());
        for meta in &manifest.segments {
            let old = previous.and_then(|p| {
                p.segments
                    .iter()
                    .find(|s| s.reader.meta().name == meta.name)
            });
            let reader = match old {
                Some(s) => s.reader.clone(),
                None => Arc::new(SegmentReader::open(dir, meta)?),
            };
            let deletes = match &meta.deletes {
                None => None,
                Some(d) => match old
                    .and_then(|s| s.deletes.as_ref())
                    .filter(|old| old.path().ends_with(&d.file))
                {
                    Some(same) => Some(same.clone()),
                    None => Some(Arc::new(DeleteSet::open_counted(dir, d, meta.doc_count)?)),
                },
            };
            segments.push(LiveSegment { reader, deletes });
        }
        let analyzer = match previous {
            Some(p) if p.analyzer.config() == &manifest.analyzer => p.analyzer.clone(),
            _ => Arc::new(Analyzer::new(manifest.analyzer.clone())),
        };
        Ok(Self::from_parts(manifest, segments, analyzer))
    }

    /// `analyzer` must be the one `manifest.analyzer` describes.
    pub(crate) fn from_parts(
        manifest: Manifest,
        segments: Vec<LiveSegment>,
        analyzer: Arc<Analyzer>,
    ) -> Self {
        debug_assert_eq!(analyzer.config(), &manifest.analyzer);
        let mut doc_bases = Vec::with_capacity(segments.len());
        let mut doc_count = 0u64;
        for s in &segments {
            doc_bases.push(doc_count);
            doc_count += s.reader.doc_count() as u64;
        }
        let live_docs = manifest.segments.iter().map(|s| s.live_docs() as u64).sum();
        let mut tokens = FieldCounts::default();
        for field in Field::ALL {
            tokens.set(
                field,
                manifest.segments.iter().map(|s| s.tokens.get(field)).sum(),
            );
        }
        Snapshot {
            manifest,
            analyzer,
            segments,
            doc_bases,
            doc_count,
            live_docs,
            tokens,
        }
    }

    /// An error naming a file of this snapshot that shrank under its map while in use
    /// (see `directory::sigbus`). A request during which a fault happened calls this
    /// before answering: the zeros its reads may have met are then never an answer.
    pub(crate) fn check_intact(&self) -> Result<()> {
        let faulted = crate::directory::faulted_paths();
        for path in faulted {
            let ours = self.segments.iter().any(|s| {
                s.reader.owns(&path) || s.deletes.as_ref().is_some_and(|d| d.path() == path)
            });
            if ours {
                return Err(crate::Error::ChangedInPlace { path });
            }
        }
        Ok(())
    }

    pub(crate) fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    pub(crate) fn analyzer(&self) -> &Arc<Analyzer> {
        &self.analyzer
    }

    pub(crate) fn generation(&self) -> u64 {
        self.manifest.generation
    }

    pub(crate) fn segments(&self) -> &[LiveSegment] {
        &self.segments
    }

    pub(crate) fn doc_base(&self, segment: usize) -> u64 {
        self.doc_bases[segment]
    }

    /// All documents, deleted ones included (BM25's N until a merge purges them).
    pub(crate) fn doc_count(&self) -> u64 {
        self.doc_count
    }

    /// Documents not deleted.
    pub(crate) fn live_docs(&self) -> u64 {
        self.live_docs
    }

    /// Total tokens of `field` over the snapshot (for the average document length).
    pub(crate) fn tokens(&self, field: Field) -> u64 {
        self.tokens.get(field)
    }

    /// The dimension of every document's vector; `None` in an index without vectors.
    pub(crate) fn vector_dim(&self) -> Option<usize> {
        self.manifest.vector_dim.map(|d| d as usize)
    }

    /// Whether every segment indexes `field`.
    pub(crate) fn has_field(&self, field: Field) -> bool {
        self.manifest.fields.contains(&field)
            && self.manifest.segments.iter().all(|s| s.has_field(field))
    }
}
