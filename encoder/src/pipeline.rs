//! sentence-transformers' description of the pipeline around BERT, read from the package
//! and checked against what this crate implements: Transformer → mean Pooling → Normalize,
//! with the Transformer's `max_seq_length`.
//!
//! A model that asks for anything else (CLS pooling, no normalisation, lower-casing done by
//! sentence-transformers) is refused rather than run with silently different embeddings.

use std::path::Path;

use serde::Deserialize;

use crate::error::{EncoderError, Result};

/// What the encoder must do around BERT, as the package configures it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pipeline {
    /// Word pieces kept per text, `[CLS]` and `[SEP]` included; the rest is cut off.
    pub max_seq_length: usize,
    /// The width of the pooled embedding.
    pub dimension: usize,
}

#[derive(Deserialize)]
struct ModuleEntry {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct TransformerSettings {
    max_seq_length: Option<usize>,
    #[serde(default)]
    do_lower_case: bool,
}

/// sentence-transformers' Pooling options; absent ones are off, as in its own loader.
#[derive(Deserialize)]
struct PoolingSettings {
    word_embedding_dimension: usize,
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
    #[serde(default)]
    pooling_mode_weightedmean_tokens: bool,
    #[serde(default)]
    pooling_mode_lasttoken: bool,
}

/// The module sequence this crate implements, by the last part of each module's type name
/// (`sentence_transformers.models.Pooling` → `Pooling`).
const SUPPORTED_MODULES: [&str; 3] = ["Transformer", "Pooling", "Normalize"];

/// The files [`Pipeline::read`] needs, as bytes already verified, with their paths for
/// error messages.
pub struct PipelineFiles<'a> {
    /// modules.json.
    pub modules: (&'a [u8], &'a Path),
    /// sentence_bert_config.json.
    pub transformer: (&'a [u8], &'a Path),
    /// 1_Pooling/config.json.
    pub pooling: (&'a [u8], &'a Path),
}

impl Pipeline {
    /// Reads and checks the three sentence-transformers files. `hidden_size` and
    /// `max_position_embeddings` come from BERT's own config: the pooled width must equal
    /// the former, and no text may be longer than the latter.
    pub fn read(
        files: PipelineFiles<'_>,
        hidden_size: usize,
        max_position_embeddings: usize,
    ) -> Result<Self> {
        let (modules_bytes, modules_path) = files.modules;
        let modules: Vec<ModuleEntry> = parse(
            modules_bytes,
            modules_path,
            "sentence-transformers modules.json",
        )?;
        let kinds: Vec<&str> = modules
            .iter()
            .map(|module| module.kind.rsplit('.').next().unwrap_or(&module.kind))
            .collect();
        if kinds != SUPPORTED_MODULES {
            return Err(EncoderError::Unsupported {
                path: modules_path.to_path_buf(),
                found: format!("the modules {kinds:?}"),
                supported: "Transformer, Pooling, Normalize",
            });
        }

        let (transformer_bytes, transformer_path) = files.transformer;
        let transformer: TransformerSettings = parse(
            transformer_bytes,
            transformer_path,
            "sentence-transformers sentence_bert_config.json",
        )?;
        if transformer.do_lower_case {
            return Err(EncoderError::Unsupported {
                path: transformer_path.to_path_buf(),
                found: "do_lower_case = true".to_string(),
                supported: "do_lower_case = false (lower-casing left to the tokenizer)",
            });
        }
        // sentence-transformers falls back on the model's own limit when the setting is
        // absent; for BERT that is the number of position embeddings.
        let max_seq_length = transformer
            .max_seq_length
            .unwrap_or(max_position_embeddings);
        if max_seq_length < 2 || max_seq_length > max_position_embeddings {
            return Err(EncoderError::Unsupported {
                path: transformer_path.to_path_buf(),
                found: format!("max_seq_length = {max_seq_length}"),
                supported: "2 ≤ max_seq_length ≤ the model's max_position_embeddings",
            });
        }

        let (pooling_bytes, pooling_path) = files.pooling;
        let pooling: PoolingSettings = parse(
            pooling_bytes,
            pooling_path,
            "sentence-transformers pooling config",
        )?;
        let only_mean = pooling.pooling_mode_mean_tokens
            && !pooling.pooling_mode_cls_token
            && !pooling.pooling_mode_max_tokens
            && !pooling.pooling_mode_mean_sqrt_len_tokens
            && !pooling.pooling_mode_weightedmean_tokens
            && !pooling.pooling_mode_lasttoken;
        if !only_mean {
            return Err(EncoderError::Unsupported {
                path: pooling_path.to_path_buf(),
                found: "a pooling other than the mean of the tokens alone".to_string(),
                supported: "mean pooling over the attention mask",
            });
        }
        if pooling.word_embedding_dimension != hidden_size {
            return Err(EncoderError::Unsupported {
                path: pooling_path.to_path_buf(),
                found: format!(
                    "word_embedding_dimension = {} for a BERT of hidden size {hidden_size}",
                    pooling.word_embedding_dimension
                ),
                supported: "pooling over BERT's own hidden size",
            });
        }

        Ok(Pipeline {
            max_seq_length,
            dimension: hidden_size,
        })
    }
}

fn parse<T: for<'de> Deserialize<'de>>(bytes: &[u8], path: &Path, what: &'static str) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|source| EncoderError::Config {
        path: path.to_path_buf(),
        what,
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULES: &str = r#"[
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}
    ]"#;
    const TRANSFORMER: &str = r#"{"max_seq_length": 256, "do_lower_case": false}"#;
    const POOLING: &str = r#"{"word_embedding_dimension": 384, "pooling_mode_cls_token": false,
        "pooling_mode_mean_tokens": true, "pooling_mode_max_tokens": false,
        "pooling_mode_mean_sqrt_len_tokens": false}"#;

    fn read(modules: &str, transformer: &str, pooling: &str) -> Result<Pipeline> {
        let path = Path::new("x.json");
        Pipeline::read(
            PipelineFiles {
                modules: (modules.as_bytes(), path),
                transformer: (transformer.as_bytes(), path),
                pooling: (pooling.as_bytes(), path),
            },
            384,
            512,
        )
    }

    #[test]
    fn minilm_configuration_is_accepted() {
        let pipeline = read(MODULES, TRANSFORMER, POOLING).unwrap();
        assert_eq!(
            pipeline,
            Pipeline {
                max_seq_length: 256,
                dimension: 384
            }
        );
    }

    #[test]
    fn absent_max_seq_length_falls_back_on_position_embeddings() {
        let pipeline = read(MODULES, r#"{"do_lower_case": false}"#, POOLING).unwrap();
        assert_eq!(pipeline.max_seq_length, 512);
    }

    #[test]
    fn other_pipelines_are_refused() {
        let without_normalize = MODULES.replace(
            r#",
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}"#,
            "",
        );
        assert!(matches!(
            read(&without_normalize, TRANSFORMER, POOLING),
            Err(EncoderError::Unsupported { .. })
        ));
        let cls = POOLING.replace(
            r#""pooling_mode_cls_token": false"#,
            r#""pooling_mode_cls_token": true"#,
        );
        assert!(matches!(
            read(MODULES, TRANSFORMER, &cls),
            Err(EncoderError::Unsupported { .. })
        ));
        let lower = r#"{"max_seq_length": 256, "do_lower_case": true}"#;
        assert!(matches!(
            read(MODULES, lower, POOLING),
            Err(EncoderError::Unsupported { .. })
        ));
        let too_long = r#"{"max_seq_length": 1024}"#;
        assert!(matches!(
            read(MODULES, too_long, POOLING),
            Err(EncoderError::Unsupported { .. })
        ));
        assert!(matches!(
            read("{", TRANSFORMER, POOLING),
            Err(EncoderError::Config { .. })
        ));
    }
}
