//! Turns a batch of documents into the bytes of one segment: analysis and inversion in
//! parallel chunks, a k-way merge of the chunks' sorted terms, then encoding.
//!
//! Nothing here touches the disk or any lock: the writer calls it with no reader waiting.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::lengths::DocLengths;
use super::progress::{CommitPhase, CommitProgress, PhaseReport};
use super::reorder::{self, ForwardIndex, Reorder, ReorderProgress};
use super::{SegmentComponent, SegmentMeta, footer};
use crate::analysis::Analyzer;
use crate::document::Document;
use crate::field::{Field, FieldCounts};
use crate::postings::PostingsWriter;
use crate::store::StoreWriter;
use crate::termdict::{TermDictWriter, TermInfo};
use crate::vectors::GraphSettings;

/// A segment ready to be written: each component's complete file bytes (footer included).
pub(crate) struct BuiltSegment {
    pub meta: SegmentMeta,
    pub files: Vec<(SegmentComponent, Vec<u8>)>,
    pub analysis: Duration,
    /// Choosing the document order (zero without reordering).
    pub reorder: Duration,
    pub encoding: Duration,
    /// The heap the build held at most beyond the documents themselves, summed from
    /// its structures' capacities: every chunk's inversion (term maps, postings,
    /// lengths) as if all peaked at once, plus the encoded files. The writer's memory
    /// budget counts it (see [`crate::IndexWriter::set_memory_budget`]).
    pub heap_bytes: usize,
}

/// One term's postings, doc ids segment-global and ascending.
#[derive(Default)]
struct TermPostings {
    docs: Vec<u32>,
    tfs: Vec<u32>,
}

/// The inverted form of one field over a run of documents.
#[derive(Default)]
struct FieldInversion {
    /// Term → its index in `postings`.
    ids: FxHashMap<String, u32>,
    /// Word before stemming → its term's index: a word seen before is not stemmed again
    /// (stemming is the most expensive step of analysis, and words repeat, Zipf-like).
    words: FxHashMap<String, u32>,
    postings: Vec<TermPostings>,
}

impl FieldInversion {
    fn add_word(&mut self, word: &str, analyzer: &Analyzer, doc: u32) {
        let id = match self.words.get(word) {
            Some(&id) => id,
            None => {
                let id = self.term_id(&analyzer.stem(word));
                self.words.insert(word.to_string(), id);
                id
            }
        };
        let p = &mut self.postings[id as usize];
        if p.docs.last() == Some(&doc) {
            *p.tfs.last_mut().expect("docs and tfs grow together") += 1;
        } else {
            p.docs.push(doc);
            p.tfs.push(1);
        }
    }

    /// Heap bytes held now: both maps' tables and keys, and every postings list.
    fn heap_bytes(&self) -> usize {
        fn map_bytes(map: &FxHashMap<String, u32>) -> usize {
            // hashbrown: one control byte a bucket beside the (key, value) slot.
            map.capacity() * (std::mem::size_of::<(String, u32)>() + 1)
                + map.keys().map(String::capacity).sum::<usize>()
        }
        map_bytes(&self.ids)
            + map_bytes(&self.words)
            + self.postings.capacity() * std::mem::size_of::<TermPostings>()
            + self
                .postings
                .iter()
                .map(|p| (p.docs.capacity() + p.tfs.capacity()) * 4)
                .sum::<usize>()
    }

    fn term_id(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.ids.get(term) {
            return id;
        }
        let id = self.postings.len() as u32;
        self.ids.insert(term.to_string(), id);
        self.postings.push(TermPostings::default());
        id
    }

    /// The terms sorted by their bytes.
    fn into_sorted(self) -> Vec<(String, TermPostings)> {
        let mut postings: Vec<Option<TermPostings>> = self.postings.into_iter().map(Some).collect();
        let mut terms: Vec<(String, TermPostings)> = self
            .ids
            .into_iter()
            .map(|(term, id)| {
                (
                    term,
                    postings[id as usize].take().expect("each id is taken once"),
                )
            })
            .collect();
        terms.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        terms
    }
}

/// A contiguous run of documents, inverted: one sorted term list per indexed field.
struct ChunkInversion {
    fields: Vec<Vec<(String, TermPostings)>>,
    title_lens: Vec<u32>,
    text_lens: Vec<u32>,
    /// The most heap the inversion held (just before its maps were dropped).
    heap_bytes: usize,
}

/// Documents (analysis) and terms (encoding) between progress reports: rare enough to
/// cost nothing, often enough for a line a second on any corpus.
const REPORT_EVERY: usize = 1024;

fn invert_chunk(
    docs: &[Document],
    first_doc: u32,
    fields: &[Field],
    analyzer: &Analyzer,
    report: &PhaseReport,
) -> ChunkInversion {
    let slot = |f: Field| fields.iter().position(|&g| g == f);
    let (title_slot, text_slot) = (slot(Field::Title), slot(Field::Text));
    let mut inversions: Vec<FieldInversion> =
        fields.iter().map(|_| FieldInversion::default()).collect();
    let mut title_lens = Vec::with_capacity(docs.len());
    let mut text_lens = Vec::with_capacity(docs.len());
    let mut scratch = String::new();
    let mut reported = 0;
    for (i, doc) in docs.iter().enumerate() {
        if i - reported == REPORT_EVERY {
            report.add(REPORT_EVERY as u64);
            reported = i;
        }
        let doc_id = first_doc + i as u32;
        for (text, own_slot, lens) in [
            (&doc.title, title_slot, &mut title_lens),
            (&doc.text, text_slot, &mut text_lens),
        ] {
            let mut len = 0u32;
            analyzer.for_each_word(text, &mut scratch, |word| {
                len += 1;
                inversions[0].add_word(word, analyzer, doc_id); // flat is always slot 0
                if let Some(s) = own_slot {
                    inversions[s].add_word(word, analyzer, doc_id);
                }
            });
            lens.push(len);
        }
    }
    report.add((docs.len() - reported) as u64);
    // `into_sorted` moves the terms out of the maps before dropping them: their
    // sorted vector is briefly held beside the maps' tables.
    let heap_bytes = inversions
        .iter()
        .map(|inv| inv.heap_bytes() + inv.ids.len() * std::mem::size_of::<(String, TermPostings)>())
        .sum::<usize>()
        + (title_lens.capacity() + text_lens.capacity()) * 4;
    ChunkInversion {
        heap_bytes,
        fields: inversions
            .into_iter()
            .map(FieldInversion::into_sorted)
            .collect(),
        title_lens,
        text_lens,
    }
}

/// Each term of the chunks' sorted term lists of one field (in term order) with its
/// postings' doc ids, one slice per chunk holding the term.
fn merged_doc_lists(chunks: &[Vec<(String, TermPostings)>]) -> Vec<Vec<&[u32]>> {
    let mut heads = vec![0usize; chunks.len()];
    let mut out = Vec::new();
    while let Some(term) = heads
        .iter()
        .zip(chunks)
        .filter_map(|(&h, c)| c.get(h).map(|(t, _)| t.as_str()))
        .min()
    {
        let mut lists = Vec::with_capacity(1);
        for (h, c) in heads.iter_mut().zip(chunks) {
            if let Some((t, p)) = c.get(*h)
                && t == term
            {
                lists.push(p.docs.as_slice());
                *h += 1;
            }
        }
        out.push(lists);
    }
    out
}

/// Merges the chunks' sorted term lists of one field and encodes the term dictionary
/// and postings bodies, doc ids mapped through `new_id` (old → new) if given. Returns
/// (dictionary body, postings body, term count).
fn encode_field(
    chunks: Vec<Vec<(String, TermPostings)>>,
    lens: &[u32],
    new_id: Option<&[u32]>,
    report: &PhaseReport,
) -> (Vec<u8>, Vec<u8>, u64) {
    let mut unreported = 0;
    let mut iters: Vec<_> = chunks
        .into_iter()
        .map(|c| c.into_iter().peekable())
        .collect();
    let mut dict = TermDictWriter::default();
    let mut postings_body = Vec::new();
    let mut encoder = PostingsWriter::new();
    let (mut docs_buf, mut tfs_buf) = (Vec::new(), Vec::new());
    let mut pairs = Vec::new();
    // k-way merge: chunks are contiguous doc ranges in order, so concatenating one
    // term's postings chunk by chunk keeps its doc ids ascending.
    while let Some(term) = iters
        .iter_mut()
        .filter_map(|it| it.peek().map(|(t, _)| t.clone()))
        .min()
    {
        docs_buf.clear();
        tfs_buf.clear();
        for it in iters.iter_mut() {
            if it.peek().is_some_and(|(t, _)| *t == term) {
                unreported += 1;
                if unreported == REPORT_EVERY {
                    report.add(REPORT_EVERY as u64);
                    unreported = 0;
                }
                let (_, p) = it.next().expect("peeked");
                docs_buf.extend_from_slice(&p.docs);
                tfs_buf.extend_from_slice(&p.tfs);
            }
        }
        if let Some(new_id) = new_id {
            renumber(&mut docs_buf, &mut tfs_buf, new_id, &mut pairs);
        }
        let offset = postings_body.len() as u64;
        let summary = encoder.encode(
            &docs_buf,
            &tfs_buf,
            |d| lens[d as usize],
            &mut postings_body,
        );
        dict.push(
            term.as_bytes(),
            TermInfo {
                postings_offset: offset,
                postings_len: summary.byte_len,
                df: summary.df,
            },
        );
    }
    report.add(unreported as u64);
    let terms = dict.len() as u64;
    (dict.into_body(), postings_body, terms)
}

/// Maps one term's postings to new doc ids and puts them back in doc order.
fn renumber(docs: &mut [u32], tfs: &mut [u32], new_id: &[u32], pairs: &mut Vec<u64>) {
    pairs.clear();
    pairs.extend(
        docs.iter()
            .zip(tfs.iter())
            .map(|(&d, &tf)| (u64::from(new_id[d as usize]) << 32) | u64::from(tf)),
    );
    pairs.sort_unstable();
    for ((d, tf), &p) in docs.iter_mut().zip(tfs.iter_mut()).zip(pairs.iter()) {
        *d = (p >> 32) as u32;
        *tf = p as u32;
    }
}

/// Builds segment `name` from `docs`, indexing `fields` (which must start with `Flat`)
/// and, with a `vector_dim`, each document's vector (which the writer checked) and, if
/// `graph` asks for one at this size, the vectors' graph, using
/// the threads of `pool`, its documents in the order `reorder` chooses, telling
/// `observer` each phase's progress.
#[allow(clippy::too_many_arguments)]
pub(crate) fn build_segment(
    name: &str,
    docs: &[Document],
    fields: &[Field],
    vector_dim: Option<u32>,
    graph: &GraphSettings,
    analyzer: &Analyzer,
    pool: &rayon::ThreadPool,
    reorder: &Reorder,
    progress: Option<ReorderProgress>,
    observer: Option<&CommitProgress>,
) -> BuiltSegment {
    assert_eq!(
        fields.first(),
        Some(&Field::Flat),
        "flat is always indexed, first"
    );
    let started = Instant::now();
    let report = PhaseReport::start(observer, CommitPhase::Analysis, docs.len() as u64);
    let chunk_len = docs
        .len()
        .div_ceil(pool.current_num_threads().max(1))
        .max(1);
    let chunks: Vec<ChunkInversion> = pool.install(|| {
        docs.par_chunks(chunk_len)
            .enumerate()
            .map(|(c, chunk)| {
                invert_chunk(chunk, (c * chunk_len) as u32, fields, analyzer, &report)
            })
            .collect()
    });
    report.finish();
    let analysis = started.elapsed();

    let mut per_field: Vec<Vec<Vec<(String, TermPostings)>>> =
        fields.iter().map(|_| Vec::new()).collect();
    // Chunks invert in parallel: their peaks may coincide.
    let inversion_bytes: usize = chunks.iter().map(|c| c.heap_bytes).sum();
    let (mut title_lens, mut text_lens) = (Vec::with_capacity(docs.len()), Vec::new());
    text_lens.reserve(docs.len());
    for chunk in chunks {
        title_lens.extend_from_slice(&chunk.title_lens);
        text_lens.extend_from_slice(&chunk.text_lens);
        for (slot, terms) in chunk.fields.into_iter().enumerate() {
            per_field[slot].push(terms);
        }
    }

    // `order[new] = old`, and its inverse; `None` keeps the insertion order.
    let started = Instant::now();
    let order: Option<Vec<u32>> = match reorder {
        Reorder::None => None,
        Reorder::Bp(config) => pool.install(|| {
            // The caller's reorder progress, and the commit's observer as the phase.
            let progress: Option<ReorderProgress> = match (progress.clone(), observer) {
                (p, None) => p,
                (p, Some(o)) => {
                    let o = o.clone();
                    Some(Arc::new(move |done: u64, total: u64| {
                        if let Some(p) = &p {
                            p(done, total);
                        }
                        o(CommitPhase::Reorder, done, total);
                    }))
                }
            };
            let graph = ForwardIndex::from_postings(
                docs.len(),
                &merged_doc_lists(&per_field[0]), // flat: every indexed word
                config,
            );
            Some(reorder::bp_order(&graph, config, progress))
        }),
    };
    let new_id: Option<Vec<u32>> = order.as_ref().map(|order| {
        let mut new_id = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            new_id[old as usize] = new as u32;
        }
        new_id
    });
    let reorder_time = started.elapsed();

    let started = Instant::now();
    let mut lengths = DocLengths::for_fields(fields);
    for i in 0..docs.len() {
        let old = order.as_ref().map_or(i, |o| o[i] as usize);
        let (title, text) = (title_lens[old], text_lens[old]);
        lengths.push(|f| match f {
            Field::Flat => title + text,
            Field::Title => title,
            Field::Text => text,
        });
    }
    let tokens = lengths.tokens();
    let chunk_terms = per_field.iter().flatten().map(|c| c.len() as u64).sum();
    let report = PhaseReport::start(observer, CommitPhase::Encoding, chunk_terms);
    // Fields encode independently: one task each.
    let encoded: Vec<(Vec<u8>, Vec<u8>, u64)> = pool.install(|| {
        per_field
            .into_par_iter()
            .zip(fields.par_iter())
            .map(|(chunks, &f)| encode_field(chunks, lengths.of(f), new_id.as_deref(), &report))
            .collect()
    });
    let mut terms = FieldCounts::default();
    let mut files = Vec::with_capacity(2 * fields.len() + 2);
    for ((dict, postings, count), &f) in encoded.into_iter().zip(fields) {
        terms.set(f, count);
        files.push((SegmentComponent::Terms(f), footer::sealed(dict)));
        files.push((SegmentComponent::Postings(f), footer::sealed(postings)));
    }
    let mut store = StoreWriter::default();
    for i in 0..docs.len() {
        let doc = &docs[order.as_ref().map_or(i, |o| o[i] as usize)];
        store.push(&doc.id, &doc.title);
    }
    files.push((SegmentComponent::Lengths, footer::sealed(lengths.body())));
    files.push((SegmentComponent::Store, footer::sealed(store.into_body())));
    report.finish();
    let (mut vector_graph, mut graph_bytes) = (false, 0);
    if let Some(dim) = vector_dim {
        let rows = (0..docs.len()).map(|i| {
            let doc = &docs[order.as_ref().map_or(i, |o| o[i] as usize)];
            doc.vector.as_deref().unwrap_or_default() // checked: never empty
        });
        let body = crate::vectors::encode_rows(dim, docs.len(), rows);
        // Linked from the encoded rows, in the segment's doc order.
        let graph_file = graph.wants(docs.len() as u32).then(|| {
            let report = PhaseReport::start(observer, CommitPhase::Graph, docs.len() as u64);
            let progress = |done: u64, _total: u64| report.set(done);
            let (graph_body, heap) = pool.install(|| {
                crate::vectors::graph_body(&body, docs.len() as u32, dim, graph, &progress)
            });
            report.finish();
            (vector_graph, graph_bytes) = (true, heap);
            footer::sealed(graph_body)
        });
        files.push((SegmentComponent::Vectors, footer::sealed(body)));
        if let Some(bytes) = graph_file {
            files.push((SegmentComponent::VectorGraph, bytes));
        }
    }
    // The term lists are consumed as the files are encoded, so inversion and output
    // never both peak; summing them overstates a little, never understates. The graph's
    // links under construction are held beside the encoded files, and counted with
    // them.
    let output_bytes: usize = files
        .iter()
        .map(|(_, bytes)| bytes.capacity())
        .sum::<usize>()
        + graph_bytes;
    let order_bytes =
        (order.as_ref().map_or(0, Vec::capacity) + new_id.as_ref().map_or(0, Vec::capacity)) * 4;
    let length_bytes = (title_lens.capacity() + text_lens.capacity()) * 4;
    BuiltSegment {
        heap_bytes: inversion_bytes + output_bytes + order_bytes + length_bytes,
        meta: SegmentMeta {
            name: name.to_string(),
            doc_count: docs.len() as u32,
            fields: fields.to_vec(),
            tokens,
            terms,
            deletes: None,
            vector_dim,
            vector_graph,
        },
        files,
        analysis,
        reorder: reorder_time,
        encoding: started.elapsed(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::AnalyzerConfig;

    fn build(docs: &[Document], graph: GraphSettings) -> BuiltSegment {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        build_segment(
            "seg-000001",
            docs,
            &[Field::Flat],
            Some(512),
            &graph,
            &Analyzer::new(AnalyzerConfig::plain()),
            &pool,
            &Reorder::None,
            None,
            None,
        )
    }

    /// The graph file and the links under construction that made it count in the
    /// build's heap, which the writer's memory budget leaves room for.
    #[test]
    fn a_graph_file_and_its_links_count_in_the_build_heap() {
        let docs: Vec<Document> = (0..400)
            .map(|i| {
                let v = (0..512)
                    .map(|j| ((i * 31 + j * 17) % 97) as f32 - 48.0)
                    .collect();
                Document::new(format!("d{i}"), "", "a b").with_vector(v)
            })
            .collect();
        let settings = GraphSettings::default();
        let without = build(
            &docs,
            GraphSettings {
                min_docs: 401,
                ..settings
            },
        );
        let with = build(
            &docs,
            GraphSettings {
                min_docs: 400,
                ..settings
            },
        );
        assert!(!without.meta.vector_graph);
        assert!(with.meta.vector_graph);
        let graph_file = with
            .files
            .iter()
            .find(|(c, _)| *c == SegmentComponent::VectorGraph)
            .map(|(_, bytes)| bytes.len())
            .unwrap();
        // At least a lock and a list of 2m + 1 slots a document on layer 0.
        let links = 400 * 4 * (2 * settings.m as usize + 1);
        assert!(
            with.heap_bytes >= without.heap_bytes + graph_file + links,
            "with {} without {} file {graph_file} links {links}",
            with.heap_bytes,
            without.heap_bytes
        );
    }
}
