//! A batch gives each text the embedding it gets alone, bit for bit: its texts run as one
//! matrix of their word pieces without padding, each attending to its own rows, and a row's
//! products do not depend on the rows beside it.

use crate::common::{Reference, cosine, encoder, fixture, report, single_embeddings};

/// Encodes the fixture sentences that `chosen` picks as one batch and compares each with
/// its single encoding, which it must equal exactly; returns the largest 1 - cosine (0).
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
            vector == &singles[index],
            "{:?}: batched differs from alone (1 - cosine = {distance:e})",
            fixture.sentences[index].note
        );
    }
    worst
}

#[test]
fn a_batch_of_short_texts_equals_single_texts() {
    // 45 texts of 2 to 49 word pieces, of many lengths side by side.
    let worst = batch_against_singles(|reference| reference.tokens < 64);
    report(&format!(
        "batch of short texts: largest 1 - cosine against single texts {worst:.1e}"
    ));
}

#[test]
fn a_batch_mixing_empty_and_truncated_texts_equals_single_texts() {
    // [CLS] [SEP] beside texts cut to 256 and one of exactly 255.
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
            assert_eq!(handle.join().unwrap(), alone);
        }
    });
}
