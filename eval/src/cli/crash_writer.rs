//! `heddle-eval crash-writer` (hidden): the child process of the kill -9 tests. Adds and
//! commits numbered batches forever, appending each batch number to an fsynced log only
//! after its commit returned. Batch `b` holds documents `b{b}-{i}` whose text contains
//! the words `batch{b}` and `every`, so a test can count each batch with a search.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use heddle::{Document, Index, MergePolicy};

#[derive(Debug, Args)]
pub struct CrashWriterArgs {
    /// The index to commit into.
    #[arg(long)]
    pub index: PathBuf,
    /// Where committed batch numbers are appended (one a line, fsynced).
    #[arg(long)]
    pub log: PathBuf,
    /// Documents per batch.
    #[arg(long, default_value_t = 20)]
    pub batch: usize,
    /// The writer's memory budget in bytes (0: none): a small one writes segments
    /// between commits, so that kills land between flushes too.
    #[arg(long, default_value_t = 0)]
    pub memory_bytes: usize,
    /// Words of filler added to each document, so that a batch can outgrow the budget.
    #[arg(long, default_value_t = 0)]
    pub pad_words: usize,
    /// Stop after this many batches (0: never; the test kills the process).
    #[arg(long, default_value_t = 0)]
    pub batches: u64,
}

pub fn run(args: &CrashWriterArgs) -> anyhow::Result<()> {
    let index = Index::open(&args.index)?;
    let mut writer = index.writer()?;
    // Small segments merge often, so kills land in merges too.
    writer.set_merge_policy(MergePolicy {
        max_segments: 4,
        merge_factor: 3,
        ..MergePolicy::default()
    });
    if args.memory_bytes > 0 {
        writer.set_memory_budget(args.memory_bytes);
    }
    // Batches commit whole and in order, so the committed ones are 0..n.
    let first = index.num_docs() / args.batch as u64;
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&args.log)
        .with_context(|| format!("opening {}", args.log.display()))?;
    let mut b = first;
    while args.batches == 0 || b < first + args.batches {
        for i in 0..args.batch {
            let mut text = format!(
                "every batch{b} item{i} words to index {}",
                "filler ".repeat(i % 7)
            );
            for k in 0..args.pad_words {
                text.push_str(&format!(" pad{}", (b as usize * 31 + i * 7 + k) % 5000));
            }
            writer.add(Document::new(
                format!("b{b}-{i}"),
                format!("batch {b}"),
                text,
            ))?;
        }
        writer.commit()?;
        // One write call: `writeln!` would issue two (number, newline), and a kill between
        // them would glue this number to the next run's.
        log.write_all(format!("{b}\n").as_bytes())?;
        log.sync_all()?;
        b += 1;
    }
    writer.wait_for_merges()?;
    Ok(())
}
