//! The encoder: text → word pieces → BERT (CPU, f32) → mean over the text's word pieces →
//! unit length, the pipeline sentence-transformers runs for all-MiniLM-L6-v2.
//!
//! ```no_run
//! use heddle_encoder::{Encoder, ModelFiles};
//! let encoder = Encoder::load(&ModelFiles::fetch()?)?;
//! let vector = encoder.encode("mean pooling, then L2 normalisation")?;
//! assert_eq!(vector.len(), encoder.dim());
//! # Ok::<(), heddle_encoder::EncoderError>(())
//! ```

use candle_core::Device;
use candle_nn::VarBuilder;

use crate::bert::{Bert, BertConfig, WEIGHTS_DTYPE};
use crate::cache::ModelFiles;
use crate::error::{EncoderError, Result};
use crate::linear::Precision;
use crate::pipeline::{Pipeline, PipelineFiles};
use crate::pooling::{l2_normalize, mean_of_rows};
use crate::tokenize::{Pieces, TextTokenizer};

/// A loaded model. `Send + Sync`: one instance can serve many threads (`encode` takes
/// `&self` and allocates only the request's own tensors), or each thread can load its own.
pub struct Encoder {
    model: Bert,
    precision: Precision,
    tokenizer: TextTokenizer,
    pipeline: Pipeline,
}

impl Encoder {
    /// Loads the model from fetched files, checking each file's sha256 as it is read; its
    /// products in f32 (sentence-transformers' embeddings up to rounding).
    pub fn load(files: &ModelFiles) -> Result<Self> {
        Self::load_with(files, Precision::F32)
    }

    /// As [`Encoder::load`], with the linear layers' products in `precision`.
    pub fn load_with(files: &ModelFiles, precision: Precision) -> Result<Self> {
        let pin = files.pin().files;

        let bert_config = BertConfig::from_json(
            &files.read(&pin.bert_config)?,
            &files.path(&pin.bert_config),
        )?;

        let (modules, transformer, pooling) = (
            files.read(&pin.modules)?,
            files.read(&pin.sentence_bert_config)?,
            files.read(&pin.pooling_config)?,
        );
        let pipeline = Pipeline::read(
            PipelineFiles {
                modules: (&modules, &files.path(&pin.modules)),
                transformer: (&transformer, &files.path(&pin.sentence_bert_config)),
                pooling: (&pooling, &files.path(&pin.pooling_config)),
            },
            bert_config.hidden_size,
            bert_config.max_position_embeddings,
        )?;

        let tokenizer_path = files.path(&pin.tokenizer);
        let tokenizer = TextTokenizer::from_bytes(
            &files.read(&pin.tokenizer)?,
            &tokenizer_path,
            pipeline.max_seq_length,
        )?;

        let device = Device::Cpu;
        let weights_path = files.path(&pin.weights);
        let weights = files.read(&pin.weights)?;
        let weights_error = |source| EncoderError::Weights {
            path: weights_path.clone(),
            source,
        };
        // The verified bytes themselves are parsed (not a second read of the file), and
        // copied once into the model's tensors.
        let variables = VarBuilder::from_buffered_safetensors(weights, WEIGHTS_DTYPE, &device)
            .map_err(weights_error)?;
        let model = Bert::load(variables, &bert_config, precision).map_err(weights_error)?;

        Ok(Encoder {
            model,
            precision,
            tokenizer,
            pipeline,
        })
    }

    /// The arithmetic of the model's linear layers, as loaded.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// The embedding's width (384 for all-MiniLM-L6-v2).
    pub fn dim(&self) -> usize {
        self.pipeline.dimension
    }

    /// Word pieces kept per text, `[CLS]` and `[SEP]` included (256 for all-MiniLM-L6-v2).
    pub fn max_seq_length(&self) -> usize {
        self.pipeline.max_seq_length
    }

    /// The number of word pieces `text` is run with (`[CLS]` and `[SEP]` included, after
    /// truncation): what its encoding costs.
    pub fn token_count(&self, text: &str) -> Result<usize> {
        Ok(self.tokenizer.tokenize(text)?.ids.len())
    }

    /// The unit-length embedding of one text. An empty text is encoded as `[CLS]` `[SEP]`.
    pub fn encode(&self, text: &str) -> Result<Vec<f32>> {
        let mut vectors = self.encode_batch(&[text])?;
        Ok(vectors.pop().expect("one text gives one vector"))
    }

    /// The embeddings of several texts, run as one matrix of all their word pieces (no
    /// padding); each equals the text's [`Encoder::encode`] bit for bit.
    pub fn encode_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let pieces: Vec<Pieces> = texts
            .iter()
            .map(|text| self.tokenizer.tokenize(text))
            .collect::<Result<_>>()?;
        // The texts' rows one after another: no padding (bert.rs keeps each text's
        // attention to its own rows).
        let ids: Vec<u32> = pieces
            .iter()
            .flat_map(|piece| piece.ids.iter().copied())
            .collect();
        let segments: Vec<u32> = pieces
            .iter()
            .flat_map(|piece| piece.type_ids.iter().copied())
            .collect();
        let lengths: Vec<usize> = pieces.iter().map(|piece| piece.ids.len()).collect();
        let hidden = self
            .model
            .forward(&ids, &segments, &lengths)
            .map_err(|source| EncoderError::Inference { source })?;

        let dimension = self.dim();
        let mut start = 0;
        Ok(lengths
            .iter()
            .map(|&length| {
                let tokens = &hidden[start * dimension..(start + length) * dimension];
                start += length;
                let mut vector = mean_of_rows(tokens, dimension);
                l2_normalize(&mut vector);
                vector
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_encoder_can_be_shared_between_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<Encoder>();
    }
}
