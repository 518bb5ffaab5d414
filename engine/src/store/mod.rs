//! Stored fields: each document's external id and title, read only for the final top k.
//!
//! Body layout (little-endian): `n u32 | (n+1) × u64 record end offsets (first is 0) |
//! records`, each record `id_len u32 | id bytes (UTF-8) | title bytes (UTF-8)`.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::segment::bytes::{ByteReader, u64_at};

#[derive(Default)]
pub(crate) struct StoreWriter {
    offsets: Vec<u64>,
    data: Vec<u8>,
}

impl StoreWriter {
    pub(crate) fn push(&mut self, id: &str, title: &str) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.data
            .extend_from_slice(&(id.len() as u32).to_le_bytes());
        self.data.extend_from_slice(id.as_bytes());
        self.data.extend_from_slice(title.as_bytes());
        self.offsets.push(self.data.len() as u64);
    }

    pub(crate) fn into_body(mut self) -> Vec<u8> {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        let n = (self.offsets.len() - 1) as u32;
        let mut out = Vec::with_capacity(4 + self.offsets.len() * 8 + self.data.len());
        out.extend_from_slice(&n.to_le_bytes());
        for off in &self.offsets {
            out.extend_from_slice(&off.to_le_bytes());
        }
        out.extend_from_slice(&self.data);
        out
    }
}

/// A stored document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredDoc<'a> {
    pub id: &'a str,
    pub title: &'a str,
}

/// Section offsets into a stored-fields body; records are validated when read.
#[derive(Debug, Clone)]
pub(crate) struct StoreReader {
    path: PathBuf,
    len: usize,
    offsets: (usize, usize),
    data: (usize, usize),
}

impl StoreReader {
    pub(crate) fn open(path: &Path, body: &[u8]) -> Result<Self> {
        let mut r = ByteReader::new(path, body);
        let len = r.u32("stored document count")? as usize;
        let offsets_at = r.position();
        r.table(len + 1, 8, "stored record offsets")?;
        let data_at = r.position();
        Ok(StoreReader {
            path: path.to_path_buf(),
            len,
            offsets: (offsets_at, data_at),
            data: (data_at, body.len()),
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn get<'a>(&self, body: &'a [u8], doc: u32) -> Result<StoredDoc<'a>> {
        let doc = doc as usize;
        let corrupt = |detail: String| Error::Corrupt {
            path: self.path.clone(),
            what: "stored record",
            detail,
        };
        if doc >= self.len {
            return Err(corrupt(format!("document {doc} of {}", self.len)));
        }
        let offsets = &body[self.offsets.0..self.offsets.1];
        let data = &body[self.data.0..self.data.1];
        let (start, end) = (u64_at(offsets, doc), u64_at(offsets, doc + 1));
        if start > end || end > data.len() as u64 {
            return Err(corrupt(format!(
                "document {doc} spans {start}..{end} of {}",
                data.len()
            )));
        }
        let record = &data[start as usize..end as usize];
        let mut r = ByteReader::new(&self.path, record);
        let id_len = r.u32("stored id length")? as usize;
        let id = r.take(id_len, "stored id")?;
        let title = r.rest();
        let text = |bytes: &'a [u8], field: &str| {
            std::str::from_utf8(bytes).map_err(|e| corrupt(format!("document {doc} {field}: {e}")))
        };
        Ok(StoredDoc {
            id: text(id, "id")?,
            title: text(title, "title")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_out_of_range() {
        let mut w = StoreWriter::default();
        w.push("d1", "First title");
        w.push("", "");
        w.push("ünï", "Títle");
        let body = w.into_body();
        let r = StoreReader::open(Path::new("s"), &body).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(
            r.get(&body, 0).unwrap(),
            StoredDoc {
                id: "d1",
                title: "First title"
            }
        );
        assert_eq!(r.get(&body, 1).unwrap(), StoredDoc { id: "", title: "" });
        assert_eq!(
            r.get(&body, 2).unwrap(),
            StoredDoc {
                id: "ünï",
                title: "Títle"
            }
        );
        assert!(r.get(&body, 3).is_err());
    }

    #[test]
    fn damaged_records_are_errors_not_panics() {
        let mut w = StoreWriter::default();
        w.push("doc-1", "a title");
        let body = w.into_body();
        for cut in 0..body.len() {
            if let Ok(r) = StoreReader::open(Path::new("s"), &body[..cut]) {
                assert!(r.get(&body[..cut], 0).is_err(), "cut at {cut}");
            }
        }
        let mut bad_len = body.clone();
        bad_len[4 + 16] = 200; // id_len far past the record
        let r = StoreReader::open(Path::new("s"), &bad_len).unwrap();
        assert!(matches!(r.get(&bad_len, 0), Err(Error::Truncated { .. })));
    }
}
