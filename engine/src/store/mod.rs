//! Stored fields: each document's external id and title, read only for the final top k
//! (and scanned whole by merges, delete resolution and `check`).
//!
//! Records are grouped into blocks of about [`BLOCK_TARGET`] bytes, each compressed
//! with LZ4 (the block format of `lz4_flex`). Fetching one hit decompresses one block:
//! small blocks keep that cheap, at some cost in ratio (docs/DECISIONS.md, "Stored
//! fields in 2 KiB LZ4 blocks"). Block 0 is larger ([`DICTIONARY_TARGET`]) and is the
//! preset dictionary of every later block: its records (their last [`WINDOW`] bytes) are
//! what a later block's matches may point back into, so a 2 KiB block compresses about
//! as well as a 32 KiB one. A reader decompresses block 0 once and keeps it, so a fetch
//! still decompresses one 2 KiB block (docs/DECISIONS.md, "A preset dictionary for the
//! stored fields").
//!
//! Body layout (little-endian): `n u32 | n_blocks u32 | n_blocks × (first_doc u32,
//! raw_len u32, end u64) | compressed blocks`. Block `b` is bytes `[end(b-1), end(b))`
//! of the compressed area (`end(-1) = 0`) and decompresses to `raw_len` bytes holding
//! the records of documents `first_doc(b) .. first_doc(b+1)` (the last block's run ends
//! at `n`), each `id_len varint | id (UTF-8) | title_len varint | title (UTF-8)`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::segment::bytes::{ByteReader, u32_at, u64_at};
use crate::segment::checked::Integrity;
use crate::varint;

/// A block is closed once its records reach this many bytes (before compression).
pub(crate) const BLOCK_TARGET: usize = 2048;

/// Block 0, the dictionary, is closed once its records reach this many bytes. Larger
/// compresses better (docs/DECISIONS.md) and costs each open segment that much memory
/// once a fetch or scan has read it.
pub(crate) const DICTIONARY_TARGET: usize = 32 * 1024;

/// LZ4 matches reach at most 64 KiB back, so only the last 64 KiB of block 0 can serve
/// as the dictionary; writer and reader both cut it there.
const WINDOW: usize = 64 * 1024;

/// The dictionary part of block 0's records.
fn dictionary_of(block0: &[u8]) -> &[u8] {
    &block0[block0.len().saturating_sub(WINDOW)..]
}

/// Bytes of one block table entry.
const ENTRY_LEN: usize = 16;

/// LZ4 cannot expand its input more than 255-fold, so a larger `raw_len` is corrupt (and
/// is never allocated).
const MAX_EXPANSION: u64 = 255;

pub(crate) struct StoreWriter {
    /// Close a block once its records reach this many bytes: [`BLOCK_TARGET`], or
    /// another size to measure the trade (`examples/store_blocks`).
    block_target: usize,
    docs: u32,
    /// The open block's records, and the document it starts at.
    raw: Vec<u8>,
    raw_first: u32,
    table: Vec<u8>,
    /// Compressed blocks not yet handed to [`StoreWriter::drain_data`].
    data: Vec<u8>,
    /// Compressed bytes handed out already: the table's offsets count them.
    drained: u64,
    /// Block 0's records once it is closed: every later block is compressed against them.
    dictionary: Option<Vec<u8>>,
}

impl Default for StoreWriter {
    fn default() -> Self {
        StoreWriter::with_block_target(BLOCK_TARGET)
    }
}

impl StoreWriter {
    pub(crate) fn with_block_target(block_target: usize) -> Self {
        StoreWriter {
            block_target,
            docs: 0,
            raw: Vec::new(),
            raw_first: 0,
            table: Vec::new(),
            data: Vec::new(),
            drained: 0,
            dictionary: None,
        }
    }

    pub(crate) fn push(&mut self, id: &str, title: &str) {
        for field in [id, title] {
            varint::write(&mut self.raw, field.len() as u32);
            self.raw.extend_from_slice(field.as_bytes());
        }
        self.docs += 1;
        let target = if self.dictionary.is_none() {
            DICTIONARY_TARGET
        } else {
            self.block_target
        };
        if self.raw.len() >= target {
            self.close_block();
        }
    }

    fn close_block(&mut self) {
        if self.docs == self.raw_first {
            return;
        }
        match &self.dictionary {
            None => {
                self.data
                    .extend_from_slice(&lz4_flex::block::compress(&self.raw));
                self.dictionary = Some(self.raw.clone());
            }
            Some(block0) => self
                .data
                .extend_from_slice(&lz4_flex::block::compress_with_dict(
                    &self.raw,
                    dictionary_of(block0),
                )),
        }
        self.table.extend_from_slice(&self.raw_first.to_le_bytes());
        self.table
            .extend_from_slice(&(self.raw.len() as u32).to_le_bytes());
        self.table
            .extend_from_slice(&(self.drained + self.data.len() as u64).to_le_bytes());
        self.raw.clear();
        self.raw_first = self.docs;
    }

    pub(crate) fn into_body(self) -> Vec<u8> {
        assert_eq!(
            self.drained, 0,
            "a drained store is finished with into_parts"
        );
        let (mut out, data) = self.into_parts();
        out.extend_from_slice(&data);
        out
    }

    /// Compressed bytes waiting to be drained.
    pub(crate) fn pending_data(&self) -> usize {
        self.data.len()
    }

    /// Hands the compressed blocks closed so far to `sink` (which writes them where the
    /// body's compressed area will be), so that a large store is not held in memory.
    pub(crate) fn drain_data<E>(
        &mut self,
        sink: impl FnOnce(&[u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        sink(&self.data)?;
        self.drained += self.data.len() as u64;
        self.data.clear();
        Ok(())
    }

    /// Closes the last block and returns the body's head (counts and block table) and
    /// the compressed bytes not drained yet. The body is the head, then every drained
    /// byte in order, then the rest.
    pub(crate) fn into_parts(mut self) -> (Vec<u8>, Vec<u8>) {
        self.close_block();
        let blocks = (self.table.len() / ENTRY_LEN) as u32;
        let mut head = Vec::with_capacity(8 + self.table.len());
        head.extend_from_slice(&self.docs.to_le_bytes());
        head.extend_from_slice(&blocks.to_le_bytes());
        head.extend_from_slice(&self.table);
        (head, self.data)
    }
}

/// A stored document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredDoc {
    pub id: String,
    pub title: String,
}

/// The sections of a stored-fields body. Opening reads the header and the last table
/// entry only; a block's table entry is validated, and its bytes checked, when a fetch or
/// a scan reaches it.
#[derive(Debug, Clone)]
pub(crate) struct StoreReader {
    path: PathBuf,
    len: u32,
    blocks: usize,
    /// Byte ranges of the block table and the compressed area in the body.
    table: (usize, usize),
    data: (usize, usize),
    /// Block 0's records, decompressed by the first fetch or scan that needs them: they
    /// are block 0's documents and every later block's dictionary.
    block0: OnceLock<Box<[u8]>>,
}

/// One block table entry.
#[derive(Debug, Clone, Copy)]
struct Block {
    first_doc: u32,
    /// One past its last document.
    end_doc: u32,
    raw_len: usize,
    start: usize,
    end: usize,
}

impl StoreReader {
    /// Reads the header (asking `integrity` to check it) and checks that the table fits
    /// and that the last block ends where the compressed area does. O(1): the table's
    /// entries are validated one by one as fetches and scans use them ([`Self::block`]).
    pub(crate) fn open(path: &Path, body: &[u8], integrity: &dyn Integrity) -> Result<Self> {
        integrity.check(0..8)?;
        let mut r = ByteReader::new(path, body);
        let len = r.u32("stored document count")?;
        let blocks = r.u32("stored block count")? as usize;
        let table_at = r.position();
        r.table(blocks, ENTRY_LEN, "stored block table")?;
        let data_at = r.position();
        let reader = StoreReader {
            path: path.to_path_buf(),
            len,
            blocks,
            table: (table_at, data_at),
            data: (data_at, body.len()),
            block0: OnceLock::new(),
        };
        if (len == 0) != (blocks == 0) {
            return Err(reader.corrupt(format!("{len} documents in {blocks} blocks")));
        }
        let data_len = body.len() - data_at;
        let used = match blocks.checked_sub(1) {
            None => 0,
            Some(last) => {
                let entry = table_at + last * ENTRY_LEN;
                integrity.check(entry..entry + ENTRY_LEN)?;
                u64_at(&body[entry..entry + ENTRY_LEN], 1)
            }
        };
        if used != data_len as u64 {
            return Err(reader.corrupt(format!(
                "blocks end at {used} of {data_len} compressed bytes"
            )));
        }
        Ok(reader)
    }

    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    /// Blocks, and their records' bytes before compression (of a body built in memory:
    /// the table is read unchecked, and a damaged entry counts as 0).
    pub(crate) fn uncompressed(&self, body: &[u8]) -> (usize, usize) {
        let raw = (0..self.blocks)
            .map(|b| self.block(body, b).map_or(0, |block| block.raw_len))
            .sum();
        (self.blocks, raw)
    }

    fn corrupt(&self, detail: String) -> Error {
        Error::Corrupt {
            path: self.path.clone(),
            what: "stored fields",
            detail,
        }
    }

    /// Entry `b` of the table (`b < blocks`; the table checked by the caller), validated on
    /// its own: block 0 starts at document 0, a block holds at least one document, its
    /// compressed bytes lie inside the area in order, and its `raw_len` is one LZ4 could
    /// produce from them. A block's start is the previous block's end and its documents
    /// end where the next block's begin, so blocks that each pass are contiguous and in
    /// order, from document 0 to `n` and over the whole area (`open` checked the last end).
    fn block(&self, body: &[u8], b: usize) -> Result<Block> {
        let table = &body[self.table.0..self.table.1];
        let first_doc = u32_at(table, 4 * b);
        let end_doc = if b + 1 < self.blocks {
            u32_at(table, 4 * (b + 1))
        } else {
            self.len
        };
        let block = Block {
            first_doc,
            end_doc,
            raw_len: u32_at(table, 4 * b + 1) as usize,
            start: if b == 0 {
                0
            } else {
                u64_at(table, 2 * b - 1) as usize
            },
            end: u64_at(table, 2 * b + 1) as usize,
        };
        if (b == 0 && block.first_doc != 0) || block.end_doc <= block.first_doc {
            return Err(self.corrupt(format!(
                "block {b} holds documents {}..{}",
                block.first_doc, block.end_doc
            )));
        }
        let data_len = self.data.1 - self.data.0;
        if block.start > block.end || block.end > data_len {
            return Err(self.corrupt(format!(
                "block {b} spans {}..{} of {data_len} bytes",
                block.start, block.end
            )));
        }
        let limit = MAX_EXPANSION * (block.end - block.start) as u64 + 16;
        if block.raw_len as u64 > limit {
            return Err(self.corrupt(format!(
                "block {b} claims {} bytes from {} compressed",
                block.raw_len,
                block.end - block.start
            )));
        }
        Ok(block)
    }

    /// Block 0's records (decompressed on first use, then kept) and its table entry.
    fn block0(&self, body: &[u8], integrity: &dyn Integrity) -> Result<(&[u8], Block)> {
        let block = self.block(body, 0)?;
        if let Some(raw) = self.block0.get() {
            return Ok((raw, block));
        }
        let mut raw = Vec::new();
        self.decompress_with(body, 0, &[], integrity, &mut raw)?;
        // Another thread may have set it meanwhile, from the same bytes.
        Ok((self.block0.get_or_init(|| raw.into_boxed_slice()), block))
    }

    /// Decompresses block `b > 0` into `out` (replacing its contents), once `integrity`
    /// has checked its bytes (and block 0's, its dictionary).
    fn decompress(
        &self,
        body: &[u8],
        b: usize,
        integrity: &dyn Integrity,
        out: &mut Vec<u8>,
    ) -> Result<Block> {
        let (block0, _) = self.block0(body, integrity)?;
        self.decompress_with(body, b, dictionary_of(block0), integrity, out)
    }

    /// Decompresses block `b` against `dictionary` into `out`.
    fn decompress_with(
        &self,
        body: &[u8],
        b: usize,
        dictionary: &[u8],
        integrity: &dyn Integrity,
        out: &mut Vec<u8>,
    ) -> Result<Block> {
        let block = self.block(body, b)?;
        let at = self.data.0 + block.start..self.data.0 + block.end;
        integrity.check(at.clone())?;
        let compressed = &body[at];
        out.clear();
        out.resize(block.raw_len, 0);
        match lz4_flex::block::decompress_into_with_dict(compressed, out, dictionary) {
            Ok(n) if n == block.raw_len => Ok(block),
            Ok(n) => Err(self.corrupt(format!(
                "block {b} decompresses to {n} bytes, table says {}",
                block.raw_len
            ))),
            Err(e) => Err(self.corrupt(format!("block {b}: {e}"))),
        }
    }

    /// Stored document `doc`: decompresses the one block that holds it.
    pub(crate) fn get(
        &self,
        body: &[u8],
        doc: u32,
        integrity: &dyn Integrity,
    ) -> Result<StoredDoc> {
        if doc >= self.len {
            return Err(self.corrupt(format!("no document {doc} of {}", self.len)));
        }
        // The last block whose first document is at or before `doc` (block 0 starts at 0).
        // The search may probe any entry: the whole table is checked (once per process;
        // a few loads after that).
        integrity.check(self.table.0..self.table.1)?;
        let table = &body[self.table.0..self.table.1];
        let b = table
            .as_chunks::<ENTRY_LEN>()
            .0
            .partition_point(|e| u32::from_le_bytes([e[0], e[1], e[2], e[3]]) <= doc)
            .saturating_sub(1);
        let mut own = Vec::new();
        let (raw, block) = if b == 0 {
            self.block0(body, integrity)?
        } else {
            let block = self.decompress(body, b, integrity, &mut own)?;
            (&own[..], block)
        };
        // Entries are validated one at a time, so a crafted table need not be sorted:
        // the search may then land on a block that does not hold `doc`.
        if !(block.first_doc..block.end_doc).contains(&doc) {
            return Err(self.corrupt(format!(
                "block {b} holds documents {}..{}, not {doc}: the table is out of order",
                block.first_doc, block.end_doc
            )));
        }
        // Pass over the records before `doc` (id and title each) without checking their
        // text: a fetch reads one record of its block; every record is checked by a scan.
        // Counted in u64: a crafted block may start more than 2^31 documents earlier (the
        // loop then ends at the first field past the block's bytes).
        let mut pos = 0;
        for _ in 0..2 * u64::from(doc - block.first_doc) {
            next_field(raw, &mut pos).ok_or_else(|| {
                self.corrupt(format!(
                    "block {b}: the records before document {doc} run past the block"
                ))
            })?;
        }
        let (id, title) = Records::new(self, raw, b, doc, pos).next_record()?;
        Ok(StoredDoc {
            id: id.to_string(),
            title: title.to_string(),
        })
    }

    /// Calls `f(doc, id, title)` for every document in order, decompressing each block
    /// once; a damaged block is an error naming it.
    pub(crate) fn scan(
        &self,
        body: &[u8],
        integrity: &dyn Integrity,
        mut f: impl FnMut(u32, &str, &str) -> Result<()>,
    ) -> Result<()> {
        integrity.check(self.table.0..self.table.1)?;
        let mut own = Vec::new();
        for b in 0..self.blocks {
            let (raw, block) = if b == 0 {
                self.block0(body, integrity)?
            } else {
                let block = self.decompress(body, b, integrity, &mut own)?;
                (&own[..], block)
            };
            let mut records = Records::new(self, raw, b, block.first_doc, 0);
            for doc in block.first_doc..block.end_doc {
                let (id, title) = records.next_record()?;
                f(doc, id, title)?;
            }
            if records.pos != raw.len() {
                return Err(self.corrupt(format!(
                    "block {b}: {} bytes after its last record",
                    raw.len() - records.pos
                )));
            }
        }
        Ok(())
    }
}

/// The length-prefixed field at `*pos` of a decompressed block, moving `*pos` past it;
/// `None` if its length is not a varint or it runs past the block.
fn next_field<'a>(raw: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    let len = varint::read(raw, pos)? as usize;
    let field = raw.get(*pos..)?.get(..len)?;
    *pos += len;
    Some(field)
}

/// Walks the records of one decompressed block.
struct Records<'r, 'a> {
    store: &'r StoreReader,
    raw: &'a [u8],
    pos: usize,
    block: usize,
    doc: u32,
}

impl<'r, 'a> Records<'r, 'a> {
    /// The records of block `block` from byte `pos`, where document `doc`'s begins.
    fn new(store: &'r StoreReader, raw: &'a [u8], block: usize, doc: u32, pos: usize) -> Self {
        Records {
            store,
            raw,
            pos,
            block,
            doc,
        }
    }

    fn next_record(&mut self) -> Result<(&'a str, &'a str)> {
        let id = self.field("id")?;
        let title = self.field("title")?;
        self.doc += 1;
        Ok((id, title))
    }

    fn field(&mut self, name: &str) -> Result<&'a str> {
        let (b, doc) = (self.block, self.doc);
        let bytes = next_field(self.raw, &mut self.pos).ok_or_else(|| {
            self.store.corrupt(format!(
                "block {b}, document {doc}: the {name}'s length is damaged or runs past the block"
            ))
        })?;
        std::str::from_utf8(bytes).map_err(|e| {
            self.store
                .corrupt(format!("block {b}, document {doc}: {name}: {e}"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::checked::Trusted;

    fn docs(n: usize) -> Vec<(String, String)> {
        (0..n)
            .map(|i| {
                (
                    format!("doc-{i}"),
                    format!("title {i} {}", "wörds ".repeat(i % 50)),
                )
            })
            .collect()
    }

    fn build(docs: &[(String, String)]) -> Vec<u8> {
        let mut w = StoreWriter::default();
        for (id, title) in docs {
            w.push(id, title);
        }
        w.into_body()
    }

    #[test]
    fn a_store_drained_as_it_grows_is_the_store_built_in_memory() {
        let docs = docs(600);
        let whole = build(&docs);
        for every in [1, 5, 64] {
            let mut w = StoreWriter::default();
            let mut drained = Vec::new();
            for (i, (id, title)) in docs.iter().enumerate() {
                w.push(id, title);
                if i % every == 0 {
                    w.drain_data(|bytes| {
                        drained.extend_from_slice(bytes);
                        Ok::<(), ()>(())
                    })
                    .unwrap();
                    assert_eq!(w.pending_data(), 0);
                }
            }
            let (mut body, rest) = w.into_parts();
            body.extend_from_slice(&drained);
            body.extend_from_slice(&rest);
            assert!(body == whole, "drained every {every} documents");
        }
    }

    #[test]
    fn round_trip_across_blocks_by_get_and_scan() {
        let docs = docs(600);
        let body = build(&docs);
        let r = StoreReader::open(Path::new("s"), &body, &Trusted).unwrap();
        assert_eq!(r.len(), 600);
        assert!(r.blocks > 3, "600 records fill several blocks");
        for (d, (id, title)) in docs.iter().enumerate() {
            let got = r.get(&body, d as u32, &Trusted).unwrap();
            assert_eq!((&got.id, &got.title), (id, title), "document {d}");
        }
        let mut seen = Vec::new();
        r.scan(&body, &Trusted, |d, id, title| {
            seen.push((d, id.to_string(), title.to_string()));
            Ok(())
        })
        .unwrap();
        let want: Vec<_> = docs
            .iter()
            .enumerate()
            .map(|(d, (i, t))| (d as u32, i.clone(), t.clone()))
            .collect();
        assert_eq!(seen, want);
        assert!(r.get(&body, 600, &Trusted).is_err());
    }

    #[test]
    fn empty_strings_and_empty_stores() {
        let body = build(&[
            (String::new(), String::new()),
            ("ünï".into(), "Títle".into()),
        ]);
        let r = StoreReader::open(Path::new("s"), &body, &Trusted).unwrap();
        assert_eq!(r.get(&body, 0, &Trusted).unwrap().id, "");
        assert_eq!(r.get(&body, 1, &Trusted).unwrap().title, "Títle");
        let empty = build(&[]);
        let r = StoreReader::open(Path::new("s"), &empty, &Trusted).unwrap();
        assert_eq!(r.len(), 0);
        assert!(r.get(&empty, 0, &Trusted).is_err());
        r.scan(&empty, &Trusted, |_, _, _| panic!("no documents"))
            .unwrap();
    }

    #[test]
    fn compresses_repetitive_titles() {
        let docs = docs(2000);
        let raw: usize = docs.iter().map(|(i, t)| i.len() + t.len() + 2).sum();
        assert!(build(&docs).len() < raw / 2);
    }

    #[test]
    fn damaged_stores_are_errors_not_panics() {
        let body = build(&docs(300));
        for cut in 0..body.len() {
            if let Ok(r) = StoreReader::open(Path::new("s"), &body[..cut], &Trusted) {
                let whole = r.scan(&body[..cut], &Trusted, |_, _, _| Ok(()));
                assert!(whole.is_err() || r.len() == 0, "cut at {cut}");
            }
        }
        // Flip each byte in turn: open, get and scan must return, never panic.
        for at in 0..body.len() {
            let mut bad = body.clone();
            bad[at] ^= 0x5A;
            if let Ok(r) = StoreReader::open(Path::new("s"), &bad, &Trusted) {
                let _ = r.scan(&bad, &Trusted, |_, _, _| Ok(()));
                for d in [0, 150, 299] {
                    let _ = r.get(&bad, d, &Trusted);
                }
            }
        }
    }

    /// Block `b`'s compressed bytes and its length decompressed, read off the table.
    fn compressed_block(body: &[u8], b: usize) -> (&[u8], usize) {
        let r = StoreReader::open(Path::new("s"), body, &Trusted).unwrap();
        let block = r.block(body, b).unwrap();
        (
            &body[r.data.0 + block.start..r.data.0 + block.end],
            block.raw_len,
        )
    }

    #[test]
    fn later_blocks_are_compressed_against_block_zero() {
        let docs = docs(600);
        let body = build(&docs);
        let r = StoreReader::open(Path::new("s"), &body, &Trusted).unwrap();
        let block0 = r.block(&body, 0).unwrap();
        assert!(
            block0.raw_len >= DICTIONARY_TARGET,
            "block 0 is the dictionary"
        );
        // Without the dictionary a later block does not decompress to its records: its
        // matches point back into block 0.
        let (compressed, raw_len) = compressed_block(&body, 1);
        let mut out = vec![0; raw_len];
        let plain = lz4_flex::block::decompress_into(compressed, &mut out);
        let mut with = vec![0; raw_len];
        let mut block0_raw = Vec::new();
        r.decompress_with(&body, 0, &[], &Trusted, &mut block0_raw)
            .unwrap();
        lz4_flex::block::decompress_into_with_dict(compressed, &mut with, &block0_raw).unwrap();
        assert!(plain.is_err() || out != with, "block 1 needs block 0");
        // And the dictionary pays: the same records in plain 2 KiB blocks take more bytes.
        let (mut with_dictionary, mut plain_bytes) = (0, 0);
        let mut raw = Vec::new();
        for b in 1..r.blocks {
            with_dictionary += compressed_block(&body, b).0.len();
            r.decompress(&body, b, &Trusted, &mut raw).unwrap();
            plain_bytes += lz4_flex::block::compress(&raw).len();
        }
        assert!(
            with_dictionary < plain_bytes,
            "{with_dictionary} bytes against the dictionary, {plain_bytes} without"
        );
    }

    #[test]
    fn a_damaged_dictionary_is_an_error_for_every_block() {
        let docs = docs(600);
        let body = build(&docs);
        let r = StoreReader::open(Path::new("s"), &body, &Trusted).unwrap();
        let block0 = r.block(&body, 0).unwrap();
        let last_doc = (docs.len() - 1) as u32;
        // Cut block 0's compressed bytes short by claiming one more raw byte than it holds.
        let mut bad = body.clone();
        let entry = r.table.0 + 4;
        bad[entry..entry + 4].copy_from_slice(&(block0.raw_len as u32 + 1).to_le_bytes());
        let r = StoreReader::open(Path::new("s"), &bad, &Trusted).unwrap();
        for doc in [0, last_doc] {
            let err = r.get(&bad, doc, &Trusted).unwrap_err();
            assert!(err.to_string().contains("block 0"), "document {doc}: {err}");
        }
        assert!(r.scan(&bad, &Trusted, |_, _, _| Ok(())).is_err());
    }

    #[test]
    fn a_record_larger_than_the_window_still_serves_as_the_dictionary() {
        // Block 0 is one record longer than LZ4's window: only its tail is the dictionary,
        // on both sides.
        let mut docs = vec![("big".to_string(), "ab".repeat(WINDOW))];
        docs.extend(self::docs(300));
        let body = build(&docs);
        let r = StoreReader::open(Path::new("s"), &body, &Trusted).unwrap();
        assert!(r.block(&body, 0).unwrap().raw_len > WINDOW);
        for (d, (id, title)) in docs.iter().enumerate() {
            let got = r.get(&body, d as u32, &Trusted).unwrap();
            assert_eq!((&got.id, &got.title), (id, title), "document {d}");
        }
    }

    #[test]
    fn bytes_after_the_last_block_are_corrupt() {
        let mut body = build(&docs(300));
        body.push(0);
        let err = StoreReader::open(Path::new("s"), &body, &Trusted).unwrap_err();
        assert!(err.to_string().contains("blocks end at"), "{err}");
    }

    #[test]
    fn a_block_claiming_too_many_documents_is_corrupt() {
        let body = build(&docs(300));
        let mut bad = body.clone();
        bad[0..4].copy_from_slice(&301u32.to_le_bytes()); // one more document than stored
        let r = StoreReader::open(Path::new("s"), &bad, &Trusted).unwrap();
        let err = r.scan(&bad, &Trusted, |_, _, _| Ok(())).unwrap_err();
        assert!(err.to_string().contains("block"), "{err}");
    }
}
