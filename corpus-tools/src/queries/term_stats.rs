//! Document frequencies of a corpus's analyzed terms, each with a word that analyzes to it,
//! and each document's word count: what the query classes are drawn from.
//!
//! With a stemming analyzer a term is a stem (`recrimin`), which is not a word to put in a
//! query: analyzed again it may become another stem. So each term keeps the word it was
//! most often written as (`recrimination`), checked to analyze back to exactly that term.

use std::collections::HashMap;

use heddle::{Analyzer, Document};

use super::df::DfTable;
use crate::beir::BeirError;

/// One analyzed term of a corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermStat {
    /// The term as the index stores it.
    pub term: String,
    /// Documents containing it (title or text).
    pub df: u32,
    /// The word it is written as most often (collection frequency, then alphabetical)
    /// among those whose analysis is exactly `[term]`; `None` if no word is.
    pub word: Option<String>,
}

/// Every term of a corpus with its document frequency and a word for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermStats {
    pub docs: u64,
    /// Ordered by (document frequency descending, term ascending), like [`DfTable`].
    pub terms: Vec<TermStat>,
    /// Words the analyzer keeps in each document (title and text), in corpus order.
    pub doc_words: Vec<u32>,
}

impl TermStats {
    /// One pass over `docs`, analyzed by `analyzer`.
    pub fn from_corpus(
        docs: impl IntoIterator<Item = Result<Document, BeirError>>,
        analyzer: &Analyzer,
    ) -> Result<TermStats, BeirError> {
        // word -> (term id, collection frequency); term id -> (df, last document counted).
        let mut words: HashMap<String, (u32, u64)> = HashMap::new();
        let mut term_ids: HashMap<String, u32> = HashMap::new();
        let mut terms: Vec<(String, u32, u64)> = Vec::new();
        let mut doc_words = Vec::new();
        let mut scratch = String::new();
        for doc in docs {
            let doc = doc?;
            let n = doc_words.len() as u64 + 1;
            let mut count = 0u32;
            for field in [&doc.title, &doc.text] {
                analyzer.for_each_word(field, &mut scratch, |word| {
                    count = count.saturating_add(1);
                    let id = match words.get_mut(word) {
                        Some((id, cf)) => {
                            *cf += 1;
                            *id
                        }
                        None => {
                            let stem = analyzer.stem(word);
                            let id = match term_ids.get(stem.as_ref()) {
                                Some(&id) => id,
                                None => {
                                    let id = terms.len() as u32;
                                    term_ids.insert(stem.to_string(), id);
                                    terms.push((stem.into_owned(), 0, 0));
                                    id
                                }
                            };
                            words.insert(word.to_string(), (id, 1));
                            id
                        }
                    };
                    let (_, df, last) = &mut terms[id as usize];
                    if *last != n {
                        *df += 1;
                        *last = n;
                    }
                });
            }
            doc_words.push(count);
        }
        // The best word per term: a total order, so hash-map iteration order cannot matter.
        let mut best: Vec<Option<(&str, u64)>> = vec![None; terms.len()];
        for (word, &(id, cf)) in &words {
            let slot = &mut best[id as usize];
            let better = match slot {
                None => true,
                Some((w, c)) => cf > *c || (cf == *c && word.as_str() < *w),
            };
            if better && analyzer.tokens(word) == [terms[id as usize].0.as_str()] {
                *slot = Some((word, cf));
            }
        }
        let mut terms: Vec<TermStat> = terms
            .iter()
            .zip(best)
            .map(|((term, df, _), word)| TermStat {
                term: term.clone(),
                df: *df,
                word: word.map(|(w, _)| w.to_string()),
            })
            .collect();
        terms.sort_unstable_by(|a, b| b.df.cmp(&a.df).then_with(|| a.term.cmp(&b.term)));
        Ok(TermStats {
            docs: doc_words.len() as u64,
            terms,
            doc_words,
        })
    }

    /// The same counts as a [`DfTable`] (what the `sampled` class draws from).
    pub fn df_table(&self) -> DfTable {
        DfTable::new(
            self.docs,
            self.terms.iter().map(|t| (t.term.clone(), t.df)).collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use heddle::AnalyzerConfig;

    fn docs() -> Vec<Result<Document, BeirError>> {
        vec![
            Ok(Document::new("1", "Studies", "the studies studied a study")),
            Ok(Document::new("2", "", "studying viruses")),
            Ok(Document::new("3", "Virus", "")),
        ]
    }

    #[test]
    fn stems_keep_their_most_written_word() {
        let english = Analyzer::new(AnalyzerConfig::english());
        let t = TermStats::from_corpus(docs(), &english).unwrap();
        assert_eq!(t.docs, 3);
        assert_eq!(t.doc_words, [4, 2, 1], "stop words are not counted");
        let studi = t.terms.iter().find(|s| s.term == "studi").unwrap();
        assert_eq!((studi.df, studi.word.as_deref()), (2, Some("studies")));
        let virus = t.terms.iter().find(|s| s.term == "virus").unwrap();
        assert_eq!((virus.df, virus.word.as_deref()), (2, Some("virus")));
    }

    #[test]
    fn df_table_matches_the_one_counted_directly() {
        for config in [AnalyzerConfig::plain(), AnalyzerConfig::english()] {
            let a = Analyzer::new(config);
            assert_eq!(
                TermStats::from_corpus(docs(), &a).unwrap().df_table(),
                DfTable::from_corpus(docs(), &a).unwrap()
            );
        }
    }
}
