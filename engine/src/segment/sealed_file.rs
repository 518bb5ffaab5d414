//! Writing a heddle file front to back without holding its body: each chunk's CRC-32 is
//! computed as its bytes pass, and the chunk table and footer of [`super::footer`] are
//! appended at the end. A merge writes its large files this way, so that its memory
//! does not grow with the segment it builds (docs/DECISIONS.md, "A merge streams its
//! output").

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::footer::{self, CHUNK_SHIFT};
use crate::error::{Error, Result};

/// Buffered writes: large enough that a file costs few system calls.
const WRITE_BUFFER: usize = 1 << 20;

/// A file being written, body first. [`SealedFileWriter::finish`] seals it; a writer
/// dropped before that leaves a file with no valid footer, which the caller removes.
pub(crate) struct SealedFileWriter {
    path: PathBuf,
    out: BufWriter<File>,
    body_len: u64,
    /// The open chunk's CRC so far, and its length.
    chunk: crc32fast::Hasher,
    in_chunk: usize,
    chunk_crcs: Vec<u32>,
}

impl SealedFileWriter {
    /// Creates the file at `path` fresh ([`crate::directory::create_fresh`]: a planted
    /// symlink is refused, never written through).
    pub(crate) fn create(path: &Path) -> Result<Self> {
        let file = crate::directory::create_fresh(path)?;
        Ok(SealedFileWriter {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(WRITE_BUFFER, file),
            body_len: 0,
            chunk: crc32fast::Hasher::new(),
            in_chunk: 0,
            chunk_crcs: Vec::new(),
        })
    }

    /// Body bytes written so far: the offset of the next byte within the body.
    pub(crate) fn position(&self) -> u64 {
        self.body_len
    }

    /// Appends `bytes` to the body.
    pub(crate) fn write(&mut self, mut bytes: &[u8]) -> Result<()> {
        self.out
            .write_all(bytes)
            .map_err(|e| Error::io(&self.path, e))?;
        self.body_len += bytes.len() as u64;
        let chunk_len = 1usize << CHUNK_SHIFT;
        while !bytes.is_empty() {
            let take = (chunk_len - self.in_chunk).min(bytes.len());
            self.chunk.update(&bytes[..take]);
            self.in_chunk += take;
            bytes = &bytes[take..];
            if self.in_chunk == chunk_len {
                let done = std::mem::replace(&mut self.chunk, crc32fast::Hasher::new());
                self.chunk_crcs.push(done.finalize());
                self.in_chunk = 0;
            }
        }
        Ok(())
    }

    /// Appends the chunk table and footer and flushes the file (not fsynced: the
    /// caller syncs it with the rest of its segment). Returns its path.
    pub(crate) fn finish(mut self) -> Result<PathBuf> {
        if self.in_chunk > 0 {
            let last = std::mem::replace(&mut self.chunk, crc32fast::Hasher::new());
            self.chunk_crcs.push(last.finalize());
        }
        let tail = footer::table_and_footer(&self.chunk_crcs, CHUNK_SHIFT, self.body_len);
        self.out
            .write_all(&tail)
            .and_then(|()| self.out.flush())
            .map_err(|e| Error::io(&self.path, e))?;
        Ok(self.path)
    }
}

/// Writes `body`, sealed, to `path` through a [`SealedFileWriter`].
pub(crate) fn write_sealed(path: &Path, body: &[u8]) -> Result<PathBuf> {
    let mut file = SealedFileWriter::create(path)?;
    file.write(body)?;
    file.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes that differ from position to position, so a chunk written twice or skipped
    /// changes the file.
    fn body(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 31 + i / 251) as u8).collect()
    }

    #[test]
    fn streamed_files_equal_files_sealed_in_memory_however_the_body_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let chunk = 1usize << CHUNK_SHIFT;
        for len in [0, 1, chunk - 1, chunk, chunk + 1, 3 * chunk + 17] {
            let body = body(len);
            let expected = footer::sealed(body.clone());
            for piece in [1, 7, 1000, chunk, chunk + 3, len.max(1)] {
                let path = dir.path().join(format!("f-{len}-{piece}"));
                let mut file = SealedFileWriter::create(&path).unwrap();
                for part in body.chunks(piece) {
                    file.write(part).unwrap();
                }
                assert_eq!(file.position(), len as u64);
                file.finish().unwrap();
                let written = std::fs::read(&path).unwrap();
                assert!(
                    written == expected,
                    "{len}-byte body written {piece} bytes at a time differs from sealed()"
                );
                assert_eq!(footer::verify(&path, &written).unwrap(), &body[..]);
            }
        }
    }
}
