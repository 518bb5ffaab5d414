//! LayerNorm over rows, as PyTorch computes it: the mean, the mean squared deviation from
//! it (biased), then `(x − mean) / √(var + eps) · weight + bias`; optionally after adding a
//! residual, which is how BERT uses it (`LayerNorm(x + sublayer(x))`).

/// A LayerNorm's parameters.
pub struct LayerNorm {
    weight: Vec<f32>,
    bias: Vec<f32>,
    eps: f32,
}

impl LayerNorm {
    /// `weight` and `bias` of one value a column each.
    pub fn new(weight: Vec<f32>, bias: Vec<f32>, eps: f32) -> Self {
        assert_eq!(
            weight.len(),
            bias.len(),
            "LayerNorm weight and bias differ in width"
        );
        LayerNorm { weight, bias, eps }
    }

    /// Normalises each row of `rows` in place.
    pub fn apply(&self, rows: &mut [f32]) {
        let width = self.weight.len();
        for row in rows.chunks_exact_mut(width) {
            normalize_row(row, None, &self.weight, &self.bias, self.eps);
        }
    }

    /// `rows ← LayerNorm(rows + residual)`, row by row.
    pub fn add_and_apply(&self, rows: &mut [f32], residual: &[f32]) {
        assert_eq!(
            rows.len(),
            residual.len(),
            "residual is not the rows' shape"
        );
        let width = self.weight.len();
        for (row, add) in rows
            .chunks_exact_mut(width)
            .zip(residual.chunks_exact(width))
        {
            normalize_row(row, Some(add), &self.weight, &self.bias, self.eps);
        }
    }
}

// `row ← LayerNorm(row + residual)` (no residual: `LayerNorm(row)`), in the widest vectors
// the CPU has (`with_widest_vectors`: every width compiles the same IEEE operations, no FMA,
// and the sums keep their eight partial results in the same order, so all give the same
// bits).
with_widest_vectors!(
    normalize_row,
    [normalize_row_avx512, normalize_row_avx2, normalize_row_portable],
    (row: &mut [f32], residual: Option<&[f32]>, weight: &[f32], bias: &[f32], eps: f32) {
        normalize_row_body(row, residual, weight, bias, eps)
    }
);

#[inline(always)]
fn normalize_row_body(
    row: &mut [f32],
    residual: Option<&[f32]>,
    weight: &[f32],
    bias: &[f32],
    eps: f32,
) {
    if let Some(residual) = residual {
        for (value, &extra) in row.iter_mut().zip(residual) {
            *value += extra;
        }
    }
    let count = row.len() as f32;
    let mean = lanes_sum(row, |value| value) / count;
    let variance = lanes_sum(row, |value| (value - mean) * (value - mean)) / count;
    let scale = 1.0 / (variance + eps).sqrt();
    for ((value, &gain), &shift) in row.iter_mut().zip(weight).zip(bias) {
        *value = (*value - mean) * scale * gain + shift;
    }
}

/// The sum of `term(value)` over `values` in eight partial sums (value i goes to sum i mod 8),
/// added in a fixed order. Eight values a step, so that it vectorises: indexing the sums by
/// `i % 8` one value at a time compiled to scalar adds through memory, and LayerNorm took
/// 3% of a query's time.
#[inline(always)]
fn lanes_sum(values: &[f32], term: impl Fn(f32) -> f32) -> f32 {
    let mut partial = [0f32; 8];
    let mut chunks = values.chunks_exact(8);
    for chunk in &mut chunks {
        for (sum, &value) in partial.iter_mut().zip(chunk) {
            *sum += term(value);
        }
    }
    for (sum, &value) in partial.iter_mut().zip(chunks.remainder()) {
        *sum += term(value);
    }
    partial.iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_normalised_as_pytorch_does() {
        let width = 19;
        let weight: Vec<f32> = (0..width).map(|i| 0.5 + i as f32 / 10.0).collect();
        let bias: Vec<f32> = (0..width).map(|i| i as f32 / 7.0 - 1.0).collect();
        let norm = LayerNorm::new(weight.clone(), bias.clone(), 1e-12);
        let rows: Vec<f32> = (0..3 * width)
            .map(|i| ((i * 37) % 23) as f32 - 9.0)
            .collect();
        let residual: Vec<f32> = (0..3 * width).map(|i| (i % 5) as f32 * 0.25).collect();
        let mut got = rows.clone();
        norm.add_and_apply(&mut got, &residual);
        for row in 0..3 {
            let x: Vec<f64> = (0..width)
                .map(|i| rows[row * width + i] as f64 + residual[row * width + i] as f64)
                .collect();
            let mean = x.iter().sum::<f64>() / width as f64;
            let variance = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / width as f64;
            for i in 0..width {
                let want =
                    (x[i] - mean) / (variance + 1e-12).sqrt() * weight[i] as f64 + bias[i] as f64;
                let have = got[row * width + i] as f64;
                assert!(
                    (have - want).abs() < 1e-5,
                    "row {row}, column {i}: {have} against {want}"
                );
            }
        }
        // apply alone is add_and_apply with a zero residual.
        let mut alone = rows.clone();
        norm.apply(&mut alone);
        let mut zero = rows;
        norm.add_and_apply(&mut zero, &vec![0.0; 3 * width]);
        assert_eq!(alone, zero);
    }

    #[test]
    fn the_partial_sums_take_value_i_into_sum_i_mod_8() {
        // The order every LayerNorm's bits depend on, checked against the one-value-at-a-time
        // form it was first written in; 37 values leave five in the remainder. Pseudo-random
        // values of three magnitudes side by side, chosen so that 4 or 16 partial sums, or
        // the remainder added after them, each give other bits (checked by making each).
        let mut state = 4u64;
        let values: Vec<f32> = (0..37)
            .map(|i| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let unit = ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0;
                unit * [1.0, 3e3, 7e-2][i % 3]
            })
            .collect();
        let mut partial = [0f32; 8];
        for (index, &value) in values.iter().enumerate() {
            partial[index % 8] += value * 1.5;
        }
        let expected: f32 = partial.iter().sum();
        assert_eq!(
            lanes_sum(&values, |value| value * 1.5).to_bits(),
            expected.to_bits()
        );
    }

    #[test]
    fn every_vector_width_gives_the_same_bits() {
        // 384 wide as the model's rows, and 37: the lanes' remainder.
        for width in [384, 37] {
            let weight: Vec<f32> = (0..width).map(|i| 0.75 + (i % 11) as f32 / 13.0).collect();
            let bias: Vec<f32> = (0..width).map(|i| (i % 7) as f32 / 5.0 - 0.6).collect();
            let row: Vec<f32> = (0..width)
                .map(|i| ((i * 7919) % 2003) as f32 / 97.0 - 10.0)
                .collect();
            let residual: Vec<f32> = (0..width).map(|i| (i % 13) as f32 * 0.37 - 2.0).collect();
            for add in [None, Some(residual.as_slice())] {
                let mut portable = row.clone();
                normalize_row_body(&mut portable, add, &weight, &bias, 1e-12);
                type Build = unsafe fn(&mut [f32], Option<&[f32]>, &[f32], &[f32], f32);
                let mut builds: Vec<(&str, Build)> = vec![
                    ("dispatched", normalize_row),
                    ("portable", normalize_row_portable),
                ];
                #[cfg(target_arch = "x86_64")]
                let (has_avx512, has_avx2) = (
                    std::arch::is_x86_feature_detected!("avx512f"),
                    std::arch::is_x86_feature_detected!("avx2"),
                );
                #[cfg(not(target_arch = "x86_64"))]
                let (has_avx512, has_avx2) = (true, true); // the portable body
                if has_avx512 {
                    builds.push(("avx512", normalize_row_avx512));
                }
                if has_avx2 {
                    builds.push(("avx2", normalize_row_avx2));
                }
                let variants = builds.into_iter().map(|(name, build)| {
                    let mut out = row.clone();
                    // SAFETY: each build was added only where the CPU has its feature.
                    unsafe { build(&mut out, add, &weight, &bias, 1e-12) };
                    (name, out)
                });
                for (name, out) in variants {
                    assert!(
                        out.iter()
                            .zip(&portable)
                            .all(|(a, b)| a.to_bits() == b.to_bits()),
                        "{name}, width {width}, residual {}",
                        add.is_some()
                    );
                }
            }
        }
    }
}
