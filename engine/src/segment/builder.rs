//! Turns a batch of documents into the bytes of one segment: analysis and inversion in
//! parallel chunks, a k-way merge of the chunks' sorted terms, then encoding.
//!
//! Nothing here touches the disk or any lock: the writer calls it with no reader waiting.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::{SegmentComponent, SegmentMeta, footer, lengths};
use crate::analysis::Analyzer;
use crate::document::Document;
use crate::postings::PostingsWriter;
use crate::store::StoreWriter;
use crate::termdict::{TermDictWriter, TermInfo};

/// A segment ready to be written: each component's complete file bytes (footer included).
pub(crate) struct BuiltSegment {
    pub meta: SegmentMeta,
    pub files: Vec<(SegmentComponent, Vec<u8>)>,
    pub analysis: Duration,
    pub encoding: Duration,
}

/// One term's postings within a chunk, doc ids already segment-global.
struct TermPostings {
    docs: Vec<u32>,
    tfs: Vec<u32>,
}

/// The inverted form of a contiguous run of documents.
struct ChunkInversion {
    /// Sorted by term bytes.
    terms: Vec<(String, TermPostings)>,
    title_lens: Vec<u32>,
    text_lens: Vec<u32>,
}

fn invert_chunk(docs: &[Document], first_doc: u32, analyzer: &Analyzer) -> ChunkInversion {
    let mut ids: HashMap<String, u32> = HashMap::new();
    let mut postings: Vec<TermPostings> = Vec::new();
    let mut title_lens = Vec::with_capacity(docs.len());
    let mut text_lens = Vec::with_capacity(docs.len());
    let mut scratch = String::new();
    for (i, doc) in docs.iter().enumerate() {
        let doc_id = first_doc + i as u32;
        let mut add = |token: &str| {
            let id = match ids.get(token) {
                Some(&id) => id,
                None => {
                    let id = postings.len() as u32;
                    ids.insert(token.to_string(), id);
                    postings.push(TermPostings {
                        docs: Vec::new(),
                        tfs: Vec::new(),
                    });
                    id
                }
            };
            let p = &mut postings[id as usize];
            if p.docs.last() == Some(&doc_id) {
                *p.tfs.last_mut().expect("docs and tfs grow together") += 1;
            } else {
                p.docs.push(doc_id);
                p.tfs.push(1);
            }
        };
        let mut title_len = 0u32;
        analyzer.for_each_token(&doc.title, &mut scratch, |t| {
            title_len += 1;
            add(t)
        });
        let mut text_len = 0u32;
        analyzer.for_each_token(&doc.text, &mut scratch, |t| {
            text_len += 1;
            add(t)
        });
        title_lens.push(title_len);
        text_lens.push(text_len);
    }
    let mut postings: Vec<Option<TermPostings>> = postings.into_iter().map(Some).collect();
    let mut terms: Vec<(String, TermPostings)> = ids
        .into_iter()
        .map(|(term, id)| {
            let p = postings[id as usize].take().expect("each id is taken once");
            (term, p)
        })
        .collect();
    terms.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    ChunkInversion {
        terms,
        title_lens,
        text_lens,
    }
}

/// Builds segment `name` from `docs` using up to `threads` threads of `pool`.
pub(crate) fn build_segment(
    name: &str,
    docs: &[Document],
    analyzer: &Analyzer,
    pool: &rayon::ThreadPool,
) -> BuiltSegment {
    let started = Instant::now();
    let chunk_len = docs
        .len()
        .div_ceil(pool.current_num_threads().max(1))
        .max(1);
    let chunks: Vec<ChunkInversion> = pool.install(|| {
        docs.par_chunks(chunk_len)
            .enumerate()
            .map(|(c, chunk)| invert_chunk(chunk, (c * chunk_len) as u32, analyzer))
            .collect()
    });
    let analysis = started.elapsed();

    let started = Instant::now();
    let mut title_lens = Vec::with_capacity(docs.len());
    let mut text_lens = Vec::with_capacity(docs.len());
    let mut iters = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        title_lens.extend_from_slice(&chunk.title_lens);
        text_lens.extend_from_slice(&chunk.text_lens);
        iters.push(chunk.terms.into_iter().peekable());
    }
    let flat_lens: Vec<u32> = title_lens
        .iter()
        .zip(&text_lens)
        .map(|(a, b)| a + b)
        .collect();
    let flat_tokens = flat_lens.iter().map(|&l| l as u64).sum();

    let mut dict = TermDictWriter::default();
    let mut postings_body = Vec::new();
    let mut encoder = PostingsWriter::new();
    let (mut docs_buf, mut tfs_buf) = (Vec::new(), Vec::new());
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
                let (_, p) = it.next().expect("peeked");
                docs_buf.extend_from_slice(&p.docs);
                tfs_buf.extend_from_slice(&p.tfs);
            }
        }
        let offset = postings_body.len() as u64;
        let summary = encoder.encode(
            &docs_buf,
            &tfs_buf,
            |d| flat_lens[d as usize],
            &mut postings_body,
        );
        dict.push(
            term.as_bytes(),
            TermInfo {
                postings_offset: offset,
                postings_len: summary.byte_len,
                df: summary.df,
                max_tf: summary.max_tf,
                min_len: summary.min_len,
            },
        );
    }
    let term_count = dict.len() as u64;

    let mut store = StoreWriter::default();
    for doc in docs {
        store.push(&doc.id, &doc.title);
    }
    let seal = |mut body: Vec<u8>| {
        footer::append_footer(&mut body);
        body
    };
    let files = vec![
        (SegmentComponent::Terms, seal(dict.into_body())),
        (SegmentComponent::Postings, seal(postings_body)),
        (
            SegmentComponent::Lengths,
            seal(lengths::write_body(&title_lens, &text_lens)),
        ),
        (SegmentComponent::Store, seal(store.into_body())),
    ];
    BuiltSegment {
        meta: SegmentMeta {
            name: name.to_string(),
            doc_count: docs.len() as u32,
            flat_tokens,
            term_count,
        },
        files,
        analysis,
        encoding: started.elapsed(),
    }
}
