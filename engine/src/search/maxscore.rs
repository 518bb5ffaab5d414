//! Block-max MaxScore: the top k without scoring every posting, exactly equal to the
//! exhaustive oracle (same ids, same scores bit for bit, same tie order).
//!
//! Terms are ordered by their score upper bound. Once the top-k heap is full with worst
//! score θ, the longest prefix of low-bound terms whose bounds sum to ≤ θ is
//! *non-essential*: a document matching only those cannot enter the heap, so candidates
//! come from the essential terms alone. For each candidate, the non-essential terms are
//! consulted from the highest bound down, first by their current block's bound (no
//! decoding), then by seeking, and the candidate is dropped as soon as its best possible
//! score is ≤ θ. Before that, whole ranges are skipped when the essential lists' current
//! blocks cannot reach θ together with the non-essential terms (their whole bounds, or
//! failing that their own blocks over a shorter range). A skipped range moves the
//! cursors' block pointers only; a block is decoded when a candidate reaches it, so a run
//! of skipped ranges decodes nothing. A range that cannot be skipped ends within every
//! essential list's decoded block, so it is scored a block at a time (`RangeScan`): every
//! posting's score at once, the lists merged into candidates, then the non-essential
//! probes. Where a frequent word meets rare ones, θ starts from the frequent word's best
//! blocks (`search::threshold`) instead of from nothing.
//!
//! Why "≤ θ" may drop: documents are visited in ascending internal id, so a later document
//! with a score equal to the heap's worst loses the tie and could never enter.
//!
//! Exactness under floating point: every drop compares `(partial + bounds) · SLACK` with
//! θ, covering the few-ulp differences between sums taken in different orders; the score
//! that is pushed is re-summed in term-byte order, as the oracle sums it.

use super::query::QueryTerm;
use super::topk::TopK;
use crate::error::Result;
use crate::field::Field;
use crate::index::{LiveSegment, Snapshot};
use crate::postings::{BLOCK_LEN, PostingsCursor, TERMINATED};
use crate::search::bm25::TermScorer;
use crate::search::threshold::starting_threshold;
use crate::segment::LengthTable;

/// Relative margin on every bound comparison (far above f64 rounding, far below any
/// score difference that matters).
pub(super) const SLACK: f64 = 1.0 + 1e-9;

struct TermCursor<'a> {
    /// Position of the term in the query's term-byte order (where its contribution goes).
    slot: usize,
    scorer: TermScorer,
    /// Upper bound of the term's score in this segment.
    bound: f64,
    cursor: PostingsCursor<'a>,
    /// The score bound of the block the cursor's block pointer named when it was last
    /// asked for: a candidate test asks again and again within one block.
    block: Option<(usize, f64)>,
    /// Set by a range skip that moved only the block pointer: the first doc the cursor
    /// may hold. Its block is decoded when a candidate reaches it, so a run of skipped
    /// ranges decodes nothing (seeking past each range decoded the next block, which the
    /// next range test then often skipped).
    /// 0 when not pending. A pending target is always beyond the real doc (which is in
    /// a block before it), so the traversal position is the larger of the two.
    pending: u32,
}

impl TermCursor<'_> {
    /// Where the cursor stands for the traversal: its doc, or its pending target.
    #[inline]
    fn pos(&self) -> u32 {
        self.cursor.doc().max(self.pending)
    }

    /// Moves to `target` or beyond, decoding nothing if `target` lies past the decoded
    /// block (the cursor is then pending until [`Self::settle`]).
    fn skip_to(&mut self, target: u32) {
        self.cursor.shallow_seek(target);
        if self.cursor.block_pointer() == self.cursor.decoded_block()
            || self.cursor.block_last_doc() == TERMINATED
        {
            // Within the decoded block, or past the last one: nothing to decode.
            self.pending = 0;
            self.cursor.seek(target);
        } else {
            self.pending = target;
        }
    }

    /// Decodes a pending cursor's block and moves to its first doc ≥ the target.
    #[inline]
    fn settle(&mut self) {
        if self.pending != 0 {
            self.cursor.seek(self.pending);
            self.pending = 0;
        }
    }

    /// The score bound of the block at the cursor's block pointer.
    #[inline]
    fn block_bound(&mut self) -> f64 {
        let at = self.cursor.block_pointer();
        match self.block {
            Some((cached, bound)) if cached == at => bound,
            _ => {
                let bound = self
                    .scorer
                    .bound_from_h(self.cursor.block_h(self.scorer.interp()));
                self.block = Some((at, bound));
                bound
            }
        }
    }
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
    for (s, live) in snapshot.segments().iter().enumerate() {
        let segment = &live.reader;
        let base = snapshot.doc_base(s);
        let lengths = segment.lengths(field);
        let mut lists = Vec::with_capacity(terms.len());
        for (slot, term) in terms.iter().enumerate() {
            if let Some(info) = term.infos[s] {
                let list = segment.postings(field, &info)?;
                let bound = term.scorer.bound(list.bound());
                lists.push((slot, term.scorer, bound, list));
            }
        }
        let floor = starting_threshold(
            lists.iter().map(|(_, scorer, _, list)| (scorer, list)),
            &lengths,
            live,
            k,
        );
        // The θ pruning compares with: the heap's, or the floor while that is higher.
        let threshold = |top: &TopK| match (top.threshold(), floor) {
            (Some(t), Some(f)) => Some(t.max(f)),
            (t, f) => t.or(f),
        };
        let mut cursors: Vec<TermCursor<'_>> = lists
            .iter()
            .map(|(slot, scorer, bound, list)| TermCursor {
                slot: *slot,
                scorer: *scorer,
                bound: *bound,
                cursor: list.cursor(),
                block: None,
                pending: 0,
            })
            .collect();
        cursors.sort_by(|a, b| a.bound.total_cmp(&b.bound).then(a.slot.cmp(&b.slot)));
        // prefix[j]: the sum of the j lowest bounds.
        let mut prefix = Vec::with_capacity(cursors.len() + 1);
        prefix.push(0.0);
        for c in &cursors {
            prefix.push(prefix.last().copied().unwrap_or(0.0) + c.bound);
        }
        let n = cursors.len();
        // Cursor positions in term-byte order: the order the oracle sums in.
        let mut by_slot: Vec<usize> = (0..n).collect();
        by_slot.sort_by_key(|&i| cursors[i].slot);
        // Changes only when a document enters the heap.
        let mut theta = threshold(&top);
        let mut essential_from = non_essential_count(&prefix, theta);
        // The last range `skippable_range` found not skippable, with the θ and the
        // essential set it was tested against; `None`: test the next candidate.
        let mut checked: Option<(u32, f64, usize)> = None;
        let mut window = BlockWindow::EMPTY;
        // Made on the first range scanned: a query whose heap never fills needs none.
        let mut scratch: Option<RangeScratch> = None;

        while essential_from < n {
            let doc = cursors[essential_from..]
                .iter()
                .map(|c| c.cursor.doc())
                .min()
                .unwrap_or(TERMINATED);
            if doc == TERMINATED {
                break;
            }
            // The range test runs once per range: while `doc` stays within a range found
            // not skippable (same θ, same essential lists), its blocks and bounds are the same.
            if let Some(theta) = theta
                && checked.is_none_or(|(upto, t, e)| doc > upto || theta > t || essential_from != e)
            {
                match skippable_range(&mut cursors, essential_from, &prefix, theta) {
                    Err(upto) => checked = Some((upto, theta, essential_from)),
                    Ok(upto) => {
                        // No document up to `upto` can beat the heap. If no cursor moved
                        // (only a cursor breaking the invariants `skip_ranges` relies on
                        // could), score `doc` the ordinary way rather than test the same
                        // range again forever.
                        let (moved, tested) =
                            skip_ranges(&mut cursors, essential_from, &prefix, theta, upto);
                        if let Some(upto) = tested {
                            // Tested where the cursors stood before decoding; they have
                            // only moved forward within those blocks since, so scoring
                            // up to there without testing again is still exact.
                            checked = Some((upto, theta, essential_from));
                        }
                        if moved {
                            continue;
                        }
                    }
                }
            }
            // The range is tested: score it a block at a time (the candidate loop's own
            // work per document was most of a mixed query's cost).
            if let Some(t) = theta
                && let Some((upto, _, _)) = checked
                && doc <= upto
            {
                let scan = RangeScan {
                    prefix: &prefix,
                    by_slot: &by_slot,
                    lengths: &lengths,
                    live,
                    base,
                };
                if scan.run(
                    &mut cursors,
                    essential_from,
                    &mut window,
                    &mut top,
                    scratch.get_or_insert_with(|| RangeScratch::new(n)),
                    t,
                    doc,
                    upto,
                ) {
                    theta = threshold(&top);
                    essential_from = essential_from.max(non_essential_count(&prefix, theta));
                }
                continue;
            }
            if live.is_deleted(doc) {
                for c in &mut cursors[essential_from..] {
                    if c.cursor.doc() == doc {
                        c.cursor.advance();
                    }
                }
                continue;
            }
            // One document at a time: while the heap fills (no θ yet), or where a range
            // test moved nothing.
            let len = lengths.get(doc);
            let mut partial = 0.0;
            for c in &cursors[essential_from..] {
                if c.cursor.doc() == doc {
                    partial += c.scorer.score(c.cursor.tf(), len);
                }
            }
            let admitted = match theta {
                None => {
                    for c in &mut cursors[..essential_from] {
                        c.cursor.seek(doc);
                    }
                    true
                }
                Some(theta) => check_non_essential(
                    &mut cursors[..essential_from],
                    &prefix,
                    &mut window,
                    doc,
                    len,
                    partial,
                    theta,
                ),
            };
            let scored_from = essential_from;
            if admitted {
                // The exact score, summed in term-byte order as the oracle sums it (rare:
                // only candidates that may enter the heap get here).
                let mut score = 0.0;
                for &i in &by_slot {
                    let c = &cursors[i];
                    if c.cursor.doc() == doc {
                        score += c.scorer.score(c.cursor.tf(), len);
                    }
                }
                top.push(score, base + doc as u64);
                theta = threshold(&top);
                let next = non_essential_count(&prefix, theta);
                essential_from = essential_from.max(next);
            }
            for c in &mut cursors[scored_from..] {
                if c.cursor.doc() == doc {
                    c.cursor.advance();
                }
            }
        }
    }
    Ok(top)
}

/// What scoring a tested range at once needs besides the cursors.
struct RangeScan<'s, 'a> {
    prefix: &'s [f64],
    by_slot: &'s [usize],
    lengths: &'s LengthTable<'a>,
    live: &'s LiveSegment,
    base: u64,
}

/// The widest run of doc ids several essential lists are merged over at once: their
/// scores are summed in a dense array this long (16 KiB of f64, 8 KiB of lengths: within
/// the first-level cache beside the blocks), and a longer range is scanned in pieces.
const DENSE_WIDTH: usize = 2048;

/// Buffers a [`RangeScan`] reuses from range to range: one block's worth of postings per
/// essential list, and the dense sums several lists are merged into.
struct RangeScratch {
    /// Per essential list (in cursor order): its postings in the range, their lengths
    /// and scores, and how many there are.
    lists: Vec<ListBlock>,
    /// Made on the first range with several essential lists: a query whose ranges all
    /// have one never zeroes its 24 KiB.
    dense: Option<Box<DenseSums>>,
}

/// Indexed by doc − the range's start: the sum of the essential scores so far (0.0
/// wherever `seen` is clear: reset as each candidate is read) and the length.
struct DenseSums {
    sums: [f64; DENSE_WIDTH],
    lens: [u32; DENSE_WIDTH],
    /// Which offsets have a posting in some essential list.
    seen: [u64; DENSE_WIDTH / 64],
}

struct ListBlock {
    docs: [u32; BLOCK_LEN],
    lens: [u32; BLOCK_LEN],
    scores: [f64; BLOCK_LEN],
    len: usize,
}

impl RangeScratch {
    fn new(lists: usize) -> Self {
        RangeScratch {
            lists: (0..lists)
                .map(|_| ListBlock {
                    docs: [0; BLOCK_LEN],
                    lens: [0; BLOCK_LEN],
                    scores: [0.0; BLOCK_LEN],
                    len: 0,
                })
                .collect(),
            dense: None,
        }
    }
}

/// Whether the scan goes on after a candidate.
enum Next {
    Go,
    /// A push made an essential list non-essential: the scan stops after this document.
    Stop,
}

/// The mutable state of one [`RangeScan::run`], for [`RangeScan::candidate`].
struct Pass<'p, 'c> {
    non_essential: &'p mut [TermCursor<'c>],
    essential: &'p mut [TermCursor<'c>],
    window: &'p mut BlockWindow,
    top: &'p mut TopK,
    theta: f64,
    pushed: bool,
}

impl RangeScan<'_, '_> {
    /// Scores every essential posting from `from` (the essential cursors' first position)
    /// up to `upto`, the end of the range the block-max test found not skippable, exactly
    /// as the candidate loop would one document at a time; several lists only up to
    /// [`DENSE_WIDTH`] doc ids, the rest being scored by the next call. The range ends
    /// within every essential list's decoded block, so its postings are all in memory:
    /// first every posting's length and score, list by list; then each candidate's summed
    /// essential score (a lone list is read as it is, several are summed in a dense
    /// array); then, for candidates whose score with the non-essential bounds can beat
    /// θ, the non-essential probes. Leaves the essential cursors after what was scanned.
    /// Returns whether a document entered the heap (θ may have moved).
    ///
    /// θ only rises within the range (the heap's worst), so testing later candidates
    /// against the newest θ drops only what the one-by-one loop would drop too. When a
    /// push makes an essential list non-essential, the scan stops after that document.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        cursors: &mut [TermCursor<'_>],
        essential_from: usize,
        window: &mut BlockWindow,
        top: &mut TopK,
        scratch: &mut RangeScratch,
        theta: f64,
        from: u32,
        upto: u32,
    ) -> bool {
        let (non_essential, essential) = cursors.split_at_mut(essential_from);
        let lone = essential.len() == 1;
        let upto = if lone {
            upto
        } else {
            upto.min(from.saturating_add(DENSE_WIDTH as u32 - 1))
        };
        for (c, list) in essential.iter().zip(scratch.lists.iter_mut()) {
            debug_assert_eq!(c.pending, 0, "skip_ranges settles the essential cursors");
            let (docs, tfs_minus_1) = c.cursor.rest_of_block();
            let m = docs.partition_point(|&d| d <= upto);
            list.len = m;
            list.docs[..m].copy_from_slice(&docs[..m]);
            self.lengths.get_many(&docs[..m], &mut list.lens);
            let scorer = c.scorer;
            for ((s, &tf), &len) in list.scores[..m]
                .iter_mut()
                .zip(&tfs_minus_1[..m])
                .zip(&list.lens)
            {
                *s = scorer.score(tf.wrapping_add(1), len);
            }
        }
        let mut pass = Pass {
            non_essential,
            essential,
            window,
            top,
            theta,
            pushed: false,
        };
        let lists = &scratch.lists[..pass.essential.len()];
        let mut stop = None;
        if lone {
            let list = &lists[0];
            for i in 0..list.len {
                let doc = list.docs[i];
                if let Next::Stop = self.candidate(&mut pass, doc, list.scores[i], list.lens[i]) {
                    stop = Some(doc);
                    break;
                }
            }
        } else {
            let scratch = scratch.dense.get_or_insert_with(|| {
                Box::new(DenseSums {
                    sums: [0.0; DENSE_WIDTH],
                    lens: [0; DENSE_WIDTH],
                    seen: [0; DENSE_WIDTH / 64],
                })
            });
            // Every doc here is in from..=upto, within DENSE_WIDTH of `from`: decoded
            // blocks strictly increase from the cursor's doc on. The clamp only keeps a
            // broken invariant from panicking.
            for list in lists {
                for i in 0..list.len {
                    let at = (list.docs[i].wrapping_sub(from) as usize).min(DENSE_WIDTH - 1);
                    scratch.sums[at] += list.scores[i];
                    scratch.lens[at] = list.lens[i];
                    scratch.seen[at / 64] |= 1 << (at % 64);
                }
            }
            let words = (upto - from) as usize / 64 + 1;
            'words: for w in 0..words {
                let mut bits = std::mem::take(&mut scratch.seen[w]);
                while bits != 0 {
                    let at = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let partial = std::mem::take(&mut scratch.sums[at]);
                    let doc = from + at as u32;
                    if let Next::Stop = self.candidate(&mut pass, doc, partial, scratch.lens[at]) {
                        stop = Some(doc);
                        // Leave the buffers clear for the next range.
                        for v in w..words {
                            let mut rest = if v == w {
                                bits
                            } else {
                                std::mem::take(&mut scratch.seen[v])
                            };
                            while rest != 0 {
                                scratch.sums[v * 64 + rest.trailing_zeros() as usize] = 0.0;
                                rest &= rest - 1;
                            }
                        }
                        break 'words;
                    }
                }
            }
        }
        let end = stop.unwrap_or(upto);
        for c in pass.essential.iter_mut() {
            let past = c.cursor.rest_of_block().0.partition_point(|&d| d <= end);
            if past > 0 {
                c.cursor.advance_in_block(past);
            }
        }
        pass.pushed
    }

    /// One candidate with its summed essential score: dropped if it cannot beat θ with
    /// the non-essential terms, else pushed with its exact score.
    #[inline(always)]
    fn candidate(&self, pass: &mut Pass<'_, '_>, doc: u32, partial: f64, len: u32) -> Next {
        let essential_from = pass.non_essential.len();
        if (partial + self.prefix[essential_from]) * SLACK <= pass.theta
            || self.live.is_deleted(doc)
        {
            return Next::Go;
        }
        if !probe_non_essential(
            pass.non_essential,
            self.prefix,
            pass.window,
            doc,
            len,
            partial,
            pass.theta,
        ) {
            return Next::Go;
        }
        // The exact score, summed in term-byte order as the oracle sums it (rare: only
        // candidates that may enter the heap get here), with every cursor at `doc`.
        for c in pass.essential.iter_mut() {
            c.cursor.seek(doc);
        }
        let mut score = 0.0;
        for &j in self.by_slot {
            let c = match j.checked_sub(essential_from) {
                None => &pass.non_essential[j],
                Some(e) => &pass.essential[e],
            };
            if c.cursor.doc() == doc {
                score += c.scorer.score(c.cursor.tf(), len);
            }
        }
        pass.top.push(score, self.base + doc as u64);
        pass.pushed = true;
        if let Some(t) = pass.top.threshold() {
            pass.theta = pass.theta.max(t);
            if non_essential_count(self.prefix, Some(pass.theta)) > essential_from {
                return Next::Stop;
            }
        }
        Next::Go
    }
}

/// The block-max test: over the range from the current candidate to the first end of an
/// essential list's current block, every document's score is at most the block bounds of
/// the essential lists with a posting in the range, plus the non-essential terms' whole
/// bounds. If that is ≤ θ, returns `Ok(the range's last doc)`: everything up to it can be
/// skipped; else `Err` of it.
///
/// A list whose cursor is already past the range has no posting in it and adds nothing.
/// This is what lets a frequent term's blocks be skipped beside rare terms: a short list
/// is one block spanning its whole doc range, and counting its bound everywhere (as if
/// it could match any document) kept every range of "webster recrimination" above θ.
///
/// When the whole bounds fail, the non-essential lists' own blocks are tried: the range
/// shrinks to end where the first of their blocks holding its start ends, and each adds
/// that block's bound instead of its whole one. Two frequent words whose bounds are close
/// (`used zool`) keep θ below the sum of their whole bounds for most of the lists, while
/// most pairs of their blocks cannot reach it. A failed tight test reports the loose
/// range, which was tested too: the candidates in it are scored as before.
fn skippable_range(
    cursors: &mut [TermCursor<'_>],
    essential_from: usize,
    prefix: &[f64],
    theta: f64,
) -> Result<u32, u32> {
    let (non_essential, essential) = cursors.split_at_mut(essential_from);
    let upto = essential
        .iter()
        .filter(|c| c.pos() != TERMINATED)
        .map(|c| c.cursor.block_last_doc())
        .min()
        .unwrap_or(TERMINATED);
    if upto == TERMINATED {
        return Err(upto);
    }
    // Its current block holds every posting it has up to `upto` (that block ends at or
    // after `upto`); a cursor beyond `upto` has none in the range.
    let essential_bound = |essential: &mut [TermCursor<'_>], end: u32| {
        let mut bound = 0.0;
        for c in essential.iter_mut() {
            if c.pos() <= end {
                bound += c.block_bound();
            }
        }
        bound
    };
    if (essential_bound(essential, upto) + prefix[essential_from]) * SLACK <= theta {
        return Ok(upto);
    }
    if non_essential.is_empty() {
        return Err(upto);
    }
    let start = essential
        .iter()
        .map(|c| c.pos())
        .min()
        .unwrap_or(TERMINATED);
    let (mut end, mut bound) = (upto, 0.0);
    for c in non_essential.iter_mut() {
        c.cursor.shallow_seek(start);
        bound += c.block_bound();
        end = end.min(c.cursor.block_last_doc());
    }
    bound += essential_bound(essential, end);
    if bound * SLACK <= theta {
        Ok(end)
    } else {
        Err(upto)
    }
}

/// Skips the range ending at `upto` and then every following range the block-max test
/// finds skippable, moving only the cursors' block pointers (a run of skipped ranges
/// decodes nothing: seeking past each range decoded the next block, which the next test
/// then often skipped), and finally decodes the blocks the essential cursors stand in.
/// Returns whether a cursor moved, and the end of the range found not skippable (`None`
/// if the lists ended or nothing moved).
///
/// A range starts at the essential cursors' first position, so the cursor standing there
/// is at or before `upto` and moves past it: each round moves one, and the loop ends.
fn skip_ranges(
    cursors: &mut [TermCursor<'_>],
    essential_from: usize,
    prefix: &[f64],
    theta: f64,
    mut upto: u32,
) -> (bool, Option<u32>) {
    let mut moved = false;
    let tested = loop {
        let next = upto.saturating_add(1);
        let mut moved_now = false;
        for c in cursors[essential_from..].iter_mut() {
            if c.pos() <= upto {
                c.skip_to(next);
                moved_now = true;
            }
        }
        if !moved_now {
            break None;
        }
        moved = true;
        match skippable_range(cursors, essential_from, prefix, theta) {
            Ok(end) => upto = end,
            Err(end) => break (end != TERMINATED).then_some(end),
        }
    };
    for c in cursors[essential_from..].iter_mut() {
        c.settle();
    }
    (moved, tested)
}

/// How many of the lowest-bound terms are non-essential at threshold `theta`.
fn non_essential_count(prefix: &[f64], theta: Option<f64>) -> usize {
    let Some(theta) = theta else { return 0 };
    // prefix is non-decreasing; the largest j with prefix[j]·SLACK ≤ θ.
    prefix
        .iter()
        .skip(1)
        .take_while(|&&p| p * SLACK <= theta)
        .count()
}

/// The non-essential lists' summed block bounds, valid for every doc up to `end` while
/// the same lists are non-essential: a block's bound covers every doc in its range,
/// whether or not the cursor has since moved past it, so consecutive candidates in the
/// same blocks reuse the sum instead of consulting each list again.
struct BlockWindow {
    lists: usize,
    end: u32,
    sum: f64,
}

impl BlockWindow {
    const EMPTY: BlockWindow = BlockWindow {
        lists: usize::MAX,
        end: 0,
        sum: 0.0,
    };
}

/// Adds the non-essential terms' scores for `doc`, highest bound first, and returns
/// whether the document can still beat `theta`.
#[allow(clippy::too_many_arguments)]
fn check_non_essential(
    cursors: &mut [TermCursor<'_>],
    prefix: &[f64],
    window: &mut BlockWindow,
    doc: u32,
    len: u32,
    partial: f64,
    theta: f64,
) -> bool {
    let n = cursors.len();
    if (partial + prefix[n]) * SLACK <= theta {
        return false;
    }
    probe_non_essential(cursors, prefix, window, doc, len, partial, theta)
}

/// [`check_non_essential`] after its test against the non-essential terms' whole bounds
/// (which the block scan makes for a whole block first). Always inlined: the call itself
/// was a sixth of its cost in a block scan.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn probe_non_essential(
    cursors: &mut [TermCursor<'_>],
    prefix: &[f64],
    window: &mut BlockWindow,
    doc: u32,
    len: u32,
    mut partial: f64,
    theta: f64,
) -> bool {
    let n = cursors.len();
    // Tighter: the non-essential terms' bounds in the blocks that would hold `doc`.
    if window.lists != n || doc > window.end {
        let (mut sum, mut end) = (0.0, TERMINATED);
        for c in cursors.iter_mut() {
            c.cursor.shallow_seek(doc);
            sum += c.block_bound();
            end = end.min(c.cursor.block_last_doc());
        }
        *window = BlockWindow { lists: n, end, sum };
    }
    if (partial + window.sum) * SLACK <= theta {
        return false;
    }
    for j in (0..n).rev() {
        if (partial + prefix[j + 1]) * SLACK <= theta {
            return false;
        }
        let c = &mut cursors[j];
        if c.cursor.seek(doc) == doc {
            partial += c.scorer.score(c.cursor.tf(), len);
        }
    }
    partial * SLACK > theta
}
