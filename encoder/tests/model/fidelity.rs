//! Every fixture sentence encodes to sentence-transformers' own embedding, cosine ≥ 0.9999.

use heddle_encoder::pin::ALL_MINILM_L6_V2;

use crate::common::{cosine, encoder, fixture, report, single_embeddings};

/// The bar issue 16 sets: the Rust encoder may differ from the reference only by float
/// rounding, never by a different tokenization, truncation or pooling.
const MIN_COSINE: f64 = 0.9999;

#[test]
fn the_fixture_was_made_from_the_pinned_wheel() {
    let fixture = fixture();
    assert_eq!(fixture.model.version, ALL_MINILM_L6_V2.version);
    assert_eq!(fixture.model.wheel_sha256, ALL_MINILM_L6_V2.wheel_sha256);
    assert_eq!(fixture.model.max_seq_length, encoder().max_seq_length());
    assert!(
        fixture.sentences.len() >= 50,
        "the fixture should hold ~50 sentences"
    );
}

#[test]
fn every_sentence_matches_sentence_transformers() {
    let (fixture, encoder) = (fixture(), encoder());
    let mut failures = Vec::new();
    let mut worst = (f64::INFINITY, "");
    for (reference, vector) in fixture.sentences.iter().zip(single_embeddings()) {
        let tokens = encoder.token_count(&reference.text).unwrap();
        assert_eq!(vector.len(), encoder.dim());
        let similarity = cosine(vector, &reference.embedding);
        if similarity < worst.0 {
            worst = (similarity, &reference.note);
        }
        // Written so that a NaN similarity fails too.
        let close_enough = similarity >= MIN_COSINE;
        if tokens != reference.tokens || !close_enough {
            failures.push(format!(
                "  {:?} ({}): cosine {similarity:.7}, {tokens} word pieces (sentence-transformers: {})",
                reference.text.chars().take(60).collect::<String>(),
                reference.note,
                reference.tokens
            ));
        }
    }
    report(&format!(
        "fidelity: {} sentences, minimum cosine {:.9} (1 - cosine = {:.1e}, {:?}); reference made with {}",
        fixture.sentences.len(),
        worst.0,
        1.0 - worst.0,
        worst.1,
        fixture.versions
    ));
    assert!(
        failures.is_empty(),
        "{} sentences differ from the reference:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_embedding_has_unit_length() {
    for (reference, vector) in fixture().sentences.iter().zip(single_embeddings()) {
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!(
            (norm - 1.0).abs() < 1e-5,
            "{:?}: norm {norm}",
            reference.note
        );
    }
}
