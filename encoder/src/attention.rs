//! Multi-head self-attention over one text's rows, read from the fused query|key|value
//! product, one head at a time and, for each head, one query row at a time (four at a time
//! on AVX-512, sharing each load of keys and values). Each head's keys are first copied
//! dimension-major, so that a row's scores are sweeps over contiguous keys that vectorise
//! (a dot product a key cost a horizontal sum each: ~1.5× the CPU of candle's path on
//! 238-piece documents), and its values side by side. Both sums (scores over dimensions,
//! outputs over rows) run a block of 32 results at a time in registers.
//!
//! Nothing of size positions × positions is built: for each row and head the scores over the
//! text's own positions go into one reused buffer of `positions` floats a row, become weights
//! (softmax), and the head's slice of the output is the weighted sum of the value rows. A
//! batch of texts is their rows one after another, each attending only to its own, so there
//! is no padding and no mask. The queries arrive already scaled by 1/√head_width (folded
//! into the query weights at load).
//!
//! With more than one kernel thread (`threads`), a long text shares out its rows, head after
//! head; a query-sized text, too few rows to share, shares out its heads instead. Either
//! way each output is the same sum in the same order, so the bits do not depend on the
//! threads.

use std::ops::Range;

use std::sync::{Mutex, PoisonError};

use crate::threads::Team;

/// From this many multiply-adds of a text's scores (all rows, all heads) on, its rows are
/// shared out between the kernel threads, head after head.
const PARALLEL_MIN_WORK: usize = 1 << 20;
/// From this many on (and below `PARALLEL_MIN_WORK`), its heads are shared out instead: a
/// query's 10–50 rows are too few groups to share, but its twelve heads are not, and while
/// the caller ran attention alone the other thread waited for the next product.
const HEADS_PARALLEL_MIN_WORK: usize = 1 << 15;

/// Scores, or a head's output columns, summed together in registers: 32 floats, four AVX2
/// registers of sums, enough independent adds to hide their latency (two AVX-512 ones are
/// not: that path sums four rows' blocks together).
const BLOCK: usize = 32;

/// Rows handed to one call: up to this many share each load of the head's keys and values.
const GROUP: usize = 4;

/// Writes `context` (rows × hidden): for every row of every text in `texts` (ranges of
/// rows), each head's attention-weighted sum of the text's value rows. `qkv` is rows ×
/// 3·hidden, a row's queries, keys and values side by side, heads `hidden / heads` wide.
pub fn attend(
    qkv: &[f32],
    hidden: usize,
    heads: usize,
    texts: &[Range<usize>],
    context: &mut [f32],
) {
    attend_with(attend_rows, qkv, hidden, heads, texts, context)
}

/// The rows of one head, one call a group: `attend_rows`, or (in tests) one of its kernels.
type RowsKernel = fn(&Head<'_>, usize, &mut [f32], &mut [f32]);

/// `attend`, with the kernel for each group of rows named.
fn attend_with(
    kernel: RowsKernel,
    qkv: &[f32],
    hidden: usize,
    heads: usize,
    texts: &[Range<usize>],
    context: &mut [f32],
) {
    let stride = 3 * hidden;
    let rows = qkv.len() / stride;
    assert_eq!(qkv.len(), rows * stride, "qkv is not rows × 3·hidden");
    assert_eq!(context.len(), rows * hidden, "context is not rows × hidden");
    assert!(
        heads > 0 && hidden.is_multiple_of(heads),
        "heads do not divide hidden"
    );
    let shape = Shape {
        kernel,
        qkv,
        hidden,
        heads,
        width: hidden / heads,
    };
    crate::threads::with_current(|team| {
        for text in texts {
            assert!(text.end <= rows, "a text's rows run past the matrix");
            if text.is_empty() {
                continue;
            }
            let rows_of_text = &mut context[text.start * hidden..text.end * hidden];
            let work = text.len() * text.len() * hidden;
            let by_rows = team.parts(work >= PARALLEL_MIN_WORK);
            let by_heads = team.parts(work >= HEADS_PARALLEL_MIN_WORK).min(heads);
            if by_rows > 1 {
                attend_split_by_rows(team, &shape, text, by_rows, rows_of_text);
            } else if by_heads > 1 {
                attend_split_by_heads(team, &shape, text, by_heads, rows_of_text);
            } else {
                attend_heads(&shape, text, 0..heads, rows_of_text);
            }
        }
    })
}

/// What every head of a forward pass shares: the kernel, the fused product and its widths.
struct Shape<'a> {
    kernel: RowsKernel,
    /// rows × 3·hidden: a row's queries, keys and values side by side.
    qkv: &'a [f32],
    hidden: usize,
    heads: usize,
    /// Columns a head (`hidden / heads`).
    width: usize,
}

/// One head's keys and values, laid out as the kernels read them, reused head after head.
struct HeadScratch {
    keys_by_dimension: Vec<f32>,
    values_of_head: Vec<f32>,
}

impl HeadScratch {
    fn new(width: usize, positions: usize) -> Self {
        HeadScratch {
            keys_by_dimension: vec![0.0; width * positions],
            values_of_head: vec![0.0; positions * width],
        }
    }

    /// Fills the scratch with head `head` of `text` and returns the kernels' view of it,
    /// writing the head's output at column `out_at` of rows `out_width` wide.
    fn view<'a>(
        &'a mut self,
        shape: &Shape<'a>,
        head: usize,
        text: &Range<usize>,
        out_at: usize,
        out_width: usize,
    ) -> Head<'a> {
        let (stride, width) = (3 * shape.hidden, shape.width);
        // The head's keys transposed (dimension-major), so that a row's scores are `width`
        // sweeps over contiguous keys instead of one short dot product a key.
        let at = shape.hidden + head * width;
        for (position, row) in text.clone().enumerate() {
            let key = &shape.qkv[row * stride + at..row * stride + at + width];
            for (dimension, &value) in key.iter().enumerate() {
                self.keys_by_dimension[dimension * text.len() + position] = value;
            }
        }
        // And its values side by side: in place they are rows 3·hidden apart, and every row
        // of the text reads all of them.
        let value_at = 2 * shape.hidden + head * width;
        for (row, value) in text
            .clone()
            .zip(self.values_of_head.chunks_exact_mut(width))
        {
            value.copy_from_slice(&shape.qkv[row * stride + value_at..][..width]);
        }
        Head {
            qkv: shape.qkv,
            hidden: shape.hidden,
            width,
            head,
            out_at,
            out_width,
            keys: &self.keys_by_dimension,
            values: &self.values_of_head,
        }
    }
}

/// The head's output for the rows of `out` (each `head.out_width` wide), the text's rows
/// from `first_row` on, a group of rows a kernel call, with `scores` (at least [`GROUP`] ×
/// the text's length) as scratch.
fn run_groups(
    kernel: RowsKernel,
    head: &Head<'_>,
    first_row: usize,
    scores: &mut [f32],
    out: &mut [f32],
) {
    for (index, rows) in out.chunks_mut(GROUP * head.out_width).enumerate() {
        kernel(head, first_row + index * GROUP, scores, rows);
    }
}

/// The heads `heads` of `text`, one after another on this thread, into `out`: the text's
/// rows, each holding those heads' columns side by side (all of a row when `heads` is every
/// head; a part's own rows when the heads are shared out).
fn attend_heads(shape: &Shape<'_>, text: &Range<usize>, heads: Range<usize>, out: &mut [f32]) {
    let width = shape.width;
    let out_width = heads.len() * width;
    let mut scratch = HeadScratch::new(width, text.len());
    let mut scores = vec![0.0; GROUP * text.len()];
    for (index, head) in heads.enumerate() {
        let view = scratch.view(shape, head, text, index * width, out_width);
        run_groups(shape.kernel, &view, text.start, &mut scores, out);
    }
}

/// A long text: each head's rows in runs of whole groups, one run a part, head after head.
fn attend_split_by_rows(
    team: &Team,
    shape: &Shape<'_>,
    text: &Range<usize>,
    parts: usize,
    rows_of_text: &mut [f32],
) {
    let hidden = shape.hidden;
    let groups = text.len().div_ceil(GROUP);
    let groups_a_part = groups.div_ceil(parts.clamp(1, groups));
    let mut scratch = HeadScratch::new(shape.width, text.len());
    for head in 0..shape.heads {
        let view = scratch.view(shape, head, text, head * shape.width, hidden);
        // Each part locks only its own run, so the locks are never contended.
        let runs: Vec<Mutex<&mut [f32]>> = rows_of_text
            .chunks_mut(groups_a_part * GROUP * hidden)
            .map(Mutex::new)
            .collect();
        team.split(runs.len(), &|part| {
            let mut out = runs[part].lock().unwrap_or_else(PoisonError::into_inner);
            let mut scores = vec![0.0; GROUP * text.len()];
            let first_row = text.start + part * groups_a_part * GROUP;
            run_groups(shape.kernel, &view, first_row, &mut scores, &mut out);
        });
    }
}

/// A short text: too few rows to share out, so the heads are shared out instead, a run of
/// heads a part. A part writes its heads' columns of every row into rows of its own, which
/// are then copied into the text's rows: heads' columns interleave within a row, and no
/// two parts may hold the same row.
fn attend_split_by_heads(
    team: &Team,
    shape: &Shape<'_>,
    text: &Range<usize>,
    parts: usize,
    rows_of_text: &mut [f32],
) {
    let (hidden, width, heads) = (shape.hidden, shape.width, shape.heads);
    let heads_of = |part: usize| heads * part / parts..heads * (part + 1) / parts;
    let outputs: Vec<Mutex<Vec<f32>>> = (0..parts)
        .map(|part| Mutex::new(vec![0.0; text.len() * heads_of(part).len() * width]))
        .collect();
    team.split(parts, &|part| {
        let mut out = outputs[part].lock().unwrap_or_else(PoisonError::into_inner);
        attend_heads(shape, text, heads_of(part), &mut out);
    });
    for (part, out) in outputs.into_iter().enumerate() {
        let out = out.into_inner().unwrap_or_else(PoisonError::into_inner);
        let own = heads_of(part);
        let columns = own.start * width..own.end * width;
        for (row, part_row) in rows_of_text
            .chunks_exact_mut(hidden)
            .zip(out.chunks_exact(columns.len()))
        {
            row[columns.clone()].copy_from_slice(part_row);
        }
    }
}

/// One head of one text, as every row of the text reads it.
struct Head<'a> {
    /// The fused product, rows × 3·hidden (a row's queries are read from it in place).
    qkv: &'a [f32],
    hidden: usize,
    /// Columns a head (`hidden / heads`).
    width: usize,
    head: usize,
    /// Where the head's `width` output columns start in a row of the output.
    out_at: usize,
    /// The width of a row of the output: `hidden`, or a part's share of the heads.
    out_width: usize,
    /// The head's keys, dimension-major: `width` runs of the text's length.
    keys: &'a [f32],
    /// The head's values, the text's length × `width`, row-major.
    values: &'a [f32],
}

/// The head's output for the rows `first_row..` that `out` holds (each `out_width` wide;
/// at most [`GROUP`]), with `scores` (at least rows × the text's length) as scratch.
fn attend_rows(head: &Head<'_>, first_row: usize, scores: &mut [f32], out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, the one feature `attend_rows_avx512` is compiled
            // for.
            return unsafe { attend_rows_avx512(head, first_row, scores, out) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, the one feature `attend_rows_avx2` is compiled for.
            return unsafe { attend_rows_avx2(head, first_row, scores, out) };
        }
    }
    one_row_at_a_time(head, first_row, scores, out)
}

/// Four rows at a time where there are four (`four_rows_avx512`), the rest one at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn attend_rows_avx512(head: &Head<'_>, first_row: usize, scores: &mut [f32], out: &mut [f32]) {
    if out.len() == 4 * head.out_width {
        // SAFETY: the CPU has AVX-512F (this function's own feature).
        unsafe { avx512::four_rows(head, first_row, scores, out) };
    } else {
        one_row_at_a_time(head, first_row, scores, out);
    }
}

/// The same body as the portable one, compiled with AVX2's eight lanes. No FMA: both give
/// the same bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn attend_rows_avx2(head: &Head<'_>, first_row: usize, scores: &mut [f32], out: &mut [f32]) {
    one_row_at_a_time(head, first_row, scores, out)
}

#[inline(always)]
fn one_row_at_a_time(head: &Head<'_>, first_row: usize, scores: &mut [f32], out: &mut [f32]) {
    for (offset, out) in out.chunks_exact_mut(head.out_width).enumerate() {
        one_row(head, first_row + offset, scores, out);
    }
}

/// Row `row`'s output for the head, into its `out_width`-wide `out`.
#[inline(always)]
fn one_row(head: &Head<'_>, row: usize, scores: &mut [f32], out: &mut [f32]) {
    let width = head.width;
    let count = head.values.len() / width;
    let scores = &mut scores[..count];
    let query = head.query(row);
    // Scores a block at a time, each block's sums kept in registers over all dimensions:
    // sweeping all scores once a dimension instead loaded and stored every score `width`
    // times, and attention took a third of a document's time. Each score still sums its
    // dimensions in order from 0.0, so the bits are the same.
    let whole = count - count % BLOCK;
    for start in (0..whole).step_by(BLOCK) {
        let mut sums = [0.0f32; BLOCK];
        for (&q, keys_of_dimension) in query.iter().zip(head.keys.chunks_exact(count)) {
            let keys = &keys_of_dimension[start..start + BLOCK];
            for (sum, &key) in sums.iter_mut().zip(keys) {
                *sum += q * key;
            }
        }
        scores[start..start + BLOCK].copy_from_slice(&sums);
    }
    head.scores_from(query, scores, whole);
    crate::kernels::softmax_rows(scores, count);
    // The weighted sum of the value rows, likewise a block of the head's columns at a time
    // in registers, each column summed over the rows in order.
    let head_out = &mut out[head.out_at..head.out_at + width];
    let whole = width - width % BLOCK;
    for start in (0..whole).step_by(BLOCK) {
        let mut sums = [0.0f32; BLOCK];
        for (&weight, value_row) in scores.iter().zip(head.values.chunks_exact(width)) {
            let value = &value_row[start..start + BLOCK];
            for (sum, &v) in sums.iter_mut().zip(value) {
                *sum += weight * v;
            }
        }
        head_out[start..start + BLOCK].copy_from_slice(&sums);
    }
    head.outputs_from(scores, head_out, whole);
}

impl Head<'_> {
    /// The head's queries of row `row`.
    #[inline(always)]
    fn query(&self, row: usize) -> &[f32] {
        let at = row * 3 * self.hidden + self.head * self.width;
        &self.qkv[at..at + self.width]
    }

    /// A row's scores from position `from` on (the ones past the last whole block).
    #[inline(always)]
    fn scores_from(&self, query: &[f32], scores: &mut [f32], from: usize) {
        let count = scores.len();
        let rest = &mut scores[from..];
        rest.fill(0.0);
        for (&q, keys_of_dimension) in query.iter().zip(self.keys.chunks_exact(count)) {
            for (score, &key) in rest.iter_mut().zip(&keys_of_dimension[from..]) {
                *score += q * key;
            }
        }
    }

    /// A row's output columns from `from` on (past the last whole block) of its `head_out`,
    /// given its attention `weights`.
    #[inline(always)]
    fn outputs_from(&self, weights: &[f32], head_out: &mut [f32], from: usize) {
        let rest = &mut head_out[from..];
        rest.fill(0.0);
        for (&weight, value_row) in weights.iter().zip(self.values.chunks_exact(self.width)) {
            for (sum, &v) in rest.iter_mut().zip(&value_row[from..]) {
                *sum += weight * v;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::{BLOCK, Head};

    /// Four rows' output for the head (`out` is 4 × `out_width`): the same sums in the same order
    /// as `one_row`'s, each step one fused multiply-add (one rounding where `one_row` rounds
    /// twice, so the last bits may differ from its; a test holds both to the exact sums).
    /// The fused steps are half the instructions: a document's attention was bound by the
    /// separate multiplies and adds. The four rows share each load of keys and values, and
    /// their 4 × 2 registers of sums are eight independent chains: one row's two chains
    /// were bound by the latency of their steps, so AVX-512's lanes alone ran attention no
    /// faster than AVX2's. Which rows take this path depends only on a row's place in its
    /// text (whole groups of four from the text's first row), so a text's bits do not
    /// depend on the texts around it or on the threads.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn four_rows(
        head: &Head<'_>,
        first_row: usize,
        scores: &mut [f32],
        out: &mut [f32],
    ) {
        const _: () = assert!(BLOCK == 32, "a block is two 16-lane registers");
        let (out_width, width) = (head.out_width, head.width);
        let count = head.values.len() / width;
        assert!(out.len() == 4 * out_width && scores.len() >= 4 * count);
        assert!(head.keys.len() == width * count && head.values.len() == count * width);
        let queries: [&[f32]; 4] = std::array::from_fn(|r| head.query(first_row + r));
        let scores = &mut scores[..4 * count];
        let whole = count - count % BLOCK;
        let keys = head.keys.as_ptr();
        for start in (0..whole).step_by(BLOCK) {
            let mut sums = [[_mm512_setzero_ps(); 2]; 4];
            for dimension in 0..width {
                // SAFETY: dimension · count + start + 32 ≤ width · count = keys.len().
                let (low, high) = unsafe {
                    let at = keys.add(dimension * count + start);
                    (_mm512_loadu_ps(at), _mm512_loadu_ps(at.add(16)))
                };
                for (sums, query) in sums.iter_mut().zip(&queries) {
                    let q = _mm512_set1_ps(query[dimension]);
                    sums[0] = _mm512_fmadd_ps(q, low, sums[0]);
                    sums[1] = _mm512_fmadd_ps(q, high, sums[1]);
                }
            }
            for (r, sums) in sums.iter().enumerate() {
                let at = &mut scores[r * count + start..r * count + start + BLOCK];
                // SAFETY: `at` is 32 floats.
                unsafe {
                    _mm512_storeu_ps(at.as_mut_ptr(), sums[0]);
                    _mm512_storeu_ps(at.as_mut_ptr().add(16), sums[1]);
                }
            }
        }
        for (query, row_scores) in queries.iter().zip(scores.chunks_exact_mut(count)) {
            head.scores_from(query, row_scores, whole);
        }
        crate::kernels::softmax_rows(scores, count);
        let at = head.out_at;
        let whole = width - width % BLOCK;
        let values = head.values.as_ptr();
        for start in (0..whole).step_by(BLOCK) {
            let mut sums = [[_mm512_setzero_ps(); 2]; 4];
            for position in 0..count {
                // SAFETY: position · width + start + 32 ≤ count · width = values.len().
                let (low, high) = unsafe {
                    let at = values.add(position * width + start);
                    (_mm512_loadu_ps(at), _mm512_loadu_ps(at.add(16)))
                };
                for (r, sums) in sums.iter_mut().enumerate() {
                    let weight = _mm512_set1_ps(scores[r * count + position]);
                    sums[0] = _mm512_fmadd_ps(weight, low, sums[0]);
                    sums[1] = _mm512_fmadd_ps(weight, high, sums[1]);
                }
            }
            for (r, sums) in sums.iter().enumerate() {
                let to = &mut out[r * out_width + at + start..r * out_width + at + start + BLOCK];
                // SAFETY: `to` is 32 floats.
                unsafe {
                    _mm512_storeu_ps(to.as_mut_ptr(), sums[0]);
                    _mm512_storeu_ps(to.as_mut_ptr().add(16), sums[1]);
                }
            }
        }
        for (r, weights) in scores.chunks_exact(count).enumerate() {
            let head_out = &mut out[r * out_width + at..r * out_width + at + width];
            head.outputs_from(weights, head_out, whole);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Attention as the textbook writes it, in f64, for one text: softmax(QKᵀ)V per head.
    fn reference(qkv: &[f32], hidden: usize, heads: usize, rows: Range<usize>) -> Vec<f64> {
        let (stride, width) = (3 * hidden, hidden / heads);
        let mut out = vec![0.0; rows.len() * hidden];
        for (i, row) in rows.clone().enumerate() {
            for head in 0..heads {
                let at = head * width;
                let scores: Vec<f64> = rows
                    .clone()
                    .map(|key| {
                        (0..width)
                            .map(|d| {
                                qkv[row * stride + at + d] as f64
                                    * qkv[key * stride + hidden + at + d] as f64
                            })
                            .sum()
                    })
                    .collect();
                let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let total: f64 = scores.iter().map(|s| (s - max).exp()).sum();
                for (j, key) in rows.clone().enumerate() {
                    let weight = (scores[j] - max).exp() / total;
                    for d in 0..width {
                        out[i * hidden + at + d] +=
                            weight * qkv[key * stride + 2 * hidden + at + d] as f64;
                    }
                }
            }
        }
        out
    }

    #[test]
    fn each_text_attends_to_its_own_rows_as_the_textbook_says() {
        let (hidden, heads) = (24, 3);
        let rows = 2 + 9 + 1;
        let qkv: Vec<f32> = (0..rows * 3 * hidden)
            .map(|i| (((i * 7919) % 1009) as f32 / 1009.0 - 0.5) * 3.0)
            .collect();
        let texts = [0..2, 2..11, 11..12];
        let mut context = vec![f32::NAN; rows * hidden];
        attend(&qkv, hidden, heads, &texts, &mut context);
        for text in &texts {
            let expected = reference(&qkv, hidden, heads, text.clone());
            let got = &context[text.start * hidden..text.end * hidden];
            for (index, (&got, &want)) in got.iter().zip(&expected).enumerate() {
                assert!(
                    (got as f64 - want).abs() <= 1e-5 * want.abs().max(1.0),
                    "text {text:?}, element {index}: {got} against {want}"
                );
            }
        }
        // A one-row text attends to itself alone: its output is its own value row.
        let value = &qkv[11 * 3 * hidden + 2 * hidden..12 * 3 * hidden];
        assert_eq!(&context[11 * hidden..], value);
    }

    /// Attention as it was first written in f32: each score summed over the dimensions in
    /// order, each output column over the rows in order, nothing copied or blocked.
    fn plain(qkv: &[f32], hidden: usize, heads: usize, rows: Range<usize>) -> Vec<f32> {
        let (stride, width) = (3 * hidden, hidden / heads);
        let mut out = vec![0.0f32; rows.len() * hidden];
        for (i, row) in rows.clone().enumerate() {
            for head in 0..heads {
                let at = head * width;
                let mut scores: Vec<f32> = rows
                    .clone()
                    .map(|key| {
                        let mut score = 0.0f32;
                        for d in 0..width {
                            score +=
                                qkv[row * stride + at + d] * qkv[key * stride + hidden + at + d];
                        }
                        score
                    })
                    .collect();
                crate::kernels::softmax_rows(&mut scores, rows.len());
                for (j, key) in rows.clone().enumerate() {
                    for d in 0..width {
                        out[i * hidden + at + d] +=
                            scores[j] * qkv[key * stride + 2 * hidden + at + d];
                    }
                }
            }
        }
        out
    }

    /// `attend_with(kernel, …)` on a team of `threads`: one runs every head of a text on the
    /// caller, writing rows `hidden` wide; two share out a text's heads (every text of
    /// `kernel_case` is between the two thresholds or below both), each part writing rows of
    /// its own. The kernel tests run both, whatever the machine's own team.
    fn attend_with_on(
        threads: usize,
        kernel: RowsKernel,
        qkv: &[f32],
        hidden: usize,
        heads: usize,
        texts: &[Range<usize>],
    ) -> Vec<f32> {
        let mut context = vec![f32::NAN; qkv.len() / 3];
        crate::threads::Team::new(threads)
            .install(|| attend_with(kernel, qkv, hidden, heads, texts, &mut context));
        context
    }

    /// Texts for the kernel tests, 80 wide in 2 heads: heads 40 wide (one block of columns
    /// and 8 left over) and texts of 1, 33 and 70 rows (no whole block of scores, one and a
    /// row, two and six; eight groups of four rows and one left, seventeen and two), and an
    /// empty one.
    fn kernel_case() -> (usize, usize, [Range<usize>; 4], Vec<f32>) {
        let (hidden, heads, rows) = (80, 2, 104);
        let qkv = (0..rows * 3 * hidden)
            .map(|i| ((i * 7919) % 2003) as f32 / 2003.0 - 0.5)
            .collect();
        (hidden, heads, [0..1, 1..34, 34..104, 104..104], qkv)
    }

    #[test]
    fn blocked_sums_give_the_bits_of_plain_ones() {
        // Every unfused kernel this CPU runs, not only the one `attend` picks.
        let (hidden, heads, texts, qkv) = kernel_case();
        let mut kernels: Vec<(&str, RowsKernel)> = vec![("portable", one_row_at_a_time)];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: only where the CPU has AVX2.
            kernels.push(("avx2", |h, r, s, o| unsafe { attend_rows_avx2(h, r, s, o) }));
        }
        for ((name, kernel), threads) in kernels.into_iter().flat_map(|k| [(k, 1), (k, 2)]) {
            let context = attend_with_on(threads, kernel, &qkv, hidden, heads, &texts);
            for text in &texts {
                let expected = plain(&qkv, hidden, heads, text.clone());
                let got = &context[text.start * hidden..text.end * hidden];
                assert!(
                    got.iter()
                        .zip(&expected)
                        .all(|(g, e)| g.to_bits() == e.to_bits()),
                    "{name}, {threads} thread(s): text {text:?}"
                );
            }
        }
    }

    #[test]
    fn every_kernel_is_within_rounding_of_the_exact_attention() {
        // The fused AVX-512 kernel's bits differ from the plain sums', so it is held, with
        // the others, to the exact (f64) attention: 1e-5 relative is a few hundred f32
        // roundings, and a wrong score, weight or column is off by far more.
        let (hidden, heads, texts, qkv) = kernel_case();
        let mut kernels: Vec<(&str, RowsKernel)> =
            vec![("dispatched", attend_rows), ("portable", one_row_at_a_time)];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: only where the CPU has AVX-512F.
            kernels.push(("avx512", |h, r, s, o| unsafe {
                attend_rows_avx512(h, r, s, o)
            }));
        }
        for ((name, kernel), threads) in kernels.into_iter().flat_map(|k| [(k, 1), (k, 2)]) {
            let context = attend_with_on(threads, kernel, &qkv, hidden, heads, &texts);
            for text in &texts {
                let expected = reference(&qkv, hidden, heads, text.clone());
                let got = &context[text.start * hidden..text.end * hidden];
                for (index, (&got, &want)) in got.iter().zip(&expected).enumerate() {
                    assert!(
                        (got as f64 - want).abs() <= 1e-5 * want.abs().max(1.0),
                        "{name}, {threads} thread(s): text {text:?}, element {index}: \
                         {got} against {want}"
                    );
                }
            }
        }
    }

    /// `attend` over `texts` (rows `hidden` wide in `heads` heads) on a team of `threads`.
    fn attend_on(
        threads: usize,
        qkv: &[f32],
        hidden: usize,
        heads: usize,
        texts: &[Range<usize>],
    ) -> Vec<u32> {
        let rows = qkv.len() / (3 * hidden);
        let team = crate::threads::Team::new(threads);
        let mut context = vec![f32::NAN; rows * hidden];
        team.install(|| attend(qkv, hidden, heads, texts, &mut context));
        context.iter().map(|value| value.to_bits()).collect()
    }

    fn sample_qkv(rows: usize, hidden: usize) -> Vec<f32> {
        (0..rows * 3 * hidden)
            .map(|i| ((i * 104_729) % 2003) as f32 / 2003.0 - 0.5)
            .collect()
    }

    #[test]
    fn parallel_rows_give_the_same_bits() {
        // 96 rows: 96² · 384 multiply-adds, past PARALLEL_MIN_WORK, so the rows are shared.
        const _: () = assert!(96 * 96 * 384 >= PARALLEL_MIN_WORK);
        let qkv = sample_qkv(96, 384);
        let whole = std::slice::from_ref(&(0..96));
        assert_eq!(
            attend_on(2, &qkv, 384, 12, whole),
            attend_on(1, &qkv, 384, 12, whole)
        );
    }

    #[test]
    fn parallel_heads_give_the_same_bits() {
        // Query-sized texts (between HEADS_PARALLEL_MIN_WORK and PARALLEL_MIN_WORK), so the
        // heads are shared out: 12 heads in 4, 6 and 10 parts (the last uneven), 8 heads in
        // 6, 2 heads in fewer parts than the team offers, heads 40 wide (a block of columns
        // and 8 left over); one text, and a batch whose texts start off a group of four, with
        // one too short to share and an empty one.
        const _: () =
            assert!(HEADS_PARALLEL_MIN_WORK <= 24 * 24 * 240 && 43 * 43 * 384 < PARALLEL_MIN_WORK);
        const _: () = assert!(3 * 3 * 384 < HEADS_PARALLEL_MIN_WORK);
        let one_text = std::slice::from_ref(&(0..24));
        let batch = [0..3, 3..27, 27..27, 27..70];
        for (hidden, heads) in [(384, 12), (384, 8), (384, 2), (240, 6)] {
            let qkv = sample_qkv(70, hidden);
            for texts in [one_text, &batch] {
                let alone = attend_on(1, &qkv, hidden, heads, texts);
                for threads in [2, 3, 5] {
                    assert!(
                        attend_on(threads, &qkv, hidden, heads, texts) == alone,
                        "{threads} threads, {heads} heads of {hidden}, texts {texts:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_text_gets_the_same_bits_in_a_batch_as_alone() {
        // Texts starting at rows that are not multiples of four: which rows take the fused
        // four-row kernel depends on a row's place in its own text, not in the batch. On
        // one thread and on two (heads shared out, and rows for the 60-row text).
        const _: () = assert!(60 * 60 * 384 >= PARALLEL_MIN_WORK);
        let (hidden, heads) = (384, 12);
        let batch = [0..3, 3..33, 33..34, 34..94, 94..101];
        let qkv = sample_qkv(101, hidden);
        for threads in [1, 2] {
            let together = attend_on(threads, &qkv, hidden, heads, &batch);
            for text in &batch {
                let alone_qkv = &qkv[text.start * 3 * hidden..text.end * 3 * hidden];
                let alone = attend_on(
                    threads,
                    alone_qkv,
                    hidden,
                    heads,
                    std::slice::from_ref(&(0..text.len())),
                );
                assert!(
                    together[text.start * hidden..text.end * hidden] == alone[..],
                    "{threads} thread(s), text {text:?}"
                );
            }
        }
    }
}
