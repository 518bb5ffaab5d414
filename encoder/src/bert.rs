//! BERT's encoder, as Hugging Face's `BertModel` computes it (without the pooler, which
//! sentence-transformers does not use), in plain f32 arithmetic on row-major buffers: the
//! matrix products against weights packed at load (`gemm`), attention row by row
//! (`attention`), LayerNorm (`norm`), GELU (`kernels`). candle only reads the weights.
//!
//! ```text
//! ids, segment ids ─ word + position + segment embeddings ─ LayerNorm ─┐
//!   ┌──────────────────────────────────────────────────────────────────┘
//!   └─ × num_hidden_layers:  x ← LayerNorm(x + Dense(SelfAttention(x)))
//!                            x ← LayerNorm(x + Dense(GELU(Dense(x))))  ─ token vectors
//! ```
//!
//! Texts run together as one matrix of their rows, one after another without padding: every
//! step but attention works row by row, and attention keeps each text to its own rows. So a
//! batch costs what its texts' word pieces cost, and each text gets the bits it gets alone.

use std::path::Path;

use std::ops::Range;

use candle_core::DType;
use candle_nn::VarBuilder;
use serde::Deserialize;

use crate::attention::attend;
use crate::error::{EncoderError, Result};
use crate::gemm::{Epilogue, Kernel};
use crate::linear::{Linear, Precision};
use crate::norm::LayerNorm;

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
    hidden: usize,
    heads: usize,
    /// vocabulary × hidden, max positions × hidden, segment kinds × hidden.
    word_embeddings: Vec<f32>,
    position_embeddings: Vec<f32>,
    segment_embeddings: Vec<f32>,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    kernel: Kernel,
}

struct Layer {
    /// Query (scaled by 1/√head_width), key and value projections as one product.
    query_key_value: Linear,
    attention_output: Linear,
    attention_norm: LayerNorm,
    feed_forward_in: Linear,
    feed_forward_out: Linear,
    output_norm: LayerNorm,
}

/// A tensor of `shape` from the weights, as a flat row-major vector.
fn read(weights: &VarBuilder, shape: &[usize], name: &str) -> candle_core::Result<Vec<f32>> {
    weights.get(shape, name)?.flatten_all()?.to_vec1::<f32>()
}

fn layer_norm(weights: VarBuilder, hidden: usize, eps: f64) -> candle_core::Result<LayerNorm> {
    Ok(LayerNorm::new(
        read(&weights, &[hidden], "weight")?,
        read(&weights, &[hidden], "bias")?,
        eps as f32,
    ))
}

fn linear(
    weights: VarBuilder,
    inputs: usize,
    outputs: usize,
    precision: Precision,
) -> candle_core::Result<Linear> {
    Ok(Linear::new(
        &read(&weights, &[outputs, inputs], "weight")?,
        &read(&weights, &[outputs], "bias")?,
        inputs,
        outputs,
        precision,
    ))
}

impl Bert {
    /// Builds the encoder from weights named as Hugging Face's `BertModel` names them,
    /// packing every linear layer for `precision`'s kernels once.
    pub fn load(
        weights: VarBuilder,
        config: &BertConfig,
        precision: Precision,
    ) -> candle_core::Result<Self> {
        let hidden = config.hidden_size;
        let eps = config.layer_norm_eps;
        let head_width = hidden / config.num_attention_heads;
        // Scaling the queries (weights and bias) rather than every score: the same scores,
        // no multiplication at run time.
        let query_scale = 1.0 / (head_width as f32).sqrt();
        let embeddings = weights.pp("embeddings");
        let layers = (0..config.num_hidden_layers)
            .map(|index| {
                let layer = weights.pp(format!("encoder.layer.{index}"));
                let attention = layer.pp("attention");
                let mut fused_weight = Vec::with_capacity(3 * hidden * hidden);
                let mut fused_bias = Vec::with_capacity(3 * hidden);
                for (name, scale) in [
                    ("self.query", query_scale),
                    ("self.key", 1.0),
                    ("self.value", 1.0),
                ] {
                    let part = attention.pp(name);
                    fused_weight.extend(
                        read(&part, &[hidden, hidden], "weight")?
                            .iter()
                            .map(|w| w * scale),
                    );
                    fused_bias.extend(read(&part, &[hidden], "bias")?.iter().map(|b| b * scale));
                }
                Ok(Layer {
                    // Quantized per output column, the query's folded-in scale changes
                    // only its columns' scales.
                    query_key_value: Linear::new(
                        &fused_weight,
                        &fused_bias,
                        hidden,
                        3 * hidden,
                        precision,
                    ),
                    attention_output: linear(
                        attention.pp("output.dense"),
                        hidden,
                        hidden,
                        precision,
                    )?,
                    attention_norm: layer_norm(attention.pp("output.LayerNorm"), hidden, eps)?,
                    feed_forward_in: linear(
                        layer.pp("intermediate.dense"),
                        hidden,
                        config.intermediate_size,
                        precision,
                    )?,
                    feed_forward_out: linear(
                        layer.pp("output.dense"),
                        config.intermediate_size,
                        hidden,
                        precision,
                    )?,
                    output_norm: layer_norm(layer.pp("output.LayerNorm"), hidden, eps)?,
                })
            })
            .collect::<candle_core::Result<_>>()?;
        Ok(Bert {
            hidden,
            heads: config.num_attention_heads,
            word_embeddings: read(
                &embeddings.pp("word_embeddings"),
                &[config.vocab_size, hidden],
                "weight",
            )?,
            position_embeddings: read(
                &embeddings.pp("position_embeddings"),
                &[config.max_position_embeddings, hidden],
                "weight",
            )?,
            segment_embeddings: read(
                &embeddings.pp("token_type_embeddings"),
                &[config.type_vocab_size, hidden],
                "weight",
            )?,
            embedding_norm: layer_norm(embeddings.pp("LayerNorm"), hidden, eps)?,
            layers,
            kernel: Kernel::best(),
        })
    }

    /// Row `index` of an embedding table, or an error naming `what` is out of range.
    fn embedding<'a>(
        &self,
        table: &'a [f32],
        index: u32,
        what: &str,
    ) -> candle_core::Result<&'a [f32]> {
        let hidden = self.hidden;
        table
            .get(index as usize * hidden..(index as usize + 1) * hidden)
            .ok_or_else(|| {
                candle_core::Error::Msg(format!("{what} {index} is past the embeddings"))
            })
    }

    /// The token vectors (rows × hidden, row-major) of texts given as their word-piece
    /// `ids` and `segments`, one text after another, text `i` being `lengths[i]` rows long.
    /// Fails on an id, segment or length the embeddings do not cover.
    pub fn forward(
        &self,
        ids: &[u32],
        segments: &[u32],
        lengths: &[usize],
    ) -> candle_core::Result<Vec<f32>> {
        let hidden = self.hidden;
        let rows = ids.len();
        if segments.len() != rows || lengths.iter().sum::<usize>() != rows {
            candle_core::bail!(
                "{rows} ids, {} segment ids and lengths summing to {}",
                segments.len(),
                lengths.iter().sum::<usize>()
            );
        }
        let texts: Vec<Range<usize>> = lengths
            .iter()
            .scan(0, |start, &length| {
                *start += length;
                Some(*start - length..*start)
            })
            .collect();

        let mut state = vec![0.0f32; rows * hidden];
        let positions = self.position_embeddings.len() / hidden;
        for text in &texts {
            if text.len() > positions {
                candle_core::bail!(
                    "a text of {} word pieces, past the {positions} positions",
                    text.len()
                );
            }
            for (position, row) in text.clone().enumerate() {
                let word = self.embedding(&self.word_embeddings, ids[row], "word-piece id")?;
                let segment =
                    self.embedding(&self.segment_embeddings, segments[row], "segment id")?;
                let place = &self.position_embeddings[position * hidden..(position + 1) * hidden];
                let out = &mut state[row * hidden..(row + 1) * hidden];
                for (((value, &w), &s), &p) in out.iter_mut().zip(word).zip(segment).zip(place) {
                    *value = w + s + p;
                }
            }
        }
        self.embedding_norm.apply(&mut state);

        let intermediate = self
            .layers
            .first()
            .map_or(0, |layer| layer.feed_forward_in.outputs());
        let mut scratch = Scratch {
            query_key_value: vec![0.0; rows * 3 * hidden],
            context: vec![0.0; rows * hidden],
            projected: vec![0.0; rows * hidden],
            expanded: vec![0.0; rows * intermediate],
        };
        for layer in &self.layers {
            layer.forward(&mut state, &texts, self.heads, self.kernel, &mut scratch);
        }
        Ok(state)
    }
}

/// A forward pass's intermediate matrices, allocated once for all layers.
struct Scratch {
    query_key_value: Vec<f32>,
    context: Vec<f32>,
    projected: Vec<f32>,
    expanded: Vec<f32>,
}

impl Layer {
    /// `state ← LayerNorm(s + FeedForward(s))` with `s = LayerNorm(state + Attention(state))`.
    fn forward(
        &self,
        state: &mut [f32],
        texts: &[Range<usize>],
        heads: usize,
        kernel: Kernel,
        scratch: &mut Scratch,
    ) {
        let hidden = self.attention_output.outputs();
        self.query_key_value
            .forward(state, &mut scratch.query_key_value, Epilogue::None, kernel);
        attend(
            &scratch.query_key_value,
            hidden,
            heads,
            texts,
            &mut scratch.context,
        );
        self.attention_output.forward(
            &scratch.context,
            &mut scratch.projected,
            Epilogue::None,
            kernel,
        );
        self.attention_norm.add_and_apply(state, &scratch.projected);
        self.feed_forward_in
            .forward(state, &mut scratch.expanded, Epilogue::Gelu, kernel);
        self.feed_forward_out.forward(
            &scratch.expanded,
            &mut scratch.projected,
            Epilogue::None,
            kernel,
        );
        self.output_norm.add_and_apply(state, &scratch.projected);
    }
}

/// The dtype every weight is loaded in: the package ships f32, and the fidelity bar is
/// set against f32 PyTorch.
pub const WEIGHTS_DTYPE: DType = DType::F32;
