//! Encodes one term's postings into the layout described in the module docs.

use bitpacking::{BitPacker, BitPacker4x};

use super::{BLOCK_LEN, SKIP_ENTRY_LEN, TERMINATED};
use crate::varint;

/// What the term dictionary keeps about one encoded list: enough to open it and to bound
/// the term's BM25 score over the whole list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TermSummary {
    /// Number of postings (documents containing the term).
    pub(crate) df: u32,
    /// Largest term frequency in the list.
    pub(crate) max_tf: u32,
    /// Smallest document length among the list's documents.
    pub(crate) min_len: u32,
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
    /// length (in tokens) of `doc`; it is called once per posting.
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
        let data_start = out.len();

        let mut summary = TermSummary {
            df,
            max_tf: 0,
            min_len: u32::MAX,
            byte_len: 0,
        };
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
            let mut max_tf = 0;
            let mut min_len = u32::MAX;
            for (j, (&doc, &tf)) in block_docs.iter().zip(block_tfs).enumerate() {
                assert!(
                    u64::from(doc) >= next_min && doc != TERMINATED,
                    "doc ids must be strictly increasing and below u32::MAX (doc {doc})"
                );
                assert!(tf >= 1, "tf must be at least 1 (doc {doc})");
                next_min = u64::from(doc) + 1;
                max_tf = max_tf.max(tf);
                min_len = min_len.min(doc_len(doc));
                tf_minus_1[j] = tf - 1;
            }
            let last_doc = *block_docs.last().expect("chunks are non-empty");

            if block_docs.len() == BLOCK_LEN {
                let doc_bits = self
                    .bitpacker
                    .num_bits_strictly_sorted(prev_last, block_docs);
                let tf_bits = self.bitpacker.num_bits(&tf_minus_1);
                out.push(doc_bits);
                out.push(tf_bits);
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
                let mut next = prev_last.map_or(0, |d| d + 1); // d < u32::MAX: no overflow
                for (&doc, &tf) in block_docs.iter().zip(&tf_minus_1) {
                    varint::write(out, doc - next);
                    varint::write(out, tf);
                    next = doc + 1;
                }
            }

            let end = u32::try_from(out.len() - data_start).expect("postings list under 4 GiB");
            if skipped {
                let entry = list_start + block * SKIP_ENTRY_LEN;
                for (k, field) in [last_doc, end, max_tf, min_len].into_iter().enumerate() {
                    out[entry + 4 * k..entry + 4 * k + 4].copy_from_slice(&field.to_le_bytes());
                }
            }

            summary.max_tf = summary.max_tf.max(max_tf);
            summary.min_len = summary.min_len.min(min_len);
            prev_last = Some(last_doc);
        }

        summary.byte_len =
            u32::try_from(out.len() - list_start).expect("postings list under 4 GiB");
        summary
    }
}

impl Default for PostingsWriter {
    fn default() -> Self {
        Self::new()
    }
}
