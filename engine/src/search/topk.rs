//! A bounded collector of the k best (score, doc) pairs: higher score first, and among
//! equal scores the lower internal doc id first.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Scored {
    pub score: f64,
    pub doc: u64,
}

/// Ranks entries so that the *worst* is the greatest: a max-heap then keeps the worst
/// kept entry on top, ready to be evicted.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Worst(Scored);

impl Eq for Worst {}

impl Ord for Worst {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .0
            .score
            .total_cmp(&self.0.score)
            .then(self.0.doc.cmp(&other.0.doc))
    }
}

impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[derive(Clone)]
pub(crate) struct TopK {
    k: usize,
    heap: BinaryHeap<Worst>,
}

/// The most entries reserved up front: `k` comes from the caller, so the heap grows with
/// the documents actually pushed rather than trusting it (k = 2^32 once asked for 64 GB).
const MAX_RESERVED: usize = 1024;

impl TopK {
    pub(crate) fn new(k: usize) -> Self {
        TopK {
            k,
            heap: BinaryHeap::with_capacity(k.min(MAX_RESERVED)),
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, score: f64, doc: u64) {
        if self.k == 0 {
            return;
        }
        let entry = Worst(Scored { score, doc });
        if self.heap.len() < self.k {
            self.heap.push(entry);
        } else if let Some(mut worst) = self.heap.peek_mut()
            && entry < *worst
        {
            *worst = entry;
        }
    }

    /// The worst kept score once k entries are kept: a later document (higher internal
    /// id) must score strictly more to enter. `None` while fewer than k are kept.
    #[inline]
    pub(crate) fn threshold(&self) -> Option<f64> {
        if self.heap.len() < self.k {
            None
        } else {
            self.heap.peek().map(|w| w.0.score)
        }
    }

    /// Best first.
    pub(crate) fn into_sorted(self) -> Vec<Scored> {
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|w| w.0)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_best_k_and_breaks_ties_by_lower_doc() {
        let mut top = TopK::new(3);
        for (score, doc) in [(1.0, 5), (3.0, 9), (2.0, 1), (3.0, 2), (2.0, 0), (0.5, 3)] {
            top.push(score, doc);
        }
        let got: Vec<(f64, u64)> = top.into_sorted().iter().map(|s| (s.score, s.doc)).collect();
        assert_eq!(got, [(3.0, 2), (3.0, 9), (2.0, 0)]);
    }

    #[test]
    fn a_huge_k_reserves_nothing_it_does_not_use() {
        let mut top = TopK::new(usize::MAX);
        assert!(top.heap.capacity() <= MAX_RESERVED);
        top.push(1.0, 1);
        top.push(2.0, 0);
        assert_eq!(top.threshold(), None);
        let got: Vec<u64> = top.into_sorted().iter().map(|s| s.doc).collect();
        assert_eq!(got, [0, 1]);
    }

    #[test]
    fn k_zero_collects_nothing() {
        let mut top = TopK::new(0);
        top.push(1.0, 1);
        assert!(top.into_sorted().is_empty());
    }
}
