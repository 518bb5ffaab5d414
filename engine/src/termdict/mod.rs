//! The sorted term dictionary of one segment field: term bytes → [`TermInfo`].
//!
//! Terms are front-coded in blocks of [`BLOCK_TERMS`]: each block's first term is kept
//! whole in a table of block heads that a lookup binary-searches, and the block's entries
//! store each term as (bytes shared with the previous term, the rest) with its statistics
//! as varints. Postings lists are laid out in term order, so a term's postings offset is
//! its block's offset plus the lengths of the lists before it in the block. A lookup
//! decodes at most one block; opening validates the tables only.

mod reader;
mod writer;

pub(crate) use reader::{TermDict, TermWalker};
pub(crate) use writer::TermDictWriter;

/// Terms per front-coded block.
pub(crate) const BLOCK_TERMS: usize = 32;

/// Where a term's postings are, and how many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TermInfo {
    /// Byte offset of the postings list in the segment's postings file body.
    pub postings_offset: u64,
    pub postings_len: u32,
    /// Documents in this segment containing the term.
    pub df: u32,
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::segment::checked::Trusted;

    /// Contiguous postings, as the segment writers lay them out.
    fn dictionary(terms: &[&str]) -> (Vec<u8>, Vec<TermInfo>) {
        let mut w = TermDictWriter::default();
        let mut offset = 0u64;
        let mut infos = Vec::new();
        for (i, t) in terms.iter().enumerate() {
            let info = TermInfo {
                postings_offset: offset,
                postings_len: 10 + i as u32 * 3,
                df: i as u32 + 1,
            };
            offset += info.postings_len as u64;
            w.push(t.as_bytes(), info);
            infos.push(info);
        }
        (w.into_body(), infos)
    }

    #[test]
    fn finds_every_term_and_nothing_else_across_blocks() {
        let mut owned: Vec<String> = (0..200).map(|i| format!("term{i:04}")).collect();
        owned.extend(["", "a", "ab", "abc", "b", "zebra", "état", "états"].map(String::from));
        owned.sort();
        let terms: Vec<&str> = owned.iter().map(String::as_str).collect();
        let (body, infos) = dictionary(&terms);
        let dict = TermDict::open(Path::new("t"), &body, &Trusted).unwrap();
        assert_eq!(dict.len(), terms.len());
        for (t, info) in terms.iter().zip(&infos) {
            assert_eq!(
                dict.get(&body, t.as_bytes(), &Trusted).unwrap(),
                Some(*info),
                "{t}"
            );
        }
        for missing in [
            "aa",
            "c",
            "zz",
            "term00000",
            "term0200",
            "éta",
            "\u{10ffff}",
        ] {
            assert_eq!(
                dict.get(&body, missing.as_bytes(), &Trusted).unwrap(),
                None,
                "{missing}"
            );
        }
        let mut walker = dict.walk(&body, &Trusted);
        let mut seen = Vec::new();
        while let Some((term, info)) = walker.next_term().unwrap() {
            seen.push((String::from_utf8(term.to_vec()).unwrap(), info));
        }
        let expected: Vec<(String, TermInfo)> = owned.iter().cloned().zip(infos).collect();
        assert_eq!(seen, expected);
    }

    #[test]
    fn an_empty_dictionary_opens_and_finds_nothing() {
        let body = TermDictWriter::default().into_body();
        let dict = TermDict::open(Path::new("t"), &body, &Trusted).unwrap();
        assert_eq!(dict.len(), 0);
        assert_eq!(dict.get(&body, b"x", &Trusted).unwrap(), None);
        assert!(dict.walk(&body, &Trusted).next_term().unwrap().is_none());
    }

    #[test]
    fn truncated_or_inconsistent_tables_are_typed_errors() {
        let owned: Vec<String> = (0..70).map(|i| format!("w{i:03}")).collect();
        let terms: Vec<&str> = owned.iter().map(String::as_str).collect();
        let (body, _) = dictionary(&terms);
        for cut in 0..body.len() {
            let Ok(dict) = TermDict::open(Path::new("t"), &body[..cut], &Trusted) else {
                continue;
            };
            // Whatever opened must never panic, and the walk reports the damage.
            for t in &terms {
                let _ = dict.get(&body[..cut], t.as_bytes(), &Trusted);
            }
            let mut walker = dict.walk(&body[..cut], &Trusted);
            let mut n = 0;
            let complete = loop {
                match walker.next_term() {
                    Ok(Some(_)) => n += 1,
                    Ok(None) => break true,
                    Err(_) => break false,
                }
            };
            assert!(
                !complete || n == terms.len(),
                "cut at {cut}: a short walk looked complete"
            );
        }
    }
}
