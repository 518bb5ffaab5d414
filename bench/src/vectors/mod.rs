//! heddle's approximate vector search against a vector peer (usearch's HNSW), behind the
//! same instrument (docs/PERF.md, "heddle against a vector peer"):
//!
//! - [`data`]: the vector sets (heddle-eval embed's cache, a binary form, and sets made
//!   from a seed), and [`generate`], the `vectors-data` command that writes them;
//! - [`truth`]: the exact top k by brute force, and recall@k against it;
//! - [`engines`]: building each engine's index and opening it at one search effort
//!   behind the instrument's `BackendFactory` (heddle's effort: [`engines::heddle_options`]);
//! - [`sweep`]: the recall-matched comparison (cheapest setting reaching a recall, and
//!   the check that both engines are compared at equal recall);
//! - [`run`]: the `vectors` command; [`child`]: builds and memory rungs in processes of
//!   their own; [`report`] and [`svg`]: the table, JSON, HTML and the recall–QPS chart.

pub mod child;
pub mod data;
pub mod engines;
pub mod generate;
pub mod report;
pub mod run;
pub mod svg;
pub mod sweep;
pub mod truth;
