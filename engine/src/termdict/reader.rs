//! Reads a term dictionary body (see the writer for the layout).

use std::cmp::Ordering;
use std::path::Path;

use super::{TERM_INFO_LEN, TermInfo};
use crate::error::{Error, Result};
use crate::segment::bytes::{ByteReader, u32_at, u64_at};

/// Section offsets into a validated dictionary body. The body itself is passed to each
/// call, so the dictionary can live beside the memory map that owns the bytes.
#[derive(Debug, Clone)]
pub(crate) struct TermDict {
    len: usize,
    infos: (usize, usize),
    offsets: (usize, usize),
    bytes: (usize, usize),
}

impl TermDict {
    pub(crate) fn open(path: &Path, body: &[u8]) -> Result<Self> {
        let mut r = ByteReader::new(path, body);
        let len = r.u32("term count")? as usize;
        let infos_at = r.position();
        r.table(len, TERM_INFO_LEN, "term infos")?;
        let offsets_at = r.position();
        let offsets = r.table(len + 1, 4, "term offsets")?;
        let bytes_at = r.position();
        let bytes = r.rest();
        let mut prev = 0u32;
        for i in 0..=len {
            let off = u32_at(offsets, i);
            if off < prev || off as usize > bytes.len() || (i == 0 && off != 0) {
                return Err(Error::Corrupt {
                    path: path.to_path_buf(),
                    what: "term offsets",
                    detail: format!(
                        "offset {i} is {off}, previous {prev}, term bytes {}",
                        bytes.len()
                    ),
                });
            }
            prev = off;
        }
        Ok(TermDict {
            len,
            infos: (infos_at, offsets_at),
            offsets: (offsets_at, bytes_at),
            bytes: (bytes_at, body.len()),
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The `i`th term in sorted order. `body` must be the one given to `open`.
    pub(crate) fn term<'a>(&self, body: &'a [u8], i: usize) -> &'a [u8] {
        let offsets = &body[self.offsets.0..self.offsets.1];
        let bytes = &body[self.bytes.0..self.bytes.1];
        &bytes[u32_at(offsets, i) as usize..u32_at(offsets, i + 1) as usize]
    }

    pub(crate) fn info(&self, body: &[u8], i: usize) -> TermInfo {
        let rec = &body[self.infos.0 + i * TERM_INFO_LEN..self.infos.0 + (i + 1) * TERM_INFO_LEN];
        TermInfo {
            postings_offset: u64_at(rec, 0),
            postings_len: u32_at(rec, 2),
            df: u32_at(rec, 3),
            max_tf: u32_at(rec, 4),
            min_len: u32_at(rec, 5),
        }
    }

    pub(crate) fn get(&self, body: &[u8], term: &[u8]) -> Option<TermInfo> {
        let (mut lo, mut hi) = (0usize, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.term(body, mid).cmp(term) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return Some(self.info(body, mid)),
            }
        }
        None
    }
}
