//! `heddle-eval delete`: remove documents by external id, in one commit.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;
use heddle::Index;

use super::display::escape_controls;
use crate::progress::plural;

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The index directory.
    #[arg(long)]
    pub index: PathBuf,
    /// A file with one external id a line. An id is exactly the bytes of its line, as
    /// `add` took it from `_id`: only the `\n` or `\r\n` ending is removed (spaces are
    /// part of the id), and empty lines are skipped.
    #[arg(long)]
    pub ids: Option<PathBuf>,
    /// External ids to delete (put them after `--` if one starts with `-`).
    pub id: Vec<String>,
}

pub fn run(args: &DeleteArgs) -> anyhow::Result<()> {
    let mut ids = args.id.clone();
    if let Some(file) = &args.ids {
        let reader = std::io::BufReader::new(
            std::fs::File::open(file).with_context(|| format!("opening {}", file.display()))?,
        );
        ids.extend(read_ids(reader, file)?);
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
    crate::outln!(
        "deleted {} from {} (generation {}, {} left)",
        plural(stats.deleted as u64, "document"),
        args.index.display(),
        stats.generation,
        plural(index.num_docs(), "document")
    );
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(10).copied().collect();
        crate::outln!(
            "{} not in the index: {}{}",
            match missing.len() {
                1 => "1 id was".to_string(),
                n => format!("{} were", plural(n as u64, "id")),
            },
            escape_controls(&shown.join(", ")),
            if missing.len() > 10 { ", ..." } else { "" }
        );
    }
    Ok(())
}

/// The ids of an --ids file, one a line: a line's bytes without its `\n` or `\r\n`,
/// exactly (trimming would make ` a` and `a` one id, which `add` keeps apart).
fn read_ids(mut reader: impl BufRead, file: &Path) -> anyhow::Result<Vec<String>> {
    let mut ids = Vec::new();
    let mut line = Vec::new();
    for n in 1u64.. {
        line.clear();
        if reader
            .read_until(b'\n', &mut line)
            .with_context(|| format!("reading {}", file.display()))?
            == 0
        {
            break;
        }
        let id = line.strip_suffix(b"\n").unwrap_or(&line);
        let id = id.strip_suffix(b"\r").unwrap_or(id);
        if id.is_empty() {
            continue;
        }
        let id = std::str::from_utf8(id)
            .with_context(|| format!("{}:{n}: the id is not UTF-8", file.display()))?;
        ids.push(id.to_string());
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_their_lines_exactly_less_the_line_ending() {
        let file = Path::new("ids.txt");
        let got = read_ids(&b" a\r\nb \n\n\r\n\tc\nlast"[..], file).unwrap();
        assert_eq!(got, [" a", "b ", "\tc", "last"]);
        let err = read_ids(&b"ok\nbad \xff\n"[..], file).unwrap_err();
        assert_eq!(err.to_string(), "ids.txt:2: the id is not UTF-8");
    }
}
