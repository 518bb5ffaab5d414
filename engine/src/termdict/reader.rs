//! Reads a front-coded term dictionary body (see the writer for the layout).

use std::ops::Range;
use std::path::{Path, PathBuf};

use super::{BLOCK_TERMS, TermInfo};
use crate::error::{Error, Result};
use crate::segment::bytes::{ByteReader, u32_at, u64_at};
use crate::segment::checked::Integrity;
use crate::varint;

const TABLE_ENTRY: usize = 16;
/// n_terms, n_blocks, heads_len, data_len.
const HEADER_LEN: usize = 16;

/// Section offsets into a validated dictionary body. The body itself is passed to each
/// call, so the dictionary can live beside the memory map that owns the bytes.
#[derive(Debug, Clone)]
pub(crate) struct TermDict {
    path: PathBuf,
    len: usize,
    n_blocks: usize,
    table: usize,
    heads: (usize, usize),
    data: (usize, usize),
}

/// One block's place in the body, read from the block table.
struct Block<'a> {
    head: &'a [u8],
    entries: &'a [u8],
    /// Where `entries` are in the body: checked before they are decoded.
    entries_at: Range<usize>,
    postings_offset: u64,
    terms: usize,
}

impl TermDict {
    /// Validates the header and the block table (offsets monotone and within their
    /// areas); block contents are checked as they are decoded. Reads (and so asks
    /// `integrity` to check) the header, the block table and the block heads: what every
    /// lookup's binary search reads. Each block's entries are checked when a lookup or a
    /// walk first decodes them.
    pub(crate) fn open(path: &Path, body: &[u8], integrity: &dyn Integrity) -> Result<Self> {
        integrity.check(0..HEADER_LEN)?;
        let mut r = ByteReader::new(path, body);
        let len = r.u32("term count")? as usize;
        let n_blocks = r.u32("term block count")? as usize;
        let heads_len = r.u32("term heads length")? as usize;
        let data_len = r.u32("term data length")? as usize;
        let corrupt = |detail: String| Error::Corrupt {
            path: path.to_path_buf(),
            what: "term dictionary",
            detail,
        };
        if n_blocks != len.div_ceil(BLOCK_TERMS) {
            return Err(corrupt(format!("{n_blocks} blocks for {len} terms")));
        }
        let table_at = r.position();
        let table = r.table(n_blocks, TABLE_ENTRY, "term block table")?;
        let heads_at = r.position();
        r.take(heads_len, "term heads")?;
        let data_at = r.position();
        r.take(data_len, "term entries")?;
        integrity.check(table_at..data_at)?;
        let (mut head_end, mut data_end, mut postings) = (0u32, 0u32, 0u64);
        for b in 0..n_blocks {
            let entry = &table[b * TABLE_ENTRY..(b + 1) * TABLE_ENTRY];
            let (h, d, p) = (u32_at(entry, 0), u32_at(entry, 1), u64_at(entry, 1));
            if h < head_end
                || d <= data_end && b > 0
                || p < postings
                || h as usize > heads_len
                || d as usize > data_len
            {
                return Err(corrupt(format!(
                    "block {b}: ends {h}/{d}, postings at {p} out of order or range"
                )));
            }
            (head_end, data_end, postings) = (h, d, p);
        }
        if n_blocks > 0 && (head_end as usize != heads_len || data_end as usize != data_len) {
            return Err(corrupt(
                "block table does not cover the heads and entries".into(),
            ));
        }
        Ok(TermDict {
            path: path.to_path_buf(),
            len,
            n_blocks,
            table: table_at,
            heads: (heads_at, heads_at + heads_len),
            data: (data_at, data_at + data_len),
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn block<'a>(&self, body: &'a [u8], b: usize) -> Block<'a> {
        let entry =
            |i: usize| &body[self.table + i * TABLE_ENTRY..self.table + (i + 1) * TABLE_ENTRY];
        let (head_start, data_start) = if b == 0 {
            (0, 0)
        } else {
            (
                u32_at(entry(b - 1), 0) as usize,
                u32_at(entry(b - 1), 1) as usize,
            )
        };
        let this = entry(b);
        let heads = &body[self.heads.0..self.heads.1];
        let data = &body[self.data.0..self.data.1];
        let data_end = u32_at(this, 1) as usize;
        Block {
            head: &heads[head_start..u32_at(this, 0) as usize],
            entries: &data[data_start..data_end],
            entries_at: self.data.0 + data_start..self.data.0 + data_end,
            postings_offset: u64_at(this, 1),
            terms: if b + 1 == self.n_blocks {
                self.len - b * BLOCK_TERMS
            } else {
                BLOCK_TERMS
            },
        }
    }

    /// The entry of `term`, if present; an error if the block that would hold it fails
    /// `integrity`'s check. A block that does not decode (a crafted file with a valid
    /// checksum) answers "absent"; `check_index` reports it.
    pub(crate) fn get(
        &self,
        body: &[u8],
        term: &[u8],
        integrity: &dyn Integrity,
    ) -> Result<Option<TermInfo>> {
        if self.n_blocks == 0 {
            return Ok(None);
        }
        // The last block whose head is ≤ term.
        let (mut lo, mut hi) = (0usize, self.n_blocks);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.block(body, mid).head <= term {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let block = self.block(body, lo);
        integrity.check(block.entries_at.clone())?;
        let mut walker = BlockWalker::new(block);
        while let Ok(true) = walker.next_entry() {
            match walker.term.as_slice().cmp(term) {
                std::cmp::Ordering::Less => continue,
                std::cmp::Ordering::Equal => return Ok(Some(walker.info)),
                std::cmp::Ordering::Greater => return Ok(None),
            }
        }
        Ok(None)
    }

    /// Every term in byte order with its entry; each block is checked by `integrity`
    /// before it is decoded.
    pub(crate) fn walk<'a>(
        &'a self,
        body: &'a [u8],
        integrity: &'a dyn Integrity,
    ) -> TermWalker<'a> {
        TermWalker {
            dict: self,
            body,
            integrity,
            next_block: 0,
            block: None,
            last: None,
        }
    }
}

/// Decodes one block's entries in order.
struct BlockWalker<'a> {
    block: Block<'a>,
    pos: usize,
    done: usize,
    /// The entry last decoded.
    term: Vec<u8>,
    info: TermInfo,
    /// Where the next entry's postings start.
    postings: u64,
}

impl<'a> BlockWalker<'a> {
    fn new(block: Block<'a>) -> Self {
        let postings = block.postings_offset;
        BlockWalker {
            block,
            pos: 0,
            done: 0,
            term: Vec::new(),
            info: TermInfo {
                postings_offset: 0,
                postings_len: 0,
                df: 0,
            },
            postings,
        }
    }

    /// Decodes the next entry into `term`/`info`: `Ok(false)` at the block's end,
    /// `Err(())` if the bytes do not decode.
    fn next_entry(&mut self) -> Result<bool, ()> {
        if self.done == self.block.terms {
            return Ok(false);
        }
        let bytes = self.block.entries;
        let mut read = || varint::read(bytes, &mut self.pos).ok_or(());
        let shared = read()? as usize;
        let suffix_len = read()? as usize;
        if self.done == 0 {
            if shared != 0 || suffix_len != 0 {
                return Err(());
            }
            self.term.clear();
            self.term.extend_from_slice(self.block.head);
        } else {
            let suffix = bytes
                .get(self.pos..self.pos.checked_add(suffix_len).ok_or(())?)
                .ok_or(())?;
            self.pos += suffix_len;
            if shared > self.term.len() {
                return Err(());
            }
            self.term.truncate(shared);
            self.term.extend_from_slice(suffix);
        }
        let mut read = || varint::read(bytes, &mut self.pos).ok_or(());
        let (df, postings_len) = (read()?, read()?);
        self.info = TermInfo {
            postings_offset: self.postings,
            postings_len,
            df,
        };
        self.postings = self.postings.saturating_add(postings_len as u64);
        self.done += 1;
        Ok(true)
    }
}

/// Walks every term of a dictionary in byte order (merges and `check_index`).
pub(crate) struct TermWalker<'a> {
    dict: &'a TermDict,
    body: &'a [u8],
    integrity: &'a dyn Integrity,
    next_block: usize,
    block: Option<BlockWalker<'a>>,
    /// The previous term, to check the order.
    last: Option<Vec<u8>>,
}

impl TermWalker<'_> {
    /// The next term and its entry, `Ok(None)` at the end, or an error naming the file if
    /// a block does not decode or terms are out of order.
    pub(crate) fn next_term(&mut self) -> Result<Option<(&[u8], TermInfo)>> {
        loop {
            if self.block.is_none() {
                if self.next_block == self.dict.n_blocks {
                    return Ok(None);
                }
                let block = self.dict.block(self.body, self.next_block);
                self.integrity.check(block.entries_at.clone())?;
                self.block = Some(BlockWalker::new(block));
                self.next_block += 1;
            }
            let walker = self.block.as_mut().expect("set above");
            let entry = walker.done;
            match walker.next_entry() {
                Ok(true) => break,
                Ok(false) => {
                    if walker.pos != walker.block.entries.len() {
                        let extra = walker.block.entries.len() - walker.pos;
                        return Err(self.damaged(format!("{extra} bytes after the last entry")));
                    }
                    self.block = None;
                }
                Err(()) => return Err(self.damaged(format!("entry {entry} does not decode"))),
            }
        }
        let walker = self.block.as_ref().expect("an entry was just decoded");
        if self
            .last
            .as_deref()
            .is_some_and(|last| last >= walker.term.as_slice())
        {
            return Err(self.damaged("terms out of order".into()));
        }
        self.last = Some(walker.term.clone());
        Ok(Some((&walker.term, walker.info)))
    }

    fn damaged(&self, detail: String) -> Error {
        Error::Corrupt {
            path: self.dict.path.clone(),
            what: "term dictionary block",
            detail: format!("block {}: {detail}", self.next_block.saturating_sub(1)),
        }
    }
}
