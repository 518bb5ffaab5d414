//! Encodes postings lists (layout: docs/FORMAT.md, "Postings").

use bitpacking::{BitPacker, BitPacker4x};

use super::{BLOCK_LEN, BlockBound, SKIP_ENTRY_LEN, TERMINATED, tail};

/// What the term dictionary keeps about one encoded list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TermSummary {
    /// Number of postings (documents containing the term).
    pub(crate) df: u32,
    /// Bytes the list occupies (skip table and block data).
    pub(crate) byte_len: u32,
}

/// Encodes postings lists. Cheap to keep: one writer encodes any number of lists; the only
/// scratch space is on the stack.
#[derive(Clone, Copy)]
pub(crate) struct PostingsWriter {
    bitpacker: BitPacker4x,
}

impl PostingsWriter {
    pub(crate) fn new() -> Self {
        PostingsWriter {
            bitpacker: BitPacker4x::new(),
        }
    }

    /// Appends one postings list to `out` and returns its summary. `doc_len(doc)` gives the
    /// length (in tokens) of `doc`, for the block bounds of lists with a skip table.
    ///
    /// # Panics
    ///
    /// These are the caller's promises, checked because breaking one would write a list no
    /// reader accepts: `docs` is non-empty, as long as `tfs`, strictly increasing and below
    /// [`TERMINATED`]; every tf is ≥ 1; the list is under 4 GiB.
    pub(crate) fn encode(
        &mut self,
        docs: &[u32],
        tfs: &[u32],
        doc_len: impl Fn(u32) -> u32,
        out: &mut Vec<u8>,
    ) -> TermSummary {
        assert!(
            !docs.is_empty(),
            "a postings list needs at least one posting"
        );
        assert_eq!(docs.len(), tfs.len(), "one tf per doc");
        let df = u32::try_from(docs.len()).expect("df fits in u32");

        let n_blocks = docs.len().div_ceil(BLOCK_LEN);
        // A list shorter than a block is its tail alone: no skip entry (most terms are
        // rare; their skip entries were a fifth of the postings file).
        let skipped = docs.len() >= BLOCK_LEN;
        let list_start = out.len();
        if skipped {
            out.resize(list_start + n_blocks * SKIP_ENTRY_LEN, 0);
        }

        let mut prev_last: Option<u32> = None;
        let mut packed = [0u8; 4 * BLOCK_LEN]; // 128 values at up to 32 bits
        let mut tf_minus_1 = [0u32; BLOCK_LEN];

        for (block, (block_docs, block_tfs)) in docs
            .chunks(BLOCK_LEN)
            .zip(tfs.chunks(BLOCK_LEN))
            .enumerate()
        {
            // Check the promises and gather the block's score bounds in one pass.
            let mut next_min = prev_last.map_or(0, |d| u64::from(d) + 1);
            let mut bound = BlockBound::NONE;
            for (j, (&doc, &tf)) in block_docs.iter().zip(block_tfs).enumerate() {
                assert!(
                    u64::from(doc) >= next_min && doc != TERMINATED,
                    "doc ids must be strictly increasing and below u32::MAX (doc {doc})"
                );
                assert!(tf >= 1, "tf must be at least 1 (doc {doc})");
                next_min = u64::from(doc) + 1;
                if skipped {
                    bound = bound.merge(BlockBound::of(tf, doc_len(doc)));
                }
                tf_minus_1[j] = tf - 1;
            }
            let last_doc = *block_docs.last().expect("chunks are non-empty");

            let (mut doc_bits, mut tf_bits) = (0, 0);
            if block_docs.len() == BLOCK_LEN {
                doc_bits = self
                    .bitpacker
                    .num_bits_strictly_sorted(prev_last, block_docs);
                tf_bits = self.bitpacker.num_bits(&tf_minus_1);
                let n = self.bitpacker.compress_strictly_sorted(
                    prev_last,
                    block_docs,
                    &mut packed,
                    doc_bits,
                );
                out.extend_from_slice(&packed[..n]);
                let n = self.bitpacker.compress(&tf_minus_1, &mut packed, tf_bits);
                out.extend_from_slice(&packed[..n]);
            } else {
                tail::encode(out, prev_last, block_docs, &tf_minus_1[..block_docs.len()]);
            }

            if skipped {
                let at = list_start + block * SKIP_ENTRY_LEN;
                let entry = &mut out[at..at + SKIP_ENTRY_LEN];
                entry[..4].copy_from_slice(&last_doc.to_le_bytes());
                entry[4] = doc_bits;
                entry[5] = tf_bits;
                entry[6..11].copy_from_slice(&bound.codes());
            }
            prev_last = Some(last_doc);
        }

        TermSummary {
            df,
            byte_len: u32::try_from(out.len() - list_start).expect("postings list under 4 GiB"),
        }
    }
}

impl Default for PostingsWriter {
    fn default() -> Self {
        Self::new()
    }
}
