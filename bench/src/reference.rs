//! A reference BM25, written from the formula and independent of both engines' scoring
//! code, that reproduces each engine's score of a document under that engine's length
//! model: heddle's exact length in f64, and tantivy's one-byte length code in f32.
//!
//! The agreement check uses it on the queries whose top 10 differ beyond ties: if every
//! document in question gets exactly heddle's score with its exact length and exactly
//! tantivy's score with its coded length, the two engines computed the same function of
//! the same tokens and statistics, and the difference in their top 10 is the length
//! encoding and nothing else.
//!
//! ```text
//! score(d) = Σ_t qtf(t) · idf(t) · (k1 + 1) · tf / (tf + k1 · (1 − b + b · dl / avgdl))
//! idf(t)   = ln(1 + (N − df + 0.5) / (df + 0.5)),   k1 = 1.2, b = 0.75
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use heddle::Analyzer;
use tantivy::fieldnorm::FieldNormReader;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The collection statistics BM25 reads: the same for both engines on the same tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectionStats {
    pub docs: u64,
    pub total_tokens: u64,
    pub df: HashMap<String, u64>,
}

/// One document's analysed flat field: its length and its term frequencies.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DocTerms {
    pub len: u32,
    pub tf: HashMap<String, u32>,
}

impl DocTerms {
    pub fn of(analyzer: &Analyzer, title: &str, text: &str) -> Self {
        let mut d = DocTerms::default();
        let mut scratch = String::new();
        for part in [title, text] {
            analyzer.for_each_token(part, &mut scratch, |t| {
                d.len += 1;
                *d.tf.entry(t.to_string()).or_insert(0) += 1;
            });
        }
        d
    }
}

/// A query as BM25 sees it: each distinct token with its count.
pub fn query_terms(analyzer: &Analyzer, query: &str) -> BTreeMap<String, u32> {
    let mut q = BTreeMap::new();
    for t in analyzer.tokens(query) {
        *q.entry(t).or_insert(0) += 1;
    }
    q
}

/// BM25's two parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    pub k1: f64,
    pub b: f64,
}

/// heddle's model: exact length, f64 throughout, at k1 1.2 and b 0.75.
pub fn score_exact(stats: &CollectionStats, query: &BTreeMap<String, u32>, doc: &DocTerms) -> f64 {
    score_exact_with(&Params { k1: K1, b: B }, stats, query, doc)
}

/// heddle's model at any k1 and b.
pub fn score_exact_with(
    p: &Params,
    stats: &CollectionStats,
    query: &BTreeMap<String, u32>,
    doc: &DocTerms,
) -> f64 {
    let n = stats.docs as f64;
    let avgdl = stats.total_tokens as f64 / n;
    let mut score = 0.0;
    for (term, &qtf) in query {
        let (Some(&tf), Some(&df)) = (doc.tf.get(term), stats.df.get(term)) else {
            continue;
        };
        let idf = (1.0 + (n - df as f64 + 0.5) / (df as f64 + 0.5)).ln();
        let tf = tf as f64;
        score += qtf as f64 * idf * (p.k1 + 1.0) * tf
            / (tf + p.k1 * (1.0 - p.b + p.b * doc.len as f64 / avgdl));
    }
    score
}

/// Lucene 9's BM25Similarity as its source computes it: N is `docCount` (the documents
/// holding a token of the field), the length is the one-byte norm's (the same code as
/// tantivy's), the idf and the per-length factor are rounded to f32, a term scores
/// `w − w / (1 + tf · norm)` with `w = boost · idf` — without the constant factor
/// k1 + 1, which Lucene dropped in 8.0 (it changes no ranking) — and the clauses are
/// summed in f64, then rounded to f32.
pub fn score_lucene(
    p: &Params,
    stats: &CollectionStats,
    query: &BTreeMap<String, u32>,
    doc: &DocTerms,
) -> f64 {
    let (k1, b) = (p.k1 as f32, p.b as f32);
    let doc_count = stats.docs as f64;
    let avgdl = (stats.total_tokens as f64 / doc_count) as f32;
    let len = coded_length(doc.len) as f32;
    let norm = 1f32 / (k1 * ((1f32 - b) + b * len / avgdl));
    let mut score = 0f64;
    for (term, &qtf) in query {
        let (Some(&tf), Some(&df)) = (doc.tf.get(term), stats.df.get(term)) else {
            continue;
        };
        let idf = (1.0 + (doc_count - df as f64 + 0.5) / (df as f64 + 0.5)).ln() as f32;
        let w = qtf as f32 * idf;
        score += (w - w / (1f32 + tf as f32 * norm)) as f64;
    }
    score as f32 as f64
}

/// tantivy's length code: the largest code value not above the length.
pub fn coded_length(len: u32) -> u32 {
    FieldNormReader::id_to_fieldnorm(FieldNormReader::fieldnorm_to_id(len))
}

/// tantivy's model: the coded length, f32 arithmetic.
pub fn score_coded(stats: &CollectionStats, query: &BTreeMap<String, u32>, doc: &DocTerms) -> f64 {
    let (k1, b) = (K1 as f32, B as f32);
    let avgdl = stats.total_tokens as f32 / stats.docs as f32;
    let len = coded_length(doc.len) as f32;
    let mut score = 0f32;
    for (term, &qtf) in query {
        let (Some(&tf), Some(&df)) = (doc.tf.get(term), stats.df.get(term)) else {
            continue;
        };
        let idf = (1.0 + ((stats.docs - df) as f32 + 0.5) / (df as f32 + 0.5)).ln();
        let tf = tf as f32;
        score += qtf as f32 * idf * (1.0 + k1) * (tf / (tf + k1 * (1.0 - b + b * len / avgdl)));
    }
    score as f64
}

/// Reads the documents named in `ids` from a BEIR corpus and analyses them.
pub fn read_docs(
    corpus: &Path,
    ids: &HashSet<String>,
    analyzer: &Analyzer,
) -> anyhow::Result<HashMap<String, DocTerms>> {
    let mut out = HashMap::with_capacity(ids.len());
    for doc in heddle_corpus::beir::open_corpus(corpus)? {
        let doc = doc?;
        if ids.contains(&doc.id) {
            out.insert(
                doc.id.clone(),
                DocTerms::of(analyzer, &doc.title, &doc.text),
            );
            if out.len() == ids.len() {
                break;
            }
        }
    }
    Ok(out)
}

/// Every token `analyzer` makes of the corpus's titles and texts: heddle's total
/// length of the flat field, which its BM25 divides by N for the mean length.
pub fn total_tokens(corpus: &Path, analyzer: &Analyzer) -> anyhow::Result<u64> {
    let mut total = 0u64;
    let mut scratch = String::new();
    for doc in heddle_corpus::beir::open_corpus(corpus)? {
        let doc = doc?;
        for part in [&doc.title, &doc.text] {
            analyzer.for_each_token(part, &mut scratch, |_| total += 1);
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use heddle::AnalyzerConfig;

    #[test]
    fn the_total_counts_every_token_of_titles_and_texts() {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("corpus.jsonl");
        std::fs::write(
            &corpus,
            "{\"_id\":\"1\",\"title\":\"Bats and Viruses\",\"text\":\"The viruses of bats.\"}\n\
             {\"_id\":\"2\",\"text\":\"running dogs\"}\n",
        )
        .unwrap();
        let a = Analyzer::new(AnalyzerConfig::lucene_english());
        let want = DocTerms::of(&a, "Bats and Viruses", "The viruses of bats.").len
            + DocTerms::of(&a, "", "running dogs").len;
        assert_eq!(want, 6, "stop words dropped");
        assert_eq!(total_tokens(&corpus, &a).unwrap(), u64::from(want));
    }

    #[test]
    fn the_length_code_is_exact_to_40_then_rounds_down() {
        for len in 0..=40 {
            assert_eq!(coded_length(len), len);
        }
        assert_eq!(coded_length(41), 40);
        assert_eq!(coded_length(43), 42);
        assert_eq!(coded_length(100), 96);
        assert_eq!(coded_length(160), 152);
        for len in [41u32, 100, 160, 1_000, 10_000] {
            let c = coded_length(len);
            assert!(
                c <= len && (len - c) as f64 <= len as f64 / 8.0,
                "{len} → {c}"
            );
        }
    }

    #[test]
    fn both_models_agree_on_short_documents_and_part_on_long_ones() {
        let analyzer = Analyzer::new(AnalyzerConfig::english());
        let (virus, bat) = (
            analyzer.tokens("virus").remove(0),
            analyzer.tokens("bats").remove(0),
        );
        let q = query_terms(&analyzer, "virus bats virus");
        assert_eq!(q.get(&virus), Some(&2), "{q:?}");
        let stats = CollectionStats {
            docs: 1_000,
            total_tokens: 100_000,
            df: [(virus, 10), (bat, 100)].into_iter().collect(),
        };
        let short = DocTerms::of(&analyzer, "Bats", "a virus in bats");
        assert_eq!(short.len, 3);
        let (e, c) = (
            score_exact(&stats, &q, &short),
            score_coded(&stats, &q, &short),
        );
        assert!((e - c).abs() / e < 1e-6, "{e} vs {c}");
        let long_text = "virus ".to_string() + &"word ".repeat(99);
        let long = DocTerms::of(&analyzer, "", &long_text);
        assert_eq!(long.len, 100);
        let (e, c) = (
            score_exact(&stats, &q, &long),
            score_coded(&stats, &q, &long),
        );
        assert!(
            c > e,
            "a coded length of 96 scores above the exact 100: {e} vs {c}"
        );
    }

    #[test]
    fn lucenes_model_is_the_coded_one_without_k1_plus_1() {
        let analyzer = Analyzer::new(AnalyzerConfig::english());
        let q = query_terms(&analyzer, "virus bats virus");
        let stats = CollectionStats {
            docs: 1_000,
            total_tokens: 100_000,
            df: q.keys().map(|t| (t.clone(), 10)).collect(),
        };
        let p = Params { k1: 1.2, b: 0.75 };
        for text in [
            "a virus in bats",
            &("virus ".to_string() + &"word ".repeat(99)),
        ] {
            let d = DocTerms::of(&analyzer, "", text);
            let (l, c) = (
                score_lucene(&p, &stats, &q, &d),
                score_coded(&stats, &q, &d),
            );
            assert!(((p.k1 + 1.0) * l - c).abs() / c < 1e-5, "{l} vs {c}");
        }
        // Another k1 and b change it as they change heddle's exact score.
        let d = DocTerms::of(&analyzer, "", "a virus in bats");
        let p2 = Params { k1: 0.9, b: 0.4 };
        let (l, e) = (
            score_lucene(&p2, &stats, &q, &d),
            score_exact_with(&p2, &stats, &q, &d),
        );
        assert!(((p2.k1 + 1.0) * l - e).abs() / e < 1e-5, "{l} vs {e}");
    }
}
