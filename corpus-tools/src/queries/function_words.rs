//! English function words: never chosen as query content terms, and the only literal
//! words the question templates use.

/// Sorted, so membership is a binary search. A superset of Lucene's 33 stop words.
pub(crate) const FUNCTION_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "among",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "either",
    "et",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "him",
    "his",
    "how",
    "however",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "may",
    "me",
    "might",
    "more",
    "most",
    "much",
    "must",
    "my",
    "no",
    "nor",
    "not",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "out",
    "over",
    "own",
    "per",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "then",
    "there",
    "therefore",
    "these",
    "they",
    "this",
    "those",
    "through",
    "thus",
    "to",
    "too",
    "under",
    "until",
    "up",
    "upon",
    "us",
    "very",
    "via",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "within",
    "without",
    "would",
    "you",
    "your",
];

/// True for a function word (lowercase input).
pub(crate) fn is_function_word(word: &str) -> bool {
    FUNCTION_WORDS.binary_search(&word).is_ok()
}

/// True for a word worth searching for: not a function word, at least three characters,
/// at least one of them a letter (so not a bare number like `0.05`).
pub(crate) fn is_content_word(word: &str) -> bool {
    !is_function_word(word) && word.chars().count() >= 3 && word.chars().any(char::is_alphabetic)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_is_sorted_and_covers_lucene_stop_words() {
        assert!(FUNCTION_WORDS.windows(2).all(|w| w[0] < w[1]));
        for w in heddle::analysis::LUCENE_ENGLISH_STOP_WORDS {
            assert!(is_function_word(w), "{w}");
        }
    }

    #[test]
    fn content_words() {
        assert!(is_content_word("virus"));
        assert!(is_content_word("ace2"));
        assert!(!is_content_word("the"));
        assert!(!is_content_word("0.05"));
        assert!(!is_content_word("ct"));
    }
}
