//! Which segments get an IVF file, with how many lists, and building it: at a flush from
//! the rows just encoded, at a merge from the vectors file just written (docs/
//! DECISIONS.md, "Approximate vector search").

use std::path::Path;

use super::file::VectorsFile;
use super::ivf::{MAX_LISTS, body_len, write_heap_bytes, write_ivf};
use super::kmeans::cluster;
use super::{VectorTable, kmeans};
use crate::error::Result;
use crate::segment::footer;
use crate::segment::sealed_file::SealedFileWriter;

/// Segments of fewer documents get no IVF file unless the writer is told otherwise:
/// below this an exact scan reads at most 6 MiB of 384-dimension rows (well under a
/// millisecond), within a small factor of probing lists, and is exact.
pub const DEFAULT_IVF_MIN_DOCS: u32 = 4096;

/// How the segments a writer builds (flushes, commits, merges) get their IVF files: set
/// with [`crate::IndexWriter::set_ivf`]. Not stored in the index: whether a segment has
/// an IVF file, and how many lists it holds, is recorded per segment in the manifest,
/// and every reader reads it the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IvfSettings {
    /// Segments of fewer documents get none, and approximate searches scan them
    /// exactly (default [`DEFAULT_IVF_MIN_DOCS`]; `u32::MAX` builds none, 1 one for
    /// every segment that has a document).
    pub min_docs: u32,
}

impl Default for IvfSettings {
    fn default() -> Self {
        IvfSettings {
            min_docs: DEFAULT_IVF_MIN_DOCS,
        }
    }
}

impl IvfSettings {
    /// The lists of an IVF file for a segment of `docs` documents; `None` if it gets none.
    pub(crate) fn lists(&self, docs: u32) -> Option<u32> {
        (docs > 0 && docs >= self.min_docs).then(|| lists_for(docs))
    }
}

/// Lists for `docs` documents: the square root, rounded (413 for 171k documents of
/// ~414 each), at least 1 and at most `docs`. A query scores every centroid and the
/// rows of the lists it probes, so with `p` probes it reads about `(1 + p) × √docs`
/// rows: the square root balances the two.
pub(crate) fn lists_for(docs: u32) -> u32 {
    let root = f64::from(docs).sqrt().round() as u32;
    root.clamp(1, MAX_LISTS).min(docs.max(1))
}

/// The IVF body for the vectors body `vectors` (as `encode_rows` made it: `docs` rows
/// of `dim` values) in `lists` lists, with room for its footer, and the most heap the
/// build held beside the body (freed when this returns). Clusters on rayon's current
/// pool.
pub(crate) fn ivf_body(vectors: &[u8], docs: u32, dim: u32, lists: u32) -> (Vec<u8>, usize) {
    let table = VectorTable::open(Path::new("new segment"), vectors, docs, dim)
        .expect("a vectors body just encoded is well formed");
    let rows = table.rows(vectors);
    let clustering = cluster(rows, lists as usize, true);
    let body_len = body_len(docs as usize, dim as usize, lists as usize);
    let mut body = Vec::with_capacity(
        body_len + 4 * body_len.div_ceil(1 << footer::CHUNK_SHIFT) + footer::FOOTER_LEN,
    );
    write_ivf(
        dim,
        &clustering.centroids,
        &clustering.assignment,
        rows,
        |b| {
            body.extend_from_slice(b);
            Ok(())
        },
    )
    .expect("writing to memory does not fail");
    let writing = write_heap_bytes(docs as usize, lists as usize, dim as usize)
        + 4 * (clustering.centroids.capacity() + clustering.assignment.capacity());
    (body, clustering.heap_bytes.max(writing))
}

/// Writes the IVF body of the merged segment's vectors file `vectors` (`docs` rows of
/// `dim` values, just written) in `lists` lists to `out`, clustering on this thread. Reads
/// the rows back from the file (verified once), twice: to cluster them, then to copy
/// them in list order (from the page cache: the file was just written), so the merge
/// holds no row; its heap is the clustering's, O(docs + lists × dim).
pub(crate) fn write_merged_ivf(
    vectors: &Path,
    docs: u32,
    dim: u32,
    lists: u32,
    out: &mut SealedFileWriter,
) -> Result<()> {
    let file = VectorsFile::open(vectors, docs, dim)?;
    let rows = file.rows()?;
    let clustering = kmeans::cluster(rows, lists as usize, false);
    write_ivf(
        dim,
        &clustering.centroids,
        &clustering.assignment,
        rows,
        |b| out.write(b),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_segments_get_no_lists_and_large_ones_about_the_square_root() {
        let settings = IvfSettings::default();
        assert_eq!(settings.lists(DEFAULT_IVF_MIN_DOCS - 1), None);
        assert_eq!(settings.lists(DEFAULT_IVF_MIN_DOCS), Some(64));
        assert_eq!(settings.lists(171_332), Some(414));
        assert_eq!(IvfSettings { min_docs: 1 }.lists(1), Some(1));
        assert_eq!(IvfSettings { min_docs: 1 }.lists(0), None);
        assert_eq!(IvfSettings { min_docs: 0 }.lists(0), None);
        assert_eq!(IvfSettings { min_docs: u32::MAX }.lists(u32::MAX - 1), None);
        assert_eq!(lists_for(2), 1);
        assert_eq!(lists_for(3), 2);
        assert_eq!(lists_for(u32::MAX), MAX_LISTS);
    }

    #[test]
    fn a_flush_body_is_sized_as_its_footer_needs_and_counted() {
        let rows: Vec<Vec<f32>> = (0..200)
            .map(|i| vec![(i % 7) as f32, (i % 5) as f32 - 2.0, 1.0])
            .collect();
        let vectors = crate::vectors::encode_rows(3, 200, rows.iter().map(Vec::as_slice));
        let (body, heap) = ivf_body(&vectors, 200, 3, 14);
        assert_eq!(body.len(), 12 + 4 * (14 * 3 + 15 + 200 + 200 * 3));
        let capacity = body.capacity();
        assert_eq!(footer::sealed(body.clone()).len(), capacity);
        assert!(heap >= 4 * (200 + 14 * 3), "{heap}");
        let p = Path::new("i");
        let lists = super::super::IvfShape::open(p, &body, 200, 3, 14)
            .unwrap()
            .validate(p, &body)
            .unwrap();
        let mut copied = 0;
        for l in 0..lists.len() {
            let (ids, list_rows) = lists.list_rows(l).unwrap();
            for (doc, row) in ids.zip(list_rows) {
                let row: Vec<f32> = row
                    .chunks(4)
                    .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                    .collect();
                assert_eq!(row, rows[doc as usize], "document {doc}");
                copied += 1;
            }
        }
        assert_eq!(copied, 200);
    }
}
