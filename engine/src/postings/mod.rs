//! Postings lists: one term's `(doc id, term frequency)` pairs in 128-posting blocks, with a
//! skip table that lets a query jump over blocks and bound their BM25 scores without decoding.
//!
//! [`PostingsWriter`] encodes a list; [`PostingsList::open`] validates one read from disk
//! (cheaply: O(number of blocks) over the skip table, plus the tail block) and derives the
//! term's score bounds; [`PostingsCursor`] walks it (`advance`, `seek`) and exposes per-block
//! bounds (`shallow_seek`, `block_bound`) for dynamic pruning;
//! [`verify`] walks a whole list and checks every posting (for `check` and merges).
//!
//! The byte layout is specified in docs/FORMAT.md ("Postings"). In short: lists of 128
//! postings or more start with a skip table of 11-byte entries (last doc, the block's two
//! bit widths, and its score bound as five one-byte codes, see [`block_bound`]); full blocks are BitPacker4x-packed doc gaps and tfs without a header;
//! the last block, when it holds fewer than 128 postings, is a *tail*: two varints for a
//! single posting, else two bit widths and the postings bit-packed at those widths.

mod block_bound;
mod bound_code;
mod reader;
mod tail;
mod verify;
mod writer;

#[cfg(test)]
mod tests;

pub(crate) use block_bound::{BlockBound, Interp, RATIO_SCALE, h_of_codes};
pub(crate) use reader::PostingsCursor;
pub(crate) use reader::PostingsList;
pub(crate) use verify::verify;
pub(crate) use writer::PostingsWriter;

/// Postings per block (the BitPacker4x block length).
pub(crate) const BLOCK_LEN: usize = 128;

/// Bytes per skip table entry: last doc, two bit widths, five bound codes.
const SKIP_ENTRY_LEN: usize = 11;

/// The doc id a cursor reports once it is exhausted. Never a real doc id.
pub(crate) const TERMINATED: u32 = u32::MAX;
