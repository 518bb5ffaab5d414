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
}

impl Default for MergePolicy {
    fn default() -> Self {
        MergePolicy {
            max_segments: 8,
            merge_factor: 4,
            floor_docs: 1000,
        }
    }
}

impl MergePolicy {
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
}
