//! `heddle-eval check`: verify every checksum and structure of an index.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;

use crate::progress::plural;

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The index directory to check.
    #[arg(long)]
    pub index: PathBuf,
}

pub fn run(args: &CheckArgs) -> anyhow::Result<()> {
    // Nothing to check is not a checked index with damage: say what is there instead.
    match std::fs::metadata(&args.index) {
        Err(e) => bail!("{}: {e}; no index to check", args.index.display()),
        Ok(m) if !m.is_dir() => bail!(
            "{}: is not a directory; an index is a directory",
            args.index.display()
        ),
        Ok(_) => {}
    }
    let report = heddle::check_index(&args.index);
    if let [no_index @ heddle::Error::NoIndex { .. }] = report.problems.as_slice() {
        bail!("{no_index}");
    }
    crate::outln!(
        "{}: generation {}, {}, {}, {} and {} checked",
        args.index.display(),
        report.generation,
        plural(report.segments as u64, "segment"),
        plural(report.documents, "document"),
        plural(report.files_checked as u64, "file"),
        plural(report.postings_lists_checked, "postings list")
    );
    if report.is_ok() {
        crate::outln!("ok: no damage found");
        return Ok(());
    }
    for problem in &report.problems {
        crate::outln!("damaged: {problem}");
    }
    bail!("{} found", plural(report.problems.len() as u64, "problem"))
}
