//! Which segments to merge. Only adjacent runs are merged, so internal doc ids keep
//! their relative order and a merge never changes a ranking (ties included); only
//! deleted documents disappear.

/// Bounds the number of segments as commits accumulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergePolicy {
    /// Merge when there are more segments than this.
    pub max_segments: usize,
    /// How many adjacent segments one background merge combines (at least 2).
    pub merge_factor: usize,
}

impl Default for MergePolicy {
    fn default() -> Self {
        MergePolicy {
            max_segments: 8,
            merge_factor: 4,
        }
    }
}

impl MergePolicy {
    /// The run to merge now, as `start..end` over the segments (given by their sizes),
    /// or `None` if the index is within bounds.
    pub fn choose(&self, sizes: &[u64]) -> Option<std::ops::Range<usize>> {
        if sizes.len() <= self.max_segments.max(1) {
            return None;
        }
        let width = self.merge_factor.clamp(2, sizes.len());
        smallest_window(sizes, width)
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
        };
        assert_eq!(p.choose(&[10, 1, 1]), None);
        assert_eq!(p.choose(&[10, 5, 1, 1]), Some(2..4));
        assert_eq!(p.choose(&[1, 1, 10, 1]), Some(0..2));
    }

    #[test]
    fn forced_merge_reaches_the_target_in_one_run() {
        assert_eq!(forced(&[5, 1, 1, 9], 2), Some(0..3));
        assert_eq!(forced(&[5, 1, 1, 9], 1), Some(0..4));
        assert_eq!(forced(&[5, 1], 2), None);
    }
}
