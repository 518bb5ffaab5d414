//! What a run shows: a plain-text table, a JSON file with every figure and the raw
//! histograms, and an SVG of latency quantiles against offered rate.

mod aggregate;
pub mod format;
pub mod hgrm;
mod json;
mod model;
mod svg;
mod table;

pub use aggregate::summarise;
pub use json::{check_writable, read_json, write_json, write_svg};
pub use model::*;
pub use svg::render_svg;
pub(crate) use svg::{Axis, provenance, provenance_lines, tick_label};
pub use table::{Table, Width, render_table, render_table_as};
pub(crate) use table::{calibration_line, fig_or_dash};
