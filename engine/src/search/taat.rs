//! Term at a time, a window of documents at a time: every posting of each query term
//! scored a block at a time into one sum per document of a window of consecutive doc
//! ids, and the window's sums read in doc order into the top k.
//!
//! Nothing is pruned. Where MaxScore cannot prune much (a deep k over frequent terms:
//! the thousandth best score is low, so almost every posting may still matter), it pays
//! per posting for merging the lists document by document and for bound tests that
//! rarely skip; this pays only the decode, the score and one addition into a slot.
//! Exactly equal to the oracle: a document's sum is taken term by term in the query's
//! term order, the order in which the oracle adds a document's terms, so the scores are
//! the same bit for bit, and [`TopK`] orders ties by doc whatever the order of pushes.

use super::query::QueryTerm;
use super::topk::TopK;
use crate::error::Result;
use crate::field::Field;
use crate::index::Snapshot;
use crate::postings::{BLOCK_LEN, TERMINATED};

/// Documents summed at once: the sums of a window of this many consecutive doc ids
/// (16 KiB of f64) stay in the first-level cache while every term's postings in the
/// window are added to them. One array the size of the segment would be touched at
/// random, a cache miss a posting once it outgrows the cache.
const WINDOW: usize = 2048;

/// The sums of one window, indexed by doc − the window's first doc, and which of them
/// some posting reached (the others are not matches and are never ranked).
struct Window {
    sums: [f64; WINDOW],
    matched: [u64; WINDOW / 64],
}

/// MaxScore is kept for a query whose most frequent term's documents number more than
/// this many times k; at or under it, every posting is summed here instead.
///
/// Measured with `cargo run --release -p heddle --example text_paths -- INDEX
/// QUERIES.txt K 3` (each query warm, best of three; both paths must rank alike), three
/// runs, this path's time over MaxScore's, median: on the 171,332-document synthetic
/// corpus's 1,000 bench queries 0.66× at k = 1,000, 0.91× at k = 100 and 1.38× at k =
/// 10; on SciFact (no term in more than 5,183 documents) 0.54×, 0.50× and 0.72×. Query
/// by query the crossover sits near df/k ≈ 300–1,000: below it this path wins, above it
/// MaxScore prunes enough to win (at k = 10, queries whose most frequent term is in
/// 3,000–10,000 times k documents took MaxScore 0.6–0.7× this path's time). Planned at
/// 500, the 171k queries took 0.66×, 0.96× and 1.00× MaxScore's time.
const DF_PER_K: u64 = 500;

/// Whether this path should answer the top `k` of `terms`: when the most frequent term's
/// documents (over the snapshot) are at most [`DF_PER_K`] × k, the k-th best score is
/// too low for MaxScore to skip much.
pub(crate) fn pays_for(terms: &[QueryTerm], k: usize) -> bool {
    let most = terms
        .iter()
        .map(|t| {
            t.infos
                .iter()
                .flatten()
                .map(|i| u64::from(i.df))
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0);
    most <= (k as u64).saturating_mul(DF_PER_K)
}

pub(crate) fn top_k(
    snapshot: &Snapshot,
    field: Field,
    terms: &[QueryTerm],
    k: usize,
) -> Result<TopK> {
    let mut top = TopK::new(k);
    if k == 0 {
        return Ok(top);
    }
    let mut window = Box::new(Window {
        sums: [0.0; WINDOW],
        matched: [0; WINDOW / 64],
    });
    let mut lens = [0u32; BLOCK_LEN];
    let mut scores = [0f64; BLOCK_LEN];
    for (s, live) in snapshot.segments().iter().enumerate() {
        let segment = &live.reader;
        let base = snapshot.doc_base(s);
        let lengths = segment.lengths(field);
        let mut cursors = super::query::cursors_in_segment(segment, s, field, terms)?;
        loop {
            let first = cursors
                .iter()
                .map(|(_, c)| c.doc())
                .min()
                .unwrap_or(TERMINATED);
            if first == TERMINATED {
                break;
            }
            let start = first - first % WINDOW as u32;
            let end = start.saturating_add(WINDOW as u32);
            for (scorer, cursor) in cursors.iter_mut() {
                while cursor.doc() < end {
                    let (docs, tfs_minus_1) = cursor.rest_of_block();
                    if docs.is_empty() {
                        break; // only a damaged list has an empty block before its end
                    }
                    // At least one: the cursor's own doc is in the window.
                    let n = docs.partition_point(|&d| d < end).max(1);
                    let (docs, tfs_minus_1) = (&docs[..n], &tfs_minus_1[..n]);
                    lengths.get_many(docs, &mut lens);
                    // The scores first, in a loop of their own that the compiler can
                    // run several postings to an instruction; then the additions.
                    for ((s, &tf), &len) in scores.iter_mut().zip(tfs_minus_1).zip(&lens) {
                        *s = scorer.score(tf.wrapping_add(1), len);
                    }
                    for (&d, &score) in docs.iter().zip(&scores) {
                        // A doc before the window (only a damaged list goes backwards)
                        // wraps far past it and is dropped.
                        let at = d.wrapping_sub(start) as usize;
                        if at < WINDOW {
                            window.sums[at] += score;
                            window.matched[at / 64] |= 1 << (at % 64);
                        }
                    }
                    cursor.advance_in_block(n);
                }
            }
            // Documents come in ascending order, so one that only ties the worst kept
            // score loses to it: most of a deep disjunction's matches are turned away
            // by one comparison.
            let mut worst = top.threshold().unwrap_or(f64::NEG_INFINITY);
            for (w, word) in window.matched.iter_mut().enumerate() {
                let mut bits = std::mem::take(word);
                while bits != 0 {
                    let at = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let score = std::mem::take(&mut window.sums[at]);
                    let doc = start + at as u32;
                    if score > worst && !live.is_deleted(doc) {
                        top.push(score, base + u64::from(doc));
                        worst = top.threshold().unwrap_or(f64::NEG_INFINITY);
                    }
                }
            }
        }
    }
    Ok(top)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::bm25::{Bm25Params, TermScorer};
    use crate::termdict::TermInfo;

    /// A query term in as many documents of each segment as `dfs` says.
    fn term(dfs: &[u32]) -> QueryTerm {
        QueryTerm {
            infos: dfs
                .iter()
                .map(|&df| {
                    Some(TermInfo {
                        postings_offset: 0,
                        postings_len: 0,
                        df,
                    })
                })
                .collect(),
            scorer: TermScorer::new(Bm25Params::default(), 1.0, 1, 10.0),
        }
    }

    #[test]
    fn the_plan_sums_term_at_a_time_when_k_is_deep_against_the_most_frequent_term() {
        // The most frequent term is in 30,000 + 20,000 documents over two segments; the
        // rare one's 15 must not be added to it.
        let terms = [term(&[30_000, 20_000]), term(&[10, 5])];
        assert!(pays_for(&terms, 100)); // 50,000 ≤ 500 × 100
        assert!(!pays_for(&terms, 99)); // 50,000 > 500 × 99
        // A term absent from a segment counts nothing there.
        let absent = QueryTerm {
            infos: vec![None, Some(term(&[600]).infos[0].unwrap())],
            ..term(&[])
        };
        let absent = std::slice::from_ref(&absent);
        assert!(!pays_for(absent, 1) && pays_for(absent, 2));
        // No term at all: nothing to prune either way.
        assert!(pays_for(&[], 1));
    }
}
