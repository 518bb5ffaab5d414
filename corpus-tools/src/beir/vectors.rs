//! Dense vectors beside a BEIR corpus or query set: `{"_id": "…", "vector": [f32, …]}`
//! one a line.
//!
//! Every vector of a file has the same number of values: the first vector fixes it, or
//! the caller does ([`VectorReader::expect_dimension`], an index's dimension). Values are
//! JSON numbers that f32 can hold; each is read from its text straight to f32 (correctly
//! rounded), not through f64, so a file written with the shortest text that gives back
//! each f32 (Rust's `{}`, [`write_vector_line`]) reads back bit for bit. Other keys are
//! ignored, as in corpus files.
//!
//! ```no_run
//! let mut reader = heddle_corpus::beir::open_vectors("scifact.vectors.jsonl")?;
//! for line in &mut reader {
//!     let line = line?; // e.g. "…:17: vector has 383 values, expected 384 (the dimension of line 1)"
//!     println!("{}: {} values", line.id, line.vector.len());
//! }
//! # Ok::<(), heddle_corpus::beir::BeirError>(())
//! ```

use std::fmt::{self, Write as _};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Seek, Write};
use std::path::{Path, PathBuf};

use serde::Deserializer;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::error::{BeirError, LineProblem};
use super::fields::{FieldValue, json_problem, take_id};
use super::lines::{Lines, open_buffered};

/// The most values a vector may have: an index's largest dimension.
pub const MAX_VECTOR_VALUES: usize = heddle::MAX_VECTOR_DIM;

/// The longest line of a vectors file: 32 bytes for each of [`MAX_VECTOR_VALUES`] values
/// (an f64 written by Python takes at most 24, its separator 2), and 64 KiB for the id
/// and keys.
pub const MAX_VECTOR_LINE_BYTES: u64 = (MAX_VECTOR_VALUES as u64) * 32 + (64 << 10);

/// One line of a vectors file.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorLine {
    pub id: String,
    /// Finite values; its capacity is its length (what a writer's memory budget counts).
    pub vector: Vec<f32>,
}

/// Streams the vectors of a vectors file, checking each line: JSON, a non-empty string
/// `_id`, a non-empty array `vector` of finite numbers, the same length as the file's
/// first vector (or the expected dimension). Blank lines, `\r\n` and a byte order mark
/// are handled as by [`CorpusReader`](super::CorpusReader). A malformed line yields an
/// error naming the file and the 1-based line; reading goes on with the next line.
///
/// An id given twice is not the reader's business (it keeps nothing per line); the
/// program pairing vectors with documents refuses it.
pub struct VectorReader<R> {
    lines: Lines<R>,
    /// The dimension, and the line whose vector fixed it (`None`: given up front).
    dim: Option<(usize, Option<u64>)>,
}

impl<R: BufRead> VectorReader<R> {
    /// Reads from `reader`; `path` names the source in error messages.
    pub fn new(reader: R, path: impl Into<PathBuf>) -> Self {
        let mut lines = Lines::new(reader, path.into());
        lines.set_limit(MAX_VECTOR_LINE_BYTES);
        VectorReader { lines, dim: None }
    }

    /// Every vector must have `dim` values (an index's dimension), from the first line on.
    pub fn expect_dimension(&mut self, dim: usize) {
        self.dim = Some((dim, None));
    }

    /// The dimension: given, or fixed by the first vector read.
    pub fn dimension(&self) -> Option<usize> {
        self.dim.map(|(dim, _)| dim)
    }

    /// The path errors are reported against.
    pub fn path(&self) -> &Path {
        self.lines.path()
    }

    /// The 1-based line of the vector last returned.
    pub fn line(&self) -> u64 {
        self.lines.line()
    }

    /// The byte offset of the line last returned, for [`VectorReader::seek`].
    pub fn offset(&self) -> u64 {
        self.lines.line_offset()
    }

    /// Bytes read so far: the end of the line last returned.
    pub fn position(&self) -> u64 {
        self.lines.position()
    }

    fn parse(&mut self, line_no: u64, line: &str) -> Result<VectorLine, LineProblem> {
        let (mut id_slot, raw) = parse_object(line)?;
        let id = take_id(&mut id_slot)?;
        let raw = raw.ok_or(LineProblem::MissingField { field: "vector" })?;
        let capacity = self.dim.map_or(0, |(dim, _)| dim);
        let mut vector = parse_values(raw, capacity)?;
        match self.dim {
            Some((expected, first_line)) if vector.len() != expected => {
                return Err(LineProblem::VectorDimension {
                    expected,
                    found: vector.len(),
                    first_line,
                });
            }
            Some(_) => {}
            None => self.dim = Some((vector.len(), Some(line_no))),
        }
        vector.shrink_to_fit();
        Ok(VectorLine { id, vector })
    }
}

impl<R: BufRead + Seek> VectorReader<R> {
    /// Goes back (or ahead) to the line at byte `offset`, line number `line`, as
    /// [`VectorReader::offset`] and [`VectorReader::line`] gave them: the next vector read
    /// is that line's.
    pub fn seek(&mut self, offset: u64, line: u64) -> Result<(), BeirError> {
        self.lines.seek(offset, line)
    }
}

impl<R: BufRead> Iterator for VectorReader<R> {
    type Item = Result<VectorLine, BeirError>;

    fn next(&mut self) -> Option<Self::Item> {
        let (line_no, line) = match self.lines.next_line()? {
            Ok(l) => l,
            Err(e) => return Some(Err(e)),
        };
        // The line borrows the reader's buffer; parse it into owned values first.
        let line = line.to_owned();
        Some(
            self.parse(line_no, &line)
                .map_err(|p| self.lines.malformed(line_no, p)),
        )
    }
}

/// Opens a vectors file.
pub fn open_vectors(path: impl AsRef<Path>) -> Result<VectorReader<BufReader<File>>, BeirError> {
    let path = path.as_ref();
    Ok(VectorReader::new(open_buffered(path)?, path))
}

/// Writes one line of a vectors file: `{"_id":…,"vector":[…]}` and `\n`, each value in the
/// shortest text that reads back as the same f32. A non-finite value is refused
/// (`InvalidInput`) and nothing is written.
pub fn write_vector_line(out: &mut impl Write, id: &str, vector: &[f32]) -> io::Result<()> {
    if let Some(at) = vector.iter().position(|v| !v.is_finite()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("vector of {id:?}: value {at} is {}", vector[at]),
        ));
    }
    let mut line = String::with_capacity(16 + id.len() + vector.len() * 12);
    line.push_str("{\"_id\":");
    line.push_str(&serde_json::to_string(id).map_err(io::Error::other)?);
    line.push_str(",\"vector\":[");
    for (i, value) in vector.iter().enumerate() {
        if i > 0 {
            line.push(',');
        }
        let _ = write!(line, "{value}");
    }
    line.push_str("]}\n");
    out.write_all(line.as_bytes())
}

/// The `_id` and the raw `vector` of one line, which must be one JSON object.
fn parse_object(line: &str) -> Result<(Option<FieldValue>, Option<&RawValue>), LineProblem> {
    let mut de = serde_json::Deserializer::from_str(line);
    let parsed = de
        .deserialize_map(ObjectVisitor)
        .and_then(|fields| de.end().map(|()| fields));
    let fields = match parsed {
        Ok(fields) => fields,
        Err(e) => return Err(non_finite_literal(line, &e).unwrap_or(json_problem(line, e))),
    };
    if let Some(field) = fields.duplicate {
        return Err(LineProblem::DuplicateField { field });
    }
    Ok((fields.id, fields.vector))
}

/// `NaN`, `Infinity` or `-Infinity` where serde_json stopped: what Python's `json.dumps`
/// writes for a non-finite float, worth naming as such rather than as a syntax error.
fn non_finite_literal(line: &str, e: &serde_json::Error) -> Option<LineProblem> {
    // serde_json's column is 1-based and points at or just past the offending byte.
    let at = e.column().saturating_sub(1);
    (at.saturating_sub(1)..=at).find_map(|start| {
        let rest = line.get(start..)?;
        ["NaN", "Infinity", "-Infinity"]
            .into_iter()
            .find(|literal| rest.starts_with(literal))
            .map(|literal| LineProblem::NonFiniteLiteral {
                literal,
                column: start + 1,
            })
    })
}

/// The values of a JSON array already checked to be valid JSON by serde_json, each
/// number read from its text as an f32.
fn parse_values(raw: &RawValue, capacity: usize) -> Result<Vec<f32>, LineProblem> {
    let text = raw.get().as_bytes();
    let mut at = skip_space(text, 0);
    if text.get(at) != Some(&b'[') {
        return Err(LineProblem::NotAnArray {
            found: json_type(text.get(at)),
        });
    }
    at = skip_space(text, at + 1);
    if text.get(at) == Some(&b']') {
        return Err(LineProblem::EmptyVector);
    }
    let mut values = Vec::with_capacity(capacity.min(MAX_VECTOR_VALUES));
    loop {
        let index = values.len();
        if index == MAX_VECTOR_VALUES {
            return Err(LineProblem::VectorTooLong {
                max: MAX_VECTOR_VALUES,
            });
        }
        let start = at;
        if !matches!(text.get(at), Some(b'-' | b'0'..=b'9')) {
            return Err(LineProblem::VectorValueNotANumber {
                at: index,
                found: json_type(text.get(at)),
            });
        }
        while matches!(
            text.get(at),
            Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
        ) {
            at += 1;
        }
        // JSON's number syntax (already checked) is a subset of Rust's float syntax.
        let number = std::str::from_utf8(&text[start..at]).unwrap_or_default();
        let value: f32 = number.parse().unwrap_or(f32::NAN);
        if !value.is_finite() {
            return Err(LineProblem::VectorValueNotFinite {
                at: index,
                text: number.to_string(),
            });
        }
        values.push(value);
        at = skip_space(text, at);
        match text.get(at) {
            Some(b',') => at = skip_space(text, at + 1),
            // Valid JSON: the only other thing after a value is the closing bracket.
            _ => return Ok(values),
        }
    }
}

fn skip_space(text: &[u8], mut at: usize) -> usize {
    while matches!(text.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// The JSON type a valid value starting with `first` has, for error messages.
fn json_type(first: Option<&u8>) -> &'static str {
    match first {
        Some(b'"') => "a string",
        Some(b'[') => "an array",
        Some(b'{') => "an object",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        Some(b'-' | b'0'..=b'9') => "a number",
        _ => "nothing",
    }
}

/// The keys of a vectors line: `_id` as any JSON value (named if not a string), `vector`
/// as its raw text, anything else skipped.
#[derive(Default)]
struct Fields<'de> {
    id: Option<FieldValue>,
    vector: Option<&'de RawValue>,
    duplicate: Option<&'static str>,
}

enum Key {
    Id,
    Vector,
    Other,
}

impl<'de> de::Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(match v {
                    "_id" => Key::Id,
                    "vector" => Key::Vector,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

struct ObjectVisitor;

impl<'de> Visitor<'de> for ObjectVisitor {
    type Value = Fields<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'de>, A::Error> {
        let mut out = Fields::default();
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Id => {
                    let value = map.next_value::<FieldValue>()?;
                    if out.id.replace(value).is_some() {
                        out.duplicate.get_or_insert("_id");
                    }
                }
                Key::Vector => {
                    let value = map.next_value::<&'de RawValue>()?;
                    if out.vector.replace(value).is_some() {
                        out.duplicate.get_or_insert("vector");
                    }
                }
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(input: &str) -> Vec<Result<VectorLine, BeirError>> {
        VectorReader::new(input.as_bytes(), "v.jsonl").collect()
    }

    /// The message of the only error in `input`, checked to name file and line.
    fn only_error(input: &str, line: u64) -> String {
        let errors: Vec<BeirError> = read(input).into_iter().filter_map(Result::err).collect();
        assert_eq!(errors.len(), 1, "{errors:?}");
        let msg = errors[0].to_string();
        assert!(msg.starts_with(&format!("v.jsonl:{line}: ")), "{msg}");
        msg
    }

    #[test]
    fn reads_ids_and_vectors_and_ignores_other_keys() {
        let got: Vec<VectorLine> = read(
            "{\"_id\":\"a\",\"vector\":[1, -0.5, 2e-3],\"model\":\"m\"}\n\
             {\"vector\":[ 0 ,1.5e1,-3 ],\"_id\":\"b\"}\n",
        )
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
        assert_eq!(got[0].id, "a");
        assert_eq!(got[0].vector, [1.0, -0.5, 0.002]);
        assert_eq!(got[1].vector, [0.0, 15.0, -3.0]);
        assert_eq!(got[1].vector.capacity(), 3);
    }

    #[test]
    fn values_read_back_bit_for_bit() {
        // Random bit patterns and the extremes, written as write_vector_line writes them.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut values: Vec<f32> = (0..20_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                f32::from_bits((state >> 32) as u32)
            })
            .filter(|v| v.is_finite())
            .collect();
        values.extend([f32::MIN_POSITIVE, f32::MAX, -f32::MAX, 1e-45, -0.0, 0.1]);
        let mut file = Vec::new();
        for (i, chunk) in values.chunks(64).enumerate() {
            write_vector_line(&mut file, &format!("d{i}"), chunk).unwrap();
        }
        let mut reader = VectorReader::new(file.as_slice(), "v.jsonl");
        reader.expect_dimension(64);
        let mut back = Vec::new();
        for line in reader {
            match line {
                Ok(line) => back.extend(line.vector),
                // The last chunk is shorter than 64.
                Err(e) => assert!(e.to_string().contains("expected 64"), "{e}"),
            }
        }
        let whole = values.len() / 64 * 64;
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&back), bits(&values[..whole]));
    }

    #[test]
    fn values_are_rounded_once_from_their_text() {
        // Just above the midpoint between 1 and the next f32: f32 rounding of the text
        // goes up; rounding to f64 first lands on the midpoint itself, which then rounds
        // to even (1.0). A file from a program that prints many digits can hold such text.
        let text = "1.00000005960464477539062500001";
        assert_eq!((text.parse::<f64>().unwrap() as f32).to_bits(), 0x3f80_0000);
        let line = format!("{{\"_id\":\"a\",\"vector\":[{text}]}}");
        let got = read(&line).remove(0).unwrap();
        assert_eq!(got.vector[0].to_bits(), 0x3f80_0001);
    }

    #[test]
    fn invalid_json_names_file_and_line() {
        let msg = only_error(
            "{\"_id\":\"a\",\"vector\":[1]}\n{\"_id\":\"b\",\"vector\":[1,]}\n",
            2,
        );
        assert!(msg.contains("invalid JSON"), "{msg}");
    }

    #[test]
    fn missing_or_empty_id_is_named() {
        let msg = only_error("\n{\"vector\":[1]}\n", 2);
        assert!(msg.ends_with("missing field \"_id\""), "{msg}");
        let msg = only_error("{\"_id\":\"\",\"vector\":[1]}", 1);
        assert!(msg.ends_with("field \"_id\" is empty"), "{msg}");
        let msg = only_error("{\"_id\":7,\"vector\":[1]}", 1);
        assert!(
            msg.ends_with("field \"_id\" is not a string (found a number)"),
            "{msg}"
        );
    }

    #[test]
    fn missing_empty_or_wrongly_typed_vector_is_named() {
        let msg = only_error("{\"_id\":\"a\"}", 1);
        assert!(msg.ends_with("missing field \"vector\""), "{msg}");
        let msg = only_error("{\"_id\":\"a\",\"vector\":[ ]}", 1);
        assert!(msg.ends_with("field \"vector\" is empty"), "{msg}");
        let msg = only_error("{\"_id\":\"a\",\"vector\":\"1,2\"}", 1);
        assert!(
            msg.ends_with("\"vector\" is not an array (found a string)"),
            "{msg}"
        );
        let msg = only_error("{\"_id\":\"a\",\"vector\":null}", 1);
        assert!(msg.ends_with("(found null)"), "{msg}");
        let msg = only_error("{\"_id\":\"a\",\"vector\":[1,\"2\",3]}", 1);
        assert!(
            msg.ends_with("vector value 1 is not a number (found a string)"),
            "{msg}"
        );
        let msg = only_error("{\"_id\":\"a\",\"vector\":[1,[2]]}", 1);
        assert!(
            msg.ends_with("vector value 1 is not a number (found an array)"),
            "{msg}"
        );
        let msg = only_error("{\"_id\":\"a\",\"vector\":[1],\"vector\":[2]}", 1);
        assert!(msg.ends_with("field \"vector\" appears twice"), "{msg}");
    }

    #[test]
    fn non_finite_values_are_refused() {
        let msg = only_error("{\"_id\":\"a\",\"vector\":[1,2,1e39]}", 1);
        assert!(
            msg.ends_with("vector value 2 (1e39) is not a finite f32"),
            "{msg}"
        );
        let msg = only_error("{\"_id\":\"a\",\"vector\":[1,-3.5e38]}", 1);
        assert!(msg.contains("vector value 1 (-3.5e38)"), "{msg}");
        for (line, literal, column) in [
            ("{\"_id\":\"a\",\"vector\":[1,NaN]}", "NaN", 24),
            ("{\"_id\":\"a\",\"vector\":[Infinity]}", "Infinity", 22),
            (
                "{\"_id\":\"a\",\"vector\":[0.5, -Infinity]}",
                "-Infinity",
                27,
            ),
        ] {
            let msg = only_error(line, 1);
            assert_eq!(
                msg,
                format!(
                    "v.jsonl:1: {literal} at column {column}: a vector's values must be finite numbers"
                )
            );
        }
    }

    #[test]
    fn the_first_vector_fixes_the_dimension() {
        let input = "{\"_id\":\"a\",\"vector\":[1,2,3]}\n\n{\"_id\":\"b\",\"vector\":[1,2]}\n\
                     {\"_id\":\"c\",\"vector\":[1,2,3]}\n";
        let msg = only_error(input, 3);
        assert!(
            msg.ends_with("vector has 2 values, expected 3 (the dimension of line 1)"),
            "{msg}"
        );
        let mut reader = VectorReader::new(input.as_bytes(), "v.jsonl");
        reader.expect_dimension(2);
        let results: Vec<_> = reader.collect();
        let msg = results[0].as_ref().unwrap_err().to_string();
        assert_eq!(msg, "v.jsonl:1: vector has 3 values, expected 2");
        assert!(results[1].is_ok());
    }

    #[test]
    fn a_vector_longer_than_any_index_is_not_read_further() {
        let values = vec!["0"; MAX_VECTOR_VALUES + 1].join(",");
        let msg = only_error(&format!("{{\"_id\":\"a\",\"vector\":[{values}]}}"), 1);
        assert!(msg.ends_with("vector has more than 65536 values"), "{msg}");
    }

    #[test]
    fn offsets_lead_back_to_their_lines() {
        let input = "\u{FEFF}{\"_id\":\"a\",\"vector\":[1]}\r\n\n{\"_id\":\"b\",\"vector\":[2]}\n\
                     {\"_id\":\"c\",\"vector\":[3]}";
        let mut reader = VectorReader::new(std::io::Cursor::new(input.as_bytes()), "v.jsonl");
        let mut places = Vec::new();
        while let Some(line) = reader.next() {
            places.push((line.unwrap().id, reader.offset(), reader.line()));
        }
        assert_eq!(places[0], ("a".to_string(), 0, 1));
        // 3 bytes of BOM, 24 of the first line, its \r\n, the blank line.
        assert_eq!(places[1], ("b".to_string(), 30, 3));
        for (id, offset, line) in places.iter().rev() {
            reader.seek(*offset, *line).unwrap();
            let again = reader.next().unwrap().unwrap();
            assert_eq!(&again.id, id);
            assert_eq!(reader.line(), *line);
        }
    }
}
