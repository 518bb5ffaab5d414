//! Per-document token counts of each indexed field, the `dl` of BM25.
//!
//! Body layout (little-endian): `n u32 | f u32 | f × (name_len u32, name bytes, code u8
//! [, e u32 when code is 0x81]) | f tables`. Table i is `n` lengths `code_i` bytes wide
//! (code 1, 2 or 4), or, for code 0x81, `n` bytes then `e` exception docs (u32, strictly
//! increasing) then their `e` lengths (u32): a byte below 255 is the length itself, 255
//! says "look the doc up in the exceptions". The writer takes the smallest of these that
//! holds the table. A segment stores a table for each field it indexes and no other:
//! lengths are read only to score postings.
//!
//! For example lengths `[3, 700, 12]` take 2 bytes each as code 2 (6 bytes), and as code
//! 0x81 the bytes `[3, 255, 12]`, e = 1, docs `[1]`, lengths `[700]` (3 + 4 + 8 bytes):
//! code 2 wins here, but one long document among thousands of short ones costs 8 bytes
//! instead of doubling the table.

use std::path::Path;

use crate::error::{Error, Result};
use crate::field::{Field, FieldCounts};
use crate::segment::bytes::{ByteReader, u32_at};

/// The byte that sends a lookup of an escaped table to its exceptions.
const ESCAPE: u8 = 0xFF;

/// How one field's table is laid out: its code byte in the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    /// Code 1: a byte per document, the length itself (any of 0..=255).
    One,
    /// Code 0x81: a byte per document, [`ESCAPE`] for a length of 255 or more, which the
    /// exception list holds.
    Escaped,
    /// Code 2: a little-endian u16 per document.
    Two,
    /// Code 4: a little-endian u32 per document.
    Four,
}

impl Encoding {
    const ESCAPED_CODE: u8 = 0x81;

    fn code(self) -> u8 {
        match self {
            Encoding::One => 1,
            Encoding::Escaped => Self::ESCAPED_CODE,
            Encoding::Two => 2,
            Encoding::Four => 4,
        }
    }

    fn from_code(code: u8) -> Option<Self> {
        match code {
            1 => Some(Encoding::One),
            Self::ESCAPED_CODE => Some(Encoding::Escaped),
            2 => Some(Encoding::Two),
            4 => Some(Encoding::Four),
            _ => None,
        }
    }

    /// Bytes per document in the table's main part.
    fn width(self) -> usize {
        match self {
            Encoding::One | Encoding::Escaped => 1,
            Encoding::Two => 2,
            Encoding::Four => 4,
        }
    }

    /// The smallest encoding of `table`, with its exception count (0 unless escaped).
    /// Ties go to the plain widths, whose reads never branch.
    fn choose(table: &[u32]) -> (Self, usize) {
        let max = table.iter().copied().max().unwrap_or(0);
        if max <= 0xFF {
            return (Encoding::One, 0);
        }
        let n = table.len();
        let exceptions = table.iter().filter(|&&l| l >= u32::from(ESCAPE)).count();
        // The count in the header, then a doc and a length per exception.
        let escaped = n + 4 + 8 * exceptions;
        let plain = if max <= 0xFFFF {
            (Encoding::Two, 2 * n)
        } else {
            (Encoding::Four, 4 * n)
        };
        if escaped < plain.1 {
            (Encoding::Escaped, exceptions)
        } else {
            (plain.0, 0)
        }
    }
}

/// A new segment's document lengths for each field it indexes, as the builder and the
/// merger collect them.
pub(crate) struct DocLengths {
    /// By [`Field::index`]; `None` for a field the segment does not index.
    tables: [Option<Vec<u32>>; 3],
}

impl DocLengths {
    /// Empty tables for `fields`, to be filled with [`DocLengths::push`].
    pub(crate) fn for_fields(fields: &[Field]) -> Self {
        let mut tables = [None, None, None];
        for f in fields {
            tables[f.index()] = Some(Vec::new());
        }
        DocLengths { tables }
    }

    /// Appends one document, its lengths given by field (a field not kept is ignored).
    pub(crate) fn push(&mut self, length: impl Fn(Field) -> u32) {
        for f in Field::ALL {
            if let Some(t) = &mut self.tables[f.index()] {
                t.push(length(f));
            }
        }
    }

    /// The lengths of `field`, which the segment must index.
    pub(crate) fn of(&self, field: Field) -> &[u32] {
        self.tables[field.index()]
            .as_deref()
            .expect("lengths are collected for every indexed field")
    }

    /// Each indexed field's total tokens, for the manifest's averages (0 for the others).
    pub(crate) fn tokens(&self) -> FieldCounts {
        let mut tokens = FieldCounts::default();
        for f in Field::ALL {
            if let Some(t) = &self.tables[f.index()] {
                tokens.set(f, t.iter().map(|&l| l as u64).sum());
            }
        }
        tokens
    }

    /// The lengths file's body.
    pub(crate) fn body(&self) -> Vec<u8> {
        let present: Vec<(Field, &[u32])> = Field::ALL
            .into_iter()
            .filter_map(|f| self.tables[f.index()].as_deref().map(|t| (f, t)))
            .collect();
        let n = present.first().map_or(0, |(_, t)| t.len());
        let encodings: Vec<(Encoding, usize)> =
            present.iter().map(|(_, t)| Encoding::choose(t)).collect();
        let table_bytes: usize = encodings.iter().map(|&(e, x)| e.width() * n + 8 * x).sum();
        let mut out = Vec::with_capacity(8 + 20 * present.len() + table_bytes);
        out.extend_from_slice(&(n as u32).to_le_bytes());
        out.extend_from_slice(&(present.len() as u32).to_le_bytes());
        for ((f, _), &(encoding, exceptions)) in present.iter().zip(&encodings) {
            let name = f.name();
            out.extend_from_slice(&(name.len() as u32).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.push(encoding.code());
            if encoding == Encoding::Escaped {
                out.extend_from_slice(&(exceptions as u32).to_le_bytes());
            }
        }
        for ((_, t), &(encoding, _)) in present.iter().zip(&encodings) {
            if encoding == Encoding::Escaped {
                out.extend(t.iter().map(|&l| l.min(u32::from(ESCAPE)) as u8));
                let long = || {
                    (0u32..)
                        .zip(t.iter())
                        .filter(|&(_, &l)| l >= u32::from(ESCAPE))
                };
                for (doc, _) in long() {
                    out.extend_from_slice(&doc.to_le_bytes());
                }
                for (_, l) in long() {
                    out.extend_from_slice(&l.to_le_bytes());
                }
            } else {
                let w = encoding.width();
                for &l in t.iter() {
                    out.extend_from_slice(&l.to_le_bytes()[..w]);
                }
            }
        }
        out
    }
}

/// Where one field's table sits in a validated body.
#[derive(Debug, Clone, Copy)]
struct TableAt {
    at: usize,
    encoding: Encoding,
    /// The exception count of an escaped table (0 for the others).
    exceptions: usize,
}

/// Where each field's length table sits in a validated body.
#[derive(Debug, Clone)]
pub(crate) struct Lengths {
    len: usize,
    /// By [`Field::index`].
    tables: [Option<TableAt>; 3],
}

impl Lengths {
    /// Validates a body holding `expected_docs` lengths for each of `fields` (tables of
    /// other fields are tolerated and ignored). An escaped table is checked whole: its
    /// exception docs strictly increase and are below `n`, each names a doc whose byte is
    /// 255 and holds a length of at least 255, and no other byte is 255 (O(n), over a
    /// body the footer check has just read whole anyway).
    pub(crate) fn open(
        path: &Path,
        body: &[u8],
        expected_docs: usize,
        fields: &[Field],
    ) -> Result<Self> {
        let corrupt = |detail: String| Error::Corrupt {
            path: path.to_path_buf(),
            what: "document lengths",
            detail,
        };
        let mut r = ByteReader::new(path, body);
        let len = r.u32("document count")? as usize;
        if len != expected_docs {
            return Err(corrupt(format!(
                "holds {len} documents, manifest says {expected_docs}"
            )));
        }
        let count = r.u32("field count")? as usize;
        if count > 64 {
            return Err(corrupt(format!("{count} fields")));
        }
        let mut names = Vec::with_capacity(count);
        for _ in 0..count {
            let name_len = r.u32("field name length")? as usize;
            let name = r.take(name_len, "field name")?;
            let code = r.take(1, "length width")?[0];
            let Some(encoding) = Encoding::from_code(code) else {
                return Err(corrupt(format!(
                    "field {}: lengths coded {code:#04x} (1, 2 or 4 bytes wide, or 0x81: a \
                     byte and exceptions)",
                    String::from_utf8_lossy(name)
                )));
            };
            let exceptions = match encoding {
                Encoding::Escaped => r.u32("exception count")? as usize,
                _ => 0,
            };
            if exceptions > len {
                return Err(corrupt(format!(
                    "field {}: {exceptions} exceptions among {len} documents",
                    String::from_utf8_lossy(name)
                )));
            }
            names.push((name, encoding, exceptions));
        }
        let mut tables = [None; 3];
        for (name, encoding, exceptions) in names {
            let at = r.position();
            let bytes = r.table(len, encoding.width(), "length table")?;
            if encoding == Encoding::Escaped {
                let docs = r.table(exceptions, 4, "length exception docs")?;
                let lengths = r.table(exceptions, 4, "length exception lengths")?;
                check_exceptions(bytes, docs, lengths).map_err(|detail| {
                    corrupt(format!("field {}: {detail}", String::from_utf8_lossy(name)))
                })?;
            }
            if let Some(f) = Field::ALL.into_iter().find(|f| f.name().as_bytes() == name) {
                tables[f.index()] = Some(TableAt {
                    at,
                    encoding,
                    exceptions,
                });
            }
        }
        if r.position() != body.len() {
            return Err(corrupt(format!(
                "{} bytes after the last table",
                body.len() - r.position()
            )));
        }
        if let Some(missing) = fields.iter().find(|f| tables[f.index()].is_none()) {
            return Err(corrupt(format!(
                "no length table for the indexed field {}",
                missing.name()
            )));
        }
        Ok(Lengths { len, tables })
    }

    /// The length table of `field` inside `body`; `field` must be one `open` checked.
    pub(crate) fn table<'a>(&self, body: &'a [u8], field: Field) -> LengthTable<'a> {
        let t = self.tables[field.index()].expect("checked at open");
        let end = t.at + t.encoding.width() * self.len;
        let x = 4 * t.exceptions;
        LengthTable {
            bytes: &body[t.at..end],
            encoding: t.encoding,
            exception_docs: &body[end..end + x],
            exception_lengths: &body[end + x..end + 2 * x],
        }
    }
}

/// Checks an escaped table's byte part against its exception docs and lengths (each
/// `4 × e` bytes): what [`Lengths::open`] promises of it, or what is wrong.
fn check_exceptions(bytes: &[u8], docs: &[u8], lengths: &[u8]) -> std::result::Result<(), String> {
    let e = docs.len() / 4;
    let mut previous = None;
    for i in 0..e {
        let doc = u32_at(docs, i);
        if previous.is_some_and(|p| doc <= p) {
            return Err(format!(
                "exception {i} is doc {doc}, not after doc {}",
                previous.unwrap_or(0)
            ));
        }
        previous = Some(doc);
        match bytes.get(doc as usize) {
            None => {
                return Err(format!(
                    "exception {i} is doc {doc} of {} documents",
                    bytes.len()
                ));
            }
            Some(&b) if b != ESCAPE => {
                return Err(format!("exception {i} is doc {doc}, whose byte is {b}"));
            }
            Some(_) => {}
        }
        let length = u32_at(lengths, i);
        if length < u32::from(ESCAPE) {
            return Err(format!(
                "exception {i} (doc {doc}) holds {length}, which its byte could"
            ));
        }
    }
    // Every exception's byte is 255 and the docs are distinct: equal counts mean every
    // 255 byte has its exception.
    let escapes = bytes.iter().filter(|&&b| b == ESCAPE).count();
    if escapes != e {
        return Err(format!("{escapes} bytes are 255 but {e} exceptions"));
    }
    Ok(())
}

/// One field's document lengths, read in place.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LengthTable<'a> {
    bytes: &'a [u8],
    encoding: Encoding,
    /// An escaped table's exception docs and their lengths, u32s (empty for the others).
    exception_docs: &'a [u8],
    exception_lengths: &'a [u8],
}

impl LengthTable<'_> {
    /// The sum of every document's length: the field's token count.
    pub(crate) fn total(&self) -> u64 {
        let w = self.encoding.width();
        let main: u64 = self
            .bytes
            .chunks_exact(w)
            .map(|b| {
                let mut le = [0u8; 4];
                le[..w].copy_from_slice(b);
                u64::from(u32::from_le_bytes(le))
            })
            .sum();
        if self.encoding != Encoding::Escaped {
            return main;
        }
        let escapes = self.bytes.iter().filter(|&&b| b == ESCAPE).count() as u64;
        let long: u64 = self
            .exception_lengths
            .chunks_exact(4)
            .map(|b| u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
            .sum();
        main - escapes * u64::from(ESCAPE) + long
    }

    /// The lengths of `docs` into `out` (as long as `docs`): [`Self::get`] with the
    /// encoding chosen once for the lot, for scoring a block of postings at once. An
    /// escaped table loads the bytes as a one-byte table does and searches the
    /// exceptions for an escape only.
    #[inline]
    pub(crate) fn get_many(&self, docs: &[u32], out: &mut [u32]) {
        let out = &mut out[..docs.len()];
        match self.encoding {
            Encoding::One => {
                for (o, &d) in out.iter_mut().zip(docs) {
                    *o = self.bytes.get(d as usize).map_or(0, |&b| u32::from(b));
                }
            }
            Encoding::Escaped => {
                // A block's docs increase, so each search starts after the last hit.
                let (mut from, mut last) = (0, 0);
                for (o, &d) in out.iter_mut().zip(docs) {
                    let b = self.bytes.get(d as usize).map_or(0, |&b| b);
                    *o = u32::from(b);
                    if b == ESCAPE {
                        if d < last {
                            from = 0;
                        }
                        last = d;
                        (*o, from) = self.exception_from(d, from);
                    }
                }
            }
            Encoding::Two => {
                for (o, &d) in out.iter_mut().zip(docs) {
                    let i = 2 * d as usize;
                    *o = self
                        .bytes
                        .get(i..i + 2)
                        .map_or(0, |b| u32::from(u16::from_le_bytes([b[0], b[1]])));
                }
            }
            Encoding::Four => {
                for (o, &d) in out.iter_mut().zip(docs) {
                    *o = self.get(d);
                }
            }
        }
    }

    /// The length of document `doc`; 0 for a doc past the segment's end (only a crafted
    /// postings list names one, and any length keeps it harmless).
    #[inline]
    pub(crate) fn get(&self, doc: u32) -> u32 {
        let i = doc as usize;
        match self.encoding {
            Encoding::One => self.bytes.get(i).map_or(0, |&b| u32::from(b)),
            Encoding::Escaped => match self.bytes.get(i) {
                Some(&ESCAPE) => self.exception(doc),
                b => b.map_or(0, |&b| u32::from(b)),
            },
            Encoding::Two => self
                .bytes
                .get(2 * i..2 * i + 2)
                .map_or(0, |b| u32::from(u16::from_le_bytes([b[0], b[1]]))),
            Encoding::Four => self
                .bytes
                .get(4 * i..4 * i + 4)
                .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        }
    }

    /// The exception length of `doc`, whose byte is 255: a binary search of the docs.
    /// Open checked that every such doc has one; 255 stands in if not.
    fn exception(&self, doc: u32) -> u32 {
        self.exception_from(doc, 0).0
    }

    /// [`Self::exception`] among the exceptions from index `from` on (all before it are
    /// below `doc`), and where the search stopped, for the next doc's search.
    #[inline]
    fn exception_from(&self, doc: u32, from: usize) -> (u32, usize) {
        let e = self.exception_docs.len() / 4;
        let (mut lo, mut hi) = (from.min(e), e);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if u32_at(self.exception_docs, mid) < doc {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo < e && u32_at(self.exception_docs, lo) == doc {
            (u32_at(self.exception_lengths, lo), lo)
        } else {
            (u32::from(ESCAPE), lo)
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn round_trip(lengths: &[(u32, u32)], fields: &[Field]) -> (Vec<u8>, Lengths) {
        let mut d = DocLengths::for_fields(fields);
        for &(title, text) in lengths {
            d.push(|f| match f {
                Field::Flat => title + text,
                Field::Title => title,
                Field::Text => text,
            });
        }
        let body = d.body();
        let l = Lengths::open(Path::new("l"), &body, lengths.len(), fields).unwrap();
        (body, l)
    }

    /// A flat-only body of `lengths`, opened.
    fn flat(lengths: &[u32]) -> (Vec<u8>, Lengths) {
        let docs: Vec<(u32, u32)> = lengths.iter().map(|&l| (0, l)).collect();
        round_trip(&docs, &[Field::Flat])
    }

    /// Bytes before a flat-only body's table: n, f, name_len, "flat", code.
    const FLAT_HEADER: usize = 4 + 4 + 4 + 4 + 1;
    /// And the exception count after an escaped table's code.
    const ESCAPED_HEADER: usize = FLAT_HEADER + 4;

    /// Every way to read `lengths` back from its table gives `lengths`.
    fn assert_reads_back(body: &[u8], l: &Lengths, lengths: &[u32]) {
        let t = l.table(body, Field::Flat);
        let n = lengths.len() as u32;
        let one_by_one: Vec<u32> = (0..n).map(|d| t.get(d)).collect();
        assert_eq!(one_by_one, lengths);
        let docs: Vec<u32> = (0..n).collect();
        let mut many = vec![0; lengths.len()];
        t.get_many(&docs, &mut many);
        assert_eq!(many, lengths);
        // Out of order, and past the end (0).
        let docs: Vec<u32> = (0..n).rev().chain([n, u32::MAX]).collect();
        let mut many = vec![7; docs.len()];
        t.get_many(&docs, &mut many);
        let expected: Vec<u32> = lengths.iter().rev().copied().chain([0, 0]).collect();
        assert_eq!(many, expected);
        let sum: u64 = lengths.iter().map(|&l| u64::from(l)).sum();
        assert_eq!(t.total(), sum);
    }

    /// The encoding the writer chose for a flat-only body.
    fn code(body: &[u8]) -> u8 {
        body[FLAT_HEADER - 1]
    }

    #[test]
    fn each_width_reads_back_exactly() {
        for (max, width) in [(200u32, 1usize), (300, 2), (70_000, 4), (u32::MAX - 1, 4)] {
            let docs: Vec<(u32, u32)> = vec![(0, 0), (1, max - 1), (0, 7)];
            let (body, l) = round_trip(&docs, &[Field::Flat]);
            // n, f, name_len, "flat", width byte, then the table.
            assert_eq!(body.len(), 4 + 4 + 4 + 4 + 1 + 3 * width, "max {max}");
            let t = l.table(&body, Field::Flat);
            let got: Vec<u32> = (0..3).map(|d| t.get(d)).collect();
            assert_eq!(got, vec![0, max, 7]);
        }
    }

    /// A plain one-byte table holds 255 as itself: the escape exists only in code 0x81.
    #[test]
    fn a_one_byte_table_holds_255_without_exceptions() {
        let lengths = [255, 0, 254, 255];
        let (body, l) = flat(&lengths);
        assert_eq!(code(&body), 1);
        assert_eq!(body.len(), FLAT_HEADER + 4);
        assert_reads_back(&body, &l, &lengths);
    }

    #[test]
    fn an_escaped_table_reads_back_exactly_around_the_escape() {
        let mut lengths: Vec<u32> = (0..200).map(|i| i % 200).collect();
        for (doc, long) in [
            (3, 254),
            (10, 255),
            (11, 256),
            (50, u32::MAX - 1),
            (199, 70_000),
        ] {
            lengths[doc] = long;
        }
        let (body, l) = flat(&lengths);
        assert_eq!(code(&body), 0x81);
        // 4 exceptions: 255, 256, u32::MAX - 1 and 70,000 (254 fits its byte).
        assert_eq!(body.len(), ESCAPED_HEADER + 200 + 4 * 8);
        assert_reads_back(&body, &l, &lengths);
        // A block's worth with escapes scattered through it, as MaxScore reads it.
        let docs = [0, 3, 10, 11, 12, 50, 51, 198, 199];
        let mut out = [0; 9];
        l.table(&body, Field::Flat).get_many(&docs, &mut out);
        assert_eq!(
            out.map(|l| l as u64),
            docs.map(|d| u64::from(lengths[d as usize]))
        );
    }

    #[test]
    fn the_writer_takes_the_smallest_encoding() {
        // One long document among 100: 100 bytes + 4 + 8 against 200 as u16s.
        let mut few: Vec<u32> = vec![9; 100];
        few[42] = 300;
        let (body, l) = flat(&few);
        assert_eq!((code(&body), body.len()), (0x81, ESCAPED_HEADER + 100 + 8));
        assert_reads_back(&body, &l, &few);
        // Half of 10 long: 10 + 4 + 40 bytes escaped, 20 as u16s.
        let many: Vec<u32> = (0..10).map(|i| if i % 2 == 0 { 300 } else { 9 }).collect();
        let (body, l) = flat(&many);
        assert_eq!((code(&body), body.len()), (2, FLAT_HEADER + 20));
        assert_reads_back(&body, &l, &many);
        // Past u16, half long: 54 escaped, 40 as u32s.
        let wide: Vec<u32> = many.iter().map(|&l| l * 1000).collect();
        let (body, l) = flat(&wide);
        assert_eq!((code(&body), body.len()), (4, FLAT_HEADER + 40));
        assert_reads_back(&body, &l, &wide);
        // Past u16, one long in 100: escaped beats 400 bytes of u32s.
        few[42] = 1 << 20;
        let (body, l) = flat(&few);
        assert_eq!((code(&body), body.len()), (0x81, ESCAPED_HEADER + 100 + 8));
        assert_reads_back(&body, &l, &few);
        // A tie (n + 4 + 8 = 2n at n = 12) goes to the plain width.
        let tie: Vec<u32> = (0..12).map(|i| if i == 0 { 300 } else { 1 }).collect();
        let (body, _) = flat(&tie);
        assert_eq!((code(&body), body.len()), (2, FLAT_HEADER + 24));
    }

    #[test]
    fn only_indexed_fields_are_stored_and_required() {
        let docs = [(3, 10), (2, 400)];
        let (body, l) = round_trip(&docs, &Field::ALL);
        assert_eq!(l.table(&body, Field::Title).get(1), 2);
        assert_eq!(l.table(&body, Field::Text).get(1), 400);
        assert_eq!(l.table(&body, Field::Flat).get(1), 402);
        let (flat_only, _) = round_trip(&docs, &[Field::Flat]);
        let err = Lengths::open(Path::new("l"), &flat_only, 2, &Field::ALL).unwrap_err();
        assert!(err.to_string().contains("no length table"), "{err}");
    }

    #[test]
    fn fields_with_different_encodings_sit_side_by_side() {
        // Title in one byte, text escaped, flat escaped: tables of different sizes.
        let mut docs: Vec<(u32, u32)> = (0..100).map(|i| (i % 7, i % 90)).collect();
        docs[5].1 = 1000;
        docs[77].1 = 255;
        let (body, l) = round_trip(&docs, &Field::ALL);
        for (doc, &(title, text)) in docs.iter().enumerate() {
            let doc = doc as u32;
            assert_eq!(l.table(&body, Field::Title).get(doc), title);
            assert_eq!(l.table(&body, Field::Text).get(doc), text);
            assert_eq!(l.table(&body, Field::Flat).get(doc), title + text);
        }
    }

    #[test]
    fn damaged_bodies_are_errors_not_panics() {
        let (body, _) = round_trip(&[(1, 2), (3, 300)], &Field::ALL);
        for cut in 0..body.len() {
            assert!(Lengths::open(Path::new("l"), &body[..cut], 2, &Field::ALL).is_err());
        }
        let mut bad_width = body.clone();
        bad_width[4 + 4 + 4 + 4] = 3; // the flat table's width byte
        let err = Lengths::open(Path::new("l"), &bad_width, 2, &Field::ALL).unwrap_err();
        assert!(err.to_string().contains("wide"), "{err}");
    }

    /// An escaped flat table of 40 documents, 3 of them long (docs 2, 9, 15).
    fn escaped_body() -> Vec<u8> {
        let mut lengths = vec![5u32; 40];
        for (doc, long) in [(2, 255), (9, 1000), (15, 256)] {
            lengths[doc] = long;
        }
        let (body, _) = flat(&lengths);
        assert_eq!(code(&body), 0x81);
        body
    }

    /// Where an escaped body's parts start: the bytes, the docs, the lengths.
    const BYTES: usize = ESCAPED_HEADER;
    const DOCS: usize = BYTES + 40;
    const LONGS: usize = DOCS + 3 * 4;

    fn put(body: &mut [u8], at: usize, value: u32) {
        body[at..at + 4].copy_from_slice(&value.to_le_bytes());
    }

    fn open_err(body: &[u8]) -> String {
        match Lengths::open(Path::new("seg-1.lens"), body, 40, &[Field::Flat]) {
            Ok(_) => panic!("a damaged body opened"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn damaged_escaped_tables_are_errors_not_panics() {
        let body = escaped_body();
        assert!(Lengths::open(Path::new("l"), &body, 40, &[Field::Flat]).is_ok());
        for cut in 0..body.len() {
            assert!(Lengths::open(Path::new("l"), &body[..cut], 40, &[Field::Flat]).is_err());
        }
        let damaged = |change: &dyn Fn(&mut Vec<u8>)| {
            let mut b = body.clone();
            change(&mut b);
            open_err(&b)
        };
        type Damage<'a> = (&'a str, &'a dyn Fn(&mut Vec<u8>), &'a str);
        let cases: [Damage; 9] = [
            (
                "more exceptions than docs",
                &|b| put(b, FLAT_HEADER, 41),
                "41 exceptions among 40",
            ),
            (
                "a count past the body",
                &|b| put(b, FLAT_HEADER, u32::MAX),
                "exceptions among",
            ),
            (
                "a count that fits the docs but not the body",
                &|b| put(b, FLAT_HEADER, 30),
                "truncated: length exception docs needs 120 bytes",
            ),
            (
                "one fewer exception",
                &|b| {
                    put(b, FLAT_HEADER, 2);
                    b.drain(LONGS - 4..LONGS);
                    b.truncate(b.len() - 4);
                },
                "3 bytes are 255 but 2 exceptions",
            ),
            (
                "a doc out of range",
                &|b| put(b, DOCS + 8, 40),
                "doc 40 of 40 documents",
            ),
            (
                "docs out of order",
                &|b| {
                    put(b, DOCS, 9);
                    put(b, DOCS + 4, 2);
                },
                "exception 1 is doc 2, not after doc 9",
            ),
            (
                "a 255 byte without exception",
                &|b| b[BYTES + 4] = 255,
                "4 bytes are 255 but 3",
            ),
            (
                "an exception whose byte is not 255",
                &|b| b[BYTES + 9] = 254,
                "whose byte is 254",
            ),
            (
                "an exception length its byte could hold",
                &|b| put(b, LONGS + 4, 254),
                "holds 254",
            ),
        ];
        for (what, change, says) in cases {
            let err = damaged(change);
            assert!(
                err.contains(says) && err.contains("seg-1.lens"),
                "{what}: {err}"
            );
        }
    }

    proptest! {
        /// Lengths mostly short with some long: every encoding turns up, and each reads
        /// back exactly.
        #[test]
        fn any_lengths_read_back_exactly(
            lengths in prop::collection::vec(
                prop_oneof![
                    8 => 0u32..255,
                    1 => 250u32..260,
                    1 => 255u32..70_000,
                    1 => Just(u32::MAX - 1),
                ],
                0..300,
            )
        ) {
            let (body, l) = flat(&lengths);
            assert_reads_back(&body, &l, &lengths);
        }
    }
}
