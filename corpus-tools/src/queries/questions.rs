//! Question-shaped queries like TREC-COVID's topics: function words around content words
//! of realistic document frequencies.
//!
//! TREC-COVID's 50 queries average 10.6 words ("how does the coronavirus respond to
//! changes in the weather"). Each template below is function words plus slots filled from
//! the frequency bands of [`BANDS`] — `F` frequent, `M` medium, `R` rare — and the ten
//! templates total 106 words; they are used in turn (in a seeded order), so 50 queries
//! average exactly 10.6 words.

use super::df::{BANDS, DfTable};
use super::terms::QuerySetError;
use crate::beir::Query;
use crate::synth::{Purpose, Stream};

/// The templates; `F`, `M` and `R` are slots, every other word is a function word.
pub const TEMPLATES: [&str; 10] = [
    "what is the F of M R in F M",
    "how does F M R the M of F R",
    "are there M R for F M among F M",
    "which F M are R with M F in R M",
    "what M F have been R against F M in M R",
    "can F M be R to M F during R",
    "how do F M and R M F in M R",
    "what is the R M of F M among F M R",
    "does F M R the M of F M",
    "what are the F M R for M F with R",
];

/// `count` question-shaped queries, ids `1`, `2`, … Each slot gets a distinct content
/// word from its band (from the nearest non-empty band if its own is empty).
pub fn question_queries(
    table: &DfTable,
    count: usize,
    seed: u64,
) -> Result<Vec<Query>, QuerySetError> {
    let bands: Vec<Vec<(&str, u32)>> = BANDS.iter().map(|b| table.band_terms(b)).collect();
    if bands.iter().all(Vec::is_empty) {
        return Err(QuerySetError::NoTerms { docs: table.docs });
    }
    // Templates in a seeded order, each used once per round of ten.
    let mut order: Vec<usize> = (0..TEMPLATES.len()).collect();
    let mut shuffle = Stream::new(seed, Purpose::Queries, u64::MAX);
    for i in (1..order.len()).rev() {
        order.swap(i, shuffle.below(i as u64 + 1) as usize);
    }
    let mut queries = Vec::with_capacity(count);
    for q in 0..count {
        let mut s = Stream::new(seed, Purpose::Queries, q as u64);
        let template = TEMPLATES[order[q % order.len()]];
        let mut used: Vec<&str> = Vec::new();
        let mut words: Vec<&str> = Vec::new();
        for token in template.split(' ') {
            let band = match token {
                "F" => 0,
                "M" => 1,
                "R" => 2,
                literal => {
                    words.push(literal);
                    continue;
                }
            };
            let terms = nearest_non_empty(&bands, band);
            // A few tries for a word not yet in this query; tiny bands may repeat.
            let mut pick = terms[s.below(terms.len() as u64) as usize].0;
            for _ in 0..8 {
                if !used.contains(&pick) {
                    break;
                }
                pick = terms[s.below(terms.len() as u64) as usize].0;
            }
            used.push(pick);
            words.push(pick);
        }
        queries.push(Query::new((q + 1).to_string(), words.join(" ")));
    }
    Ok(queries)
}

fn nearest_non_empty<'a, 'b>(
    bands: &'b [Vec<(&'a str, u32)>],
    want: usize,
) -> &'b [(&'a str, u32)] {
    (0..bands.len())
        .flat_map(|d| [want.checked_sub(d), Some(want + d)])
        .flatten()
        .find_map(|b| bands.get(b).filter(|terms| !terms.is_empty()))
        .expect("at least one band has terms")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queries::function_words::is_function_word;

    fn table() -> DfTable {
        let mut terms = Vec::new();
        for i in 0..30 {
            terms.push((format!("freq{i}"), 500));
            terms.push((format!("mid{i}"), 50));
            terms.push((format!("rare{i}"), 5));
        }
        DfTable::new(10_000, terms)
    }

    #[test]
    fn templates_total_106_words_of_function_words_and_slots() {
        let words: Vec<&str> = TEMPLATES.iter().flat_map(|t| t.split(' ')).collect();
        assert_eq!(words.len(), 106);
        for w in words {
            assert!(["F", "M", "R"].contains(&w) || is_function_word(w), "{w}");
        }
    }

    #[test]
    fn fifty_queries_average_ten_point_six_words_with_banded_slots() {
        let qs = question_queries(&table(), 50, 3).unwrap();
        let words: usize = qs.iter().map(|q| q.text.split(' ').count()).sum();
        assert_eq!(words, 530);
        for q in &qs {
            let content: Vec<&str> = q.text.split(' ').filter(|w| !is_function_word(w)).collect();
            assert!(content.iter().any(|w| w.starts_with("freq")), "{q:?}");
            assert!(content.iter().any(|w| w.starts_with("mid")), "{q:?}");
            assert!(content.iter().any(|w| w.starts_with("rare")), "{q:?}");
        }
        assert_eq!(qs, question_queries(&table(), 50, 3).unwrap());
        assert_ne!(qs, question_queries(&table(), 50, 4).unwrap());
    }

    #[test]
    fn empty_bands_borrow_from_the_nearest() {
        let t = DfTable::new(10_000, vec![("mid".into(), 50), ("mid2".into(), 60)]);
        let qs = question_queries(&t, 3, 0).unwrap();
        assert!(qs.iter().all(|q| q.text.contains("mid")));
    }
}
