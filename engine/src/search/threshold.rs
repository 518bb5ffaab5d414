//! A safe starting threshold for pruning, from the best blocks of a frequent word.
//!
//! MaxScore's θ rises only as documents enter the heap in doc-id order. Where a query
//! pairs a word in most documents with rare ones ("webster recrimination" on GCIDE), the
//! rare words hold few documents, so θ rises slowly (and if they hold fewer than k, it
//! ends as the k-th best score of a document with the frequent word alone, just below
//! that word's bound): the word stays essential and every block whose bound beats the θ
//! *of the moment* is decoded, which early on is nearly every block.
//!
//! So in that case, before the traversal, the frequent word's skip table names its blocks
//! with the highest bounds, and their postings are scored for that word alone. A term's
//! score is never negative, so each such score is at most the document's full score, and
//! the k-th best of them is at most the k-th best full score: no document scoring below
//! it can enter the top k. Pruning starts from there.
//!
//! Elsewhere the other lists fill the heap and lift θ quickly by themselves, and the scan
//! of the skip table and the decoding cost more than they save (callgrind, docs/RESULTS.md).

use super::bm25::TermScorer;
use super::maxscore::SLACK;
use crate::index::LiveSegment;
use crate::postings::{PostingsList, TERMINATED};
use crate::segment::LengthTable;

/// Shorter lists are left to the traversal: their best blocks would be a large share of
/// them.
const MIN_BLOCKS: usize = 16;

/// The longest list must hold this many times more postings than the others together
/// (or they fewer than k): then θ rises slowly from the others, and the frequent word is
/// decoded block after block until it does. Measured on GCIDE and the synthetic corpus
/// (docs/RESULTS.md): 64 gave the fewest instructions of 4, 16 and 64, and "fewer than k"
/// alone missed "circulatory webster disulphuret", which scored 7,000 postings of
/// "webster" before θ rose.
const DOMINANCE: u64 = 64;

/// At most this share (1/n) of the list's blocks, and at most [`MAX_BLOCKS`], are decoded.
/// The k best documents of a long list usually lie in k different blocks (the best 3
/// blocks of "webster" gave too low a θ to help), so up to k blocks are taken.
const BLOCK_SHARE: usize = 8;
const MAX_BLOCKS: usize = 64;

/// A lower bound on the k-th best score of the snapshot, or `None` where the query is not
/// of the kind above (its longest list is short, or does not dominate the others), or
/// the best blocks hold fewer than k live documents. Strictly below k distinct documents'
/// full scores, by the margin pruning compares with, so a document whose bound is at
/// most it can be dropped whatever the tie order.
pub(crate) fn starting_threshold<'l, 'a: 'l>(
    lists: impl IntoIterator<Item = (&'l TermScorer, &'l PostingsList<'a>)>,
    lengths: &LengthTable<'_>,
    live: &LiveSegment,
    k: usize,
) -> Option<f64> {
    let mut longest: Option<(&TermScorer, &PostingsList<'_>)> = None;
    let mut others = 0u64;
    for (scorer, list) in lists {
        match longest {
            Some((_, l)) if l.df() >= list.df() => others += u64::from(list.df()),
            _ => {
                others += longest.map_or(0, |(_, l)| u64::from(l.df()));
                longest = Some((scorer, list));
            }
        }
    }
    let (scorer, list) = longest?;
    let n_blocks = list.n_blocks();
    if n_blocks < MIN_BLOCKS || others >= (k as u64).max(u64::from(list.df()) / DOMINANCE) {
        return None;
    }
    let take = k.min(n_blocks / BLOCK_SHARE).clamp(1, MAX_BLOCKS);
    // (h, first doc the block can hold): the lowest h is the highest bound.
    let mut blocks: Vec<(f64, u32)> = Vec::with_capacity(n_blocks);
    let mut first = 0u32;
    for (last, h) in list.block_maxima(scorer.interp()) {
        blocks.push((h, first));
        first = last.saturating_add(1);
    }
    blocks.select_nth_unstable_by(take - 1, |a, b| a.0.total_cmp(&b.0));
    blocks.truncate(take);
    blocks.sort_unstable_by_key(|&(_, first)| first);
    let mut scores: Vec<f64> = Vec::with_capacity(take * crate::postings::BLOCK_LEN);
    let mut cursor = list.cursor();
    for &(_, first) in &blocks {
        // Lands on the block's first posting; stop where the cursor leaves the block (a
        // crafted list may end early: the loop still ends).
        let mut doc = cursor.seek(first);
        let block = cursor.block_pointer();
        while cursor.block_pointer() == block && doc != TERMINATED {
            if !live.is_deleted(doc) {
                scores.push(scorer.score(cursor.tf(), lengths.get(doc)));
            }
            doc = cursor.advance();
        }
    }
    if scores.len() < k {
        return None;
    }
    let (_, kth, _) = scores.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
    // Divided by the margin: the final score sums the terms in another order and may
    // differ from this one by a few ulps. A θ of 0 would let ties at 0 be dropped.
    let theta = *kth / SLACK;
    (theta > 0.0).then_some(theta)
}
