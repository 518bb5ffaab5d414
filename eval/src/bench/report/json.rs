//! Writing the outputs: the JSON file (the whole [`BenchReport`], so that a later tool
//! can merge or re-plot) and the SVG.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::Path;

use anyhow::Context;

use super::BenchReport;

/// Writes the report as JSON, replacing `path` atomically (a temporary file beside it,
/// then a rename): a run rewrites it after every rung, and one killed while writing
/// leaves the previous version whole.
pub fn write_json(report: &BenchReport, path: &Path) -> anyhow::Result<()> {
    let tmp = temporary_beside(path);
    let file = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let mut out = BufWriter::new(file);
    serde_json::to_writer(&mut out, report)
        .with_context(|| format!("writing {}", tmp.display()))?;
    out.write_all(b"\n")?;
    out.flush()
        .with_context(|| format!("writing {}", tmp.display()))?;
    drop(out);
    std::fs::rename(&tmp, path)
        .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
}

fn temporary_beside(path: &Path) -> std::path::PathBuf {
    let name = path
        .file_name()
        .map_or("report".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// [`crate::output::check_file`], under the name heddle-bench calls it by.
pub fn check_writable(path: &Path, flag: &str) -> anyhow::Result<()> {
    crate::output::check_file(path, flag)
}

pub fn read_json(path: &Path) -> anyhow::Result<BenchReport> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    serde_json::from_reader(BufReader::new(file))
        .with_context(|| format!("reading {}", path.display()))
}

/// Writes the rendered SVG (its directory exists: [`crate::output`]).
pub fn write_svg(svg: &str, path: &Path) -> anyhow::Result<()> {
    std::fs::write(path, svg).with_context(|| format!("writing {}", path.display()))
}
