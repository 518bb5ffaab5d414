//! Reads postings lists: validation on open, then an infallible cursor.

use std::path::Path;

use bitpacking::{BitPacker, BitPacker4x};

use super::{BLOCK_LEN, BlockBound, Interp, SKIP_ENTRY_LEN, TERMINATED, h_of_codes, tail};
use crate::error::{Error, Result};

/// Where a skip entry keeps its full block's bit widths (after the block's last doc, a
/// little-endian u32; before the five bound codes).
const DOC_BITS_AT: usize = 4;
const TF_BITS_AT: usize = 5;

/// One skip table entry, its bound codes decoded.
#[derive(Debug, Clone, Copy)]
struct SkipEntry {
    last_doc: u32,
    /// Bit widths of a full block (0 for a tail block).
    doc_bits: u8,
    tf_bits: u8,
    /// Covers every posting of the block.
    bound: EntryBound,
}

/// A block's bound as the skip entry stores it (decoded only as far as a query needs), or
/// computed exactly at open for a list too short to have a skip table.
#[derive(Debug, Clone, Copy)]
enum EntryBound {
    Coded([u8; 5]),
    Exact(BlockBound),
}

impl EntryBound {
    fn decode(self) -> BlockBound {
        match self {
            EntryBound::Coded(codes) => BlockBound::from_codes(codes),
            EntryBound::Exact(bound) => bound,
        }
    }

    #[inline]
    fn h(&self, at: Interp) -> f64 {
        match self {
            EntryBound::Coded(codes) => h_of_codes(codes, at),
            EntryBound::Exact(bound) => bound.h(at),
        }
    }
}

impl SkipEntry {
    /// What a cursor reports for the block past the end: nothing can score there.
    const PAST_END: SkipEntry = SkipEntry {
        last_doc: TERMINATED,
        doc_bits: 0,
        tf_bits: 0,
        bound: EntryBound::Exact(BlockBound::NONE),
    };

    #[inline]
    fn parse(raw: &[u8; SKIP_ENTRY_LEN]) -> Self {
        SkipEntry {
            last_doc: u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]),
            doc_bits: raw[DOC_BITS_AT],
            tf_bits: raw[TF_BITS_AT],
            bound: EntryBound::Coded([raw[6], raw[7], raw[8], raw[9], raw[10]]),
        }
    }

    /// Bytes of the full block this entry describes.
    #[inline]
    fn full_block_len(&self) -> usize {
        16 * (usize::from(self.doc_bits) + usize::from(self.tf_bits))
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
    /// The block data area.
    data: &'a [u8],
    df: u32,
    /// Covers every posting of the list: its blocks' bounds merged. At the stored values
    /// of `t` it is the list's own `h`, so the term's score bound from it is as tight as
    /// the best block's there.
    bound: BlockBound,
}

impl<'a> PostingsList<'a> {
    /// Validates the list that is exactly `bytes`, holding `df` postings. `doc_len(doc)` is
    /// the length of `doc` (any value for a doc outside the segment; only crafted bytes
    /// name one); `path` names the file the bytes came from, for errors.
    ///
    /// Costs O(n_blocks) over the skip table plus decoding the tail block (< 128
    /// postings), with one `doc_len` call per posting of a list shorter than a block (its
    /// bound is computed here, exactly, not stored). After `Ok`, no cursor operation can
    /// panic or read outside `bytes`, whatever the bytes were; a full block whose doc ids
    /// disagree with its skip entry ends the cursor there (`check_index` reports the list
    /// as shorter than its df).
    pub(crate) fn open(
        bytes: &'a [u8],
        df: u32,
        doc_len: impl Fn(u32) -> u32,
        path: &Path,
    ) -> Result<Self> {
        let corrupt = |detail: String| Error::Corrupt {
            path: path.to_path_buf(),
            what: "postings list",
            detail,
        };
        if df == 0 {
            return Err(corrupt("document frequency is 0".into()));
        }
        let df = df as usize;
        let mut docs = [0u32; BLOCK_LEN];
        let mut tfs = [0u32; BLOCK_LEN];
        if df < BLOCK_LEN {
            let last_doc = tail::decode(bytes, df, None, &mut docs, &mut tfs)
                .ok_or_else(|| corrupt(format!("a list of {df} postings does not decode")))?;
            // The tail decoder yields tf − 1.
            let bound = docs[..df]
                .iter()
                .zip(&tfs[..df])
                .map(|(&d, &t)| BlockBound::of(t.saturating_add(1), doc_len(d)))
                .fold(BlockBound::NONE, BlockBound::merge);
            let entry = SkipEntry {
                last_doc,
                doc_bits: 0,
                tf_bits: 0,
                bound: EntryBound::Exact(bound),
            };
            return Ok(PostingsList {
                skip: &[],
                single: Some(entry),
                data: bytes,
                df: df as u32,
                bound,
            });
        }
        let n_blocks = df.div_ceil(BLOCK_LEN);
        let skip_len = n_blocks * SKIP_ENTRY_LEN; // ≤ 2^28: df is a u32
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

        let mut start = 0usize;
        let mut bound = BlockBound::NONE;
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
            let block_bound = entry.bound.decode();
            if block_bound.max_tf == 0 {
                return Err(corrupt(format!("block {block}: max tf is 0")));
            }
            if count == BLOCK_LEN {
                if entry.doc_bits > 32 || entry.tf_bits > 32 {
                    return Err(corrupt(format!(
                        "block {block}: bit widths {} and {} (at most 32)",
                        entry.doc_bits, entry.tf_bits
                    )));
                }
                let len = entry.full_block_len();
                if start + len > data.len() {
                    return Err(Error::Truncated {
                        path: path.to_path_buf(),
                        what: "postings block",
                        offset: (skip_len + start) as u64,
                        needed: len as u64,
                        available: (data.len() - start) as u64,
                    });
                }
                // The block's bytes are decoded, and its doc ids checked against
                // `last_doc`, only when a cursor reaches it: reading every block here
                // would touch every page of a long list on each query.
                start += len;
            } else if tail::decode(&data[start..], count, prev_last, &mut docs, &mut tfs)
                != Some(entry.last_doc)
            {
                return Err(corrupt(format!(
                    "block {block}: tail block does not decode to {count} postings ending at doc {}",
                    entry.last_doc
                )));
            } else {
                start = data.len();
            }
            bound = bound.merge(block_bound);
            prev_last = Some(entry.last_doc);
        }
        if start != data.len() {
            return Err(corrupt(format!(
                "{} bytes after the last block",
                data.len() - start
            )));
        }

        Ok(PostingsList {
            skip,
            single: None,
            data,
            df: df as u32,
            bound,
        })
    }

    /// Covers every posting of the list (for the term's score bound).
    pub(crate) fn bound(&self) -> BlockBound {
        self.bound
    }

    /// Each block's bound, in order (test access).
    #[cfg(test)]
    pub(crate) fn block_bounds(&self) -> impl Iterator<Item = BlockBound> + '_ {
        let skipped = self
            .skip
            .as_chunks::<SKIP_ENTRY_LEN>()
            .0
            .iter()
            .map(|raw| SkipEntry::parse(raw).bound.decode());
        self.single
            .map(|e| e.bound.decode())
            .into_iter()
            .chain(skipped)
    }

    /// Each block's last doc id and [`BlockBound::h`] at `at`, in order: where the best
    /// scores of the list may lie, read from the skip table alone.
    pub(crate) fn block_maxima(&self, at: Interp) -> impl Iterator<Item = (u32, f64)> + '_ {
        (0..self.n_blocks()).map(move |b| {
            let entry = self.entry(b);
            (entry.last_doc, entry.bound.h(at))
        })
    }

    /// Number of postings.
    pub(crate) fn df(&self) -> u32 {
        self.df
    }

    /// Bytes the list occupies (skip table and block data).
    #[cfg(test)]
    pub(crate) fn byte_len(&self) -> usize {
        self.skip.len() + self.data.len()
    }

    /// The list has no skip table (test access).
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

    /// Bytes of the full blocks `from..to` (all before the last block): read from their
    /// skip entries' widths alone. A seek past many blocks sums them all, and parsing
    /// each whole entry for it was a twentieth of a mixed query's instructions.
    #[inline]
    fn full_blocks_len(&self, from: usize, to: usize) -> usize {
        let entries = self
            .skip
            .get(from * SKIP_ENTRY_LEN..to * SKIP_ENTRY_LEN)
            .unwrap_or_default();
        entries
            .chunks_exact(SKIP_ENTRY_LEN)
            .map(|e| 16 * (usize::from(e[DOC_BITS_AT]) + usize::from(e[TF_BITS_AT])))
            .sum()
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

/// The index in `docs` (ascending, not empty, `docs[0] < target`: the cursor's current
/// doc) of the first doc ≥ `target`, or the last index if there is none: probes 1, 2,
/// 4, … ahead, then halves the last step. Pruning
/// seeks mostly land a few postings ahead, where this costs what a forward scan does,
/// but a rare term's candidate can send a frequent term's cursor most of a block ahead
/// (a scan of half a block per seek was a twentieth of a mixed query's instructions).
/// On crafted, unordered bytes the answer is some index in range: never a panic.
#[inline]
fn gallop(docs: &[u32], target: u32) -> usize {
    debug_assert!(docs.first().is_some_and(|&d| d < target));
    let last = docs.len().saturating_sub(1);
    let (mut below, mut step) = (0, 1);
    // Invariant: docs[below] < target (the caller's current doc is below it).
    while below + step < last && docs[below + step] < target {
        below += step;
        step *= 2;
    }
    let hi = (below + step).min(last);
    match docs.get(below + 1..hi) {
        Some(between) => below + 1 + between.partition_point(|&d| d < target),
        None => hi,
    }
}

/// Postings in block `block` of a list of `df`.
#[inline]
fn block_count(df: usize, block: usize) -> usize {
    (df - block * BLOCK_LEN).min(BLOCK_LEN)
}

/// Walks a [`PostingsList`]: one decoded block at a time in fixed arrays (no heap).
///
/// Positions only move forward. `seek(target)` always lands on a doc ≥ `target` (or
/// [`TERMINATED`]); `advance` visits each posting once, so any loop over a cursor ends within
/// `df` steps even on crafted bytes (which may give wrong doc ids, never a panic).
///
/// The *block pointer* names the block whose skip entry `block_last_doc` and `block_bound`
/// describe: the current doc's block after `advance`/`seek`, possibly a later
/// one after `shallow_seek`.
pub(crate) struct PostingsCursor<'a> {
    list: PostingsList<'a>,
    bitpacker: BitPacker4x,
    /// Block held in `docs`/`tfs_minus_1`; `n_blocks` once exhausted.
    block: usize,
    /// Where `block`'s bytes start in the data area (blocks have no offsets on disk: a
    /// block's start is the sum of the lengths of the blocks before it).
    block_start: usize,
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
            block_start: 0,
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

    /// The decoded block's postings from the current one on: their doc ids and their
    /// term frequencies minus one (empty once exhausted). For scoring a block at once.
    #[inline]
    pub(crate) fn rest_of_block(&self) -> (&[u32], &[u32]) {
        let range = self.idx..self.block_len.max(self.idx);
        (&self.docs[range.clone()], &self.tfs_minus_1[range])
    }

    /// Moves `n` postings forward, `n` at most the length of [`Self::rest_of_block`]:
    /// within the decoded block, or to the next block's first posting when that is where
    /// `n` leads.
    #[inline]
    pub(crate) fn advance_in_block(&mut self, n: usize) {
        if self.idx + n < self.block_len {
            self.idx += n;
            self.doc = self.docs[self.idx];
            self.skip_block = self.block;
        } else {
            self.load_block(self.block + 1);
        }
    }

    /// Moves to the first posting with doc ≥ `target` (staying put if the current doc already
    /// is) and returns its doc id, or [`TERMINATED`]. Skips whole blocks by their `last_doc`
    /// and decodes at most one block.
    pub(crate) fn seek(&mut self, target: u32) -> u32 {
        if self.doc >= target {
            return self.doc;
        }
        // Most probes of a frequent term land in the decoded block: its last doc is in
        // memory (decoding checked it equals the skip entry's), no entry need be read.
        if self.docs[self.block_len.saturating_sub(1)] >= target {
            return self.gallop_in_block(target);
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
        self.gallop_in_block(target)
    }

    /// Moves to the first doc ≥ `target` within the decoded block, whose last doc is
    /// ≥ `target` while the current doc is below it (`gallop`'s precondition).
    #[inline]
    fn gallop_in_block(&mut self, target: u32) -> u32 {
        let i = self.idx
            + gallop(
                &self.docs[self.idx..self.block_len.max(self.idx + 1)],
                target,
            );
        self.idx = i;
        self.skip_block = self.block;
        self.doc = self.docs[i];
        self.doc
    }

    /// Moves the block pointer (never backwards) to the block that would contain `target`,
    /// without decoding anything; the current doc does not change. Past the last block the
    /// block accessors report `TERMINATED` and [`BlockBound::NONE`].
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

    /// The bound of the block at the block pointer ([`BlockBound::NONE`] past the end).
    #[inline]
    pub(crate) fn block_bound(&self) -> BlockBound {
        self.list.entry(self.skip_block).bound.decode()
    }

    /// Which block the block pointer names (changes only when it moves).
    #[inline]
    pub(crate) fn block_pointer(&self) -> usize {
        self.skip_block
    }

    /// Which block is decoded (the current doc's), as opposed to the block pointer.
    #[inline]
    pub(crate) fn decoded_block(&self) -> usize {
        self.block
    }

    /// [`BlockBound::h`] of the block at the block pointer, decoding no more of its skip
    /// entry than that needs (`f64::INFINITY` past the end: nothing scores there).
    #[inline]
    pub(crate) fn block_h(&self, at: Interp) -> f64 {
        self.list.entry(self.skip_block).bound.h(at)
    }

    /// Decodes `block` and moves to its first posting; exhausts the cursor past the last
    /// block, or if the block's bytes contradict its skip entry (only crafted bytes can).
    fn load_block(&mut self, block: usize) {
        let n_blocks = self.list.n_blocks();
        if block >= n_blocks {
            return self.exhaust();
        }
        // Blocks before `block` are full (only the last may be a tail): sum their lengths
        // from the block decoded last, or from the start.
        let (b, mut start) = if block >= self.block && self.block < n_blocks {
            (self.block, self.block_start)
        } else {
            (0, 0)
        };
        if b < block {
            start += self.list.full_blocks_len(b, block);
        }
        let entry = self.list.entry(block);
        let prev_last = block.checked_sub(1).map(|p| self.list.entry(p).last_doc);
        let count = block_count(self.list.df as usize, block);
        let ok = if count == BLOCK_LEN {
            // `open` checked that every full block lies within `data`.
            match self.list.data.get(start..start + entry.full_block_len()) {
                Some(bytes) => {
                    self.decode_full(bytes, entry, prev_last);
                    self.full_block_is_ordered(prev_last, entry)
                }
                None => false,
            }
        } else {
            self.list.data.get(start..).and_then(|bytes| {
                tail::decode(
                    bytes,
                    count,
                    prev_last,
                    &mut self.docs,
                    &mut self.tfs_minus_1,
                )
            }) == Some(entry.last_doc)
        };
        if !ok {
            return self.exhaust();
        }
        self.block = block;
        self.block_start = start;
        self.skip_block = block;
        self.idx = 0;
        self.block_len = count;
        self.doc = self.docs[0];
    }

    /// Whether the decoded full block's doc ids strictly increase from after `prev_last`
    /// to exactly `last_doc`. Honest blocks always do; crafted 32-bit gaps can wrap around
    /// u32 and still end at `last_doc`, and a cursor whose doc lies beyond its own block's
    /// `last_doc` would break every caller's progress argument (pruning's range skip loops
    /// forever on one).
    ///
    /// Each doc is the one before plus a gap of `doc_bits` bits plus one (sums in u32,
    /// wrapping): when the largest sum those widths allow stays below 2^32, nothing can
    /// have wrapped and the block increases by construction, so only its end is compared.
    /// That holds for every honest index (gaps of at most 2^20 or so); the full scan is
    /// left for widths only crafted bytes have.
    fn full_block_is_ordered(&self, prev_last: Option<u32>, entry: SkipEntry) -> bool {
        let docs = &self.docs;
        let last_doc = entry.last_doc;
        let base = prev_last.map_or(-1, i64::from);
        if base + ((BLOCK_LEN as i64) << entry.doc_bits.min(32)) < 1 << 32 {
            return docs[BLOCK_LEN - 1] == last_doc;
        }
        prev_last.is_none_or(|p| docs[0] > p)
            && docs.windows(2).all(|w| w[0] < w[1])
            && docs[BLOCK_LEN - 1] == last_doc
    }

    /// Unpacks a full block of `entry`'s widths (at most 32, checked by `open`) from
    /// `bytes`, exactly as long as they need.
    #[inline]
    fn decode_full(&mut self, bytes: &[u8], entry: SkipEntry, prev_last: Option<u32>) {
        let (packed_docs, packed_tfs) = bytes.split_at(16 * usize::from(entry.doc_bits));
        self.bitpacker.decompress_strictly_sorted(
            prev_last,
            packed_docs,
            &mut self.docs,
            entry.doc_bits,
        );
        self.bitpacker
            .decompress(packed_tfs, &mut self.tfs_minus_1, entry.tf_bits);
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

#[cfg(test)]
mod tests {
    use super::gallop;
    use proptest::prelude::*;

    /// The forward scan `gallop` replaced: the first doc ≥ target, else the last index.
    fn scan(docs: &[u32], target: u32) -> usize {
        let mut i = 0;
        while i + 1 < docs.len() && docs[i] < target {
            i += 1;
        }
        i
    }

    proptest! {
        #[test]
        fn gallop_lands_where_a_forward_scan_does_on_ascending_docs(
            gaps in prop::collection::vec(1u32..50, 1..128),
            at in 0.0f64..1.05,
        ) {
            let docs: Vec<u32> = gaps.iter().scan(0, |d, g| { *d += g; Some(*d) }).collect();
            // From just past the first doc (the cursor's, below every seek target) to past
            // the last.
            let target = (docs[0] + 1).max((at * f64::from(docs[docs.len() - 1])) as u32);
            prop_assert_eq!(gallop(&docs, target), scan(&docs, target));
        }

        #[test]
        fn gallop_stays_in_range_on_unordered_docs(
            mut docs in prop::collection::vec(any::<u32>(), 1..128),
            target in 1..=u32::MAX,
        ) {
            // Crafted bytes may order a block any way; the cursor's doc is still below.
            docs[0] = docs[0].min(target - 1);
            prop_assert!(gallop(&docs, target) < docs.len());
        }
    }
}
