//! The in-flight cap: at most `cap` requests may be due but unfinished; one more is shed.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts admitted-but-unfinished requests. Only one thread (the dispatcher) admits, so
/// the check and the increment need no compare-and-swap: workers only ever decrement.
#[derive(Debug)]
pub struct Admission {
    cap: usize,
    inflight: AtomicUsize,
}

impl Admission {
    pub fn new(cap: usize) -> Self {
        assert!(cap >= 1, "the in-flight cap must be at least 1");
        Admission {
            cap,
            inflight: AtomicUsize::new(0),
        }
    }

    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Called by the dispatcher when a request is due: `true` admits it, `false` sheds it.
    pub fn try_admit(&self) -> bool {
        if self.inflight.load(Ordering::Acquire) >= self.cap {
            return false;
        }
        self.inflight.fetch_add(1, Ordering::AcqRel);
        true
    }

    /// Called when an admitted request has finished.
    pub fn release(&self) {
        let before = self.inflight.fetch_sub(1, Ordering::AcqRel);
        debug_assert!(before > 0, "release without admit");
    }

    pub fn inflight(&self) -> usize {
        self.inflight.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sheds_exactly_beyond_the_cap() {
        let a = Admission::new(2);
        assert!(a.try_admit() && a.try_admit());
        assert!(!a.try_admit());
        a.release();
        assert!(a.try_admit());
        assert_eq!(a.inflight(), 2);
    }
}
