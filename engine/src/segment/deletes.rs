//! Deleted documents of one segment: a roaring bitmap of local doc ids, in a file of its
//! own (`seg-N.del-G`, G the manifest generation that wrote it). A segment's postings
//! never change; a commit that deletes writes a new bitmap file and names it in the
//! manifest, so deletions become visible atomically with that commit.
//!
//! Body layout: the bitmap in the portable roaring serialization, then the footer.

use std::path::{Path, PathBuf};

use roaring::RoaringBitmap;

use super::{DeletesMeta, footer};
use crate::directory::MappedFile;
use crate::error::{Error, Result};

pub(crate) fn file_name(segment: &str, generation: u64) -> String {
    super::names::delete_file_name(segment, generation)
}

/// The complete file bytes (footer included) for `deleted`.
pub(crate) fn file_bytes(deleted: &RoaringBitmap) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(deleted.serialized_size() + footer::FOOTER_LEN);
    deleted
        .serialize_into(&mut bytes)
        .expect("writing to a Vec cannot fail");
    footer::append_footer(&mut bytes);
    bytes
}

/// Decodes a delete file's bytes (footer included) and checks every id is below
/// `doc_count`.
pub(crate) fn decode(path: &Path, file: &[u8], doc_count: u32) -> Result<RoaringBitmap> {
    let body = footer::verify(path, file)?;
    let bitmap = RoaringBitmap::deserialize_from(body).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what: "delete bitmap",
        detail: e.to_string(),
    })?;
    if let Some(max) = bitmap.max()
        && max >= doc_count
    {
        return Err(Error::Corrupt {
            path: path.to_path_buf(),
            what: "delete bitmap",
            detail: format!("deletes document {max} of a segment of {doc_count}"),
        });
    }
    Ok(bitmap)
}

/// An open delete file.
#[derive(Debug)]
pub(crate) struct DeleteSet {
    path: PathBuf,
    bitmap: RoaringBitmap,
}

impl DeleteSet {
    /// Reads `dir/file` and checks every id is below `doc_count`.
    pub(crate) fn open(dir: &Path, file: &str, doc_count: u32) -> Result<Self> {
        let path = dir.join(file);
        let mapped = MappedFile::open(&path)?;
        let bitmap = decode(&path, mapped.bytes(), doc_count)?;
        Ok(DeleteSet { path, bitmap })
    }

    /// Like [`DeleteSet::open`], and also checks the bitmap deletes exactly as many
    /// documents as the manifest's `meta.count` (live counts are computed from it).
    /// Cheap: roaring keeps each container's cardinality.
    pub(crate) fn open_counted(dir: &Path, meta: &DeletesMeta, doc_count: u32) -> Result<Self> {
        let set = Self::open(dir, &meta.file, doc_count)?;
        let held = set.bitmap.len();
        if held != u64::from(meta.count) {
            return Err(Error::Corrupt {
                path: set.path,
                what: "delete bitmap",
                detail: format!("deletes {held} documents, manifest says {}", meta.count),
            });
        }
        Ok(set)
    }

    pub(crate) fn bitmap(&self) -> &RoaringBitmap {
        &self.bitmap
    }

    #[inline]
    pub(crate) fn contains(&self, doc: u32) -> bool {
        self.bitmap.contains(doc)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_out_of_range_ids() {
        let dir = tempfile::tempdir().unwrap();
        let bitmap: RoaringBitmap = [1u32, 5, 99].into_iter().collect();
        std::fs::write(dir.path().join("d"), file_bytes(&bitmap)).unwrap();
        let set = DeleteSet::open(dir.path(), "d", 100).unwrap();
        assert!(set.contains(5) && !set.contains(6));
        assert_eq!(set.bitmap().len(), 3);
        assert!(matches!(
            DeleteSet::open(dir.path(), "d", 99),
            Err(Error::Corrupt { .. })
        ));
    }
}
