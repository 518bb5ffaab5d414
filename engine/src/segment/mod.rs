//! Immutable segments: the files one commit writes, and their readers.
//!
//! A segment is named `seg-NNNNNN` and made of one file per [`SegmentComponent`]. Every
//! file ends in a `footer` with a checksum per chunk of its body: the footer is verified
//! when the segment is opened, each chunk before its bytes are first read (`checked`).

mod builder;
pub(crate) mod bytes;
pub(crate) mod checked;
pub(crate) mod deletes;
pub(crate) mod footer;
pub(crate) mod lengths;
pub(crate) mod merger;
pub(crate) mod names;
mod progress;
mod reader;
mod reorder;
pub(crate) mod sealed_file;

use serde::{Deserialize, Serialize};

use crate::field::{Field, FieldCounts};

pub(crate) use builder::{BuiltSegment, build_segment};
pub use footer::FORMAT_VERSION;
pub(crate) use lengths::LengthTable;
pub(crate) use names::segment_name;
pub(crate) use progress::PhaseReport;
pub use progress::{CommitPhase, CommitProgress};
pub(crate) use reader::SegmentReader;
pub use reorder::{BpConfig, Reorder, ReorderProgress};

/// One kind of segment file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentComponent {
    /// Term dictionary of one field.
    Terms(Field),
    /// Postings lists of one field.
    Postings(Field),
    /// Document lengths per field.
    Lengths,
    /// Stored fields (external id, title).
    Store,
    /// One dense vector per document (indexes created with a vector dimension).
    Vectors,
    /// The vectors' graph: each document's nearest neighbours on a stack of layers
    /// (segments the manifest gives `vector_graph`).
    VectorGraph,
}

impl SegmentComponent {
    /// The file extension. Field-specific components carry the field name
    /// (`flat.terms`, `title.post`, ...).
    pub fn extension(self) -> String {
        match self {
            SegmentComponent::Terms(field) => format!("{}.terms", field.name()),
            SegmentComponent::Postings(field) => format!("{}.post", field.name()),
            SegmentComponent::Lengths => "lens".to_string(),
            SegmentComponent::Store => "store".to_string(),
            SegmentComponent::Vectors => "vec".to_string(),
            SegmentComponent::VectorGraph => "hnsw".to_string(),
        }
    }

    pub fn file_name(self, segment: &str) -> String {
        format!("{segment}.{}", self.extension())
    }

    /// Every file of a segment with these indexed fields, with vectors or not, and with
    /// a vector graph or not.
    pub fn all(fields: &[Field], vectors: bool, graph: bool) -> Vec<SegmentComponent> {
        let mut all = Vec::with_capacity(2 * fields.len() + 4);
        for &f in fields {
            all.push(SegmentComponent::Terms(f));
            all.push(SegmentComponent::Postings(f));
        }
        all.push(SegmentComponent::Lengths);
        all.push(SegmentComponent::Store);
        if vectors {
            all.push(SegmentComponent::Vectors);
        }
        if graph {
            all.push(SegmentComponent::VectorGraph);
        }
        all
    }
}

/// What the manifest records about a segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentMeta {
    pub name: String,
    pub doc_count: u32,
    /// Fields with a term dictionary, postings and lengths in this segment: the index's
    /// `fields` (checked when the manifest is read).
    pub fields: Vec<Field>,
    /// Sum of each indexed field's document lengths (for the average document length;
    /// 0 for a field the segment does not index).
    pub tokens: FieldCounts,
    /// Distinct terms of each indexed field (0 for a field not indexed).
    pub terms: FieldCounts,
    /// The segment's delete file and how many documents it deletes; `None` if none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletes: Option<DeletesMeta>,
    /// The dimension of the segment's vectors file: the index's `vector_dim` (checked
    /// when the manifest is read); `None` (and absent from the JSON) without vectors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_dim: Option<u32>,
    /// Whether the segment has a graph file (`seg-N.hnsw`; only with a `vector_dim`);
    /// `false` (and absent from the JSON) without one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub vector_graph: bool,
}

/// A segment's current delete file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeletesMeta {
    pub file: String,
    pub count: u32,
}

impl SegmentMeta {
    pub fn has_field(&self, field: Field) -> bool {
        self.fields.contains(&field)
    }

    /// Documents not deleted. Saturates: a manifest is checked to delete no more than
    /// the segment holds, but a count must never wrap into billions whatever it says.
    pub fn live_docs(&self) -> u32 {
        self.doc_count
            .saturating_sub(self.deletes.as_ref().map_or(0, |d| d.count))
    }

    /// The component files of this segment.
    pub fn components(&self) -> Vec<SegmentComponent> {
        SegmentComponent::all(&self.fields, self.vector_dim.is_some(), self.vector_graph)
    }

    /// Every file this segment uses now: its components and its delete file.
    pub fn files(&self) -> Vec<String> {
        let mut files: Vec<String> = self
            .components()
            .into_iter()
            .map(|c| c.file_name(&self.name))
            .collect();
        if let Some(d) = &self.deletes {
            files.push(d.file.clone());
        }
        files
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_docs_never_wraps() {
        let meta = SegmentMeta {
            name: segment_name(1),
            doc_count: 4,
            fields: vec![Field::Flat],
            tokens: FieldCounts::default(),
            terms: FieldCounts::default(),
            deletes: Some(DeletesMeta {
                file: names::delete_file_name(&segment_name(1), 2),
                count: 100,
            }),
            vector_dim: None,
            vector_graph: false,
        };
        assert_eq!(meta.live_docs(), 0);
    }
}
