//! `heddle-eval delete`: remove documents by external id, in one commit.

use std::io::BufRead;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use heddle::Index;

use crate::progress::thousands;

#[derive(Debug, Args)]
pub struct DeleteArgs {
    #[arg(long)]
    pub index: PathBuf,
    /// A file with one external id a line (blank lines ignored).
    #[arg(long)]
    pub ids: Option<PathBuf>,
    /// External ids to delete.
    pub id: Vec<String>,
}

pub fn run(args: &DeleteArgs) -> anyhow::Result<()> {
    let mut ids = args.id.clone();
    if let Some(file) = &args.ids {
        let reader = std::io::BufReader::new(
            std::fs::File::open(file).with_context(|| format!("opening {}", file.display()))?,
        );
        for (n, line) in reader.lines().enumerate() {
            let line = line.with_context(|| format!("{}:{}", file.display(), n + 1))?;
            let id = line.trim();
            if !id.is_empty() {
                ids.push(id.to_string());
            }
        }
    }
    if ids.is_empty() {
        bail!("no ids to delete: give ids as arguments or --ids FILE");
    }
    let index = Index::open(&args.index)?;
    let mut writer = index.writer()?;
    let mut missing = Vec::new();
    for id in &ids {
        if !writer.delete(id) {
            missing.push(id.as_str());
        }
    }
    let stats = writer.commit()?;
    writer.wait_for_merges()?;
    println!(
        "deleted {} documents from {} (generation {}, {} documents left)",
        thousands(stats.deleted as u64),
        args.index.display(),
        stats.generation,
        thousands(index.num_docs())
    );
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(10).copied().collect();
        println!(
            "{} ids were not in the index: {}{}",
            missing.len(),
            shown.join(", "),
            if missing.len() > 10 { ", ..." } else { "" }
        );
    }
    Ok(())
}
