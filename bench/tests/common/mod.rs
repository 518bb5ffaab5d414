//! A small BEIR fixture written by the tests themselves: documents of 3 to 120 words
//! (so both sides of tantivy's exact-to-40 length code occur) drawn with a skew from a
//! small vocabulary, and short queries over the same words, some repeating a word.

use std::fmt::Write as _;
use std::path::Path;

use heddle_bench::analysis::{Analysis, Peer};
use heddle_bench::engines::BuildOptions;

const WORDS: &[&str] = &[
    "virus",
    "viral",
    "cell",
    "cells",
    "protein",
    "spike",
    "binding",
    "receptor",
    "vaccine",
    "vaccines",
    "antibody",
    "antibodies",
    "immune",
    "response",
    "patients",
    "clinical",
    "trial",
    "mortality",
    "risk",
    "transmission",
    "mask",
    "masks",
    "children",
    "school",
    "hospital",
    "care",
    "ventilation",
    "lung",
    "cytokine",
    "storm",
    "inflammation",
    "fever",
    "cough",
    "symptoms",
    "testing",
    "pcr",
    "serology",
    "bats",
    "origin",
    "genome",
    "sequence",
    "mutation",
    "variant",
    "strain",
    "replication",
    "drug",
    "remdesivir",
    "treatment",
    "dose",
    "efficacy",
    "safety",
    "elderly",
    "obesity",
    "diabetes",
    "heart",
    "kidney",
    "blood",
    "oxygen",
    "model",
    "forecast",
    "policy",
    "lockdown",
    "mobility",
    "economic",
    "mental",
    "health",
    "anxiety",
    "workers",
    "contact",
    "tracing",
];

/// A deterministic stream (SplitMix64) so the fixture never changes.
struct Stream(u64);

impl Stream {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A word index skewed towards the start of the list.
    fn word(&mut self) -> &'static str {
        let a = self.below(WORDS.len() as u64);
        let b = self.below(WORDS.len() as u64);
        WORDS[a.min(b) as usize]
    }
}

/// Writes `dir/corpus.jsonl` (`docs` documents) and `dir/queries.jsonl` (`queries`).
/// With `long`, every third document's text runs to 120 words; without, no document
/// has more than 40 tokens, so tantivy's length code is exact for all of them.
pub fn write_fixture(dir: &Path, docs: usize, queries: usize, seed: u64, long: bool) {
    std::fs::create_dir_all(dir).unwrap();
    let mut s = Stream(seed);
    let mut corpus = String::new();
    for i in 0..docs {
        let title_len = 1 + s.below(6);
        let text_len = 2 + s.below(if long && i % 3 == 0 { 118 } else { 30 });
        let title: Vec<&str> = (0..title_len).map(|_| s.word()).collect();
        let text: Vec<&str> = (0..text_len)
            .map(|j| if j % 7 == 3 { "the" } else { s.word() })
            .collect();
        let _ = writeln!(
            corpus,
            "{{\"_id\":\"d{i}\",\"title\":\"{}\",\"text\":\"{}.\"}}",
            title.join(" "),
            text.join(" ")
        );
    }
    std::fs::write(dir.join("corpus.jsonl"), corpus).unwrap();
    let mut qs = String::new();
    for q in 0..queries {
        let n = 2 + s.below(5);
        let mut words: Vec<&str> = (0..n).map(|_| s.word()).collect();
        if q % 4 == 0 {
            words.push(words[0]);
        }
        if q % 5 == 0 {
            words.insert(0, "what are the");
        }
        let _ = writeln!(qs, "{{\"_id\":\"q{q}\",\"text\":\"{}\"}}", words.join(" "));
    }
    std::fs::write(dir.join("queries.jsonl"), qs).unwrap();
}

/// How the tests build both engines unless they say otherwise: matched analysis, on
/// `threads` threads, down to `segments` segments (0: each engine's own policy), in a
/// memory budget of `memory_bytes` (0: heddle's writer has none).
#[allow(dead_code)] // not every test file builds
pub fn matched_build(threads: usize, segments: usize, memory_bytes: usize) -> BuildOptions {
    BuildOptions::new(
        Analysis::Matched,
        Peer::Tantivy,
        threads,
        segments,
        memory_bytes,
    )
}
