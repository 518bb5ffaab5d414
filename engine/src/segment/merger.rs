//! Merges segments into one: live documents only, in source order, postings re-encoded
//! with remapped doc ids. Needs no document text: everything comes from the segments.

use std::time::Instant;

use super::builder::BuiltSegment;
use super::deletes::DeleteSet;
use super::{SegmentComponent, SegmentMeta, SegmentReader, footer};
use crate::error::{Error, Result};
use crate::field::{Field, FieldCounts};
use crate::postings::PostingsWriter;
use crate::segment::lengths::{DocLengths, LengthTable};
use crate::store::StoreWriter;
use crate::termdict::{TermDictWriter, TermInfo, TermWalker};

/// A source segment with the deletes to purge.
pub(crate) struct MergeSource<'a> {
    pub reader: &'a SegmentReader,
    pub deletes: Option<&'a DeleteSet>,
}

/// Marks a deleted document in a doc map.
pub(crate) const PURGED: u32 = u32::MAX;

/// The merged segment and, per source, old local doc id → new doc id (or [`PURGED`]).
pub(crate) struct Merged {
    pub built: BuiltSegment,
    pub doc_maps: Vec<Vec<u32>>,
}

pub(crate) fn merge_segments(
    name: &str,
    sources: &[MergeSource<'_>],
    fields: &[Field],
) -> Result<Merged> {
    let started = Instant::now();
    let mut doc_maps = Vec::with_capacity(sources.len());
    let mut lengths = DocLengths::for_fields(fields);
    let mut store = StoreWriter::default();
    let mut next = 0u32;
    for src in sources {
        let tables: [Option<LengthTable<'_>>; 3] =
            Field::ALL.map(|f| fields.contains(&f).then(|| src.reader.lengths(f)));
        let mut map = Vec::with_capacity(src.reader.doc_count() as usize);
        src.reader.scan_stored(|doc, id, title| {
            if src.deletes.is_some_and(|d| d.contains(doc)) {
                map.push(PURGED);
            } else {
                map.push(next);
                next += 1;
                lengths.push(|f| tables[f.index()].map_or(0, |t| t.get(doc)));
                store.push(id, title);
            }
            Ok(())
        })?;
        // Postings are mapped through `map` by index: it must cover every doc id the
        // segment's postings may name.
        if map.len() != src.reader.doc_count() as usize {
            return Err(Error::Corrupt {
                path: src.reader.store_path().to_path_buf(),
                what: "stored fields",
                detail: format!(
                    "scan gave {} documents, manifest says {}",
                    map.len(),
                    src.reader.doc_count()
                ),
            });
        }
        doc_maps.push(map);
    }
    let tokens = lengths.tokens();
    let mut files = Vec::with_capacity(2 * fields.len() + 2);
    let mut terms = FieldCounts::default();
    for &field in fields {
        let (dict, postings, count) = merge_field(sources, &doc_maps, field, lengths.of(field))?;
        terms.set(field, count);
        files.push((SegmentComponent::Terms(field), footer::sealed(dict)));
        files.push((SegmentComponent::Postings(field), footer::sealed(postings)));
    }
    files.push((SegmentComponent::Lengths, footer::sealed(lengths.body())));
    files.push((SegmentComponent::Store, footer::sealed(store.into_body())));
    let (vector_dim, vectors) = crate::vectors::merge_vectors(sources, &doc_maps)?;
    files.extend(vectors);
    // A merge holds its whole output in memory before writing it (not budgeted).
    let heap_bytes = files.iter().map(|(_, b)| b.capacity()).sum();
    Ok(Merged {
        built: BuiltSegment {
            heap_bytes,
            meta: SegmentMeta {
                name: name.to_string(),
                doc_count: next,
                fields: fields.to_vec(),
                tokens,
                terms,
                deletes: None,
                vector_dim,
            },
            files,
            analysis: Default::default(),
            reorder: Default::default(), // a merge concatenates its sources' orders
            encoding: started.elapsed(),
        },
        doc_maps,
    })
}

/// k-way merge of the sources' term dictionaries for one field.
fn merge_field(
    sources: &[MergeSource<'_>],
    doc_maps: &[Vec<u32>],
    field: Field,
    lens: &[u32],
) -> Result<(Vec<u8>, Vec<u8>, u64)> {
    let mut walkers: Vec<_> = sources.iter().map(|src| src.reader.terms(field)).collect();
    // Each source's current term and entry (owned: the walkers lend their buffers).
    let mut heads: Vec<Option<(Vec<u8>, TermInfo)>> = Vec::with_capacity(sources.len());
    for w in walkers.iter_mut() {
        heads.push(next_head(w)?);
    }
    let mut dict = TermDictWriter::default();
    let mut body = Vec::new();
    let mut encoder = PostingsWriter::new();
    let (mut docs, mut tfs) = (Vec::new(), Vec::new());
    while let Some(term) = heads.iter().flatten().map(|(t, _)| t).min().cloned() {
        docs.clear();
        tfs.clear();
        for (s, src) in sources.iter().enumerate() {
            let Some((_, info)) = heads[s].as_ref().filter(|(t, _)| *t == term) else {
                continue;
            };
            let info = *info;
            heads[s] = next_head(&mut walkers[s])?;
            // Verified as `check_index` verifies it: a damaged list is refused, never
            // filtered into a sound-looking merged segment that `check` would pass.
            let map = &doc_maps[s];
            let problems = src.reader.verify_postings(field, &term, &info, |doc, tf| {
                // `doc` is below the segment's doc count (verified before `visit`), which
                // is the map's length; maps only grow, so the merged list stays strictly
                // ascending across the sources.
                let new = map[doc as usize];
                if new != PURGED {
                    docs.push(new);
                    tfs.push(tf);
                }
            });
            if let Some(first) = problems.into_iter().next() {
                return Err(first);
            }
        }
        if docs.is_empty() {
            continue; // every posting was of a deleted document
        }
        let offset = body.len() as u64;
        let summary = encoder.encode(&docs, &tfs, |d| lens[d as usize], &mut body);
        dict.push(
            &term,
            TermInfo {
                postings_offset: offset,
                postings_len: summary.byte_len,
                df: summary.df,
            },
        );
    }
    let count = dict.len() as u64;
    Ok((dict.into_body(), body, count))
}

/// The next term of a source's walker, owned.
fn next_head(walker: &mut Option<TermWalker<'_>>) -> Result<Option<(Vec<u8>, TermInfo)>> {
    match walker {
        None => Ok(None),
        Some(w) => Ok(w.next_term()?.map(|(t, info)| (t.to_vec(), info))),
    }
}
