//! Writing `corpus.jsonl` and `queries.jsonl` in BEIR layout, byte for byte deterministic.

use std::io::{self, Write};

use heddle::Document;

use super::queries::Query;

/// Writes documents as `{"_id":…,"title":…,"text":…}` lines, fields always in that order,
/// no spaces, strings escaped by serde_json (so the same documents give the same bytes).
pub struct CorpusWriter<W: Write> {
    out: W,
    written: u64,
}

impl<W: Write> CorpusWriter<W> {
    pub fn new(out: W) -> Self {
        CorpusWriter { out, written: 0 }
    }

    /// Appends one document line.
    pub fn write(&mut self, doc: &Document) -> io::Result<()> {
        write_line(
            &mut self.out,
            &[("_id", &doc.id), ("title", &doc.title), ("text", &doc.text)],
        )?;
        self.written += 1;
        Ok(())
    }

    /// Documents written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Flushes and returns the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Writes queries as `{"_id":…,"text":…}` lines, fields in that order.
pub struct QueriesWriter<W: Write> {
    out: W,
    written: u64,
}

impl<W: Write> QueriesWriter<W> {
    pub fn new(out: W) -> Self {
        QueriesWriter { out, written: 0 }
    }

    /// Appends one query line.
    pub fn write(&mut self, query: &Query) -> io::Result<()> {
        write_line(&mut self.out, &[("_id", &query.id), ("text", &query.text)])?;
        self.written += 1;
        Ok(())
    }

    /// Appends one query line with its class in BEIR's `metadata` object:
    /// `{"_id":…,"text":…,"metadata":{"class":…}}`. Readers that do not know the field
    /// skip it ([`QueryReader`](super::QueryReader) does).
    pub fn write_with_class(&mut self, query: &Query, class: &str) -> io::Result<()> {
        self.out.write_all(b"{")?;
        write_fields(&mut self.out, &[("_id", &query.id), ("text", &query.text)])?;
        self.out.write_all(b",\"metadata\":{")?;
        write_fields(&mut self.out, &[("class", class)])?;
        self.out.write_all(b"}}\n")?;
        self.written += 1;
        Ok(())
    }

    /// Queries written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Flushes and returns the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

fn write_line(out: &mut impl Write, fields: &[(&str, &str)]) -> io::Result<()> {
    out.write_all(b"{")?;
    write_fields(out, fields)?;
    out.write_all(b"}\n")
}

/// `"key":value` pairs separated by commas, values escaped by serde_json.
fn write_fields(out: &mut impl Write, fields: &[(&str, &str)]) -> io::Result<()> {
    for (i, (key, value)) in fields.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        write!(out, "\"{key}\":")?;
        serde_json::to_writer(&mut *out, value).map_err(io::Error::other)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::beir::{CorpusReader, QueryReader};

    #[test]
    fn corpus_lines_have_fixed_field_order_and_read_back() {
        let docs = vec![
            Document::new("d1", "A \"title\"", "text with\nnewline, tab\t and é"),
            Document::new("d2", "", ""),
        ];
        let mut w = CorpusWriter::new(Vec::new());
        for d in &docs {
            w.write(d).unwrap();
        }
        assert_eq!(w.written(), 2);
        let bytes = w.finish().unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert_eq!(
            text.lines().nth(1).unwrap(),
            r#"{"_id":"d2","title":"","text":""}"#
        );
        assert!(text.starts_with(r#"{"_id":"d1","title":"A \"title\"","text":"text with\n"#));
        let back: Vec<Document> = CorpusReader::new(bytes.as_slice(), "mem")
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, docs);
    }

    #[test]
    fn queries_read_back() {
        let queries = vec![Query::new("1", "what is the origin of covid-19")];
        let mut w = QueriesWriter::new(Vec::new());
        w.write(&queries[0]).unwrap();
        let bytes = w.finish().unwrap();
        assert_eq!(
            bytes,
            b"{\"_id\":\"1\",\"text\":\"what is the origin of covid-19\"}\n"
        );
        let back: Vec<Query> = QueryReader::new(bytes.as_slice(), "mem")
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, queries);
    }

    #[test]
    fn classed_queries_carry_metadata_and_read_back() {
        let q = Query::new("7", "webster \"maiger\"");
        let mut w = QueriesWriter::new(Vec::new());
        w.write_with_class(&q, "frequent-rare").unwrap();
        let bytes = w.finish().unwrap();
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            "{\"_id\":\"7\",\"text\":\"webster \\\"maiger\\\"\",\"metadata\":{\"class\":\"frequent-rare\"}}\n"
        );
        let back: Vec<Query> = QueryReader::new(bytes.as_slice(), "mem")
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, [q]);
    }
}
