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
    create_parent(path)?;
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

/// Fails now, before any rung runs, if `path` could not be written at the end: its
/// directory is created, and a file that exists must be a writable file.
pub fn check_writable(path: &Path, flag: &str) -> anyhow::Result<()> {
    create_parent(path).with_context(|| format!("{flag} {}", path.display()))?;
    if path.is_dir() {
        anyhow::bail!("{flag} {} is a directory, not a file", path.display());
    }
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .with_context(|| format!("{flag} {} cannot be written", path.display()))?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// Creates `dir` (for `--hgrm`) and checks that files can be made in it.
pub fn check_directory(dir: &Path, flag: &str) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("{flag} {}", dir.display()))?;
    check_writable(
        &dir.join(format!(".heddle-check-{}", std::process::id())),
        flag,
    )
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
