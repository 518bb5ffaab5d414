//! The embeddings cache: one directory per (input, model), filled batch by batch, kept
//! across runs, and resumed where a killed run stopped.
//!
//! ```text
//! <root>/                          --cache, else $XDG_CACHE_HOME/heddle/embeddings,
//!                                  else ~/.cache/heddle/embeddings
//!   <input 16 hex>-<model 16 hex>/ sha256 prefixes of the input's texts and of the model
//!     meta.json                    the full digests, counts and dimension (checked on open)
//!     vectors.jsonl                {"_id","vector"} lines, appended a batch at a time, in the
//!                                  order batches finished: itself a vectors file
//!     done.json                    {"bytes", "vectors", "sha256"}: how much of
//!                                  vectors.jsonl is durable, and the digest of those
//!                                  bytes (replaced after each batch's fsync)
//!     lock                         held (flock) by the run filling the directory
//! ```
//!
//! A batch is appended and fsynced, then `done.json` is replaced (temporary file, fsync,
//! rename). Whatever lies beyond `done.json`'s byte count is what a run killed mid-batch
//! left, a torn last line included: the next run cuts it off and encodes those items
//! again, so no line is trusted unless the write that made it durable finished. Every
//! line below the count is checked again when the cache is opened (JSON, an id of the
//! input not seen before, the model's dimension, finite values), so a damaged cache is
//! an error naming the file and line, never embeddings that silently belong to nothing;
//! and the prefix's sha256 is compared with the one `done.json` recorded, so a changed
//! digit in a vector (which every line check passes) is an error too, never served.

use std::fs::{File, OpenOptions};
use std::io::{BufReader, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use heddle_corpus::beir::{VectorReader, write_vector_line};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::input::{Input, Survey, absolute};
use crate::encoding::ModelIdentity;

/// The format of the directory, recorded in `meta.json`.
const FORMAT: &str = "heddle-embeddings 1";

/// `meta.json`: what the directory holds embeddings of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Meta {
    format: String,
    /// The input's digest ([`Survey::sha256`]) and item count.
    input_sha256: String,
    items: u64,
    /// Where the input was read from when the directory was made (for people only).
    source: String,
    text: String,
    model: ModelIdentity,
}

/// `done.json`: the durable prefix of `vectors.jsonl`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Done {
    bytes: u64,
    vectors: u64,
    /// The prefix's sha256 (hex). Absent in caches written before it was recorded: those
    /// are checked line by line only, and get one with their next batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sha256: Option<String>,
}

/// The default root: `$XDG_CACHE_HOME/heddle/embeddings` (when absolute), else
/// `$HOME/.cache/heddle/embeddings`; never inside a repository unless asked.
pub fn default_cache_root() -> anyhow::Result<PathBuf> {
    let non_empty = |name: &str| {
        std::env::var_os(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    if let Some(xdg) = non_empty("XDG_CACHE_HOME").filter(|path| path.is_absolute()) {
        return Ok(xdg.join("heddle").join("embeddings"));
    }
    match non_empty("HOME") {
        Some(home) => Ok(home.join(".cache").join("heddle").join("embeddings")),
        None => bail!("no cache directory: set HOME or XDG_CACHE_HOME, or pass --cache DIR"),
    }
}

/// The directory for `survey`'s input and `model` below `root`.
pub fn cache_dir(root: &Path, survey: &Survey, model: &ModelIdentity) -> PathBuf {
    root.join(format!(
        "{}-{}",
        &survey.sha256[..16],
        prefix(&model.sha256)
    ))
}

fn prefix(hex: &str) -> &str {
    hex.get(..16).unwrap_or(hex)
}

/// An open cache directory, locked for this process.
pub struct EmbeddingCache {
    dir: PathBuf,
    vectors_path: PathBuf,
    vectors: File,
    done: Done,
    /// The sha256 state after the durable prefix: each batch continues it.
    digest: Sha256,
    /// Holds the flock; released when dropped (or the process ends, however it ends).
    _lock: File,
}

/// What opening a cache found.
#[derive(Debug, Default)]
pub struct Resumed {
    /// Which items (by ordinal) already have their vector.
    pub done: Vec<bool>,
    /// How many.
    pub count: usize,
    /// Bytes cut off the end of `vectors.jsonl`: what a run stopped mid-batch wrote.
    pub dropped_bytes: u64,
}

impl EmbeddingCache {
    /// Opens (or creates) the cache of `input` (surveyed as `survey`) for `model` below
    /// `root`, takes its lock, cuts off anything past the durable prefix, and checks every
    /// line of that prefix.
    pub fn open(
        root: &Path,
        input: &Input,
        survey: &Survey,
        model: &ModelIdentity,
    ) -> anyhow::Result<(EmbeddingCache, Resumed)> {
        let dir = cache_dir(root, survey, model);
        let meta = Meta {
            format: FORMAT.to_string(),
            input_sha256: survey.sha256.clone(),
            items: survey.len() as u64,
            source: absolute(&input.path()).display().to_string(),
            text: match input {
                Input::Corpus(_) => "title + \" \" + text, trimmed (BEIR)".to_string(),
                Input::Queries(_) => "the query text".to_string(),
            },
            model: model.clone(),
        };
        if !dir.join("meta.json").is_file() {
            create(&dir, &meta)?;
        }
        let lock = lock(&dir)?;
        check_meta(&dir, &meta)?;

        let vectors_path = dir.join("vectors.jsonl");
        let done_path = dir.join("done.json");
        let done: Done = match std::fs::read(&done_path) {
            Ok(bytes) => serde_json::from_slice(&bytes).with_context(|| {
                format!(
                    "{}: not a cache record; {}",
                    done_path.display(),
                    remedy(&dir)
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Done::default(),
            Err(e) => return Err(e).with_context(|| format!("reading {}", done_path.display())),
        };
        let vectors = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(&vectors_path)
            .with_context(|| format!("opening {}", vectors_path.display()))?;
        let length = vectors.metadata()?.len();
        if length < done.bytes {
            bail!(
                "{}: {length} bytes, but {} records {} as written and synced; the cache is \
                 damaged: {}",
                vectors_path.display(),
                done_path.display(),
                done.bytes,
                remedy(&dir)
            );
        }
        let dropped_bytes = length - done.bytes;
        if dropped_bytes > 0 {
            vectors
                .set_len(done.bytes)
                .with_context(|| format!("cutting {} back", vectors_path.display()))?;
            vectors.sync_all()?;
        }
        // Line by line first (an error naming the line), then the bytes as a whole.
        let (done_items, count) =
            check_lines(&vectors_path, &dir, survey, model.dim, done.clone())?;
        let digest = digest_prefix(&vectors_path, done.bytes)?;
        if let Some(recorded) = &done.sha256
            && *recorded != hex(&digest.clone().finalize())
        {
            bail!(
                "{}: its first {} bytes are not the bytes {} recorded (sha256 differs): the \
                 cache was changed after it was written; {}",
                vectors_path.display(),
                done.bytes,
                done_path.display(),
                remedy(&dir)
            );
        }

        Ok((
            EmbeddingCache {
                dir,
                vectors_path,
                vectors,
                done,
                digest,
                _lock: lock,
            },
            Resumed {
                done: done_items,
                count,
                dropped_bytes,
            },
        ))
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `vectors.jsonl`: a vectors file (in the order batches finished) once complete.
    pub fn vectors_path(&self) -> &Path {
        &self.vectors_path
    }

    /// How many vectors are durable.
    pub fn len(&self) -> u64 {
        self.done.vectors
    }

    /// Whether none are.
    pub fn is_empty(&self) -> bool {
        self.done.vectors == 0
    }

    /// Appends a batch of (id, vector) and makes it durable: the lines are written and
    /// fsynced, then `done.json` is replaced to count them. A failure part-way leaves
    /// `done.json` as it was, and the next open cuts the partial batch off.
    pub fn append(&mut self, batch: &[(String, Vec<f32>)]) -> anyhow::Result<()> {
        let mut bytes =
            Vec::with_capacity(batch.len() * 16 * batch.first().map_or(0, |b| b.1.len()));
        for (id, vector) in batch {
            write_vector_line(&mut bytes, id, vector).with_context(|| {
                format!("{}: the vector of {id:?}", self.vectors_path.display())
            })?;
        }
        let context = || format!("appending to {}", self.vectors_path.display());
        self.vectors.write_all(&bytes).with_context(context)?;
        self.vectors.sync_data().with_context(context)?;
        let mut digest = self.digest.clone();
        digest.update(&bytes);
        let done = Done {
            bytes: self.done.bytes + bytes.len() as u64,
            vectors: self.done.vectors + batch.len() as u64,
            sha256: Some(hex(&digest.clone().finalize())),
        };
        write_atomically(&self.dir.join("done.json"), &serde_json::to_vec(&done)?)?;
        self.done = done;
        self.digest = digest;
        Ok(())
    }
}

/// The sha256 state after the first `len` bytes of `path`.
fn digest_prefix(path: &Path, len: u64) -> anyhow::Result<Sha256> {
    use std::io::Read;
    let context = || format!("reading {}", path.display());
    let file = File::open(path).with_context(context)?;
    let mut digest = Sha256::new();
    let mut reader = BufReader::with_capacity(1 << 16, file).take(len);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = reader.read(&mut buf).with_context(context)?;
        if n == 0 {
            return Ok(digest);
        }
        digest.update(&buf[..n]);
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What to do about a damaged cache.
fn remedy(dir: &Path) -> String {
    format!(
        "remove {} to start this input over (other inputs' caches are unaffected)",
        dir.display()
    )
}

/// Makes the directory whole or not at all: `meta.json` written in a scratch directory
/// renamed into place. A concurrent creator's directory wins; its meta is checked next.
fn create(dir: &Path, meta: &Meta) -> anyhow::Result<()> {
    let root = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(root).with_context(|| format!("creating {}", root.display()))?;
    let scratch = root.join(format!(
        ".{}.new-{}",
        dir.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir(&scratch).with_context(|| format!("creating {}", scratch.display()))?;
    write_atomically(
        &scratch.join("meta.json"),
        &serde_json::to_vec_pretty(meta)?,
    )?;
    match std::fs::rename(&scratch, dir) {
        Ok(()) => {
            sync_dir(root);
            Ok(())
        }
        Err(_) if dir.join("meta.json").is_file() => {
            let _ = std::fs::remove_dir_all(&scratch);
            Ok(())
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&scratch);
            Err(e).with_context(|| format!("creating {}", dir.display()))
        }
    }
}

/// Takes the directory's lock without waiting: one run fills a cache at a time.
fn lock(dir: &Path) -> anyhow::Result<File> {
    let path = dir.join("lock");
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    // SAFETY: flock takes a file descriptor this function owns (kept open in `file`) and
    // flags; it touches no memory.
    let taken = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if taken != 0 {
        let error = std::io::Error::last_os_error();
        if error.kind() == std::io::ErrorKind::WouldBlock {
            bail!(
                "{}: another heddle-eval embed is filling this cache; wait for it to end \
                 (or stop it: what it finished stays)",
                dir.display()
            );
        }
        return Err(error).with_context(|| format!("locking {}", path.display()));
    }
    Ok(file)
}

/// The directory must hold embeddings of exactly this input and model: the name is only
/// a 64-bit prefix of each digest, and a directory can be edited or copied.
fn check_meta(dir: &Path, expected: &Meta) -> anyhow::Result<()> {
    let path = dir.join("meta.json");
    let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    let found: Meta = serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "{}: not a cache description; {}",
            path.display(),
            remedy(dir)
        )
    })?;
    let differs = if found.format != expected.format {
        Some(format!(
            "format {:?}, not {:?}",
            found.format, expected.format
        ))
    } else if found.input_sha256 != expected.input_sha256 || found.items != expected.items {
        Some(format!(
            "an input of {} items with digest {}, not {} items with digest {}",
            found.items, found.input_sha256, expected.items, expected.input_sha256
        ))
    } else if found.model != expected.model {
        Some(format!("model {:?}, not {:?}", found.model, expected.model))
    } else {
        None
    };
    match differs {
        None => Ok(()),
        Some(what) => bail!("{}: describes {what}; {}", path.display(), remedy(dir)),
    }
}

/// Checks every line of the durable prefix and says which items it covers.
fn check_lines(
    path: &Path,
    dir: &Path,
    survey: &Survey,
    dim: usize,
    done: Done,
) -> anyhow::Result<(Vec<bool>, usize)> {
    let file = File::open(path).with_context(|| format!("reading {}", path.display()))?;
    let mut reader = VectorReader::new(BufReader::with_capacity(1 << 16, file), path);
    reader.expect_dimension(dim);
    let mut items = vec![false; survey.len()];
    let mut count = 0;
    while let Some(line) = reader.next() {
        let line = line.with_context(|| format!("the cache is damaged; {}", remedy(dir)))?;
        let Some(&ordinal) = survey.ordinals.get(&line.id) else {
            bail!(
                "{}:{}: id {:?} is not in the input; the cache is damaged: {}",
                path.display(),
                reader.line(),
                line.id,
                remedy(dir)
            );
        };
        if std::mem::replace(&mut items[ordinal as usize], true) {
            bail!(
                "{}:{}: id {:?} is there twice; the cache is damaged: {}",
                path.display(),
                reader.line(),
                line.id,
                remedy(dir)
            );
        }
        count += 1;
    }
    if count as u64 != done.vectors {
        bail!(
            "{}: {count} vectors, but done.json counts {}; the cache is damaged: {}",
            path.display(),
            done.vectors,
            remedy(dir)
        );
    }
    Ok((items, count))
}

/// Replaces `path` with `bytes` durably: a temporary file beside it, fsynced, renamed.
/// (The rename itself is made durable by the next batch's or not at all; an older
/// `done.json` after a crash only means re-encoding what it does not count.)
fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let temp = path.with_extension("json.tmp");
    let context = || format!("writing {}", path.display());
    let mut file = File::create(&temp).with_context(context)?;
    file.write_all(bytes).with_context(context)?;
    file.sync_all().with_context(context)?;
    drop(file);
    std::fs::rename(&temp, path).with_context(context)
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}
