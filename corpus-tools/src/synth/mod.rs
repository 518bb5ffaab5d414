//! A synthetic TREC-COVID-style corpus: same size and length shape, Zipf-like words,
//! byte-for-byte reproducible from a seed.
//!
//! ```
//! use heddle_corpus::synth::{Generator, GeneratorConfig, LengthModel, WordModel};
//! let generator = Generator {
//!     model: WordModel::builtin(),
//!     lengths: LengthModel::trec_covid(),
//!     config: GeneratorConfig { docs: 10, seed: 7, ..GeneratorConfig::default() },
//! };
//! let doc = generator.document(3);
//! assert_eq!(doc, generator.document(3));
//! ```

mod alias;
mod detmath;
mod generate;
mod learn;
mod lengths;
mod model;
mod rng;
mod tailwords;

pub use generate::{GeneratedCorpus, Generator, GeneratorConfig, TREC_COVID_DOCS, doc_id};
pub use learn::{Learned, MIN_HEAD_COUNT, learn};
pub use lengths::{DocLengths, LengthModel, ShapeParams};
pub use model::{ModelSummary, TOPIC_FREE_RANKS, WordModel};
pub(crate) use rng::{Purpose, Stream};
