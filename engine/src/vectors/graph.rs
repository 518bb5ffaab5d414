//! The navigable small-world graph of a segment's vectors, `seg-N.hnsw`: for each
//! document, the documents whose rows are its nearest neighbours, on a stack of layers
//! (HNSW), so that an approximate search walks from one entry point towards the query
//! and scores a few thousand rows instead of every row. The rows themselves stay in the
//! vectors file (`seg-N.vec`); the graph holds only document ids.
//!
//! Body layout (docs/FORMAT.md):
//!
//! ```text
//! docs u32 | dim u32 | m u32 | layers u32 | entry u32
//! layer 0    docs records of 1 + 2m u32s: document d's record is its neighbour
//!            count, then that many neighbours (then unused slots, written 0)
//! layer l    for l = 1 .. layers - 1, the documents that reach layer l:
//!              nodes u32 | nodes ascending document ids |
//!              nodes records of 1 + m u32s (count, neighbours), in the ids' order
//! ```
//!
//! Layer 0 holds every document, so a document's neighbours there are one multiplication
//! away; a higher layer holds about one document in `m` of the layer below, found by a
//! binary search of its ids. `entry` is a document of the top layer.
//!
//! Opening checks the header against the manifest (documents, dimension) and `m` and
//! `layers` against their bounds. The first search verifies the checksums of the whole
//! file and its structure ([`GraphFile::layers`]): every count within its layer's bound,
//! every neighbour a document of the same layer, each layer's ids ascending and within
//! the layer below, the entry point on the top layer, and the body ending where the last
//! layer does. Which neighbours a document has is trusted as given: it decides what an
//! approximate search finds, never what it scores — every score is the dot product of
//! the query with the document's row in the vectors file, as exact search's is.

use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::segment::bytes::{ByteReader, u32_at};
use crate::segment::checked::CheckedFile;

/// Bytes before layer 0.
const HEADER_LEN: usize = 20;

/// The most layers a graph may hold: a document reaches layer `l` with probability
/// `m^-l`, so even at `m` = 2 the 4 billion documents of a segment stay below it.
pub const MAX_LAYERS: u32 = 32;

/// The bounds of `m`, the most neighbours a document keeps on the layers above 0 (on
/// layer 0 it keeps `2m`).
pub const MIN_M: u32 = 2;
pub const MAX_M: u32 = 128;

/// One layer of a graph as it is written: which documents it holds and each one's
/// neighbours. Layer 0 holds every document in doc order, and its `nodes` is empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LayerLinks {
    /// The documents of the layer, ascending (empty for layer 0: all of them).
    pub nodes: Vec<u32>,
    /// `neighbours[i]`: the neighbours of the layer's `i`-th document.
    pub neighbours: Vec<Vec<u32>>,
}

/// Calls `sink` with the body of a graph file, in order: the header, then each layer of
/// `layers` (layer 0 first; each neighbour list at most `2m` long on layer 0 and `m`
/// above), with `entry` on the top layer.
pub(crate) fn write_graph(
    docs: u32,
    dim: u32,
    m: u32,
    entry: u32,
    layers: &[LayerLinks],
    mut sink: impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let mut header = [0u8; HEADER_LEN];
    for (i, v) in [docs, dim, m, layers.len() as u32, entry]
        .iter()
        .enumerate()
    {
        header[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
    }
    sink(&header)?;
    let mut buf = Vec::with_capacity(1 << 16);
    for (l, layer) in layers.iter().enumerate() {
        let width = if l == 0 { 2 * m } else { m } as usize;
        if l > 0 {
            buf.extend_from_slice(&(layer.nodes.len() as u32).to_le_bytes());
            for &node in &layer.nodes {
                buf.extend_from_slice(&node.to_le_bytes());
            }
        }
        for list in &layer.neighbours {
            assert!(list.len() <= width, "the builder keeps at most {width}");
            buf.extend_from_slice(&(list.len() as u32).to_le_bytes());
            for &n in list {
                buf.extend_from_slice(&n.to_le_bytes());
            }
            buf.resize(buf.len() + 4 * (width - list.len()), 0);
            if buf.len() >= 1 << 16 {
                sink(&buf)?;
                buf.clear();
            }
        }
        if !buf.is_empty() {
            sink(&buf)?;
            buf.clear();
        }
    }
    Ok(())
}

/// The length of a graph body of `docs` documents with `m`, whose upper layers hold
/// `upper` documents each.
pub(crate) fn body_len(docs: usize, m: usize, upper: &[usize]) -> usize {
    HEADER_LEN
        + 4 * docs * (1 + 2 * m)
        + upper
            .iter()
            .map(|&n| 4 * (1 + n + n * (1 + m)))
            .sum::<usize>()
}

/// What the header says, checked against the manifest and the bounds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GraphHeader {
    docs: usize,
    m: usize,
    layers: usize,
    entry: u32,
}

impl GraphHeader {
    /// Reads the header of `body` (only its 20 bytes, which the caller must have
    /// verified) and checks it against the manifest (`docs` documents of `dim`
    /// dimensions) and the format's bounds.
    pub(crate) fn open(path: &Path, body: &[u8], docs: u32, dim: u32) -> Result<Self> {
        let corrupt = |detail: String| corrupt(path, detail);
        let mut r = ByteReader::new(path, body);
        let held_docs = r.u32("vector graph's document count")?;
        let held_dim = r.u32("vector graph's dimension")?;
        let m = r.u32("vector graph's neighbour count")?;
        let layers = r.u32("vector graph's layer count")?;
        let entry = r.u32("vector graph's entry point")?;
        if held_docs != docs {
            return Err(corrupt(format!(
                "a graph of {held_docs} documents, manifest says {docs}"
            )));
        }
        if held_dim != dim {
            return Err(corrupt(format!(
                "a graph of {held_dim}-dimension vectors, manifest says {dim}"
            )));
        }
        if !(MIN_M..=MAX_M).contains(&m) {
            return Err(corrupt(format!("m {m}: not {MIN_M} to {MAX_M}")));
        }
        if !(1..=MAX_LAYERS).contains(&layers) {
            return Err(corrupt(format!("{layers} layers: not 1 to {MAX_LAYERS}")));
        }
        if docs == 0 || entry >= docs {
            return Err(corrupt(format!(
                "entry point {entry} of a graph of {docs} documents"
            )));
        }
        // Layer 0 alone, in u128: no header (a fuzzer's included) can overflow it.
        let layer0 = HEADER_LEN as u128 + 4 * u128::from(docs) * (1 + 2 * u128::from(m));
        if layer0 > body.len() as u128 {
            return Err(Error::Truncated {
                path: path.to_path_buf(),
                what: "vector graph",
                offset: HEADER_LEN as u64,
                needed: u64::try_from(layer0 - HEADER_LEN as u128).unwrap_or(u64::MAX),
                available: body.len().saturating_sub(HEADER_LEN) as u64,
            });
        }
        Ok(GraphHeader {
            docs: docs as usize,
            m: m as usize,
            layers: layers as usize,
            entry,
        })
    }

    /// Cuts `body` (whose header `open` checked, and which the caller has verified) into
    /// its layers and checks their structure, as the module documentation says. Holds
    /// one bit per document per layer while it checks.
    pub(crate) fn validate(&self, path: &Path, body: &[u8]) -> Result<Layout> {
        let corrupt = |detail: String| corrupt(path, detail);
        let mut r = ByteReader::new(path, body);
        r.take(HEADER_LEN, "vector graph header")?;
        r.table(self.docs, 4 * (1 + 2 * self.m), "vector graph layer 0")?;
        let mut upper = Vec::with_capacity(self.layers - 1);
        // Which documents the layer below holds (layer 0: all).
        let mut below: Option<Vec<u64>> = None;
        for l in 1..self.layers {
            let count = r.u32("vector graph layer size")? as usize;
            if count == 0 || count > self.docs {
                return Err(corrupt(format!(
                    "layer {l} holds {count} documents of {}",
                    self.docs
                )));
            }
            let ids_start = r.position();
            let ids = r.table(count, 4, "vector graph layer ids")?;
            let records_start = r.position();
            r.table(count, 4 * (1 + self.m), "vector graph layer records")?;
            let mut members = vec![0u64; self.docs.div_ceil(64)];
            let mut previous: Option<u32> = None;
            for i in 0..count {
                let doc = u32_at(ids, i);
                if doc as usize >= self.docs || previous.is_some_and(|p| p >= doc) {
                    return Err(corrupt(format!(
                        "layer {l}: document {doc} after {previous:?} (of {} documents)",
                        self.docs
                    )));
                }
                if below.as_ref().is_some_and(|b| !has(b, doc)) {
                    return Err(corrupt(format!(
                        "layer {l} holds document {doc}, which layer {} does not",
                        l - 1
                    )));
                }
                previous = Some(doc);
                members[doc as usize / 64] |= 1 << (doc % 64);
            }
            upper.push(UpperLayer {
                ids: ids_start..records_start,
                records: records_start..r.position(),
            });
            below = Some(members);
        }
        if r.position() != body.len() {
            return Err(corrupt(format!(
                "{} bytes after the last layer",
                body.len() - r.position()
            )));
        }
        let layout = Layout { upper };
        let layers = self.cut(body, &layout);
        // Every neighbour list: its count within bounds, each neighbour on its layer.
        for l in 0..self.layers {
            let (size, width) = layers.layer_size(l);
            for slot in 0..size {
                let record = layers.record(l, slot);
                let count = u32_at(record, 0) as usize;
                let node = layers.node_at(l, slot);
                if count > width {
                    return Err(corrupt(format!(
                        "layer {l}: document {node} has {count} neighbours, at most {width}"
                    )));
                }
                for i in 1..=count {
                    let n = u32_at(record, i);
                    if n as usize >= self.docs || (l > 0 && layers.slot_of(l, n).is_none()) {
                        return Err(corrupt(format!(
                            "layer {l}: document {node} names neighbour {n}, not on the layer"
                        )));
                    }
                }
            }
        }
        if self.layers > 1 && layers.slot_of(self.layers - 1, self.entry).is_none() {
            return Err(corrupt(format!(
                "entry point {} is not on the top layer",
                self.entry
            )));
        }
        Ok(layout)
    }

    /// The layers of `body` as `layout` (from [`GraphHeader::validate`] on this body)
    /// places them: slicing only.
    pub(crate) fn cut<'a>(&self, body: &'a [u8], layout: &'a Layout) -> GraphLayers<'a> {
        GraphLayers {
            body,
            upper: &layout.upper,
            docs: self.docs,
            m: self.m,
            entry: self.entry,
        }
    }
}

/// Where a validated body's layers above 0 are.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    upper: Vec<UpperLayer>,
}

fn has(bits: &[u64], doc: u32) -> bool {
    bits[doc as usize / 64] & (1 << (doc % 64)) != 0
}

fn corrupt(path: &Path, detail: String) -> Error {
    Error::Corrupt {
        path: path.to_path_buf(),
        what: "vector graph",
        detail,
    }
}

/// Where one layer above 0 of a validated body is: its ids and its records.
#[derive(Debug, Clone)]
struct UpperLayer {
    ids: Range<usize>,
    records: Range<usize>,
}

/// A validated graph body, read in place.
#[derive(Clone, Copy)]
pub(crate) struct GraphLayers<'a> {
    body: &'a [u8],
    upper: &'a [UpperLayer],
    docs: usize,
    m: usize,
    entry: u32,
}

impl<'a> GraphLayers<'a> {
    /// How many layers there are (at least 1).
    pub(crate) fn len(&self) -> usize {
        1 + self.upper.len()
    }

    /// The document a search starts from, on the top layer.
    pub(crate) fn entry(&self) -> u32 {
        self.entry
    }

    /// Documents on layer 0 (all of the segment's).
    pub(crate) fn docs(&self) -> usize {
        self.docs
    }

    /// The `m` the graph was built with (`2m` links a document on layer 0).
    pub(crate) fn m(&self) -> usize {
        self.m
    }

    /// Documents on layer `l` (0 if there is no such layer).
    pub(crate) fn nodes_on(&self, l: usize) -> usize {
        match l {
            0 => self.docs,
            _ => self.upper.get(l - 1).map_or(0, |u| u.ids.len() / 4),
        }
    }

    /// Documents on layer `l` and the most neighbours each may have there.
    fn layer_size(&self, l: usize) -> (usize, usize) {
        match l {
            0 => (self.docs, 2 * self.m),
            _ => (self.upper[l - 1].ids.len() / 4, self.m),
        }
    }

    /// The document in slot `slot` of layer `l`.
    fn node_at(&self, l: usize, slot: usize) -> u32 {
        match l {
            0 => slot as u32,
            _ => u32_at(&self.body[self.upper[l - 1].ids.clone()], slot),
        }
    }

    /// Where document `doc` is on layer `l` (`None` if it is not there).
    fn slot_of(&self, l: usize, doc: u32) -> Option<usize> {
        if l == 0 {
            return ((doc as usize) < self.docs).then_some(doc as usize);
        }
        let ids = &self.body[self.upper[l - 1].ids.clone()];
        let (mut low, mut high) = (0usize, ids.len() / 4);
        while low < high {
            let mid = (low + high) / 2;
            match u32_at(ids, mid).cmp(&doc) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// The record (count, then slots) in slot `slot` of layer `l`.
    fn record(&self, l: usize, slot: usize) -> &'a [u8] {
        let (start, width) = match l {
            0 => (HEADER_LEN, 1 + 2 * self.m),
            _ => (self.upper[l - 1].records.start, 1 + self.m),
        };
        &self.body[start + 4 * width * slot..start + 4 * width * (slot + 1)]
    }

    /// Asks the CPU to start loading `doc`'s layer-0 neighbour list (a hint: see
    /// [`super::dot::prefetch`]).
    #[inline]
    pub(crate) fn prefetch_layer0(&self, doc: u32) {
        if let Some(slot) = self.slot_of(0, doc) {
            super::dot::prefetch(self.record(0, slot));
        }
    }

    /// The neighbours of `doc` on layer `l` (none if it is not on that layer), as
    /// little-endian u32 bytes.
    #[inline]
    pub(crate) fn neighbours(&self, l: usize, doc: u32) -> Neighbours<'a> {
        let Some(slot) = self.slot_of(l, doc) else {
            return Neighbours { bytes: &[] };
        };
        let record = self.record(l, slot);
        // Validated: the count is within the record.
        let count = u32_at(record, 0) as usize;
        Neighbours {
            bytes: &record[4..4 + 4 * count],
        }
    }
}

/// A document's neighbours on one layer.
pub(crate) struct Neighbours<'a> {
    bytes: &'a [u8],
}

impl<'a> Neighbours<'a> {
    pub(crate) fn iter(&self) -> impl Iterator<Item = u32> + 'a {
        self.bytes
            .as_chunks::<4>()
            .0
            .iter()
            .map(|b| u32::from_le_bytes(*b))
    }
}

/// A segment's open graph file: footer and header checked at open, everything verified
/// and validated by the first search that uses it.
pub(crate) struct GraphFile {
    file: CheckedFile,
    header: GraphHeader,
    /// The outcome of the first [`GraphFile::layers`]: the file is immutable, so it stands.
    validated: OnceLock<Result<Layout>>,
}

impl GraphFile {
    /// Maps `path` and checks its footer and its header against the manifest (`docs`
    /// documents of `dim` dimensions); verifies only the chunk holding the header.
    pub(crate) fn open(path: &Path, docs: u32, dim: u32) -> Result<Self> {
        use crate::segment::checked::Integrity;
        let file = CheckedFile::open(path)?;
        file.check(0..HEADER_LEN)?;
        let header = GraphHeader::open(file.path(), file.body(), docs, dim)?;
        Ok(GraphFile {
            file,
            header,
            validated: OnceLock::new(),
        })
    }

    /// The layers, verified and validated: the first call checksums and checks the
    /// whole file (about `4 × (1 + 2m)` bytes a document), later ones reuse its outcome.
    pub(crate) fn layers(&self) -> Result<GraphLayers<'_>> {
        let layout = self.validated.get_or_init(|| {
            self.file.check_all()?;
            self.header.validate(self.file.path(), self.file.body())
        });
        match layout {
            Ok(layout) => Ok(self.header.cut(self.file.body(), layout)),
            Err(e) => Err(e.clone()),
        }
    }
}
