//! Multi-head self-attention over one text's rows, read from the fused query|key|value
//! product, one head and one query row at a time. Each head's keys are first copied
//! dimension-major, so that a row's scores are sweeps over contiguous keys that vectorise
//! (a dot product a key cost a horizontal sum each: ~1.5× the CPU of candle's path on
//! 238-piece documents), and its values side by side. Both sums (scores over dimensions,
//! outputs over rows) run a block of 32 results at a time in registers.
//!
//! Nothing of size positions × positions is built: for each row and head the scores over the
//! text's own positions go into one reused buffer of `positions` floats, become weights
//! (softmax), and the head's slice of the output is the weighted sum of the value rows. A
//! batch of texts is their rows one after another, each attending only to its own, so there
//! is no padding and no mask. The queries arrive already scaled by 1/√head_width (folded
//! into the query weights at load).

use std::ops::Range;

use rayon::prelude::*;

/// Below this many multiply-adds (all rows, all heads) attention runs on the calling
/// thread: for a query's 10–40 rows it is a few microseconds of work.
const PARALLEL_MIN_WORK: usize = 1 << 20;

/// Scores, or a head's output columns, summed together in registers: 32 floats, four AVX2
/// registers (two AVX-512 ones) of sums, enough independent adds to hide their latency.
const BLOCK: usize = 32;

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
    let stride = 3 * hidden;
    let rows = qkv.len() / stride;
    assert_eq!(qkv.len(), rows * stride, "qkv is not rows × 3·hidden");
    assert_eq!(context.len(), rows * hidden, "context is not rows × hidden");
    assert!(
        heads > 0 && hidden.is_multiple_of(heads),
        "heads do not divide hidden"
    );
    let work: usize = texts
        .iter()
        .map(|text| text.len() * text.len())
        .sum::<usize>()
        * hidden;
    let parallel = work >= PARALLEL_MIN_WORK && rayon::current_num_threads() > 1;
    let width = hidden / heads;
    for text in texts {
        assert!(text.end <= rows, "a text's rows run past the matrix");
        if text.is_empty() {
            continue;
        }
        let rows_of_text = &mut context[text.start * hidden..text.end * hidden];
        let mut keys_by_dimension = vec![0.0f32; width * text.len()];
        let mut values_of_head = vec![0.0f32; text.len() * width];
        for head in 0..heads {
            // The head's keys transposed (dimension-major), so that a row's scores are
            // `width` sweeps over contiguous keys instead of one short dot product a key.
            let at = hidden + head * width;
            for (position, row) in text.clone().enumerate() {
                let key = &qkv[row * stride + at..row * stride + at + width];
                for (dimension, &value) in key.iter().enumerate() {
                    keys_by_dimension[dimension * text.len() + position] = value;
                }
            }
            // And its values side by side: in place they are rows 3·hidden apart, and every
            // row of the text reads all of them.
            let value_at = 2 * hidden + head * width;
            for (row, value) in text.clone().zip(values_of_head.chunks_exact_mut(width)) {
                value.copy_from_slice(&qkv[row * stride + value_at..][..width]);
            }
            let (keys, values) = (&keys_by_dimension, &values_of_head);
            let one_row = |scores: &mut Vec<f32>, (offset, out): (usize, &mut [f32])| {
                attend_row(
                    qkv,
                    hidden,
                    width,
                    head,
                    keys,
                    values,
                    text.start + offset,
                    scores,
                    out,
                )
            };
            if parallel {
                rows_of_text
                    .par_chunks_mut(hidden)
                    .enumerate()
                    .for_each_init(|| vec![0.0; text.len()], one_row);
            } else {
                let mut scores = vec![0.0; text.len()];
                for row in rows_of_text.chunks_mut(hidden).enumerate() {
                    one_row(&mut scores, row);
                }
            }
        }
    }
}

/// Row `row`'s output for head `head` over the text's rows, whose keys for that head are
/// `keys` (dimension-major: `width` runs of the text's length) and values `values` (the
/// text's length × `width`, row-major).
#[allow(clippy::too_many_arguments)]
fn attend_row(
    qkv: &[f32],
    hidden: usize,
    width: usize,
    head: usize,
    keys: &[f32],
    values: &[f32],
    row: usize,
    scores: &mut [f32],
    out: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, the one feature `attend_row_avx2` is compiled for.
        return unsafe {
            attend_row_avx2(qkv, hidden, width, head, keys, values, row, scores, out)
        };
    }
    attend_row_body(qkv, hidden, width, head, keys, values, row, scores, out)
}

/// The same body compiled with AVX2's eight lanes. No FMA: both versions give the same bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
fn attend_row_avx2(
    qkv: &[f32],
    hidden: usize,
    width: usize,
    head: usize,
    keys: &[f32],
    values: &[f32],
    row: usize,
    scores: &mut [f32],
    out: &mut [f32],
) {
    attend_row_body(qkv, hidden, width, head, keys, values, row, scores, out)
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn attend_row_body(
    qkv: &[f32],
    hidden: usize,
    width: usize,
    head: usize,
    keys: &[f32],
    values: &[f32],
    row: usize,
    scores: &mut [f32],
    out: &mut [f32],
) {
    let stride = 3 * hidden;
    let count = values.len() / width;
    let scores = &mut scores[..count];
    let at = head * width;
    let query = &qkv[row * stride + at..row * stride + at + width];
    // Scores a block at a time, each block's sums kept in registers over all dimensions:
    // sweeping all scores once a dimension instead loaded and stored every score `width`
    // times, and attention took a third of a document's time. Each score still sums its
    // dimensions in order from 0.0, so the bits are the same.
    let mut blocks = scores.chunks_exact_mut(BLOCK);
    for (index, block) in (&mut blocks).enumerate() {
        let mut sums = [0.0f32; BLOCK];
        for (&q, keys_of_dimension) in query.iter().zip(keys.chunks_exact(count)) {
            let keys = &keys_of_dimension[index * BLOCK..(index + 1) * BLOCK];
            for (sum, &key) in sums.iter_mut().zip(keys) {
                *sum += q * key;
            }
        }
        block.copy_from_slice(&sums);
    }
    let rest = blocks.into_remainder();
    let done = count - rest.len();
    rest.fill(0.0);
    for (&q, keys_of_dimension) in query.iter().zip(keys.chunks_exact(count)) {
        for (score, &key) in rest.iter_mut().zip(&keys_of_dimension[done..]) {
            *score += q * key;
        }
    }
    crate::kernels::softmax_rows(scores, count);
    // The weighted sum of the value rows, likewise a block of the head's columns at a time
    // in registers, each column summed over the rows in order.
    let head_out = &mut out[at..at + width];
    let mut columns = head_out.chunks_exact_mut(BLOCK);
    for (index, block) in (&mut columns).enumerate() {
        let mut sums = [0.0f32; BLOCK];
        for (&weight, value_row) in scores.iter().zip(values.chunks_exact(width)) {
            let value = &value_row[index * BLOCK..(index + 1) * BLOCK];
            for (sum, &v) in sums.iter_mut().zip(value) {
                *sum += weight * v;
            }
        }
        block.copy_from_slice(&sums);
    }
    let rest = columns.into_remainder();
    let done = width - rest.len();
    rest.fill(0.0);
    for (&weight, value_row) in scores.iter().zip(values.chunks_exact(width)) {
        let value = &value_row[done..];
        for (sum, &v) in rest.iter_mut().zip(value) {
            *sum += weight * v;
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

    #[test]
    fn blocked_sums_give_the_bits_of_plain_ones() {
        // Heads 40 wide (one block of columns and 8 left over) and texts of 1, 33 and 70
        // rows (no whole block of scores, one and a row, two and six), and an empty one.
        let (hidden, heads) = (80, 2);
        let texts = [0..1, 1..34, 34..104, 104..104];
        let rows = 104;
        let qkv: Vec<f32> = (0..rows * 3 * hidden)
            .map(|i| ((i * 7919) % 2003) as f32 / 2003.0 - 0.5)
            .collect();
        let mut context = vec![f32::NAN; rows * hidden];
        attend(&qkv, hidden, heads, &texts, &mut context);
        for text in &texts {
            let expected = plain(&qkv, hidden, heads, text.clone());
            let got = &context[text.start * hidden..text.end * hidden];
            assert!(
                got.iter()
                    .zip(&expected)
                    .all(|(g, e)| g.to_bits() == e.to_bits()),
                "text {text:?}"
            );
        }
    }

    #[test]
    fn parallel_rows_give_the_same_bits() {
        let (hidden, heads, rows) = (384, 12, 96);
        let qkv: Vec<f32> = (0..rows * 3 * hidden)
            .map(|i| ((i * 104_729) % 2003) as f32 / 2003.0 - 0.5)
            .collect();
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut context = vec![0.0; rows * hidden];
            let whole = 0..rows;
            pool.install(|| {
                attend(
                    &qkv,
                    hidden,
                    heads,
                    std::slice::from_ref(&whole),
                    &mut context,
                )
            });
            context
        };
        assert_eq!(run(2), run(1));
    }
}
