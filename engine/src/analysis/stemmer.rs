//! Stemming, delegated to frostem (maintained, generated from Snowball's own sources;
//! tantivy 0.27 made the same move away from the unmaintained rust-stemmers).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// Which stemmer an analyzer applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StemmerKind {
    None,
    /// Snowball's English ("Porter2") stemmer.
    SnowballEnglish,
    /// Martin Porter's original 1980 algorithm, as Lucene's PorterStemFilter.
    Porter,
}

pub(crate) enum Stemmer {
    None,
    Snowball(frostem::Stemmer),
    /// Not frostem's Porter: Snowball's `porter` is the paper's algorithm, Lucene's is
    /// Porter's reference implementation, which differs (see `porter.rs`).
    LucenePorter,
}

impl Stemmer {
    pub(crate) fn new(kind: StemmerKind) -> Self {
        match kind {
            StemmerKind::None => Stemmer::None,
            StemmerKind::SnowballEnglish => {
                Stemmer::Snowball(frostem::Stemmer::new(frostem::Algorithm::English))
            }
            StemmerKind::Porter => Stemmer::LucenePorter,
        }
    }

    pub(crate) fn stem<'a>(&self, token: &'a str) -> Cow<'a, str> {
        match self {
            Stemmer::None => Cow::Borrowed(token),
            Stemmer::Snowball(stemmer) => stemmer.stem(token),
            Stemmer::LucenePorter => super::porter::stem(token),
        }
    }
}
