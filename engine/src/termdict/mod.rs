//! The sorted term dictionary of one segment field: term bytes → [`TermInfo`].
//!
//! Lookup is a binary search over a table of offsets into a blob of term bytes; no
//! structure is built at open beyond validating the tables, so opening is O(terms) in
//! checks and O(1) in allocation.

mod reader;
mod writer;

pub(crate) use reader::TermDict;
pub(crate) use writer::TermDictWriter;

/// Where a term's postings are, and the bounds pruning needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TermInfo {
    /// Byte offset of the postings list in the segment's postings file body.
    pub postings_offset: u64,
    pub postings_len: u32,
    /// Documents in this segment containing the term.
    pub df: u32,
    /// Largest term frequency in any document (score upper bound, with `min_len`).
    pub max_tf: u32,
    /// Smallest flat length among documents containing the term.
    pub min_len: u32,
}

pub(crate) const TERM_INFO_LEN: usize = 24;

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::error::Error;

    fn info(n: u32) -> TermInfo {
        TermInfo {
            postings_offset: n as u64 * 100,
            postings_len: n,
            df: n + 1,
            max_tf: n + 2,
            min_len: n + 3,
        }
    }

    #[test]
    fn finds_every_term_and_nothing_else() {
        let terms = ["", "a", "ab", "b", "zebra", "état"];
        let mut w = TermDictWriter::default();
        for (i, t) in terms.iter().enumerate() {
            w.push(t.as_bytes(), info(i as u32));
        }
        let body = w.into_body();
        let dict = TermDict::open(Path::new("t"), &body).unwrap();
        assert_eq!(dict.len(), terms.len());
        for (i, t) in terms.iter().enumerate() {
            assert_eq!(dict.get(&body, t.as_bytes()), Some(info(i as u32)), "{t}");
            assert_eq!(dict.term(&body, i), t.as_bytes());
        }
        for missing in ["aa", "c", "zz", "e"] {
            assert_eq!(dict.get(&body, missing.as_bytes()), None, "{missing}");
        }
    }

    #[test]
    fn truncated_or_inconsistent_tables_are_typed_errors() {
        let mut w = TermDictWriter::default();
        w.push(b"alpha", info(1));
        w.push(b"beta", info(2));
        let body = w.into_body();
        for cut in 0..body.len() {
            assert!(
                TermDict::open(Path::new("t"), &body[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        // An offset pointing past the term bytes.
        let mut bad = body.clone();
        let offsets_at = 4 + 2 * TERM_INFO_LEN;
        bad[offsets_at + 4..offsets_at + 8].copy_from_slice(&1000u32.to_le_bytes());
        assert!(matches!(
            TermDict::open(Path::new("t"), &bad),
            Err(Error::Corrupt { .. })
        ));
    }
}
