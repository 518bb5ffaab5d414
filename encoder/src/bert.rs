//! BERT's encoder, as Hugging Face's `BertModel` computes it (without the pooler, which
//! sentence-transformers does not use), on candle's tensors and layers.
//!
//! ```text
//! ids, segment ids ─ word + position + segment embeddings ─ LayerNorm ─┐
//!   ┌──────────────────────────────────────────────────────────────────┘
//!   └─ × num_hidden_layers:  x ← LayerNorm(x + Dense(SelfAttention(x)))
//!                            x ← LayerNorm(x + Dense(GELU(Dense(x))))  ─ token vectors
//! ```
//!
//! Written here on candle-nn's building blocks rather than taken from candle-transformers:
//! that crate holds a hundred other models and took longer to compile than all the rest of
//! the encoder's dependencies but candle-core (docs/DECISIONS.md, "The encoder").

use std::path::Path;

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder};
use serde::Deserialize;

use crate::error::{EncoderError, Result};
use crate::kernels;

/// The fields of Hugging Face's BERT config.json this encoder reads.
#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    /// Always "bert" for this architecture.
    pub model_type: String,
    /// Word pieces in the vocabulary.
    pub vocab_size: usize,
    /// Width of every token vector.
    pub hidden_size: usize,
    /// Transformer layers.
    pub num_hidden_layers: usize,
    /// Attention heads per layer; `hidden_size` is split evenly between them.
    pub num_attention_heads: usize,
    /// Width of the feed-forward layer.
    pub intermediate_size: usize,
    /// The feed-forward activation ("gelu": the exact, erf-based GELU).
    pub hidden_act: String,
    /// Longest input the position embeddings cover.
    pub max_position_embeddings: usize,
    /// Segment ids (2: sentence A and B).
    pub type_vocab_size: usize,
    /// LayerNorm's epsilon.
    pub layer_norm_eps: f64,
    /// How positions are encoded; only learned absolute positions are implemented.
    #[serde(default = "absolute_positions")]
    pub position_embedding_type: String,
}

fn absolute_positions() -> String {
    "absolute".to_string()
}

impl BertConfig {
    /// Parses config.json (read from `path`) and refuses what this encoder does not run.
    pub fn from_json(bytes: &[u8], path: &Path) -> Result<Self> {
        let config: BertConfig =
            serde_json::from_slice(bytes).map_err(|source| EncoderError::Config {
                path: path.to_path_buf(),
                what: "BERT config.json",
                source,
            })?;
        let unsupported = |found: String, supported: &'static str| {
            Err(EncoderError::Unsupported {
                path: path.to_path_buf(),
                found,
                supported,
            })
        };
        if config.model_type != "bert" {
            return unsupported(
                format!("model_type {:?}", config.model_type),
                "model_type \"bert\"",
            );
        }
        if config.hidden_act != "gelu" {
            return unsupported(
                format!("hidden_act {:?}", config.hidden_act),
                "hidden_act \"gelu\"",
            );
        }
        if config.position_embedding_type != "absolute" {
            return unsupported(
                format!(
                    "position_embedding_type {:?}",
                    config.position_embedding_type
                ),
                "position_embedding_type \"absolute\"",
            );
        }
        if config.num_attention_heads == 0
            || !config
                .hidden_size
                .is_multiple_of(config.num_attention_heads)
        {
            return unsupported(
                format!(
                    "{} heads for a hidden size of {}",
                    config.num_attention_heads, config.hidden_size
                ),
                "a hidden size divisible by the number of heads",
            );
        }
        Ok(config)
    }
}

/// The BERT encoder with its weights.
pub struct Bert {
    word_embeddings: Embedding,
    position_embeddings: Embedding,
    segment_embeddings: Embedding,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    device: Device,
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    heads: usize,
    attention_output: Linear,
    attention_norm: LayerNorm,
    feed_forward_in: Linear,
    feed_forward_out: Linear,
    output_norm: LayerNorm,
}

impl Bert {
    /// Builds the encoder from weights named as Hugging Face's `BertModel` names them.
    pub fn load(weights: VarBuilder, config: &BertConfig) -> candle_core::Result<Self> {
        let hidden = config.hidden_size;
        let norm =
            |weights: VarBuilder| candle_nn::layer_norm(hidden, config.layer_norm_eps, weights);
        let embeddings = weights.pp("embeddings");
        let layers = (0..config.num_hidden_layers)
            .map(|index| {
                let layer = weights.pp(format!("encoder.layer.{index}"));
                let attention = layer.pp("attention");
                Ok(Layer {
                    query: candle_nn::linear(hidden, hidden, attention.pp("self.query"))?,
                    key: candle_nn::linear(hidden, hidden, attention.pp("self.key"))?,
                    value: candle_nn::linear(hidden, hidden, attention.pp("self.value"))?,
                    heads: config.num_attention_heads,
                    attention_output: candle_nn::linear(
                        hidden,
                        hidden,
                        attention.pp("output.dense"),
                    )?,
                    attention_norm: norm(attention.pp("output.LayerNorm"))?,
                    feed_forward_in: candle_nn::linear(
                        hidden,
                        config.intermediate_size,
                        layer.pp("intermediate.dense"),
                    )?,
                    feed_forward_out: candle_nn::linear(
                        config.intermediate_size,
                        hidden,
                        layer.pp("output.dense"),
                    )?,
                    output_norm: norm(layer.pp("output.LayerNorm"))?,
                })
            })
            .collect::<candle_core::Result<_>>()?;
        Ok(Bert {
            word_embeddings: candle_nn::embedding(
                config.vocab_size,
                hidden,
                embeddings.pp("word_embeddings"),
            )?,
            position_embeddings: candle_nn::embedding(
                config.max_position_embeddings,
                hidden,
                embeddings.pp("position_embeddings"),
            )?,
            segment_embeddings: candle_nn::embedding(
                config.type_vocab_size,
                hidden,
                embeddings.pp("token_type_embeddings"),
            )?,
            embedding_norm: norm(embeddings.pp("LayerNorm"))?,
            layers,
            device: weights.device().clone(),
        })
    }

    /// The token vectors (texts × positions × hidden) of right-padded `ids` and `segments`
    /// (texts × positions), where text `i` has `lengths[i]` real tokens; padding positions
    /// are hidden from attention, and their own vectors are meaningless.
    pub fn forward(
        &self,
        ids: &Tensor,
        segments: &Tensor,
        lengths: &[usize],
    ) -> candle_core::Result<Tensor> {
        let (texts, positions) = ids.dims2()?;
        let position_ids = Tensor::arange(0u32, positions as u32, &self.device)?;
        let embedded = (self.word_embeddings.forward(ids)?
            + self.segment_embeddings.forward(segments)?)?
        .broadcast_add(&self.position_embeddings.forward(&position_ids)?)?;
        let mut hidden = self.embedding_norm.forward(&embedded)?;

        let padding_bias = if lengths.iter().all(|&length| length == positions) {
            None
        } else {
            Some(padding_bias(lengths, texts, positions, &self.device)?)
        };
        for layer in &self.layers {
            hidden = layer.forward(&hidden, padding_bias.as_ref())?;
        }
        Ok(hidden)
    }
}

/// Added to the attention scores: 0 for real tokens, the lowest f32 for padding, so that
/// softmax gives padding no weight (Hugging Face adds `torch.finfo(float32).min` likewise).
/// Shape texts × 1 × 1 × positions, broadcast over heads and query positions.
fn padding_bias(
    lengths: &[usize],
    texts: usize,
    positions: usize,
    device: &Device,
) -> candle_core::Result<Tensor> {
    let mut bias = vec![0f32; texts * positions];
    for (row, &length) in bias.chunks_exact_mut(positions).zip(lengths) {
        row[length.min(positions)..].fill(f32::MIN);
    }
    Tensor::from_vec(bias, (texts, 1, 1, positions), device)
}

impl Layer {
    fn forward(
        &self,
        hidden: &Tensor,
        padding_bias: Option<&Tensor>,
    ) -> candle_core::Result<Tensor> {
        let attended = self
            .attention_output
            .forward(&self.self_attention(hidden, padding_bias)?)?;
        let hidden = self.attention_norm.forward(&(attended + hidden)?)?;
        let expanded = self.feed_forward_in.forward(&hidden)?;
        // A fresh result of the linear layer, owned here alone: safe to change in place.
        kernels::gelu_erf_in_place(&expanded)?;
        self.output_norm
            .forward(&(self.feed_forward_out.forward(&expanded)? + hidden)?)
    }

    /// Multi-head scaled dot-product attention of every position over every real one.
    fn self_attention(
        &self,
        hidden: &Tensor,
        padding_bias: Option<&Tensor>,
    ) -> candle_core::Result<Tensor> {
        let (texts, positions, width) = hidden.dims3()?;
        let head_width = width / self.heads;
        // texts × positions × width → texts × heads × positions × head_width
        let split_heads = |projected: Tensor| {
            projected
                .reshape((texts, positions, self.heads, head_width))?
                .transpose(1, 2)?
                .contiguous()
        };
        // Scaling the queries rather than the scores: the same product, fewer multiplications.
        let query =
            split_heads((self.query.forward(hidden)? * (1.0 / (head_width as f64).sqrt()))?)?;
        let key = split_heads(self.key.forward(hidden)?)?;
        let value = split_heads(self.value.forward(hidden)?)?;
        let scores = query.matmul(&key.t()?)?;
        let scores = match padding_bias {
            Some(bias) => scores.broadcast_add(bias)?,
            None => scores,
        };
        // A fresh result (the product, or the sum with the bias), owned here alone.
        kernels::softmax_last_dim_in_place(&scores)?;
        let weights = scores;
        // texts × heads × positions × head_width → texts × positions × width
        weights
            .matmul(&value)?
            .transpose(1, 2)?
            .reshape((texts, positions, width))
    }
}

/// The dtype every weight is loaded in: the package ships f32, and the fidelity bar is
/// set against f32 PyTorch.
pub const WEIGHTS_DTYPE: DType = DType::F32;
