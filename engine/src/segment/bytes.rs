//! Bounds-checked little-endian decoding of file sections. Every read either returns the
//! value or an error naming the file, the structure and the offset.

use std::path::Path;

use crate::error::{Error, Result};

pub(crate) struct ByteReader<'p, 'a> {
    path: &'p Path,
    buf: &'a [u8],
    pos: usize,
}

impl<'p, 'a> ByteReader<'p, 'a> {
    pub(crate) fn new(path: &'p Path, buf: &'a [u8]) -> Self {
        ByteReader { path, buf, pos: 0 }
    }

    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    pub(crate) fn take(&mut self, len: usize, what: &'static str) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(len)
            .filter(|&end| end <= self.buf.len());
        match end {
            Some(end) => {
                let slice = &self.buf[self.pos..end];
                self.pos = end;
                Ok(slice)
            }
            None => Err(Error::Truncated {
                path: self.path.to_path_buf(),
                what,
                offset: self.pos as u64,
                needed: len as u64,
                available: (self.buf.len() - self.pos) as u64,
            }),
        }
    }

    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A table of `count` fixed-size records; the length is checked without overflow.
    pub(crate) fn table(
        &mut self,
        count: usize,
        record: usize,
        what: &'static str,
    ) -> Result<&'a [u8]> {
        let len = count.checked_mul(record).ok_or_else(|| Error::Corrupt {
            path: self.path.to_path_buf(),
            what,
            detail: format!("{count} records of {record} bytes overflow"),
        })?;
        self.take(len, what)
    }
}

/// Reads the little-endian u32 at record `i` of a table of u32s. `table` was sized by
/// [`ByteReader::table`], so out-of-range `i` is a caller bug, not a file defect.
#[inline]
pub(crate) fn u32_at(table: &[u8], i: usize) -> u32 {
    let b = &table[i * 4..i * 4 + 4];
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

#[inline]
pub(crate) fn u64_at(table: &[u8], i: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&table[i * 8..i * 8 + 8]);
    u64::from_le_bytes(a)
}
