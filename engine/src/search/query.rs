//! A query prepared against one snapshot: analyzed, deduplicated, with global statistics.

use crate::analysis::Analyzer;
use crate::error::Result;
use crate::field::Field;
use crate::index::Snapshot;
use crate::postings::PostingsCursor;
use crate::search::bm25::{self, Bm25Params, TermScorer};
use crate::segment::SegmentReader;
use crate::termdict::TermInfo;

/// One distinct query term, ready to score: its BM25 weight from snapshot-wide df (a word
/// repeated in the query weighs by its count, as in Anserini's bag-of-words queries).
#[derive(Debug, Clone)]
pub(crate) struct QueryTerm {
    /// The term's dictionary entry in each segment of the snapshot (looked up once here,
    /// reused by the scorers).
    pub infos: Vec<Option<TermInfo>>,
    pub scorer: TermScorer,
}

/// Terms sorted by their bytes, so that a score is always summed in the same order
/// whichever path computes it (the oracle and the pruned paths agree bit for bit). An
/// error if a dictionary block a term is looked up in is damaged.
pub(crate) fn prepare(
    query: &str,
    analyzer: &Analyzer,
    snapshot: &Snapshot,
    field: Field,
    params: Bm25Params,
) -> Result<Vec<QueryTerm>> {
    let mut tokens = analyzer.tokens(query);
    tokens.sort_unstable();
    let n = snapshot.doc_count();
    let avgdl = if n == 0 {
        0.0
    } else {
        snapshot.tokens(field) as f64 / n as f64
    };
    // Distinct tokens with their counts in the query.
    let mut counted: Vec<(String, u32)> = Vec::new();
    for token in tokens {
        match counted.last_mut() {
            Some((last, count)) if *last == token => *count += 1,
            _ => counted.push((token, 1)),
        }
    }
    let mut terms = Vec::with_capacity(counted.len());
    for (term, query_tf) in counted {
        let infos: Vec<Option<TermInfo>> = snapshot
            .segments()
            .iter()
            .map(|s| s.reader.term_info(field, &term))
            .collect::<Result<_>>()?;
        let df: u64 = infos.iter().flatten().map(|info| info.df as u64).sum();
        if df == 0 {
            continue;
        }
        terms.push(QueryTerm {
            scorer: TermScorer::new(params, bm25::idf(n, df), query_tf, avgdl),
            infos,
        });
    }
    Ok(terms)
}

/// A cursor on the postings in segment `s` (of the snapshot `terms` were prepared
/// against) of each term it holds, with the term's scorer, in the query's term order:
/// the order in which a document's term scores are summed, whichever path sums them.
pub(crate) fn cursors_in_segment<'a>(
    segment: &'a SegmentReader,
    s: usize,
    field: Field,
    terms: &[QueryTerm],
) -> Result<Vec<(TermScorer, PostingsCursor<'a>)>> {
    let mut cursors = Vec::with_capacity(terms.len());
    for term in terms {
        if let Some(info) = term.infos[s] {
            cursors.push((term.scorer, segment.postings(field, &info)?.cursor()));
        }
    }
    Ok(cursors)
}
