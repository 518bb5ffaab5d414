//! Document frequencies of a corpus's terms, and the frequency bands query terms come from.

use std::collections::HashMap;

use heddle::{Analyzer, Document};

use super::function_words::is_content_word;
use crate::beir::BeirError;

/// Each term of a corpus with the number of documents containing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DfTable {
    pub docs: u64,
    /// Ordered by (document frequency descending, term ascending).
    pub terms: Vec<(String, u32)>,
}

/// A document-frequency band: the terms in `[min_fraction, max_fraction)` of the
/// documents, and in at least `min_docs` documents.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    pub name: &'static str,
    pub min_fraction: f64,
    pub max_fraction: f64,
    pub min_docs: u32,
}

/// The bands query terms are drawn from. Above 10% of the documents a term is nearly a
/// stop word; below 0.01% (17 documents of TREC-COVID's 171,332) it is a typo or a name.
pub const BANDS: [Band; 3] = [
    Band {
        name: "frequent",
        min_fraction: 0.01,
        max_fraction: 0.10,
        min_docs: 3,
    },
    Band {
        name: "medium",
        min_fraction: 0.001,
        max_fraction: 0.01,
        min_docs: 3,
    },
    Band {
        name: "rare",
        min_fraction: 0.0001,
        max_fraction: 0.001,
        min_docs: 3,
    },
];

impl DfTable {
    /// Counts document frequencies over `docs` (title and text), tokenized by `analyzer`.
    pub fn from_corpus(
        docs: impl IntoIterator<Item = Result<Document, BeirError>>,
        analyzer: &Analyzer,
    ) -> Result<DfTable, BeirError> {
        // term -> (df, last document that counted it)
        let mut counts: HashMap<String, (u32, u64)> = HashMap::new();
        let mut scratch = String::new();
        let mut n = 0u64;
        for doc in docs {
            let doc = doc?;
            n += 1;
            for field in [&doc.title, &doc.text] {
                analyzer.for_each_token(field, &mut scratch, |tok| match counts.get_mut(tok) {
                    Some((df, last)) => {
                        if *last != n {
                            *df += 1;
                            *last = n;
                        }
                    }
                    None => {
                        counts.insert(tok.to_string(), (1, n));
                    }
                });
            }
        }
        Ok(DfTable::new(
            n,
            counts.into_iter().map(|(t, (df, _))| (t, df)).collect(),
        ))
    }

    /// A table from unordered (term, df) pairs.
    pub fn new(docs: u64, mut terms: Vec<(String, u32)>) -> DfTable {
        terms.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        DfTable { docs, terms }
    }

    /// The content words (see [`BANDS`]) whose document frequency lies in `band`, in
    /// table order.
    pub fn band_terms(&self, band: &Band) -> Vec<(&str, u32)> {
        let lo = (band.min_fraction * self.docs as f64).max(band.min_docs as f64);
        let hi = band.max_fraction * self.docs as f64;
        self.terms
            .iter()
            .filter(|(t, df)| {
                let df = *df as f64;
                df >= lo && df < hi && is_content_word(t)
            })
            .map(|(t, df)| (t.as_str(), *df))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use heddle::AnalyzerConfig;

    #[test]
    fn counts_each_term_once_per_document() {
        let docs = vec![
            Ok(Document::new("1", "Virus virus", "the virus spreads")),
            Ok(Document::new("2", "", "virus load")),
        ];
        let t = DfTable::from_corpus(docs, &Analyzer::new(AnalyzerConfig::plain())).unwrap();
        assert_eq!(t.docs, 2);
        assert_eq!(t.terms[0], ("virus".to_string(), 2));
        assert_eq!(t.terms[1], ("load".to_string(), 1));
        assert_eq!(t.terms.len(), 4);
    }

    #[test]
    fn bands_select_by_fraction_and_skip_function_words() {
        let t = DfTable::new(
            10_000,
            vec![
                ("common".into(), 5_000),
                ("which".into(), 500),
                ("spike".into(), 500),
                ("ace2".into(), 50),
                ("orf8".into(), 5),
                ("typo".into(), 2),
            ],
        );
        let names = |b: &Band| -> Vec<String> {
            t.band_terms(b).iter().map(|(w, _)| w.to_string()).collect()
        };
        assert_eq!(names(&BANDS[0]), ["spike"]);
        assert_eq!(names(&BANDS[1]), ["ace2"]);
        assert_eq!(names(&BANDS[2]), ["orf8"]);
    }
}
