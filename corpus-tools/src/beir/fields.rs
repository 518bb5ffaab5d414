//! Parsing one JSONL line into the three BEIR fields without building a JSON tree.
//!
//! serde's own error for a wrongly typed field does not name the field, so the fields are
//! read with a visitor that accepts any JSON value and remembers what it found; the
//! readers then turn "not a string" or "missing" into a [`LineProblem`] that names it.
//! Unknown keys (`metadata`, ...) are skipped by serde_json without allocating.

use std::fmt;

use serde::Deserializer;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::error::LineProblem;

/// One field's value as found on the line.
#[derive(Debug)]
pub(crate) enum FieldValue {
    Str(String),
    /// Another JSON type, by name ("a number", "null", ...), for the error message.
    Other(&'static str),
}

/// The BEIR fields of one line; `None` when the key is absent.
#[derive(Debug, Default)]
pub(crate) struct RawFields {
    pub(crate) id: Option<FieldValue>,
    pub(crate) title: Option<FieldValue>,
    pub(crate) text: Option<FieldValue>,
    duplicate: Option<&'static str>,
}

impl RawFields {
    /// Parses `line`, which must be a single JSON object.
    pub(crate) fn parse(line: &str) -> Result<RawFields, LineProblem> {
        let mut de = serde_json::Deserializer::from_str(line);
        let fields = de
            .deserialize_map(ObjectVisitor)
            .and_then(|f| de.end().map(|()| f))
            .map_err(|e| json_problem(line, e))?;
        if let Some(field) = fields.duplicate {
            return Err(LineProblem::DuplicateField { field });
        }
        Ok(fields)
    }

    /// The `_id` field: required, a non-empty string.
    pub(crate) fn take_id(&mut self) -> Result<String, LineProblem> {
        take_id(&mut self.id)
    }

    pub(crate) fn take_title(&mut self) -> Result<Option<String>, LineProblem> {
        take_string(&mut self.title, "title")
    }

    pub(crate) fn take_text(&mut self) -> Result<Option<String>, LineProblem> {
        take_string(&mut self.text, "text")
    }
}

/// An `_id` field's value: required, a non-empty string.
pub(crate) fn take_id(slot: &mut Option<FieldValue>) -> Result<String, LineProblem> {
    match take_string(slot, "_id")? {
        None => Err(LineProblem::MissingField { field: "_id" }),
        Some(id) if id.is_empty() => Err(LineProblem::EmptyId),
        Some(id) => Ok(id),
    }
}

fn take_string(
    slot: &mut Option<FieldValue>,
    field: &'static str,
) -> Result<Option<String>, LineProblem> {
    match slot.take() {
        None => Ok(None),
        Some(FieldValue::Str(s)) => Ok(Some(s)),
        Some(FieldValue::Other(found)) => Err(LineProblem::NotAString { field, found }),
    }
}

/// serde_json appends " at line L column C" to its messages; the line is always 1 here
/// (one object per line), so the column is reported on its own. A lone surrogate is
/// named as such: serde_json calls it "unexpected end of hex escape" or a "lone leading
/// surrogate" even when it is a trailing one.
pub(crate) fn json_problem(line: &str, e: serde_json::Error) -> LineProblem {
    if let Some((at, escape)) = lone_surrogate(line)
        && at < e.column()
    {
        return LineProblem::LoneSurrogate {
            escape: escape.to_string(),
            column: at + 1,
        };
    }
    let full = e.to_string();
    let message = match full.rfind(" at line ") {
        Some(cut) if e.line() > 0 => full[..cut].to_string(),
        _ => full,
    };
    LineProblem::InvalidJson {
        column: e.column(),
        message,
    }
}

/// The first `\uXXXX` escape of `line` that is a surrogate not paired as UTF-16 requires
/// (high then low), with its 0-based byte offset. Backslashes only occur in JSON strings,
/// so escapes are found without tracking where strings begin.
fn lone_surrogate(line: &str) -> Option<(usize, &str)> {
    let bytes = line.as_bytes();
    let unit = |at: usize| -> Option<u16> {
        let hex = line.get(at + 2..at + 6)?;
        (bytes[at + 1] == b'u').then(|| u16::from_str_radix(hex, 16).ok())?
    };
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        match unit(i) {
            Some(0xD800..=0xDBFF) if matches!(unit(i + 6), Some(0xDC00..=0xDFFF)) => i += 12,
            Some(0xD800..=0xDFFF) => return Some((i, &line[i..i + 6])),
            Some(_) => i += 6,
            // Any other escape is two bytes (`\n`, `\\`, ...).
            None => i += 2,
        }
    }
    None
}

#[derive(Clone, Copy)]
enum Key {
    Id,
    Title,
    Text,
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
                    "title" => Key::Title,
                    "text" => Key::Text,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

impl<'de> de::Deserialize<'de> for FieldValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = FieldValue;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<FieldValue, E> {
        Ok(FieldValue::Str(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<FieldValue, E> {
        Ok(FieldValue::Str(v))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<FieldValue, E> {
        Ok(FieldValue::Other("a boolean"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<FieldValue, E> {
        Ok(FieldValue::Other("a number"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<FieldValue, E> {
        Ok(FieldValue::Other("a number"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<FieldValue, E> {
        Ok(FieldValue::Other("a number"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<FieldValue, E> {
        Ok(FieldValue::Other("null"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FieldValue, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(FieldValue::Other("an array"))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FieldValue, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(FieldValue::Other("an object"))
    }
}

struct ObjectVisitor;

impl<'de> Visitor<'de> for ObjectVisitor {
    type Value = RawFields;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawFields, A::Error> {
        let mut out = RawFields::default();
        while let Some(key) = map.next_key::<Key>()? {
            let (slot, name) = match key {
                Key::Id => (&mut out.id, "_id"),
                Key::Title => (&mut out.title, "title"),
                Key::Text => (&mut out.text, "text"),
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            let value = map.next_value::<FieldValue>()?;
            if slot.is_some() {
                out.duplicate.get_or_insert(name);
            }
            *slot = Some(value);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_strings_and_skips_metadata() {
        let mut f =
            RawFields::parse(r#"{"metadata":{"a":[1,{"b":null}]},"_id":"x\"1","text":"t"}"#)
                .unwrap();
        assert_eq!(f.take_id().unwrap(), "x\"1");
        assert_eq!(f.take_title().unwrap(), None);
        assert_eq!(f.take_text().unwrap().as_deref(), Some("t"));
    }

    #[test]
    fn names_the_json_type_found() {
        for (json, found) in [
            (r#"{"_id":"1","title":3}"#, "a number"),
            (r#"{"_id":"1","title":null}"#, "null"),
            (r#"{"_id":"1","title":[]}"#, "an array"),
            (r#"{"_id":"1","title":{}}"#, "an object"),
            (r#"{"_id":"1","title":true}"#, "a boolean"),
        ] {
            let mut f = RawFields::parse(json).unwrap();
            assert_eq!(
                f.take_title(),
                Err(LineProblem::NotAString {
                    field: "title",
                    found
                }),
                "{json}"
            );
        }
    }

    #[test]
    fn json_errors_report_the_column_without_a_line() {
        let p = RawFields::parse(r#"{"_id": "1",}"#).unwrap_err();
        match p {
            LineProblem::InvalidJson { column, message } => {
                assert_eq!(column, 13);
                assert!(!message.contains("line"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            RawFields::parse(r#"["_id"]"#),
            Err(LineProblem::InvalidJson { .. })
        ));
        assert!(matches!(
            RawFields::parse(r#"{"_id":"1"} x"#),
            Err(LineProblem::InvalidJson { .. })
        ));
    }

    #[test]
    fn a_lone_surrogate_is_named_as_such() {
        for (json, escape, column) in [
            (r#"{"_id":"1","text":"\ud800"}"#, r"\ud800", 20),
            (r#"{"_id":"1","text":"x\uDBFFy"}"#, r"\uDBFF", 21),
            (r#"{"_id":"1","text":"\udc00"}"#, r"\udc00", 20),
            (r#"{"_id":"1","text":"\ud800\u0041"}"#, r"\ud800", 20),
            (r#"{"_id":"\\\ud83d\ude00\ud800\ud800"}"#, r"\ud800", 23),
        ] {
            assert_eq!(
                RawFields::parse(json).unwrap_err(),
                LineProblem::LoneSurrogate {
                    escape: escape.to_string(),
                    column
                },
                "{json}"
            );
        }
        let msg = RawFields::parse(r#"{"_id":"\ud800"}"#)
            .unwrap_err()
            .to_string();
        assert_eq!(
            msg,
            r"lone UTF-16 surrogate \ud800 in a JSON string at column 9"
        );
        // A pair is one character; an escaped backslash before "ud800" is no escape.
        let mut f = RawFields::parse(r#"{"_id":"\ud83d\ude00","text":"\\ud800"}"#).unwrap();
        assert_eq!(f.take_id().unwrap(), "😀");
        assert_eq!(f.take_text().unwrap().as_deref(), Some(r"\ud800"));
        // An error before the surrogate is reported as it is.
        assert!(matches!(
            RawFields::parse(r#"{"_id":1 "text":"\ud800"}"#),
            Err(LineProblem::InvalidJson { .. })
        ));
    }

    #[test]
    fn duplicate_field_is_an_error() {
        assert_eq!(
            RawFields::parse(r#"{"_id":"1","text":"a","text":"b"}"#).unwrap_err(),
            LineProblem::DuplicateField { field: "text" }
        );
    }
}
