//! Walks a whole postings list and checks every posting against what its readers assume.
//! `check_index` and the merger both run this one check, so a list `check` calls damaged
//! can never be quietly rewritten by a merge into one `check` calls sound.

use super::{PostingsList, RATIO_SCALE, TERMINATED};

/// Visits every posting of `list` in order and returns what is wrong with it, in words
/// (the caller adds the file and the term); empty when it is sound. A sound list has
/// doc ids below `doc_count` and strictly increasing, every posting covered by its block's
/// bound (tf at least 1 and at most the block's max tf, length per occurrence at least the
/// block's minimum; or pruning could skip a document the exhaustive path would rank), and
/// exactly `df` postings.
///
/// `visit(doc, tf)` sees each posting that is in range and in order; the walk stops at
/// the first that is not, so `visit` never sees a doc id outside the segment.
pub(crate) fn verify(
    list: &PostingsList<'_>,
    doc_count: u32,
    doc_len: impl Fn(u32) -> u32,
    mut visit: impl FnMut(u32, u32),
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut cursor = list.cursor();
    let (mut count, mut last, mut bounds_ok) = (0u32, None, true);
    while cursor.doc() != TERMINATED {
        let doc = cursor.doc();
        if doc >= doc_count || last.is_some_and(|l| doc <= l) {
            problems.push(format!("doc {doc} out of order or range"));
            break;
        }
        let (tf, len) = (cursor.tf(), doc_len(doc));
        // One report per list: a bad skip entry usually covers a whole block.
        let bound = cursor.block_bound();
        if bounds_ok && !bound.covers(tf, len) {
            bounds_ok = false;
            problems.push(format!(
                "doc {doc} (tf {tf}, length {len}) exceeds its block's bounds \
                 (max tf {}, min length per occurrence {}/{RATIO_SCALE}, inner {:?})",
                bound.max_tf, bound.min_ratio, bound.inner
            ));
        }
        visit(doc, tf);
        last = Some(doc);
        count += 1;
        cursor.advance();
    }
    if count != list.df() {
        problems.push(format!("{count} postings, dictionary says {}", list.df()));
    }
    problems
}
