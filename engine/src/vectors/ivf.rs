//! The inverted-file index of a segment's vectors, `seg-N.ivf`: `lists` centroids, and
//! for each the documents whose rows are nearest it with a copy of their rows, so that
//! an approximate search scores the rows of the few lists nearest the query, each list's
//! rows read front to back, instead of every row.
//!
//! Body layout (docs/FORMAT.md):
//!
//! ```text
//! docs u32 | dim u32 | lists u32
//! centroids  lists × dim little-endian f32s, list l's at 12 + l × dim × 4
//! offsets    lists + 1 u32s: list l holds ids[offsets[l] .. offsets[l + 1]]
//! ids        docs u32s: every document of the segment exactly once, ascending within
//!            its list
//! rows       docs × dim little-endian f32s: row i is document ids[i]'s vector, the
//!            same bytes as its row in the vectors file
//! ```
//!
//! The rows are a second copy of the vectors file's, in list order: read from the
//! vectors file, a probed list's rows are scattered through it (one random 1.5 KB read
//! a row at 384 dimensions), which made probing 15 % of the rows cost as much as
//! scanning all of them (docs/DECISIONS.md, "Approximate vector search").
//!
//! Opening checks the header against the manifest (doc count, dimension, lists) and the
//! body's exact length. The first search verifies the checksums of everything before
//! the rows and its structure ([`IvfFile::lists`]): offsets from 0 to `docs` without
//! decreasing, every id below `docs`, ascending within its list and in no other list,
//! every centroid value a finite number. A list's rows are verified when a search first
//! reads them, as the vectors file's are; a value in them that is not a finite number
//! is an error naming the file when it is scored. Which list a document is in is trusted
//! as given: it decides what an approximate search finds, never what it reads, and
//! probing every list scores every row. That the copied rows equal the vectors file's
//! is checked by `check_index`, which reads both whole.

use std::path::Path;
use std::sync::OnceLock;

use super::file::Rows;
use crate::error::{Error, Result};
use crate::segment::bytes::{ByteReader, u32_at};
use crate::segment::checked::{CheckedFile, Integrity, Trusted};

/// Bytes before the first centroid.
const HEADER_LEN: usize = 12;

/// The most lists an IVF file may hold (a manifest naming more is refused): about the
/// square root of the most documents a segment can hold, which the writer's √docs lists
/// never exceed.
pub const MAX_LISTS: u32 = 65_535;

/// Bytes of rows [`write_ivf`] hands its sink at once.
const ROW_BATCH: usize = 1 << 16;

/// Calls `sink` with the body of an IVF file, in order: the header, `centroids`
/// (`lists × dim` values), then the lists of `assignment` (document `d` is in list
/// `assignment[d]`, each below `lists`), grouped by list and ascending within each,
/// then the documents' `rows` (one a document, of `dim` values) in that order. Holds
/// one u32 per document beside `assignment` (the ids in list order) and a batch of rows.
pub(crate) fn write_ivf(
    dim: u32,
    centroids: &[f32],
    assignment: &[u32],
    rows: Rows<'_>,
    mut sink: impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let lists = centroids.len() / (dim as usize).max(1);
    let docs = assignment.len();
    let mut header = [0u8; HEADER_LEN];
    header[..4].copy_from_slice(&(docs as u32).to_le_bytes());
    header[4..8].copy_from_slice(&dim.to_le_bytes());
    header[8..].copy_from_slice(&(lists as u32).to_le_bytes());
    sink(&header)?;
    let mut buf = Vec::with_capacity(4 * dim as usize);
    for centroid in centroids.chunks_exact((dim as usize).max(1)) {
        buf.clear();
        buf.extend(centroid.iter().flat_map(|v| v.to_le_bytes()));
        sink(&buf)?;
    }
    // Counting sort: the offsets, then each document in its list's next place.
    let mut offsets = vec![0u32; lists + 1];
    for &l in assignment {
        offsets[l as usize + 1] += 1;
    }
    for l in 0..lists {
        offsets[l + 1] += offsets[l];
    }
    let mut next: Vec<u32> = offsets[..lists].to_vec();
    let mut ids = vec![0u32; docs];
    for (doc, &l) in assignment.iter().enumerate() {
        ids[next[l as usize] as usize] = doc as u32;
        next[l as usize] += 1;
    }
    let bytes: Vec<u8> = offsets.iter().flat_map(|v| v.to_le_bytes()).collect();
    sink(&bytes)?;
    for part in ids.chunks(1 << 14) {
        let bytes: Vec<u8> = part.iter().flat_map(|v| v.to_le_bytes()).collect();
        sink(&bytes)?;
    }
    let mut batch = Vec::with_capacity(ROW_BATCH + 4 * dim as usize);
    for &doc in &ids {
        let row = rows.row(doc as usize).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "vector lists name document {doc} of {} rows",
                rows.len()
            ))
        })?;
        batch.extend_from_slice(row);
        if batch.len() >= ROW_BATCH {
            sink(&batch)?;
            batch.clear();
        }
    }
    if !batch.is_empty() {
        sink(&batch)?;
    }
    Ok(())
}

/// The heap [`write_ivf`] holds for `docs` documents in `lists` lists (beyond its
/// arguments).
pub(crate) fn write_heap_bytes(docs: usize, lists: usize, dim: usize) -> usize {
    // offsets and next places, the ids, a centroid's bytes, the largest id batch, the
    // row batch.
    4 * (2 * (lists + 1) + docs + dim + (lists + 1).max(docs.min(1 << 14))) + ROW_BATCH + 4 * dim
}

/// Where the rows start in an IVF body of `docs` documents of `dim` values in `lists`
/// lists: everything before them is the lists' structure.
fn rows_start(docs: usize, dim: usize, lists: usize) -> usize {
    HEADER_LEN + 4 * (lists * dim + lists + 1 + docs)
}

/// The length of an IVF body of `docs` rows of `dim` values in `lists` lists.
pub(crate) fn body_len(docs: usize, dim: usize, lists: usize) -> usize {
    rows_start(docs, dim, lists) + 4 * docs * dim
}

/// The sizes an IVF body's header gives, checked against the manifest and the body's
/// length.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IvfShape {
    docs: usize,
    dim: usize,
    lists: usize,
}

impl IvfShape {
    /// Reads the header of `body` (only its 12 bytes, which the caller must have
    /// verified), checks it against the manifest (`docs` documents of `dim` dimensions
    /// in `lists` lists) and the body's length against it.
    pub(crate) fn open(path: &Path, body: &[u8], docs: u32, dim: u32, lists: u32) -> Result<Self> {
        let corrupt = |detail: String| Error::Corrupt {
            path: path.to_path_buf(),
            what: "vector lists",
            detail,
        };
        let mut r = ByteReader::new(path, body);
        let (held_docs, held_dim, held_lists) = (
            r.u32("vector lists' document count")?,
            r.u32("vector lists' dimension")?,
            r.u32("vector list count")?,
        );
        if held_docs != docs {
            return Err(corrupt(format!(
                "lists of {held_docs} documents, manifest says {docs}"
            )));
        }
        if held_dim != dim {
            return Err(corrupt(format!(
                "centroids of {held_dim} dimensions, manifest says {dim}"
            )));
        }
        if held_lists != lists {
            return Err(corrupt(format!(
                "{held_lists} lists, manifest says {lists}"
            )));
        }
        // `body_len`'s sum in u128: no header (a fuzzer's included) can overflow it.
        let (d, l, n) = (u128::from(dim), u128::from(lists), u128::from(docs));
        let expected = HEADER_LEN as u128 + 4 * (l * d + l + 1 + n + n * d);
        if expected != body.len() as u128 {
            return Err(Error::Truncated {
                path: path.to_path_buf(),
                what: "vector lists",
                offset: HEADER_LEN as u64,
                needed: u64::try_from(expected - HEADER_LEN as u128).unwrap_or(u64::MAX),
                available: body.len().saturating_sub(HEADER_LEN) as u64,
            });
        }
        Ok(IvfShape {
            docs: docs as usize,
            dim: dim as usize,
            lists: lists as usize,
        })
    }

    /// Checks the structure of `body` (whose header `open` checked): offsets, ids and
    /// centroids as the module documentation says. Reads everything before the rows,
    /// which the caller must have verified, and trusts the rows as read (callers that
    /// have not verified them use [`IvfFile::lists`]); holds one bit per document.
    pub(crate) fn validate<'a>(&self, path: &Path, body: &'a [u8]) -> Result<IvfLists<'a>> {
        let corrupt = |detail: String| Error::Corrupt {
            path: path.to_path_buf(),
            what: "vector lists",
            detail,
        };
        let lists = self.parts(body, &Trusted);
        if let Some((at, value)) = lists
            .centroids
            .as_chunks::<4>()
            .0
            .iter()
            .map(|b| f32::from_le_bytes(*b))
            .enumerate()
            .find(|(_, v)| !v.is_finite())
        {
            return Err(corrupt(format!(
                "centroid {}: component {} is {value}, not a finite number",
                at / self.dim.max(1),
                at % self.dim.max(1)
            )));
        }
        if u32_at(lists.offsets, 0) != 0 {
            return Err(corrupt(format!(
                "list 0 starts at {}, not 0",
                u32_at(lists.offsets, 0)
            )));
        }
        if u32_at(lists.offsets, self.lists) as usize != self.docs {
            return Err(corrupt(format!(
                "the lists end at {}, not at the {} documents",
                u32_at(lists.offsets, self.lists),
                self.docs
            )));
        }
        let mut seen = vec![0u64; self.docs.div_ceil(64)];
        for l in 0..self.lists {
            let (start, end) = (u32_at(lists.offsets, l), u32_at(lists.offsets, l + 1));
            if end < start || end as usize > self.docs {
                return Err(corrupt(format!(
                    "list {l} runs from {start} to {end} of {} ids",
                    self.docs
                )));
            }
            let mut previous: Option<u32> = None;
            for doc in lists.list(l) {
                if doc as usize >= self.docs {
                    return Err(corrupt(format!(
                        "list {l} names document {doc} of {}",
                        self.docs
                    )));
                }
                if previous.is_some_and(|p| p >= doc) {
                    return Err(corrupt(format!(
                        "list {l}: document {doc} after {}",
                        previous.unwrap_or_default()
                    )));
                }
                previous = Some(doc);
                let (word, bit) = (doc as usize / 64, 1u64 << (doc % 64));
                if seen[word] & bit != 0 {
                    return Err(corrupt(format!(
                        "document {doc} is in list {l} and an earlier one"
                    )));
                }
                seen[word] |= bit;
            }
        }
        // Offsets from 0 to `docs` without decreasing hold `docs` ids, none twice: every
        // document is in exactly one list.
        Ok(lists)
    }
}

/// A validated IVF body's parts.
#[derive(Clone, Copy)]
pub(crate) struct IvfLists<'a> {
    centroids: &'a [u8],
    offsets: &'a [u8],
    ids: &'a [u8],
    /// The whole body: rows are cut from it where `integrity` has verified them.
    body: &'a [u8],
    rows_start: usize,
    integrity: &'a dyn Integrity,
    dim: usize,
    lists: usize,
}

impl<'a> IvfLists<'a> {
    /// How many lists there are.
    pub(crate) fn len(&self) -> usize {
        self.lists
    }

    /// The dimension of the centroids and rows.
    pub(crate) fn dim(&self) -> usize {
        self.dim
    }

    /// Every centroid in list order, each `4 × dim` bytes of little-endian f32s.
    pub(crate) fn centroids(&self) -> std::slice::ChunksExact<'a, u8> {
        // A dimension of 0 never passes the manifest; `max(1)` keeps chunks_exact sound.
        self.centroids.chunks_exact((4 * self.dim).max(1))
    }

    /// The documents of list `l` (below [`IvfLists::len`]), ascending.
    pub(crate) fn list(&self, l: usize) -> impl Iterator<Item = u32> + 'a {
        let (start, end) = (u32_at(self.offsets, l), u32_at(self.offsets, l + 1));
        let ids = self
            .ids
            .get(4 * start as usize..4 * end as usize)
            .unwrap_or_default();
        ids.as_chunks::<4>()
            .0
            .iter()
            .map(|b| u32::from_le_bytes(*b))
    }

    /// The documents of list `l` (below [`IvfLists::len`]), ascending, and their rows in
    /// the same order, each `4 × dim` bytes; the rows' chunks verified first.
    pub(crate) fn list_rows(
        &self,
        l: usize,
    ) -> Result<(
        impl Iterator<Item = u32> + 'a,
        std::slice::ChunksExact<'a, u8>,
    )> {
        let (start, end) = (
            u32_at(self.offsets, l) as usize,
            u32_at(self.offsets, l + 1) as usize,
        );
        let row_len = 4 * self.dim;
        let range = self.rows_start + start * row_len..self.rows_start + end * row_len;
        self.integrity.check(range.clone())?;
        let rows = self.body.get(range).unwrap_or_default();
        Ok((self.list(l), rows.chunks_exact(row_len.max(1))))
    }
}

/// A segment's open IVF file: footer and header checked at open, everything before the
/// rows verified and validated by the first search that uses it, each list's rows
/// verified when a search first reads them.
pub(crate) struct IvfFile {
    file: CheckedFile,
    shape: IvfShape,
    /// The outcome of the first [`IvfFile::lists`]: the file is immutable, so it stands.
    validated: OnceLock<Result<()>>,
}

impl IvfFile {
    /// Maps `path` and checks its footer, its header against the manifest (`docs`
    /// documents of `dim` dimensions in `lists` lists) and its length; verifies only the
    /// chunk holding the header.
    pub(crate) fn open(path: &Path, docs: u32, dim: u32, lists: u32) -> Result<Self> {
        let file = CheckedFile::open(path)?;
        file.check(0..HEADER_LEN)?;
        let shape = IvfShape::open(file.path(), file.body(), docs, dim, lists)?;
        Ok(IvfFile {
            file,
            shape,
            validated: OnceLock::new(),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        self.file.path()
    }

    /// The lists, verified and validated: the first call checksums and checks everything
    /// before the rows (about 4 bytes a document and 4 × dim a list), later ones reuse
    /// its outcome. Rows are verified list by list as they are read.
    pub(crate) fn lists(&self) -> Result<IvfLists<'_>> {
        self.validated
            .get_or_init(|| {
                self.file.check(0..self.shape.rows_start())?;
                self.shape.validate(self.file.path(), self.file.body())?;
                Ok(())
            })
            .clone()?;
        // Validated once; the same checks on the same bytes cannot fail now, and cost
        // nothing but the walk, so they are not repeated: the parts are only re-cut.
        Ok(self.shape.parts(self.file.body(), &self.file))
    }

    /// Verifies the whole file, its structure and its rows, and checks that every row
    /// copied into the lists is the document's row in `originals` (the segment's vectors
    /// file's path and rows, verified; `None` when they cannot be read, which is reported
    /// on its own), for `check_index`. A crafted file with valid checksums could
    /// otherwise rank by rows that are not the documents'.
    pub(crate) fn verify(&self, originals: Option<(&Path, Rows<'_>)>) -> Result<()> {
        let lists = self.lists()?;
        for l in 0..lists.len() {
            let (ids, rows) = lists.list_rows(l)?;
            let Some((vectors, originals)) = originals else {
                continue;
            };
            for (doc, row) in ids.zip(rows) {
                if originals.row(doc as usize) != Some(row) {
                    return Err(Error::Corrupt {
                        path: self.path().to_path_buf(),
                        what: "vector lists",
                        detail: format!(
                            "list {l}: the row of document {doc} is not its row in {}",
                            vectors.display()
                        ),
                    });
                }
            }
        }
        Ok(())
    }
}

impl IvfShape {
    /// Where the rows start in the body: everything before them is the lists' structure.
    fn rows_start(&self) -> usize {
        rows_start(self.docs, self.dim, self.lists)
    }

    /// The parts of a body whose length `open` checked; rows are read through
    /// `integrity`.
    fn parts<'a>(&self, body: &'a [u8], integrity: &'a dyn Integrity) -> IvfLists<'a> {
        let offsets_start = HEADER_LEN + self.lists * self.dim * 4;
        let ids_start = offsets_start + 4 * (self.lists + 1);
        IvfLists {
            centroids: &body[HEADER_LEN..offsets_start],
            offsets: &body[offsets_start..ids_start],
            ids: &body[ids_start..ids_start + 4 * self.docs],
            body,
            rows_start: self.rows_start(),
            integrity,
            dim: self.dim,
            lists: self.lists,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Document `d`'s row: `dim` values that name it.
    fn row_of(d: usize, dim: u32) -> Vec<f32> {
        (0..dim).map(|j| d as f32 + j as f32 / 8.0).collect()
    }

    fn body(dim: u32, centroids: &[f32], assignment: &[u32]) -> Vec<u8> {
        let docs = assignment.len();
        let rows: Vec<Vec<f32>> = (0..docs).map(|d| row_of(d, dim)).collect();
        let vectors = crate::vectors::encode_rows(dim, docs, rows.iter().map(Vec::as_slice));
        let table =
            crate::vectors::VectorTable::open(Path::new("v"), &vectors, docs as u32, dim).unwrap();
        let mut out = Vec::new();
        write_ivf(dim, centroids, assignment, table.rows(&vectors), |b| {
            out.extend_from_slice(b);
            Ok(())
        })
        .unwrap();
        out
    }

    fn lists_of(b: &[u8], docs: u32, dim: u32, lists: u32) -> Result<Vec<Vec<u32>>> {
        let p = Path::new("i");
        let shape = IvfShape::open(p, b, docs, dim, lists)?;
        let l = shape.validate(p, b)?;
        Ok((0..l.len()).map(|i| l.list(i).collect()).collect())
    }

    #[test]
    fn lists_read_back_grouped_and_ascending_with_their_rows() {
        let b = body(2, &[1.0, 0.0, 0.0, 1.0, -1.0, 0.0], &[1, 0, 1, 1, 0]);
        assert_eq!(b.len(), 12 + 3 * 2 * 4 + 4 * 4 + 5 * 4 + 5 * 2 * 4);
        assert_eq!(b.len(), body_len(5, 2, 3));
        assert_eq!(
            lists_of(&b, 5, 2, 3).unwrap(),
            [vec![1, 4], vec![0, 2, 3], vec![]]
        );
        let p = Path::new("i");
        let l = IvfShape::open(p, &b, 5, 2, 3)
            .unwrap()
            .validate(p, &b)
            .unwrap();
        let second: Vec<f32> = l
            .centroids()
            .nth(1)
            .unwrap()
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(second, [0.0, 1.0]);
        assert!(write_heap_bytes(5, 3, 2) >= 4 * (4 + 4 + 5));
        for (l, docs) in [vec![1, 4], vec![0, 2, 3], vec![]].into_iter().enumerate() {
            let (ids, rows) = l_rows(&l_of(&b), l);
            assert_eq!(ids, docs, "list {l}");
            let expected: Vec<Vec<f32>> = docs.iter().map(|&d| row_of(d as usize, 2)).collect();
            assert_eq!(rows, expected, "list {l}");
        }
    }

    fn l_of(b: &[u8]) -> IvfLists<'_> {
        let p = Path::new("i");
        IvfShape::open(p, b, 5, 2, 3)
            .unwrap()
            .validate(p, b)
            .unwrap()
    }

    fn l_rows(lists: &IvfLists<'_>, l: usize) -> (Vec<u32>, Vec<Vec<f32>>) {
        let (ids, rows) = lists.list_rows(l).unwrap();
        let rows = rows
            .map(|r| {
                r.chunks(4)
                    .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                    .collect()
            })
            .collect();
        (ids.collect(), rows)
    }

    #[test]
    fn a_header_or_length_that_disagrees_is_an_error() {
        let b = body(2, &[1.0, 0.0, 0.0, 1.0], &[1, 0, 1]);
        let p = Path::new("i");
        for (docs, dim, lists, says) in [
            (4, 2, 2, "lists of 3 documents, manifest says 4"),
            (3, 3, 2, "centroids of 2 dimensions, manifest says 3"),
            (3, 2, 1, "2 lists, manifest says 1"),
        ] {
            let err = IvfShape::open(p, &b, docs, dim, lists).unwrap_err();
            assert!(err.to_string().contains(says), "{err}");
        }
        for cut in 0..b.len() {
            assert!(IvfShape::open(p, &b[..cut], 3, 2, 2).is_err(), "cut {cut}");
        }
        let mut longer = b.clone();
        longer.push(0);
        assert!(matches!(
            IvfShape::open(p, &longer, 3, 2, 2),
            Err(Error::Truncated { .. })
        ));
    }

    /// A valid body of 4 documents in 2 lists ([0, 3] and [1, 2]), edited.
    fn edited(edit: impl FnOnce(&mut Vec<u8>)) -> Result<Vec<Vec<u32>>> {
        let mut b = body(2, &[1.0, 0.0, 0.0, 1.0], &[0, 1, 1, 0]);
        edit(&mut b);
        lists_of(&b, 4, 2, 2)
    }

    fn set_u32(b: &mut [u8], at: usize, v: u32) {
        b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }

    #[test]
    fn a_list_that_runs_backwards_is_an_error() {
        // Lists [], [0, 1], [2, 3]; then list 0 made to end at 3, after list 1's start.
        let mut b = body(1, &[1.0, -1.0, 0.5], &[1, 1, 2, 2]);
        assert_eq!(
            lists_of(&b, 4, 1, 3).unwrap(),
            [vec![], vec![0, 1], vec![2, 3]]
        );
        set_u32(&mut b, 12 + 3 * 4 + 4, 3);
        let err = lists_of(&b, 4, 1, 3).unwrap_err();
        assert!(err.to_string().contains("list 1 runs from 3 to 2"), "{err}");
    }

    #[test]
    fn every_structural_defect_is_an_error_naming_it() {
        assert_eq!(edited(|_| {}).unwrap(), [vec![0, 3], vec![1, 2]]);
        let offsets = 12 + 2 * 2 * 4;
        let ids = offsets + 3 * 4;
        type Edit = Box<dyn Fn(&mut Vec<u8>)>;
        let cases: Vec<(Edit, &str)> = vec![
            (
                Box::new(move |b| set_u32(b, offsets, 1)),
                "list 0 starts at 1",
            ),
            (
                Box::new(move |b| set_u32(b, offsets + 8, 3)),
                "the lists end at 3",
            ),
            (
                Box::new(move |b| set_u32(b, offsets + 4, 5)),
                "list 0 runs from 0 to 5",
            ),
            (
                Box::new(move |b| set_u32(b, ids, 9)),
                "list 0 names document 9",
            ),
            (
                Box::new(move |b| set_u32(b, ids + 4, 0)),
                "list 0: document 0 after 0",
            ),
            (
                Box::new(move |b| set_u32(b, ids + 8, 0)),
                "document 0 is in list 1 and an earlier one",
            ),
            (
                Box::new(|b| b[12..16].copy_from_slice(&f32::NAN.to_le_bytes())),
                "centroid 0: component 0 is NaN",
            ),
            (
                Box::new(|b| b[24..28].copy_from_slice(&f32::INFINITY.to_le_bytes())),
                "centroid 1: component 1 is inf",
            ),
        ];
        for (edit, says) in cases {
            let err = edited(edit).unwrap_err();
            assert!(err.to_string().contains(says), "{says}: {err}");
            assert!(
                err.to_string().starts_with("i: corrupt vector lists"),
                "{err}"
            );
        }
    }
}
