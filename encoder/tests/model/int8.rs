//! The opt-in int8 encoder (`Precision::Int8`): close to sentence-transformers, not equal
//! to it; a batch still equals its texts alone (each row's inputs get their own scale).

use std::sync::OnceLock;

use heddle_encoder::{Encoder, Precision};

use crate::common::{cosine, fixture, model_files, report, single_embeddings};

/// The lowest cosine to sentence-transformers the int8 encoder may give a fixture text.
/// Measured: min 0.9857 (the empty text), median 0.9965 over the 52 fixture texts; a
/// broken scale, a lost bias or a wrong panel order gives far less.
const MIN_COSINE: f64 = 0.98;

fn int8_encoder() -> &'static Encoder {
    static ENCODER: OnceLock<Encoder> = OnceLock::new();
    ENCODER.get_or_init(|| {
        Encoder::load_with(model_files(), Precision::Int8)
            .unwrap_or_else(|error| panic!("loading the int8 model: {error}"))
    })
}

fn int8_singles() -> &'static [Vec<f32>] {
    static SINGLES: OnceLock<Vec<Vec<f32>>> = OnceLock::new();
    SINGLES.get_or_init(|| {
        fixture()
            .sentences
            .iter()
            .map(|reference| int8_encoder().encode(&reference.text).unwrap())
            .collect()
    })
}

#[test]
fn int8_embeddings_stay_close_to_sentence_transformers() {
    let encoder = int8_encoder();
    assert_eq!(encoder.precision(), Precision::Int8);
    let mut similarities: Vec<(f64, &str)> = fixture()
        .sentences
        .iter()
        .zip(int8_singles())
        .map(|(reference, vector)| {
            (
                cosine(vector, &reference.embedding),
                reference.note.as_str(),
            )
        })
        .collect();
    similarities.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (worst, median) = (similarities[0], similarities[similarities.len() / 2].0);
    report(&format!(
        "int8: cosine to sentence-transformers over {} sentences: min {:.5} ({:?}), median {median:.5}",
        similarities.len(),
        worst.0,
        worst.1
    ));
    // Written so that a NaN fails too.
    assert!(worst.0 >= MIN_COSINE, "{:?}: cosine {}", worst.1, worst.0);
}

#[test]
fn int8_is_not_f32() {
    // The choice reaches the model: the int8 vectors differ from f32's (and so from
    // sentence-transformers' by more than f32 rounding) on most texts.
    let differing = int8_singles()
        .iter()
        .zip(single_embeddings())
        .filter(|(int8, f32)| cosine(int8, f32) < 0.9999)
        .count();
    assert!(
        differing * 2 > int8_singles().len(),
        "only {differing} of {} int8 vectors differ from f32",
        int8_singles().len()
    );
}

#[test]
fn an_int8_batch_equals_its_texts_alone() {
    let texts: Vec<&str> = fixture()
        .sentences
        .iter()
        .map(|s| s.text.as_str())
        .collect();
    let batched = int8_encoder().encode_batch(&texts).unwrap();
    for ((vector, single), reference) in
        batched.iter().zip(int8_singles()).zip(&fixture().sentences)
    {
        assert!(
            vector == single,
            "{:?}: batched differs from alone",
            reference.note
        );
    }
}
