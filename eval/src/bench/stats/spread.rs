//! One figure over repetitions: the median with the min and max beside it.

use serde::{Deserialize, Serialize};

/// A figure measured in several repetitions. The median is the nearest-rank one (the
/// `ceil(k/2)`-th smallest of `k`), so it is always a value that was observed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread<T> {
    pub median: T,
    pub min: T,
    pub max: T,
}

impl<T: Copy> Spread<T> {
    pub fn single(v: T) -> Self {
        Spread {
            median: v,
            min: v,
            max: v,
        }
    }
}

/// The spread of `values`; `None` when there are none.
pub fn spread_f64(values: &[f64]) -> Option<Spread<f64>> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    Some(Spread {
        median: *v.get(v.len().div_ceil(2).checked_sub(1)?)?,
        min: *v.first()?,
        max: *v.last()?,
    })
}

/// The spread of a figure that may be absent: absent if it is absent in any repetition,
/// since a median over the repetitions that happened to have enough samples would be an
/// estimate from a different population.
pub fn spread_u64(values: &[Option<u64>]) -> Option<Spread<u64>> {
    let mut v: Vec<u64> = values.iter().copied().collect::<Option<_>>()?;
    v.sort_unstable();
    Some(Spread {
        median: *v.get(v.len().div_ceil(2).checked_sub(1)?)?,
        min: *v.first()?,
        max: *v.last()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_is_an_observed_value() {
        let s = spread_u64(&[Some(30), Some(10), Some(20)]).unwrap();
        assert_eq!((s.median, s.min, s.max), (20, 10, 30));
        assert_eq!(spread_u64(&[Some(5), Some(9)]).unwrap().median, 5);
        assert_eq!(spread_f64(&[2.0, 1.0, 4.0, 3.0]).unwrap().median, 2.0);
    }

    #[test]
    fn absent_anywhere_is_absent() {
        assert_eq!(spread_u64(&[Some(1), None, Some(3)]), None);
        assert_eq!(spread_u64(&[]), None);
        assert_eq!(spread_f64(&[]), None);
    }
}
