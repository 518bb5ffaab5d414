//! The manifest: the one file that says which segments make up the index. It is JSON (a
//! person can read it) followed by the standard footer, and it is only ever replaced
//! atomically.

use std::collections::HashSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::analysis::AnalyzerConfig;
use crate::directory::atomic_replace;
use crate::error::{Error, Result};
use crate::field::Field;
use crate::segment::names::{self, HeddleFile, segment_id};
use crate::segment::{FORMAT_VERSION, SegmentMeta, footer};

pub const MANIFEST_FILE: &str = "MANIFEST";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    pub format_version: u32,
    /// Bumped by every commit.
    pub generation: u64,
    /// The analyzer every document and query of this index goes through.
    pub analyzer: AnalyzerConfig,
    /// Fields every new segment indexes: `flat`, plus `title` and `text` when the index
    /// was created with per-field postings.
    pub fields: Vec<Field>,
    /// The dimension of every document's vector, fixed when the index is created;
    /// `None` (and absent from the JSON, as in manifests written before vectors
    /// existed) for an index without vectors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_dim: Option<u32>,
    /// The next segment gets this number; numbers are never reused.
    pub next_segment_id: u64,
    /// Oldest first: internal doc ids are assigned in this order.
    pub segments: Vec<SegmentMeta>,
}

/// The largest `generation` and `next_segment_id` a manifest may hold (2^53).
pub(crate) const MAX_COUNTER: u64 = 1 << 53;

impl Manifest {
    pub(crate) fn new(analyzer: AnalyzerConfig, per_field: bool) -> Self {
        let fields = if per_field {
            Field::ALL.to_vec()
        } else {
            vec![Field::Flat]
        };
        Manifest {
            format_version: FORMAT_VERSION,
            generation: 0,
            analyzer,
            fields,
            vector_dim: None,
            next_segment_id: 1,
            segments: Vec::new(),
        }
    }

    /// The empty manifest of a new index with `settings` (its vector dimension checked).
    pub(crate) fn for_settings(settings: &super::IndexSettings) -> Result<Self> {
        let mut manifest = Self::new(settings.analyzer.clone(), settings.per_field);
        manifest.vector_dim = crate::vectors::checked_dim(settings.vector_dim)?;
        Ok(manifest)
    }

    pub(crate) fn load(dir: &Path) -> Result<Manifest> {
        let path = dir.join(MANIFEST_FILE);
        // A regular file only: a FIFO here must not block the reader, a symlink is damage.
        let bytes = match crate::directory::read_regular(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.is_not_found() => {
                return Err(Error::NoIndex {
                    path: dir.to_path_buf(),
                });
            }
            Err(e) => return Err(e),
        };
        let body = footer::verify(&path, &bytes)?;
        Self::parse(&path, body)
    }

    /// Parses a manifest body (the JSON before the footer) read from `path`.
    pub(crate) fn parse(path: &Path, body: &[u8]) -> Result<Manifest> {
        let manifest: Manifest = serde_json::from_slice(body).map_err(|e| Error::Manifest {
            path: path.to_path_buf(),
            detail: e.to_string(),
        })?;
        if manifest.format_version != FORMAT_VERSION {
            return Err(Error::Version {
                path: path.to_path_buf(),
                expected: FORMAT_VERSION,
                found: manifest.format_version,
            });
        }
        manifest.validate().map_err(|detail| Error::Manifest {
            path: path.to_path_buf(),
            detail,
        })?;
        Ok(manifest)
    }

    /// The invariants every reader relies on that need no file but the manifest. A
    /// checksum is no authentication: a manifest with a valid footer may still name
    /// `../elsewhere/seg-000001`, which a merge would later delete, or list a segment
    /// twice, which a merge would copy twice. Each failure names the field at fault.
    fn validate(&self) -> std::result::Result<(), String> {
        // Counters a commit adds one to: at the maximum, the next commit could not be
        // named (or would wrap), so such a manifest is damage, reported by `check`
        // before it bricks a writer. 2^53 commits at a million a second is 285 years.
        for (name, value) in [
            ("generation", self.generation),
            ("next_segment_id", self.next_segment_id),
        ] {
            if value > MAX_COUNTER {
                return Err(format!(
                    "{name} {value}: above {MAX_COUNTER}, more than any index reaches"
                ));
            }
        }
        // Every segment indexes the index's fields, flat first: merges and commits build
        // each new segment's files for exactly these fields from every source segment.
        if self.fields.first() != Some(&Field::Flat) {
            return Err(format!("fields {:?} do not start with flat", self.fields));
        }
        if let Some(f) = self
            .fields
            .iter()
            .enumerate()
            .find_map(|(i, f)| self.fields[..i].contains(f).then_some(f))
        {
            return Err(format!("fields {:?} name {} twice", self.fields, f.name()));
        }
        if let Some(dim) = self.vector_dim
            && !(1..=crate::vectors::MAX_VECTOR_DIM).contains(&(dim as usize))
        {
            return Err(format!(
                "vector_dim {dim}: not 1 to {}",
                crate::vectors::MAX_VECTOR_DIM
            ));
        }
        let mut seen = HashSet::with_capacity(self.segments.len());
        for (i, s) in self.segments.iter().enumerate() {
            let at = format!("segments[{i}]");
            let Some(id) = segment_id(&s.name) else {
                return Err(format!(
                    "{at}.name {:?}: not a segment name heddle writes (seg-NNNNNN)",
                    s.name
                ));
            };
            if id >= self.next_segment_id {
                return Err(format!(
                    "{at}.name {:?}: id {id} is not below next_segment_id {}",
                    s.name, self.next_segment_id
                ));
            }
            if !seen.insert(s.name.as_str()) {
                return Err(format!("{at}.name {:?}: listed twice", s.name));
            }
            if s.fields != self.fields {
                return Err(format!(
                    "{at} {} indexes {:?}, the index {:?}",
                    s.name, s.fields, self.fields
                ));
            }
            // Every segment has a vectors file of the index's dimension, or none has one.
            if s.vector_dim != self.vector_dim {
                return Err(format!(
                    "{at} {} has vectors of dimension {:?}, the index {:?}",
                    s.name, s.vector_dim, self.vector_dim
                ));
            }
            // A graph links vectors, and at least one document.
            if s.vector_graph {
                if s.vector_dim.is_none() {
                    return Err(format!("{at} {} has a vector graph and no vectors", s.name));
                }
                if s.doc_count == 0 {
                    return Err(format!(
                        "{at} {} has a vector graph and no documents",
                        s.name
                    ));
                }
            }
            // Snapshot totals sum every field over every segment.
            for f in Field::ALL.into_iter().filter(|f| !s.has_field(*f)) {
                let (tokens, terms) = (s.tokens.get(f), s.terms.get(f));
                if tokens != 0 || terms != 0 {
                    return Err(format!(
                        "{at} {}: {tokens} tokens and {terms} terms of {}, a field it does not index",
                        s.name,
                        f.name()
                    ));
                }
            }
            if let Some(d) = &s.deletes {
                let ours = matches!(
                    names::classify(&d.file),
                    Some(HeddleFile::Deletes { segment, .. }) if segment == s.name
                );
                if !ours {
                    return Err(format!(
                        "{at}.deletes.file {:?}: not a delete file heddle writes for {}",
                        d.file, s.name
                    ));
                }
                if d.count > s.doc_count {
                    return Err(format!(
                        "{at}.deletes.count {} exceeds the segment's doc_count {}",
                        d.count, s.doc_count
                    ));
                }
            }
        }
        Ok(())
    }

    /// Replaces the manifest atomically. `after_tmp` runs once the temporary file is
    /// durable and before the rename (failpoints).
    pub(crate) fn store(
        &self,
        dir: &Path,
        after_tmp: impl FnOnce(&Path) -> Result<()>,
    ) -> Result<()> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a manifest always serializes");
        bytes.push(b'\n');
        footer::append_footer(&mut bytes);
        atomic_replace(dir, MANIFEST_FILE, &bytes, || after_tmp(dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::FieldCounts;
    use crate::segment::{DeletesMeta, SegmentMeta};

    fn body_of(manifest: &Manifest) -> Vec<u8> {
        serde_json::to_vec(manifest).unwrap()
    }

    /// A flat index of two segments, seg-000001 and seg-000002 (3 docs each).
    fn two_segments() -> Manifest {
        let mut m = Manifest::new(AnalyzerConfig::plain(), false);
        for id in 1..=2 {
            m.segments.push(SegmentMeta {
                name: crate::segment::segment_name(id),
                doc_count: 3,
                fields: vec![Field::Flat],
                tokens: FieldCounts::default(),
                terms: FieldCounts::default(),
                deletes: None,
                vector_dim: None,
                vector_graph: false,
            });
        }
        m.next_segment_id = 3;
        m
    }

    /// The error `parse` gives for `m`, as text.
    fn refusal(m: &Manifest) -> String {
        match Manifest::parse(Path::new("MANIFEST"), &body_of(m)) {
            Err(e @ Error::Manifest { .. }) => e.to_string(),
            other => panic!("expected a manifest error, got {other:?}"),
        }
    }

    #[test]
    fn file_names_must_be_ones_heddle_writes() {
        assert!(Manifest::parse(Path::new("MANIFEST"), &body_of(&two_segments())).is_ok());
        for name in [
            "../victim/seg-000001",
            "/tmp/seg-000001",
            "seg-1",
            "seg-000001/..",
            "",
        ] {
            let mut m = two_segments();
            m.segments[1].name = name.into();
            let err = refusal(&m);
            assert!(
                err.contains(&format!("segments[1].name {name:?}: not a segment name")),
                "{err}"
            );
        }
        for file in [
            "../seg-000002.del-000001",
            "seg-000001.del-000001", // another segment's
            "seg-000002.lens",
            "seg-000002.del-1",
        ] {
            let mut m = two_segments();
            m.segments[1].deletes = Some(DeletesMeta {
                file: file.into(),
                count: 1,
            });
            let err = refusal(&m);
            assert!(err.contains("segments[1].deletes.file"), "{err}");
        }
        let mut m = two_segments();
        m.next_segment_id = 2;
        assert!(refusal(&m).contains("not below next_segment_id 2"));
    }

    #[test]
    fn counts_and_entries_must_be_possible() {
        let mut dup = two_segments();
        dup.segments[1].name = dup.segments[0].name.clone();
        assert!(refusal(&dup).contains("listed twice"));

        let mut over = two_segments();
        over.segments[0].deletes = Some(DeletesMeta {
            file: "seg-000001.del-000004".into(),
            count: 100,
        });
        let err = refusal(&over);
        assert!(
            err.contains("segments[0].deletes.count 100 exceeds"),
            "{err}"
        );

        let mut ghost = two_segments();
        ghost.segments[0].tokens.title = 5;
        assert!(refusal(&ghost).contains("a field it does not index"));

        let mut twice = two_segments();
        twice.fields = vec![Field::Flat, Field::Flat];
        for s in &mut twice.segments {
            s.fields = twice.fields.clone();
        }
        assert!(refusal(&twice).contains("name flat twice"));
    }

    #[test]
    fn vector_dimensions_must_be_the_index_one_and_possible() {
        let path = Path::new("MANIFEST");
        let mut m = two_segments();
        m.vector_dim = Some(384);
        for s in &mut m.segments {
            s.vector_dim = Some(384);
        }
        let body = body_of(&m);
        assert_eq!(Manifest::parse(path, &body).unwrap(), m);
        assert!(String::from_utf8_lossy(&body).contains("\"vector_dim\":384"));

        let mut one_without = m.clone();
        one_without.segments[1].vector_dim = None;
        assert!(
            refusal(&one_without).contains("segments[1] seg-000002 has vectors of dimension None")
        );
        let mut other_dim = m.clone();
        other_dim.segments[0].vector_dim = Some(3);
        assert!(refusal(&other_dim).contains("segments[0]"));
        let mut index_without = m.clone();
        index_without.vector_dim = None;
        assert!(refusal(&index_without).contains("the index None"));
        for dim in [0, crate::vectors::MAX_VECTOR_DIM as u32 + 1] {
            let mut absurd = m.clone();
            absurd.vector_dim = Some(dim);
            for s in &mut absurd.segments {
                s.vector_dim = Some(dim);
            }
            assert!(refusal(&absurd).contains(&format!("vector_dim {dim}")));
        }
    }

    #[test]
    fn a_vector_graph_needs_vectors_and_documents() {
        let path = Path::new("MANIFEST");
        let mut m = two_segments();
        m.vector_dim = Some(8);
        for s in &mut m.segments {
            s.vector_dim = Some(8);
        }
        m.segments[1].vector_graph = true;
        let body = body_of(&m);
        assert_eq!(Manifest::parse(path, &body).unwrap(), m);
        let text = String::from_utf8_lossy(&body).into_owned();
        assert_eq!(text.matches("\"vector_graph\":true").count(), 1, "{text}");
        assert!(!text.contains("\"vector_graph\":false"), "{text}");

        let mut empty = m.clone();
        empty.segments[1].doc_count = 0;
        empty.segments[1].tokens = Default::default();
        empty.segments[1].terms = Default::default();
        assert!(
            refusal(&empty).contains("seg-000002 has a vector graph and no documents"),
            "{}",
            refusal(&empty)
        );
        let mut without_vectors = two_segments();
        without_vectors.segments[0].vector_graph = true;
        assert!(refusal(&without_vectors).contains("has a vector graph and no vectors"));
    }

    /// Manifests written before vectors existed have no `vector_dim` anywhere; one
    /// without vectors is still written without it, byte for byte as before.
    #[test]
    fn manifests_without_vectors_are_read_and_written_as_before() {
        let m = two_segments();
        let body = body_of(&m);
        assert!(!String::from_utf8_lossy(&body).contains("vector"));
        let parsed = Manifest::parse(Path::new("MANIFEST"), &body).unwrap();
        assert_eq!(parsed.vector_dim, None);
        assert!(parsed.segments.iter().all(|s| s.vector_dim.is_none()));
    }

    #[test]
    fn segments_must_index_the_index_fields_flat_first() {
        let mut m = two_segments();
        m.segments.truncate(1);
        let path = Path::new("MANIFEST");
        assert!(Manifest::parse(path, &body_of(&m)).is_ok());

        // The index claims per-field postings its segment does not have: a merge would
        // ask the segment for lengths it never stored.
        let mut wider = m.clone();
        wider.fields = Field::ALL.to_vec();
        let err = Manifest::parse(path, &body_of(&wider)).unwrap_err();
        assert!(err.to_string().contains("seg-000001 indexes"), "{err}");

        let mut no_flat = m.clone();
        no_flat.fields = vec![Field::Title];
        no_flat.segments[0].fields = vec![Field::Title];
        let err = Manifest::parse(path, &body_of(&no_flat)).unwrap_err();
        assert!(err.to_string().contains("do not start with flat"), "{err}");
    }
}
