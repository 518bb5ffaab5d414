//! Immutable segments: the files one commit writes, and their readers.
//!
//! A segment is named `seg-NNNNNN` and made of one file per [`SegmentComponent`]. Every
//! file ends in a [`footer`] that is verified when the segment is opened.

mod builder;
pub(crate) mod bytes;
pub(crate) mod footer;
pub(crate) mod lengths;
mod reader;

use serde::{Deserialize, Serialize};

pub(crate) use builder::build_segment;
pub use footer::FORMAT_VERSION;
pub(crate) use reader::SegmentReader;

/// One kind of segment file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentComponent {
    /// Term dictionary of the flat field.
    Terms,
    /// Postings lists of the flat field.
    Postings,
    /// Document lengths per field.
    Lengths,
    /// Stored fields (external id, title).
    Store,
}

impl SegmentComponent {
    pub const ALL: [SegmentComponent; 4] = [
        SegmentComponent::Terms,
        SegmentComponent::Postings,
        SegmentComponent::Lengths,
        SegmentComponent::Store,
    ];

    /// The file extension. Field-specific components carry the field name, so that
    /// per-field postings (`title.terms`, `text.terms`) can be added beside `flat` later.
    pub fn extension(self) -> &'static str {
        match self {
            SegmentComponent::Terms => "flat.terms",
            SegmentComponent::Postings => "flat.post",
            SegmentComponent::Lengths => "lens",
            SegmentComponent::Store => "store",
        }
    }

    pub fn file_name(self, segment: &str) -> String {
        format!("{segment}.{}", self.extension())
    }
}

/// What the manifest records about a segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentMeta {
    pub name: String,
    pub doc_count: u32,
    /// Sum of the flat field's document lengths (for the average document length).
    pub flat_tokens: u64,
    pub term_count: u64,
}

pub(crate) fn segment_name(id: u64) -> String {
    format!("seg-{id:06}")
}
