//! The generator's random stream: ChaCha8 keyed by (seed, purpose), one stream per item.
//!
//! Document `i` is generated from its own stream (`set_stream(i)`), so documents can be
//! generated in any order, on any number of threads, and still give the same bytes.
//! Only the raw ChaCha8 output is used; everything built on it (uniform floats, bounded
//! integers, normals) is defined here, so no library's choice of algorithm can change
//! the corpus.

use chacha20::ChaCha8Rng;
use chacha20::rand_core::{Rng as _, SeedableRng};

use super::detmath;

/// What a stream is used for; part of the key, so purposes never share random numbers.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Purpose {
    Documents,
    Queries,
    /// Query classes (`queries --class`): one stream per (class, query).
    QueryClasses,
}

/// A deterministic random stream.
pub(crate) struct Stream {
    rng: ChaCha8Rng,
}

impl Stream {
    /// Stream number `index` for `purpose` under `seed`.
    pub(crate) fn new(seed: u64, purpose: Purpose, index: u64) -> Stream {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        let tag: &[u8] = match purpose {
            Purpose::Documents => b"heddle-corpus/documents",
            Purpose::Queries => b"heddle-corpus/queries",
            Purpose::QueryClasses => b"heddle-corpus/classes",
        };
        key[8..8 + tag.len()].copy_from_slice(tag);
        let mut rng = ChaCha8Rng::from_seed(key);
        rng.set_stream(index);
        Stream { rng }
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub(crate) fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in (0, 1]: safe to take the logarithm of.
    pub(crate) fn uniform_open0(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n), by Lemire's multiply-and-reject (no modulo bias).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0)");
        loop {
            let x = self.next_u64();
            let m = (x as u128) * (n as u128);
            let low = m as u64;
            if low >= n.wrapping_neg() % n {
                return (m >> 64) as u64;
            }
        }
    }

    /// Uniform integer in [lo, hi] (inclusive).
    pub(crate) fn between(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `p`.
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        self.uniform() < p
    }

    /// A standard normal deviate (Marsaglia's polar method: needs only `ln` and `sqrt`).
    pub(crate) fn normal(&mut self) -> f64 {
        loop {
            let u = 2.0 * self.uniform() - 1.0;
            let v = 2.0 * self.uniform() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                return u * (-2.0 * detmath::ln(s) / s).sqrt();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_key_and_stream_give_the_same_numbers_others_differ() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut s = Stream::new(7, Purpose::Documents, 3);
                move |_| s.next_u64()
            })
            .collect();
        let mut again = Stream::new(7, Purpose::Documents, 3);
        assert_eq!(a, (0..4).map(|_| again.next_u64()).collect::<Vec<_>>());
        for mut other in [
            Stream::new(8, Purpose::Documents, 3),
            Stream::new(7, Purpose::Documents, 4),
            Stream::new(7, Purpose::Queries, 3),
        ] {
            assert_ne!(a[0], other.next_u64());
        }
    }

    #[test]
    fn the_raw_stream_is_pinned() {
        // Pins the raw stream: if a dependency update changed it, every corpus would change.
        let mut s = Stream::new(7, Purpose::Documents, 0);
        let first = s.next_u64();
        assert_eq!(first, PINNED_FIRST_U64, "{first:#x}");
    }

    const PINNED_FIRST_U64: u64 = 0xf85f_74d7_ed74_1f46;

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut s = Stream::new(1, Purpose::Queries, 0);
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            counts[s.below(6) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{counts:?}"
        );
        assert_eq!(s.between(5, 5), 5);
    }

    #[test]
    fn normal_has_mean_zero_and_unit_variance() {
        let mut s = Stream::new(1, Purpose::Documents, 99);
        let xs: Vec<f64> = (0..50_000).map(|_| s.normal()).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / xs.len() as f64;
        assert!(mean.abs() < 0.02, "{mean}");
        assert!((var - 1.0).abs() < 0.03, "{var}");
    }
}
