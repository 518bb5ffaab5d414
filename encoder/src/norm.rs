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
            normalize_row(row, &self.weight, &self.bias, self.eps);
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
            for (value, &extra) in row.iter_mut().zip(add) {
                *value += extra;
            }
            normalize_row(row, &self.weight, &self.bias, self.eps);
        }
    }
}

fn normalize_row(row: &mut [f32], weight: &[f32], bias: &[f32], eps: f32) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, the one feature `normalize_row_avx2` is compiled for.
        return unsafe { normalize_row_avx2(row, weight, bias, eps) };
    }
    normalize_row_body(row, weight, bias, eps)
}

/// The same body compiled with AVX2's eight lanes (no FMA: both give the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn normalize_row_avx2(row: &mut [f32], weight: &[f32], bias: &[f32], eps: f32) {
    normalize_row_body(row, weight, bias, eps)
}

#[inline(always)]
fn normalize_row_body(row: &mut [f32], weight: &[f32], bias: &[f32], eps: f32) {
    let count = row.len() as f32;
    let mean = lanes_sum(row.iter().copied()) / count;
    let variance = lanes_sum(row.iter().map(|&value| (value - mean) * (value - mean))) / count;
    let scale = 1.0 / (variance + eps).sqrt();
    for ((value, &gain), &shift) in row.iter_mut().zip(weight).zip(bias) {
        *value = (*value - mean) * scale * gain + shift;
    }
}

/// A sum in eight partial sums, so that it vectorises, added in a fixed order.
#[inline(always)]
fn lanes_sum(values: impl Iterator<Item = f32>) -> f32 {
    let mut partial = [0f32; 8];
    for (index, value) in values.enumerate() {
        partial[index % 8] += value;
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
}
