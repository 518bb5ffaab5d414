//! The footer every heddle file ends with, and the table of chunk checksums before it.
//!
//! ```text
//! body | chunk CRCs: n × u32 | chunk_shift u32 | body_len u64 | crc32 u32 | version u32 | magic "HDLF"
//! ```
//!
//! The body is cut into chunks of `2^chunk_shift` bytes (the last may be shorter) and
//! chunk `i`'s CRC-32 is entry `i` of the table; `crc32` covers the table, `chunk_shift`
//! and `body_len`. [`open`] checks the footer and the table only, so opening costs
//! O(body / chunk) instead of O(body); each chunk is checked before its bytes are first
//! read ([`super::checked`]). [`verify`] checks every chunk: the whole file, as
//! `check_index`, the manifest and delete files want it.
//!
//! Versions 1 to 7 ended in `body_len u64 | crc32(body) u32 | version u32 | magic`, with
//! no table: [`verify_any_version`] still reads them (to rebuild an old index).

use std::ops::Range;
use std::path::Path;

use crate::error::{Error, Result};

/// The on-disk format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 12;
/// The first version whose files end in the chunk table and this footer.
const FIRST_CHUNKED_VERSION: u32 = 8;
pub(crate) const MAGIC: [u8; 4] = *b"HDLF";
/// Bytes after the chunk table: chunk_shift, body_len, crc32, version, magic.
pub(crate) const FOOTER_LEN: usize = 24;
/// The footer of versions 1 to 7 (no chunk table, no chunk_shift); every version's
/// footer is at least this long and ends in version and magic.
const OLD_FOOTER_LEN: usize = 20;
/// Chunks of 16 KiB: a table entry costs 0.024% of the body, and the first read of a
/// short postings list or a stored block checks ~16 KiB, not more (docs/DECISIONS.md).
pub(crate) const CHUNK_SHIFT: u32 = 14;
/// The chunk sizes a reader accepts: 64 bytes (tests cut small files into many chunks)
/// to 1 GiB.
const SHIFTS: Range<u32> = 6..31;

/// Appends the chunk table and footer for `buf`'s current contents (the body).
pub(crate) fn append_footer(buf: &mut Vec<u8>) {
    append_footer_chunked(buf, CHUNK_SHIFT);
}

/// [`append_footer`] with chunks of `2^shift` bytes (`shift` in 6..=30).
pub(crate) fn append_footer_chunked(buf: &mut Vec<u8>, shift: u32) {
    debug_assert!(SHIFTS.contains(&shift));
    let chunk_crcs: Vec<u32> = buf.chunks(1 << shift).map(crc32fast::hash).collect();
    let tail = table_and_footer(&chunk_crcs, shift, buf.len() as u64);
    buf.extend_from_slice(&tail);
}

/// What follows a body of `body_len` bytes whose chunks of `2^shift` bytes have the
/// CRC-32s `chunk_crcs`: the chunk table and the footer. A file written front to back
/// ([`super::sealed_file`]) ends in the same bytes as one sealed in memory.
pub(crate) fn table_and_footer(chunk_crcs: &[u32], shift: u32, body_len: u64) -> Vec<u8> {
    debug_assert_eq!(chunk_crcs.len() as u64, body_len.div_ceil(1 << shift));
    let mut tail = Vec::with_capacity(4 * chunk_crcs.len() + FOOTER_LEN);
    for crc in chunk_crcs {
        tail.extend_from_slice(&crc.to_le_bytes());
    }
    tail.extend_from_slice(&shift.to_le_bytes());
    tail.extend_from_slice(&body_len.to_le_bytes());
    let crc = crc32fast::hash(&tail);
    tail.extend_from_slice(&crc.to_le_bytes());
    tail.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    tail.extend_from_slice(&MAGIC);
    tail
}

/// `body` with its chunk table and footer: a complete file.
pub(crate) fn sealed(mut body: Vec<u8>) -> Vec<u8> {
    append_footer(&mut body);
    body
}

/// Where the parts of a file are, once its footer and chunk table have been checked.
/// The body's chunks are not checked yet: see [`Sealed::check_chunk`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sealed {
    pub body_len: usize,
    /// Chunks are `2^shift` bytes.
    pub shift: u32,
    /// Offset of the chunk table in the file (= `body_len`).
    table_at: usize,
}

impl Sealed {
    /// Chunks in the body.
    pub(crate) fn chunks(&self) -> usize {
        self.body_len.div_ceil(1 << self.shift)
    }

    /// Checks chunk `i` of `file` (the file this footer was read from) against its
    /// entry in the table.
    pub(crate) fn check_chunk(&self, path: &Path, file: &[u8], i: usize) -> Result<()> {
        let start = i << self.shift;
        let end = (start + (1 << self.shift)).min(self.body_len);
        let at = self.table_at + 4 * i;
        let stored = u32::from_le_bytes([file[at], file[at + 1], file[at + 2], file[at + 3]]);
        let computed = crc32fast::hash(&file[start..end]);
        if stored != computed {
            return Err(Error::ChecksumMismatch {
                path: path.to_path_buf(),
                start: start as u64,
                end: end as u64,
                stored,
                computed,
            });
        }
        Ok(())
    }
}

fn truncated(path: &Path, what: &'static str, needed: u64, available: u64) -> Error {
    Error::Truncated {
        path: path.to_path_buf(),
        what,
        offset: 0,
        needed,
        available,
    }
}

fn u32_at(file: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([file[at], file[at + 1], file[at + 2], file[at + 3]])
}

fn u64_at(file: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&file[at..at + 8]);
    u64::from_le_bytes(b)
}

/// The version a file's footer names, after checking its length and magic.
fn version_of(path: &Path, file: &[u8]) -> Result<u32> {
    if file.len() < OLD_FOOTER_LEN {
        return Err(truncated(
            path,
            "footer",
            FOOTER_LEN as u64,
            file.len() as u64,
        ));
    }
    if file[file.len() - 4..] != MAGIC {
        return Err(Error::BadMagic {
            path: path.to_path_buf(),
        });
    }
    Ok(u32_at(file, file.len() - 8))
}

/// Checks the footer and chunk table of `file` (this format version): O(chunks), the
/// body itself unread. In order: length, magic, version (`Version`: "rebuild the
/// index"), chunk size (`Corrupt`), body length against the file's (`Truncated`), the
/// footer's checksum (`ChecksumMismatch`). Each error names the file.
pub(crate) fn open(path: &Path, file: &[u8]) -> Result<Sealed> {
    let version = version_of(path, file)?;
    if version != FORMAT_VERSION {
        return Err(Error::Version {
            path: path.to_path_buf(),
            expected: FORMAT_VERSION,
            found: version,
        });
    }
    open_chunked(path, file)
}

/// [`open`] for a file of any version from [`FIRST_CHUNKED_VERSION`] on, its version
/// not looked at.
fn open_chunked(path: &Path, file: &[u8]) -> Result<Sealed> {
    if file.len() < FOOTER_LEN {
        return Err(truncated(
            path,
            "footer",
            FOOTER_LEN as u64,
            file.len() as u64,
        ));
    }
    let shift = u32_at(file, file.len() - 24);
    if !SHIFTS.contains(&shift) {
        return Err(Error::Corrupt {
            path: path.to_path_buf(),
            what: "footer",
            detail: format!(
                "chunks of 2^{shift} bytes (2^{} to 2^{})",
                SHIFTS.start,
                SHIFTS.end - 1
            ),
        });
    }
    let body_len = u64_at(file, file.len() - 20);
    // The file the footer describes: body, one u32 per chunk, footer. Computed in u128:
    // a crafted body_len cannot overflow it.
    let chunks = u128::from(body_len).div_ceil(1u128 << shift);
    let expected = u128::from(body_len) + 4 * chunks + FOOTER_LEN as u128;
    if expected != file.len() as u128 {
        return Err(truncated(
            path,
            "body and chunk table (length recorded in footer)",
            u64::try_from(expected).unwrap_or(u64::MAX),
            file.len() as u64,
        ));
    }
    // `expected` fits: it is the file's length.
    let body_len = body_len as usize;
    let stored = u32_at(file, file.len() - 12);
    let computed = crc32fast::hash(&file[body_len..file.len() - 12]);
    if stored != computed {
        return Err(Error::ChecksumMismatch {
            path: path.to_path_buf(),
            start: body_len as u64,
            end: (file.len() - 12) as u64,
            stored,
            computed,
        });
    }
    Ok(Sealed {
        body_len,
        shift,
        table_at: body_len,
    })
}

/// Checks the footer, the chunk table and every chunk of `file`, and returns the body:
/// the whole file verified (O(body)).
pub(crate) fn verify<'a>(path: &Path, file: &'a [u8]) -> Result<&'a [u8]> {
    open(path, file)?;
    verify_chunked(path, file)
}

/// [`verify`] for a file of any version from [`FIRST_CHUNKED_VERSION`] on.
fn verify_chunked<'a>(path: &Path, file: &'a [u8]) -> Result<&'a [u8]> {
    let sealed = open_chunked(path, file)?;
    for i in 0..sealed.chunks() {
        sealed.check_chunk(path, file, i)?;
    }
    Ok(&file[..sealed.body_len])
}

/// Checks `file` whole as the format version its footer names wrote it, and returns that
/// version and the body: a heddle file of this version or another from version 8 on
/// (chunk table and footer, [`verify`]) or of versions 1 to 7 (a CRC-32 of the whole body
/// in a 20-byte footer). A newer version's layout is unknown here: `Version`.
pub(crate) fn verify_any_version<'a>(path: &Path, file: &'a [u8]) -> Result<(u32, &'a [u8])> {
    let version = version_of(path, file)?;
    if (FIRST_CHUNKED_VERSION..=FORMAT_VERSION).contains(&version) {
        return verify_chunked(path, file).map(|body| (version, body));
    }
    if version > FORMAT_VERSION {
        return Err(Error::Version {
            path: path.to_path_buf(),
            expected: FORMAT_VERSION,
            found: version,
        });
    }
    let body_len = u64_at(file, file.len() - 20);
    let body = &file[..file.len() - OLD_FOOTER_LEN];
    if body_len != body.len() as u64 {
        return Err(truncated(
            path,
            "body (length recorded in footer)",
            body_len,
            body.len() as u64,
        ));
    }
    let stored = u32_at(file, file.len() - 12);
    let computed = crc32fast::hash(body);
    if stored != computed {
        return Err(Error::ChecksumMismatch {
            path: path.to_path_buf(),
            start: 0,
            end: body.len() as u64,
            stored,
            computed,
        });
    }
    Ok((version, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed_with(body: &[u8], shift: u32) -> Vec<u8> {
        let mut buf = body.to_vec();
        append_footer_chunked(&mut buf, shift);
        buf
    }

    #[test]
    fn round_trip_returns_the_body_for_any_chunk_size() {
        let body: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        for shift in [6, 7, 9, 10, 14] {
            for len in [0, 1, 63, 64, 65, 128, 999, 1000] {
                let file = sealed_with(&body[..len], shift);
                let chunks = len.div_ceil(1 << shift);
                assert_eq!(file.len(), len + 4 * chunks + FOOTER_LEN);
                assert_eq!(verify(Path::new("f"), &file).unwrap(), &body[..len]);
                let s = open(Path::new("f"), &file).unwrap();
                assert_eq!((s.body_len, s.shift, s.chunks()), (len, shift, chunks));
            }
        }
    }

    #[test]
    fn a_flipped_body_byte_fails_its_chunk_only() {
        let body = vec![7u8; 1000];
        let mut file = sealed_with(&body, 6);
        file[200] ^= 1; // chunk 3: bytes 192..256
        let p = Path::new("f");
        let s = open(p, &file).expect("the footer and table are intact");
        for i in 0..s.chunks() {
            let r = s.check_chunk(p, &file, i);
            if i == 3 {
                assert!(
                    matches!(
                        r,
                        Err(Error::ChecksumMismatch {
                            start: 192,
                            end: 256,
                            ..
                        })
                    ),
                    "{r:?}"
                );
            } else {
                assert!(r.is_ok(), "chunk {i}: {r:?}");
            }
        }
        assert!(matches!(
            verify(p, &file),
            Err(Error::ChecksumMismatch { start: 192, .. })
        ));
    }

    #[test]
    fn every_footer_defect_has_its_own_error() {
        let p = Path::new("f");
        let good = sealed_with(
            b"hello, chunked world: more than one chunk of 64 bytes, surely; yes",
            6,
        );

        let mut flipped = good.clone();
        flipped[1] ^= 0x40;
        assert!(matches!(
            verify(p, &flipped),
            Err(Error::ChecksumMismatch { start: 0, .. })
        ));

        // The chunk table and the footer's own fields are covered by the footer's CRC.
        let table_at = good.len() - FOOTER_LEN - 8;
        let mut table = good.clone();
        table[table_at] ^= 1;
        assert!(matches!(
            open(p, &table),
            Err(Error::ChecksumMismatch { .. })
        ));

        let mut magic = good.clone();
        *magic.last_mut().unwrap() = b'X';
        assert!(matches!(verify(p, &magic), Err(Error::BadMagic { .. })));

        let mut version = good.clone();
        let at = version.len() - 8;
        version[at] = 42;
        assert!(matches!(
            verify(p, &version),
            Err(Error::Version {
                found: 42,
                expected: FORMAT_VERSION,
                ..
            })
        ));

        let mut shift = good.clone();
        let at = shift.len() - 24;
        shift[at] = 40;
        assert!(matches!(verify(p, &shift), Err(Error::Corrupt { .. })));

        assert!(matches!(
            verify(p, &good[..10]),
            Err(Error::Truncated { .. })
        ));
        // Cut from the front: the footer is intact but the file is shorter than recorded.
        assert!(matches!(
            verify(p, &good[2..]),
            Err(Error::Truncated { .. })
        ));
        let mut huge = good.clone();
        let at = huge.len() - 20;
        huge[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(verify(p, &huge), Err(Error::Truncated { .. })));
    }

    #[test]
    fn files_of_older_versions_are_read_whole_or_refused() {
        let p = Path::new("f");
        // Version 7's layout: body, body_len, crc32(body), version, magic.
        let mut v7 = b"{\"old\": true}".to_vec();
        let crc = crc32fast::hash(&v7);
        v7.extend_from_slice(&13u64.to_le_bytes());
        v7.extend_from_slice(&crc.to_le_bytes());
        v7.extend_from_slice(&7u32.to_le_bytes());
        v7.extend_from_slice(&MAGIC);
        assert_eq!(
            verify_any_version(p, &v7).unwrap(),
            (7, &b"{\"old\": true}"[..])
        );
        assert!(matches!(
            verify(p, &v7),
            Err(Error::Version { found: 7, .. })
        ));
        let mut damaged = v7.clone();
        damaged[2] ^= 1;
        assert!(matches!(
            verify_any_version(p, &damaged),
            Err(Error::ChecksumMismatch { .. })
        ));
        let current = sealed_with(b"new", CHUNK_SHIFT);
        assert_eq!(
            verify_any_version(p, &current).unwrap(),
            (FORMAT_VERSION, &b"new"[..])
        );
        let with_version = |version: u32| {
            let mut file = current.clone();
            let at = file.len() - 8;
            file[at..at + 4].copy_from_slice(&version.to_le_bytes());
            file
        };
        // Version 8's footer is this version's: read whole, refused by `verify`.
        let v8 = with_version(8);
        assert_eq!(verify_any_version(p, &v8).unwrap(), (8, &b"new"[..]));
        assert!(matches!(
            verify(p, &v8),
            Err(Error::Version { found: 8, .. })
        ));
        let mut damaged = v8.clone();
        damaged[1] ^= 1;
        assert!(matches!(
            verify_any_version(p, &damaged),
            Err(Error::ChecksumMismatch { .. })
        ));
        assert!(matches!(
            verify_any_version(p, &with_version(FORMAT_VERSION + 1)),
            Err(Error::Version { .. })
        ));
    }
}
