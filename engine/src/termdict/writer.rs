//! Builds a term dictionary body from terms pushed in sorted order.

use super::{BLOCK_TERMS, TermInfo};
use crate::varint;

/// Body layout (little-endian):
///
/// ```text
/// n_terms u32 | n_blocks u32 | heads_len u32 | data_len u32
/// n_blocks × (head_end u32, data_end u32, postings_offset u64)   block table
/// heads: block i's first term is bytes [head_end(i-1), head_end(i))
/// data:  block i's entries are bytes [data_end(i-1), data_end(i)); per term, varints
///        shared, suffix_len, suffix bytes, df, postings_len
///        (the first entry of a block has shared = suffix_len = 0: its term is the head)
/// ```
#[derive(Default)]
pub(crate) struct TermDictWriter {
    n_terms: usize,
    table: Vec<u8>,
    heads: Vec<u8>,
    data: Vec<u8>,
    last_term: Vec<u8>,
    /// Where the next term's postings must start (postings are contiguous in term order).
    next_postings: u64,
}

impl TermDictWriter {
    /// Terms must arrive in strictly increasing byte order, their postings contiguous.
    pub(crate) fn push(&mut self, term: &[u8], info: TermInfo) {
        debug_assert!(self.n_terms == 0 || self.last_term.as_slice() < term);
        assert_eq!(
            info.postings_offset, self.next_postings,
            "postings lists must be laid out in term order"
        );
        if self.n_terms.is_multiple_of(BLOCK_TERMS) {
            if self.n_terms > 0 {
                self.close_block();
            }
            self.heads.extend_from_slice(term);
            self.table
                .extend_from_slice(&info.postings_offset.to_le_bytes());
            varint::write(&mut self.data, 0);
            varint::write(&mut self.data, 0);
        } else {
            let shared = self
                .last_term
                .iter()
                .zip(term)
                .take_while(|(a, b)| a == b)
                .count();
            varint::write(&mut self.data, shared as u32);
            varint::write(&mut self.data, (term.len() - shared) as u32);
            self.data.extend_from_slice(&term[shared..]);
        }
        for v in [info.df, info.postings_len] {
            varint::write(&mut self.data, v);
        }
        self.last_term.clear();
        self.last_term.extend_from_slice(term);
        self.next_postings += info.postings_len as u64;
        self.n_terms += 1;
    }

    /// Records the ends of the open block (its postings offset is already in the table).
    fn close_block(&mut self) {
        let offset_at = self.table.len() - 8;
        let postings = self.table.split_off(offset_at);
        self.table
            .extend_from_slice(&(self.heads.len() as u32).to_le_bytes());
        self.table
            .extend_from_slice(&(self.data.len() as u32).to_le_bytes());
        self.table.extend_from_slice(&postings);
    }

    pub(crate) fn len(&self) -> usize {
        self.n_terms
    }

    /// The body, without footer.
    pub(crate) fn into_body(mut self) -> Vec<u8> {
        if self.n_terms > 0 {
            self.close_block();
        }
        let n_blocks = self.n_terms.div_ceil(BLOCK_TERMS) as u32;
        let mut out =
            Vec::with_capacity(16 + self.table.len() + self.heads.len() + self.data.len());
        out.extend_from_slice(&(self.n_terms as u32).to_le_bytes());
        out.extend_from_slice(&n_blocks.to_le_bytes());
        out.extend_from_slice(&(self.heads.len() as u32).to_le_bytes());
        out.extend_from_slice(&(self.data.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.table);
        out.extend_from_slice(&self.heads);
        out.extend_from_slice(&self.data);
        out
    }
}
