//! The model's two elementwise hot spots, written so that the compiler vectorises them: the
//! exact (erf-based) GELU of the feed-forward layers and the softmax of the attention scores.
//!
//! A profile of `heddle-eval embed` (perf, 171k synthetic documents, 2 threads) put a quarter
//! of encoding in scalar library calls made one element at a time: libm's `erff` (about 16 %,
//! through candle's `gelu_erf`) and glibc's `expf` (about 8 %, through candle-nn's softmax).
//! Both are replaced here by branch-free arithmetic over whole slices, applied in place to the
//! feed-forward product (`gemm`'s GELU epilogue) and to each row's attention scores
//! (`attention`). See docs/DECISIONS.md, "The encoder's elementwise kernels".
//!
//! Accuracy: the exponential is within 2 ulp of the true value, and the GELU within
//! 2e-7·max(|x|, 1) of the exact one (the tests below measure both against f64), far inside
//! the fidelity bar (cosine ≥ 0.9999 against sentence-transformers).

/// Defines `$name`, which runs `body` compiled for the widest vectors the CPU has: AVX-512F's
/// sixteen lanes (`$avx512`), else AVX2's eight (`$avx2`), else SSE2's four (`$portable`,
/// the body as built). All three compile the same IEEE operations (Rust never fuses a
/// multiply and an add, and no build enables contraction), so all give the same bits; the
/// tests hold each to the portable one, whichever the CPU would pick. The sixteen lanes
/// halve the instructions of the map steps; the reductions keep their eight partial results
/// (`LANES`), so that their order, and so their bits, do not change.
macro_rules! with_widest_vectors {
    (
        $name:ident, [$avx512:ident, $avx2:ident, $portable:ident],
        ($($arg:ident : $ty:ty),*) $body:block
    ) => {
        pub(crate) fn $name($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("avx512f") {
                    // SAFETY: the CPU has AVX-512F, the one feature `$avx512` is compiled for.
                    return unsafe { $avx512($($arg),*) };
                }
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2, the one feature `$avx2` is compiled for.
                    return unsafe { $avx2($($arg),*) };
                }
            }
            $portable($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f")]
        fn $avx512($($arg: $ty),*) $body

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        fn $avx2($($arg: $ty),*) $body

        // Elsewhere the two are the portable body, so that tests name them on any CPU.
        #[cfg(not(target_arch = "x86_64"))]
        #[allow(dead_code, reason = "only the tests call them off x86-64")]
        unsafe fn $avx512($($arg: $ty),*) { $portable($($arg),*) }

        #[cfg(not(target_arch = "x86_64"))]
        #[allow(dead_code, reason = "only the tests call them off x86-64")]
        unsafe fn $avx2($($arg: $ty),*) { $portable($($arg),*) }

        fn $portable($($arg: $ty),*) $body
    };
}

with_widest_vectors!(gelu_slice, [gelu_slice_avx512, gelu_slice_avx2, gelu_slice_portable], (values: &mut [f32]) {
    for value in values.iter_mut() {
        *value = gelu_erf(*value);
    }
});

// Softmax of each `row`-long run of `values`, in place.
with_widest_vectors!(softmax_rows, [softmax_rows_avx512, softmax_rows_avx2, softmax_rows_portable], (values: &mut [f32], row: usize) {
    for row in values.chunks_exact_mut(row) {
        let max = lanes_max(row);
        for value in row.iter_mut() {
            *value = exp_nonpositive(*value - max);
        }
        let scale = 1.0 / lanes_sum(row);
        for value in row.iter_mut() {
            *value *= scale;
        }
    }
});

/// Lanes wide enough for AVX2; the reductions keep this many partial results so that the
/// compiler may vectorise them without reordering a single sequential sum.
const LANES: usize = 8;

#[inline(always)]
fn lanes_max(values: &[f32]) -> f32 {
    let mut partial = [f32::NEG_INFINITY; LANES];
    let mut chunks = values.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (best, &value) in partial.iter_mut().zip(chunk) {
            *best = if value > *best { value } else { *best };
        }
    }
    let tail = chunks.remainder().iter().copied();
    partial
        .into_iter()
        .chain(tail)
        .fold(f32::NEG_INFINITY, f32::max)
}

#[inline(always)]
fn lanes_sum(values: &[f32]) -> f32 {
    let mut partial = [0f32; LANES];
    let mut chunks = values.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (sum, &value) in partial.iter_mut().zip(chunk) {
            *sum += value;
        }
    }
    partial.into_iter().sum::<f32>() + chunks.remainder().iter().sum::<f32>()
}

/// The exact GELU, `x · Φ(x)` with Φ the standard normal CDF, `(1 + erf(x/√2)) / 2`.
///
/// erfc(a) for a ≥ 0 is Abramowitz and Stegun's formula 7.1.26 (Handbook of Mathematical
/// Functions, 1964): `t·(a1 + t·(a2 + … + t·a5))·e^(−a²)` with `t = 1/(1 + p·a)`, absolute
/// error at most 1.5e-7. Its published constants are below.
#[inline(always)]
#[expect(
    clippy::excessive_precision,
    reason = "the handbook's digits, so that they can be checked against it; f32 rounds them"
)]
fn gelu_erf(x: f32) -> f32 {
    const P: f32 = 0.327_591_1;
    const A1: f32 = 0.254_829_592;
    const A2: f32 = -0.284_496_736;
    const A3: f32 = 1.421_413_741;
    const A4: f32 = -1.453_152_027;
    const A5: f32 = 1.061_405_429;
    let a = x.abs() * std::f32::consts::FRAC_1_SQRT_2;
    let t = 1.0 / (1.0 + P * a);
    let erfc = t * (A1 + t * (A2 + t * (A3 + t * (A4 + t * A5)))) * exp_nonpositive(-(a * a));
    // Φ(x) = 1 − erfc(|x|/√2)/2 above zero, erfc(|x|/√2)/2 below.
    let half_tail = 0.5 * erfc;
    let cdf = if x >= 0.0 { 1.0 - half_tail } else { half_tail };
    x * cdf
}

/// e^y for y ≤ 0, the only arguments either kernel passes (above 0 the result would be
/// inaccurate). Below −87, just inside where e^y leaves f32's normal range (−87.34), the
/// result is 0: that is how the attention's padding (scores near −3.4e38) gets no weight.
///
/// y = n·ln 2 + r with |r| ≤ ln 2 / 2; e^r by its Taylor series to r⁷ (truncation error
/// at most 7e-9 relative, against f32's 6e-8 rounding), then scaled by 2ⁿ through the
/// exponent bits.
#[inline(always)]
#[expect(
    clippy::excessive_precision,
    reason = "the low part of ln 2's split to more digits than f32 keeps; it rounds to \
              the f32 nearest ln 2 − LN2_HIGH"
)]
fn exp_nonpositive(y: f32) -> f32 {
    const LOWEST: f32 = -87.0;
    // 1.5·2²³: adding it rounds a float of magnitude below 2²² to an integer, and leaves
    // that integer in the low bits of the sum.
    const ROUNDER: f32 = 12_582_912.0;
    // ln 2 in two parts, the first with few enough bits that n·LN2_HIGH is exact.
    const LN2_HIGH: f32 = 0.693_145_751_953_125;
    const LN2_LOW: f32 = 1.428_606_765_330_187e-6;
    let clamped = if y < LOWEST { LOWEST } else { y };
    let shifted = clamped * std::f32::consts::LOG2_E + ROUNDER;
    let n = shifted - ROUNDER;
    let r = (clamped - n * LN2_HIGH) - n * LN2_LOW;
    let series = 1.0
        + r * (1.0
            + r * (1.0 / 2.0
                + r * (1.0 / 6.0
                    + r * (1.0 / 24.0
                        + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
    // n is in [−126, 0], so n + 127 is a normal float's biased exponent.
    let n_bits = shifted.to_bits().wrapping_sub(ROUNDER.to_bits());
    let power = f32::from_bits(n_bits.wrapping_add(127) << 23);
    if y < LOWEST { 0.0 } else { series * power }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Device, Tensor};

    /// erf by its Maclaurin series below 3 and its continued fraction for erfc above, in
    /// f64: an independent reference, good to about 1e-13 (the series' cancellation near 3),
    /// a million times finer than the bound tested.
    fn erf_reference(x: f64) -> f64 {
        let a = x.abs();
        let value = if a < 3.0 {
            let mut term = a;
            let mut sum = a;
            for k in 1..200 {
                term *= -a * a / k as f64;
                sum += term / (2 * k + 1) as f64;
            }
            sum * 2.0 / std::f64::consts::PI.sqrt()
        } else {
            // erfc(a) = e^(−a²)/√π · 1/(a + 1/2/(a + 1/(a + 3/2/(a + 2/(a + …)))))
            let mut tail = 0.0;
            for k in (1..60).rev() {
                tail = (k as f64 / 2.0) / (a + tail);
            }
            1.0 - (-a * a).exp() / std::f64::consts::PI.sqrt() / (a + tail)
        };
        value.copysign(x)
    }

    fn grid(low: f32, high: f32, steps: usize) -> impl Iterator<Item = f32> {
        (0..=steps).map(move |i| low + (high - low) * i as f32 / steps as f32)
    }

    #[test]
    fn exp_is_within_two_ulp_of_f64_and_flushes_below_its_range() {
        for y in grid(-87.0, 0.0, 200_000) {
            let exact = (y as f64).exp();
            let got = exp_nonpositive(y) as f64;
            // The spacing of f32s at `exact`'s binade.
            let ulp = 2f64.powi(exact.log2().floor() as i32 - 23);
            assert!(
                (got - exact).abs() <= 2.0 * ulp,
                "e^{y}: {got} against {exact}"
            );
        }
        assert_eq!(exp_nonpositive(0.0), 1.0);
        assert_eq!(exp_nonpositive(-87.5), 0.0);
        assert_eq!(exp_nonpositive(f32::MIN), 0.0);
        assert_eq!(exp_nonpositive(f32::NEG_INFINITY), 0.0);
    }

    #[test]
    fn gelu_is_within_2e7_of_the_exact_one_per_unit_of_x() {
        // A&S's 1.5e-7 on erf is 0.75e-7 on Φ, so 0.75e-7·|x| on x·Φ(x); evaluating the
        // formula in f32 (its terms cancel) about doubles that: 1.8e-7 at worst, near x = 1.3.
        let mut worst = (0.0, 0.0f32);
        for x in grid(-12.0, 12.0, 480_000) {
            let exact = 0.5 * x as f64 * (1.0 + erf_reference(x as f64 / 2f64.sqrt()));
            let scaled = (gelu_erf(x) as f64 - exact).abs() / x.abs().max(1.0) as f64;
            if scaled > worst.0 {
                worst = (scaled, x);
            }
        }
        let (error, at) = worst;
        eprintln!("worst: {error:e}·max(|x|, 1), at x = {at}");
        assert!(error <= 2e-7, "gelu({at}) is off by {error:e}·max(|x|, 1)");
        assert_eq!(gelu_erf(0.0), 0.0);
        assert_eq!(gelu_erf(1e30), 1e30);
        assert_eq!(gelu_erf(-1e30), 0.0);
        assert!(gelu_erf(f32::NAN).is_nan());
    }

    #[test]
    fn the_slice_kernels_match_candles_ops() -> candle_core::Result<()> {
        let device = Device::Cpu;
        // Odd row length and count: the lanes' remainders and the row boundaries both matter.
        let values: Vec<f32> = (0..37 * 29)
            .map(|i| ((i * 7919) % 2003) as f32 / 97.0 - 10.0)
            .collect();
        let tensor = Tensor::from_vec(values, (37, 29), &device)?;

        let mut gelu = tensor.flatten_all()?.to_vec1::<f32>()?;
        gelu_slice(&mut gelu);
        let gelu = Tensor::from_vec(gelu, (37, 29), &device)?;
        let difference = (gelu - tensor.gelu_erf()?)?
            .abs()?
            .max_all()?
            .to_scalar::<f32>()?;
        assert!(
            difference < 2e-6,
            "gelu differs from candle's by {difference}"
        );

        let mut scores = tensor.to_vec2::<f32>()?;
        scores[3][5..].fill(f32::MIN); // padding, as the attention masks it
        // A row's maximum in the lanes' remainder (29 = 3·8 + 5), and far above the rest:
        // a max that missed it would put e^(150 − ...) out of f32's range.
        scores[7][28] = 150.0;
        let scores = Tensor::new(scores, &device)?;
        let mut softmax = scores.flatten_all()?.to_vec1::<f32>()?;
        softmax_rows(&mut softmax, 29);
        let softmax = Tensor::from_vec(softmax, (37, 29), &device)?;
        let expected = candle_nn::ops::softmax_last_dim(&scores)?;
        let difference = (&softmax - expected)?
            .abs()?
            .max_all()?
            .to_scalar::<f32>()?;
        assert!(
            difference < 1e-6,
            "softmax differs from candle-nn's by {difference}"
        );
        let padded = softmax.get(3)?.to_vec1::<f32>()?;
        assert!(
            padded[5..].iter().all(|&weight| weight == 0.0),
            "padding got weight: {padded:?}"
        );
        // (A maximum of NaN differences is not NaN in candle, so each row is checked too.)
        for (i, row) in softmax.to_vec2::<f32>()?.iter().enumerate() {
            let sum: f32 = row.iter().sum();
            assert!(
                row.iter().all(|w| w.is_finite()) && (sum - 1.0).abs() < 1e-5,
                "row {i} is not a distribution: {row:?}"
            );
        }
        let peaked = softmax.get(7)?.to_vec1::<f32>()?;
        assert!(peaked[28] > 0.999_999, "row 7 lost its maximum: {peaked:?}");
        Ok(())
    }

    /// One build of a slice kernel, callable safely (feature checked where it was made).
    type Build = Box<dyn Fn(&mut [f32])>;

    /// Every build of a slice kernel this CPU runs, by name: the dispatched one and each
    /// width the CPU has.
    fn builds(
        dispatched: fn(&mut [f32]),
        avx512: unsafe fn(&mut [f32]),
        avx2: unsafe fn(&mut [f32]),
    ) -> Vec<(&'static str, Build)> {
        let mut builds: Vec<(&'static str, Build)> = vec![("dispatched", Box::new(dispatched))];
        #[cfg(target_arch = "x86_64")]
        let (has_avx512, has_avx2) = (
            std::arch::is_x86_feature_detected!("avx512f"),
            std::arch::is_x86_feature_detected!("avx2"),
        );
        #[cfg(not(target_arch = "x86_64"))]
        let (has_avx512, has_avx2) = (true, true); // the portable body under both names
        if has_avx512 {
            // SAFETY: only where the CPU has AVX-512F (or off x86-64, the portable body).
            builds.push(("avx512", Box::new(move |v| unsafe { avx512(v) })));
        }
        if has_avx2 {
            // SAFETY: only where the CPU has AVX2 (or off x86-64, the portable body).
            builds.push(("avx2", Box::new(move |v| unsafe { avx2(v) })));
        }
        builds
    }

    #[test]
    fn every_vector_width_gives_the_portable_bits() {
        let values: Vec<f32> = (0..64 * 61)
            .map(|i| ((i * 7919) % 4001) as f32 / 131.0 - 15.0)
            .collect();
        let same = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
        let mut portable = values.clone();
        gelu_slice_portable(&mut portable);
        for (name, build) in builds(gelu_slice, gelu_slice_avx512, gelu_slice_avx2) {
            let mut got = values.clone();
            build(&mut got);
            assert!(same(&got, &portable), "gelu, {name}");
        }
        let mut portable = values.clone();
        softmax_rows_portable(&mut portable, 61);
        for (name, build) in builds(
            |v| softmax_rows(v, 61),
            |v| unsafe { softmax_rows_avx512(v, 61) },
            |v| unsafe { softmax_rows_avx2(v, 61) },
        ) {
            let mut got = values.clone();
            build(&mut got);
            assert!(same(&got, &portable), "softmax, {name}");
        }
    }
}
