//! Files a command writes because an option named them (`--json`, `--svg`, `--html`,
//! `--run-out`, `embed --out`, ...): one rule for every such option, checked before the
//! command does any work (docs/DECISIONS.md, "Output files").
//!
//! The rule is a shell redirection's: the file is created or replaced, the directory
//! holding it must already exist and is never created. A typing mistake in a directory
//! (`--json /nonexistent/dir/x`) is then an error naming that directory before a run of
//! many minutes starts, not a tree of new directories. A directory an option names as
//! its output (`bench --hgrm DIR`, and the index `index --index DIR` builds) is the
//! output itself: it is made if missing, as `mkdir` would, but its parent must exist.

use std::path::Path;

use anyhow::{Context, bail};

/// Fails unless `path` can be written as `flag`'s output: it names a file (not a
/// directory) in a directory that exists, and a file already there can be opened for
/// writing. Nothing is created or changed (a probe file made here is removed).
pub fn check_file(path: &Path, flag: &str) -> anyhow::Result<()> {
    check_parent(path, flag)?;
    let shown = path.display();
    if path.is_dir() {
        bail!("{flag} {shown} is a directory, not a file");
    }
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .with_context(|| format!("{flag} {shown} cannot be written"))?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// Fails unless the directory that would hold `path` exists (`path` itself need not).
pub fn check_parent(path: &Path, flag: &str) -> anyhow::Result<()> {
    let shown = path.display();
    if path.file_name().is_none() {
        bail!("{flag} {shown}: names no file");
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => bail!("{flag} {shown}: {} is not a directory", dir.display()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "{flag} {shown}: the directory {} does not exist (an output's directory is \
             never created: make it first)",
            dir.display()
        ),
        Err(e) => Err(e).with_context(|| format!("{flag} {shown}: {}", dir.display())),
    }
}

/// Makes `dir`, `flag`'s output directory, if it is missing (its parent must exist, as
/// for [`check_file`]), and checks that files can be written in it.
pub fn check_dir(dir: &Path, flag: &str) -> anyhow::Result<()> {
    if !dir.is_dir() {
        check_parent(dir, flag)?;
        std::fs::create_dir(dir).with_context(|| format!("{flag} {}", dir.display()))?;
    }
    check_file(
        &dir.join(format!(".heddle-check-{}", std::process::id())),
        flag,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_directory_is_named_and_not_made() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("missing/deeper/x.json");
        let e = check_file(&out, "--json").unwrap_err().to_string();
        assert!(
            e.contains("--json") && e.contains("missing/deeper") && e.contains("does not exist"),
            "{e}"
        );
        assert!(!dir.path().join("missing").exists());
        let e = check_dir(&dir.path().join("missing/hgrm"), "--hgrm")
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not exist"), "{e}");
        assert!(!dir.path().join("missing").exists());
    }

    #[test]
    fn a_file_in_an_existing_directory_is_written_and_nothing_is_left() {
        let dir = tempfile::tempdir().unwrap();
        check_file(&dir.path().join("x.json"), "--json").unwrap();
        assert!(!dir.path().join("x.json").exists());
        std::fs::write(dir.path().join("kept"), "old").unwrap();
        check_file(&dir.path().join("kept"), "--json").unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("kept")).unwrap(),
            "old"
        );
        let e = check_file(dir.path(), "--json").unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
        let e = check_file(&dir.path().join("kept/x"), "--json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not a directory"), "{e}");
        check_dir(&dir.path().join("hgrm"), "--hgrm").unwrap();
        assert!(dir.path().join("hgrm").is_dir());
        check_dir(&dir.path().join("hgrm"), "--hgrm").unwrap();
    }
}
