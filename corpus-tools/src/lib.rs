//! heddle-corpus: BEIR corpora in and out, a synthetic TREC-COVID-style corpus, query sets.

pub mod beir;
pub mod queries;
pub mod stats;
pub mod synth;
