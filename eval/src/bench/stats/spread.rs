//! One figure over repetitions: the median with the min and max beside it.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

/// A figure measured in several repetitions. The median is the nearest-rank one (the
/// `ceil(k/2)`-th smallest of `k`), so it is always a value that was observed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread<T> {
    pub median: T,
    pub min: T,
    pub max: T,
}

impl<T: Copy + PartialEq> Spread<T> {
    pub fn single(v: T) -> Self {
        Spread {
            median: v,
            min: v,
            max: v,
        }
    }

    /// Whether all repetitions agreed (or there was one).
    pub fn is_point(&self) -> bool {
        self.min == self.max
    }
}

/// The spread of `values`; `None` when there are none.
pub fn spread<T: Copy + PartialOrd>(values: &[T]) -> Option<Spread<T>> {
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
    Some(Spread {
        median: *v.get(v.len().div_ceil(2).checked_sub(1)?)?,
        min: *v.first()?,
        max: *v.last()?,
    })
}

/// The spread of a figure that may be absent: absent if it is absent in any repetition,
/// since a median over the repetitions that happened to have enough samples would be an
/// estimate from a different population.
pub fn spread_all<T: Copy + PartialOrd>(values: &[Option<T>]) -> Option<Spread<T>> {
    let v: Vec<T> = values.iter().copied().collect::<Option<_>>()?;
    spread(&v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_is_an_observed_value() {
        let s = spread(&[30, 10, 20]).unwrap();
        assert_eq!((s.median, s.min, s.max), (20, 10, 30));
        assert_eq!(spread(&[5, 9]).unwrap().median, 5);
        assert_eq!(spread(&[2.0, 1.0, 4.0, 3.0]).unwrap().median, 2.0);
    }

    #[test]
    fn absent_anywhere_is_absent() {
        assert_eq!(spread_all(&[Some(1), None, Some(3)]), None);
        assert_eq!(spread_all(&[Some(1), Some(3)]).map(|s| s.max), Some(3));
        assert_eq!(spread::<u64>(&[]), None);
    }
}
