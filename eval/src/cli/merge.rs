//! `heddle-eval merge`: merge segments now.

use std::path::PathBuf;

use clap::Args;
use heddle::Index;

use crate::progress::thousands;

#[derive(Debug, Args)]
pub struct MergeArgs {
    #[arg(long)]
    pub index: PathBuf,
    /// Merge until at most this many segments remain.
    #[arg(long, default_value_t = 1)]
    pub max_segments: usize,
}

pub fn run(args: &MergeArgs) -> anyhow::Result<()> {
    let index = Index::open(&args.index)?;
    let before = index.segments().len();
    let mut writer = index.writer()?;
    match writer.merge(args.max_segments)? {
        None => println!(
            "{}: {before} segments, nothing to merge (--max-segments {})",
            args.index.display(),
            args.max_segments
        ),
        Some(stats) => println!(
            "merged {} segments into {} ({} documents, {} deleted documents purged) in {:.2} s; {} segments now",
            stats.sources.len(),
            stats.segment,
            thousands(stats.docs as u64),
            thousands(stats.purged),
            stats.total.as_secs_f64(),
            index.segments().len()
        ),
    }
    Ok(())
}
