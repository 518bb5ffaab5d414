//! Fixtures shared by the engine's integration tests.
#![allow(dead_code)]

pub mod vectors;

use std::path::Path;

use heddle::{AnalyzerConfig, Document, Error, Index, IndexSettings};

/// A small corpus with repeated terms, varied lengths, an empty text and shared words,
/// so BM25's tf, df and length normalisation all matter.
pub fn fixture() -> Vec<Document> {
    vec![
        Document::new(
            "d1",
            "Coronavirus transmission",
            "The coronavirus spreads by droplets. Droplets carry virus.",
        ),
        Document::new(
            "d2",
            "Masks",
            "Masks reduce droplet transmission of the coronavirus in hospitals.",
        ),
        Document::new(
            "d3",
            "Vaccines",
            "Vaccine trials for coronavirus vaccines show strong immune response.",
        ),
        Document::new("d4", "Empty text document", ""),
        Document::new(
            "d5",
            "Bats",
            "Bats host many coronaviruses; bat coronavirus origins are studied. Bats bats bats.",
        ),
        Document::new(
            "d6",
            "Hospital capacity",
            "Hospitals and intensive care units during the pandemic wave.",
        ),
        Document::new(
            "d7",
            "Long document",
            "Immune response and antibodies. ".repeat(40),
        ),
        Document::new(
            "d8",
            "Transmission in schools",
            "Children and transmission: schools, droplets, masks and ventilation.",
        ),
    ]
}

/// The file an error names, for the errors that name one.
pub fn error_path(e: &Error) -> Option<&Path> {
    match e {
        Error::Io { path, .. }
        | Error::Truncated { path, .. }
        | Error::BadMagic { path }
        | Error::Version { path, .. }
        | Error::ChecksumMismatch { path, .. }
        | Error::Corrupt { path, .. }
        | Error::Manifest { path, .. }
        | Error::NotRegular { path, .. }
        | Error::ChangedInPlace { path } => Some(path),
        _ => None,
    }
}

/// A new index in `dir` with the English analyzer, flat or with per-field postings.
pub fn english_index(dir: &Path, per_field: bool) -> Index {
    let settings = IndexSettings {
        analyzer: AnalyzerConfig::english(),
        per_field,
        ..Default::default()
    };
    Index::create(dir, settings).unwrap()
}

/// The body of a heddle file: its first `body_len` bytes (the footer's u64 at 20 bytes
/// from the end, docs/FORMAT.md).
pub fn body_of(bytes: &[u8]) -> &[u8] {
    let at = bytes.len() - 20;
    let len = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    &bytes[..len as usize]
}

/// The chunk size of a heddle file: 2^(the footer's u32 at 24 bytes from the end).
pub fn chunk_shift_of(bytes: &[u8]) -> u32 {
    let at = bytes.len() - 24;
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

/// `body` sealed as a file of this format version, in chunks of 2^`shift` bytes: the
/// chunk CRCs, chunk_shift, body_len, the CRC-32 of those three, version, magic
/// (docs/FORMAT.md, "Footer"; written from the document, not with the engine's code).
pub fn seal(mut body: Vec<u8>, shift: u32) -> Vec<u8> {
    let len = body.len();
    let crcs: Vec<u32> = body.chunks(1 << shift).map(crc32fast::hash).collect();
    for crc in crcs {
        body.extend_from_slice(&crc.to_le_bytes());
    }
    body.extend_from_slice(&shift.to_le_bytes());
    body.extend_from_slice(&(len as u64).to_le_bytes());
    let crc = crc32fast::hash(&body[len..]);
    body.extend_from_slice(&crc.to_le_bytes());
    body.extend_from_slice(&heddle::segment::FORMAT_VERSION.to_le_bytes());
    body.extend_from_slice(b"HDLF");
    body
}

/// Edits a file's body and reseals it with valid checksums (its chunk size kept): damage
/// a checksum cannot see, as a hostile user could make it.
pub fn reseal(path: &Path, edit: impl FnOnce(&mut Vec<u8>)) {
    let bytes = std::fs::read(path).unwrap();
    let mut body = body_of(&bytes).to_vec();
    edit(&mut body);
    std::fs::write(path, seal(body, chunk_shift_of(&bytes))).unwrap();
}

/// Rewrites a file with the same body in chunks of 2^`shift` bytes (readers accept any
/// size from 64 bytes): small files then span many chunks, each verified on its own.
pub fn rechunk(path: &Path, shift: u32) {
    let bytes = std::fs::read(path).unwrap();
    std::fs::write(path, seal(body_of(&bytes).to_vec(), shift)).unwrap();
}

/// Edits the manifest's JSON and reseals it (see [`reseal`]).
pub fn rewrite_manifest(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    reseal(&dir.join("MANIFEST"), |body| {
        let mut json: serde_json::Value = serde_json::from_slice(body).unwrap();
        edit(&mut json);
        *body = serde_json::to_vec_pretty(&json).unwrap();
        body.push(b'\n');
    });
}

/// The names in `dir`, sorted.
pub fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// An English flat index of the fixture in two segments (d1..d4, d5..d8), with background
/// merges off so that it stays two.
pub fn two_segments(dir: &Path) -> Index {
    let index = english_index(dir, false);
    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    for chunk in fixture().chunks(4) {
        for d in chunk {
            w.add(d.clone()).unwrap();
        }
        w.commit().unwrap();
    }
    drop(w);
    index
}

/// English analysis, title and text indexed as fields of their own as well as flat.
pub fn english_per_field() -> IndexSettings {
    IndexSettings {
        analyzer: AnalyzerConfig::english(),
        per_field: true,
        ..Default::default()
    }
}
