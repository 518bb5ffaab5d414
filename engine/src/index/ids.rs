//! Which external ids the index holds, in 8 bytes an id instead of the ids themselves:
//! a sorted multiset of 64-bit keyed fingerprints. The writer asks it before every add
//! and delete; a hit is only a candidate, which the writer confirms against the stored
//! fields where being wrong would matter (see docs/DECISIONS.md, "Ids in bounded memory").
//!
//! Holding every committed id as a `String` grew the writer's memory with the corpus
//! (about 40 bytes an id in a hash set); the fingerprints grow by 8 bytes an id, and
//! the budget of [`super::IndexWriter::set_memory_budget`] counts them.

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

    /// Applies the removals, then adds `more` (with their own removals applied): the
    /// set a commit publishes. What is held is sorted already and merged with the new
    /// fingerprints in one pass, O(n) in what is held (a full sort on every commit was
    /// O(n log n) even for a one-document commit); the new ones, from however many
    /// segments a memory budget flushed, are gathered into one run first (sorted if
    /// there are several), so a commit of k segments copies the held set once, not k
    /// times. Nothing is rebuilt when nothing changed.
    pub(crate) fn compact_and_extend(&mut self, more: &[&Fingerprints]) {
        if self.removed.is_empty() && more.iter().all(|m| m.sorted.is_empty()) {
            return;
        }
        let add: Vec<u64> = match more {
            [one] => one.surviving(),
            _ => {
                let mut all = Vec::with_capacity(more.iter().map(|m| m.sorted.len()).sum());
                for source in more {
                    all.extend(source.surviving());
                }
                all.sort_unstable();
                all
            }
        };
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
        let mut b = Fingerprints::from_unsorted(vec![9, 3]);
        b.remove(3);
        a.compact_and_extend(&[&b]);
        assert_eq!(
            (a.count(5), a.count(9), a.count(3), a.count(1)),
            (1, 1, 0, 1)
        );
    }

    #[test]
    fn compaction_merges_sorted_runs_into_one_sorted_multiset() {
        let mut a = Fingerprints::from_unsorted(vec![10, 30, 30, 50]);
        a.remove(30);
        let b = Fingerprints::from_unsorted(vec![5, 30, 60]);
        let mut c = Fingerprints::from_unsorted(vec![20, 50, 70]);
        c.remove(70);
        a.compact_and_extend(&[&b, &c]);
        assert_eq!(a.sorted, vec![5, 10, 20, 30, 30, 50, 50, 60]);
        assert!(a.removed.is_empty());
        // Nothing to add or remove: the set stays as it is.
        let before = a.sorted.clone();
        a.compact_and_extend(&[&Fingerprints::default()]);
        assert_eq!(a.sorted, before);
    }

    #[test]
    fn the_same_id_has_the_same_fingerprint_within_a_writer() {
        let h = IdHasher::new();
        assert_eq!(h.fingerprint("doc1"), h.fingerprint("doc1"));
        assert_ne!(h.fingerprint("doc1"), h.fingerprint("doc2"));
    }
}
