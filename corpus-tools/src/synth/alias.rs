//! Walker's alias table: O(1) sampling from a fixed discrete distribution.

use super::rng::Stream;

/// Samples index `i` with probability `weights[i] / sum(weights)`. Built with Vose's
/// method from basic float operations in a fixed order, so the table (and what it samples
/// from a given stream) is the same on every platform.
#[derive(Debug, Clone)]
pub(crate) struct AliasTable {
    /// Probability of keeping column `i` rather than taking its alias, as a 53-bit
    /// threshold compared against the stream's top 53 bits.
    keep: Vec<u64>,
    alias: Vec<u32>,
}

const ONE: f64 = (1u64 << 53) as f64;

impl AliasTable {
    /// A table over `weights`, which must be non-empty, finite, non-negative, with a
    /// positive sum.
    pub(crate) fn new(weights: &[f64]) -> AliasTable {
        let n = weights.len();
        assert!(
            n > 0 && n <= u32::MAX as usize,
            "alias table of {n} entries"
        );
        let sum: f64 = weights.iter().sum();
        assert!(sum > 0.0 && sum.is_finite(), "weights sum to {sum}");
        let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / sum).collect();
        let mut keep = vec![ONE as u64; n];
        let mut alias: Vec<u32> = (0..n as u32).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&i| scaled[i] < 1.0);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            keep[s] = (scaled[s] * ONE) as u64;
            alias[s] = l as u32;
            scaled[l] = (scaled[l] + scaled[s]) - 1.0;
            if scaled[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // Whatever is left is 1 up to rounding: always keep.
        AliasTable { keep, alias }
    }

    pub(crate) fn sample(&self, s: &mut Stream) -> usize {
        let column = s.below(self.keep.len() as u64) as usize;
        if s.next_u64() >> 11 < self.keep[column] {
            column
        } else {
            self.alias[column] as usize
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::rng::Purpose;

    #[test]
    fn samples_in_proportion_to_the_weights() {
        let weights = [5.0, 0.0, 1.0, 3.0, 1.0];
        let table = AliasTable::new(&weights);
        let mut s = Stream::new(3, Purpose::Documents, 0);
        let mut counts = [0u32; 5];
        let draws = 100_000;
        for _ in 0..draws {
            counts[table.sample(&mut s)] += 1;
        }
        assert_eq!(counts[1], 0);
        for (i, w) in weights.iter().enumerate() {
            let expected = w / 10.0 * draws as f64;
            assert!(
                (counts[i] as f64 - expected).abs() < 0.02 * draws as f64,
                "{counts:?}"
            );
        }
    }
}
