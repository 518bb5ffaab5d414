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

pub(crate) struct Stemmer(Option<frostem::Stemmer>);

impl Stemmer {
    pub(crate) fn new(kind: StemmerKind) -> Self {
        Stemmer(match kind {
            StemmerKind::None => None,
            StemmerKind::SnowballEnglish => {
                Some(frostem::Stemmer::new(frostem::Algorithm::English))
            }
            StemmerKind::Porter => Some(frostem::Stemmer::new(frostem::Algorithm::Porter)),
        })
    }

    pub(crate) fn stem<'a>(&self, token: &'a str) -> Cow<'a, str> {
        match &self.0 {
            None => Cow::Borrowed(token),
            Some(stemmer) => stemmer.stem(token),
        }
    }
}
