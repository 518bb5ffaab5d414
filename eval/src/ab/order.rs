//! The order runs are made in: matched pairs, alternating which build goes first
//! (A B | B A | A B | B A …), so that a drift of the machine over the session (caches,
//! thermals, a neighbour's job) falls on both builds alike instead of on the second.

use serde::{Deserialize, Serialize};

/// Which build a run measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Baseline,
    Candidate,
}

impl Side {
    pub fn letter(self) -> char {
        match self {
            Side::Baseline => 'A',
            Side::Candidate => 'B',
        }
    }
}

/// `(pair, side)` for every run, in the order they run: pair `i` runs the baseline first
/// when `i` is even and the candidate first when it is odd.
pub fn abba(pairs: usize) -> Vec<(usize, Side)> {
    (0..pairs)
        .flat_map(|i| {
            if i % 2 == 0 {
                [(i, Side::Baseline), (i, Side::Candidate)]
            } else {
                [(i, Side::Candidate), (i, Side::Baseline)]
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_alternate_which_build_goes_first() {
        let letters: String = abba(4).iter().map(|(_, s)| s.letter()).collect();
        assert_eq!(letters, "ABBAABBA");
        let pairs: Vec<usize> = abba(3).iter().map(|(p, _)| *p).collect();
        assert_eq!(pairs, vec![0, 0, 1, 1, 2, 2]);
        // Over any two consecutive pairs, each build runs once in each half.
        assert!(abba(0).is_empty());
    }
}
