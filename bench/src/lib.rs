//! heddle-bench: heddle and tantivy behind the same instrument — same process, same
//! queries, same tokens — quoted as heddle/tantivy ratios.
//!
//! This crate is its own Cargo workspace so that tantivy never enters heddle's dependency
//! tree. It adds one engine to `heddle-eval bench` and nothing to its measurement: the
//! load generator, histograms, probes and reports are `heddle_eval::bench`, the same code
//! for both engines.
//!
//! - [`engines`]: building each engine's index from a BEIR corpus, and opening it behind
//!   the instrument's `BackendFactory` (tantivy's queries built term by term, never by
//!   its query parser);
//! - [`tokenizer`]: heddle's analyzer as a tantivy tokenizer (matched analysis);
//! - [`workdir`]: indexes kept and reused while corpus and settings are unchanged;
//! - [`agreement`]: both engines' top 10 compared before anything is timed, with
//!   [`reference`], a BM25 of our own that reproduces each engine's scores;
//! - the closed-loop sequential pass and its figures query by query are the
//!   instrument's (`heddle_eval::bench::sequential`), run here with both engines;
//! - [`child`]: builds and memory rungs in processes of their own (peak RSS per engine);
//! - [`compare`]: the `bench` command that runs all of it; [`report`]: the ratio table
//!   and each engine's highest rate held;
//! - [`peer`]: Lucene as a second peer, in a child JVM, and heddle in a child process,
//!   both over the line protocol of [`protocol`] (the `lucene` command);
//! - [`vectors`]: heddle's approximate vector search against a vector peer (usearch's
//!   HNSW), recall-matched, with the same instrument (the `vectors` command).

pub mod agreement;
pub mod analysis;
pub mod child;
pub mod compare;
pub mod engines;
pub mod peer;
pub mod protocol;
pub mod reference;
pub mod report;
pub mod scale;
pub mod tokenizer;
pub mod vectors;
pub mod workdir;
