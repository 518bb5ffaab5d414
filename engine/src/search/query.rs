//! A query prepared against one snapshot: analyzed, deduplicated, with global statistics.

use crate::analysis::Analyzer;
use crate::field::Field;
use crate::index::Snapshot;
use crate::search::bm25::{self, Bm25Params, TermScorer};

/// One distinct query term with its snapshot-wide statistics.
#[derive(Debug, Clone)]
pub(crate) struct QueryTerm {
    pub term: String,
    /// Occurrences in the query: a repeated word weighs more, as in Anserini's
    /// bag-of-words queries.
    pub query_tf: u32,
    /// Documents containing the term, over all segments.
    pub df: u64,
    pub scorer: TermScorer,
}

/// Terms sorted by their bytes, so that a score is always summed in the same order
/// whichever path computes it (the oracle and the pruned paths agree bit for bit).
pub(crate) fn prepare(
    query: &str,
    analyzer: &Analyzer,
    snapshot: &Snapshot,
    field: Field,
    params: Bm25Params,
) -> Vec<QueryTerm> {
    let mut tokens = analyzer.tokens(query);
    tokens.sort_unstable();
    let n = snapshot.doc_count();
    let avgdl = if n == 0 {
        0.0
    } else {
        snapshot.tokens(field) as f64 / n as f64
    };
    let mut terms: Vec<QueryTerm> = Vec::new();
    for token in tokens {
        if let Some(last) = terms.last_mut()
            && last.term == token
        {
            last.query_tf += 1;
            continue;
        }
        let df = snapshot
            .segments()
            .iter()
            .filter_map(|s| s.reader.term_info(field, &token))
            .map(|info| info.df as u64)
            .sum();
        terms.push(QueryTerm {
            term: token,
            query_tf: 1,
            df,
            scorer: TermScorer::new(params, 0.0, 1, avgdl),
        });
    }
    terms.retain(|t| t.df > 0);
    for t in &mut terms {
        t.scorer = TermScorer::new(params, bm25::idf(n, t.df), t.query_tf, avgdl);
    }
    terms
}
