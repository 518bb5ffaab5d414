//! Segment files whose bytes are checksum-verified on first use, chunk by chunk.
//!
//! Opening a [`CheckedFile`] checks only its footer and chunk table ([`super::footer`]).
//! Every decoder names the byte range it is about to read ([`Integrity::check`]) before
//! reading it; the chunks covering that range are verified against the table the first
//! time anyone asks, and a bit per chunk remembers it. So each chunk is checksummed at
//! most once per open file (per process, shared by every thread: the bits are atomics,
//! and the fast path is one load per chunk, no lock), an index opens without reading its
//! postings or stored fields, and damage is still an error naming the file whenever a
//! query reads a damaged byte — never a wrong answer from an unverified page.
//!
//! A chunk that fails is not remembered: every read of it fails again.

use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use super::footer::{self, Sealed};
use crate::directory::MappedFile;
use crate::error::Result;

/// What a decoder calls before it reads bytes `range` of a body: `Ok` once they are known
/// to be as written, else the error naming the file. A range past the body's end is
/// checked as far as the body goes (the decoder then reports the truncation itself).
pub(crate) trait Integrity {
    fn check(&self, range: Range<usize>) -> Result<()>;
}

/// Bytes that need no check: built in memory, already verified whole, or a fuzzer's input.
pub(crate) struct Trusted;

impl Integrity for Trusted {
    #[inline]
    fn check(&self, _range: Range<usize>) -> Result<()> {
        Ok(())
    }
}

/// A mapped file whose footer and chunk table have been checked; its body's chunks are
/// checked as they are first read.
pub(crate) struct CheckedFile {
    file: MappedFile,
    sealed: Sealed,
    /// Bit `i` set: chunk `i` matched its checksum.
    verified: Box<[AtomicU64]>,
}

impl CheckedFile {
    /// Maps `path` and checks its footer and chunk table (not its body).
    pub(crate) fn open(path: &Path) -> Result<Self> {
        let file = MappedFile::open(path)?;
        let sealed = footer::open(file.path(), file.bytes())?;
        let verified = (0..sealed.chunks().div_ceil(64))
            .map(|_| AtomicU64::new(0))
            .collect();
        Ok(CheckedFile {
            file,
            sealed,
            verified,
        })
    }

    /// The body, footer excluded, **unverified**: read only a range that
    /// [`Integrity::check`] has passed.
    pub(crate) fn body(&self) -> &[u8] {
        &self.file.bytes()[..self.sealed.body_len]
    }

    pub(crate) fn path(&self) -> &Path {
        self.file.path()
    }

    /// Verifies every chunk not verified yet: the whole body.
    pub(crate) fn check_all(&self) -> Result<()> {
        self.check(0..self.sealed.body_len)
    }

    #[cfg(test)]
    fn is_verified(&self, chunk: usize) -> bool {
        self.all_verified(chunk, chunk)
    }

    /// Whether chunks `first..=last` are all verified: one load per 64 chunks.
    #[inline]
    fn all_verified(&self, first: usize, last: usize) -> bool {
        let (first_word, last_word) = (first / 64, last / 64);
        (first_word..=last_word).all(|w| {
            let low = if w == first_word { first % 64 } else { 0 };
            let high = if w == last_word { last % 64 } else { 63 };
            let mask = (u64::MAX >> (63 - high)) & (u64::MAX << low);
            self.verified[w].load(Ordering::Acquire) & mask == mask
        })
    }

    /// Verifies each of chunks `first..=last` not verified yet.
    #[cold]
    #[inline(never)]
    fn verify_chunks(&self, first: usize, last: usize) -> Result<()> {
        for chunk in first..=last {
            let (word, bit) = (chunk / 64, 1u64 << (chunk % 64));
            if self.verified[word].load(Ordering::Acquire) & bit != 0 {
                continue;
            }
            self.sealed
                .check_chunk(self.file.path(), self.file.bytes(), chunk)
                // Zeros read in place of vanished pages fail their checksum: say why.
                .map_err(|e| self.file.check_intact().err().unwrap_or(e))?;
            // Two threads may verify the same chunk at once; both set the same bit.
            self.verified[word].fetch_or(bit, Ordering::Release);
        }
        Ok(())
    }
}

impl Integrity for CheckedFile {
    #[inline]
    fn check(&self, range: Range<usize>) -> Result<()> {
        // Bytes of a file that shrank under its map are never served (directory::sigbus).
        self.file.check_intact()?;
        let end = range.end.min(self.sealed.body_len);
        if range.start >= end {
            return Ok(());
        }
        let shift = self.sealed.shift;
        let (first, last) = (range.start >> shift, (end - 1) >> shift);
        if self.all_verified(first, last) {
            return Ok(());
        }
        self.verify_chunks(first, last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    /// A file of `len` bytes (byte i = i mod 251) in chunks of 64 bytes, with byte
    /// `damage` flipped if given.
    fn file(dir: &Path, len: usize, damage: Option<usize>) -> CheckedFile {
        let mut bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        footer::append_footer_chunked(&mut bytes, 6);
        if let Some(at) = damage {
            bytes[at] ^= 0x10;
        }
        let path = dir.join("f");
        std::fs::write(&path, bytes).unwrap();
        CheckedFile::open(&path).unwrap()
    }

    #[test]
    fn ranges_check_the_chunks_they_touch_and_only_those() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(dir.path(), 1000, Some(300)); // chunk 4: bytes 256..320
        assert!(f.check(0..256).is_ok());
        assert!(f.check(320..1000).is_ok());
        assert!(f.check(5..5).is_ok(), "an empty range reads nothing");
        assert!(
            f.check(2000..3000).is_ok(),
            "past the end: nothing to check"
        );
        for range in [255..257, 300..301, 319..320, 0..1000, 900..2000] {
            let touches = range.start < 320 && range.end > 256;
            let r = f.check(range.clone());
            assert_eq!(r.is_err(), touches, "{range:?}: {r:?}");
        }
        // A failure is not remembered as a success.
        for _ in 0..3 {
            assert!(matches!(
                f.check(256..257),
                Err(Error::ChecksumMismatch {
                    start: 256,
                    end: 320,
                    ..
                })
            ));
        }
        assert!(f.check_all().is_err());
        assert!((0..16).all(|c| f.is_verified(c) == (c != 4)));
        let sound = file(dir.path(), 1000, None);
        assert!(sound.check_all().is_ok());
        assert!((0..16).all(|c| sound.is_verified(c)));
    }

    #[test]
    fn masks_cover_exactly_the_chunks_of_a_range_across_words() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(dir.path(), 64 * 200, None);
        f.check(64 * 60..64 * 131).unwrap(); // chunks 60..=130: words 0, 1 and 2
        for c in 0..200 {
            assert_eq!(f.is_verified(c), (60..=130).contains(&c), "chunk {c}");
        }
        assert!(f.all_verified(60, 130) && f.all_verified(63, 64) && f.all_verified(128, 130));
        assert!(!f.all_verified(59, 130) && !f.all_verified(60, 131));
        assert!(!f.all_verified(0, 199));
    }

    #[test]
    fn threads_share_the_verified_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(dir.path(), 64 * 200, None);
        std::thread::scope(|s| {
            for t in 0..4 {
                let f = &f;
                s.spawn(move || {
                    for i in 0..200 {
                        let at = 64 * ((i * 7 + t * 13) % 200);
                        f.check(at..at + 64).unwrap();
                    }
                });
            }
        });
        assert!((0..200).all(|c| f.is_verified(c)));
    }
}
