//! The footer every heddle file ends with: body length, CRC-32 of the body, format
//! version and magic. Opening a file checks all four before any byte is interpreted.
//!
//! ```text
//! body ... | body_len u64 | crc32(body) u32 | version u32 | magic "HDLF" |
//! ```

use std::path::Path;

use crate::error::{Error, Result};

/// The on-disk format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 7;
pub(crate) const MAGIC: [u8; 4] = *b"HDLF";
pub(crate) const FOOTER_LEN: usize = 20;

/// Appends the footer for `buf`'s current contents (the body) to `buf`.
pub(crate) fn append_footer(buf: &mut Vec<u8>) {
    let body_len = buf.len() as u64;
    let crc = crc32fast::hash(buf);
    buf.extend_from_slice(&body_len.to_le_bytes());
    buf.extend_from_slice(&crc.to_le_bytes());
    buf.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    buf.extend_from_slice(&MAGIC);
}

/// `body` with its footer: a complete file.
pub(crate) fn sealed(mut body: Vec<u8>) -> Vec<u8> {
    append_footer(&mut body);
    body
}

/// Checks the footer of `file` and returns the body it protects.
pub(crate) fn verify<'a>(path: &Path, file: &'a [u8]) -> Result<&'a [u8]> {
    let (version, body) = verify_any_version(path, file)?;
    if version != FORMAT_VERSION {
        return Err(Error::Version {
            path: path.to_path_buf(),
            expected: FORMAT_VERSION,
            found: version,
        });
    }
    Ok(body)
}

/// Checks the footer of `file` as every format version has written it (magic, length,
/// checksum) and returns the version it names and the body: a heddle file, whichever
/// heddle wrote it.
pub(crate) fn verify_any_version<'a>(path: &Path, file: &'a [u8]) -> Result<(u32, &'a [u8])> {
    if file.len() < FOOTER_LEN {
        return Err(Error::Truncated {
            path: path.to_path_buf(),
            what: "footer",
            offset: 0,
            needed: FOOTER_LEN as u64,
            available: file.len() as u64,
        });
    }
    let (body, footer) = file.split_at(file.len() - FOOTER_LEN);
    if footer[16..20] != MAGIC {
        return Err(Error::BadMagic {
            path: path.to_path_buf(),
        });
    }
    let word = |at: usize| {
        u32::from_le_bytes([footer[at], footer[at + 1], footer[at + 2], footer[at + 3]])
    };
    let version = word(12);
    let mut len_bytes = [0u8; 8];
    len_bytes.copy_from_slice(&footer[0..8]);
    let body_len = u64::from_le_bytes(len_bytes);
    if body_len != body.len() as u64 {
        return Err(Error::Truncated {
            path: path.to_path_buf(),
            what: "body (length recorded in footer)",
            offset: 0,
            needed: body_len,
            available: body.len() as u64,
        });
    }
    let stored = word(8);
    let computed = crc32fast::hash(body);
    if stored != computed {
        return Err(Error::ChecksumMismatch {
            path: path.to_path_buf(),
            stored,
            computed,
        });
    }
    Ok((version, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed(body: &[u8]) -> Vec<u8> {
        let mut buf = body.to_vec();
        append_footer(&mut buf);
        buf
    }

    #[test]
    fn round_trip_returns_the_body() {
        let file = sealed(b"hello");
        assert_eq!(verify(Path::new("f"), &file).unwrap(), b"hello");
    }

    #[test]
    fn every_footer_defect_has_its_own_error() {
        let p = Path::new("f");
        let good = sealed(b"hello");

        let mut flipped = good.clone();
        flipped[1] ^= 0x40;
        assert!(matches!(
            verify(p, &flipped),
            Err(Error::ChecksumMismatch { .. })
        ));

        let mut magic = good.clone();
        *magic.last_mut().unwrap() = b'X';
        assert!(matches!(verify(p, &magic), Err(Error::BadMagic { .. })));

        let mut version = good.clone();
        let at = version.len() - 8;
        version[at] = 9;
        assert!(matches!(
            verify(p, &version),
            Err(Error::Version {
                found: 9,
                expected: FORMAT_VERSION,
                ..
            })
        ));

        assert!(matches!(
            verify(p, &good[..10]),
            Err(Error::Truncated { .. })
        ));
        // Cut from the front: the footer is intact but the body is shorter than recorded.
        assert!(matches!(
            verify(p, &good[2..]),
            Err(Error::Truncated { .. })
        ));
    }
}
