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
    let report = heddle::check_index(&args.index);
    println!(
        "{}: generation {}, {}, {}, {} and {} checked",
        args.index.display(),
        report.generation,
        plural(report.segments as u64, "segment"),
        plural(report.documents, "document"),
        plural(report.files_checked as u64, "file"),
        plural(report.postings_lists_checked, "postings list")
    );
    if report.is_ok() {
        println!("ok: no damage found");
        return Ok(());
    }
    for problem in &report.problems {
        println!("damaged: {problem}");
    }
    bail!("{} found", plural(report.problems.len() as u64, "problem"))
}
