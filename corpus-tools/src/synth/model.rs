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
//!
//! Topics: the first [`TOPIC_FREE_RANKS`] ranks (function words, mostly) are shared by
//! all documents. Beyond them, ranks are grouped in blocks of `topics` consecutive ranks,
//! and topic `k` owns the `k`-th rank of every block. A topical draw takes a rank from
//! the model beyond the shared ranks and moves it to its block's slot for the document's
//! topic; since neighbouring ranks have nearly equal probability, averaged over topics
//! this is the model's own distribution again. [`WordModel::sample_base`] lowers the
//! topical ranks' share by exactly what topical draws add, so every word keeps its
//! overall frequency while each document leans towards one topic's words.

use std::collections::BTreeMap;
use std::collections::HashSet;

use super::alias::AliasTable;
use super::detmath;
use super::rng::Stream;
use super::tailwords;

/// Ranks below this are never topical.
pub const TOPIC_FREE_RANKS: usize = 50;

/// Ranks past this are clamped (the power law's far tail, ~never reached).
const MAX_RANK: f64 = 1e15;

/// A word model that documents are sampled from. Build it with
/// [`WordModel::builtin`] or [`WordModel::from_learned`].
#[derive(Debug, Clone)]
pub struct WordModel {
    head: Vec<Box<str>>,
    /// Ranks below this are shared by all topics (`TOPIC_FREE_RANKS`, or fewer for a
    /// tiny head).
    shared: usize,
    shared_table: Option<AliasTable>,
    /// Probability of a rank below `shared`.
    shared_mass: f64,
    /// Head ranks from `shared` on.
    topical_table: AliasTable,
    /// Probability of a head rank from `shared` on.
    topical_head_mass: f64,
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
        let shared = TOPIC_FREE_RANKS.min(weights.len() - 1);
        let shared_weight: f64 = weights[..shared].iter().sum();
        let shared_mass = (1.0 - tail_mass) * shared_weight / sum;
        WordModel {
            shared,
            shared_table: (shared > 0).then(|| AliasTable::new(&weights[..shared])),
            shared_mass,
            topical_table: AliasTable::new(&weights[shared..]),
            topical_head_mass: (1.0 - tail_mass) - shared_mass,
            head: head.into_iter().map(|(w, _)| w.into_boxed_str()).collect(),
            tail_mass,
            tail_alpha,
            known_tail: known_tail.into_iter().map(String::into_boxed_str).collect(),
            respelled,
            description,
        }
    }

    /// Draws a word id (rank) from the model's distribution.
    #[cfg(test)]
    pub(crate) fn sample(&self, s: &mut Stream) -> u64 {
        self.sample_base(s, 0.0)
    }

    /// The largest topical share `WordModel::sample_base` can compensate for (with a
    /// margin): topical draws cannot take more than the topical ranks' own mass.
    pub fn max_topicality(&self) -> f64 {
        0.9 * (1.0 - self.shared_mass)
    }

    /// Draws from the model with the topical ranks' share lowered as needed when a
    /// fraction `topicality` of all draws is made by [`WordModel::sample_topical`].
    #[inline]
    pub(crate) fn sample_base(&self, s: &mut Stream, topicality: f64) -> u64 {
        let shared = self.shared_mass / (1.0 - topicality);
        match &self.shared_table {
            Some(table) if s.uniform() < shared => table.sample(s) as u64,
            _ => self.sample_beyond_shared(s),
        }
    }

    /// A draw of topic `topic` (of `topics`): a rank beyond the shared ones, moved to
    /// the topic's slot in its block.
    #[inline]
    pub(crate) fn sample_topical(&self, s: &mut Stream, topic: u64, topics: u64) -> u64 {
        let r = self.sample_beyond_shared(s) - self.shared as u64;
        self.shared as u64 + (r / topics) * topics + topic
    }

    /// A rank from `shared` on, in proportion to the model.
    #[inline]
    fn sample_beyond_shared(&self, s: &mut Stream) -> u64 {
        let to_tail = self.tail_mass / (self.tail_mass + self.topical_head_mass);
        if s.uniform() >= to_tail {
            return (self.shared + self.topical_table.sample(s)) as u64;
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
    fn topical_draws_stay_in_the_topics_slots_and_keep_frequencies_overall() {
        let m = toy(0.2);
        let topics = 10;
        let tau = 0.25;
        assert!(tau < m.max_topicality());
        let mut s = Stream::new(2, Purpose::Documents, 0);
        let draws = 400_000;
        let mut counts = vec![0u32; 100];
        let mut plain = vec![0u32; 100];
        for i in 0..draws {
            let topic = i % topics;
            let r = if s.chance(tau) {
                let r = m.sample_topical(&mut s, topic, topics);
                assert!(r >= TOPIC_FREE_RANKS as u64);
                assert_eq!((r - TOPIC_FREE_RANKS as u64) % topics, topic);
                r
            } else {
                m.sample_base(&mut s, tau)
            };
            if r < 100 {
                counts[r as usize] += 1;
            }
            let p = m.sample(&mut s);
            if p < 100 {
                plain[p as usize] += 1;
            }
        }
        // The shared ranks and block totals of topical ranks match the plain model.
        for r in [0, 1, 10, 49] {
            let (a, b) = (counts[r] as f64, plain[r] as f64);
            assert!((a - b).abs() < 0.05 * b, "rank {r}: {a} vs {b}");
        }
        let block =
            |c: &[u32], b: usize| -> f64 { c[50 + b * 10..60 + b * 10].iter().sum::<u32>() as f64 };
        for b in 0..5 {
            let (a, p) = (block(&counts, b), block(&plain, b));
            assert!((a - p).abs() < 0.05 * p, "block {b}: {a} vs {p}");
        }
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
