//! Text analysis: the one place where text becomes tokens.
//!
//! An [`AnalyzerConfig`] is stored in every index's manifest and rebuilt into an
//! [`Analyzer`] when the index is opened, so a query is always analyzed exactly as the
//! documents were. The pipeline is fixed: Unicode word segmentation (UAX #29), lowercase,
//! long-token removal, then optionally English possessive removal, stop words and stemming.

mod porter;
mod stemmer;
mod stopwords;
mod tokenizer;

use serde::{Deserialize, Serialize};

pub use stemmer::StemmerKind;
pub use stopwords::{LUCENE_ENGLISH_STOP_WORDS, StopWords};

use crate::error::{Error, Result};

/// Tokens longer than this many characters are dropped (Lucene's StandardTokenizer limit).
pub const DEFAULT_MAX_TOKEN_CHARS: usize = 255;

/// A serializable description of an analysis pipeline. Stored in the index manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnalyzerConfig {
    /// The preset name this config came from, for display (`plain`, `english`, ...).
    pub name: String,
    /// Tokens with more characters than this are dropped, not truncated.
    pub max_token_chars: usize,
    /// Strip a trailing `'s` (also with U+2019) as Lucene's EnglishPossessiveFilter does.
    pub english_possessives: bool,
    pub stop_words: StopWords,
    pub stemmer: StemmerKind,
}

impl AnalyzerConfig {
    /// Lowercase only: every word is kept as written.
    pub fn plain() -> Self {
        AnalyzerConfig {
            name: "plain".into(),
            max_token_chars: DEFAULT_MAX_TOKEN_CHARS,
            english_possessives: false,
            stop_words: StopWords::None,
            stemmer: StemmerKind::None,
        }
    }

    /// Possessives removed, Lucene's 33 English stop words dropped, Snowball English stems.
    pub fn english() -> Self {
        AnalyzerConfig {
            name: "english".into(),
            max_token_chars: DEFAULT_MAX_TOKEN_CHARS,
            english_possessives: true,
            stop_words: StopWords::LuceneEnglish,
            stemmer: StemmerKind::SnowballEnglish,
        }
    }

    /// Anserini's analysis for its BEIR baselines (Lucene's StandardTokenizer, English
    /// possessives, lowercase, the 33 stop words, Lucene's Porter stemmer). Where heddle
    /// still differs from it is recorded in docs/DECISIONS.md.
    pub fn lucene_english() -> Self {
        AnalyzerConfig {
            name: "lucene-english".into(),
            max_token_chars: DEFAULT_MAX_TOKEN_CHARS,
            english_possessives: true,
            stop_words: StopWords::LuceneEnglish,
            stemmer: StemmerKind::Porter,
        }
    }

    /// The names accepted by [`AnalyzerConfig::preset`].
    pub const PRESETS: &'static [&'static str] = &["plain", "english", "lucene-english"];

    /// Looks a preset up by name.
    pub fn preset(name: &str) -> Result<Self> {
        match name {
            "plain" => Ok(Self::plain()),
            "english" => Ok(Self::english()),
            "lucene-english" => Ok(Self::lucene_english()),
            _ => Err(Error::UnknownAnalyzer {
                name: name.to_string(),
                known: Self::PRESETS.join(", "),
            }),
        }
    }
}

impl Default for AnalyzerConfig {
    fn default() -> Self {
        Self::english()
    }
}

/// A ready-to-run analysis pipeline. Cheap to share between threads.
pub struct Analyzer {
    config: AnalyzerConfig,
    stemmer: stemmer::Stemmer,
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analyzer")
            .field("config", &self.config)
            .finish()
    }
}

impl Analyzer {
    pub fn new(config: AnalyzerConfig) -> Self {
        let stemmer = stemmer::Stemmer::new(config.stemmer);
        Analyzer { config, stemmer }
    }

    pub fn config(&self) -> &AnalyzerConfig {
        &self.config
    }

    /// Calls `emit` with each token of `text`, in order. `scratch` is reused between
    /// calls so that analysing a document allocates only when a token needs lowercasing
    /// into a longer buffer or stemming changes it.
    pub fn for_each_token(&self, text: &str, scratch: &mut String, mut emit: impl FnMut(&str)) {
        self.for_each_word(text, scratch, |word| emit(&self.stem(word)));
    }

    /// The pipeline up to, not including, stemming: each word lowercased, with
    /// possessives removed and stop words and long words dropped. With [`Analyzer::stem`]
    /// it is [`Analyzer::for_each_token`] split in two, so an indexer can remember the
    /// stem of a word it has seen instead of stemming it again.
    pub fn for_each_word(&self, text: &str, scratch: &mut String, mut emit: impl FnMut(&str)) {
        self.each_word(text, scratch, |fate, word| {
            if fate == WordFate::Kept {
                emit(word);
            }
        });
    }

    /// Every word of `text` with what the analyzer does with it, and the word as it stands
    /// then (lowercased, possessive removed; the raw word if too long). The one pipeline
    /// behind indexing and behind explaining an empty query.
    #[inline]
    fn each_word(&self, text: &str, scratch: &mut String, mut f: impl FnMut(WordFate, &str)) {
        for word in tokenizer::words(text) {
            // Cheap bound first: a word of at most max bytes has at most max chars.
            if word.len() > self.config.max_token_chars
                && word.chars().count() > self.config.max_token_chars
            {
                f(WordFate::TooLong, word);
                continue;
            }
            scratch.clear();
            tokenizer::lowercase_into(word, scratch);
            if self.config.english_possessives {
                strip_possessive(scratch);
            }
            let fate = if scratch.is_empty() {
                WordFate::Empty
            } else if self.config.stop_words.contains(scratch) {
                WordFate::Stop
            } else {
                WordFate::Kept
            };
            f(fate, scratch);
        }
    }

    /// The stem of a word [`Analyzer::for_each_word`] emitted (the word itself without a
    /// stemmer).
    pub fn stem<'a>(&self, word: &'a str) -> std::borrow::Cow<'a, str> {
        self.stemmer.stem(word)
    }

    /// When every word of `text` is one this analyzer drops as a stop word: those words,
    /// lowercased (possessives removed, as the analyzer does before it looks them up), in
    /// order, repeats kept. `None` if `text` has no words, or any word is kept or dropped
    /// for another reason (longer than `max_token_chars`, nothing left once its
    /// possessive is removed). For explaining an empty result.
    pub fn only_stop_words(&self, text: &str) -> Option<Vec<String>> {
        let mut out = Vec::new();
        let mut others = false;
        self.each_word(text, &mut String::new(), |fate, word| match fate {
            WordFate::Stop => out.push(word.to_string()),
            _ => others = true,
        });
        (!others && !out.is_empty()).then_some(out)
    }

    /// The tokens of `text` as owned strings (convenient; the indexer uses
    /// [`Analyzer::for_each_token`]).
    pub fn tokens(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut scratch = String::new();
        self.for_each_token(text, &mut scratch, |t| out.push(t.to_string()));
        out
    }
}

/// What the analyzer does with one word of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WordFate {
    /// Searched for (after stemming).
    Kept,
    /// Dropped: one of the analyzer's stop words.
    Stop,
    /// Dropped: longer than `max_token_chars`.
    TooLong,
    /// Dropped: nothing was left once the possessive was removed.
    Empty,
}

fn strip_possessive(token: &mut String) {
    for suffix in ["'s", "\u{2019}s", "\u{FF07}s"] {
        if token.ends_with(suffix) {
            token.truncate(token.len() - suffix.len());
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lowercases_and_splits_on_punctuation_and_hyphens() {
        let a = Analyzer::new(AnalyzerConfig::plain());
        assert_eq!(
            a.tokens("SARS-CoV-2, the (novel) Coronavirus!"),
            ["sars", "cov", "2", "the", "novel", "coronavirus"]
        );
    }

    #[test]
    fn plain_keeps_digits_decimals_and_stop_words() {
        let a = Analyzer::new(AnalyzerConfig::plain());
        assert_eq!(
            a.tokens("In 2020 the R0 was 2.5 of 10,000"),
            ["in", "2020", "the", "r0", "was", "2.5", "of", "10,000"]
        );
    }

    #[test]
    fn plain_handles_unicode_letters_and_case() {
        let a = Analyzer::new(AnalyzerConfig::plain());
        assert_eq!(
            a.tokens("Größe ÉCOLE naïve Ωmega 東京"),
            ["größe", "école", "naïve", "ωmega", "東", "京"]
        );
    }

    #[test]
    fn plain_keeps_possessives_english_removes_them() {
        let plain = Analyzer::new(AnalyzerConfig::plain());
        assert_eq!(plain.tokens("patient's"), ["patient's"]);
        let english = Analyzer::new(AnalyzerConfig::english());
        assert_eq!(english.tokens("Patient's doctor’s"), ["patient", "doctor"]);
    }

    #[test]
    fn english_drops_stop_words_and_stems() {
        let a = Analyzer::new(AnalyzerConfig::english());
        assert_eq!(
            a.tokens("The infections are spreading in the hospitals"),
            ["infect", "spread", "hospit"]
        );
    }

    #[test]
    fn long_tokens_are_dropped_not_truncated() {
        let mut config = AnalyzerConfig::plain();
        config.max_token_chars = 5;
        let a = Analyzer::new(config);
        assert_eq!(
            a.tokens("short toolong ok ééééé éééééé"),
            ["short", "ok", "ééééé"]
        );
    }

    #[test]
    fn punctuation_only_and_empty_input_give_no_tokens() {
        let a = Analyzer::new(AnalyzerConfig::english());
        assert!(a.tokens("").is_empty());
        assert!(a.tokens(" -- ... !!! ").is_empty());
    }

    #[test]
    fn unknown_preset_is_a_typed_error() {
        assert!(matches!(
            AnalyzerConfig::preset("klingon"),
            Err(Error::UnknownAnalyzer { .. })
        ));
    }

    #[test]
    fn only_stop_words_names_them_when_nothing_else_is_there() {
        let english = Analyzer::new(AnalyzerConfig::english());
        assert_eq!(
            english.only_stop_words("The OF and the").as_deref(),
            Some(&["the", "of", "and", "the"].map(String::from)[..])
        );
        assert!(english.tokens("the of and").is_empty());
        // A kept word, a word too long to index, or no words at all: not "only stop words".
        assert_eq!(english.only_stop_words("the history of Rome"), None);
        assert_eq!(
            english.only_stop_words(&format!("the {}", "x".repeat(300))),
            None
        );
        assert_eq!(english.only_stop_words(" , ; "), None);
        assert_eq!(
            Analyzer::new(AnalyzerConfig::plain()).only_stop_words("the of"),
            None
        );
    }
}
