//! Corpus statistics for comparing a generated corpus with a real one.

mod fit;

use std::collections::HashMap;
use std::fmt;

use heddle::{Analyzer, Document};

pub use fit::{PowerFit, heaps_fit, zipf_fit};

use crate::beir::BeirError;

/// Ranks the Zipf exponent is fitted over: past the handful of function words at the
/// top, within the part of the curve every corpus of a few thousand documents resolves.
pub const ZIPF_RANKS: (usize, usize) = (10, 10_000);

/// Figures describing a corpus as an analyzer sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct CorpusStats {
    pub analyzer: String,
    pub docs: u64,
    /// Tokens in titles and texts.
    pub tokens: u64,
    pub title_tokens: u64,
    pub empty_texts: u64,
    /// Document length (title + text tokens): mean, and nearest-rank median, p99, max.
    pub mean_len: f64,
    pub median_len: u64,
    pub p99_len: u64,
    pub max_len: u64,
    pub docs_over_1000: u64,
    pub vocabulary: u64,
    /// Terms seen exactly once.
    pub hapaxes: u64,
    /// Rank–frequency exponent over [`ZIPF_RANKS`].
    pub zipf: Option<PowerFit>,
    /// Vocabulary-growth exponent over the second half (by tokens, log scale) of the corpus.
    pub heaps: Option<PowerFit>,
    /// The most frequent terms by document frequency: (term, df, collection frequency).
    pub top_terms: Vec<(String, u64, u64)>,
}

#[derive(Default)]
struct TermCounts {
    cf: u64,
    df: u64,
    last_doc: u64,
}

/// Reads every document of `docs` and computes its statistics; `top` top terms are kept.
pub fn corpus_stats(
    docs: impl IntoIterator<Item = Result<Document, BeirError>>,
    analyzer: &Analyzer,
    top: usize,
) -> Result<CorpusStats, BeirError> {
    let mut terms: HashMap<String, TermCounts> = HashMap::new();
    let mut scratch = String::new();
    let mut lengths: Vec<u64> = Vec::new();
    let (mut tokens, mut title_tokens, mut empty_texts) = (0u64, 0u64, 0u64);
    let mut growth: Vec<(u64, u64)> = Vec::new();
    let mut next_checkpoint = 1024u64;
    for doc in docs {
        let doc = doc?;
        let doc_no = lengths.len() as u64 + 1;
        let mut len = [0u64; 2];
        for (field, text) in [&doc.title, &doc.text].into_iter().enumerate() {
            analyzer.for_each_token(text, &mut scratch, |tok| {
                len[field] += 1;
                let c = match terms.get_mut(tok) {
                    Some(c) => c,
                    None => terms.entry(tok.to_string()).or_default(),
                };
                c.cf += 1;
                if c.last_doc != doc_no {
                    c.df += 1;
                    c.last_doc = doc_no;
                }
            });
        }
        if len[1] == 0 {
            empty_texts += 1;
        }
        title_tokens += len[0];
        tokens += len[0] + len[1];
        lengths.push(len[0] + len[1]);
        if tokens >= next_checkpoint {
            growth.push((tokens, terms.len() as u64));
            next_checkpoint = (next_checkpoint as f64 * 1.19) as u64; // 4 per doubling
        }
    }
    growth.push((tokens, terms.len() as u64));
    let docs = lengths.len() as u64;
    let mean_len = if docs == 0 {
        0.0
    } else {
        tokens as f64 / docs as f64
    };
    let docs_over_1000 = lengths.iter().filter(|&&l| l > 1000).count() as u64;
    lengths.sort_unstable();
    let mut cfs: Vec<u64> = terms.values().map(|c| c.cf).collect();
    cfs.sort_unstable_by(|a, b| b.cmp(a));
    let mut by_df: Vec<(&String, &TermCounts)> = terms.iter().collect();
    by_df.sort_unstable_by(|a, b| b.1.df.cmp(&a.1.df).then_with(|| a.0.cmp(b.0)));
    let top_terms = by_df
        .iter()
        .take(top)
        .map(|(t, c)| ((*t).clone(), c.df, c.cf))
        .collect();
    // Heaps over the second half of the corpus on a log scale: the start of any corpus
    // grows its vocabulary faster than its body.
    let half_log = (tokens as f64).sqrt() as u64;
    let late: Vec<(u64, u64)> = growth
        .iter()
        .copied()
        .filter(|(n, _)| *n >= half_log)
        .collect();
    Ok(CorpusStats {
        analyzer: analyzer.config().name.clone(),
        docs,
        tokens,
        title_tokens,
        empty_texts,
        mean_len,
        median_len: nearest_rank(&lengths, 0.5),
        p99_len: nearest_rank(&lengths, 0.99),
        max_len: lengths.last().copied().unwrap_or(0),
        docs_over_1000,
        vocabulary: terms.len() as u64,
        hapaxes: cfs.iter().filter(|&&c| c == 1).count() as u64,
        zipf: zipf_fit(&cfs, ZIPF_RANKS.0, ZIPF_RANKS.1),
        heaps: heaps_fit(&late),
        top_terms,
    })
}

/// Nearest-rank quantile of sorted `values` (0 for none).
fn nearest_rank(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A count and its noun, the noun plural unless the count is 1, the count grouped as
/// [`thousands`]: `plural(1, "segment")` is `1 segment`, `plural(1200, "query")` is
/// `1,200 queries` (a consonant's `y` becomes `ies`, `s`, `x`, `ch` and `sh` take `es`,
/// other nouns `s`). Every count
/// heddle-eval and heddle-corpus print goes through it, so none says "1 segments".
pub fn plural(n: u64, noun: &str) -> String {
    let many = match noun.strip_suffix('y') {
        Some(stem) if !stem.ends_with(['a', 'e', 'i', 'o', 'u']) => format!("{stem}ies"),
        _ if ["s", "x", "ch", "sh"].iter().any(|end| noun.ends_with(end)) => format!("{noun}es"),
        _ => format!("{noun}s"),
    };
    format!("{} {}", thousands(n), if n == 1 { noun } else { &many })
}

impl fmt::Display for CorpusStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pct = |n: u64| 100.0 * n as f64 / self.docs.max(1) as f64;
        writeln!(f, "analyzer          {}", self.analyzer)?;
        writeln!(f, "documents         {}", thousands(self.docs))?;
        writeln!(f, "tokens            {}", thousands(self.tokens))?;
        writeln!(
            f,
            "doc length        mean {:.1}  median {}  p99 {}  max {}  (>1,000: {})",
            self.mean_len, self.median_len, self.p99_len, self.max_len, self.docs_over_1000
        )?;
        writeln!(
            f,
            "title length      mean {:.1}",
            self.title_tokens as f64 / self.docs.max(1) as f64
        )?;
        writeln!(
            f,
            "empty texts       {} ({:.1}%)",
            thousands(self.empty_texts),
            pct(self.empty_texts)
        )?;
        writeln!(
            f,
            "vocabulary        {}  (hapaxes {}, {:.1}%)",
            thousands(self.vocabulary),
            thousands(self.hapaxes),
            100.0 * self.hapaxes as f64 / self.vocabulary.max(1) as f64
        )?;
        match self.zipf {
            Some(z) => writeln!(
                f,
                "zipf exponent     {:.3}  (ranks {}-{}, R² {:.3})",
                z.exponent, ZIPF_RANKS.0, ZIPF_RANKS.1, z.r_squared
            )?,
            None => writeln!(f, "zipf exponent     -")?,
        }
        match self.heaps {
            Some(h) => writeln!(
                f,
                "heaps exponent    {:.3}  (R² {:.3})",
                h.exponent, h.r_squared
            )?,
            None => writeln!(f, "heaps exponent    -")?,
        }
        writeln!(f, "top terms by document frequency:")?;
        writeln!(
            f,
            "  rank  term                      df     df%          cf"
        )?;
        for (i, (term, df, cf)) in self.top_terms.iter().enumerate() {
            writeln!(
                f,
                "  {:>4}  {:<20} {:>8}  {:>5.1}% {:>11}",
                i + 1,
                term,
                thousands(*df),
                pct(*df),
                thousands(*cf)
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use heddle::AnalyzerConfig;

    /// Issue 17: "1 segments", "1 problems found", "added 1 documents".
    #[test]
    fn plural_agrees_with_its_count() {
        assert_eq!(plural(0, "segment"), "0 segments");
        assert_eq!(plural(1, "segment"), "1 segment");
        assert_eq!(plural(2, "problem"), "2 problems");
        assert_eq!(plural(1, "query"), "1 query");
        assert_eq!(plural(1_200, "query"), "1,200 queries");
        assert_eq!(plural(3, "day"), "3 days");
        assert_eq!(plural(2, "pass"), "2 passes");
        assert_eq!(plural(2, "batch"), "2 batches");
        assert_eq!(plural(1, "commit thread"), "1 commit thread");
        assert_eq!(plural(2, "commit thread"), "2 commit threads");
    }

    #[test]
    fn counts_lengths_vocabulary_and_document_frequencies() {
        let docs = vec![
            Ok(Document::new(
                "1",
                "The virus",
                "the virus spreads. The end",
            )),
            Ok(Document::new("2", "Virus", "")),
            Ok(Document::new("3", "", "a b c d e f g h")),
        ];
        let s = corpus_stats(docs, &Analyzer::new(AnalyzerConfig::plain()), 2).unwrap();
        assert_eq!(s.docs, 3);
        assert_eq!(s.tokens, 7 + 1 + 8);
        assert_eq!(s.title_tokens, 3);
        assert_eq!(s.empty_texts, 1);
        assert_eq!((s.median_len, s.p99_len, s.max_len), (7, 8, 8));
        assert_eq!(s.vocabulary, 4 + 8);
        assert_eq!(s.hapaxes, 10);
        assert_eq!(
            s.top_terms,
            // Ties in document frequency are broken by the term, not by hash order.
            vec![("virus".to_string(), 2, 3), ("a".to_string(), 1, 1)]
        );
        let text = s.to_string();
        assert!(text.contains("documents         3"), "{text}");
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(171_332), "171,332");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
