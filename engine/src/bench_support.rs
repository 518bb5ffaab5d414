//! The postings codec's hot loops, reachable from criterion benchmarks (engine/benches),
//! and the stored fields' layout at other block sizes (engine/examples/store_blocks).
//! Not part of the stable API.

use std::path::Path;

use crate::postings::{PostingsList, PostingsWriter, TERMINATED};
use crate::store::{StoreReader, StoreWriter};

/// An encoded postings list of `docs`/`tfs` (docs strictly increasing, tfs ≥ 1).
pub fn encode(docs: &[u32], tfs: &[u32]) -> Vec<u8> {
    let mut out = Vec::new();
    PostingsWriter::new().encode(docs, tfs, |d| d % 200 + 20, &mut out);
    out
}

/// Decodes every posting (`advance` to the end); returns a checksum of docs and tfs.
pub fn decode_all(list: &[u8], df: u32) -> u64 {
    let list = PostingsList::open(list, df, |_| 0, Path::new("bench")).expect("a valid list");
    let mut cursor = list.cursor();
    let mut sum = 0u64;
    while cursor.doc() != TERMINATED {
        sum += cursor.doc() as u64 + cursor.tf() as u64;
        cursor.advance();
    }
    sum
}

/// Seeks to each of `targets` (ascending) in turn; returns a checksum of the docs found.
pub fn seek_all(list: &[u8], df: u32, targets: &[u32]) -> u64 {
    let list = PostingsList::open(list, df, |_| 0, Path::new("bench")).expect("a valid list");
    let mut cursor = list.cursor();
    let mut sum = 0u64;
    for &t in targets {
        let doc = cursor.seek(t);
        if doc == TERMINATED {
            break;
        }
        sum += doc as u64;
    }
    sum
}

/// The stored fields of `records` (id, title) as the store writes them with blocks closed
/// at `block_target` bytes: `(blocks, record bytes before compression, body bytes)`.
pub fn store_layout(records: &[(String, String)], block_target: usize) -> (usize, usize, usize) {
    let mut w = StoreWriter::with_block_target(block_target);
    for (id, title) in records {
        w.push(id, title);
    }
    let body = w.into_body();
    let reader = StoreReader::open(Path::new("store"), &body, &crate::segment::checked::Trusted)
        .expect("a store it just wrote");
    let (blocks, raw) = reader.uncompressed(&body);
    (blocks, raw, body.len())
}
