//! `heddle-eval embed`'s machinery: a corpus or query set turned into a vectors file
//! through a cache that survives being killed.
//!
//! [`embed`] surveys the input ([`Survey`]: the digest of its ids and texts, which names
//! the cache with the model's hash), opens the cache ([`EmbeddingCache`]: checks what an
//! earlier run left, cuts off a batch it did not finish), encodes what is missing
//! ([`fill`]) and, if asked, writes the vectors in input order. The encoder is a trait
//! ([`TextEncoder`]), so that tests count what is encoded without running a model.

mod cache;
mod fill;
mod input;
mod minilm;

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use heddle_corpus::beir::write_vector_line;

pub use crate::encoding::{ModelIdentity, TextEncoder};
pub use cache::{EmbeddingCache, Resumed, cache_dir, default_cache_root};
pub use fill::{FillOptions, FillReport, WINDOW, fill};
pub use input::{Input, Item, Survey, document_text};
pub use minilm::{MiniLm, minilm_precision};

use crate::progress::thousands;
use crate::vectors::DocumentVectors;

/// What [`embed`] did for one input.
#[derive(Debug, Clone)]
pub struct Embedded {
    /// The cache directory, and its vectors file (complete: one line an item).
    pub cache_dir: PathBuf,
    pub vectors: PathBuf,
    /// Items in the input.
    pub items: usize,
    /// Items found in the cache, and bytes of an unfinished batch cut off it.
    pub cached: usize,
    pub dropped_bytes: u64,
    /// What this run encoded.
    pub fill: FillReport,
}

/// Fills the cache of `input` under `root` with `encoder`'s vectors; then, with `out`,
/// writes them there in input order. Progress lines go to `say`.
pub fn embed(
    input: &Input,
    encoder: &dyn TextEncoder,
    root: &Path,
    options: &FillOptions,
    out: Option<&Path>,
    say: &(dyn Fn(&str) + Sync),
) -> anyhow::Result<Embedded> {
    let survey = Survey::of(input)?;
    if survey.is_empty() {
        bail!("{}: holds no {}", input.path().display(), input.noun());
    }
    let identity = encoder.identity();
    let (mut cache, resumed) = EmbeddingCache::open(root, input, &survey, &identity)?;
    if resumed.dropped_bytes > 0 {
        say(&format!(
            "embed: {}: cut {} bytes off the end of {}: a batch an earlier run did not finish",
            input.noun(),
            resumed.dropped_bytes,
            cache.vectors_path().display()
        ));
    }
    if resumed.count > 0 {
        say(&format!(
            "embed: {}: {} of {} already in {}",
            input.noun(),
            thousands(resumed.count as u64),
            thousands(survey.len() as u64),
            cache.dir().display()
        ));
    }
    let report = fill(encoder, input, &survey, &mut cache, &resumed, options, say)?;
    let embedded = Embedded {
        cache_dir: cache.dir().to_path_buf(),
        vectors: cache.vectors_path().to_path_buf(),
        items: survey.len(),
        cached: resumed.count,
        dropped_bytes: resumed.dropped_bytes,
        fill: report,
    };
    drop(cache);
    if let Some(out) = out {
        write_in_order(input, &embedded.vectors, identity.dim, out)?;
    }
    Ok(embedded)
}

/// Writes the vectors of `cached` (a complete cache file) to `out` in `input`'s order,
/// through a temporary file beside it renamed into place.
fn write_in_order(input: &Input, cached: &Path, dim: usize, out: &Path) -> anyhow::Result<()> {
    let mut vectors = DocumentVectors::open(cached, Some(dim))?;
    let name = out
        .file_name()
        .with_context(|| format!("{}: not a file name", out.display()))?;
    let temp = out.with_file_name(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| -> anyhow::Result<()> {
        let context = || format!("writing {}", temp.display());
        let mut file = BufWriter::new(File::create(&temp).with_context(context)?);
        for item in input.items()? {
            let item = item?;
            let Some(vector) = vectors.take(&item.id)? else {
                bail!("{}: no vector for {:?}", cached.display(), item.id);
            };
            write_vector_line(&mut file, &item.id, &vector).with_context(context)?;
        }
        vectors.check_all_taken(&input.path())?;
        let file = file
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(context)?;
        file.sync_all().with_context(context)?;
        std::fs::rename(&temp, out).with_context(|| format!("renaming to {}", out.display()))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}
