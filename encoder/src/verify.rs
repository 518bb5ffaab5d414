//! sha256 checks: every byte of the model is hashed as it is read, and the bytes that were
//! hashed are the bytes that are used (no window between checking a file and reading it).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{EncoderError, Result};

/// Lower-case hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in digest.iter() {
        hex.push(char::from(b"0123456789abcdef"[usize::from(byte >> 4)]));
        hex.push(char::from(b"0123456789abcdef"[usize::from(byte & 0xf)]));
    }
    hex
}

/// Checks `bytes` (read from `path`) against `expected`; `remedy` is what a person should
/// delete to start over when they differ.
pub fn check_sha256(bytes: &[u8], expected: &str, path: &Path, remedy: &Path) -> Result<()> {
    let actual = sha256_hex(bytes);
    if actual == expected {
        Ok(())
    } else {
        Err(EncoderError::HashMismatch {
            path: path.to_path_buf(),
            expected: expected.to_string(),
            actual,
            remedy: remedy.to_path_buf(),
        })
    }
}

/// Reads `path` whole and returns its bytes only if their sha256 is `expected`.
pub fn read_verified(path: &Path, expected: &str, remedy: &Path) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path).map_err(EncoderError::io("reading", PathBuf::from(path)))?;
    check_sha256(&bytes, expected, path, remedy)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_known_inputs() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_mismatch_names_the_file_and_both_hashes() {
        let err = check_sha256(b"abc", "00", Path::new("/x/y.bin"), Path::new("/x")).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("/x/y.bin"), "{message}");
        assert!(message.contains("00"), "{message}");
        assert!(message.contains("ba7816bf"), "{message}");
    }
}
