//! Query sets for any corpus, drawn from its own vocabulary by document-frequency band.

mod classes;
mod df;
pub(crate) mod function_words;
mod questions;
mod term_stats;
mod terms;

pub use classes::{
    ClassError, ClassShare, ClassedQuery, LONG_WORDS, OPENERS, QueryClass, SampledStyle,
    class_queries, frequent_terms, is_frequent, rare_max_df, rare_terms, split_count,
};
pub use df::{BANDS, Band, DfTable};
pub use questions::{TEMPLATES, question_queries};
pub use term_stats::{TermStat, TermStats};
pub use terms::{BAND_WEIGHTS, QuerySetError, term_queries};
