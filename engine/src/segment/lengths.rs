//! Per-document token counts for each field, the `dl` of BM25.
//!
//! Body layout (little-endian): `n u32 | f u32 | f × (name_len u32, name bytes) |
//! f × n × u32`. Version 1 writes the fields `flat`, `title`, `text` (flat = title + text),
//! so per-field scoring can be added without a format change.

use std::path::Path;

use crate::error::{Error, Result};
use crate::field::Field;
use crate::segment::bytes::{ByteReader, u32_at};

pub(crate) const FIELDS: [&str; 3] = ["flat", "title", "text"];

/// A new segment's document lengths per field, as the builder and the merger collect them.
pub(crate) struct DocLengths {
    pub title: Vec<u32>,
    pub text: Vec<u32>,
    pub flat: Vec<u32>,
}

impl DocLengths {
    /// From title and text lengths; flat is their sum.
    pub(crate) fn new(title: Vec<u32>, text: Vec<u32>) -> Self {
        let flat = title.iter().zip(&text).map(|(a, b)| a + b).collect();
        DocLengths { title, text, flat }
    }

    pub(crate) fn of(&self, field: Field) -> &[u32] {
        match field {
            Field::Flat => &self.flat,
            Field::Title => &self.title,
            Field::Text => &self.text,
        }
    }

    /// Each field's total tokens (for the manifest's averages).
    pub(crate) fn tokens(&self) -> crate::field::FieldCounts {
        let mut tokens = crate::field::FieldCounts::default();
        for f in Field::ALL {
            tokens.set(f, self.of(f).iter().map(|&l| l as u64).sum());
        }
        tokens
    }

    /// The lengths file's body.
    pub(crate) fn body(&self) -> Vec<u8> {
        write_body(&self.title, &self.text)
    }
}

fn write_body(title: &[u32], text: &[u32]) -> Vec<u8> {
    let n = title.len();
    let mut out = Vec::with_capacity(8 + 32 + 12 * n);
    out.extend_from_slice(&(n as u32).to_le_bytes());
    out.extend_from_slice(&(FIELDS.len() as u32).to_le_bytes());
    for name in FIELDS {
        out.extend_from_slice(&(name.len() as u32).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
    }
    for (t, x) in title.iter().zip(text) {
        out.extend_from_slice(&(t + x).to_le_bytes());
    }
    for t in title {
        out.extend_from_slice(&t.to_le_bytes());
    }
    for x in text {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

/// Where each field's length table sits in a validated body.
#[derive(Debug, Clone)]
pub(crate) struct Lengths {
    len: usize,
    /// Byte offset of each field's table, by [`Field::index`].
    tables: [Option<usize>; 3],
}

impl Lengths {
    pub(crate) fn open(path: &Path, body: &[u8], expected_docs: usize) -> Result<Self> {
        let mut r = ByteReader::new(path, body);
        let len = r.u32("document count")? as usize;
        if len != expected_docs {
            return Err(Error::Corrupt {
                path: path.to_path_buf(),
                what: "document lengths",
                detail: format!("holds {len} documents, manifest says {expected_docs}"),
            });
        }
        let fields = r.u32("field count")? as usize;
        if fields > 64 {
            return Err(Error::Corrupt {
                path: path.to_path_buf(),
                what: "document lengths",
                detail: format!("{fields} fields"),
            });
        }
        let mut names = Vec::with_capacity(fields);
        for _ in 0..fields {
            let name_len = r.u32("field name length")? as usize;
            names.push(r.take(name_len, "field name")?);
        }
        let tables_at = r.position();
        r.table(len, 4 * fields, "length tables")?;
        let mut tables = [None; 3];
        for field in Field::ALL {
            tables[field.index()] = names
                .iter()
                .position(|n| *n == field.name().as_bytes())
                .map(|i| tables_at + i * 4 * len);
        }
        if tables.iter().any(Option::is_none) {
            return Err(Error::Corrupt {
                path: path.to_path_buf(),
                what: "document lengths",
                detail: "the flat, title and text tables are not all present".into(),
            });
        }
        Ok(Lengths { len, tables })
    }

    /// The length table of `field` (`len` little-endian u32s) inside `body`.
    pub(crate) fn table<'a>(&self, body: &'a [u8], field: Field) -> &'a [u8] {
        let at = self.tables[field.index()].expect("checked at open");
        &body[at..at + 4 * self.len]
    }
}

/// Length of document `doc` from a table returned by [`Lengths::flat`].
#[inline]
pub(crate) fn length_of(table: &[u8], doc: u32) -> u32 {
    u32_at(table, doc as usize)
}
