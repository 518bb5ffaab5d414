//! Which segments get a graph file, and building it: at a flush from the rows just
//! encoded, at a merge from the vectors file just written (docs/DECISIONS.md,
//! "Approximate vector search").

use std::path::Path;

use super::VectorTable;
use super::file::VectorsFile;
use super::graph::{GraphLayers, body_len, write_graph};
use super::hnsw::{self, HnswParams};
use crate::error::Result;
use crate::segment::footer;
use crate::segment::sealed_file::SealedFileWriter;

/// Segments of fewer documents get no graph unless the writer is told otherwise: below
/// this an exact scan of 384-dimension rows (3 MiB) takes about as long as a walk.
pub const DEFAULT_GRAPH_MIN_DOCS: u32 = 2048;

/// The default [`GraphSettings::m`]: links a document keeps on the layers above 0
/// (twice as many on layer 0), hnswlib's and Lucene's default.
pub const DEFAULT_M: u32 = 16;

/// The default [`GraphSettings::ef_construction`].
pub const DEFAULT_EF_CONSTRUCTION: u32 = 100;

/// How the segments a writer builds (flushes, commits, merges) get their graph files:
/// set with [`crate::IndexWriter::set_graph`]. Not stored in the index: whether a segment
/// has a graph is recorded per segment in the manifest, and the graph file says how it
/// was built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphSettings {
    /// Segments of fewer documents get none, and approximate searches scan them
    /// exactly (default [`DEFAULT_GRAPH_MIN_DOCS`]; `u32::MAX` builds none, 1 one for
    /// every segment that has a document).
    pub min_docs: u32,
    /// Links a document keeps on layers above 0; `2m` on layer 0 (2 to
    /// [`super::graph::MAX_M`]; default [`DEFAULT_M`]).
    pub m: u32,
    /// Candidates gathered when a document is linked in (at least 1; default
    /// [`DEFAULT_EF_CONSTRUCTION`]). More build slower and find more at search time.
    pub ef_construction: u32,
}

impl Default for GraphSettings {
    fn default() -> Self {
        GraphSettings {
            min_docs: DEFAULT_GRAPH_MIN_DOCS,
            m: DEFAULT_M,
            ef_construction: DEFAULT_EF_CONSTRUCTION,
        }
    }
}

impl GraphSettings {
    /// The default settings, except that no segment gets a graph: for a build whose
    /// flushed segments are merged into one afterwards, whose graph is then built once
    /// (`heddle-eval index` with vectors; [`crate::IndexWriter::merge_into_one`] with
    /// graph settings that want one).
    pub fn deferred() -> GraphSettings {
        GraphSettings {
            min_docs: u32::MAX,
            ..GraphSettings::default()
        }
    }

    /// Whether a segment of `docs` documents gets a graph.
    pub(crate) fn wants(&self, docs: u32) -> bool {
        docs > 0 && docs >= self.min_docs
    }

    /// Refuses settings no graph can be built with.
    pub(crate) fn check(&self) -> Result<()> {
        use super::graph::{MAX_M, MIN_M};
        if !(MIN_M..=MAX_M).contains(&self.m) {
            return Err(crate::Error::InvalidArgument(format!(
                "graph m {}: not {MIN_M} to {MAX_M}",
                self.m
            )));
        }
        if self.ef_construction == 0 {
            return Err(crate::Error::InvalidArgument(
                "graph ef_construction 0: at least 1".into(),
            ));
        }
        Ok(())
    }

    fn params(&self) -> HnswParams {
        HnswParams {
            m: self.m as usize,
            ef_construction: self.ef_construction as usize,
        }
    }
}

/// The graph body for the vectors body `vectors` (as `encode_rows` made it: `docs` rows
/// of `dim` values), with room for its footer, and the most heap the build held beside
/// the body (freed when this returns). Builds on rayon's current pool, calling
/// `progress(done, total)` as documents are linked in.
pub(crate) fn graph_body(
    vectors: &[u8],
    docs: u32,
    dim: u32,
    settings: &GraphSettings,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> (Vec<u8>, usize) {
    let table = VectorTable::open(Path::new("new segment"), vectors, docs, dim)
        .expect("a vectors body just encoded is well formed");
    let rows = table.rows(vectors);
    let built = hnsw::build(rows, settings.params(), None, progress);
    let upper: Vec<usize> = built.layers[1..].iter().map(|l| l.nodes.len()).collect();
    let len = body_len(docs as usize, settings.m as usize, &upper);
    let mut body =
        Vec::with_capacity(len + 4 * len.div_ceil(1 << footer::CHUNK_SHIFT) + footer::FOOTER_LEN);
    write_graph(docs, dim, settings.m, built.entry, &built.layers, |b| {
        body.extend_from_slice(b);
        Ok(())
    })
    .expect("writing to memory does not fail");
    (body, built.heap_bytes)
}

/// Writes the graph of the merged segment's vectors file `vectors` (`docs` rows of `dim`
/// values, just written) to `out`, on rayon's current pool, reading the rows back in
/// place from the file (verified once): the merge holds no row, only the graph's links.
/// `seed` is the graph of the merge's first source when its documents keep their ids
/// (see [`hnsw::build`]); returns how many documents kept their links from it.
pub(crate) fn write_merged_graph(
    vectors: &Path,
    docs: u32,
    dim: u32,
    settings: &GraphSettings,
    seed: Option<GraphLayers<'_>>,
    out: &mut SealedFileWriter,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<u32> {
    let file = VectorsFile::open(vectors, docs, dim)?;
    let rows = file.rows()?;
    let built = hnsw::build(rows, settings.params(), seed, progress);
    write_graph(docs, dim, settings.m, built.entry, &built.layers, |b| {
        out.write(b)
    })?;
    Ok(built.reused as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_segments_get_no_graph_and_settings_are_checked() {
        let settings = GraphSettings::default();
        assert!(!settings.wants(DEFAULT_GRAPH_MIN_DOCS - 1));
        assert!(settings.wants(DEFAULT_GRAPH_MIN_DOCS));
        let every = GraphSettings {
            min_docs: 1,
            ..settings
        };
        assert!(every.wants(1) && !every.wants(0));
        assert!(!GraphSettings::deferred().wants(u32::MAX - 1));
        assert!(settings.check().is_ok());
        for bad in [
            GraphSettings { m: 1, ..settings },
            GraphSettings { m: 129, ..settings },
            GraphSettings {
                ef_construction: 0,
                ..settings
            },
        ] {
            assert!(bad.check().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_flush_body_is_sized_as_its_footer_needs_and_validates() {
        let rows: Vec<Vec<f32>> = (0..300)
            .map(|i| vec![(i % 7) as f32, (i % 5) as f32 - 2.0, 1.0, (i % 11) as f32])
            .collect();
        let vectors = crate::vectors::encode_rows(4, 300, rows.iter().map(Vec::as_slice));
        let settings = GraphSettings {
            min_docs: 1,
            m: 4,
            ef_construction: 20,
        };
        let (body, heap) = graph_body(&vectors, 300, 4, &settings, &|_, _| {});
        assert!(heap >= 300 * 4 * 8, "{heap}");
        let capacity = body.capacity();
        assert_eq!(footer::sealed(body.clone()).len(), capacity);
        let p = Path::new("g");
        let header = super::super::graph::GraphHeader::open(p, &body, 300, 4).unwrap();
        let layout = header.validate(p, &body).unwrap();
        let layers = header.cut(&body, &layout);
        assert!(layers.len() >= 2, "300 documents at m 4 reach layer 1");
        // Every document has a neighbour on layer 0, and none lists itself.
        for doc in 0..300u32 {
            let n: Vec<u32> = layers.neighbours(0, doc).iter().collect();
            assert!(!n.is_empty() && n.len() <= 8, "document {doc}: {n:?}");
            assert!(!n.contains(&doc), "document {doc} links to itself");
        }
    }
}
