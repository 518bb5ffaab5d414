//! Line splitting shared by the BEIR readers: 1-based numbering, BOM, CRLF, blank lines,
//! and a bound on the length of a line.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::error::{BeirError, LineProblem};

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The longest JSONL line that a document of at most `max_document_bytes` of title and
/// text can need. JSON may write one byte of text as six (`\u0001`), and the id, the keys
/// and metadata come on top: 64 KiB for those. Saturating, so no limit overflows.
pub fn max_line_bytes(max_document_bytes: usize) -> u64 {
    (max_document_bytes as u64)
        .saturating_mul(6)
        .saturating_add(64 << 10)
}

/// `path` itself if it is a file, `path/default_name` if it is a directory, so that the
/// `open_*` helpers take either a BEIR directory or the file in it.
pub(crate) fn resolve(path: &Path, default_name: &str) -> PathBuf {
    if path.is_dir() {
        path.join(default_name)
    } else {
        path.to_path_buf()
    }
}

/// Opens `path` for buffered reading, naming the path in the error.
pub(crate) fn open_buffered(path: &Path) -> Result<BufReader<File>, BeirError> {
    File::open(path)
        .map(|f| BufReader::with_capacity(1 << 16, f))
        .map_err(|e| BeirError::io(path, e))
}

/// Reads a BEIR text file line by line. Yields each non-blank line as `&str` with its
/// 1-based line number; strips a trailing `\n` or `\r\n` and a UTF-8 byte order mark at
/// the start of the file. After an io error it yields nothing more (a reader that failed
/// once cannot be trusted to be at a line boundary).
///
/// A line longer than the limit is an error read no further than the limit: memory holds
/// at most `limit` bytes of it, and its rest is skipped (not stored) before the next line.
pub(crate) struct Lines<R> {
    reader: R,
    path: PathBuf,
    buf: Vec<u8>,
    line_no: u64,
    /// Bytes taken from the reader so far.
    consumed: u64,
    /// The byte offset of the start of the line last returned.
    line_start: u64,
    /// The most bytes of a line, its `\n` not counted.
    limit: u64,
    /// The last line was over the limit and the reader is still inside it.
    in_long_line: bool,
    done: bool,
}

impl<R: BufRead> Lines<R> {
    pub(crate) fn new(reader: R, path: PathBuf) -> Self {
        Lines {
            reader,
            path,
            buf: Vec::with_capacity(4096),
            line_no: 0,
            consumed: 0,
            line_start: 0,
            limit: max_line_bytes(heddle::DEFAULT_MAX_DOCUMENT_BYTES),
            in_long_line: false,
            done: false,
        }
    }

    /// Sets the most bytes a line may have (its `\n` not counted).
    pub(crate) fn set_limit(&mut self, limit: u64) {
        self.limit = limit;
    }

    /// The 1-based number of the line last returned by `next_line`.
    pub(crate) fn line(&self) -> u64 {
        self.line_no
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes read so far: where the line after the one last returned starts (or a
    /// blank line before it).
    pub(crate) fn position(&self) -> u64 {
        self.consumed
    }

    /// The byte offset in the file of the line last returned by `next_line` (of its
    /// byte order mark, on a first line that has one).
    pub(crate) fn line_offset(&self) -> u64 {
        self.line_start
    }

    /// An error for the line returned last.
    pub(crate) fn malformed(&self, line: u64, problem: LineProblem) -> BeirError {
        BeirError::Malformed {
            path: self.path.clone(),
            line,
            problem,
        }
    }

    /// The next non-blank line and its number, or `None` at the end of the file.
    pub(crate) fn next_line(&mut self) -> Option<Result<(u64, &str), BeirError>> {
        let (start, end) = loop {
            if self.done {
                return None;
            }
            self.buf.clear();
            let skipped = self.skip_long_line();
            self.line_start = self.consumed;
            // Room for the `\r\n` after a line exactly at the limit: a longer one either
            // has no `\n` within reach (the rest is skipped) or too much before it.
            let read = skipped.and_then(|()| {
                (&mut self.reader)
                    .take(self.limit.saturating_add(2))
                    .read_until(b'\n', &mut self.buf)
            });
            match read {
                Ok(0) => {
                    self.done = true;
                    return None;
                }
                Ok(n) => self.consumed += n as u64,
                Err(e) => {
                    self.done = true;
                    return Some(Err(BeirError::io(self.path.clone(), e)));
                }
            }
            self.line_no += 1;
            let complete = self.buf.ends_with(b"\n");
            let ending = if self.buf.ends_with(b"\r\n") {
                2
            } else {
                usize::from(complete)
            };
            if (self.buf.len() - ending) as u64 > self.limit {
                self.in_long_line = !complete;
                self.buf.clear();
                return Some(Err(self.malformed(
                    self.line_no,
                    LineProblem::LineTooLong { limit: self.limit },
                )));
            }
            let mut end = self.buf.len();
            if self.buf[..end].ends_with(b"\n") {
                end -= 1;
            }
            if self.buf[..end].ends_with(b"\r") {
                end -= 1;
            }
            let start = if self.line_no == 1 && self.buf[..end].starts_with(UTF8_BOM) {
                UTF8_BOM.len()
            } else {
                0
            };
            if !self.buf[start..end].iter().all(u8::is_ascii_whitespace) {
                break (start, end);
            }
        };
        let line_no = self.line_no;
        Some(match std::str::from_utf8(&self.buf[start..end]) {
            Ok(text) => Ok((line_no, text)),
            Err(e) => Err(BeirError::Malformed {
                path: self.path.clone(),
                line: line_no,
                problem: LineProblem::InvalidUtf8 {
                    valid_up_to: e.valid_up_to(),
                },
            }),
        })
    }
}

impl<R: BufRead> Lines<R> {
    /// Consumes the rest of an over-long line, up to and including its `\n`, a buffer at
    /// a time and without keeping it.
    fn skip_long_line(&mut self) -> std::io::Result<()> {
        while self.in_long_line {
            let chunk = self.reader.fill_buf()?;
            let (used, found) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), chunk.is_empty()),
            };
            self.reader.consume(used);
            self.consumed += used as u64;
            self.in_long_line = !found;
        }
        Ok(())
    }
}

impl<R: BufRead + Seek> Lines<R> {
    /// Goes to the line that starts at byte `offset` of the file and is its line number
    /// `line` (as [`Lines::line_offset`] and [`Lines::line`] gave them when it was read):
    /// the next `next_line` reads it again.
    pub(crate) fn seek(&mut self, offset: u64, line: u64) -> Result<(), BeirError> {
        self.reader
            .seek(SeekFrom::Start(offset))
            .map_err(|e| BeirError::io(self.path.clone(), e))?;
        self.consumed = offset;
        self.line_start = offset;
        self.line_no = line.saturating_sub(1);
        self.in_long_line = false;
        self.done = false;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8]) -> Vec<Result<(u64, String), String>> {
        let mut lines = Lines::new(input, PathBuf::from("f.txt"));
        let mut out = Vec::new();
        while let Some(r) = lines.next_line() {
            out.push(
                r.map(|(n, s)| (n, s.to_string()))
                    .map_err(|e| e.to_string()),
            );
        }
        out
    }

    #[test]
    fn strips_bom_crlf_and_skips_blank_lines_keeping_line_numbers() {
        let got = all(b"\xEF\xBB\xBFone\r\n\r\n  \ntwo\nthree");
        assert_eq!(
            got,
            vec![
                Ok((1, "one".to_string())),
                Ok((4, "two".to_string())),
                Ok((5, "three".to_string()))
            ]
        );
    }

    /// Counts the bytes taken from the reader, to show how far a long line was read.
    struct Counted<'a> {
        inner: &'a [u8],
        taken: std::rc::Rc<std::cell::Cell<usize>>,
    }

    impl std::io::Read for Counted<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(out)?;
            self.taken.set(self.taken.get() + n);
            Ok(n)
        }
    }

    #[test]
    fn an_overlong_line_is_refused_without_reading_it_whole() {
        let long = vec![b'x'; 4 << 20];
        let mut input = b"{\"_id\":\"a\"}\n".to_vec();
        input.extend_from_slice(&long);
        input.extend_from_slice(b"\nafter\n");
        let taken = std::rc::Rc::new(std::cell::Cell::new(0));
        let counted = Counted {
            inner: &input,
            taken: taken.clone(),
        };
        // A small buffer, so that what was read is close to what was asked for.
        let mut lines = Lines::new(BufReader::with_capacity(256, counted), "c.jsonl".into());
        lines.set_limit(1000);
        assert_eq!(lines.next_line().unwrap().unwrap(), (1, "{\"_id\":\"a\"}"));
        let err = lines.next_line().unwrap().unwrap_err();
        assert_eq!(
            err.to_string(),
            "c.jsonl:2: line longer than 1000 bytes (not read further)"
        );
        assert!(taken.get() <= 1000 + 2 * 256, "read {} bytes", taken.get());
        assert!(lines.buf.capacity() <= 4096, "{}", lines.buf.capacity());
        // The rest of the long line is skipped; the next line reads as usual.
        assert_eq!(lines.next_line().unwrap().unwrap(), (3, "after"));
        assert!(lines.next_line().is_none());
    }

    #[test]
    fn a_line_exactly_at_the_limit_is_read() {
        let mut lines = Lines::new(&b"12345\r\n123456\n123456\r\n12345"[..], "f".into());
        lines.set_limit(6);
        assert_eq!(lines.next_line().unwrap().unwrap(), (1, "12345"));
        assert_eq!(lines.next_line().unwrap().unwrap(), (2, "123456"));
        assert_eq!(
            lines.next_line().unwrap().unwrap(),
            (3, "123456"),
            "CRLF at the limit"
        );
        assert_eq!(lines.next_line().unwrap().unwrap(), (4, "12345"));
        let mut lines = Lines::new(&b"1234567\n12\n1234567"[..], "f".into());
        lines.set_limit(6);
        assert!(lines.next_line().unwrap().is_err());
        assert_eq!(lines.next_line().unwrap().unwrap(), (2, "12"));
        assert!(lines.next_line().unwrap().is_err());
        assert!(lines.next_line().is_none());
    }

    #[test]
    fn the_line_limit_allows_for_json_escapes_and_never_overflows() {
        assert_eq!(max_line_bytes(1000), 6000 + 65536);
        assert_eq!(max_line_bytes(usize::MAX), u64::MAX);
    }

    #[test]
    fn bom_is_only_stripped_on_the_first_line() {
        let got = all(b"a\n\xEF\xBB\xBFb\n");
        assert_eq!(got[1], Ok((2, "\u{FEFF}b".to_string())));
    }

    #[test]
    fn invalid_utf8_names_file_and_line_then_reading_goes_on() {
        let got = all(b"ok\nbad \xFF\nok again\n");
        assert_eq!(got[0], Ok((1, "ok".to_string())));
        let err = got[1].clone().unwrap_err();
        assert!(err.starts_with("f.txt:2: invalid UTF-8"), "{err}");
        assert_eq!(got[2], Ok((3, "ok again".to_string())));
    }
}
