//! The inner product of a query with one row read in place from a vectors file, on the
//! widest instructions the machine has.
//!
//! Rows are little-endian f32 bytes. On x86-64 with AVX2 and FMA (checked at run time,
//! once per process: every score of a process comes from one path, so an exact scan and
//! a graph walk give a row the same score) four 8-lane registers of fused
//! multiply-adds run side by side; elsewhere a portable loop keeps sixteen independent
//! partial sums, which the compiler turns into SSE. Either way the partial sums are added
//! in a fixed order, so a row's score is the same on every call, whatever the row's
//! position. The two paths round differently (a fused multiply-add rounds once, a
//! multiply then an add twice), so they agree to within a few units in the last place
//! of the sum of the products' magnitudes (the tests hold both to
//! `4 · n · ε · Σ|qᵢ·rᵢ|` of an f64 sum), never bit for bit.

/// Lanes of partial sums of the portable path.
const LANES: usize = 16;

/// `query · row`, `row` holding `query.len()` little-endian f32s (a longer or shorter
/// row is scored over the shorter of the two; callers pass rows of the right length).
#[inline]
pub(crate) fn dot(query: &[f32], row: &[u8]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx2_fma() {
            let n = query.len().min(row.len() / 4);
            // SAFETY: AVX2 and FMA were detected on this CPU just above, and `n` is
            // at most the query's length and the row's length in f32s.
            return unsafe { avx2::dot(query.as_ptr(), row.as_ptr(), n) };
        }
    }
    portable(query, row)
}

/// `a · b` for two rows of little-endian f32 bytes (the shorter's length), for building
/// graphs, where both sides are rows. The same kernels as [`dot`], so within the same
/// tolerance of the exact sum; not used for any score a search returns.
#[inline]
pub(crate) fn dot_rows(a: &[u8], b: &[u8]) -> f32 {
    let n = a.len().min(b.len()) / 4;
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx2_fma() {
            // SAFETY: AVX2 and FMA were detected on this CPU just above; both slices
            // hold at least `n` f32s' bytes, and the kernel reads them only through
            // unaligned loads.
            return unsafe { avx2::dot(a.as_ptr().cast::<f32>(), b.as_ptr(), n) };
        }
    }
    let a: Vec<f32> = a[..4 * n]
        .as_chunks::<4>()
        .0
        .iter()
        .map(|b| f32::from_le_bytes(*b))
        .collect();
    portable(&a, b)
}

/// `Σ weights[i] · codes[i]` over the shorter of the two: a query's weights against one
/// row's 8-bit codes ([`super::codes`]). The same dispatch as [`dot`]: one path a
/// process, partial sums added in a fixed order, so a row's coded score is the same on
/// every call.
#[inline]
pub(crate) fn dot_codes(weights: &[f32], codes: &[u8]) -> f32 {
    let n = weights.len().min(codes.len());
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx2_fma() {
            // SAFETY: AVX2 and FMA were detected on this CPU just above, and both
            // slices hold at least `n` values.
            return unsafe { avx2::dot_codes(weights.as_ptr(), codes.as_ptr(), n) };
        }
    }
    portable_codes(&weights[..n], &codes[..n])
}

/// Asks the CPU to start loading `row` into its caches. A graph walk scores the rows of
/// a document's neighbours, scattered through the vectors file: asking for all of them
/// before scoring the first overlaps their memory latency instead of paying it one row
/// at a time. A hint only: no effect on any result, and nothing on other machines.
#[inline]
pub(crate) fn prefetch(row: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    for line in row.chunks(64) {
        // SAFETY: a prefetch is a hint that never faults, and the pointer is into a
        // live slice.
        unsafe {
            std::arch::x86_64::_mm_prefetch(
                line.as_ptr().cast::<i8>(),
                std::arch::x86_64::_MM_HINT_T0,
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = row;
}

/// Whether this CPU runs AVX2 and FMA (the standard library caches the answer).
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx2_fma() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

/// Which kernel the inner product of vector search runs on this machine, for reports
/// ("avx2+fma" or "portable").
pub fn kernel_name() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx2_fma() {
            return "avx2+fma";
        }
    }
    "portable"
}

/// The portable kernel: sixteen independent accumulators, so consecutive additions do
/// not wait for each other (f32 addition is not associative, so the compiler would not
/// split one sum itself).
fn portable(query: &[f32], row: &[u8]) -> f32 {
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

/// The portable coded kernel: sixteen independent accumulators, as [`portable`].
fn portable_codes(weights: &[f32], codes: &[u8]) -> f32 {
    let (w_blocks, w_tail) = weights.as_chunks::<LANES>();
    let (c_blocks, c_tail) = codes.as_chunks::<LANES>();
    let mut acc = [0f32; LANES];
    for (w, c) in w_blocks.iter().zip(c_blocks) {
        for ((a, &x), &b) in acc.iter_mut().zip(w).zip(c) {
            *a += x * f32::from(b);
        }
    }
    let mut tail = 0f32;
    for (&x, &b) in w_tail.iter().zip(c_tail) {
        tail += x * f32::from(b);
    }
    acc.iter().sum::<f32>() + tail
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// `Σ query[i] · lanes(i)[j]` over the whole blocks of 8 below `n` (`lanes(i)` is the
    /// row's values `i .. i + 8` as f32s), and where those blocks end. Four independent
    /// accumulators hide the FMA's latency (4 cycles, two a cycle on recent cores); they
    /// are added in a fixed order: (a0 + a1) + (a2 + a3), then the halves, then the lanes.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; `query` must be valid for `n` f32 reads, and
    /// `lanes(i)` safe to call for every `i` with `i + 8 <= n`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn blocks(query: *const f32, n: usize, lanes: impl Fn(usize) -> __m256) -> (f32, usize) {
        let mut i = 0;
        // SAFETY (every load below): `i + 32 <= n` (or `i + 8 <= n`) before each read at
        // offset `i`, `query` is valid for `n` f32s by the caller's promise, and `loadu`
        // needs no alignment.
        unsafe {
            let (mut a0, mut a1, mut a2, mut a3) = (
                _mm256_setzero_ps(),
                _mm256_setzero_ps(),
                _mm256_setzero_ps(),
                _mm256_setzero_ps(),
            );
            while i + 32 <= n {
                a0 = _mm256_fmadd_ps(_mm256_loadu_ps(query.add(i)), lanes(i), a0);
                a1 = _mm256_fmadd_ps(_mm256_loadu_ps(query.add(i + 8)), lanes(i + 8), a1);
                a2 = _mm256_fmadd_ps(_mm256_loadu_ps(query.add(i + 16)), lanes(i + 16), a2);
                a3 = _mm256_fmadd_ps(_mm256_loadu_ps(query.add(i + 24)), lanes(i + 24), a3);
                i += 32;
            }
            while i + 8 <= n {
                a0 = _mm256_fmadd_ps(_mm256_loadu_ps(query.add(i)), lanes(i), a0);
                i += 8;
            }
            let sum = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
            let half = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
            let pair = _mm_add_ps(half, _mm_movehl_ps(half, half));
            let one = _mm_add_ss(pair, _mm_shuffle_ps(pair, pair, 0b01));
            (_mm_cvtss_f32(one), i)
        }
    }

    /// `Σ query[i] · row[i]` for `i < n`, `row` read as little-endian f32s (x86-64 is
    /// little-endian, so a plain unaligned load reads them).
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; `query` must be valid for `n` f32 reads and
    /// `row` for `4 × n` byte reads (no alignment needed of either: every read is an
    /// unaligned load).
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn dot(query: *const f32, row: *const u8, n: usize) -> f32 {
        let row = row.cast::<f32>();
        // SAFETY: `blocks` reads 8 values at `i` only where `i + 8 <= n`, and every read
        // here and in the tail is below `n`, which both pointers are valid for.
        unsafe {
            let (mut total, mut i) = blocks(query, n, |i| _mm256_loadu_ps(row.add(i)));
            while i < n {
                total += query.add(i).read_unaligned() * row.add(i).read_unaligned();
                i += 1;
            }
            total
        }
    }

    /// Eight codes at `codes`, widened to f32s.
    ///
    /// # Safety
    /// AVX2 must be supported; `codes` must be valid for 8 byte reads.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn widen(codes: *const u8) -> __m256 {
        // SAFETY: the caller's promise; `loadl_epi64` reads 8 bytes, unaligned.
        unsafe { _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(codes.cast()))) }
    }

    /// `Σ weights[i] · codes[i]` for `i < n`.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; `weights` must be valid for `n` f32 reads and
    /// `codes` for `n` byte reads (no alignment needed).
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn dot_codes(weights: *const f32, codes: *const u8, n: usize) -> f32 {
        // SAFETY: as in `dot`: every read is below `n`.
        unsafe {
            let (mut total, mut i) = blocks(weights, n, |i| widen(codes.add(i)));
            while i < n {
                total += weights.add(i).read_unaligned() * f32::from(codes.add(i).read());
                i += 1;
            }
            total
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// `4 · n · ε · Σ|qᵢ·rᵢ|`: how far an f32 sum of `n` products may stray from the
    /// exact one, with room for both kernels' orders (each rounding adds at most
    /// ε/2 of a partial sum, and no partial sum exceeds `Σ|qᵢ·rᵢ|`).
    fn bound(q: &[f32], r: &[f32]) -> f64 {
        let magnitude: f64 = q
            .iter()
            .zip(r)
            .map(|(&a, &b)| (a as f64 * b as f64).abs())
            .sum();
        4.0 * q.len().max(1) as f64 * f64::from(f32::EPSILON) * magnitude + f64::MIN_POSITIVE
    }

    fn vectors(n: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 4.0
        };
        (
            (0..n).map(|_| next()).collect(),
            (0..n).map(|_| next()).collect(),
        )
    }

    /// Every length around the register blocks, both kernels against a one-line f64 sum.
    #[test]
    fn both_kernels_match_a_naive_sum_at_every_length() {
        for n in 0..200 {
            let (q, r) = vectors(n, n as u64 + 1);
            let naive: f64 = q.iter().zip(&r).map(|(&a, &b)| a as f64 * b as f64).sum();
            let tolerance = bound(&q, &r);
            let row = bytes(&r);
            for (name, got) in [
                ("dispatched", dot(&q, &row)),
                ("portable", portable(&q, &row)),
            ] {
                assert!(
                    (got as f64 - naive).abs() <= tolerance,
                    "{name} n {n}: {got} vs {naive} (tolerance {tolerance})"
                );
            }
        }
    }

    /// The AVX2 kernel itself (not only through the dispatch), at the dimensions heddle
    /// meets, against the portable one: within the stated tolerance, and the same bits
    /// on every call.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx2_kernel_agrees_with_the_portable_one_within_the_bound() {
        if !has_avx2_fma() {
            eprintln!("this CPU has no AVX2+FMA: only the portable kernel can be tested");
            return;
        }
        for n in [1, 7, 8, 9, 31, 32, 33, 100, 384, 768, 1000, 1536] {
            for seed in 0..20 {
                let (q, r) = vectors(n, seed * 1000 + n as u64);
                let row = bytes(&r);
                // SAFETY: AVX2 and FMA were detected above; both hold n values.
                let fast = unsafe { avx2::dot(q.as_ptr(), row.as_ptr(), n) };
                let again = unsafe { avx2::dot(q.as_ptr(), row.as_ptr(), n) };
                assert_eq!(fast.to_bits(), again.to_bits(), "n {n}: not repeatable");
                assert_eq!(
                    fast.to_bits(),
                    dot(&q, &row).to_bits(),
                    "n {n}: not dispatched"
                );
                let slow = portable(&q, &row);
                assert!(
                    (f64::from(fast) - f64::from(slow)).abs() <= 2.0 * bound(&q, &r),
                    "n {n} seed {seed}: avx2 {fast} portable {slow}"
                );
            }
        }
        assert_eq!(kernel_name(), "avx2+fma");
    }

    /// The coded kernel: both paths against an f64 sum at every length around the
    /// register blocks, every code value, and the AVX2 one repeatable bit for bit.
    #[test]
    fn both_coded_kernels_match_a_naive_sum_at_every_length() {
        for n in 0..200 {
            let (w, _) = vectors(n, 500 + n as u64);
            let codes: Vec<u8> = (0..n).map(|i| ((i * 37 + n) % 256) as u8).collect();
            let naive: f64 = w
                .iter()
                .zip(&codes)
                .map(|(&a, &b)| f64::from(a) * f64::from(b))
                .sum();
            let magnitude: f64 = w
                .iter()
                .zip(&codes)
                .map(|(&a, &b)| (f64::from(a) * f64::from(b)).abs())
                .sum();
            let tolerance =
                4.0 * n.max(1) as f64 * f64::from(f32::EPSILON) * magnitude + f64::MIN_POSITIVE;
            let fast = dot_codes(&w, &codes);
            assert_eq!(fast.to_bits(), dot_codes(&w, &codes).to_bits(), "n {n}");
            for (name, got) in [
                ("dispatched", fast),
                ("portable", portable_codes(&w, &codes)),
            ] {
                assert!(
                    (f64::from(got) - naive).abs() <= tolerance,
                    "{name} n {n}: {got} vs {naive} (tolerance {tolerance})"
                );
            }
        }
        // A longer side is cut to the shorter.
        assert_eq!(dot_codes(&[1.0, 2.0, 3.0], &[4, 5]), 14.0);
        assert_eq!(dot_codes(&[1.0], &[4, 5]), 4.0);
    }

    #[test]
    fn each_component_counts_once_in_its_place() {
        for n in [1, 15, 16, 17, 33, 384] {
            for at in [0, n / 2, n - 1] {
                let mut r = vec![0f32; n];
                r[at] = 2.0;
                let q: Vec<f32> = (0..n).map(|i| i as f32).collect();
                assert_eq!(dot(&q, &bytes(&r)), 2.0 * at as f32, "n {n} at {at}");
                assert_eq!(portable(&q, &bytes(&r)), 2.0 * at as f32, "n {n} at {at}");
            }
        }
    }

    #[test]
    fn two_rows_score_as_a_query_and_a_row_do() {
        for n in [1, 9, 40, 384] {
            let (q, r) = vectors(n, 77 + n as u64);
            let (qb, rb) = (bytes(&q), bytes(&r));
            assert_eq!(
                dot_rows(&qb, &rb).to_bits(),
                dot(&q, &rb).to_bits(),
                "n {n}"
            );
            // Unaligned: the rows one byte into a buffer.
            let mut shifted = vec![0u8; 1];
            shifted.extend_from_slice(&qb);
            assert_eq!(
                dot_rows(&shifted[1..], &rb).to_bits(),
                dot(&q, &rb).to_bits()
            );
        }
    }

    #[test]
    fn a_short_row_is_scored_over_its_own_length() {
        let q = vec![1.0f32; 40];
        let r = bytes(&[2.0f32; 35]);
        assert_eq!(dot(&q, &r), 70.0);
        assert_eq!(dot(&q[..3], &r), 6.0);
    }
}
