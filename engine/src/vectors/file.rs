//! The vectors file of a segment, `seg-N.vec`: one row of `dim` little-endian f32s per
//! document, in the segment's doc order, behind an 8-byte header.
//!
//! Body layout: `docs u32 | dim u32 | docs × dim × f32`. The body starts the file, and
//! the file is mapped at a page boundary, so every row starts 4-byte aligned at
//! `8 + doc × dim × 4`; rows are contiguous, so an exact search reads the file front to
//! back. The header repeats what the manifest says (the segment's `doc_count` and the
//! index's `vector_dim`): opening checks both and the body's exact length, so a row
//! index below `docs` always names a whole row.

use std::path::Path;
use std::sync::OnceLock;

use super::codes::Codes;

use crate::error::{Error, Result};
use crate::segment::bytes::ByteReader;
use crate::segment::checked::{CheckedFile, Integrity};
use crate::segment::footer;

/// Bytes before the first row.
const HEADER_LEN: usize = 8;

/// Capacity for a body of `docs` rows of `dim` values and the footer sealing it: the
/// file is the largest a build or merge makes, and sealing a full vector would double it.
pub(crate) fn sealed_capacity(docs: usize, dim: u32) -> usize {
    let body = HEADER_LEN + docs * dim as usize * 4;
    body + 4 * body.div_ceil(1 << footer::CHUNK_SHIFT) + footer::FOOTER_LEN
}

/// The body of a vectors file holding `rows` (each of `dim` values) in the order given,
/// with room for its footer. Every row must have `dim` values: the writer checked each
/// document's vector.
pub(crate) fn encode_rows<'a>(
    dim: u32,
    docs: usize,
    rows: impl Iterator<Item = &'a [f32]>,
) -> Vec<u8> {
    let mut body = Vec::with_capacity(sealed_capacity(docs, dim));
    body.extend_from_slice(&(docs as u32).to_le_bytes());
    body.extend_from_slice(&dim.to_le_bytes());
    let mut written = 0usize;
    for row in rows {
        assert_eq!(row.len(), dim as usize, "the writer checks every vector");
        for v in row {
            body.extend_from_slice(&v.to_le_bytes());
        }
        written += 1;
    }
    assert_eq!(written, docs, "one row per document");
    body
}

/// The header of a body with `docs` rows of `dim` values, for callers that append rows
/// themselves (merges copy rows as bytes).
pub(crate) fn header(docs: u32, dim: u32) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..4].copy_from_slice(&docs.to_le_bytes());
    h[4..].copy_from_slice(&dim.to_le_bytes());
    h
}

/// A validated body's shape.
#[derive(Debug, Clone, Copy)]
pub(crate) struct VectorTable {
    docs: usize,
    dim: usize,
}

impl VectorTable {
    /// Reads the header of `body` and checks it against the manifest (`expected_docs`
    /// rows of `expected_dim` values) and the body's length against both. Reads only
    /// the 8 header bytes, which the caller must have verified.
    pub(crate) fn open(
        path: &Path,
        body: &[u8],
        expected_docs: u32,
        expected_dim: u32,
    ) -> Result<Self> {
        let corrupt = |detail: String| Error::Corrupt {
            path: path.to_path_buf(),
            what: "vectors",
            detail,
        };
        let mut r = ByteReader::new(path, body);
        let docs = r.u32("vector count")?;
        let dim = r.u32("vector dimension")?;
        if docs != expected_docs {
            return Err(corrupt(format!(
                "holds {docs} vectors, manifest says {expected_docs} documents"
            )));
        }
        if dim != expected_dim {
            return Err(corrupt(format!(
                "vectors of {dim} dimensions, manifest says {expected_dim}"
            )));
        }
        // In u128: no header (a fuzzer's included) can overflow it.
        let rows = u128::from(docs) * u128::from(dim) * 4;
        if HEADER_LEN as u128 + rows != body.len() as u128 {
            return Err(Error::Truncated {
                path: path.to_path_buf(),
                what: "vector rows",
                offset: HEADER_LEN as u64,
                needed: u64::try_from(rows).unwrap_or(u64::MAX),
                available: body.len().saturating_sub(HEADER_LEN) as u64,
            });
        }
        Ok(VectorTable {
            docs: docs as usize,
            dim: dim as usize,
        })
    }

    /// The rows of the body `open` checked.
    pub(crate) fn rows<'a>(&self, body: &'a [u8]) -> Rows<'a> {
        Rows {
            bytes: &body[HEADER_LEN..HEADER_LEN + self.docs * self.dim * 4],
            dim: self.dim,
        }
    }

    /// The byte range of the rows in the body.
    fn rows_range(&self) -> std::ops::Range<usize> {
        HEADER_LEN..HEADER_LEN + self.docs * self.dim * 4
    }
}

/// A segment's rows, read in place.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rows<'a> {
    bytes: &'a [u8],
    dim: usize,
}

impl<'a> Rows<'a> {
    pub(crate) fn dim(&self) -> usize {
        self.dim
    }

    /// How many rows there are.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len() / (4 * self.dim).max(1)
    }

    /// Every row in doc order, each `4 × dim` bytes.
    pub(crate) fn iter(&self) -> std::slice::ChunksExact<'a, u8> {
        // A dimension of 0 never passes `checked_dim`; `max(1)` keeps chunks_exact sound.
        self.bytes.chunks_exact((4 * self.dim).max(1))
    }

    /// Row `doc`'s bytes; `None` past the last row.
    pub(crate) fn row(&self, doc: usize) -> Option<&'a [u8]> {
        let len = 4 * self.dim;
        let start = doc.checked_mul(len)?;
        self.bytes.get(start..start.checked_add(len)?)
    }

    /// The first value that is not a finite number, as (doc, component, value).
    pub(crate) fn first_non_finite(&self) -> Option<(usize, usize, f32)> {
        self.iter()
            .enumerate()
            .find_map(|(doc, row)| non_finite_in(row).map(|(at, value)| (doc, at, value)))
    }
}

/// The first component of `row` that is not a finite number, with its value.
pub(crate) fn non_finite_in(row: &[u8]) -> Option<(usize, f32)> {
    row.as_chunks::<4>()
        .0
        .iter()
        .map(|b| f32::from_le_bytes(*b))
        .enumerate()
        .find(|(_, v)| !v.is_finite())
}

/// A segment's open vectors file: footer and header checked at open, rows verified the
/// first time a search reads them, and coded for graph walks the first time one walks
/// the segment.
pub(crate) struct VectorsFile {
    file: CheckedFile,
    table: VectorTable,
    /// The outcome of the first [`VectorsFile::codes`]: the file is immutable, so it
    /// stands.
    codes: OnceLock<Result<Codes>>,
}

impl VectorsFile {
    /// Maps `path` and checks its footer, its header against the manifest (`docs`
    /// documents, `dim` dimensions) and its length; verifies only the chunk holding the
    /// header.
    pub(crate) fn open(path: &Path, docs: u32, dim: u32) -> Result<Self> {
        let file = CheckedFile::open(path)?;
        file.check(0..HEADER_LEN)?;
        let table = VectorTable::open(file.path(), file.body(), docs, dim)?;
        Ok(VectorsFile {
            file,
            table,
            codes: OnceLock::new(),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        self.file.path()
    }

    /// Every row, verified: the first call checksums the whole file (an exact search
    /// reads every row anyway), later ones cost one atomic load per 64 chunks.
    pub(crate) fn rows(&self) -> Result<Rows<'_>> {
        self.file.check(self.table.rows_range())?;
        Ok(self.table.rows(self.file.body()))
    }

    /// Every row's 8-bit codes, which steer graph walks: the first call verifies the rows
    /// and codes them (one pass over the file, a quarter of its size held in memory),
    /// later ones reuse its outcome.
    pub(crate) fn codes(&self) -> Result<&Codes> {
        let codes = self
            .codes
            .get_or_init(|| Codes::of(self.rows()?, self.path()));
        codes.as_ref().map_err(Error::clone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(rows: &[[f32; 3]]) -> Vec<u8> {
        encode_rows(3, rows.len(), rows.iter().map(|r| &r[..]))
    }

    #[test]
    fn rows_read_back_in_place_in_order() {
        let b = body(&[[1.0, 2.0, 3.0], [-4.0, 0.5, 0.0]]);
        assert_eq!(b.len(), 8 + 2 * 3 * 4);
        let capacity = b.capacity();
        assert_eq!(footer::sealed(b.clone()).len(), sealed_capacity(2, 3));
        assert!(
            capacity >= sealed_capacity(2, 3),
            "sealing needs no reallocation"
        );
        assert_eq!(&b[..8], &header(2, 3));
        let t = VectorTable::open(Path::new("v"), &b, 2, 3).unwrap();
        let rows = t.rows(&b);
        assert_eq!((rows.iter().count(), rows.dim()), (2, 3));
        let second: Vec<f32> = rows
            .row(1)
            .unwrap()
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(second, [-4.0, 0.5, 0.0]);
        assert!(rows.row(2).is_none());
        assert_eq!(rows.iter().count(), 2);
        assert_eq!(rows.first_non_finite(), None);
    }

    #[test]
    fn a_header_or_length_that_disagrees_is_an_error() {
        let b = body(&[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let p = Path::new("v");
        let err = VectorTable::open(p, &b, 3, 3).unwrap_err();
        assert!(
            err.to_string().contains("holds 2 vectors, manifest says 3"),
            "{err}"
        );
        let err = VectorTable::open(p, &b, 2, 4).unwrap_err();
        assert!(
            err.to_string().contains("3 dimensions, manifest says 4"),
            "{err}"
        );
        for cut in 0..b.len() {
            assert!(VectorTable::open(p, &b[..cut], 2, 3).is_err(), "cut {cut}");
        }
        let mut longer = b.clone();
        longer.push(0);
        assert!(matches!(
            VectorTable::open(p, &longer, 2, 3),
            Err(Error::Truncated { .. })
        ));
    }

    #[test]
    fn non_finite_values_are_found_with_their_place() {
        let b = body(&[[1.0, 2.0, 3.0], [4.0, f32::NEG_INFINITY, 6.0]]);
        let t = VectorTable::open(Path::new("v"), &b, 2, 3).unwrap();
        assert_eq!(
            t.rows(&b).first_non_finite(),
            Some((1, 1, f32::NEG_INFINITY))
        );
    }
}
