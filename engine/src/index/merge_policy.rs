//! Which segments to merge. Only adjacent runs are merged, so internal doc ids keep
//! their relative order and a merge never changes a ranking (ties included); only
//! deleted documents disappear.
//!
//! The policy is logarithmic by size, as Lucene's `LogMergePolicy` (the one of its
//! policies that merges only adjacent segments): a segment's level is
//! `log_f(live docs / floor)`, and `f` adjacent segments of one level merge into one of
//! the next. A document is then rewritten about `log_f(n / floor)` times above the
//! floor, and the count stays near `(f - 1)` per level (below the floor every segment is
//! level 0: tiny commits re-merge a small segment often, bounded by the floor's size). Example, `f = 4`, floor
//! 1,000: sizes `[64k, 16k, 4k, 4k, 4k, 4k]` have levels `[4, 3, 2, 2, 2, 2]`; the four
//! 4k segments merge into a 16k one, then the two 16k ones wait for two more.
//! `max_segments` is a hard cap on top: beyond it the smallest adjacent run merges, as
//! before this policy.
//!
//! An index with vectors has one rule before these: once the segments after the first
//! hold `graph_tail_permille` of the live documents (and no more than the first), they
//! all merge into the first. A vector search walks one graph per segment, and a walk of
//! a small graph costs nearly what a large one does, so every segment left beside the
//! first adds most of a search's cost again (docs/RESULTS.md, "Several segments share a
//! vector search's work"). The merge keeps the first segment's graph when its ids stand
//! (no deletes) and inserts only the others' documents, so it costs their graph work
//! plus one rewrite of the rest.

use crate::segment::SegmentMeta;

/// Bounds the number of segments as commits accumulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergePolicy {
    /// Merge when there are more segments than this.
    pub max_segments: usize,
    /// How many adjacent segments one background merge combines (at least 2); also the
    /// ratio between sizes of consecutive levels.
    pub merge_factor: usize,
    /// Segments of at most this many live documents are all of the lowest level (a
    /// commit of a few documents must not make a level of its own).
    pub floor_docs: u64,
    /// In an index whose first segment has a vector graph a merge would keep (it
    /// deletes nothing), every other segment merges into it as soon as they hold at
    /// least this many thousandths of the live documents; 0 never. Below the share the
    /// rules above apply. Lower keeps vector searches nearer one segment's cost and
    /// rewrites the index more often: a tail of a share s is absorbed after about
    /// s · n new documents, so each is rewritten about 1/s times while the index grows.
    pub graph_tail_permille: u32,
}

impl Default for MergePolicy {
    fn default() -> Self {
        MergePolicy {
            max_segments: 8,
            merge_factor: 4,
            floor_docs: 1000,
            graph_tail_permille: DEFAULT_GRAPH_TAIL_PERMILLE,
        }
    }
}

/// 1.5 %: the tails measured just under 2 % cost 1.12× (a graph of 3,400 beside 168k;
/// 1.49× its rows) and 1.21× (2,000 scanned) one segment's median at equal recall
/// (docs/RESULTS.md, "What add leaves is searched as one segment"); 1.5 % leaves room
/// for a tail of a small graph and a scanned segment together.
pub const DEFAULT_GRAPH_TAIL_PERMILLE: u32 = 15;

/// The live documents of each segment, in order: what the policies choose from.
pub(crate) fn live_sizes(segments: &[SegmentMeta]) -> Vec<u64> {
    segments.iter().map(|s| s.live_docs() as u64).collect()
}

impl MergePolicy {
    /// The run to merge now among `segments`: the whole index when the first segment's
    /// graph can absorb the rest (see `graph_tail_permille`), else [`MergePolicy::choose`].
    pub(crate) fn choose_for(&self, segments: &[SegmentMeta]) -> Option<std::ops::Range<usize>> {
        let sizes = live_sizes(segments);
        let keeps_graph = segments
            .first()
            .is_some_and(|first| first.vector_graph && first.live_docs() == first.doc_count);
        if keeps_graph && self.absorbs_tail(&sizes) {
            return Some(0..sizes.len());
        }
        self.choose(&sizes)
    }

    /// Whether the segments after the first hold `graph_tail_permille` of the documents.
    fn absorbs_tail(&self, sizes: &[u64]) -> bool {
        let [first, tail @ ..] = sizes else {
            return false;
        };
        let tail_docs: u64 = tail.iter().sum();
        // A first segment smaller than the rest would take in more than it holds: no
        // cheaper than building the graph anew.
        self.graph_tail_permille > 0
            && tail_docs > 0
            && *first >= tail_docs
            && u128::from(tail_docs) * 1000
                >= u128::from(first + tail_docs) * u128::from(self.graph_tail_permille)
    }

    /// The run to merge now, as `start..end` over the segments (given by their sizes),
    /// or `None` if the index is within bounds.
    pub fn choose(&self, sizes: &[u64]) -> Option<std::ops::Range<usize>> {
        if let Some(run) = self.same_level_run(sizes) {
            return Some(run);
        }
        if sizes.len() <= self.max_segments.max(1) {
            return None;
        }
        let width = self.merge_factor.clamp(2, sizes.len());
        smallest_window(sizes, width)
    }

    /// The first `merge_factor` adjacent segments of one level, lowest level first
    /// (the cheapest merge), leftmost on ties.
    fn same_level_run(&self, sizes: &[u64]) -> Option<std::ops::Range<usize>> {
        let factor = self.merge_factor.max(2);
        let levels: Vec<u32> = sizes.iter().map(|&s| self.level(s)).collect();
        let mut best: Option<(u32, std::ops::Range<usize>)> = None;
        let mut start = 0;
        while start < levels.len() {
            let level = levels[start];
            let len = levels[start..].iter().take_while(|&&l| l == level).count();
            if len >= factor && best.as_ref().is_none_or(|(b, _)| level < *b) {
                best = Some((level, start..start + factor));
            }
            start += len;
        }
        best.map(|(_, run)| run)
    }

    /// 0 up to `floor_docs` live documents, then one more per factor of `merge_factor`.
    fn level(&self, live_docs: u64) -> u32 {
        let factor = self.merge_factor.max(2) as u64;
        let (mut level, mut bound) = (0, self.floor_docs.max(1));
        while live_docs > bound {
            level += 1;
            bound = bound.saturating_mul(factor);
        }
        level
    }
}

/// The adjacent run of `width` segments with the fewest documents (earliest on ties).
pub(crate) fn smallest_window(sizes: &[u64], width: usize) -> Option<std::ops::Range<usize>> {
    if width < 2 || width > sizes.len() {
        return None;
    }
    (0..=sizes.len() - width)
        .min_by_key(|&start| sizes[start..start + width].iter().sum::<u64>())
        .map(|start| start..start + width)
}

/// The single run that brings `sizes.len()` segments down to `target` (≥ 1) in one merge.
pub(crate) fn forced(sizes: &[u64], target: usize) -> Option<std::ops::Range<usize>> {
    let target = target.max(1);
    if sizes.len() <= target {
        return None;
    }
    smallest_window(sizes, sizes.len() - target + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_smallest_adjacent_run_only_when_over_bound() {
        let p = MergePolicy {
            max_segments: 3,
            merge_factor: 2,
            floor_docs: 1,
            ..MergePolicy::default()
        };
        // Levels all differ ([4, 2, 0], [4, 3, 2, 0], [0, 1, 4, 0]): only the cap acts.
        assert_eq!(p.choose(&[10, 3, 1]), None);
        assert_eq!(p.choose(&[10, 5, 3, 1]), Some(2..4));
        assert_eq!(p.choose(&[1, 2, 10, 1]), Some(0..2));
    }

    #[test]
    fn merges_the_lowest_level_run_of_equal_levels_first() {
        let p = MergePolicy {
            max_segments: 100,
            merge_factor: 4,
            floor_docs: 1000,
            ..MergePolicy::default()
        };
        // Levels [4, 3, 2, 2, 2, 2]: the four level-2 segments.
        assert_eq!(
            p.choose(&[64_000, 16_000, 4_000, 4_000, 4_000, 4_000]),
            Some(2..6)
        );
        // Three of a level wait for a fourth; the cap is far.
        assert_eq!(p.choose(&[64_000, 16_000, 4_000, 4_000, 4_000]), None);
        // Tiny commits are all of level 0 and merge four at a time.
        assert_eq!(p.choose(&[50_000, 3, 900, 1, 1000, 7]), Some(1..5));
        // Levels [3, 3, 3, 3, 1, 1, 1, 1]: level 1 first, though level 3 also has a run.
        assert_eq!(
            p.choose(&[40_000, 40_000, 40_000, 40_000, 2_000, 2_000, 2_000, 2_000]),
            Some(4..8)
        );
    }

    #[test]
    fn a_commit_of_many_equal_segments_merges_down_logarithmically() {
        let p = MergePolicy {
            max_segments: 100,
            merge_factor: 4,
            floor_docs: 1000,
            ..MergePolicy::default()
        };
        let mut sizes = vec![40_000u64; 16];
        let mut rewritten = 0u64;
        while let Some(run) = p.choose(&sizes) {
            let merged: u64 = sizes[run.clone()].iter().sum();
            rewritten += merged;
            sizes.splice(run, [merged]);
        }
        assert_eq!(sizes, vec![640_000]);
        // Each document is rewritten once per level climbed (twice), not once per merge.
        assert_eq!(rewritten, 2 * 640_000);
    }

    #[test]
    fn forced_merge_reaches_the_target_in_one_run() {
        assert_eq!(forced(&[5, 1, 1, 9], 2), Some(0..3));
        assert_eq!(forced(&[5, 1, 1, 9], 1), Some(0..4));
        assert_eq!(forced(&[5, 1], 2), None);
    }

    #[test]
    fn a_tail_of_the_share_merges_into_a_first_segment_whose_graph_stands() {
        let p = MergePolicy {
            graph_tail_permille: 20,
            ..MergePolicy::default()
        };
        let seg = |docs: u32, deleted: u32, graph: bool| SegmentMeta {
            name: String::new(),
            doc_count: docs,
            fields: Vec::new(),
            tokens: Default::default(),
            terms: Default::default(),
            deletes: (deleted > 0).then(|| crate::segment::DeletesMeta {
                file: String::new(),
                count: deleted,
            }),
            vector_dim: Some(4),
            vector_graph: graph,
        };
        // 3,000 of 150,000 is 2 %: all merge into the first. One document less is not,
        // and the log rule has nothing to do (levels 5 and 2).
        assert_eq!(
            p.choose_for(&[seg(147_000, 0, true), seg(3_000, 0, true)]),
            Some(0..2)
        );
        assert_eq!(
            p.choose_for(&[seg(147_001, 0, true), seg(2_999, 0, true)]),
            None
        );
        // Several small segments count together.
        let tail = [
            seg(147_000, 0, true),
            seg(1_000, 0, false),
            seg(2_000, 0, false),
        ];
        assert_eq!(p.choose_for(&tail), Some(0..3));
        // A first segment with deletes, or without a graph, would be rebuilt whole: the
        // log rule decides.
        assert_eq!(
            p.choose_for(&[seg(148_000, 1, true), seg(3_000, 0, true)]),
            None
        );
        assert_eq!(
            p.choose_for(&[seg(147_000, 0, false), seg(3_000, 0, true)]),
            None
        );
        // A first segment smaller than the rest keeps the log rule.
        assert_eq!(
            p.choose_for(&[seg(3_000, 0, true), seg(147_000, 0, true)]),
            None
        );
        // 0 switches the rule off.
        let off = MergePolicy {
            graph_tail_permille: 0,
            ..p
        };
        assert_eq!(
            off.choose_for(&[seg(100, 0, true), seg(100, 0, true)]),
            None
        );
    }
}
