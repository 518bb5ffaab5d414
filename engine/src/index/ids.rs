//! Which external ids the index holds, in 8 bytes an id instead of the ids themselves:
//! a sorted multiset of 64-bit keyed fingerprints. The writer asks it before every add
//! and delete; a hit is only a candidate, which the writer confirms against the stored
//! fields where being wrong would matter (see docs/DECISIONS.md, "Ids in bounded memory").
//!
//! Holding every committed id as a `String` grew the writer's memory with the corpus
//! (about 40 bytes an id in a hash set); the fingerprints grow by 8 bytes an id, and
//! the budget of [`super::IndexWriter::set_memory_budget`] counts them. The ids of
//! segments flushed since the last commit are one more such set, each fingerprint
//! tagged with its segment (12 bytes an id), merged into the committed set at commit.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};

/// Hashes ids with a key drawn per writer: fingerprints live in memory only, so an
/// adversarial corpus cannot choose ids that collide.
#[derive(Clone)]
pub(crate) struct IdHasher(RandomState);

impl IdHasher {
    pub(crate) fn new() -> Self {
        IdHasher(RandomState::new())
    }

    pub(crate) fn fingerprint(&self, id: &str) -> u64 {
        self.0.hash_one(id)
    }
}

/// A multiset of fingerprints: a sorted vector, and the removals made since the last
/// [`Fingerprints::compact`] (removing from the middle of the vector would cost O(n)
/// per delete; removals are applied in one pass at commit).
#[derive(Default, Clone)]
pub(crate) struct Fingerprints {
    sorted: Vec<u64>,
    removed: HashMap<u64, u32>,
}

impl Fingerprints {
    /// From fingerprints in any order.
    pub(crate) fn from_unsorted(mut all: Vec<u64>) -> Self {
        all.sort_unstable();
        all.shrink_to_fit();
        Fingerprints {
            sorted: all,
            removed: HashMap::new(),
        }
    }

    /// How many ids with fingerprint `fp` are present.
    pub(crate) fn count(&self, fp: u64) -> u32 {
        let start = self.sorted.partition_point(|&x| x < fp);
        let end = start + self.sorted[start..].partition_point(|&x| x == fp);
        let removed = self.removed.get(&fp).copied().unwrap_or(0);
        ((end - start) as u32).saturating_sub(removed)
    }

    /// Takes one id with fingerprint `fp` out (the caller checked it is present).
    pub(crate) fn remove(&mut self, fp: u64) {
        *self.removed.entry(fp).or_insert(0) += 1;
    }

    /// Forgets the removals since the last compaction (a rollback).
    pub(crate) fn restore_removed(&mut self) {
        self.removed.clear();
    }

    /// Applies the removals, then adds `add` (sorted): the set a commit publishes. What
    /// is held is sorted already and merged with the new fingerprints in one pass, O(n)
    /// in what is held (a full sort on every commit was O(n log n) even for a
    /// one-document commit). Nothing is rebuilt when nothing changed.
    pub(crate) fn compact_and_extend(&mut self, add: Vec<u64>) {
        debug_assert!(add.is_sorted());
        if self.removed.is_empty() && add.is_empty() {
            return;
        }
        // Held once: moved out when there is nothing to remove from it.
        let held = if self.removed.is_empty() {
            std::mem::take(&mut self.sorted)
        } else {
            self.surviving()
        };
        self.sorted = Vec::new();
        let mut out = Vec::with_capacity(held.len() + add.len());
        let (mut a, mut b) = (held.iter().peekable(), add.iter().peekable());
        while let (Some(&&x), Some(&&y)) = (a.peek(), b.peek()) {
            if x <= y {
                out.push(x);
                a.next();
            } else {
                out.push(y);
                b.next();
            }
        }
        out.extend(a);
        out.extend(b);
        *self = Fingerprints {
            sorted: out,
            removed: HashMap::new(),
        };
    }

    /// The fingerprints held once the removals are applied, in order.
    fn surviving(&self) -> Vec<u64> {
        if self.removed.is_empty() {
            return self.sorted.clone();
        }
        let mut skip = self.removed.clone();
        self.sorted
            .iter()
            .copied()
            .filter(|fp| match skip.get_mut(fp) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => true,
            })
            .collect()
    }

    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.sorted.capacity() * 8 + self.removed.capacity() * (16 + 1)
    }
}

/// The ids of the segments flushed since the last commit: one sorted multiset of
/// fingerprints, each tagged with the flushed segment holding it (its position in the
/// writer's list), a removed one tagged [`GONE`] until the commit drops it.
///
/// One set for all of them because every add asks it: a set per flushed segment made
/// each add search every one of them, and a 1.7M-document `index` at 128 MiB flushes 54
/// (a third of that run's time went to those searches). 12 bytes an id, counted in the
/// budget like the committed ids.
#[derive(Default)]
pub(crate) struct FlushedIds {
    fingerprints: Vec<u64>,
    /// Beside each fingerprint: its segment, or [`GONE`]. Within one fingerprint's run,
    /// entries are in the order their segments were flushed.
    segments: Vec<u32>,
}

/// The tag of a fingerprint whose document was deleted.
const GONE: u32 = u32::MAX;

impl FlushedIds {
    /// The segments holding a live id with fingerprint `fp`, oldest first.
    pub(crate) fn holders(&self, fp: u64) -> impl DoubleEndedIterator<Item = u32> + '_ {
        let start = self.fingerprints.partition_point(|&x| x < fp);
        let end = start + self.fingerprints[start..].partition_point(|&x| x == fp);
        self.segments[start..end]
            .iter()
            .copied()
            .filter(|&s| s != GONE)
    }

    /// Takes one id with fingerprint `fp` out of segment `segment` (the caller checked
    /// that it is there).
    pub(crate) fn remove(&mut self, fp: u64, segment: u32) {
        let start = self.fingerprints.partition_point(|&x| x < fp);
        let end = start + self.fingerprints[start..].partition_point(|&x| x == fp);
        if let Some(tag) = self.segments[start..end]
            .iter_mut()
            .find(|s| **s == segment)
        {
            *tag = GONE;
        }
    }

    /// Adds the ids of the segment flushed as number `segment` (later than any before).
    /// Merged into place from the back: the set grows by the new ids only, never held
    /// twice.
    pub(crate) fn add_segment(&mut self, segment: u32, mut new: Vec<u64>) {
        debug_assert_ne!(segment, GONE);
        new.sort_unstable();
        let (old_len, add) = (self.fingerprints.len(), new.len());
        self.fingerprints.reserve_exact(add);
        self.segments.reserve_exact(add);
        self.fingerprints.resize(old_len + add, 0);
        self.segments.resize(old_len + add, 0);
        let (mut i, mut j, mut k) = (old_len, add, old_len + add);
        while j > 0 {
            // Ties take the new id last: a fingerprint's run stays in flush order.
            if i > 0 && self.fingerprints[i - 1] > new[j - 1] {
                self.fingerprints[k - 1] = self.fingerprints[i - 1];
                self.segments[k - 1] = self.segments[i - 1];
                i -= 1;
            } else {
                self.fingerprints[k - 1] = new[j - 1];
                self.segments[k - 1] = segment;
                j -= 1;
            }
            k -= 1;
        }
    }

    /// The live fingerprints, sorted, and an empty set left behind (a commit or a
    /// rollback).
    pub(crate) fn take_live(&mut self) -> Vec<u64> {
        let fingerprints = std::mem::take(&mut self.fingerprints);
        let segments = std::mem::take(&mut self.segments);
        if !segments.contains(&GONE) {
            return fingerprints;
        }
        fingerprints
            .into_iter()
            .zip(segments)
            .filter(|&(_, s)| s != GONE)
            .map(|(fp, _)| fp)
            .collect()
    }

    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.fingerprints.capacity() * 8 + self.segments.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_removals_and_compaction_as_a_multiset() {
        let mut a = Fingerprints::from_unsorted(vec![5, 1, 5, 9]);
        assert_eq!((a.count(5), a.count(1), a.count(2)), (2, 1, 0));
        a.remove(5);
        assert_eq!(a.count(5), 1);
        a.restore_removed();
        assert_eq!(a.count(5), 2);
        a.remove(5);
        a.remove(9);
        a.compact_and_extend(vec![9]);
        assert_eq!(
            (a.count(5), a.count(9), a.count(3), a.count(1)),
            (1, 1, 0, 1)
        );
    }

    #[test]
    fn compaction_merges_the_new_run_into_one_sorted_multiset() {
        let mut a = Fingerprints::from_unsorted(vec![10, 30, 30, 50]);
        a.remove(30);
        a.compact_and_extend(vec![5, 20, 30, 50, 60]);
        assert_eq!(a.sorted, vec![5, 10, 20, 30, 30, 50, 50, 60]);
        assert!(a.removed.is_empty());
        // Nothing to add or remove: the set stays as it is.
        let before = a.sorted.clone();
        a.compact_and_extend(Vec::new());
        assert_eq!(a.sorted, before);
    }

    #[test]
    fn the_same_id_has_the_same_fingerprint_within_a_writer() {
        let h = IdHasher::new();
        assert_eq!(h.fingerprint("doc1"), h.fingerprint("doc1"));
        assert_ne!(h.fingerprint("doc1"), h.fingerprint("doc2"));
    }

    #[test]
    fn flushed_ids_name_their_segments_in_flush_order_and_forget_removed_ones() {
        let mut f = FlushedIds::default();
        f.add_segment(0, vec![40, 10, 30]);
        f.add_segment(1, vec![30, 20, 50]);
        f.add_segment(2, vec![5, 30]);
        assert_eq!(f.fingerprints, vec![5, 10, 20, 30, 30, 30, 40, 50]);
        assert_eq!(f.holders(30).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(f.holders(30).next_back(), Some(2), "newest last");
        assert_eq!(f.holders(10).collect::<Vec<_>>(), vec![0]);
        assert_eq!(f.holders(7).count(), 0);
        f.remove(30, 1);
        assert_eq!(f.holders(30).collect::<Vec<_>>(), vec![0, 2]);
        f.remove(5, 2);
        assert_eq!(f.holders(5).count(), 0);
        assert_eq!(f.take_live(), vec![10, 20, 30, 30, 40, 50]);
        assert_eq!(f.holders(30).count(), 0, "taken: the set is empty");
        assert_eq!(f.heap_bytes(), 0);
    }
}
