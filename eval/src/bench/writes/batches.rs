//! The documents the writes arm commits: generated ones whose ids cannot collide with an
//! index's, or the lines of a BEIR corpus file, in batches of `--write-docs`.
//!
//! Every written document carries two marker words at the end of its text: one shared by
//! all written documents ([`ALL_MARKER`]) and one naming its batch
//! ([`Batch::marker`]). Searching a batch's marker with `k` above the batch size must
//! return exactly the batch: that is how the arm checks that a commit is visible as soon
//! as it returns, through nothing but [`Backend::search`](crate::bench::Backend::search).

use std::path::{Path, PathBuf};

use anyhow::{Context, ensure};
use heddle::Document;
use heddle_corpus::synth::{Generator, GeneratorConfig, LengthModel, WordModel, doc_id};

/// The word every written document carries. Letters only: every analyzer keeps it whole
/// and none drops it as a stop word.
pub const ALL_MARKER: &str = "zqwrittenmark";

/// The prefix of generated ids. Generated corpora use 8-character base-36 ids, so
/// `w-` + one of those is never among them.
pub const ID_PREFIX: &str = "w-";

/// Where the written documents come from.
#[derive(Debug, Clone, PartialEq)]
pub enum WriteSource {
    /// TREC-COVID-style documents from the synthetic generator with this seed; document
    /// `i` of the arm is generator document `i` with id `w-` + its id.
    Generated { seed: u64 },
    /// Consecutive lines of a BEIR corpus.jsonl, ids as they are.
    Corpus(PathBuf),
}

impl WriteSource {
    pub fn describe(&self) -> String {
        match self {
            WriteSource::Generated { seed } => {
                format!("generated (TREC-COVID-style, seed {seed}, ids {ID_PREFIX}…)")
            }
            WriteSource::Corpus(path) => format!("{}", path.display()),
        }
    }
}

/// One commit's documents.
#[derive(Debug, Clone)]
pub struct Batch {
    /// The word only this batch's documents carry.
    pub marker: String,
    pub docs: Vec<Document>,
    /// The documents' ids, sorted: what a search for the marker must return.
    pub sorted_ids: Vec<String>,
}

impl Batch {
    /// Whether `hits` (a search for the marker) are exactly this batch's documents.
    pub fn is_exactly(&self, mut hits: Vec<String>) -> bool {
        hits.sort_unstable();
        hits == self.sorted_ids
    }
}

/// The marker word of batch `b`.
pub fn batch_marker(b: usize) -> String {
    // Digits would join the letters into one word anyway; letters keep every analyzer
    // (stemmers included) from treating batches 1 and 10 alike.
    let mut n = b;
    let mut tag = String::new();
    loop {
        tag.insert(0, char::from(b'a' + (n % 26) as u8));
        n /= 26;
        if n == 0 {
            break;
        }
    }
    format!("zqbatchmark{tag}q")
}

/// `count` batches of `size` documents from `source`. A corpus file with fewer
/// documents gives fewer batches; it must hold at least one.
pub fn load(source: &WriteSource, size: usize, count: usize) -> anyhow::Result<Vec<Batch>> {
    ensure!(size >= 1, "--write-docs must be at least 1");
    let batches = match source {
        WriteSource::Generated { seed } => generate(*seed, size, count),
        WriteSource::Corpus(path) => read(path, size, count)?,
    };
    Ok(batches
        .into_iter()
        .enumerate()
        .map(|(b, mut docs)| {
            let marker = batch_marker(b);
            for d in &mut docs {
                d.text.push(' ');
                d.text.push_str(ALL_MARKER);
                d.text.push(' ');
                d.text.push_str(&marker);
            }
            let mut sorted_ids: Vec<String> = docs.iter().map(|d| d.id.clone()).collect();
            sorted_ids.sort_unstable();
            Batch {
                marker,
                docs,
                sorted_ids,
            }
        })
        .collect())
}

fn generate(seed: u64, size: usize, count: usize) -> Vec<Vec<Document>> {
    let total = (size * count) as u64;
    let generator = Generator {
        model: WordModel::builtin(),
        lengths: LengthModel::trec_covid(),
        config: GeneratorConfig {
            docs: total,
            seed,
            threads: 1,
            ..GeneratorConfig::default()
        },
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(total.max(1) as usize);
    let per = total.div_ceil(threads as u64);
    let mut all: Vec<Document> = std::thread::scope(|s| {
        let parts: Vec<_> = (0..threads as u64)
            .map(|t| {
                let generator = &generator;
                s.spawn(move || {
                    (t * per..((t + 1) * per).min(total))
                        .map(|i| {
                            let mut d = generator.document(i);
                            d.id = format!("{ID_PREFIX}{}", doc_id(i));
                            d
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|h| h.join().expect("a generator thread panicked"))
            .collect()
    });
    let mut out = Vec::with_capacity(count);
    while !all.is_empty() {
        let rest = all.split_off(size.min(all.len()));
        out.push(std::mem::replace(&mut all, rest));
    }
    out
}

fn read(path: &Path, size: usize, count: usize) -> anyhow::Result<Vec<Vec<Document>>> {
    let mut reader = heddle_corpus::beir::open_corpus(path)?;
    let file = reader.path().to_path_buf();
    let mut out: Vec<Vec<Document>> = Vec::new();
    let mut batch = Vec::with_capacity(size);
    while out.len() < count {
        let Some(doc) = reader.next() else { break };
        batch.push(doc.with_context(|| format!("{}:{}", file.display(), reader.line()))?);
        if batch.len() == size {
            out.push(std::mem::replace(&mut batch, Vec::with_capacity(size)));
        }
    }
    ensure!(
        !out.is_empty(),
        "{} holds {} documents; --write-docs asks for {size} a commit",
        file.display(),
        batch.len()
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn generated_batches_have_fresh_ids_and_markers() {
        let batches = load(&WriteSource::Generated { seed: 3 }, 50, 3).unwrap();
        assert_eq!(batches.len(), 3);
        let ids: HashSet<&str> = batches
            .iter()
            .flat_map(|b| b.docs.iter().map(|d| d.id.as_str()))
            .collect();
        assert_eq!(ids.len(), 150, "no id repeats across batches");
        assert!(ids.iter().all(|id| id.starts_with("w-") && id.len() == 10));
        for (i, b) in batches.iter().enumerate() {
            assert_eq!(b.docs.len(), 50);
            assert_eq!(b.marker, batch_marker(i));
            assert!(b.docs.iter().all(|d| d.text.ends_with(&b.marker)));
            assert!(b.docs.iter().all(|d| d.text.contains(ALL_MARKER)));
        }
        let again = load(&WriteSource::Generated { seed: 3 }, 50, 3).unwrap();
        assert_eq!(again[2].docs, batches[2].docs, "deterministic");
    }

    #[test]
    fn markers_are_distinct_words_after_analysis() {
        use heddle::AnalyzerConfig;
        for config in [
            AnalyzerConfig::english(),
            AnalyzerConfig::lucene_english(),
            AnalyzerConfig::plain(),
        ] {
            let analyzer = heddle::Analyzer::new(config);
            let mut seen = HashSet::new();
            for b in 0..2_000 {
                let tokens = analyzer.tokens(&batch_marker(b));
                assert_eq!(tokens.len(), 1, "{}", batch_marker(b));
                assert!(seen.insert(tokens[0].clone()), "batch {b} collides");
            }
            assert_eq!(analyzer.tokens(ALL_MARKER).len(), 1);
        }
    }

    #[test]
    fn a_corpus_file_gives_whole_batches() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("corpus.jsonl");
        let lines: String = (0..7)
            .map(|i| format!("{{\"_id\":\"d{i}\",\"title\":\"t\",\"text\":\"x\"}}\n"))
            .collect();
        std::fs::write(&path, lines).unwrap();
        let batches = load(&WriteSource::Corpus(path.clone()), 3, 5).unwrap();
        assert_eq!(batches.len(), 2, "7 lines make two whole batches of 3");
        assert_eq!(batches[1].docs[0].id, "d3");
        let err = load(&WriteSource::Corpus(path), 8, 1).unwrap_err();
        assert!(err.to_string().contains("holds 7 documents"), "{err}");
    }
}
