//! A padded batch gives each text the embedding it gets alone.

use crate::common::{Reference, cosine, encoder, fixture, report, single_embeddings};

/// Padding changes only the order of float additions, not the result.
const MAX_DISTANCE: f64 = 1e-5;

/// Encodes the fixture sentences that `chosen` picks as one batch and compares each with
/// its single encoding; returns the largest 1 - cosine.
fn batch_against_singles(chosen: impl Fn(&Reference) -> bool) -> f64 {
    let (fixture, singles) = (fixture(), single_embeddings());
    let picked: Vec<usize> = (0..fixture.sentences.len())
        .filter(|&index| chosen(&fixture.sentences[index]))
        .collect();
    let texts: Vec<&str> = picked
        .iter()
        .map(|&index| fixture.sentences[index].text.as_str())
        .collect();
    let batched = encoder().encode_batch(&texts).unwrap();
    assert_eq!(batched.len(), texts.len());
    let mut worst = 0.0f64;
    for (&index, vector) in picked.iter().zip(&batched) {
        let distance = 1.0 - cosine(&singles[index], vector);
        worst = worst.max(distance);
        assert!(
            distance <= MAX_DISTANCE,
            "{:?}: 1 - cosine = {distance:e}",
            fixture.sentences[index].note
        );
    }
    worst
}

#[test]
fn a_batch_of_short_texts_equals_single_texts() {
    // 45 texts of 2 to 49 word pieces: padding of every length from 0 to 47.
    let worst = batch_against_singles(|reference| reference.tokens < 64);
    report(&format!(
        "batch of short texts: largest 1 - cosine against single texts {worst:.1e}"
    ));
}

#[test]
fn a_batch_mixing_empty_and_truncated_texts_equals_single_texts() {
    // [CLS] [SEP] padded to 256 beside texts cut to 256 and one of exactly 255.
    let worst = batch_against_singles(|reference| {
        reference.tokens <= 3
            || reference.note.starts_with("long English")
            || reference.note.starts_with("255")
    });
    report(&format!(
        "batch of empty and long texts: largest 1 - cosine against single texts {worst:.1e}"
    ));
}

#[test]
fn an_empty_batch_is_empty() {
    assert!(encoder().encode_batch(&[]).unwrap().is_empty());
}

#[test]
fn one_encoder_serves_several_threads() {
    let encoder = encoder();
    let alone = encoder.encode("shared between threads").unwrap();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|_| scope.spawn(|| encoder.encode("shared between threads").unwrap()))
            .collect();
        for handle in handles {
            assert!(1.0 - cosine(&alone, &handle.join().unwrap()) <= MAX_DISTANCE);
        }
    });
}
