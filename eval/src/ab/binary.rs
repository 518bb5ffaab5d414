//! The two builds: a `heddle-eval` binary given by path, or a git revision built with
//! the release profile in a temporary worktree (kept in a cache by commit, so that a
//! revision is built once).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

/// A build ready to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Build {
    /// As given: a path or a revision (`main`, `HEAD~1`, a hash).
    pub spec: String,
    pub binary: String,
    /// The commit built, for a revision; for a binary, its report's environment says.
    pub commit: Option<String>,
}

/// A worktree removed when dropped, whatever happened in it.
struct Worktree<'a> {
    repo: &'a Path,
    dir: PathBuf,
}

impl Drop for Worktree<'_> {
    fn drop(&mut self) {
        let _ = Command::new("git")
            .arg("-C")
            .arg(self.repo)
            .args(["worktree", "remove", "--force"])
            .arg(&self.dir)
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn git(repo: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .context("running git")?;
    if !out.status.success() {
        bail!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// `spec` as a binary: the file itself if it exists, else the revision of `repo` built
/// in release under `cache` (reused if that commit was built before).
pub fn prepare(spec: &str, repo: &Path, cache: &Path) -> anyhow::Result<Build> {
    let as_path = Path::new(spec);
    if as_path.is_file() {
        return Ok(Build {
            spec: spec.to_string(),
            binary: std::fs::canonicalize(as_path)?.display().to_string(),
            commit: None,
        });
    }
    let commit = git(
        repo,
        &["rev-parse", "--verify", &format!("{spec}^{{commit}}")],
    )
    .with_context(|| {
        format!(
            "{spec:?} is neither a file nor a git revision of {}",
            repo.display()
        )
    })?;
    let binary = cache.join(&commit).join("heddle-eval");
    if binary.is_file() {
        crate::note!("ab: {spec} is {commit}, built before: {}", binary.display());
    } else {
        build(repo, &commit, cache, &binary)
            .with_context(|| format!("building {spec} ({commit})"))?;
    }
    Ok(Build {
        spec: spec.to_string(),
        binary: binary.display().to_string(),
        commit: Some(commit),
    })
}

fn build(repo: &Path, commit: &str, cache: &Path, binary: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(cache).with_context(|| format!("creating {}", cache.display()))?;
    let cache = std::fs::canonicalize(cache)?;
    let dir = cache.join(format!("worktree-{}-{}", &commit[..12], std::process::id()));
    git(
        repo,
        &[
            "worktree",
            "add",
            "--detach",
            &dir.display().to_string(),
            commit,
        ],
    )?;
    let tree = Worktree { repo, dir };
    crate::note!(
        "ab: building {commit} in release in {} (minutes, once per commit)",
        tree.dir.display()
    );
    // One target directory for every revision: dependencies are built once.
    let target = cache.join("target");
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(&tree.dir)
        .env("CARGO_TARGET_DIR", &target)
        .args(["build", "--release", "--locked", "-p", "heddle-eval"])
        .status()
        .context("running cargo")?;
    if !status.success() {
        bail!("cargo build failed ({status})");
    }
    std::fs::create_dir_all(binary.parent().expect("in the cache"))?;
    std::fs::copy(target.join("release/heddle-eval"), binary)
        .with_context(|| format!("copying the binary to {}", binary.display()))?;
    Ok(())
}
