//! Reads postings lists: validation on open, then an infallible cursor.

use std::path::Path;

use bitpacking::{BitPacker, BitPacker4x};

use super::{BLOCK_LEN, SKIP_ENTRY_LEN, TERMINATED};
use crate::error::{Error, Result};
use crate::varint;

/// One skip table entry (see the module docs).
#[derive(Debug, Clone, Copy)]
struct SkipEntry {
    last_doc: u32,
    end: u32,
    max_tf: u32,
    min_len: u32,
}

impl SkipEntry {
    /// What a cursor reports for the block past the end: nothing can score there.
    const PAST_END: SkipEntry = SkipEntry {
        last_doc: TERMINATED,
        end: 0,
        max_tf: 0,
        min_len: u32::MAX,
    };

    fn parse(raw: &[u8; SKIP_ENTRY_LEN]) -> Self {
        let field = |k: usize| u32::from_le_bytes([raw[k], raw[k + 1], raw[k + 2], raw[k + 3]]);
        SkipEntry {
            last_doc: field(0),
            end: field(4),
            max_tf: field(8),
            min_len: field(12),
        }
    }
}

/// A validated postings list over borrowed bytes (an mmap, a `Vec`, a test slice).
/// Copying it is free; [`PostingsList::cursor`] walks it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PostingsList<'a> {
    /// Empty for a list shorter than a block, which has no skip table: `single` stands
    /// in for its one entry.
    skip: &'a [u8],
    single: Option<SkipEntry>,
    /// The block data area, cut at the last block's end.
    data: &'a [u8],
    df: u32,
}

impl<'a> PostingsList<'a> {
    /// Validates the list at the start of `bytes` (which may extend past the list's end)
    /// holding `df` postings. `path` names the file the bytes came from, for errors.
    ///
    /// Costs O(n_blocks) over the skip table only, plus decoding the tail block (< 128
    /// postings); full blocks' headers are checked when decoded. After `Ok`, no cursor
    /// operation can panic or read outside `bytes`, whatever the bytes were; a full block
    /// whose header disagrees with its length ends the cursor there (`check_index` reports
    /// the list as shorter than its df).
    ///
    /// `min_len` is the term's smallest document length (from its dictionary entry): a list
    /// shorter than a block has no skip entry, and its block bound uses it.
    pub(crate) fn open(bytes: &'a [u8], df: u32, min_len: u32, path: &Path) -> Result<Self> {
        let corrupt = |detail: String| Error::Corrupt {
            path: path.to_path_buf(),
            what: "postings list",
            detail,
        };
        if df == 0 {
            return Err(corrupt("document frequency is 0".into()));
        }
        let df = df as usize;
        if df < BLOCK_LEN {
            return Self::open_short(bytes, df, min_len, path);
        }
        let n_blocks = df.div_ceil(BLOCK_LEN);
        let skip_len = n_blocks * SKIP_ENTRY_LEN; // ≤ 2^29: df is a u32
        if bytes.len() < skip_len {
            return Err(Error::Truncated {
                path: path.to_path_buf(),
                what: "postings skip table",
                offset: 0,
                needed: skip_len as u64,
                available: bytes.len() as u64,
            });
        }
        let (skip, data) = bytes.split_at(skip_len);

        // Scratch for decoding the tail; 1 KiB on the stack, no heap.
        let mut docs = [0u32; BLOCK_LEN];
        let mut tfs = [0u32; BLOCK_LEN];
        let mut prev_end = 0usize;
        let mut prev_last: Option<u32> = None;
        for (block, raw) in skip.as_chunks::<SKIP_ENTRY_LEN>().0.iter().enumerate() {
            let entry = SkipEntry::parse(raw);
            let count = block_count(df, block);

            // Gaps are ≥ 1, so a block of `count` postings needs last_doc ≥ previous + count.
            let min_last = prev_last.map_or(count as u64 - 1, |p| u64::from(p) + count as u64);
            if u64::from(entry.last_doc) < min_last || entry.last_doc == TERMINATED {
                return Err(corrupt(format!(
                    "block {block}: last doc {} cannot follow {prev_last:?} with {count} postings",
                    entry.last_doc
                )));
            }
            if entry.max_tf == 0 {
                return Err(corrupt(format!("block {block}: max tf is 0")));
            }
            let end = entry.end as usize;
            if end < prev_end {
                return Err(corrupt(format!(
                    "block {block}: ends at {end}, before its start {prev_end}"
                )));
            }
            if end > data.len() {
                return Err(Error::Truncated {
                    path: path.to_path_buf(),
                    what: "postings block",
                    offset: (skip_len + prev_end) as u64,
                    needed: (end - prev_end) as u64,
                    available: (data.len() - prev_end) as u64,
                });
            }
            let block_bytes = &data[prev_end..end];

            if count == BLOCK_LEN {
                // A full block's header is checked when the block is decoded
                // (`decode_full`), not here: reading every block's header would touch
                // every page of a long list on each query, though pruning decodes few of
                // them. A bad header exhausts the cursor there.
            } else if decode_tail(
                block_bytes,
                count,
                prev_last,
                entry.last_doc,
                &mut docs,
                &mut tfs,
            )
            .is_none()
            {
                return Err(corrupt(format!(
                    "block {block}: tail block does not decode to {count} postings ending at doc {}",
                    entry.last_doc
                )));
            }

            prev_end = end;
            prev_last = Some(entry.last_doc);
        }

        Ok(PostingsList {
            skip,
            single: None,
            data: &data[..prev_end],
            df: df as u32,
        })
    }

    /// A list of fewer than 128 postings: the tail block alone, decoded once here to
    /// validate it and to find its last doc and largest tf.
    fn open_short(bytes: &'a [u8], df: usize, min_len: u32, path: &Path) -> Result<Self> {
        let mut docs = [0u32; BLOCK_LEN];
        let mut tfs = [0u32; BLOCK_LEN];
        let end = decode_short(bytes, df, &mut docs, &mut tfs).ok_or_else(|| Error::Corrupt {
            path: path.to_path_buf(),
            what: "postings list",
            detail: format!("a list of {df} postings does not decode"),
        })?;
        Ok(PostingsList {
            skip: &[],
            single: Some(SkipEntry {
                last_doc: docs[df - 1],
                end: end as u32,
                max_tf: tfs[..df].iter().max().map_or(1, |&t| t.saturating_add(1)),
                min_len,
            }),
            data: &bytes[..end],
            df: df as u32,
        })
    }

    /// Number of postings.
    #[cfg(test)]
    pub(crate) fn df(&self) -> u32 {
        self.df
    }

    /// Bytes the list occupies (skip table and block data), whatever slice it was opened on.
    #[cfg(test)]
    pub(crate) fn byte_len(&self) -> usize {
        self.skip.len() + self.data.len()
    }

    /// The list's one skip entry when it has no table (test access).
    #[cfg(test)]
    pub(crate) fn is_short(&self) -> bool {
        self.single.is_some()
    }

    /// Number of blocks (`ceil(df / 128)`).
    pub(crate) fn n_blocks(&self) -> usize {
        if self.single.is_some() {
            1
        } else {
            self.skip.len() / SKIP_ENTRY_LEN
        }
    }

    /// A cursor on the first posting.
    pub(crate) fn cursor(&self) -> PostingsCursor<'a> {
        PostingsCursor::new(*self)
    }

    /// Entry `block`, or [`SkipEntry::PAST_END`] past the last block.
    #[inline]
    fn entry(&self, block: usize) -> SkipEntry {
        if let Some(single) = self.single {
            return if block == 0 {
                single
            } else {
                SkipEntry::PAST_END
            };
        }
        match self
            .skip
            .get(block * SKIP_ENTRY_LEN..)
            .and_then(<[u8]>::first_chunk::<SKIP_ENTRY_LEN>)
        {
            Some(raw) => SkipEntry::parse(raw),
            None => SkipEntry::PAST_END,
        }
    }
}

/// Postings in block `block` of a list of `df`.
#[inline]
fn block_count(df: usize, block: usize) -> usize {
    (df - block * BLOCK_LEN).min(BLOCK_LEN)
}

fn full_block_len(doc_bits: u8, tf_bits: u8) -> usize {
    2 + 16 * (usize::from(doc_bits) + usize::from(tf_bits))
}

/// Decodes a tail block into `docs[..count]` and `tfs_minus_1[..count]`. `None` unless the
/// bytes hold exactly `count` postings whose last doc is `last_doc`.
fn decode_tail(
    bytes: &[u8],
    count: usize,
    prev_last: Option<u32>,
    last_doc: u32,
    docs: &mut [u32; BLOCK_LEN],
    tfs_minus_1: &mut [u32; BLOCK_LEN],
) -> Option<()> {
    let mut pos = 0;
    // Smallest doc id the next posting can have; u64 so hostile gaps cannot wrap.
    let mut next = prev_last.map_or(0, |d| u64::from(d) + 1);
    for (doc, tf) in docs.iter_mut().zip(tfs_minus_1.iter_mut()).take(count) {
        let d = next + u64::from(varint::read(bytes, &mut pos)?);
        if d > u64::from(last_doc) {
            return None;
        }
        *doc = d as u32;
        *tf = varint::read(bytes, &mut pos)?;
        next = d + 1;
    }
    (count >= 1 && pos == bytes.len() && docs[count - 1] == last_doc).then_some(())
}

/// Decodes a list shorter than a block (varint pairs from the start of `bytes`, `count`
/// of them); returns the bytes it took, or `None` if they run out or a doc id would reach
/// [`TERMINATED`].
fn decode_short(
    bytes: &[u8],
    count: usize,
    docs: &mut [u32; BLOCK_LEN],
    tfs_minus_1: &mut [u32; BLOCK_LEN],
) -> Option<usize> {
    let mut pos = 0;
    let mut next = 0u64;
    for (doc, tf) in docs.iter_mut().zip(tfs_minus_1.iter_mut()).take(count) {
        let d = next + u64::from(varint::read(bytes, &mut pos)?);
        if d >= u64::from(TERMINATED) {
            return None;
        }
        *doc = d as u32;
        *tf = varint::read(bytes, &mut pos)?;
        next = d + 1;
    }
    Some(pos)
}

/// Walks a [`PostingsList`]: one decoded block at a time in fixed arrays (no heap).
///
/// Positions only move forward. `seek(target)` always lands on a doc ≥ `target` (or
/// [`TERMINATED`]); `advance` visits each posting once, so any loop over a cursor ends within
/// `df` steps even on crafted bytes (which may give wrong doc ids, never a panic).
///
/// The *block pointer* names the block whose skip entry `block_last_doc`, `block_max_tf` and
/// `block_min_len` describe: the current doc's block after `advance`/`seek`, possibly a later
/// one after `shallow_seek`.
pub(crate) struct PostingsCursor<'a> {
    list: PostingsList<'a>,
    bitpacker: BitPacker4x,
    /// Block held in `docs`/`tfs_minus_1`; `n_blocks` once exhausted.
    block: usize,
    /// The block pointer: `≥ block`.
    skip_block: usize,
    /// Current posting within the decoded block: `< block_len`, or 0 when exhausted.
    idx: usize,
    /// Postings in the decoded block; 0 when exhausted.
    block_len: usize,
    doc: u32,
    docs: [u32; BLOCK_LEN],
    tfs_minus_1: [u32; BLOCK_LEN],
}

impl<'a> PostingsCursor<'a> {
    fn new(list: PostingsList<'a>) -> Self {
        let mut cursor = PostingsCursor {
            list,
            bitpacker: BitPacker4x::new(),
            block: 0,
            skip_block: 0,
            idx: 0,
            block_len: 0,
            doc: TERMINATED,
            docs: [0; BLOCK_LEN],
            tfs_minus_1: [0; BLOCK_LEN],
        };
        cursor.load_block(0);
        cursor
    }

    /// Current doc id, or [`TERMINATED`].
    #[inline]
    pub(crate) fn doc(&self) -> u32 {
        self.doc
    }

    /// Term frequency of the current doc. Meaningless (but safe) once exhausted.
    #[inline]
    pub(crate) fn tf(&self) -> u32 {
        // `idx < BLOCK_LEN` always; wrapping only matters for crafted 32-bit widths.
        self.tfs_minus_1[self.idx].wrapping_add(1)
    }

    /// Number of postings in the list.
    #[cfg(test)]
    pub(crate) fn df(&self) -> u32 {
        self.list.df
    }

    /// Moves to the next posting and returns its doc id, or [`TERMINATED`].
    #[inline]
    pub(crate) fn advance(&mut self) -> u32 {
        if self.idx + 1 < self.block_len {
            self.idx += 1;
            self.doc = self.docs[self.idx];
            self.skip_block = self.block;
        } else {
            self.load_block(self.block + 1);
        }
        self.doc
    }

    /// Moves to the first posting with doc ≥ `target` (staying put if the current doc already
    /// is) and returns its doc id, or [`TERMINATED`]. Skips whole blocks by their `last_doc`
    /// and decodes at most one block.
    pub(crate) fn seek(&mut self, target: u32) -> u32 {
        if self.doc >= target {
            return self.doc;
        }
        // Here the cursor is not exhausted. Every block before the block pointer ends below
        // the target it was moved for; resume from it when that covers this target too.
        let mut block = self.block;
        if self.skip_block > self.block && self.list.entry(self.skip_block - 1).last_doc < target {
            block = self.skip_block;
        }
        while self.list.entry(block).last_doc < target {
            block += 1; // PAST_END's last_doc is TERMINATED ≥ target: the loop ends.
        }
        if block != self.block {
            self.load_block(block);
            if self.doc >= target {
                return self.doc; // also covers exhaustion
            }
        }
        // The decoded block's last doc is ≥ target (checked when decoding), so the answer is
        // in `idx..block_len`. A forward scan with an early exit: pruning seeks mostly a
        // few postings ahead (a scan of the whole rest of the block per seek was the
        // second-largest cost in a callgrind profile of TREC-style queries). The bound
        // only matters for crafted, non-monotone blocks.
        let mut i = self.idx;
        while i + 1 < self.block_len && self.docs[i] < target {
            i += 1;
        }
        self.idx = i;
        self.skip_block = self.block;
        self.doc = self.docs[i];
        self.doc
    }

    /// Moves the block pointer (never backwards) to the block that would contain `target`,
    /// without decoding anything; the current doc does not change. Past the last block the
    /// block accessors report `TERMINATED`, max tf 0 and min length `u32::MAX`.
    pub(crate) fn shallow_seek(&mut self, target: u32) {
        while self.list.entry(self.skip_block).last_doc < target {
            self.skip_block += 1;
        }
    }

    /// Last doc id of the block at the block pointer ([`TERMINATED`] past the end).
    #[inline]
    pub(crate) fn block_last_doc(&self) -> u32 {
        self.list.entry(self.skip_block).last_doc
    }

    /// Largest tf in the block at the block pointer (0 past the end).
    #[inline]
    pub(crate) fn block_max_tf(&self) -> u32 {
        self.list.entry(self.skip_block).max_tf
    }

    /// Smallest document length in the block at the block pointer (`u32::MAX` past the end).
    #[inline]
    pub(crate) fn block_min_len(&self) -> u32 {
        self.list.entry(self.skip_block).min_len
    }

    /// Decodes `block` and moves to its first posting; exhausts the cursor past the last
    /// block, or if the block's bytes contradict its skip entry (only crafted bytes can).
    fn load_block(&mut self, block: usize) {
        let n_blocks = self.list.n_blocks();
        if block >= n_blocks {
            return self.exhaust();
        }
        let entry = self.list.entry(block);
        let (start, prev_last) = match block.checked_sub(1) {
            Some(prev) => {
                let prev = self.list.entry(prev);
                (prev.end as usize, Some(prev.last_doc))
            }
            None => (0, None),
        };
        // `open` checked that every block lies within `data`.
        let Some(bytes) = self.list.data.get(start..entry.end as usize) else {
            return self.exhaust();
        };
        let count = block_count(self.list.df as usize, block);
        let ok = if count == BLOCK_LEN {
            self.decode_full(bytes, prev_last) && self.docs[BLOCK_LEN - 1] == entry.last_doc
        } else {
            decode_tail(
                bytes,
                count,
                prev_last,
                entry.last_doc,
                &mut self.docs,
                &mut self.tfs_minus_1,
            )
            .is_some()
        };
        if !ok {
            return self.exhaust();
        }
        self.block = block;
        self.skip_block = block;
        self.idx = 0;
        self.block_len = count;
        self.doc = self.docs[0];
    }

    /// Unpacks a full block; `false` if its header and length disagree (`open` rules it out).
    #[inline]
    fn decode_full(&mut self, bytes: &[u8], prev_last: Option<u32>) -> bool {
        let &[doc_bits, tf_bits, ref packed @ ..] = bytes else {
            return false;
        };
        if doc_bits > 32 || tf_bits > 32 || bytes.len() != full_block_len(doc_bits, tf_bits) {
            return false;
        }
        let (packed_docs, packed_tfs) = packed.split_at(16 * usize::from(doc_bits));
        self.bitpacker
            .decompress_strictly_sorted(prev_last, packed_docs, &mut self.docs, doc_bits);
        self.bitpacker
            .decompress(packed_tfs, &mut self.tfs_minus_1, tf_bits);
        true
    }

    fn exhaust(&mut self) {
        let n_blocks = self.list.n_blocks();
        self.block = n_blocks;
        self.skip_block = n_blocks;
        self.idx = 0;
        self.block_len = 0;
        self.doc = TERMINATED;
    }
}
