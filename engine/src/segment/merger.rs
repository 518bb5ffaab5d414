//! Merges segments into one: live documents only, in source order, postings re-encoded
//! with remapped doc ids. Needs no document text: everything comes from the segments.
//!
//! The output streams to disk as it is made: postings and stored fields, nearly all of
//! a segment's bytes, pass through a buffer on their way to their files, so a merge's
//! memory is its sources' doc maps, lengths and term dictionaries, not the segment it
//! builds (docs/DECISIONS.md, "A merge streams its output"). Vector rows are copied the
//! same way; the merged segment's graph is built from the rows read back in place from
//! its vectors file, holding only the links (about 300 bytes a document at m 16).

use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::deletes::DeleteSet;
use super::sealed_file::{SealedFileWriter, write_sealed};
use super::{SegmentComponent, SegmentMeta, SegmentReader};
use crate::error::{Error, Result};
use crate::field::{Field, FieldCounts};
use crate::postings::PostingsWriter;
use crate::segment::lengths::{DocLengths, LengthTable};
use crate::segment::{CommitPhase, CommitProgress};
use crate::store::StoreWriter;
use crate::termdict::{TermDictWriter, TermInfo, TermWalker};
use crate::vectors::GraphSettings;

/// A source segment with the deletes to purge.
pub(crate) struct MergeSource<'a> {
    pub reader: &'a SegmentReader,
    pub deletes: Option<&'a DeleteSet>,
}

/// Marks a deleted document in a doc map.
pub(crate) const PURGED: u32 = u32::MAX;

/// Stored fields' compressed blocks go to a scratch file once this many bytes wait.
const STORE_SPILL: usize = 1 << 20;

/// The merged segment, its files written (not fsynced), and per source, old local doc
/// id → new doc id (or [`PURGED`]).
pub(crate) struct Merged {
    pub meta: SegmentMeta,
    pub files: Vec<PathBuf>,
    pub doc_maps: Vec<Vec<u32>>,
    /// Documents whose graph links were kept from the first source's graph.
    pub graph_reused: u32,
    pub elapsed: Duration,
}

/// The files a merge has created so far: removed if it fails, so that a failed merge
/// leaves nothing behind (the next writer's clean-up would, but a writer that goes on
/// should not carry a half-written segment until then).
struct Created(Vec<PathBuf>);

impl Drop for Created {
    fn drop(&mut self) {
        for path in &self.0 {
            // A path is listed before its creation is tried: something that is not a
            // regular file there made the creation fail, and is not ours to remove.
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file()) {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// How a merge builds the merged segment's graph.
pub(crate) struct MergeSettings<'a> {
    /// Whether the merged vectors get a graph at their size, and how it is built.
    pub graph: GraphSettings,
    /// Told of the graph's building as [`CommitPhase::Graph`] (documents linked).
    pub progress: Option<&'a CommitProgress>,
}

/// Merges `sources` into segment `name`, writing its files into `dir`; its vectors get
/// a graph if `settings` asks for one at its size.
pub(crate) fn merge_segments(
    dir: &Path,
    name: &str,
    sources: &[MergeSource<'_>],
    fields: &[Field],
    settings: &MergeSettings<'_>,
) -> Result<Merged> {
    let started = Instant::now();
    // Sources of different vector dimensions are refused before any file is written.
    let vector_dim = crate::vectors::merged_dim(sources)?;
    let mut created = Created(Vec::new());
    let path_of = |component: SegmentComponent| dir.join(component.file_name(name));

    let mut doc_maps = Vec::with_capacity(sources.len());
    let mut lengths = DocLengths::for_fields(fields);
    let store_path = path_of(SegmentComponent::Store);
    let mut store = StoreWriter::default();
    // The compressed blocks, until the block table that precedes them is known. An
    // unnamed file (O_TMPFILE where the kernel has it): nothing is left if we crash.
    let spill_file = tempfile::tempfile_in(dir).map_err(|e| Error::io(dir, e))?;
    let mut spill = BufWriter::with_capacity(STORE_SPILL, spill_file);
    let spill_error = |e| Error::io(&store_path, e);
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
                if store.pending_data() >= STORE_SPILL {
                    store
                        .drain_data(|bytes| spill.write_all(bytes))
                        .map_err(spill_error)?;
                }
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

    created.0.push(store_path.clone());
    let mut store_file = SealedFileWriter::create(&store_path)?;
    let (head, rest) = store.into_parts();
    store_file.write(&head)?;
    let mut spill = spill
        .into_inner()
        .map_err(|e| spill_error(e.into_error()))?;
    spill.rewind().map_err(spill_error)?;
    let mut spilled = BufReader::with_capacity(STORE_SPILL, spill);
    let mut buf = vec![0u8; STORE_SPILL];
    loop {
        let n = spilled.read(&mut buf).map_err(spill_error)?;
        if n == 0 {
            break;
        }
        store_file.write(&buf[..n])?;
    }
    drop((spilled, buf));
    store_file.write(&rest)?;
    store_file.finish()?;

    let tokens = lengths.tokens();
    let mut terms = FieldCounts::default();
    for &field in fields {
        let postings_path = path_of(SegmentComponent::Postings(field));
        created.0.push(postings_path.clone());
        let mut postings = SealedFileWriter::create(&postings_path)?;
        let (dict, count) =
            merge_field(sources, &doc_maps, field, lengths.of(field), &mut postings)?;
        postings.finish()?;
        terms.set(field, count);
        let dict_path = path_of(SegmentComponent::Terms(field));
        created.0.push(dict_path.clone());
        write_sealed(&dict_path, &dict)?;
    }
    let lengths_path = path_of(SegmentComponent::Lengths);
    created.0.push(lengths_path.clone());
    write_sealed(&lengths_path, &lengths.body())?;

    let mut vector_graph = false;
    let mut graph_reused = 0;
    if let Some(dim) = vector_dim {
        let vectors_path = path_of(SegmentComponent::Vectors);
        created.0.push(vectors_path.clone());
        let mut vectors = SealedFileWriter::create(&vectors_path)?;
        crate::vectors::write_merged_vectors(sources, &doc_maps, dim, &mut vectors)?;
        vectors.finish()?;
        // Built from the merged rows, read back from the file just written. The first
        // source's documents keep their ids when none of them is dropped, so its graph
        // (if it has a sound one) is kept and only the others' documents are linked in;
        // the later sources' graphs link other documents under other ids.
        if settings.graph.wants(next) {
            let graph_path = path_of(SegmentComponent::VectorGraph);
            created.0.push(graph_path.clone());
            let mut out = SealedFileWriter::create(&graph_path)?;
            let observer = settings.progress;
            let progress = |done: u64, total: u64| {
                if let Some(o) = observer {
                    o(CommitPhase::Graph, done, total);
                }
            };
            progress(0, u64::from(next));
            let first = sources.first().filter(|_| keeps_ids(&doc_maps[0]));
            let seed = first
                .and_then(|s| s.reader.graph())
                .and_then(|graph| graph.layers().ok());
            graph_reused = crate::vectors::write_merged_graph(
                &vectors_path,
                next,
                dim,
                &settings.graph,
                seed,
                &mut out,
                &progress,
            )?;
            out.finish()?;
            vector_graph = true;
        }
    }

    let files = std::mem::take(&mut created.0); // kept: the merge succeeded
    Ok(Merged {
        meta: SegmentMeta {
            name: name.to_string(),
            doc_count: next,
            fields: fields.to_vec(),
            tokens,
            terms,
            deletes: None,
            vector_dim,
            vector_graph,
        },
        files,
        doc_maps,
        graph_reused,
        elapsed: started.elapsed(),
    })
}

/// Whether a source's documents keep their ids in the merged segment: none dropped, and
/// the source first (its map is then the identity).
fn keeps_ids(doc_map: &[u32]) -> bool {
    doc_map
        .iter()
        .enumerate()
        .all(|(doc, &new)| new as usize == doc)
}

/// k-way merge of the sources' term dictionaries for one field.
/// Writes the merged postings to `postings` and returns the dictionary's body and term
/// count.
fn merge_field(
    sources: &[MergeSource<'_>],
    doc_maps: &[Vec<u32>],
    field: Field,
    lens: &[u32],
    postings: &mut SealedFileWriter,
) -> Result<(Vec<u8>, u64)> {
    let mut walkers: Vec<_> = sources.iter().map(|src| src.reader.terms(field)).collect();
    // Each source's current term and entry (owned: the walkers lend their buffers).
    let mut heads: Vec<Option<(Vec<u8>, TermInfo)>> = Vec::with_capacity(sources.len());
    for w in walkers.iter_mut() {
        heads.push(next_head(w)?);
    }
    let mut dict = TermDictWriter::default();
    let mut list = Vec::new(); // one term's encoded postings
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
        let offset = postings.position();
        list.clear();
        let summary = encoder.encode(&docs, &tfs, |d| lens[d as usize], &mut list);
        postings.write(&list)?;
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
    Ok((dict.into_body(), count))
}

/// The next term of a source's walker, owned.
fn next_head(walker: &mut Option<TermWalker<'_>>) -> Result<Option<(Vec<u8>, TermInfo)>> {
    match walker {
        None => Ok(None),
        Some(w) => Ok(w.next_term()?.map(|(t, info)| (t.to_vec(), info))),
    }
}
