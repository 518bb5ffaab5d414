//! Opening and creating index files so that nothing planted in the directory redirects
//! them: every file heddle creates is created exclusively and without following a
//! symlink (a `seg-….store → ~/.bashrc` planted under a name heddle is about to write
//! would otherwise receive the segment's bytes), and every file it reads must be a
//! regular file (a FIFO under an index name would otherwise block the reader forever).
//! Either kind of entry under an index name is damage, reported as
//! [`Error::NotRegular`]; heddle never writes through it and never removes it.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use crate::error::{Error, Result};

/// What kind of entry `meta` describes, for a message: "a symlink", "a FIFO", ….
pub(crate) fn kind_of(file_type: std::fs::FileType) -> &'static str {
    if file_type.is_symlink() {
        "a symlink"
    } else if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_block_device() || file_type.is_char_device() {
        "a device"
    } else {
        "a regular file"
    }
}

/// The error for a non-regular entry at `path`, or `None` if it is a regular file (or
/// gone: the caller's own error then stands).
fn not_regular(path: &Path) -> Option<Error> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    (!meta.file_type().is_file()).then(|| Error::NotRegular {
        path: path.to_path_buf(),
        found: kind_of(meta.file_type()),
    })
}

/// Opens the regular file at `path` for reading. A symlink there is refused
/// (`O_NOFOLLOW`), and a FIFO or device is refused without blocking (`O_NONBLOCK`,
/// which changes nothing for a regular file), both as [`Error::NotRegular`].
pub(crate) fn open_regular(path: &Path) -> Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| not_regular(path).unwrap_or_else(|| Error::io(path, e)))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.file_type().is_file() {
        return Err(Error::NotRegular {
            path: path.to_path_buf(),
            found: kind_of(meta.file_type()),
        });
    }
    Ok(file)
}

/// Reads the whole regular file at `path` (see [`open_regular`]).
pub(crate) fn read_regular(path: &Path) -> Result<Vec<u8>> {
    let mut file = open_regular(path)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    Ok(bytes)
}

/// Creates a new file at `path` for writing, under a name no published manifest uses:
/// exclusively (`O_CREAT | O_EXCL`, which never follows a symlink, dangling or not). A
/// regular file already there is a leftover of this writer's own failed attempt (heddle
/// never reuses a published name) and is replaced; anything else there is refused as
/// [`Error::NotRegular`] and left in place.
pub(crate) fn create_fresh(path: &Path) -> Result<File> {
    let create = || {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
    };
    match create() {
        Ok(file) => Ok(file),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            if let Some(refused) = not_regular(path) {
                return Err(refused);
            }
            match std::fs::remove_file(path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(path, e)),
            }
            // Exclusive again: whatever appeared meanwhile is refused, not written through.
            create().map_err(|e| not_regular(path).unwrap_or_else(|| Error::io(path, e)))
        }
        Err(e) => Err(not_regular(path).unwrap_or_else(|| Error::io(path, e))),
    }
}

/// Writes `bytes` to a fresh file at `path` ([`create_fresh`]), not fsynced.
pub(crate) fn write_fresh(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut file = create_fresh(path)?;
    file.write_all(bytes).map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_symlink_is_neither_followed_nor_removed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("victim");
        std::fs::write(&target, b"precious").unwrap();
        let link = dir.path().join("seg-000002.store");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = write_fresh(&link, b"segment bytes").unwrap_err();
        assert!(
            matches!(
                &err,
                Error::NotRegular {
                    found: "a symlink",
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"precious");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        let err = open_regular(&link).unwrap_err();
        assert!(matches!(err, Error::NotRegular { .. }), "{err}");
        // A dangling symlink is not created through either.
        std::fs::remove_file(&target).unwrap();
        assert!(write_fresh(&link, b"x").is_err());
        assert!(!target.exists());
    }

    #[test]
    fn a_regular_leftover_is_replaced_and_a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("MANIFEST.tmp");
        std::fs::write(&path, b"half written").unwrap();
        write_fresh(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");

        let fifo = dir.path().join("MANIFEST");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = read_regular(&fifo).unwrap_err();
        assert!(
            matches!(
                err,
                Error::NotRegular {
                    found: "a FIFO",
                    ..
                }
            ),
            "{err}"
        );
        assert!(write_fresh(&fifo, b"x").is_err());
    }
}
