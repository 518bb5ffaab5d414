//! Which external ids the index holds, in 8 bytes an id instead of the ids themselves:
//! a sorted multiset of 64-bit keyed fingerprints. The writer asks it before every add
//! and delete; a hit is only a candidate, which the writer confirms against the stored
//! fields where being wrong would matter (see docs/DECISIONS.md, "Ids in bounded memory").
//!
//! Holding every committed id as a `String` grew the writer's memory with the corpus
//! (about 40 bytes an id in a hash set); the fingerprints grow by 8 bytes an id, and
//! the budget of [`super::IndexWriter::set_memory_budget`] counts them. The ids of the
//! segments flushed since the last commit are one more such set, for all of them at
//! once, merged into the committed set at commit.

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

    /// Adds `new` (in any order), merged into place from the back: the set grows by the
    /// new fingerprints only and is never held twice (a flush adds its segment's ids to
    /// the set of every flushed id this way).
    pub(crate) fn insert(&mut self, mut new: Vec<u64>) {
        new.sort_unstable();
        let (old_len, add) = (self.sorted.len(), new.len());
        self.sorted.reserve_exact(add);
        self.sorted.resize(old_len + add, 0);
        let (mut i, mut j, mut k) = (old_len, add, old_len + add);
        while j > 0 {
            if i > 0 && self.sorted[i - 1] > new[j - 1] {
                self.sorted[k - 1] = self.sorted[i - 1];
                i -= 1;
            } else {
                self.sorted[k - 1] = new[j - 1];
                j -= 1;
            }
            k -= 1;
        }
    }

    /// The fingerprints held once the removals are applied, sorted, leaving the set
    /// empty (a commit moves the flushed ids into the committed ones).
    pub(crate) fn take_surviving(&mut self) -> Vec<u64> {
        let out = if self.removed.is_empty() {
            std::mem::take(&mut self.sorted)
        } else {
            self.surviving()
        };
        *self = Fingerprints::default();
        out
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
    fn insertion_merges_a_new_run_into_place_and_keeps_removals() {
        let mut f = Fingerprints::default();
        f.insert(vec![40, 10, 30]);
        f.insert(vec![30, 20, 50]);
        f.remove(30);
        f.insert(vec![5, 30]);
        assert_eq!(f.sorted, vec![5, 10, 20, 30, 30, 30, 40, 50]);
        assert_eq!((f.count(30), f.count(5), f.count(7)), (2, 1, 0));
        assert_eq!(f.take_surviving(), vec![5, 10, 20, 30, 30, 40, 50]);
        assert_eq!(f.count(30), 0, "taken: the set is empty");
        assert_eq!(f.heap_bytes(), 0);
    }
}
