//! What an fsync costs on a directory's filesystem: a short microbenchmark. A commit is
//! durable only after its files and its directory are fsynced, so two commit figures are
//! comparable only if these costs are.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};

/// How many fsyncs of each kind: a few dozen, so the probe takes well under a second
/// on any disk that is not failing.
pub const ROUNDS: usize = 24;
/// Bytes written before each file fsync: one small page, like a manifest.
pub const WRITE_BYTES: usize = 4096;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FsyncCost {
    /// Where the probe ran: a fresh directory beside the measured one, removed after.
    pub probe_dir: String,
    pub rounds: usize,
    /// Write 4 KiB at the end of a small file, then `fsync` it.
    pub file: Timing,
    /// `fsync` of the probe directory after creating a file in it.
    pub dir: Timing,
}

/// Nearest-rank median and maximum, µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    pub median_us: f64,
    pub max_us: f64,
}

impl Timing {
    fn of(mut v: Vec<f64>) -> Timing {
        v.sort_by(f64::total_cmp);
        Timing {
            median_us: v[v.len().div_ceil(2) - 1],
            max_us: v[v.len() - 1],
        }
    }
}

/// Measures fsync on the filesystem of `near` (an index directory, which may not exist
/// yet) in a new directory made beside it, in its parent, and removed after: nothing is
/// ever written inside an index. Why it could not be measured is the error, recorded in
/// the report as such.
pub fn measure(near: &Path) -> Result<FsyncCost, String> {
    let base = probe_base(near)?;
    static PROBES: AtomicU64 = AtomicU64::new(0);
    let dir = base.join(format!(
        ".heddle-fsync-probe-{}-{}",
        std::process::id(),
        PROBES.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let result = run(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    result.map(|(file, d)| FsyncCost {
        probe_dir: base.display().to_string(),
        rounds: ROUNDS,
        file,
        dir: d,
    })
}

/// `near`'s parent, if it is on the same filesystem as `near`.
fn probe_base(near: &Path) -> Result<PathBuf, String> {
    use std::os::unix::fs::MetadataExt;
    let parent = near
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let same_fs = match (std::fs::metadata(near), std::fs::metadata(parent)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev(),
        (Err(_), Ok(_)) => true, // `near` does not exist yet: it will be made in `parent`
        _ => false,
    };
    if same_fs && parent.is_dir() {
        Ok(parent.to_path_buf())
    } else {
        Err(format!(
            "the parent of {} is not on its filesystem",
            near.display()
        ))
    }
}

fn run(dir: &Path) -> Result<(Timing, Timing), String> {
    let err = |what: &str, e: std::io::Error| format!("{what} in {}: {e}", dir.display());
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("data"))
        .map_err(|e| err("creating a file", e))?;
    let page = vec![0x5au8; WRITE_BYTES];
    let dir_handle = File::open(dir).map_err(|e| err("opening the directory", e))?;
    let (mut files, mut dirs) = (Vec::with_capacity(ROUNDS), Vec::with_capacity(ROUNDS));
    for i in 0..ROUNDS {
        file.write_all(&page).map_err(|e| err("writing", e))?;
        let t = Instant::now();
        file.sync_all().map_err(|e| err("fsync of a file", e))?;
        files.push(t.elapsed().as_nanos() as f64 / 1e3);

        File::create(dir.join(format!("entry-{i}"))).map_err(|e| err("creating an entry", e))?;
        let t = Instant::now();
        dir_handle
            .sync_all()
            .map_err(|e| err("fsync of the directory", e))?;
        dirs.push(t.elapsed().as_nanos() as f64 / 1e3);
    }
    Ok((Timing::of(files), Timing::of(dirs)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_beside_the_index_in_a_directory_it_removes_afterwards() {
        let tmp = tempfile::tempdir().unwrap();
        let index = tmp.path().join("index");
        std::fs::create_dir(&index).unwrap();
        let cost = measure(&index).unwrap();
        assert_eq!(cost.probe_dir, tmp.path().display().to_string());
        assert_eq!(cost.rounds, ROUNDS);
        assert!(cost.file.median_us > 0.0 && cost.file.max_us >= cost.file.median_us);
        assert!(cost.dir.median_us > 0.0 && cost.dir.max_us >= cost.dir.median_us);
        assert_eq!(
            std::fs::read_dir(tmp.path()).unwrap().count(),
            1,
            "left nothing"
        );
        assert_eq!(
            std::fs::read_dir(&index).unwrap().count(),
            0,
            "wrote nothing inside"
        );
    }

    #[test]
    fn a_directory_not_yet_made_is_probed_in_its_parent() {
        let tmp = tempfile::tempdir().unwrap();
        let cost = measure(&tmp.path().join("index-to-be")).unwrap();
        assert_eq!(cost.probe_dir, tmp.path().display().to_string());
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn the_median_is_an_observed_value() {
        let t = Timing::of(vec![5.0, 1.0, 3.0, 9.0]);
        assert_eq!((t.median_us, t.max_us), (3.0, 9.0));
    }
}
