//! Builds a term dictionary body from terms pushed in sorted order.

use super::{TERM_INFO_LEN, TermInfo};

/// Body layout (little-endian):
/// `n u32 | n × TermInfo (24 B) | (n+1) × term end offset u32 | term bytes`.
#[derive(Default)]
pub(crate) struct TermDictWriter {
    infos: Vec<u8>,
    offsets: Vec<u32>,
    bytes: Vec<u8>,
}

impl TermDictWriter {
    /// Terms must arrive in strictly increasing byte order.
    pub(crate) fn push(&mut self, term: &[u8], info: TermInfo) {
        debug_assert!(self.last_term().is_none_or(|last| last < term));
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.bytes.extend_from_slice(term);
        self.offsets.push(self.bytes.len() as u32);
        self.infos
            .extend_from_slice(&info.postings_offset.to_le_bytes());
        self.infos
            .extend_from_slice(&info.postings_len.to_le_bytes());
        self.infos.extend_from_slice(&info.df.to_le_bytes());
        self.infos.extend_from_slice(&info.max_tf.to_le_bytes());
        self.infos.extend_from_slice(&info.min_len.to_le_bytes());
    }

    fn last_term(&self) -> Option<&[u8]> {
        let n = self.offsets.len();
        (n >= 2).then(|| &self.bytes[self.offsets[n - 2] as usize..self.offsets[n - 1] as usize])
    }

    pub(crate) fn len(&self) -> usize {
        self.infos.len() / TERM_INFO_LEN
    }

    /// The body, without footer.
    pub(crate) fn into_body(mut self) -> Vec<u8> {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        let n = self.len() as u32;
        let mut out =
            Vec::with_capacity(4 + self.infos.len() + self.offsets.len() * 4 + self.bytes.len());
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&self.infos);
        for off in &self.offsets {
            out.extend_from_slice(&off.to_le_bytes());
        }
        out.extend_from_slice(&self.bytes);
        out
    }
}
