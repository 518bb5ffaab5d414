//! Which documents a graph walk has already scored: one mark a document, reset in O(1)
//! between walks by moving to a new epoch, so a walk costs what it visits, not the
//! segment's size. Each thread keeps one (`with_visited`) and reuses it for every walk:
//! one byte per document of the largest segment it has walked, allocated once. A byte,
//! not a wider epoch: a 1,000-deep walk tests the marks of up to 32 neighbours for each of
//! its thousand-odd expansions, scattered over the segment, and a quarter
//! of the memory for them made the walk cheaper (docs/RESULTS.md, session 27; it made no
//! difference while each test was a branch); the price is clearing the marks once every
//! 255 walks.

use std::cell::RefCell;

#[derive(Default)]
pub(crate) struct Visited {
    /// `marks[doc] == epoch`: visited in this walk.
    marks: Vec<u8>,
    epoch: u8,
}

impl Visited {
    /// Starts a walk over documents `0..docs`: nothing visited.
    pub(crate) fn reset(&mut self, docs: usize) {
        if self.marks.len() < docs {
            self.marks.resize(docs, 0);
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // Every 255 walks the epochs wrap: clear the marks once.
            self.marks.fill(0);
            self.epoch = 1;
        }
    }

    /// Marks `doc` visited; `false` if it already was. `doc` must be below the `docs`
    /// of the last `reset`.
    #[inline]
    pub(crate) fn insert(&mut self, doc: u32) -> bool {
        let mark = &mut self.marks[doc as usize];
        let fresh = *mark != self.epoch;
        *mark = self.epoch;
        fresh
    }
}

thread_local! {
    static VISITED: RefCell<Visited> = RefCell::new(Visited::default());
}

/// Runs `f` with this thread's visited set (a fresh one if `f` is re-entered).
pub(crate) fn with_visited<R>(f: impl FnOnce(&mut Visited) -> R) -> R {
    VISITED.with(|v| match v.try_borrow_mut() {
        Ok(mut v) => f(&mut v),
        Err(_) => f(&mut Visited::default()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reset_forgets_every_mark_and_the_epoch_wraps_round_to_one() {
        let mut v = Visited::default();
        v.reset(10);
        assert!(v.insert(3) && !v.insert(3) && v.insert(9));
        v.reset(10);
        assert!(v.insert(3), "a new walk has visited nothing");
        v.epoch = u8::MAX;
        v.insert(4);
        v.reset(20);
        assert_eq!(v.epoch, 1);
        assert!(v.insert(4) && v.insert(19));
    }

    /// A mark left from the walk 255 walks back carries the epoch the wrap comes back to:
    /// only the clearing at the wrap keeps it from reading as visited.
    #[test]
    fn a_mark_from_the_walk_whose_epoch_comes_round_again_is_forgotten() {
        let mut v = Visited::default();
        v.reset(10);
        assert!(v.insert(3));
        let first = v.epoch;
        for _ in 0..255 {
            v.reset(10);
        }
        assert_eq!(v.epoch, first, "the set-up: the epoch has come round");
        assert!(v.insert(3), "a mark from 255 walks back reads as visited");
    }
}
