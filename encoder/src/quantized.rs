//! The int8 form of a linear layer, `y = x · Wᵀ + b` with both operands cut to 8 bits:
//! the opt-in alternative to `gemm`'s f32 products (`Precision::Int8`).
//!
//! - **Weights**, per output column, once at load: `s_col = max_k |w_k| / 127`, each weight
//!   `round(w / s_col)` in [-127, 127]. A column of zeros gets scale 0 and zeros.
//! - **Inputs**, per row, at every product: `s_row = max_k |x_k| / 127`, likewise.
//! - **Sums** over k in i32, exact: at most 1,536 · 127² ≈ 2.5 · 10⁷ in magnitude
//!   (< 2³¹), so neither kernel can overflow, and both give equal integers.
//! - **Result**: `y = acc · (s_row · s_col) + b`, then the GELU epilogue where asked.
//!
//! The AVX2 kernel takes inputs two at a time: `_mm256_madd_epi16` multiplies sixteen i16
//! pairs and adds each pair into an i32 lane, so each weight is sign-extended from i8
//! (`_mm256_cvtepi8_epi16`, 16 weights a load) and each row's two inputs, kept as i16 side by
//! side, are broadcast as one i32. (`_mm256_maddubs_epi16`, twice the products an
//! instruction, needs unsigned inputs and saturates its i16 pair sums unless the weights
//! lose a bit: see docs/DECISIONS.md, "An opt-in int8 encoder".)
//!
//! The panels follow `gemm`'s: `NR` = 16 output columns a panel, and for each pair of inputs
//! (2p, 2p+1) the panel holds 32 bytes: columns 0–7 as (w[2p], w[2p+1]) pairs, then columns
//! 8–15 alike, the order the kernel loads them. An odd input count is padded with a zero
//! input and zero weights. Tiles of `MR` = 6 rows × 16 columns keep 12 i32 accumulators in
//! registers, as the f32 tiles do.

use crate::gemm::{BLOCK_BYTES, Epilogue, Kernel, MR, NR, OutputColumns, split_panels};

/// The largest magnitude an int8 value takes: symmetric, so -128 is never used.
const LEVEL: f32 = 127.0;

/// 1.5 · 2²³: adding it to an f32 of magnitude below 2²² and subtracting it again leaves
/// the value rounded to the nearest integer (ties to even), in two vectorisable operations
/// (`f32::round` is a library call on x86-64 without SSE4.1).
const ROUNDER: f32 = 12_582_912.0;

/// The scale `max|v| / 127` of `values` and its inverse, or (0, 0) for all zeros.
pub(crate) fn scale_of(values: &[f32]) -> (f32, f32) {
    let largest = values.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    if largest > 0.0 && largest.is_finite() {
        (largest / LEVEL, LEVEL / largest)
    } else {
        (0.0, 0.0)
    }
}

/// `value · inverse` rounded to the nearest integer and held to [-127, 127].
#[inline(always)]
pub(crate) fn quantize(value: f32, inverse: f32) -> i16 {
    let scaled = (value * inverse).clamp(-LEVEL, LEVEL);
    ((scaled + ROUNDER) - ROUNDER) as i16
}

/// A linear layer's weights as int8 with a scale per output column, packed for the kernels.
pub struct QuantizedLinear {
    inputs: usize,
    outputs: usize,
    /// `inputs.div_ceil(2)`.
    pairs: usize,
    /// `outputs.div_ceil(NR)` panels of `pairs × NR × 2` values; columns past `outputs`
    /// and the odd input's partner are 0.
    panels: Vec<i8>,
    /// `s_col`, padded with zeros to a whole number of panels.
    column_scales: Vec<f32>,
    /// The bias, padded likewise.
    bias: Vec<f32>,
}

impl QuantizedLinear {
    /// Quantizes and packs `weight` (`outputs × inputs`, row-major: PyTorch's
    /// `Linear.weight`) and keeps `bias` in f32. Panics if the lengths disagree with the
    /// shape, as `PackedLinear::new` does.
    pub fn new(weight: &[f32], bias: &[f32], inputs: usize, outputs: usize) -> Self {
        assert_eq!(
            weight.len(),
            inputs * outputs,
            "weight is not outputs × inputs"
        );
        assert_eq!(bias.len(), outputs, "bias is not one value an output");
        let pairs = inputs.div_ceil(2);
        let panel_count = outputs.div_ceil(NR);
        let panel_len = pairs * NR * 2;
        let mut panels = vec![0i8; panel_count * panel_len];
        let mut column_scales = vec![0.0f32; panel_count * NR];
        for column in 0..outputs {
            let row = &weight[column * inputs..(column + 1) * inputs];
            let (scale, inverse) = scale_of(row);
            column_scales[column] = scale;
            let panel = &mut panels[column / NR * panel_len..][..panel_len];
            let lane = column % NR;
            for (k, &value) in row.iter().enumerate() {
                panel[weight_index(k, lane)] = quantize(value, inverse) as i8;
            }
        }
        let mut padded_bias = bias.to_vec();
        padded_bias.resize(panel_count * NR, 0.0);
        QuantizedLinear {
            inputs,
            outputs,
            pairs,
            panels,
            column_scales,
            bias: padded_bias,
        }
    }

    /// The width of an output row.
    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// `out = epilogue(x · Wᵀ + b)` for `x` of `rows × inputs` and `out` of
    /// `rows × outputs`, both row-major, with `x` quantized row by row first.
    pub fn forward(&self, x: &[f32], out: &mut [f32], epilogue: Epilogue, kernel: Kernel) {
        let rows = x.len() / self.inputs.max(1);
        assert_eq!(x.len(), rows * self.inputs, "input is not rows × inputs");
        assert_eq!(
            out.len(),
            rows * self.outputs,
            "output is not rows × outputs"
        );
        let quantized = self.quantize_rows(x, rows);
        let target = OutputColumns::new(out);
        split_panels(
            rows * self.inputs * self.outputs,
            self.bias.len() / NR,
            |panels| self.run_panels(&quantized, &target, panels, epilogue, kernel),
        );
    }

    /// Each row of `x` as int8 values (held in i16, two inputs side by side as the kernel
    /// broadcasts them; an odd count padded with 0) and its scale.
    fn quantize_rows(&self, x: &[f32], rows: usize) -> QuantizedRows {
        let width = self.pairs * 2;
        let mut values = vec![0i16; rows * width];
        let mut scales = Vec::with_capacity(rows);
        for (row, quantized) in x
            .chunks_exact(self.inputs.max(1))
            .zip(values.chunks_exact_mut(width))
        {
            let (scale, inverse) = scale_of(row);
            scales.push(scale);
            for (q, &value) in quantized.iter_mut().zip(row) {
                *q = quantize(value, inverse);
            }
        }
        QuantizedRows {
            values,
            scales,
            width,
        }
    }

    /// The output columns of `panels` for every row, written to `target`.
    fn run_panels(
        &self,
        x: &QuantizedRows,
        target: &OutputColumns<'_>,
        panels: std::ops::Range<usize>,
        epilogue: Epilogue,
        kernel: Kernel,
    ) {
        let rows = x.scales.len();
        let width = x.width;
        let panel_len = self.pairs * NR * 2;
        let block_rows = (BLOCK_BYTES / (width.max(1) * 2)).max(MR) / MR * MR;
        let mut tile = [[0i32; NR]; MR];
        let mut values = [0.0f32; NR];
        let first_column = panels.start * NR;
        let end_column = (panels.end * NR).min(self.outputs);
        for block_start in (0..rows).step_by(block_rows) {
            let block_end = (block_start + block_rows).min(rows);
            for panel_index in panels.clone() {
                let panel = &self.panels[panel_index * panel_len..(panel_index + 1) * panel_len];
                let column = panel_index * NR;
                let scales = &self.column_scales[column..column + NR];
                let bias = &self.bias[column..column + NR];
                let columns = NR.min(self.outputs - column);
                for tile_start in (block_start..block_end).step_by(MR) {
                    let tile_rows = MR.min(block_end - tile_start);
                    let a = &x.values[tile_start * width..(tile_start + tile_rows) * width];
                    integer_tile(kernel, a, tile_rows, self.pairs, panel, &mut tile);
                    for (row, sums) in tile.iter().take(tile_rows).enumerate() {
                        let row_scale = x.scales[tile_start + row];
                        for (lane, value) in values.iter_mut().enumerate() {
                            *value = sums[lane] as f32 * (row_scale * scales[lane]) + bias[lane];
                        }
                        let at = (tile_start + row) * self.outputs + column;
                        // SAFETY: `at + columns ≤ rows × outputs` (row < rows, column +
                        // columns ≤ outputs), and these columns belong to this call's panels
                        // alone (see `OutputColumns`).
                        unsafe { target.write(at, &values[..columns]) };
                    }
                }
            }
            // SAFETY: this call's own columns of rows it has just written.
            unsafe {
                target.apply(
                    epilogue,
                    block_start..block_end,
                    self.outputs,
                    first_column..end_column,
                )
            };
        }
    }
}

/// A product's input, quantized: `rows × width` values (`width` even) and a scale a row.
struct QuantizedRows {
    values: Vec<i16>,
    scales: Vec<f32>,
    width: usize,
}

/// Where weight (input `k`, panel lane `lane`) lies in its panel.
fn weight_index(k: usize, lane: usize) -> usize {
    let (pair, second) = (k / 2, k % 2);
    pair * NR * 2 + (lane / 8) * 16 + (lane % 8) * 2 + second
}

/// The first `rows` (≤ MR) rows of `tile` = `a` (rows × 2·pairs, i16) · panel, in i32.
fn integer_tile(
    kernel: Kernel,
    a: &[i16],
    rows: usize,
    pairs: usize,
    panel: &[i8],
    tile: &mut [[i32; NR]; MR],
) {
    assert!((1..=MR).contains(&rows) && a.len() == rows * pairs * 2);
    assert!(panel.len() == pairs * NR * 2);
    match kernel {
        Kernel::Portable => tile_portable(a, rows, pairs, panel, tile),
        // The f32 products' AVX-512 kernel has no int8 twin yet: its CPUs run the AVX2 one.
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2Fma | Kernel::Avx512 => {
            // SAFETY: `Avx2Fma` and `Avx512` are only chosen (`Kernel::best`, or a test that
            // checked) where the CPU has AVX2; the lengths were checked just above.
            unsafe {
                match rows {
                    1 => avx2::tile::<1>(a, pairs, panel, tile),
                    2 => avx2::tile::<2>(a, pairs, panel, tile),
                    3 => avx2::tile::<3>(a, pairs, panel, tile),
                    4 => avx2::tile::<4>(a, pairs, panel, tile),
                    5 => avx2::tile::<5>(a, pairs, panel, tile),
                    _ => avx2::tile::<6>(a, pairs, panel, tile),
                }
            }
        }
    }
}

fn tile_portable(a: &[i16], rows: usize, pairs: usize, panel: &[i8], tile: &mut [[i32; NR]; MR]) {
    for (row, sums) in tile.iter_mut().take(rows).enumerate() {
        *sums = [0; NR];
        let inputs = &a[row * pairs * 2..(row + 1) * pairs * 2];
        for (input, weights) in inputs.chunks_exact(2).zip(panel.chunks_exact(NR * 2)) {
            let (first, second) = (i32::from(input[0]), i32::from(input[1]));
            for (lane, sum) in sums.iter_mut().enumerate() {
                let at = (lane / 8) * 16 + (lane % 8) * 2;
                *sum += first * i32::from(weights[at]) + second * i32::from(weights[at + 1]);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{MR, NR};

    /// `R` rows of the tile: a (R × 2·pairs) · panel, the sums kept in 2·R registers for
    /// the whole loop over the input pairs.
    ///
    /// # Safety
    /// The CPU must have AVX2; `a.len() == R·2·pairs`, `panel.len() == pairs·2·NR`, `R ≤ MR`.
    #[target_feature(enable = "avx2")]
    pub unsafe fn tile<const R: usize>(
        a: &[i16],
        pairs: usize,
        panel: &[i8],
        tile: &mut [[i32; NR]; MR],
    ) {
        debug_assert!(R <= MR && a.len() == R * pairs * 2 && panel.len() == pairs * 2 * NR);
        let (a, weights) = (a.as_ptr(), panel.as_ptr());
        let mut sums = [[_mm256_setzero_si256(); 2]; R];
        for pair in 0..pairs {
            // SAFETY (every block below): reads stay inside `panel` (pair · 32 + 32 ≤
            // pairs · 32 bytes) and `a` (the i32 at row · 2·pairs + 2·pair is two i16 of
            // row `row`), the lengths the caller promised; writes go to the tile's first R
            // rows of 16 values.
            let (low, high) = unsafe {
                let at = weights.add(pair * NR * 2);
                (
                    _mm256_cvtepi8_epi16(_mm_loadu_si128(at.cast())),
                    _mm256_cvtepi8_epi16(_mm_loadu_si128(at.add(16).cast())),
                )
            };
            for (row, sum) in sums.iter_mut().enumerate() {
                let input = unsafe {
                    _mm256_set1_epi32(
                        a.add(row * pairs * 2 + pair * 2)
                            .cast::<i32>()
                            .read_unaligned(),
                    )
                };
                sum[0] = _mm256_add_epi32(sum[0], _mm256_madd_epi16(input, low));
                sum[1] = _mm256_add_epi32(sum[1], _mm256_madd_epi16(input, high));
            }
        }
        for (row, sum) in sums.iter().enumerate() {
            unsafe {
                _mm256_storeu_si256(tile[row].as_mut_ptr().cast(), sum[0]);
                _mm256_storeu_si256(tile[row].as_mut_ptr().add(8).cast(), sum[1]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reproducible pseudo-random matrix in [-1, 1) (a 64-bit LCG's high bits).
    fn matrix(len: usize, seed: u64) -> Vec<f32> {
        let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    fn kernels() -> Vec<Kernel> {
        let mut kernels = vec![Kernel::Portable];
        if Kernel::best() != Kernel::Portable {
            kernels.push(Kernel::best());
        }
        kernels
    }

    /// Every row's integer sums against every column, as `kernel` computes them.
    fn integer_sums(layer: &QuantizedLinear, x: &[f32], kernel: Kernel) -> Vec<i32> {
        let rows = x.len() / layer.inputs;
        let quantized = layer.quantize_rows(x, rows);
        let panel_len = layer.pairs * NR * 2;
        let mut sums = vec![0; rows * layer.bias.len()];
        let mut tile = [[0i32; NR]; MR];
        for (panel_index, panel) in layer.panels.chunks_exact(panel_len).enumerate() {
            for tile_start in (0..rows).step_by(MR) {
                let tile_rows = MR.min(rows - tile_start);
                let a = &quantized.values
                    [tile_start * quantized.width..(tile_start + tile_rows) * quantized.width];
                integer_tile(kernel, a, tile_rows, layer.pairs, panel, &mut tile);
                for (row, values) in tile.iter().take(tile_rows).enumerate() {
                    let at = (tile_start + row) * layer.bias.len() + panel_index * NR;
                    sums[at..at + NR].copy_from_slice(values);
                }
            }
        }
        sums
    }

    /// The one-line oracle: the sum over k of the quantized input times the quantized
    /// weight, in i64, from the definition rather than from the packed panels.
    fn oracle_sums(weight: &[f32], x: &[f32], inputs: usize, outputs: usize) -> Vec<i64> {
        let quantize_all = |v: &[f32]| {
            let (_, inverse) = scale_of(v);
            v.iter()
                .map(|&value| i64::from(quantize(value, inverse)))
                .collect::<Vec<_>>()
        };
        let columns: Vec<Vec<i64>> = weight.chunks_exact(inputs).map(quantize_all).collect();
        let padded = outputs.div_ceil(NR) * NR;
        x.chunks_exact(inputs)
            .flat_map(|row| {
                let row = quantize_all(row);
                (0..padded).map({
                    let columns = &columns;
                    move |c| {
                        columns
                            .get(c)
                            .map_or(0, |w| w.iter().zip(&row).map(|(w, x)| w * x).sum::<i64>())
                    }
                })
            })
            .collect()
    }

    #[test]
    fn both_kernels_give_the_oracles_integer_sums_exactly() {
        // Every tile height, an odd input count (the padded pair), a partial panel, and
        // the model's shapes, K = 1536 included (the largest sums).
        for (rows, inputs, outputs) in [
            (1, 40, 37),
            (2, 41, 16),
            (3, 7, 5),
            (5, 40, 37),
            (6, 40, 37),
            (13, 33, 40),
            (22, 384, 1152),
            (9, 1536, 384),
        ] {
            let weight = matrix(outputs * inputs, 1);
            let x = matrix(rows * inputs, 2);
            let layer = QuantizedLinear::new(&weight, &matrix(outputs, 3), inputs, outputs);
            let oracle = oracle_sums(&weight, &x, inputs, outputs);
            for kernel in kernels() {
                let sums: Vec<i64> = integer_sums(&layer, &x, kernel)
                    .into_iter()
                    .map(i64::from)
                    .collect();
                assert_eq!(
                    sums, oracle,
                    "{kernel:?} {rows}×{inputs}·{inputs}×{outputs}"
                );
            }
        }
    }

    #[test]
    fn the_largest_sums_do_not_overflow() {
        // Every input and weight at ±127 with the same sign: the sum is 1536 · 127², the
        // most the model's widest product can reach.
        let (rows, inputs, outputs) = (7, 1536, 32);
        let weight = vec![-0.5f32; outputs * inputs];
        let x = vec![-2.0f32; rows * inputs];
        let layer = QuantizedLinear::new(&weight, &vec![0.0; outputs], inputs, outputs);
        for kernel in kernels() {
            let sums = integer_sums(&layer, &x, kernel);
            assert!(sums.iter().all(|&s| s == 1536 * 127 * 127), "{kernel:?}");
        }
    }

    #[test]
    fn both_kernels_give_the_same_outputs_bit_for_bit() {
        let (rows, inputs, outputs) = (23, 384, 100);
        let x = matrix(rows * inputs, 4);
        let layer = QuantizedLinear::new(
            &matrix(outputs * inputs, 5),
            &matrix(outputs, 6),
            inputs,
            outputs,
        );
        let run = |kernel| {
            let mut out = vec![f32::NAN; rows * outputs];
            layer.forward(&x, &mut out, Epilogue::Gelu, kernel);
            out
        };
        let portable = run(Kernel::Portable);
        assert!(portable.iter().all(|v| v.is_finite()));
        for kernel in kernels() {
            let got: Vec<u32> = run(kernel).iter().map(|v| v.to_bits()).collect();
            let want: Vec<u32> = portable.iter().map(|v| v.to_bits()).collect();
            assert_eq!(got, want, "{kernel:?}");
        }
    }

    /// The f64 product of the dequantized operands (what the int8 product must equal up
    /// to f32 rounding) and of the original ones.
    fn products(weight: &[f32], bias: &[f32], x: &[f32], inputs: usize) -> (Vec<f64>, Vec<f64>) {
        let dequantize = |v: &[f32]| {
            let (scale, inverse) = scale_of(v);
            v.iter()
                .map(|&value| f64::from(quantize(value, inverse)) * f64::from(scale))
                .collect::<Vec<_>>()
        };
        let (mut quantized, mut exact) = (Vec::new(), Vec::new());
        for row in x.chunks_exact(inputs) {
            let row_q = dequantize(row);
            for (column, b) in weight.chunks_exact(inputs).zip(bias) {
                let column_q = dequantize(column);
                quantized.push(
                    f64::from(*b) + row_q.iter().zip(&column_q).map(|(x, w)| x * w).sum::<f64>(),
                );
                exact.push(
                    f64::from(*b)
                        + row
                            .iter()
                            .zip(column)
                            .map(|(x, w)| f64::from(*x) * f64::from(*w))
                            .sum::<f64>(),
                );
            }
        }
        (quantized, exact)
    }

    #[test]
    fn outputs_are_the_dequantized_product_plus_the_bias() {
        let (rows, inputs, outputs) = (11, 384, 48);
        let (weight, bias, x) = (
            matrix(outputs * inputs, 7),
            matrix(outputs, 8),
            matrix(rows * inputs, 9),
        );
        let layer = QuantizedLinear::new(&weight, &bias, inputs, outputs);
        let (quantized, exact) = products(&weight, &bias, &x, inputs);
        for kernel in kernels() {
            let mut out = vec![0.0; rows * outputs];
            layer.forward(&x, &mut out, Epilogue::None, kernel);
            let mut worst_error = 0.0f64;
            for ((got, want), exact) in out.iter().zip(&quantized).zip(&exact) {
                // The integer sum is exact; what remains is f32 rounding of the sum's
                // conversion, the two scales' product and the bias.
                assert!(
                    (f64::from(*got) - want).abs() <= 1e-5 * want.abs().max(1.0),
                    "{kernel:?}: {got} against {want}"
                );
                worst_error = worst_error.max((want - exact).abs());
            }
            // And quantization moves a product of 384 terms in [-1, 1) by little: each term
            // by x·e_w + w·e_x with e up to half a step (1/254), about 0.036 for the sum's
            // standard deviation; 0.25 is seven of them (a sign or scale slip is ~1).
            assert!(
                worst_error < 0.25,
                "{kernel:?}: quantization error {worst_error}"
            );
        }
    }

    #[test]
    fn a_row_of_zeros_gives_the_bias() {
        let (inputs, outputs) = (40, 20);
        let bias = matrix(outputs, 10);
        let layer = QuantizedLinear::new(&matrix(outputs * inputs, 11), &bias, inputs, outputs);
        let mut x = matrix(3 * inputs, 12);
        x[inputs..2 * inputs].fill(0.0);
        for kernel in kernels() {
            let mut out = vec![f32::NAN; 3 * outputs];
            layer.forward(&x, &mut out, Epilogue::None, kernel);
            assert_eq!(out[outputs..2 * outputs], bias[..], "{kernel:?}");
            assert!(out.iter().all(|v| v.is_finite()), "{kernel:?}");
        }
    }

    #[test]
    fn a_column_of_zeros_gives_its_bias_and_leaves_the_others_alone() {
        let (rows, inputs, outputs) = (5, 40, 20);
        let mut weight = matrix(outputs * inputs, 13);
        let bias = matrix(outputs, 14);
        let x = matrix(rows * inputs, 15);
        let plain = QuantizedLinear::new(&weight, &bias, inputs, outputs);
        weight[7 * inputs..8 * inputs].fill(0.0);
        let zeroed = QuantizedLinear::new(&weight, &bias, inputs, outputs);
        assert_eq!(zeroed.column_scales[7], 0.0);
        for kernel in kernels() {
            let (mut before, mut after) = (vec![0.0; rows * outputs], vec![0.0; rows * outputs]);
            plain.forward(&x, &mut before, Epilogue::None, kernel);
            zeroed.forward(&x, &mut after, Epilogue::None, kernel);
            for row in 0..rows {
                for column in 0..outputs {
                    let at = row * outputs + column;
                    if column == 7 {
                        assert_eq!(after[at], bias[7], "{kernel:?} row {row}");
                    } else {
                        assert_eq!(after[at], before[at], "{kernel:?} ({row}, {column})");
                    }
                }
            }
        }
    }

    #[test]
    fn a_row_with_one_huge_value_keeps_it_and_rounds_the_rest_to_zero() {
        // One input 10⁴ times the others sets the row's scale: it is kept (127 steps) and
        // every small input of its row rounds to 0 — the known cost of a scale a row. The
        // scale being the row's, the next row is quantized as if alone.
        let (inputs, outputs) = (64, 16);
        let weight = matrix(outputs * inputs, 16);
        let bias = matrix(outputs, 17);
        let mut x = matrix(2 * inputs, 18);
        x[5] = 1.0e4;
        let layer = QuantizedLinear::new(&weight, &bias, inputs, outputs);
        let quantized = layer.quantize_rows(&x, 2);
        assert_eq!(quantized.values[5], 127);
        assert!(
            quantized.values[..inputs]
                .iter()
                .enumerate()
                .all(|(k, &q)| k == 5 || q == 0)
        );
        assert_eq!(quantized.scales[0], 1.0e4 / 127.0);
        for kernel in kernels() {
            let mut out = vec![0.0; 2 * outputs];
            layer.forward(&x, &mut out, Epilogue::None, kernel);
            for column in 0..outputs {
                // Row 0: the huge input times its column's dequantized weight, plus the bias.
                let weights = &weight[column * inputs..(column + 1) * inputs];
                let (scale, inverse) = scale_of(weights);
                let want = 1.0e4 * f64::from(quantize(weights[5], inverse)) * f64::from(scale)
                    + f64::from(bias[column]);
                let got = f64::from(out[column]);
                assert!(
                    (got - want).abs() <= 1e-5 * want.abs().max(1.0),
                    "{kernel:?} column {column}: {got} against {want}"
                );
            }
            let mut alone = vec![0.0; outputs];
            layer.forward(&x[inputs..], &mut alone, Epilogue::None, kernel);
            assert_eq!(out[outputs..], alone[..], "{kernel:?}: row 1 beside row 0");
        }
    }

    #[test]
    fn quantize_rounds_to_nearest_and_clamps() {
        assert_eq!(quantize(0.0, 1.0), 0);
        assert_eq!(quantize(2.4, 1.0), 2);
        assert_eq!(quantize(-2.6, 1.0), -3);
        assert_eq!(quantize(2.5, 1.0), 2); // ties to even
        assert_eq!(quantize(1.0e6, 1.0), 127);
        assert_eq!(quantize(-1.0e6, 1.0), -127);
        assert_eq!(scale_of(&[0.0, -0.0]), (0.0, 0.0));
        assert_eq!(scale_of(&[1.0, -254.0]), (2.0, 0.5));
    }

    #[test]
    fn two_threads_give_the_same_bits_as_one() {
        let (rows, inputs, outputs) = (20, 384, 384);
        let x = matrix(rows * inputs, 18);
        let layer = QuantizedLinear::new(
            &matrix(outputs * inputs, 19),
            &matrix(outputs, 20),
            inputs,
            outputs,
        );
        let run = |threads: usize| {
            let team = crate::threads::Team::new(threads);
            let mut out = vec![0.0; rows * outputs];
            team.install(|| layer.forward(&x, &mut out, Epilogue::Gelu, Kernel::best()));
            out
        };
        assert_eq!(run(2), run(1));
    }
}
