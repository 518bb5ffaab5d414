//! The writes arm never writes to the index it was given: it copies it to a fresh
//! directory, works on the copy, and proves the source unchanged with a hash of every
//! file taken before and after.

use std::fs::{self, File};
use std::hash::{DefaultHasher, Hasher};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, ensure};
use serde::{Deserialize, Serialize};

/// Every file under a directory, hashed: relative paths, sizes and contents, in path
/// order. Two equal fingerprints from one process mean byte-identical trees (the hash is
/// std's SipHash, fixed for the life of a process; it is compared, never stored across
/// runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub files: u64,
    pub bytes: u64,
    pub hash: u64,
}

impl Fingerprint {
    pub fn of(dir: &Path) -> anyhow::Result<Fingerprint> {
        let mut files = Vec::new();
        list_files(dir, dir, &mut files)?;
        files.sort();
        let mut hasher = DefaultHasher::new();
        let mut bytes = 0u64;
        let mut buf = vec![0u8; 1 << 20];
        for rel in &files {
            let path = dir.join(rel);
            hasher.write(rel.to_string_lossy().as_bytes());
            hasher.write_u8(0);
            let mut f = File::open(&path).with_context(|| format!("reading {}", path.display()))?;
            let mut len = 0u64;
            loop {
                let n = f
                    .read(&mut buf)
                    .with_context(|| format!("reading {}", path.display()))?;
                if n == 0 {
                    break;
                }
                hasher.write(&buf[..n]);
                len += n as u64;
            }
            hasher.write_u64(len);
            bytes += len;
        }
        Ok(Fingerprint {
            files: files.len() as u64,
            bytes,
            hash: hasher.finish(),
        })
    }
}

fn list_files(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for entry in fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let entry = entry.with_context(|| format!("listing {}", dir.display()))?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            list_files(root, &path, out)?;
        } else {
            out.push(path.strip_prefix(root).expect("under root").to_path_buf());
        }
    }
    Ok(())
}

/// The source index's check: its fingerprint before the arm and after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceCheck {
    pub dir: String,
    pub before: Fingerprint,
    pub after: Option<Fingerprint>,
}

impl SourceCheck {
    pub fn identical(&self) -> bool {
        self.after == Some(self.before)
    }
}

/// A fresh copy of an index, removed when dropped.
#[derive(Debug)]
pub struct ScratchCopy {
    dir: PathBuf,
    pub bytes: u64,
    /// Copying and fsyncing, in seconds.
    pub secs: f64,
}

static COPIES: AtomicU64 = AtomicU64::new(0);

impl ScratchCopy {
    /// Copies every file of `source` into a new directory under `parent` and fsyncs the
    /// copy, so that its write-back does not land inside the measurement.
    pub fn of(source: &Path, parent: &Path) -> anyhow::Result<ScratchCopy> {
        let started = Instant::now();
        ensure!(
            source.is_dir(),
            "{}: no index directory there",
            source.display()
        );
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = parent.join(format!(
            "heddle-writes-{}-{}-{nanos}",
            std::process::id(),
            COPIES.fetch_add(1, Ordering::Relaxed)
        ));
        // create_dir, not create_dir_all: the directory must be new.
        fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let mut copy = ScratchCopy {
            dir,
            bytes: 0,
            secs: 0.0,
        };
        copy.bytes = copy_tree(source, &copy.dir)?;
        copy.secs = started.elapsed().as_secs_f64();
        Ok(copy)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for ScratchCopy {
    fn drop(&mut self) {
        if let Err(e) = fs::remove_dir_all(&self.dir) {
            crate::note!(
                "bench: warning: could not remove the copy {}: {e}",
                self.dir.display()
            );
        }
    }
}

/// Copies files and subdirectories, fsyncing each file and directory. Returns the bytes.
fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<u64> {
    let mut bytes = 0;
    for entry in fs::read_dir(from).with_context(|| format!("listing {}", from.display()))? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type()?.is_dir() {
            fs::create_dir(&dst).with_context(|| format!("creating {}", dst.display()))?;
            bytes += copy_tree(&src, &dst)?;
        } else {
            bytes += fs::copy(&src, &dst)
                .with_context(|| format!("copying {} to {}", src.display(), dst.display()))?;
            File::open(&dst)
                .and_then(|f| f.sync_all())
                .with_context(|| format!("fsyncing {}", dst.display()))?;
        }
    }
    sync_dir(to).with_context(|| format!("fsyncing {}", to.display()))?;
    Ok(bytes)
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_is_identical_and_removed_when_dropped() {
        let src = tempfile::tempdir().unwrap();
        fs::write(src.path().join("a"), b"alpha").unwrap();
        fs::create_dir(src.path().join("sub")).unwrap();
        fs::write(src.path().join("sub/b"), vec![7u8; 3_000_000]).unwrap();
        let before = Fingerprint::of(src.path()).unwrap();
        assert_eq!((before.files, before.bytes), (2, 3_000_005));

        let parent = tempfile::tempdir().unwrap();
        let copy = ScratchCopy::of(src.path(), parent.path()).unwrap();
        assert_eq!(copy.bytes, 3_000_005);
        assert_eq!(Fingerprint::of(copy.dir()).unwrap(), before);
        let second = ScratchCopy::of(src.path(), parent.path()).unwrap();
        assert_ne!(second.dir(), copy.dir(), "each copy is fresh");

        fs::write(copy.dir().join("a"), b"alphA").unwrap();
        assert_ne!(
            Fingerprint::of(copy.dir()).unwrap(),
            before,
            "content counts"
        );
        let dir = copy.dir().to_path_buf();
        drop(copy);
        assert!(!dir.exists());
        assert_eq!(Fingerprint::of(src.path()).unwrap(), before);
    }

    #[test]
    fn names_count_not_only_bytes() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        fs::write(a.path().join("x"), b"same").unwrap();
        fs::write(b.path().join("y"), b"same").unwrap();
        assert_ne!(
            Fingerprint::of(a.path()).unwrap(),
            Fingerprint::of(b.path()).unwrap()
        );
    }
}
