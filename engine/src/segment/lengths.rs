//! Per-document token counts of each indexed field, the `dl` of BM25.
//!
//! Body layout (little-endian): `n u32 | f u32 | f × (name_len u32, name bytes, width u8)
//! | f tables`, table i holding `n` lengths of `width_i` bytes each (1, 2 or 4: the
//! narrowest that holds the table's largest length). A segment stores a table for each
//! field it indexes and no other: lengths are read only to score postings.

use std::path::Path;

use crate::error::{Error, Result};
use crate::field::{Field, FieldCounts};
use crate::segment::bytes::ByteReader;

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
        let mut out = Vec::with_capacity(8 + 16 * present.len() + 4 * n * present.len());
        out.extend_from_slice(&(n as u32).to_le_bytes());
        out.extend_from_slice(&(present.len() as u32).to_le_bytes());
        let widths: Vec<usize> = present
            .iter()
            .map(|(_, t)| width_for(t.iter().copied().max().unwrap_or(0)))
            .collect();
        for ((f, _), &w) in present.iter().zip(&widths) {
            let name = f.name();
            out.extend_from_slice(&(name.len() as u32).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.push(w as u8);
        }
        for ((_, t), &w) in present.iter().zip(&widths) {
            for &l in t.iter() {
                out.extend_from_slice(&l.to_le_bytes()[..w]);
            }
        }
        out
    }
}

/// The narrowest of 1, 2 or 4 bytes that holds `max`.
fn width_for(max: u32) -> usize {
    match max {
        0..=0xFF => 1,
        0x100..=0xFFFF => 2,
        _ => 4,
    }
}

/// Where each field's length table sits in a validated body.
#[derive(Debug, Clone)]
pub(crate) struct Lengths {
    len: usize,
    /// Byte offset and width of each field's table, by [`Field::index`].
    tables: [Option<(usize, u8)>; 3],
}

impl Lengths {
    /// Validates a body holding `expected_docs` lengths for each of `fields` (tables of
    /// other fields are tolerated and ignored).
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
            let width = r.take(1, "length width")?[0];
            if !matches!(width, 1 | 2 | 4) {
                return Err(corrupt(format!(
                    "field {}: lengths {width} bytes wide (1, 2 or 4)",
                    String::from_utf8_lossy(name)
                )));
            }
            names.push((name, width));
        }
        let mut tables = [None; 3];
        for (name, width) in names {
            let at = r.position();
            r.table(len, width as usize, "length table")?;
            if let Some(f) = Field::ALL.into_iter().find(|f| f.name().as_bytes() == name) {
                tables[f.index()] = Some((at, width));
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
        let (at, width) = self.tables[field.index()].expect("checked at open");
        LengthTable {
            bytes: &body[at..at + width as usize * self.len],
            width,
        }
    }
}

/// One field's document lengths, read in place.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LengthTable<'a> {
    bytes: &'a [u8],
    width: u8,
}

impl LengthTable<'_> {
    /// The sum of every document's length: the field's token count.
    pub(crate) fn total(&self) -> u64 {
        let w = self.width as usize;
        self.bytes
            .chunks_exact(w)
            .map(|b| {
                let mut le = [0u8; 4];
                le[..w].copy_from_slice(b);
                u64::from(u32::from_le_bytes(le))
            })
            .sum()
    }

    /// The lengths of `docs` into `out` (as long as `docs`): [`Self::get`] with the
    /// width chosen once for the lot, for scoring a block of postings at once.
    #[inline]
    pub(crate) fn get_many(&self, docs: &[u32], out: &mut [u32]) {
        let out = &mut out[..docs.len()];
        match self.width {
            1 => {
                for (o, &d) in out.iter_mut().zip(docs) {
                    *o = self.bytes.get(d as usize).map_or(0, |&b| u32::from(b));
                }
            }
            2 => {
                for (o, &d) in out.iter_mut().zip(docs) {
                    let i = 2 * d as usize;
                    *o = self
                        .bytes
                        .get(i..i + 2)
                        .map_or(0, |b| u32::from(u16::from_le_bytes([b[0], b[1]])));
                }
            }
            _ => {
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
        match self.width {
            1 => self.bytes.get(i).map_or(0, |&b| u32::from(b)),
            2 => self
                .bytes
                .get(2 * i..2 * i + 2)
                .map_or(0, |b| u32::from(u16::from_le_bytes([b[0], b[1]]))),
            _ => self
                .bytes
                .get(4 * i..4 * i + 4)
                .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        }
    }
}

#[cfg(test)]
mod tests {
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
}
