//! A linear layer in the arithmetic chosen at load: f32 (`gemm`, the default and the
//! faithful one) or int8 (`quantized`, opt-in).

use crate::gemm::{Epilogue, Kernel, PackedLinear};
use crate::quantized::QuantizedLinear;

/// The arithmetic of the model's matrix products against its weights (query/key/value,
/// attention output, feed-forward in and out, in every layer). Attention itself,
/// LayerNorm, the embeddings and pooling run in f32 either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    /// f32 throughout: sentence-transformers' embeddings up to rounding (cosine ≥ 0.9999).
    #[default]
    F32,
    /// int8 weights (a scale per output column, fixed at load) times int8 inputs (a scale
    /// per row, taken at each product), summed in i32. Faster, and not the same embeddings:
    /// docs/RESULTS.md, "An opt-in int8 encoder", measures how far they move.
    Int8,
}

impl Precision {
    /// "f32" or "int8", as reports name it.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Int8 => "int8",
        }
    }
}

/// One linear layer, packed for its precision's kernels.
pub enum Linear {
    /// f32 weights in `gemm`'s panels.
    F32(PackedLinear),
    /// int8 weights with a scale a column (`quantized`).
    Int8(QuantizedLinear),
}

impl Linear {
    /// Packs `weight` (`outputs × inputs`, row-major) and `bias` for `precision`.
    pub fn new(
        weight: &[f32],
        bias: &[f32],
        inputs: usize,
        outputs: usize,
        precision: Precision,
    ) -> Self {
        match precision {
            Precision::F32 => Linear::F32(PackedLinear::new(weight, bias, inputs, outputs)),
            Precision::Int8 => Linear::Int8(QuantizedLinear::new(weight, bias, inputs, outputs)),
        }
    }

    /// The width of an output row.
    pub fn outputs(&self) -> usize {
        match self {
            Linear::F32(layer) => layer.outputs(),
            Linear::Int8(layer) => layer.outputs(),
        }
    }

    /// `out = epilogue(x · Wᵀ + b)`, rows × inputs to rows × outputs.
    pub fn forward(&self, x: &[f32], out: &mut [f32], epilogue: Epilogue, kernel: Kernel) {
        match self {
            Linear::F32(layer) => layer.forward(x, out, epilogue, kernel),
            Linear::Int8(layer) => layer.forward(x, out, epilogue, kernel),
        }
    }
}
