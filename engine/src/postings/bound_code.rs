//! One-byte codes for the integer parts of a block's score bound (its largest tf and its
//! smallest length per occurrence, see [`super::BlockBound`]). Codes 0–63 are the values
//! themselves; above that each code is about 6% larger than the one before, and code 255
//! stands for `u32::MAX`.
//!
//! A bound must never be below the truth, so the largest tf is rounded *up* to a code and
//! the smallest ratio *down* (BM25 grows with tf and shrinks with length per
//! occurrence). Exact up to 63, which covers nearly every block's tf and ratios up to 16
//! tokens per occurrence; above that a code loses at most ~6% of its value, which loosens
//! the bound a little and never changes a result.

/// `VALUES[c]` is what code `c` stands for; strictly increasing, from 0 to `u32::MAX`.
const VALUES: [u32; 256] = values();

const fn values() -> [u32; 256] {
    let mut v = [0u32; 256];
    let mut i = 0;
    while i < 64 {
        v[i] = i as u32;
        i += 1;
    }
    while i < 255 {
        let prev = v[i - 1];
        v[i] = prev + if prev / 16 > 1 { prev / 16 } else { 1 };
        i += 1;
    }
    v[255] = u32::MAX;
    v
}

/// The smallest code standing for a value ≥ `v`.
pub(crate) fn ceil(v: u32) -> u8 {
    VALUES.partition_point(|&x| x < v) as u8
}

/// The largest code standing for a value ≤ `v`.
pub(crate) fn floor(v: u32) -> u8 {
    (VALUES.partition_point(|&x| x <= v) - 1) as u8
}

/// The value code `c` stands for.
#[inline]
pub(crate) fn value(c: u8) -> u32 {
    VALUES[usize::from(c)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_strictly_increasing_and_exact_below_64() {
        assert!(VALUES.windows(2).all(|w| w[0] < w[1]));
        for v in 0..64 {
            assert_eq!((value(ceil(v)), value(floor(v))), (v, v));
        }
        // The largest finite code is far above any document length heddle accepts.
        assert!(value(254) > 5_000_000, "{}", value(254));
    }

    #[test]
    fn rounding_keeps_bounds_on_the_safe_side() {
        let mut v = 1u32;
        while v < u32::MAX / 3 {
            for x in [v - 1, v, v + 1] {
                assert!(value(ceil(x)) >= x, "ceil({x})");
                assert!(value(floor(x)) <= x, "floor({x})");
                // One code away is already on the other side: the rounding is tight.
                if ceil(x) > 0 {
                    assert!(value(ceil(x) - 1) < x);
                }
                if floor(x) < 255 {
                    assert!(value(floor(x) + 1) > x);
                }
            }
            v = v * 3 / 2 + 1;
        }
        assert_eq!(value(ceil(u32::MAX)), u32::MAX);
        assert_eq!(floor(u32::MAX), 255);
    }
}
