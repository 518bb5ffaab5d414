//! Fixtures shared by the engine's integration tests.
#![allow(dead_code)]

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
        | Error::Manifest { path, .. } => Some(path),
        _ => None,
    }
}

/// A new index in `dir` with the English analyzer, flat or with per-field postings.
pub fn english_index(dir: &Path, per_field: bool) -> Index {
    let settings = IndexSettings {
        analyzer: AnalyzerConfig::english(),
        per_field,
    };
    Index::create(dir, settings).unwrap()
}
