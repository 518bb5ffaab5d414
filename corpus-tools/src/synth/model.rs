//! The word model: a known head with fixed probabilities, then an unbounded power-law tail.
//!
//! Rank `r` (0-based) is a word id. Ranks below `head.len()` are the head: words with
//! their probabilities (counted in a real corpus with `--like`, or Zipf–Mandelbrot
//! weights over the built-in list). Beyond the head, ranks follow a continuous power law
//! `p(r) ∝ r^-alpha` that joins the head's last probability without a step and carries
//! the tail's share of the probability mass; its first ranks are the known rare words
//! (seen fewer than `min_count` times in the `--like` corpus), the rest are made-up words
//! ([`tailwords`](super::tailwords)). Since the tail never ends, the vocabulary keeps
//! growing with the corpus (Heaps' law) while the rank–frequency curve stays Zipf-like.

use std::collections::BTreeMap;
use std::collections::HashSet;

use super::alias::AliasTable;
use super::detmath;
use super::rng::Stream;
use super::tailwords;

/// Ranks past this are clamped (the power law's far tail, ~never reached).
const MAX_RANK: f64 = 1e15;

/// A word model that documents are sampled from. Build it with
/// [`WordModel::builtin`] or [`WordModel::from_counts`].
#[derive(Debug, Clone)]
pub struct WordModel {
    head: Vec<Box<str>>,
    head_table: AliasTable,
    /// Probability that a draw comes from the tail.
    tail_mass: f64,
    /// The tail's exponent, > 1.
    tail_alpha: f64,
    /// Known words beyond the head, in rank order (from `--like`; empty for built-in).
    known_tail: Vec<Box<str>>,
    /// Made-up words that would spell a known word, with the spelling used instead.
    respelled: BTreeMap<u64, Box<str>>,
    description: String,
}

/// Summary figures of a model, for logs and docs.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSummary {
    pub description: String,
    pub head_words: usize,
    pub known_tail_words: usize,
    pub tail_mass: f64,
    pub tail_alpha: f64,
}

impl WordModel {
    /// A model over `head` (words in rank order with positive weights, distinct) whose
    /// tail takes probability `tail_mass` (in (0, 1)), joining the head continuously.
    pub(crate) fn new(
        head: Vec<(String, f64)>,
        known_tail: Vec<String>,
        tail_mass: f64,
        description: String,
    ) -> WordModel {
        assert!(
            !head.is_empty(),
            "a word model needs at least one head word"
        );
        assert!(tail_mass > 0.0 && tail_mass < 1.0, "tail mass {tail_mass}");
        let weights: Vec<f64> = head.iter().map(|(_, w)| *w).collect();
        let sum: f64 = weights.iter().sum();
        let last = head.len() as f64;
        // Probability of the last head word, and the tail exponent that makes the tail's
        // density at the join equal to it: tail_mass * (alpha - 1) / H = p_H.
        let p_last = (1.0 - tail_mass) * weights[weights.len() - 1] / sum;
        let tail_alpha = 1.0 + p_last * last / tail_mass;
        let known: HashSet<&str> = head
            .iter()
            .map(|(w, _)| w.as_str())
            .chain(known_tail.iter().map(String::as_str))
            .collect();
        let mut respelled = BTreeMap::new();
        for word in known.iter().copied() {
            if let Some(index) = tailwords::decode(word) {
                let mut alt = word.to_string();
                while known.contains(alt.as_str()) {
                    // No made-up word ends in 'x', so this can only meet a known word.
                    alt.push('x');
                }
                respelled.insert(index, alt.into_boxed_str());
            }
        }
        WordModel {
            head_table: AliasTable::new(&weights),
            head: head.into_iter().map(|(w, _)| w.into_boxed_str()).collect(),
            tail_mass,
            tail_alpha,
            known_tail: known_tail.into_iter().map(String::into_boxed_str).collect(),
            respelled,
            description,
        }
    }

    /// Draws a word id (rank).
    #[inline]
    pub(crate) fn sample(&self, s: &mut Stream) -> u64 {
        if s.uniform() >= self.tail_mass {
            return self.head_table.sample(s) as u64;
        }
        // Pareto with density ∝ x^-alpha on [H, inf): x = H * U^(-1/(alpha-1)).
        let h = self.head.len() as f64;
        let u = s.uniform_open0();
        let x = h * detmath::exp(-detmath::ln(u) / (self.tail_alpha - 1.0));
        (x.min(MAX_RANK) as u64).max(self.head.len() as u64)
    }

    /// Appends the word with id `rank` to `out`.
    #[inline]
    pub(crate) fn push_word(&self, rank: u64, out: &mut String) {
        let head = self.head.len() as u64;
        if rank < head {
            out.push_str(&self.head[rank as usize]);
            return;
        }
        let t = rank - head;
        if t < self.known_tail.len() as u64 {
            out.push_str(&self.known_tail[t as usize]);
            return;
        }
        let made_up = t - self.known_tail.len() as u64;
        match self.respelled.get(&made_up) {
            Some(alt) => out.push_str(alt),
            None => tailwords::encode_into(made_up, out),
        }
    }

    /// The word with id `rank`.
    pub fn word(&self, rank: u64) -> String {
        let mut s = String::new();
        self.push_word(rank, &mut s);
        s
    }

    /// Number of head words (ranks with fixed probabilities).
    pub fn head_len(&self) -> usize {
        self.head.len()
    }

    pub fn summary(&self) -> ModelSummary {
        ModelSummary {
            description: self.description.clone(),
            head_words: self.head.len(),
            known_tail_words: self.known_tail.len(),
            tail_mass: self.tail_mass,
            tail_alpha: self.tail_alpha,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::rng::Purpose;

    fn toy(tail_mass: f64) -> WordModel {
        let head: Vec<(String, f64)> = (1..=100)
            .map(|r| (format!("w{r}"), 1.0 / r as f64))
            .collect();
        WordModel::new(head, vec!["rare".into()], tail_mass, "toy".into())
    }

    #[test]
    fn tail_takes_its_share_and_joins_the_head_continuously() {
        let m = toy(0.2);
        // p_H = 0.8 * (1/100) / H_100, H_100 = 5.187...; alpha = 1 + p_H * 100 / 0.2.
        let h100: f64 = (1..=100).map(|r| 1.0 / r as f64).sum();
        let expected = 1.0 + 0.8 * 0.01 / h100 * 100.0 / 0.2;
        assert!((m.summary().tail_alpha - expected).abs() < 1e-12);
        let mut s = Stream::new(1, Purpose::Documents, 0);
        let draws = 200_000;
        let tail = (0..draws).filter(|_| m.sample(&mut s) >= 100).count();
        assert!((tail as f64 / draws as f64 - 0.2).abs() < 0.005, "{tail}");
    }

    #[test]
    fn words_by_rank_head_known_tail_then_made_up() {
        let m = toy(0.1);
        assert_eq!(m.word(0), "w1");
        assert_eq!(m.word(99), "w100");
        assert_eq!(m.word(100), "rare");
        assert_eq!(m.word(101), tailwords::encode(0));
        assert_eq!(m.word(105), tailwords::encode(4));
    }

    #[test]
    fn a_made_up_word_that_spells_a_known_word_is_respelled() {
        let clash = tailwords::encode(3);
        let head = vec![("the".to_string(), 2.0), (clash.clone(), 1.0)];
        let m = WordModel::new(head, vec![], 0.5, "clash".into());
        let made_up_3 = m.word(2 + 3);
        assert_ne!(made_up_3, clash);
        assert_eq!(made_up_3, format!("{clash}x"));
        assert_eq!(m.word(2 + 4), tailwords::encode(4));
    }
}
