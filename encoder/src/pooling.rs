//! From BERT's token vectors to one sentence vector: sentence-transformers' mean pooling
//! over the attention mask, then L2 normalisation.

/// The mean of `tokens`' rows of `dimension` values: the tokens the attention mask keeps,
/// which in a right-padded batch are the first rows of each text.
pub fn mean_of_rows(tokens: &[f32], dimension: usize) -> Vec<f32> {
    let mut sum = vec![0.0f32; dimension];
    let mut count = 0usize;
    for row in tokens.chunks_exact(dimension) {
        for (total, value) in sum.iter_mut().zip(row) {
            *total += value;
        }
        count += 1;
    }
    // sentence-transformers clamps the count at 1e-9; with [CLS] and [SEP] always present
    // it is never below 2, so the clamp only guards an empty slice.
    let count = (count as f32).max(1e-9);
    for value in &mut sum {
        *value /= count;
    }
    sum
}

/// `vector` scaled to unit length (`torch.nn.functional.normalize`: divided by
/// max(‖v‖, 1e-12), so a zero vector stays zero instead of becoming NaN).
pub fn l2_normalize(vector: &mut [f32]) {
    let norm = vector
        .iter()
        .map(|value| value * value)
        .sum::<f32>()
        .sqrt()
        .max(1e-12);
    for value in vector {
        *value /= norm;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_is_taken_per_dimension() {
        let tokens = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(mean_of_rows(&tokens, 2), vec![2.0, 3.0]);
        assert_eq!(mean_of_rows(&[], 2), vec![0.0, 0.0]);
    }

    #[test]
    fn normalized_vectors_have_unit_length_and_zero_stays_zero() {
        let mut vector = [3.0, 4.0];
        l2_normalize(&mut vector);
        assert_eq!(vector, [0.6, 0.8]);
        let mut zero = [0.0, 0.0];
        l2_normalize(&mut zero);
        assert_eq!(zero, [0.0, 0.0]);
    }
}
