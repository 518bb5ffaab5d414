//! Line splitting shared by the BEIR readers: 1-based numbering, BOM, CRLF, blank lines.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use super::error::{BeirError, LineProblem};

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

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
pub(crate) struct Lines<R> {
    reader: R,
    path: PathBuf,
    buf: Vec<u8>,
    line_no: u64,
    done: bool,
}

impl<R: BufRead> Lines<R> {
    pub(crate) fn new(reader: R, path: PathBuf) -> Self {
        Lines {
            reader,
            path,
            buf: Vec::with_capacity(4096),
            line_no: 0,
            done: false,
        }
    }

    /// The 1-based number of the line last returned by `next_line`.
    pub(crate) fn line(&self) -> u64 {
        self.line_no
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
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
            match self.reader.read_until(b'\n', &mut self.buf) {
                Ok(0) => {
                    self.done = true;
                    return None;
                }
                Ok(_) => {}
                Err(e) => {
                    self.done = true;
                    return Some(Err(BeirError::io(self.path.clone(), e)));
                }
            }
            self.line_no += 1;
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
