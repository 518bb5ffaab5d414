//! What is encoded: a BEIR corpus's documents as `title + " " + text`, trimmed, or a query
//! set's texts; and the digest of exactly that, which names the cache.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::path::{Path, PathBuf};

use anyhow::bail;
use heddle::Document;
use heddle_corpus::beir::{self, BeirError, LineProblem};
use sha2::{Digest, Sha256};

/// Which kind of file, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A BEIR `corpus.jsonl` (or the directory holding it).
    Corpus(PathBuf),
    /// BEIR `queries.jsonl` or TREC topics (`qid<TAB>text`).
    Queries(PathBuf),
}

/// One text to encode, with its id and the line it came from (0 when the format has no
/// lines to name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub line: u64,
    pub id: String,
    pub text: String,
}

/// The text a document is encoded as: its title and text joined by one space, trimmed.
/// BEIR's dense retrieval evaluation (`beir.retrieval.models.SentenceBERT.encode_corpus`)
/// feeds sentence-transformers exactly this, and the published all-MiniLM-L6-v2 BEIR
/// figures come from it; a document without a title is its text alone.
pub fn document_text(doc: &Document) -> String {
    let mut text = String::with_capacity(doc.title.len() + 1 + doc.text.len());
    text.push_str(&doc.title);
    text.push(' ');
    text.push_str(&doc.text);
    text.trim().to_string()
}

impl Input {
    /// The file read, as its errors name it (a directory resolved to the file in it).
    pub fn path(&self) -> PathBuf {
        match self {
            Input::Corpus(p) if p.is_dir() => p.join("corpus.jsonl"),
            Input::Queries(p) if p.is_dir() => p.join("queries.jsonl"),
            Input::Corpus(p) | Input::Queries(p) => p.clone(),
        }
    }

    /// "documents" or "queries", for messages.
    pub fn noun(&self) -> &'static str {
        match self {
            Input::Corpus(_) => "documents",
            Input::Queries(_) => "queries",
        }
    }

    /// Every item in file order, or the first error (naming file and line). Queries are
    /// read whole (a query set is small); a corpus is streamed.
    pub fn items(&self) -> anyhow::Result<Box<dyn Iterator<Item = anyhow::Result<Item>>>> {
        match self {
            Input::Corpus(path) => {
                let mut reader = beir::open_corpus(path)?;
                Ok(Box::new(std::iter::from_fn(move || {
                    let doc = reader.next()?;
                    let line = reader.line();
                    Some(doc.map_err(anyhow::Error::from).map(|doc| Item {
                        line,
                        text: document_text(&doc),
                        id: doc.id,
                    }))
                })))
            }
            Input::Queries(path) => {
                let queries = crate::formats::read_topics(path)?;
                Ok(Box::new(queries.into_iter().map(|q| {
                    Ok(Item {
                        line: 0,
                        id: q.id,
                        text: q.text,
                    })
                })))
            }
        }
    }
}

/// What an input holds, found by reading it through once: its digest, and each id's
/// place in it (for the cache to check its lines against, and to skip what is done).
#[derive(Debug)]
pub struct Survey {
    /// Lower-case hex sha256 of the ids and texts, in order ([`Survey::of`]).
    pub sha256: String,
    /// Each id and its 0-based position among the items.
    pub ordinals: HashMap<String, u32>,
    /// The longest text, in bytes.
    pub longest: usize,
}

impl Survey {
    /// Reads `input` through: sha256 over a format tag and, for every item in order, the
    /// length and bytes of its id and of its text (the text as encoded, so a change to
    /// anything else of a line, or a reformatted file, keeps the digest). An id given
    /// twice is an error naming both lines; so is a malformed line.
    pub fn of(input: &Input) -> anyhow::Result<Survey> {
        let mut hasher = Sha256::new();
        hasher.update(b"heddle-embed input 1\0");
        let mut ordinals = HashMap::new();
        let mut lines: Vec<u64> = Vec::new();
        let mut longest = 0;
        for item in input.items()? {
            let item = item?;
            for part in [item.id.as_bytes(), item.text.as_bytes()] {
                hasher.update((part.len() as u64).to_le_bytes());
                hasher.update(part);
            }
            longest = longest.max(item.text.len());
            let Ok(ordinal) = u32::try_from(ordinals.len()) else {
                bail!("{}: more than 2^32 items", input.path().display());
            };
            match ordinals.entry(item.id) {
                Entry::Occupied(first) => {
                    return Err(duplicate(
                        input,
                        &item.line,
                        first.key(),
                        lines[*first.get() as usize],
                    ));
                }
                Entry::Vacant(slot) => {
                    slot.insert(ordinal);
                }
            }
            lines.push(item.line);
        }
        let sha256 = hasher
            .finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        Ok(Survey {
            sha256,
            ordinals,
            longest,
        })
    }

    /// How many items.
    pub fn len(&self) -> usize {
        self.ordinals.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ordinals.is_empty()
    }
}

fn duplicate(input: &Input, line: &u64, id: &str, first_line: u64) -> anyhow::Error {
    if *line == 0 {
        return anyhow::anyhow!("{}: id {id:?} appears twice", input.path().display());
    }
    BeirError::Malformed {
        path: input.path(),
        line: *line,
        problem: LineProblem::DuplicateId {
            id: id.to_string(),
            first_line,
        },
    }
    .into()
}

/// `path` as given if it is absolute, else joined to the working directory, for the
/// record of where a cache's input came from.
pub(crate) fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}
