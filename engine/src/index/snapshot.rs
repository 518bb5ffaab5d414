//! An immutable view of the index: the segments of one manifest generation, opened.

use std::path::Path;
use std::sync::Arc;

use super::Manifest;
use crate::error::Result;
use crate::segment::SegmentReader;

pub(crate) struct Snapshot {
    manifest: Manifest,
    segments: Vec<Arc<SegmentReader>>,
    /// Internal doc id of each segment's first document.
    doc_bases: Vec<u64>,
    doc_count: u64,
    flat_tokens: u64,
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
        let flat_tokens = manifest.segments.iter().map(|s| s.flat_tokens).sum();
        Snapshot {
            manifest,
            segments,
            doc_bases,
            doc_count,
            flat_tokens,
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

    pub(crate) fn flat_tokens(&self) -> u64 {
        self.flat_tokens
    }
}
