//! Postings lists: one term's `(doc id, term frequency)` pairs in 128-posting blocks, with a
//! skip table that lets a query jump over blocks and bound their BM25 scores without decoding.
//!
//! [`PostingsWriter`] encodes a list; [`PostingsList::open`] validates one read from disk
//! (cheaply: O(number of blocks)); [`PostingsCursor`] walks it (`advance`, `seek`) and exposes
//! per-block maxima (`shallow_seek`, `block_max_tf`, `block_min_len`) for dynamic pruning.
//!
//! # Byte layout of one postings list
//!
//! A list holds `df ≥ 1` postings: doc ids strictly increasing and at most `u32::MAX - 1`
//! (`u32::MAX` is [`TERMINATED`]), term frequencies `tf ≥ 1`. `df` is not stored in the list;
//! the term dictionary stores it. The postings are cut into blocks of 128;
//! `n_blocks = ceil(df / 128)`; every block holds 128 postings except the last, which holds
//! `df - 128 * (n_blocks - 1)` (from 1 to 128). All integers are little-endian.
//!
//! A list of **fewer than 128 postings** (most terms) is its tail block alone: no skip table.
//! Its block bounds come from the list itself (last doc and largest tf, found when it is
//! opened) and from the term's smallest length in the dictionary.
//!
//! ```text
//! offset              size             field        (lists of 128 postings or more)
//! 0                   16 * n_blocks    skip table: n_blocks entries, entry i at 16 * i:
//!   +0                4                  last_doc  u32  last doc id of block i
//!   +4                4                  end       u32  end of block i's bytes, relative to
//!                                                       the start of the block data area
//!   +8                4                  max_tf    u32  largest tf in block i (≥ 1)
//!   +12               4                  min_len   u32  smallest document length (in tokens)
//!                                                       among block i's docs
//! 16 * n_blocks       end(n_blocks-1)  block data area: block i is bytes [end(i-1), end(i))
//!                                      of this area, with end(-1) = 0
//! ```
//!
//! Doc ids are stored as *gaps minus one*: `gap_j = doc_j - doc_{j-1} - 1`, where `doc_{-1}` is
//! the last doc of the previous block, or `-1` before the first doc of the list (so the first
//! doc of the list is stored as itself). Gaps continue across block boundaries.
//!
//! A **full block** (128 postings) is `2 + 16 * doc_bits + 16 * tf_bits` bytes:
//!
//! ```text
//! +0                  1                doc_bits  u8 ≤ 32: bit width of the 128 gaps
//! +1                  1                tf_bits   u8 ≤ 32: bit width of the 128 values tf - 1
//! +2                  16 * doc_bits    the 128 gaps, bit-packed (BitPacker4x layout, below)
//! +2 + 16 * doc_bits  16 * tf_bits     the 128 values tf - 1, bit-packed (BitPacker4x layout)
//! ```
//!
//! This is exactly `bitpacking::BitPacker4x::compress_strictly_sorted(initial, docs, ..)` with
//! `initial = None` for the first block and `Some(previous block's last_doc)` otherwise,
//! followed by `compress(tf - 1, ..)`. The BitPacker4x layout of 128 values `v_0..v_127` packed
//! with `b` bits: lane `l ∈ 0..4` holds `v_l, v_{l+4}, .., v_{l+124}` packed LSB-first into
//! `b` 32-bit words; the output is those words interleaved by lane (word 0 of lanes 0, 1, 2, 3,
//! then word 1 of lanes 0..3, ...), each word little-endian. With `b = 0` the section is empty.
//!
//! A **tail block** (the last block when it holds fewer than 128 postings) is, for each of its
//! postings in order, two unsigned LEB128 varints: `gap_j` then `tf_j - 1` (at most 5 bytes
//! each, no value above `u32::MAX`). It has no header; its length is exactly the bytes the
//! varints take.
//!
//! Invariants a reader checks ([`PostingsList::open`]): the skip table fits; `end` values are
//! non-decreasing and within the slice; `last_doc` values are strictly increasing, leave room
//! for each block's postings, and the last one is below `u32::MAX`; `max_tf ≥ 1`; each full
//! block's length matches its bit widths, both ≤ 32; the tail block decodes to exactly its
//! postings, consumes exactly its bytes and ends at its `last_doc`. Bytes after the last block's
//! end are ignored (the caller may pass a longer slice). `max_tf` and `min_len` are trusted as
//! given: they bound scores, and a wrong bound changes ranking, never memory safety.
//!
//! Worked example: docs `[3, 7]` with tfs `[1, 2]` (a short list, no skip table): the bytes
//! `03 00 03 01` (gap 3 = 3 - (-1) - 1, tf-1 = 0, gap 3 = 7 - 3 - 1, tf-1 = 1).

mod reader;
mod writer;

#[cfg(test)]
mod tests;

pub(crate) use reader::PostingsCursor;
pub(crate) use reader::PostingsList;
pub(crate) use writer::PostingsWriter;

/// Postings per block (the BitPacker4x block length).
pub(crate) const BLOCK_LEN: usize = 128;

/// Bytes per skip table entry.
const SKIP_ENTRY_LEN: usize = 16;

/// The doc id a cursor reports once it is exhausted. Never a real doc id.
pub(crate) const TERMINATED: u32 = u32::MAX;
