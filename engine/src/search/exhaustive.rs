//! The exhaustive scorer: document-at-a-time over every posting of every query term.
//! Kept forever as the oracle that pruned paths are tested against.

use super::query::QueryTerm;
use super::topk::TopK;
use crate::error::Result;
use crate::field::Field;
use crate::index::Snapshot;
use crate::postings::TERMINATED;

pub(crate) fn top_k(
    snapshot: &Snapshot,
    field: Field,
    terms: &[QueryTerm],
    k: usize,
) -> Result<TopK> {
    let mut top = TopK::new(k);
    for (s, live) in snapshot.segments().iter().enumerate() {
        let segment = &live.reader;
        let base = snapshot.doc_base(s);
        let lengths = segment.lengths(field);
        let mut cursors = super::query::cursors_in_segment(segment, s, field, terms)?;
        loop {
            let doc = cursors
                .iter()
                .map(|(_, c)| c.doc())
                .min()
                .unwrap_or(TERMINATED);
            if doc == TERMINATED {
                break;
            }
            let len = lengths.get(doc);
            let mut score = 0.0;
            for (scorer, cursor) in cursors.iter_mut() {
                if cursor.doc() == doc {
                    score += scorer.score(cursor.tf(), len);
                    cursor.advance();
                }
            }
            if !live.is_deleted(doc) {
                top.push(score, base + doc as u64);
            }
        }
    }
    Ok(top)
}
