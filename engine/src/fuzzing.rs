//! Entry points for fuzzers and robustness tests: every decoder of bytes read from disk,
//! callable on arbitrary input. Each must return (an error or a value) without panicking,
//! hanging, or allocating more than the input justifies. Not part of the stable API.

use std::path::Path;

use crate::postings::{PostingsList, TERMINATED};
use crate::segment::checked::Trusted;
use crate::segment::footer;
use crate::segment::lengths::Lengths;
use crate::store::StoreReader;
use crate::termdict::TermDict;

const PATH: &str = "fuzz-input";

/// The footer check every file goes through.
pub fn footer(bytes: &[u8]) {
    let _ = footer::verify(Path::new(PATH), bytes);
}

/// A manifest body (JSON) as `Index::open` parses it, after its footer.
pub fn manifest(bytes: &[u8]) {
    let _ = crate::index::Manifest::parse(Path::new(PATH), bytes);
}

/// A term dictionary body: open it, then read every term and entry, and look some up.
pub fn termdict(bytes: &[u8]) {
    if let Ok(dict) = TermDict::open(Path::new(PATH), bytes, &Trusted) {
        let mut terms = Vec::new();
        let mut walker = dict.walk(bytes, &Trusted);
        while let Ok(Some((term, _))) = walker.next_term() {
            if terms.len() == 10_000 {
                break;
            }
            terms.push(term.to_vec());
        }
        for term in &terms {
            let _ = dict.get(bytes, term, &Trusted);
        }
        let _ = dict.get(bytes, b"fuzz", &Trusted);
    }
}

/// A postings list whose `df` is the input's first four bytes (little-endian): open,
/// walk, and seek.
pub fn postings(bytes: &[u8]) {
    let Some((df, list)) = bytes.split_first_chunk::<4>() else {
        return;
    };
    let Ok(list) = PostingsList::open(list, u32::from_le_bytes(*df), |d| d % 1000, Path::new(PATH))
    else {
        return;
    };
    let mut cursor = list.cursor();
    while cursor.doc() != TERMINATED {
        let _ = cursor.tf();
        cursor.advance();
    }
    let mut cursor = list.cursor();
    let mut target = 0u32;
    while cursor.seek(target) != TERMINATED {
        cursor.shallow_seek(target.saturating_add(300));
        let _ = (cursor.block_bound(), cursor.block_last_doc());
        target = cursor.doc().saturating_add(97);
    }
}

/// A valid input for [`postings`]: `df` then the encoded list (a seed for mutation).
/// `docs` strictly increasing below `u32::MAX`, `tfs` ≥ 1, same length, not empty.
pub fn postings_seed(docs: &[u32], tfs: &[u32]) -> Vec<u8> {
    let mut out = (docs.len() as u32).to_le_bytes().to_vec();
    crate::postings::PostingsWriter::new().encode(docs, tfs, |d| d % 97 + 1, &mut out);
    out
}

/// A stored-fields body: open and read every record.
pub fn store(bytes: &[u8]) {
    if let Ok(store) = StoreReader::open(Path::new(PATH), bytes, &Trusted) {
        let _ = store.scan(bytes, &Trusted, |_, _, _| Ok(()));
        for doc in [0, store.len() / 2, store.len().saturating_sub(1)] {
            let _ = store.get(bytes, doc as u32, &Trusted);
        }
    }
}

/// A document-lengths body, for a document count taken from its own first word.
pub fn lengths(bytes: &[u8]) {
    let docs = bytes
        .get(..4)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    if let Ok(lengths) = Lengths::open(Path::new(PATH), bytes, docs, &crate::Field::ALL) {
        for field in crate::Field::ALL {
            let table = lengths.table(bytes, field);
            for doc in 0..docs.min(10_000) {
                let _ = table.get(doc as u32);
            }
            // A block's worth at a time, as scoring reads them, and past the end.
            let mut out = [0u32; 128];
            let block: Vec<u32> = (0..docs.min(10_000) as u32 + 2).collect();
            for chunk in block.chunks(128) {
                table.get_many(chunk, &mut out);
            }
            let _ = table.total();
        }
    }
}

/// A vectors body, for the document count and dimension its own header names (at most
/// [`crate::MAX_VECTOR_DIM`], as a manifest would allow): open it, scan it as an exact
/// search does, look for non-finite values.
pub fn vectors(bytes: &[u8]) {
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let (docs, dim) = (word(0), word(4));
    if dim == 0 || dim as usize > crate::MAX_VECTOR_DIM {
        return;
    }
    let path = Path::new(PATH);
    let Ok(table) = crate::vectors::VectorTable::open(path, bytes, docs, dim) else {
        return;
    };
    let rows = table.rows(bytes);
    let _ = rows.first_non_finite();
    let _ = rows.row(docs as usize / 2);
    // The query is as long as one row, which the body holds (when there are rows).
    if docs > 0 {
        let query: Vec<f32> = (0..dim).map(|i| 1.0 / (1 + i) as f32).collect();
        let mut top = crate::search::topk::TopK::new(10);
        let _ = crate::vectors::exact::scan(rows, &query, 0, |d| d % 3 == 0, &mut top, path);
        let _ = top.into_sorted();
    }
}

/// A graph body, for the document count and dimension its own header names (within what
/// a manifest would allow, and small enough to give every document a row here): open
/// and validate it, then walk it as an approximate search does, over made-up rows, with
/// every third document deleted.
pub fn graph(bytes: &[u8]) {
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let (docs, dim) = (word(0), word(4));
    if !(1..=64).contains(&dim) || !(1..=1 << 16).contains(&docs) {
        return;
    }
    let path = Path::new(PATH);
    let Ok(header) = crate::vectors::GraphHeader::open(path, bytes, docs, dim) else {
        return;
    };
    let Ok(layout) = header.validate(path, bytes) else {
        return;
    };
    let layers = header.cut(bytes, &layout);
    let values: Vec<f32> = (0..docs * dim)
        .map(|i| ((i * 7919) % 101) as f32 - 50.0)
        .collect();
    let body = crate::vectors::encode_rows(dim, docs as usize, values.chunks(dim as usize));
    let Ok(table) = crate::vectors::VectorTable::open(path, &body, docs, dim) else {
        return;
    };
    let rows = table.rows(&body);
    let Ok(codes) = crate::vectors::Codes::of(rows, path) else {
        return;
    };
    let segment = crate::vectors::WalkedSegment {
        rows,
        codes: &codes,
        path,
        deleted: &|d| d % 3 == 0,
    };
    let query: Vec<f32> = (0..dim).map(|i| 1.0 / (1 + i) as f32).collect();
    let mut visited = crate::vectors::Visited::default();
    let mut stats = crate::VectorSearchStats::default();
    let found = segment.walk(layers, &query, 10, &mut visited, &mut stats);
    let _ = std::hint::black_box((found.map(|f| f.len()), stats));
}

/// A delete bitmap body (roaring serialization) with its footer.
pub fn deletes(bytes: &[u8]) {
    let _ = crate::segment::deletes::decode(Path::new(PATH), bytes, u32::MAX);
}

/// Every decoder above, on the same input.
pub fn all(bytes: &[u8]) {
    footer(bytes);
    manifest(bytes);
    termdict(bytes);
    postings(bytes);
    store(bytes);
    lengths(bytes);
    vectors(bytes);
    graph(bytes);
    deletes(bytes);
}
