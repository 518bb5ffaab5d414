//! heddle's BM25 against a naive implementation written here from the formula, over the
//! raw fixture text: every score equal within 1e-6, same order.

mod common;

use std::collections::HashMap;

use heddle::{Analyzer, AnalyzerConfig, Bm25Params, Field, Index, IndexSettings, SearchOptions};

/// Scores every document from scratch: tokenise, count, apply the formula.
fn naive(
    docs: &[heddle::Document],
    field: Field,
    analyzer: &Analyzer,
    query: &str,
    p: Bm25Params,
) -> Vec<(String, f64)> {
    let tokenised: Vec<Vec<String>> = docs
        .iter()
        .map(|d| {
            let mut t = Vec::new();
            if field != Field::Text {
                t.extend(analyzer.tokens(&d.title));
            }
            if field != Field::Title {
                t.extend(analyzer.tokens(&d.text));
            }
            t
        })
        .collect();
    let n = docs.len() as f64;
    let avgdl = tokenised.iter().map(|t| t.len()).sum::<usize>() as f64 / n;
    let mut qtf: HashMap<String, f64> = HashMap::new();
    for t in analyzer.tokens(query) {
        *qtf.entry(t).or_default() += 1.0;
    }
    let mut scored = Vec::new();
    for (doc, tokens) in docs.iter().zip(&tokenised) {
        let mut score = 0.0;
        let mut matched = false;
        for (term, q) in &qtf {
            let tf = tokens.iter().filter(|t| *t == term).count() as f64;
            if tf == 0.0 {
                continue;
            }
            matched = true;
            let df = tokenised.iter().filter(|ts| ts.contains(term)).count() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            let dl = tokens.len() as f64;
            score += q * idf * tf * (p.k1 + 1.0) / (tf + p.k1 * (1.0 - p.b + p.b * dl / avgdl));
        }
        if matched {
            scored.push((doc.id.clone(), score));
        }
    }
    // Ties: ascending insertion order, which is internal doc id order.
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored
}

fn check(config: AnalyzerConfig, segments: usize, per_field: bool) {
    let docs = common::fixture();
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(
        dir.path(),
        IndexSettings {
            analyzer: config.clone(),
            per_field,
            ..Default::default()
        },
    )
    .unwrap();
    let mut writer = index.writer().unwrap();
    // Split across several commits so that N, df and avgdl must be summed over segments.
    for chunk in docs.chunks(docs.len().div_ceil(segments)) {
        for d in chunk {
            writer.add(d.clone()).unwrap();
        }
        writer.commit().unwrap();
    }
    assert_eq!(index.segments().len(), segments);
    let analyzer = Analyzer::new(config);
    let queries = [
        "coronavirus transmission",
        "bats bat",
        "droplets droplets masks",
        "immune response antibodies",
        "hospital",
        "the of and",
        "nothing-matches-this zzz",
    ];
    let fields: &[Field] = if per_field {
        &Field::ALL
    } else {
        &[Field::Flat]
    };
    for &field in fields {
        for params in [
            Bm25Params::default(),
            Bm25Params { k1: 0.9, b: 0.4 },
            Bm25Params { k1: 2.0, b: 1.0 },
        ] {
            for q in queries {
                let expected = naive(&docs, field, &analyzer, q, params);
                let got = index
                    .searcher()
                    .search(
                        q,
                        &SearchOptions {
                            k: 100,
                            bm25: params,
                            field,
                        },
                    )
                    .unwrap();
                let got: Vec<(String, f64)> = got.into_iter().map(|h| (h.id, h.score)).collect();
                assert_eq!(
                    got.len(),
                    expected.len(),
                    "{field:?} {q:?} {params:?}: {got:?} vs {expected:?}"
                );
                for (g, e) in got.iter().zip(&expected) {
                    assert!(
                        (g.1 - e.1).abs() < 1e-6,
                        "{field:?} {q:?} {params:?}: {got:?} vs {expected:?}"
                    );
                }
                // Same order; equal scores may only swap between equal-score neighbours,
                // and heddle breaks those by insertion order, as the stable sort above does.
                let got_ids: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
                let expected_ids: Vec<&str> = expected.iter().map(|e| e.0.as_str()).collect();
                assert_eq!(got_ids, expected_ids, "{field:?} {q:?} {params:?}");
            }
        }
    }
}

#[test]
fn bm25_matches_naive_reference_plain_one_segment() {
    check(AnalyzerConfig::plain(), 1, false);
}

#[test]
fn bm25_matches_naive_reference_english_three_segments() {
    check(AnalyzerConfig::english(), 3, false);
}

#[test]
fn bm25_per_field_matches_naive_reference_on_title_text_and_flat() {
    check(AnalyzerConfig::english(), 2, true);
}

#[test]
fn searching_a_field_the_index_lacks_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(dir.path(), IndexSettings::default()).unwrap();
    let opts = SearchOptions {
        field: Field::Title,
        ..Default::default()
    };
    let err = index.searcher().search("x", &opts).unwrap_err();
    assert!(err.to_string().contains("per-field"), "{err}");
}
