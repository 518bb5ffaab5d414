//! Stop word lists.

use serde::{Deserialize, Serialize};

/// Lucene's `EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`: the 33 words Anserini's BEIR
/// baselines remove, sorted. `StopWords::contains` matches exactly these (tested).
pub const LUCENE_ENGLISH_STOP_WORDS: [&str; 33] = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// Which stop words an analyzer drops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopWords {
    None,
    LuceneEnglish,
}

impl StopWords {
    pub fn contains(self, token: &str) -> bool {
        match self {
            StopWords::None => false,
            // A match compiles to a switch on length then a few byte compares: this runs
            // for every token indexed.
            StopWords::LuceneEnglish => matches!(
                token,
                "a" | "an"
                    | "and"
                    | "are"
                    | "as"
                    | "at"
                    | "be"
                    | "but"
                    | "by"
                    | "for"
                    | "if"
                    | "in"
                    | "into"
                    | "is"
                    | "it"
                    | "no"
                    | "not"
                    | "of"
                    | "on"
                    | "or"
                    | "such"
                    | "that"
                    | "the"
                    | "their"
                    | "then"
                    | "there"
                    | "these"
                    | "they"
                    | "this"
                    | "to"
                    | "was"
                    | "will"
                    | "with"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lucene_list_is_sorted_and_has_33_words() {
        assert!(LUCENE_ENGLISH_STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        // The matcher in `contains` holds exactly the listed words.
        for w in LUCENE_ENGLISH_STOP_WORDS {
            assert!(StopWords::LuceneEnglish.contains(w), "{w}");
            assert!(!StopWords::LuceneEnglish.contains(&format!("{w}x")), "{w}x");
        }
        assert!(StopWords::LuceneEnglish.contains("the"));
        assert!(StopWords::LuceneEnglish.contains("with"));
        assert!(!StopWords::LuceneEnglish.contains("virus"));
        assert!(!StopWords::None.contains("the"));
    }
}
