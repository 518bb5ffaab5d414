//! `heddle-eval check`: verify every checksum and structure of an index.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;

use crate::progress::thousands;

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[arg(long)]
    pub index: PathBuf,
}

pub fn run(args: &CheckArgs) -> anyhow::Result<()> {
    let report = heddle::check_index(&args.index);
    println!(
        "{}: generation {}, {} segments, {} documents, {} files and {} postings lists checked",
        args.index.display(),
        report.generation,
        report.segments,
        thousands(report.documents),
        report.files_checked,
        thousands(report.postings_lists_checked)
    );
    if report.is_ok() {
        println!("ok: no damage found");
        return Ok(());
    }
    for problem in &report.problems {
        println!("damaged: {problem}");
    }
    bail!("{} problems found", report.problems.len())
}
