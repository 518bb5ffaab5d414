//! `heddle-eval merge`: merge segments now.

use std::path::PathBuf;

use clap::Args;
use heddle::Index;

use crate::progress::plural;

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The index directory.
    #[arg(long)]
    pub index: PathBuf,
    /// Merge until at most this many segments remain.
    #[arg(long, default_value_t = 1)]
    pub max_segments: usize,
}

pub fn run(args: &MergeArgs) -> anyhow::Result<()> {
    // As `index --merge-to 0`: no index with documents has fewer than one segment, and
    // the writer would merge down to one while the command line said zero.
    if args.max_segments == 0 {
        anyhow::bail!(
            "--max-segments 0: an index with documents has at least one segment; give 1 or more"
        );
    }
    let index = Index::open(&args.index)?;
    let before = index.segments().len();
    let mut writer = index.writer()?;
    match writer.merge(args.max_segments)? {
        None => crate::outln!(
            "{}: {}, nothing to merge (--max-segments {})",
            args.index.display(),
            plural(before as u64, "segment"),
            args.max_segments
        ),
        Some(stats) => crate::outln!(
            "merged {} into {} ({}, {} purged) in {:.2} s; {} now",
            plural(stats.sources.len() as u64, "segment"),
            stats.segment,
            plural(stats.docs as u64, "document"),
            plural(stats.purged, "deleted document"),
            stats.total.as_secs_f64(),
            plural(index.segments().len() as u64, "segment")
        ),
    }
    Ok(())
}
