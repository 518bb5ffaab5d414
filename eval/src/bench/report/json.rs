//! Writing the outputs: the JSON file (the whole [`BenchReport`], so that a later tool
//! can merge or re-plot) and the SVG.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::Path;

use anyhow::Context;

use super::BenchReport;

pub fn write_json(report: &BenchReport, path: &Path) -> anyhow::Result<()> {
    create_parent(path)?;
    let file = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut out = BufWriter::new(file);
    serde_json::to_writer(&mut out, report)
        .with_context(|| format!("writing {}", path.display()))?;
    out.write_all(b"\n")?;
    out.flush()
        .with_context(|| format!("writing {}", path.display()))
}

pub fn read_json(path: &Path) -> anyhow::Result<BenchReport> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    serde_json::from_reader(BufReader::new(file))
        .with_context(|| format!("reading {}", path.display()))
}

/// Writes the rendered SVG, creating its directory.
pub fn write_svg(svg: &str, path: &Path) -> anyhow::Result<()> {
    create_parent(path)?;
    std::fs::write(path, svg).with_context(|| format!("writing {}", path.display()))
}

fn create_parent(path: &Path) -> anyhow::Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
        }
        _ => Ok(()),
    }
}
