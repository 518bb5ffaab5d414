//! Query sets for any corpus, drawn from its own vocabulary by document-frequency band.

mod df;
pub(crate) mod function_words;
mod questions;
mod terms;

pub use df::{BANDS, Band, DfTable};
pub use questions::{TEMPLATES, question_queries};
pub use terms::{BAND_WEIGHTS, QuerySetError, term_queries};
