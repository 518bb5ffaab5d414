//! Turning the word and length models into documents, in parallel, with fixed bytes.
//!
//! Document `i` depends only on (seed, i) and the models: it is drawn from its own random
//! stream. Workers take chunks of documents in any order; the writer puts the chunks
//! back in order. The thread count therefore changes the speed, never the bytes.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

use heddle::Document;

use super::lengths::LengthModel;
use super::model::WordModel;
use super::rng::{Purpose, Stream};
use crate::beir::CorpusWriter;
use crate::queries::DfTable;

/// Documents per unit of work.
const CHUNK: u64 = 1024;
/// Document frequencies are tracked for word ids below this (all head words and the
/// first tail words; ids past it are too rare to be query terms).
pub(crate) const DF_RANKS: u64 = 1 << 20;

/// How a corpus is generated. [`GeneratorConfig::default`] is TREC-COVID's size.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratorConfig {
    pub docs: u64,
    pub seed: u64,
    /// Worker threads (1 or more). Does not change the output.
    pub threads: usize,
    /// Probability that a word repeats an earlier word of the same document (a Pólya
    /// urn over the document so far). Keeps every word's overall frequency but makes
    /// words bursty, as in real text: a document that uses a rare term tends to use it
    /// again, so its document frequency is lower than its collection frequency implies.
    pub burstiness: f64,
    /// Number of topics; each document has one (see [`WordModel`]'s topics). 0 or 1
    /// turns topics off.
    pub topics: u64,
    /// Fraction of fresh words drawn from the document's topic. Capped by what the model
    /// can compensate for ([`WordModel::max_topicality`]).
    pub topicality: f64,
}

/// TREC-COVID's size (BEIR paper, table 1).
pub const TREC_COVID_DOCS: u64 = 171_332;

impl Default for GeneratorConfig {
    fn default() -> Self {
        GeneratorConfig {
            docs: TREC_COVID_DOCS,
            seed: 0,
            threads: std::thread::available_parallelism().map_or(1, usize::from),
            // Calibrated against SciFact: mean cf/df by frequency rank within 0.15 of the
            // real corpus's for ranks 50-10,000 (docs/CORPUS.md).
            burstiness: 0.35,
            topics: 100,
            topicality: 0.1,
        }
    }
}

/// What a generation run produced.
#[derive(Debug, Clone)]
pub struct GeneratedCorpus {
    pub docs: u64,
    pub tokens: u64,
    /// Document frequency of word id `r` for `r < DF_RANKS`, for choosing query terms.
    pub(crate) df: Vec<u32>,
}

impl GeneratedCorpus {
    /// The document frequencies of the generated words (those with ids below 2^20, which
    /// includes every word frequent enough to be a query term), as a query-set table.
    pub fn df_table(&self, model: &WordModel) -> DfTable {
        let terms = self
            .df
            .iter()
            .enumerate()
            .filter(|(_, df)| **df > 0)
            .map(|(rank, df)| (model.word(rank as u64), *df))
            .collect();
        DfTable::new(self.docs, terms)
    }
}

/// Generates documents from a word model and a length model.
#[derive(Debug, Clone)]
pub struct Generator {
    pub model: WordModel,
    pub lengths: LengthModel,
    pub config: GeneratorConfig,
}

/// Reused buffers for one worker.
#[derive(Default)]
struct Scratch {
    ids: Vec<u64>,
    seen: Vec<u64>,
}

impl Generator {
    /// Document number `index` (0-based). Pure: the same index gives the same document.
    pub fn document(&self, index: u64) -> Document {
        let mut scratch = Scratch::default();
        self.document_into(index, &mut scratch)
    }

    fn document_into(&self, index: u64, scratch: &mut Scratch) -> Document {
        let mut s = Stream::new(self.config.seed, Purpose::Documents, index);
        let lengths = self.lengths.sample(&mut s);
        let n = (lengths.title + lengths.text) as usize;
        let topics = self.config.topics;
        let (topic, topicality) = if topics > 1 {
            let tau = self.config.topicality.min(self.model.max_topicality());
            (s.below(topics), tau)
        } else {
            (0, 0.0)
        };
        let ids = &mut scratch.ids;
        ids.clear();
        for j in 0..n {
            let id = if j > 0 && s.chance(self.config.burstiness) {
                ids[s.below(j as u64) as usize]
            } else if topicality > 0.0 && s.chance(topicality) {
                self.model.sample_topical(&mut s, topic, topics)
            } else {
                self.model.sample_base(&mut s, topicality)
            };
            ids.push(id);
        }
        let (title_ids, text_ids) = ids.split_at(lengths.title as usize);
        let mut title = String::with_capacity(title_ids.len() * 8);
        self.push_sentence(title_ids, &mut title, &mut s, false);
        let mut text = String::with_capacity(text_ids.len() * 8);
        let mut rest = text_ids;
        while !rest.is_empty() {
            let len = (s.between(6, 36) as usize).min(rest.len());
            if !text.is_empty() {
                text.push(' ');
            }
            self.push_sentence(&rest[..len], &mut text, &mut s, true);
            rest = &rest[len..];
        }
        Document::new(doc_id(index), title, text)
    }

    /// Words separated by spaces, the first capitalised, an occasional comma, and a
    /// full stop if `stop`.
    fn push_sentence(&self, ids: &[u64], out: &mut String, s: &mut Stream, stop: bool) {
        for (k, &id) in ids.iter().enumerate() {
            if k > 0 {
                if s.chance(0.06) {
                    out.push(',');
                }
                out.push(' ');
            }
            let start = out.len();
            self.model.push_word(id, out);
            if k == 0
                && out
                    .as_bytes()
                    .get(start)
                    .is_some_and(u8::is_ascii_lowercase)
            {
                out[start..start + 1].make_ascii_uppercase();
            }
        }
        if stop && !ids.is_empty() {
            out.push('.');
        }
    }

    /// Writes `corpus.jsonl` to `out`; calls `progress(done, total)` after each chunk.
    pub fn write_corpus<W: Write>(
        &self,
        out: W,
        progress: &mut dyn FnMut(u64, u64),
    ) -> io::Result<(GeneratedCorpus, W)> {
        let total = self.config.docs;
        let chunks = total.div_ceil(CHUNK);
        let next = AtomicU64::new(0);
        let threads = self.config.threads.max(1);
        let mut writer = CorpusWriter::new(out);
        let mut df = vec![0u32; DF_RANKS as usize];
        let mut tokens = 0u64;
        std::thread::scope(|scope| -> io::Result<()> {
            let (tx, rx) = mpsc::sync_channel::<(u64, Vec<Document>)>(threads * 2);
            let mut workers = Vec::new();
            for _ in 0..threads {
                let tx = tx.clone();
                let next = &next;
                workers.push(scope.spawn(move || {
                    let mut scratch = Scratch::default();
                    let mut df = vec![0u32; DF_RANKS as usize];
                    let mut tokens = 0u64;
                    loop {
                        let chunk = next.fetch_add(1, Ordering::Relaxed);
                        if chunk >= chunks {
                            break;
                        }
                        let range = chunk * CHUNK..((chunk + 1) * CHUNK).min(total);
                        let docs: Vec<Document> = range
                            .map(|i| {
                                let doc = self.document_into(i, &mut scratch);
                                tokens += scratch.ids.len() as u64;
                                count_df(&scratch.ids, &mut scratch.seen, &mut df);
                                doc
                            })
                            .collect();
                        if tx.send((chunk, docs)).is_err() {
                            break; // The writer failed; stop.
                        }
                    }
                    (df, tokens)
                }));
            }
            drop(tx);
            let mut pending: BTreeMap<u64, Vec<Document>> = BTreeMap::new();
            let mut expected = 0u64;
            let mut result = Ok(());
            for (chunk, docs) in rx {
                pending.insert(chunk, docs);
                while let Some(docs) = pending.remove(&expected) {
                    for doc in &docs {
                        if result.is_ok() {
                            result = writer.write(doc);
                        }
                    }
                    expected += 1;
                    progress(writer.written(), total);
                }
                if result.is_err() {
                    break; // Dropping rx makes the workers stop.
                }
            }
            for w in workers {
                let (worker_df, worker_tokens) = w.join().expect("generator worker panicked");
                for (total, d) in df.iter_mut().zip(worker_df) {
                    *total += d;
                }
                tokens += worker_tokens;
            }
            result
        })?;
        let out = writer.finish()?;
        Ok((
            GeneratedCorpus {
                docs: total,
                tokens,
                df,
            },
            out,
        ))
    }
}

fn count_df(ids: &[u64], seen: &mut Vec<u64>, df: &mut [u32]) {
    seen.clear();
    seen.extend(ids.iter().copied().filter(|&r| r < DF_RANKS));
    seen.sort_unstable();
    seen.dedup();
    for &r in seen.iter() {
        df[r as usize] += 1;
    }
}

/// An 8-character base-36 id, like CORD-19's `005b2j4b`: document index times a constant
/// coprime to 36, modulo 36^8 — a bijection, so ids never repeat.
pub fn doc_id(index: u64) -> String {
    const SPACE: u64 = 36u64.pow(8);
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut n = ((index as u128 * 1_500_450_271 + 1_913_727_271_423) % SPACE as u128) as u64;
    let mut id = [b'0'; 8];
    for slot in id.iter_mut().rev() {
        *slot = DIGITS[(n % 36) as usize];
        n /= 36;
    }
    String::from_utf8(id.to_vec()).expect("ascii")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(seed: u64, threads: usize) -> Generator {
        Generator {
            model: WordModel::builtin(),
            lengths: LengthModel::trec_covid(),
            config: GeneratorConfig {
                docs: 2_500,
                seed,
                threads,
                ..GeneratorConfig::default()
            },
        }
    }

    fn bytes(g: &Generator) -> Vec<u8> {
        g.write_corpus(Vec::new(), &mut |_, _| {}).unwrap().1
    }

    #[test]
    fn thread_count_does_not_change_the_bytes() {
        assert_eq!(bytes(&small(5, 1)), bytes(&small(5, 3)));
    }

    #[test]
    fn a_document_depends_only_on_seed_and_index() {
        let g = small(5, 1);
        let d = g.document(1234);
        assert_eq!(d, g.document(1234));
        assert_ne!(d, g.document(1235));
        assert_ne!(d, small(6, 1).document(1234));
        let line = String::from_utf8(bytes(&g))
            .unwrap()
            .lines()
            .nth(1234)
            .unwrap()
            .to_string();
        let mut w = CorpusWriter::new(Vec::new());
        w.write(&d).unwrap();
        assert_eq!(line + "\n", String::from_utf8(w.finish().unwrap()).unwrap());
    }

    #[test]
    fn ids_are_distinct_eight_character_base36() {
        let ids: Vec<String> = (0..50_000).map(doc_id).collect();
        assert!(ids.iter().all(|id| id.len() == 8));
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len());
    }

    #[test]
    fn df_counts_each_word_once_per_document() {
        let mut df = vec![0u32; 8];
        let mut seen = Vec::new();
        count_df(&[3, 1, 3, 3, DF_RANKS + 5], &mut seen, &mut df);
        count_df(&[3], &mut seen, &mut df);
        assert_eq!(df[..4], [0, 1, 0, 2]);
    }
}
