//! Learning a word model from a real BEIR corpus (`--like`), and the built-in model.

use std::collections::HashMap;

use heddle::{Analyzer, AnalyzerConfig, Document};

use super::detmath;
use super::lengths::DocLengths;
use super::model::WordModel;
use crate::beir::BeirError;

/// Words seen at least this often in the `--like` corpus keep their own probability;
/// rarer words join the power-law tail (their counts are too noisy to mean much).
pub const MIN_HEAD_COUNT: u64 = 3;

/// What was counted in a real corpus.
#[derive(Debug, Clone)]
pub struct Learned {
    pub docs: u64,
    pub tokens: u64,
    /// Every word with its count, ordered by (count descending, word ascending), so the
    /// order never depends on hashing.
    pub words: Vec<(String, u64)>,
    /// Each document's title and text length, in corpus order.
    pub lengths: Vec<DocLengths>,
}

/// Counts the words (heddle's `plain` analyzer: lowercased UAX #29 words) and lengths
/// of `docs`. Words that the analyzer would not give back as themselves when they stand
/// alone are left out, so that every generated word is exactly one token.
pub fn learn(
    docs: impl IntoIterator<Item = Result<Document, BeirError>>,
) -> Result<Learned, BeirError> {
    let analyzer = Analyzer::new(AnalyzerConfig::plain());
    let mut counts: HashMap<String, u64> = HashMap::new();
    let mut scratch = String::new();
    let mut lengths = Vec::new();
    let mut tokens = 0u64;
    for doc in docs {
        let doc = doc?;
        let mut field_len = |text: &str| {
            let mut n = 0u32;
            analyzer.for_each_token(text, &mut scratch, |tok| {
                n += 1;
                match counts.get_mut(tok) {
                    Some(c) => *c += 1,
                    None => {
                        counts.insert(tok.to_string(), 1);
                    }
                }
            });
            n
        };
        let title = field_len(&doc.title);
        let text = field_len(&doc.text);
        tokens += u64::from(title) + u64::from(text);
        lengths.push(DocLengths { title, text });
    }
    let mut words: Vec<(String, u64)> = counts
        .into_iter()
        .filter(|(w, _)| analyzer.tokens(w).as_slice() == std::slice::from_ref(w))
        .collect();
    words.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(Learned {
        docs: lengths.len() as u64,
        tokens,
        words,
        lengths,
    })
}

impl WordModel {
    /// A model from real counts: words seen at least [`MIN_HEAD_COUNT`] times keep their
    /// relative frequency; the rest, and words never seen, share the tail. The tail's mass
    /// is the rare words' share of the tokens plus the Good–Turing estimate of unseen
    /// words (hapaxes / tokens).
    pub fn from_learned(learned: &Learned, description: impl Into<String>) -> WordModel {
        assert!(!learned.words.is_empty(), "the --like corpus has no words");
        let total: u64 = learned.words.iter().map(|(_, c)| c).sum();
        let split = learned
            .words
            .iter()
            .position(|(_, c)| *c < MIN_HEAD_COUNT)
            .unwrap_or(learned.words.len())
            .max(1);
        let rare_mass: u64 = learned.words[split..].iter().map(|(_, c)| c).sum();
        let hapaxes = learned.words.iter().filter(|(_, c)| *c == 1).count() as u64;
        let tail_mass = ((rare_mass + hapaxes) as f64 / total as f64).clamp(1e-6, 0.5);
        let head = learned.words[..split]
            .iter()
            .map(|(w, c)| (w.clone(), *c as f64))
            .collect();
        let known_tail = learned.words[split..]
            .iter()
            .map(|(w, _)| w.clone())
            .collect();
        WordModel::new(head, known_tail, tail_mass, description.into())
    }

    /// The model that ships with heddle-corpus: a list of 739 words of biomedical English
    /// written for this crate (`builtin_words.txt`, in rough order of frequency in
    /// abstracts), weighted by a Zipf–Mandelbrot law `1 / (r + 1.5)`, then the made-up
    /// tail with a quarter of the probability mass.
    pub fn builtin() -> WordModel {
        let head = BUILTIN_WORDS
            .lines()
            .enumerate()
            .map(|(r, w)| {
                (
                    w.to_string(),
                    1.0 / detmath::powf(r as f64 + 1.0 + BUILTIN_Q, BUILTIN_S),
                )
            })
            .collect();
        WordModel::new(
            head,
            Vec::new(),
            BUILTIN_TAIL_MASS,
            "built-in biomedical word list".into(),
        )
    }
}

const BUILTIN_WORDS: &str = include_str!("builtin_words.txt");
const BUILTIN_Q: f64 = 1.5;
const BUILTIN_S: f64 = 1.0;
const BUILTIN_TAIL_MASS: f64 = 0.25;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_list_is_distinct_lowercase_single_tokens() {
        let analyzer = Analyzer::new(AnalyzerConfig::plain());
        let words: Vec<&str> = BUILTIN_WORDS.lines().collect();
        assert_eq!(words.len(), 739);
        let mut sorted = words.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(
            sorted.len(),
            words.len(),
            "duplicate words in builtin_words.txt"
        );
        for w in words {
            assert_eq!(analyzer.tokens(w), vec![w.to_string()], "{w:?}");
        }
    }

    #[test]
    fn learns_counts_in_a_hash_independent_order() {
        let docs = vec![
            Ok(Document::new("1", "B a", "a b c. C!")),
            Ok(Document::new("2", "", "a z")),
        ];
        let learned = learn(docs).unwrap();
        assert_eq!(learned.docs, 2);
        assert_eq!(learned.tokens, 8);
        let words: Vec<(&str, u64)> = learned
            .words
            .iter()
            .map(|(w, c)| (w.as_str(), *c))
            .collect();
        assert_eq!(words, vec![("a", 3), ("b", 2), ("c", 2), ("z", 1)]);
        assert_eq!(learned.lengths[0], DocLengths { title: 2, text: 4 });
        assert_eq!(learned.lengths[1], DocLengths { title: 0, text: 2 });
    }

    #[test]
    fn rare_words_go_to_the_tail() {
        let docs = vec![Ok(Document::new("1", "", "a a a b b b c d"))];
        let m = WordModel::from_learned(&learn(docs).unwrap(), "t");
        let s = m.summary();
        assert_eq!(s.head_words, 2);
        assert_eq!(s.known_tail_words, 2);
        // Rare mass 2/8 plus 2 hapaxes / 8.
        assert!((s.tail_mass - 0.5).abs() < 1e-12);
        assert_eq!(m.word(2), "c");
    }
}
