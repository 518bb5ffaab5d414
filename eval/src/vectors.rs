//! Caller-supplied vectors (`index --vectors`, `add --vectors`, `search --query-vectors`):
//! a vectors file (`{"_id", "vector"}` lines, heddle_corpus::beir::VectorReader) paired
//! with the documents or queries it belongs to.
//!
//! A corpus's vectors are not all held in memory at once: the file is read through once
//! to check every line and note where each id's line starts (an id and two numbers a
//! vector), and each document's vector is read again from there as the document goes to
//! the writer, so that vectors ride with their documents inside the writer's memory
//! budget instead of beside it (171k × 384 f32 is 263 MB). A file written in corpus
//! order (as `heddle-eval embed --out` writes it) is read front to back both times.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use anyhow::bail;
use heddle_corpus::beir::{BeirError, LineProblem, VectorReader, open_vectors};

use crate::progress::{Progress, plural};

/// Where one id's vector is in the file, and whether a document has taken it.
#[derive(Debug, Clone, Copy)]
struct Place {
    offset: u64,
    line: u64,
    taken: bool,
}

/// The vectors of a corpus, checked whole and read one document at a time.
pub struct DocumentVectors {
    reader: VectorReader<BufReader<File>>,
    path: PathBuf,
    places: HashMap<String, Place>,
    /// The byte offset the reader is at, so that a file in corpus order needs no seek.
    at: u64,
}

impl DocumentVectors {
    /// Reads `path` through, checking every line: valid JSON, a non-empty `_id`, a
    /// non-empty vector of finite values, each of the first vector's dimension (or
    /// `dim`, an existing index's), no id twice. Errors name the file and the line.
    pub fn open(path: &Path, dim: Option<usize>) -> anyhow::Result<Self> {
        // Read twice (see the module's documentation): a pipe would give nothing the
        // second time, and a FIFO would be waited on forever.
        crate::formats::require_rereadable(
            path,
            "once to check every vector, again as each document takes its own",
        )?;
        let mut progress = Progress::new("vectors");
        let mut reader = open_vectors(path)?;
        if let Some(dim) = dim {
            reader.expect_dimension(dim);
        }
        let mut places: HashMap<String, Place> = HashMap::new();
        while let Some(line) = reader.next() {
            let line = line?;
            let place = Place {
                offset: reader.offset(),
                line: reader.line(),
                taken: false,
            };
            match places.entry(line.id) {
                Entry::Occupied(first) => {
                    return Err(BeirError::Malformed {
                        path: path.to_path_buf(),
                        line: place.line,
                        problem: LineProblem::DuplicateId {
                            id: first.key().clone(),
                            first_line: first.get().line,
                        },
                    }
                    .into());
                }
                Entry::Vacant(slot) => {
                    slot.insert(place);
                }
            }
            progress.tick(|| format!("{} checked", plural(places.len() as u64, "vector")));
        }
        let Some(dim) = reader.dimension().filter(|_| !places.is_empty()) else {
            bail!(
                "{}: holds no vectors (one {{\"_id\", \"vector\"}} line for each document is needed)",
                path.display()
            );
        };
        // Read again line by line as documents ask, each line checked again (the file
        // could change between the two readings).
        let mut reader = open_vectors(path)?;
        reader.expect_dimension(dim);
        Ok(DocumentVectors {
            reader,
            path: path.to_path_buf(),
            places,
            at: 0,
        })
    }

    /// The vectors' dimension.
    pub fn dim(&self) -> usize {
        self.reader.dimension().unwrap_or(0)
    }

    /// How many vectors the file holds.
    pub fn len(&self) -> usize {
        self.places.len()
    }

    /// Whether the file holds no vector.
    pub fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// The vector of document `id`, read from its line. `None` if the file has none for
    /// it. A document id read twice gets its vector twice (the writer refuses the repeat).
    pub fn take(&mut self, id: &str) -> anyhow::Result<Option<Vec<f32>>> {
        let Some(place) = self.places.get_mut(id) else {
            return Ok(None);
        };
        place.taken = true;
        let place = *place;
        if place.offset != self.at {
            self.reader.seek(place.offset, place.line)?;
        }
        let line = match self.reader.next() {
            Some(line) => line?,
            None => bail!(self.changed(place.line)),
        };
        if line.id != id || self.reader.line() != place.line {
            bail!(self.changed(place.line));
        }
        self.at = self.reader.position();
        Ok(Some(line.vector))
    }

    fn changed(&self, line: u64) -> String {
        format!(
            "{}:{line}: the file changed while it was read (this line held another id \
             the first time)",
            self.path.display()
        )
    }

    /// The first line (in file order) whose vector no document took: an id that is not
    /// in the corpus.
    pub fn untaken(&self) -> Option<(&str, u64)> {
        self.places
            .iter()
            .filter(|(_, p)| !p.taken)
            .min_by_key(|(_, p)| p.line)
            .map(|(id, p)| (id.as_str(), p.line))
    }

    /// An error for a vector no document of `corpus` took, if there is one.
    pub fn check_all_taken(&self, corpus: &Path) -> anyhow::Result<()> {
        match self.untaken() {
            None => Ok(()),
            Some((id, line)) => bail!(
                "{}:{line}: a vector for id {id:?}, which no document of {} has (every \
                 vector must belong to a document)",
                self.path.display(),
                corpus.display()
            ),
        }
    }

    /// The error for document `id` at `line` of `corpus`, which has no vector.
    pub fn missing(&self, corpus: &Path, line: u64, id: &str) -> anyhow::Error {
        anyhow::anyhow!(
            "{}:{line}: document {id:?} has no vector in {} (every document needs exactly \
             one)",
            corpus.display(),
            self.path.display()
        )
    }
}

/// Every vector of a query-vectors file, in file order, with its line: ids unique, each
/// of `dim` values (the index's) when given. Errors name the file and the line.
pub fn read_query_vectors(
    path: &Path,
    dim: Option<usize>,
) -> anyhow::Result<Vec<(String, Vec<f32>)>> {
    let mut reader = open_vectors(path)?;
    if let Some(dim) = dim {
        reader.expect_dimension(dim);
    }
    let mut first_lines: HashMap<String, u64> = HashMap::new();
    let mut queries = Vec::new();
    while let Some(line) = reader.next() {
        let line = line?;
        if let Some(&first_line) = first_lines.get(&line.id) {
            return Err(BeirError::Malformed {
                path: path.to_path_buf(),
                line: reader.line(),
                problem: LineProblem::DuplicateId {
                    id: line.id,
                    first_line,
                },
            }
            .into());
        }
        first_lines.insert(line.id.clone(), reader.line());
        queries.push((line.id, line.vector));
    }
    if queries.is_empty() {
        bail!("{}: holds no query vectors", path.display());
    }
    Ok(queries)
}
