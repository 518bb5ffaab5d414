//! Opens a segment's files and gives access to its parts, each checksum-verified before
//! its first use.
//!
//! What is verified when:
//!
//! - at open: every file's footer and chunk table; the term dictionaries' header, block
//!   table and block heads (every lookup's binary search reads them); the stored fields'
//!   header and block table; the whole lengths file (small, and read per posting while
//!   scoring, where no check may cost anything), and its sums against the manifest's
//!   token totals;
//! - on a term lookup: the dictionary block that would hold the term;
//! - on opening a postings list: the chunks covering the whole list, skip table
//!   included (once per list per query, never per posting);
//! - on a stored-document fetch: its compressed block;
//! - on an exact vector search or a merge: the whole vectors file, the first time (its
//!   header chunk at open);
//! - on an approximate vector search: the whole graph file and its structure, and the
//!   whole vectors file, the first time (their header chunks at open);
//! - on a walk or scan (merges, `check_index`, the writer's id set): each block as it
//!   is reached.
//!
//! A chunk verified once stays verified for the life of the reader ([`CheckedFile`]).

use std::path::Path;

use super::checked::{CheckedFile, Integrity};
use super::{
    SegmentComponent, SegmentMeta,
    lengths::{LengthTable, Lengths},
};
use crate::error::{Error, Result};
use crate::field::Field;
use crate::postings::{PostingsList, verify};
use crate::store::{StoreReader, StoredDoc};
use crate::termdict::{TermDict, TermInfo, TermWalker};
use crate::vectors::{GraphFile, VectorsFile};

fn open_file(dir: &Path, segment: &str, component: SegmentComponent) -> Result<CheckedFile> {
    CheckedFile::open(&dir.join(component.file_name(segment)))
}

/// The term dictionary and postings of one indexed field.
struct FieldIndex {
    terms_file: CheckedFile,
    terms: TermDict,
    postings_file: CheckedFile,
}

/// An open, immutable segment.
pub(crate) struct SegmentReader {
    meta: SegmentMeta,
    /// By [`Field::index`]; `None` for a field this segment does not index.
    fields: [Option<FieldIndex>; 3],
    lengths_file: CheckedFile,
    lengths: Lengths,
    store_file: CheckedFile,
    store: StoreReader,
    /// `Some` exactly when the manifest gives the segment a vector dimension.
    vectors: Option<VectorsFile>,
    /// `Some` exactly when the manifest gives the segment a vector graph.
    graph: Option<GraphFile>,
}

impl SegmentReader {
    /// Opens the segment `meta` describes and checks the counts the manifest records
    /// that cost nothing to compare (documents, terms per field): a lying manifest fails
    /// here instead of mis-scoring. Totals that need a scan are left to `check_index`.
    pub(crate) fn open(dir: &Path, meta: &SegmentMeta) -> Result<Self> {
        let reader = Self::open_files(dir, meta)?;
        reader.check_counts()?;
        Ok(reader)
    }

    /// Opens the segment's files, checking their footers, their headers and their
    /// document counts against `meta`, but not the term counts ([`Self::count_problems`]
    /// reports those, so `check_index` can list them and still check the structures).
    /// Reads (and verifies) only what the module documentation lists for "at open".
    pub(crate) fn open_files(dir: &Path, meta: &SegmentMeta) -> Result<Self> {
        let mut fields: [Option<FieldIndex>; 3] = [None, None, None];
        for &field in &meta.fields {
            let terms_file = open_file(dir, &meta.name, SegmentComponent::Terms(field))?;
            let terms = TermDict::open(terms_file.path(), terms_file.body(), &terms_file)?;
            let postings_file = open_file(dir, &meta.name, SegmentComponent::Postings(field))?;
            fields[field.index()] = Some(FieldIndex {
                terms_file,
                terms,
                postings_file,
            });
        }
        let lengths_file = open_file(dir, &meta.name, SegmentComponent::Lengths)?;
        lengths_file.check_all()?;
        let lengths = Lengths::open(
            lengths_file.path(),
            lengths_file.body(),
            meta.doc_count as usize,
            &meta.fields,
        )?;
        let store_file = open_file(dir, &meta.name, SegmentComponent::Store)?;
        let store = StoreReader::open(store_file.path(), store_file.body(), &store_file)?;
        if store.len() != meta.doc_count as usize {
            return Err(Error::Corrupt {
                path: store_file.path().to_path_buf(),
                what: "stored fields",
                detail: format!(
                    "holds {} documents, manifest says {}",
                    store.len(),
                    meta.doc_count
                ),
            });
        }
        let vectors = match meta.vector_dim {
            Some(dim) => Some(VectorsFile::open(
                &dir.join(SegmentComponent::Vectors.file_name(&meta.name)),
                meta.doc_count,
                dim,
            )?),
            None => None,
        };
        let graph = match (meta.vector_dim, meta.vector_graph) {
            (Some(dim), true) => Some(GraphFile::open(
                &dir.join(SegmentComponent::VectorGraph.file_name(&meta.name)),
                meta.doc_count,
                dim,
            )?),
            // The manifest gives a graph only with vectors (checked when it is read).
            _ => None,
        };
        Ok(SegmentReader {
            meta: meta.clone(),
            fields,
            lengths_file,
            lengths,
            store_file,
            store,
            vectors,
            graph,
        })
    }

    /// Each field whose dictionary holds a different number of terms than the manifest
    /// says (`TermDict::open` has read the count and checked it against its block
    /// table), or whose lengths sum to a different number of tokens: BM25's average
    /// length comes from the manifest's totals, so a search must not score from totals
    /// the lengths it reads disagree with. O(documents) for the sums, over the lengths
    /// file that open verified whole anyway.
    pub(crate) fn count_problems(&self) -> Vec<Error> {
        let mut problems = Vec::new();
        for &field in &self.meta.fields {
            let total = self.lengths(field).total();
            let said = self.meta.tokens.get(field);
            if total != said {
                problems.push(Error::Corrupt {
                    path: self.lengths_path().to_path_buf(),
                    what: "document lengths",
                    detail: format!(
                        "{} lengths sum to {total} tokens, manifest says {said}",
                        field.name()
                    ),
                });
            }
            let Some(f) = &self.fields[field.index()] else {
                continue;
            };
            let held = f.terms.len() as u64;
            let said = self.meta.terms.get(field);
            if held != said {
                problems.push(Error::Corrupt {
                    path: f.terms_file.path().to_path_buf(),
                    what: "term dictionary",
                    detail: format!("holds {held} terms, manifest says {said}"),
                });
            }
        }
        problems
    }

    /// Whether `path` is one of this segment's files (in its directory).
    pub(crate) fn owns(&self, path: &Path) -> bool {
        path.parent() == self.lengths_path().parent()
            && path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                self.meta
                    .components()
                    .iter()
                    .any(|c| c.file_name(&self.meta.name) == n)
            })
    }

    /// The first of [`Self::count_problems`], as an error.
    pub(crate) fn check_counts(&self) -> Result<()> {
        match self.count_problems().into_iter().next() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    pub(crate) fn meta(&self) -> &SegmentMeta {
        &self.meta
    }

    pub(crate) fn doc_count(&self) -> u32 {
        self.meta.doc_count
    }

    /// The term's dictionary entry in `field`; `None` if absent or the field is not
    /// indexed; an error if the dictionary block it would be in is damaged.
    pub(crate) fn term_info(&self, field: Field, term: &str) -> Result<Option<TermInfo>> {
        let Some(f) = self.fields[field.index()].as_ref() else {
            return Ok(None);
        };
        f.terms
            .get(f.terms_file.body(), term.as_bytes(), &f.terms_file)
    }

    /// Every term of `field` in byte order with its dictionary entry (each block
    /// verified as the walk reaches it); `None` if the field is not indexed.
    pub(crate) fn terms(&self, field: Field) -> Option<TermWalker<'_>> {
        let f = self.fields[field.index()].as_ref()?;
        Some(f.terms.walk(f.terms_file.body(), &f.terms_file))
    }

    /// The postings of a term found by [`SegmentReader::term_info`] in `field`, verified
    /// (every chunk the list covers) and validated.
    pub(crate) fn postings(&self, field: Field, info: &TermInfo) -> Result<PostingsList<'_>> {
        let f = self.fields[field.index()].as_ref().ok_or_else(|| {
            Error::InvalidArgument(format!(
                "segment {} does not index {}",
                self.meta.name,
                field.name()
            ))
        })?;
        let body = f.postings_file.body();
        let start = info.postings_offset;
        let end = start.checked_add(info.postings_len as u64);
        match end {
            Some(end) if end <= body.len() as u64 => {
                let range = start as usize..end as usize;
                f.postings_file.check(range.clone())?;
                let lengths = self.lengths(field);
                PostingsList::open(
                    &body[range],
                    info.df,
                    |doc| lengths.get(doc),
                    f.postings_file.path(),
                )
            }
            _ => Err(Error::Corrupt {
                path: f.postings_file.path().to_path_buf(),
                what: "postings location",
                detail: format!(
                    "{} bytes at {start} past the end ({} bytes)",
                    info.postings_len,
                    body.len()
                ),
            }),
        }
    }

    /// Opens the postings of `term` (whose entry is `info`) in `field` and checks every
    /// posting with [`crate::postings::verify`], calling `visit(doc, tf)` for each one in
    /// range and in order. Each problem is an error naming the postings file and the term.
    /// Empty when the list is sound. `check_index` reports them all; a merge refuses the
    /// segment on the first.
    pub(crate) fn verify_postings(
        &self,
        field: Field,
        term: &[u8],
        info: &TermInfo,
        visit: impl FnMut(u32, u32),
    ) -> Vec<Error> {
        let list = match self.postings(field, info) {
            Ok(list) => list,
            Err(e) => return vec![e],
        };
        let lengths = self.lengths(field);
        let problems = verify(&list, self.meta.doc_count, |d| lengths.get(d), visit);
        let path = self.fields[field.index()]
            .as_ref()
            .map(|f| f.postings_file.path().to_path_buf())
            .unwrap_or_default(); // `postings` succeeded, so the field is indexed
        let term = String::from_utf8_lossy(term);
        problems
            .into_iter()
            .map(|detail| Error::Corrupt {
                path: path.clone(),
                what: "postings list",
                detail: format!("term {term:?}: {detail}"),
            })
            .collect()
    }

    /// The document lengths of `field`, which this segment must index.
    pub(crate) fn lengths(&self, field: Field) -> LengthTable<'_> {
        self.lengths.table(self.lengths_file.body(), field)
    }

    /// The stored-fields file, for errors.
    pub(crate) fn store_path(&self) -> &Path {
        self.store_file.path()
    }

    /// The lengths file, for errors.
    pub(crate) fn lengths_path(&self) -> &Path {
        self.lengths_file.path()
    }

    /// The segment's vectors; `None` in an index without vectors.
    pub(crate) fn vectors(&self) -> Option<&VectorsFile> {
        self.vectors.as_ref()
    }

    /// The segment's vector graph; `None` if it has none (no vectors, or a small segment).
    pub(crate) fn graph(&self) -> Option<&GraphFile> {
        self.graph.as_ref()
    }

    /// Stored document `doc` (verifies and decompresses its block: for the final hits).
    pub(crate) fn stored(&self, doc: u32) -> Result<StoredDoc> {
        self.store
            .get(self.store_file.body(), doc, &self.store_file)
    }

    /// Calls `f(doc, id, title)` for every stored document in order, each block
    /// verified and decompressed once (for merges, delete resolution and checks).
    pub(crate) fn scan_stored(&self, f: impl FnMut(u32, &str, &str) -> Result<()>) -> Result<()> {
        self.store.scan(self.store_file.body(), &self.store_file, f)
    }
}
