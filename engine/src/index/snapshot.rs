//! An immutable view of the index: the segments of one manifest generation, opened.

use std::path::Path;
use std::sync::Arc;

use super::Manifest;
use crate::error::Result;
use crate::field::{Field, FieldCounts};
use crate::segment::SegmentReader;

pub(crate) struct Snapshot {
    manifest: Manifest,
    segments: Vec<Arc<SegmentReader>>,
    /// Internal doc id of each segment's first document.
    doc_bases: Vec<u64>,
    doc_count: u64,
    tokens: FieldCounts,
}

impl Snapshot {
    /// Opens the segments `manifest` names, reusing those already open in `previous`.
    pub(crate) fn open(
        dir: &Path,
        manifest: Manifest,
        previous: Option<&Snapshot>,
    ) -> Result<Self> {
        let mut segments = Vec::with_capacity(manifest.segments.len());
        for meta in &manifest.segments {
            let reused =
                previous.and_then(|p| p.segments.iter().find(|s| s.meta() == meta).cloned());
            segments.push(match reused {
                Some(s) => s,
                None => Arc::new(SegmentReader::open(dir, meta)?),
            });
        }
        Ok(Self::from_parts(manifest, segments))
    }

    pub(crate) fn from_parts(manifest: Manifest, segments: Vec<Arc<SegmentReader>>) -> Self {
        let mut doc_bases = Vec::with_capacity(segments.len());
        let mut doc_count = 0u64;
        for s in &segments {
            doc_bases.push(doc_count);
            doc_count += s.doc_count() as u64;
        }
        let mut tokens = FieldCounts::default();
        for field in Field::ALL {
            tokens.set(
                field,
                manifest.segments.iter().map(|s| s.tokens.get(field)).sum(),
            );
        }
        Snapshot {
            manifest,
            segments,
            doc_bases,
            doc_count,
            tokens,
        }
    }

    pub(crate) fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    pub(crate) fn generation(&self) -> u64 {
        self.manifest.generation
    }

    pub(crate) fn segments(&self) -> &[Arc<SegmentReader>] {
        &self.segments
    }

    pub(crate) fn doc_base(&self, segment: usize) -> u64 {
        self.doc_bases[segment]
    }

    pub(crate) fn doc_count(&self) -> u64 {
        self.doc_count
    }

    /// Total tokens of `field` over the snapshot (for the average document length).
    pub(crate) fn tokens(&self, field: Field) -> u64 {
        self.tokens.get(field)
    }

    /// Whether every segment indexes `field`.
    pub(crate) fn has_field(&self, field: Field) -> bool {
        self.manifest.fields.contains(&field)
            && self.manifest.segments.iter().all(|s| s.has_field(field))
    }
}
