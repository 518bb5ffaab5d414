//! The inner product of a query with one row read in place from a vectors file.
//!
//! Rows are little-endian f32 bytes; each lane is decoded with `f32::from_le_bytes`,
//! which is a plain (unaligned) load on a little-endian machine, so no `unsafe` cast of
//! the map is needed. Sixteen independent accumulators let the compiler keep four SSE
//! (or two AVX) registers of partial sums, with no dependency between consecutive
//! additions: f32 addition is not associative, so it would not split one sum itself.
//! The lanes are then added in a fixed order: a row's score is the same on every call,
//! whatever the row's position.

/// Lanes of partial sums.
const LANES: usize = 16;

/// `query · row`, `row` holding `query.len()` little-endian f32s (a longer or shorter
/// row is scored over the shorter of the two; callers pass rows of the right length).
#[inline]
pub(crate) fn dot(query: &[f32], row: &[u8]) -> f32 {
    let (q_blocks, q_tail) = query.as_chunks::<LANES>();
    let (r_blocks, r_tail) = row.as_chunks::<{ 4 * LANES }>();
    let mut acc = [0f32; LANES];
    for (q, r) in q_blocks.iter().zip(r_blocks) {
        let (lanes, _) = r.as_chunks::<4>();
        for ((a, &x), b) in acc.iter_mut().zip(q).zip(lanes) {
            *a += x * f32::from_le_bytes(*b);
        }
    }
    let mut tail = 0f32;
    for (&x, b) in q_tail.iter().zip(r_tail.as_chunks::<4>().0) {
        tail += x * f32::from_le_bytes(*b);
    }
    // Summed in lane order. A pairwise tree looks faster but made LLVM keep the lanes
    // in 2-wide halves of the registers for the whole loop (half the throughput), as
    // `rustc -O --emit asm` shows; in order, the loop is four 4-wide mulps/addps.
    acc.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// Every length around the lane blocks, against a one-line f64 sum.
    #[test]
    fn matches_a_naive_sum_at_every_length() {
        for n in 0..100 {
            let q: Vec<f32> = (0..n).map(|i| ((i * 37 % 11) as f32 - 5.0) / 3.0).collect();
            let r: Vec<f32> = (0..n).map(|i| ((i * 53 % 13) as f32 - 6.0) / 7.0).collect();
            let naive: f64 = q.iter().zip(&r).map(|(&a, &b)| a as f64 * b as f64).sum();
            let got = dot(&q, &bytes(&r));
            assert!(
                (got as f64 - naive).abs() <= 1e-5 * (1.0 + naive.abs()),
                "n {n}: {got} vs {naive}"
            );
        }
    }

    #[test]
    fn each_component_counts_once_in_its_place() {
        for n in [1, 15, 16, 17, 33, 384] {
            for at in [0, n / 2, n - 1] {
                let mut r = vec![0f32; n];
                r[at] = 2.0;
                let q: Vec<f32> = (0..n).map(|i| i as f32).collect();
                assert_eq!(dot(&q, &bytes(&r)), 2.0 * at as f32, "n {n} at {at}");
            }
        }
    }
}
