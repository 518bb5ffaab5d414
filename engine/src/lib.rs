pub mod analysis;
mod document;
mod error;
pub mod index;

pub use analysis::{Analyzer, AnalyzerConfig};
pub use document::Document;
pub use error::{Error, Result};
