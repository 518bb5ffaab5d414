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

/// Section offsets into a dictionary body whose header has been read. The body itself is
/// passed to each call, so the dictionary can live beside the memory map that owns the
/// bytes.
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
    /// Reads the header (asking `integrity` to check it) and checks that the sections fit
    /// the body and that the last block table entry ends both areas exactly. O(1): the
    /// table's entries are validated one by one as lookups and walks read them, and the
    /// table, heads and each block's entries are checked by `integrity` before they are.
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
        if let Some(last) = n_blocks.checked_sub(1) {
            let at = last * TABLE_ENTRY;
            integrity.check(table_at + at..table_at + at + TABLE_ENTRY)?;
            let entry = &table[at..at + TABLE_ENTRY];
            if u32_at(entry, 0) as usize != heads_len || u32_at(entry, 1) as usize != data_len {
                return Err(corrupt(
                    "block table does not cover the heads and entries".into(),
                ));
            }
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

    /// The table and the heads: what a lookup's binary search may read.
    fn index(&self) -> Range<usize> {
        self.table..self.heads.1
    }

    fn corrupt(&self, detail: String) -> Error {
        Error::Corrupt {
            path: self.path.clone(),
            what: "term dictionary",
            detail,
        }
    }

    /// Block `b < n_blocks` from its table entry and the one before, validated on its
    /// own: its head and entries lie inside their areas and start where the previous
    /// block's end (so blocks that each pass are in order), and a block after the first
    /// has entries. The caller has checked the table with `integrity`.
    fn block<'a>(&self, body: &'a [u8], b: usize) -> Result<Block<'a>> {
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
        let (head_end, data_end) = (u32_at(this, 0) as usize, u32_at(this, 1) as usize);
        let heads = &body[self.heads.0..self.heads.1];
        let data = &body[self.data.0..self.data.1];
        let (Some(head), Some(entries)) = (
            heads.get(head_start..head_end),
            data.get(data_start..data_end),
        ) else {
            return Err(self.corrupt(format!(
                "block {b}: ends {head_end}/{data_end} out of order or range"
            )));
        };
        if b > 0 && entries.is_empty() {
            return Err(self.corrupt(format!("block {b}: no entries")));
        }
        Ok(Block {
            head,
            entries,
            entries_at: self.data.0 + data_start..self.data.0 + data_end,
            postings_offset: u64_at(this, 1),
            terms: if b + 1 == self.n_blocks {
                self.len - b * BLOCK_TERMS
            } else {
                BLOCK_TERMS
            },
        })
    }

    /// Block `b`'s head, if its range in the heads area is in order and inside it: what a
    /// binary search probe needs of [`Self::block`], at a probe's cost.
    #[inline]
    fn head<'a>(&self, body: &'a [u8], b: usize) -> Option<&'a [u8]> {
        let end_of = |i: usize| u32_at(&body[self.table + i * TABLE_ENTRY..], 0) as usize;
        let start = if b == 0 { 0 } else { end_of(b - 1) };
        body[self.heads.0..self.heads.1].get(start..end_of(b))
    }

    /// The entry of `term`, if present; an error if a block table entry it reads is out
    /// of order or range, or a byte it reads fails `integrity`'s check. A block whose
    /// entries do not decode (a crafted file with a valid checksum) answers "absent";
    /// `check_index` reports it.
    pub(crate) fn get(
        &self,
        body: &[u8],
        term: &[u8],
        integrity: &dyn Integrity,
    ) -> Result<Option<TermInfo>> {
        if self.n_blocks == 0 {
            return Ok(None);
        }
        // The binary search may read any entry and head: all are checked (once per
        // process; a few loads after that).
        integrity.check(self.index())?;
        // The last block whose head is ≤ term.
        let (mut lo, mut hi) = (0usize, self.n_blocks);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            match self.head(body, mid) {
                Some(head) if head <= term => lo = mid,
                Some(_) => hi = mid,
                None => {
                    return Err(self.corrupt(format!("block {mid}: head out of order or range")));
                }
            }
        }
        let block = self.block(body, lo)?;
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
            postings: 0,
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
    /// The previous block's postings offset, to check the order.
    postings: u64,
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
                if self.next_block == 0 {
                    self.integrity.check(self.dict.index())?;
                }
                let block = self.dict.block(self.body, self.next_block)?;
                if block.postings_offset < self.postings {
                    return Err(self.dict.corrupt(format!(
                        "block {}: postings at {} before the previous block's {}",
                        self.next_block, block.postings_offset, self.postings
                    )));
                }
                self.postings = block.postings_offset;
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
