//! What a skip entry promises about every posting of its block, so that a query can bound
//! the block's BM25 scores without decoding it — for whatever k1, b and average length
//! the query brings.
//!
//! BM25's term score is `w·tf / (tf + k1(1−b) + k1·b·len/avgdl)`. With `x = 1/tf`,
//! `y = len/tf`, `α = k1(1−b)` and `β = k1·b/avgdl` it is `w / (1 + αx + βy)`, so the
//! block's best score is `w / (1 + (α+β)·h(t))` with `t = β/(α+β)` and
//!
//! ```text
//! h(t) = min over the block's postings of (1−t)·x + t·y
//! ```
//!
//! `h` is a minimum of linear functions of `t`, hence concave: it lies above every chord
//! between two of its points. A block stores lower bounds of `h` at five values of `t` —
//! `0` (one over the largest tf), `1` (the smallest length per occurrence) and three in
//! between ([`SAMPLES`]) — and a query interpolates between the two around its own `t`:
//! never above the true `h`, so never a bound below a real score.
//!
//! The two ends alone (what formats before version 7 kept, as the largest tf and the
//! smallest length) pair a long document's tf with a short one's length: for a word that
//! recurs in proportion to length ("webster" in a dictionary, cited once a sense) that was
//! far above any real score and no block could be skipped. The three inner samples follow
//! the true `h` where queries live: `t` is `b / (avgdl·(1−b) + b)`, about 0.005–0.25 for
//! b of 0.4–0.75 and average lengths of 10–200 tokens.
//!
//! Worked example: a block of two postings, (tf 1, len 8) and (tf 12, len 480). Its ends
//! are h(0) = 1/12 and h(1) = 8; the old bound at t = 0.08 used (1−t)/12 + 8t = 0.72,
//! while the true h(0.08) = min(0.92 + 0.64, 0.077 + 3.2) = 1.56 — a bound more than twice
//! as tight in `(α+β)·h`.

use super::bound_code;

/// Units of [`BlockBound::min_ratio`]: a quarter of a token per occurrence.
pub(crate) const RATIO_SCALE: u32 = 4;

/// The inner values of `t` at which a block stores a lower bound of `h` (powers of two:
/// exact in binary, so writer and reader compute the same numbers everywhere).
pub(crate) const SAMPLES: [f64; 3] = [1.0 / 128.0, 1.0 / 32.0, 1.0 / 8.0];

/// A block's (or a list's) promise: every posting has `tf ≤ max_tf`,
/// `len/tf ≥ min_ratio / RATIO_SCALE`, and `(1−t)/tf + t·len/tf ≥ inner[i]` for each
/// `t = SAMPLES[i]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct BlockBound {
    pub(crate) max_tf: u32,
    pub(crate) min_ratio: u32,
    pub(crate) inner: [f64; 3],
}

impl BlockBound {
    /// Promises nothing can score (a block past the end of a list).
    pub(crate) const NONE: BlockBound = BlockBound {
        max_tf: 0,
        min_ratio: u32::MAX,
        inner: [f64::INFINITY; 3],
    };

    /// The exact bound of one posting.
    pub(crate) fn of(tf: u32, len: u32) -> Self {
        BlockBound {
            max_tf: tf,
            min_ratio: ratio(tf, len),
            inner: SAMPLES.map(|t| h_of(t, tf, len)),
        }
    }

    /// The bound of both blocks' postings.
    pub(crate) fn merge(self, other: BlockBound) -> Self {
        BlockBound {
            max_tf: self.max_tf.max(other.max_tf),
            min_ratio: self.min_ratio.min(other.min_ratio),
            inner: [0, 1, 2].map(|i| self.inner[i].min(other.inner[i])),
        }
    }

    /// Whether a posting with this tf in a document of this length keeps the promise.
    pub(crate) fn covers(&self, tf: u32, len: u32) -> bool {
        tf >= 1
            && tf <= self.max_tf
            && ratio(tf, len) >= self.min_ratio
            && SAMPLES
                .iter()
                .zip(&self.inner)
                .all(|(&t, &h)| h_of(t, tf, len) >= h)
    }

    /// Rounded to one-byte codes on the safe side: tf up, everything else down.
    pub(crate) fn codes(&self) -> [u8; 5] {
        [
            bound_code::ceil(self.max_tf),
            bound_code::floor(self.min_ratio),
            h_code_floor(self.inner[0]),
            h_code_floor(self.inner[1]),
            h_code_floor(self.inner[2]),
        ]
    }

    pub(crate) fn from_codes(codes: [u8; 5]) -> Self {
        BlockBound {
            max_tf: bound_code::value(codes[0]),
            min_ratio: bound_code::value(codes[1]),
            inner: [codes[2], codes[3], codes[4]].map(h_value),
        }
    }

    /// A lower bound of `h(t)` at the `t` that `at` was made for: the chord between the
    /// stored points around it (below the concave `h`). `f64::INFINITY` for
    /// [`BlockBound::NONE`].
    #[inline]
    pub(crate) fn h(&self, at: Interp) -> f64 {
        if self.max_tf == 0 {
            return f64::INFINITY;
        }
        at.interpolate(|i| self.point(i))
    }

    #[cfg(test)]
    pub(crate) fn h_at(&self, t: f64) -> f64 {
        self.h(Interp::at(t))
    }

    /// The stored lower bound of `h` at `T[i]`.
    #[inline]
    fn point(&self, i: usize) -> f64 {
        match i {
            0 => 1.0 / f64::from(self.max_tf),
            1..=3 => self.inner[i - 1],
            _ => f64::from(self.min_ratio) / f64::from(RATIO_SCALE),
        }
    }
}

/// The values of `t` at which a bound holds a point of `h`: 0, the samples, 1.
const T: [f64; 5] = [0.0, SAMPLES[0], SAMPLES[1], SAMPLES[2], 1.0];

/// Where one `t` falls among the stored points, worked out once per query term: the
/// point below it and how far towards the next.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Interp {
    lo: usize,
    f: f64,
}

impl Interp {
    /// The chord between points `lo` and `lo + 1`, written so that f = 0 and f = 1 give
    /// the points exactly.
    #[inline]
    fn interpolate(self, point: impl Fn(usize) -> f64) -> f64 {
        (point(self.lo) * (1.0 - self.f) + point(self.lo + 1) * self.f).max(0.0)
    }

    /// For `t` in `[0, 1]` (values outside are clamped).
    pub(crate) fn at(t: f64) -> Self {
        let t = t.clamp(0.0, 1.0);
        let lo = T[1..4].iter().take_while(|&&s| s <= t).count();
        let f = ((t - T[lo]) / (T[lo + 1] - T[lo])).clamp(0.0, 1.0);
        Interp { lo, f }
    }
}

/// [`BlockBound::h`] of `BlockBound::from_codes(codes)`, decoding only the two points it
/// needs: a skip entry's bound is read this way for every block a query considers.
#[inline]
pub(crate) fn h_of_codes(codes: &[u8; 5], at: Interp) -> f64 {
    if codes[0] == 0 {
        return f64::INFINITY; // max tf 0: nothing scores
    }
    at.interpolate(|i| match i {
        0 => 1.0 / f64::from(bound_code::value(codes[0])),
        1..=3 => h_value(codes[i + 1]),
        _ => f64::from(bound_code::value(codes[1])) / f64::from(RATIO_SCALE),
    })
}

/// `(1−t)/tf + t·len/tf` for one posting, computed one way everywhere.
fn h_of(t: f64, tf: u32, len: u32) -> f64 {
    let tf = f64::from(tf.max(1));
    ((1.0 - t) + t * f64::from(len)) / tf
}

/// `floor(RATIO_SCALE · len / tf)`: a posting keeps a promise of `min_ratio` exactly when
/// this is at least `min_ratio` (an integer), so the check is exact.
fn ratio(tf: u32, len: u32) -> u32 {
    let r = u64::from(len) * u64::from(RATIO_SCALE) / u64::from(tf.max(1));
    u32::try_from(r).unwrap_or(u32::MAX)
}

/// What an inner-sample code stands for: 0 for code 0, else `(16 + c mod 16) · 2^(c/16 − 12)`
/// — sixteen linear steps an octave (at most 6.25% apart) from 0.0042 to 248, every value
/// exact in binary.
const H_VALUES: [f64; 256] = h_values();

const fn h_values() -> [f64; 256] {
    let mut v = [0.0f64; 256];
    let mut c = 1;
    while c < 256 {
        let mantissa = (16 + c % 16) as f64;
        let mut scale = 1.0 / 4096.0; // 2^-12
        let mut e = 0;
        while e < c / 16 {
            scale *= 2.0;
            e += 1;
        }
        v[c] = mantissa * scale;
        c += 1;
    }
    v
}

fn h_value(code: u8) -> f64 {
    H_VALUES[usize::from(code)]
}

/// The largest code standing for a value ≤ `h` (0 for anything below the smallest, or
/// NaN).
fn h_code_floor(h: f64) -> u8 {
    (H_VALUES.partition_point(|&v| v <= h).max(1) - 1) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inner_codes_increase_and_round_down() {
        assert!(H_VALUES.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(h_code_floor(f64::NAN), 0);
        assert_eq!(h_code_floor(-1.0), 0);
        for h in [
            0.001,
            0.0042,
            0.5,
            1.0,
            1.03,
            7.77,
            248.0,
            1e9,
            f64::INFINITY,
        ] {
            let c = h_code_floor(h);
            assert!(h_value(c) <= h, "{h}");
            if c < 255 {
                assert!(h_value(c + 1) > h, "{h}: tight");
            }
        }
    }

    #[test]
    fn a_bound_covers_exactly_the_postings_it_was_made_from_and_weaker_ones() {
        let b = BlockBound::of(3, 10).merge(BlockBound::of(1, 4)); // ratios 13 and 16
        assert_eq!((b.max_tf, b.min_ratio), (3, 13));
        assert!(b.covers(3, 10) && b.covers(1, 4) && b.covers(2, 7));
        assert!(!b.covers(4, 100), "tf above the maximum");
        assert!(
            !b.covers(3, 9),
            "length per occurrence below the minimum (12 < 13)"
        );
        assert!(!b.covers(0, 5), "no posting has tf 0");
        // Codes round to the safe side, so what a bound covers its codes cover.
        let coded = BlockBound::from_codes(BlockBound::of(1_000, 70).codes());
        assert!(coded.covers(1_000, 70));
        assert!(!BlockBound::NONE.covers(1, u32::MAX));
    }

    /// The worked example of the module docs, and the property the interpolation rests
    /// on: at every t it is at most the true h of every posting, and at the samples it
    /// is what was stored.
    #[test]
    fn interpolation_never_exceeds_the_true_minimum() {
        let postings = [(1u32, 8u32), (12, 480), (3, 20), (7, 50), (1, 300)];
        let b = postings
            .iter()
            .map(|&(tf, len)| BlockBound::of(tf, len))
            .fold(BlockBound::NONE, BlockBound::merge);
        let coded = BlockBound::from_codes(b.codes());
        for k in 0..=1000 {
            let t = f64::from(k) / 1000.0;
            let truth = postings
                .iter()
                .map(|&(tf, len)| h_of(t, tf, len))
                .fold(f64::INFINITY, f64::min);
            assert!(b.h_at(t) <= truth * (1.0 + 1e-12), "t {t}");
            assert!(coded.h_at(t) <= truth * (1.0 + 1e-12), "t {t} coded");
        }
        assert_eq!(b.h_at(SAMPLES[1]), b.inner[1]);
        for k in 0..=100 {
            let at = Interp::at(f64::from(k) / 100.0);
            assert_eq!(
                h_of_codes(&b.codes(), at),
                coded.h(at),
                "decoding only two points"
            );
        }
        // The docs' example: the two ends alone give (1−t)/12 + 8t = 0.72 at t = 0.08, the
        // samples the true 1.56 (one posting is best at every sample around 0.08).
        let two = BlockBound::of(1, 8).merge(BlockBound::of(12, 480));
        let ends = 0.92 / 12.0 + 8.0 * 0.08;
        assert!((two.h_at(0.08) - 1.56).abs() < 1e-9, "{}", two.h_at(0.08));
        assert!(two.h_at(0.08) > 2.0 * ends);
    }
}
