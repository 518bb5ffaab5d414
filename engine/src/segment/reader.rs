//! Opens a segment's files, verifies their footers and gives access to its parts.

use std::path::Path;

use super::{SegmentComponent, SegmentMeta, footer, lengths::Lengths};
use crate::directory::MappedFile;
use crate::error::{Error, Result};
use crate::postings::PostingsList;
use crate::store::{StoreReader, StoredDoc};
use crate::termdict::{TermDict, TermInfo};

/// A mapped file whose footer has been verified; `body()` excludes the footer.
struct VerifiedFile {
    file: MappedFile,
    body_len: usize,
}

impl VerifiedFile {
    fn open(dir: &Path, segment: &str, component: SegmentComponent) -> Result<Self> {
        let file = MappedFile::open(&dir.join(component.file_name(segment)))?;
        let body_len = footer::verify(file.path(), file.bytes())?.len();
        Ok(VerifiedFile { file, body_len })
    }

    fn body(&self) -> &[u8] {
        &self.file.bytes()[..self.body_len]
    }

    fn path(&self) -> &Path {
        self.file.path()
    }
}

/// An open, immutable segment.
pub(crate) struct SegmentReader {
    meta: SegmentMeta,
    terms_file: VerifiedFile,
    terms: TermDict,
    postings_file: VerifiedFile,
    lengths_file: VerifiedFile,
    lengths: Lengths,
    store_file: VerifiedFile,
    store: StoreReader,
}

impl SegmentReader {
    pub(crate) fn open(dir: &Path, meta: &SegmentMeta) -> Result<Self> {
        let terms_file = VerifiedFile::open(dir, &meta.name, SegmentComponent::Terms)?;
        let terms = TermDict::open(terms_file.path(), terms_file.body())?;
        let postings_file = VerifiedFile::open(dir, &meta.name, SegmentComponent::Postings)?;
        let lengths_file = VerifiedFile::open(dir, &meta.name, SegmentComponent::Lengths)?;
        let lengths = Lengths::open(
            lengths_file.path(),
            lengths_file.body(),
            meta.doc_count as usize,
        )?;
        let store_file = VerifiedFile::open(dir, &meta.name, SegmentComponent::Store)?;
        let store = StoreReader::open(store_file.path(), store_file.body())?;
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
        Ok(SegmentReader {
            meta: meta.clone(),
            terms_file,
            terms,
            postings_file,
            lengths_file,
            lengths,
            store_file,
            store,
        })
    }

    pub(crate) fn meta(&self) -> &SegmentMeta {
        &self.meta
    }

    pub(crate) fn doc_count(&self) -> u32 {
        self.meta.doc_count
    }

    pub(crate) fn term_info(&self, term: &str) -> Option<TermInfo> {
        self.terms.get(self.terms_file.body(), term.as_bytes())
    }

    /// The postings of a term found by [`SegmentReader::term_info`], validated.
    pub(crate) fn postings(&self, info: &TermInfo) -> Result<PostingsList<'_>> {
        let body = self.postings_file.body();
        let start = info.postings_offset;
        let end = start.checked_add(info.postings_len as u64);
        match end {
            Some(end) if end <= body.len() as u64 => PostingsList::open(
                &body[start as usize..end as usize],
                info.df,
                self.postings_file.path(),
            ),
            _ => Err(Error::Corrupt {
                path: self.postings_file.path().to_path_buf(),
                what: "postings location",
                detail: format!(
                    "{} bytes at {start} past the end ({} bytes)",
                    info.postings_len,
                    body.len()
                ),
            }),
        }
    }

    /// The flat-field document length table (see [`super::lengths::length_of`]).
    pub(crate) fn flat_lengths(&self) -> &[u8] {
        self.lengths.flat(self.lengths_file.body())
    }

    pub(crate) fn stored(&self, doc: u32) -> Result<StoredDoc<'_>> {
        self.store.get(self.store_file.body(), doc)
    }
}
