//! Building a segment's graph (HNSW: Malkov & Yashunin, "Efficient and robust
//! approximate nearest neighbor search using Hierarchical Navigable Small World graphs",
//! 2016), by inner product, from rows read in place.
//!
//! Each document gets a layer drawn from a geometric distribution (one in `m` reaches
//! layer 1, one in `m²` layer 2, …) from a hash of its id, so the layers do not depend
//! on the order of insertion or the number of threads. Documents are inserted in
//! parallel on rayon's current pool: each one walks down from the entry point, gathers
//! `ef_construction` candidates on each of its layers, keeps up to `m` chosen by the
//! diversity heuristic of the paper's algorithm 4 (a candidate is kept only if it is
//! nearer the new document than any neighbour kept before it, which keeps links towards
//! other clusters), and links back from each; a neighbour whose list is full (`m`
//! above layer 0, `2m` on it, as in hnswlib) re-chooses its list by the same heuristic.
//! Each list keeps its neighbours' scores beside them, so re-choosing scores only pairs
//! of neighbours. Each neighbour list has its own lock, taken only to copy or replace
//! the list, never two at once. Parallel insertion makes
//! the exact links depend on timing (as in hnswlib and Lucene); searches are tested for
//! recall and structure, never for particular links.

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use rayon::prelude::*;

use super::dot::{dot, dot_rows, prefetch};
use super::file::Rows;
use super::graph::{GraphLayers, LayerLinks, MAX_LAYERS};
use super::visited::{Visited, with_visited};

/// How a graph is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HnswParams {
    /// Neighbours a document keeps on layers above 0 (`2m` on layer 0).
    pub m: usize,
    /// Candidates gathered on each layer when a document is inserted.
    pub ef_construction: usize,
}

/// A built graph, ready for [`super::graph::write_graph`].
pub(crate) struct BuiltGraph {
    pub entry: u32,
    pub layers: Vec<LayerLinks>,
    /// The most heap the build held (its adjacency lists), freed when the graph is.
    pub heap_bytes: usize,
    /// Documents whose links were taken from a seed graph rather than searched for.
    pub reused: usize,
}

/// Documents inserted one after another before the parallel insertion starts, so that
/// the first threads do not all link to a graph of a handful of nodes.
const SEQUENTIAL_START: usize = 256;

/// The layer of document `doc`: ⌊−ln(u) / ln(m)⌋ for `u` uniform in (0, 1] drawn from a
/// hash of the id (splitmix64), below [`MAX_LAYERS`].
pub(crate) fn layer_of(doc: u32, m: usize) -> usize {
    let mut z = u64::from(doc).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let u = ((z >> 11) + 1) as f64 / (1u64 << 53) as f64;
    let level = (-u.ln() / (m as f64).ln()).floor();
    (level as usize).min(MAX_LAYERS as usize - 1)
}

/// A candidate: a document and its inner product with the document being placed (or
/// the query). Ordered by score, then by the lower document first, so every heap and
/// sort is deterministic for given scores.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scored {
    pub score: f32,
    pub doc: u32,
}

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == CmpOrdering::Equal
    }
}
impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    fn cmp(&self, other: &Self) -> CmpOrdering {
        self.score
            .total_cmp(&other.score)
            .then(other.doc.cmp(&self.doc))
    }
}

/// A score that orders: NaN (a product of infinities of both signs) ranks last, as in
/// exact search; the writer admits only finite vectors.
#[inline]
pub(crate) fn sane(score: f32) -> f32 {
    if score.is_nan() {
        f32::NEG_INFINITY
    } else {
        score
    }
}

/// One document's neighbour lists under construction, one a layer it reaches, each
/// neighbour with its score against the document.
struct Node {
    links: Box<[Mutex<Vec<Scored>>]>,
}

struct Builder<'a> {
    rows: Rows<'a>,
    params: HnswParams,
    nodes: Vec<Node>,
    /// The entry point and its layer.
    entry: Mutex<(u32, usize)>,
}

/// Builds the graph of `rows` (at least one) on rayon's current pool, calling
/// `progress(done, total)` as documents are inserted (from build threads, every 1,024
/// documents).
///
/// With a `seed` (the graph of a segment whose rows are the first of `rows`, under the
/// same ids: a merge's first source with no document dropped), its documents keep their
/// links and only the others are inserted, so a merge onto a large segment costs what
/// the documents it adds do. A seed is used only if it was built with the same `m` and
/// its layers are the ones [`layer_of`] gives its documents; otherwise it is ignored and
/// the graph built whole.
pub(crate) fn build(
    rows: Rows<'_>,
    params: HnswParams,
    seed: Option<GraphLayers<'_>>,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> BuiltGraph {
    let docs = rows.len();
    assert!(docs > 0, "a graph is built for a segment with documents");
    let levels: Vec<usize> = (0..docs as u32).map(|d| layer_of(d, params.m)).collect();
    let nodes: Vec<Node> = levels
        .iter()
        .map(|&level| Node {
            links: (0..=level)
                .map(|l| Mutex::new(Vec::with_capacity(max_links(params.m, l) + 1)))
                .collect(),
        })
        .collect();
    let builder = Builder {
        rows,
        params,
        nodes,
        entry: Mutex::new((0, levels[0])),
    };
    let seed = seed.filter(|seed| seed_fits(seed, &levels, params.m));
    let reused = seed
        .as_ref()
        .map_or(0, |seed| builder.take_seed(seed, &levels));
    let done = AtomicU64::new(reused.max(1) as u64);
    let report = |n: usize| {
        let now = done.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
        if now % 1024 < n as u64 {
            progress(now, docs as u64);
        }
    };
    let first = match reused {
        0 => {
            let first = SEQUENTIAL_START.min(docs);
            with_visited(|visited| {
                for (doc, &level) in levels.iter().enumerate().take(first).skip(1) {
                    builder.insert(doc as u32, level, visited);
                    report(1);
                }
            });
            first
        }
        reused => {
            progress(reused as u64, docs as u64);
            reused
        }
    };
    // Each thread's own visited marks (4 bytes a document), reused for every document
    // it inserts: one allocation a thread, not one a rayon task.
    (first..docs).into_par_iter().for_each(|doc| {
        with_visited(|visited| builder.insert(doc as u32, levels[doc], visited));
        report(1);
    });
    progress(docs as u64, docs as u64);
    let mut built = builder.finish();
    // The marks, one array a thread, and the layers drawn for each document.
    built.heap_bytes += 4 * docs * rayon::current_num_threads() + 8 * docs;
    built.reused = reused;
    built
}

/// Whether `seed` can start a build whose documents have `levels`: built with the same
/// `m`, no larger than the build, its top layer the highest of its documents' levels and
/// each of its layers holding exactly the documents whose level reaches it (a graph from
/// an older layer rule, or one that only validates, is rebuilt instead).
fn seed_fits(seed: &GraphLayers<'_>, levels: &[usize], m: usize) -> bool {
    let docs = seed.docs();
    if seed.m() != m || docs == 0 || docs > levels.len() {
        return false;
    }
    let top = levels[..docs].iter().copied().max().unwrap_or(0);
    if seed.len() != top + 1 || levels[seed.entry() as usize] != top {
        return false;
    }
    (1..=top).all(|l| seed.nodes_on(l) == levels[..docs].iter().filter(|&&v| v >= l).count())
}

/// The most neighbours a document keeps on layer `l`.
fn max_links(m: usize, l: usize) -> usize {
    if l == 0 { 2 * m } else { m }
}

impl Builder<'_> {
    fn row(&self, doc: u32) -> &[u8] {
        self.rows
            .row(doc as usize)
            .expect("the graph names its own rows")
    }

    fn score(&self, query: &[f32], doc: u32) -> f32 {
        sane(dot(query, self.row(doc)))
    }

    /// Gives the seed's documents their links from `seed` (checked by [`seed_fits`]),
    /// each with its score, and the seed's entry point; returns how many documents.
    fn take_seed(&self, seed: &GraphLayers<'_>, levels: &[usize]) -> usize {
        let docs = seed.docs();
        (0..docs).into_par_iter().for_each(|doc| {
            let row = self.row(doc as u32);
            for l in 0..=levels[doc] {
                let mut list = self.nodes[doc].links[l].lock();
                list.extend(seed.neighbours(l, doc as u32).iter().map(|n| Scored {
                    score: sane(dot_rows(row, self.row(n))),
                    doc: n,
                }));
            }
        });
        *self.entry.lock() = (seed.entry(), levels[seed.entry() as usize]);
        docs
    }

    /// A copy of `doc`'s neighbours on layer `l`, taken under its lock.
    fn links(&self, doc: u32, l: usize, into: &mut Vec<u32>) {
        into.clear();
        into.extend(
            self.nodes[doc as usize].links[l]
                .lock()
                .iter()
                .map(|s| s.doc),
        );
    }

    fn insert(&self, doc: u32, level: usize, visited: &mut Visited) {
        let query = decode(self.row(doc));
        let (entry, top) = *self.entry.lock();
        let mut nearest = Scored {
            score: self.score(&query, entry),
            doc: entry,
        };
        let mut scratch = Vec::new();
        // Above the document's own layer: one greedy step down at a time.
        for l in (level + 1..=top).rev() {
            nearest = self.greedy(&query, nearest, l, &mut scratch);
        }
        let mut entries = vec![nearest];
        for l in (0..=level.min(top)).rev() {
            let mut found = self.search_layer(
                &query,
                &entries,
                self.params.ef_construction,
                l,
                visited,
                &mut scratch,
            );
            // Another thread may already link to this document on this layer.
            found.retain(|s| s.doc != doc);
            let chosen = self.choose(&found, self.params.m);
            // Its own list first: once a neighbour links back, other threads can reach
            // this document and link to it, and their links must not be overwritten.
            {
                let mut own = self.nodes[doc as usize].links[l].lock();
                for &s in &chosen {
                    if !own.iter().any(|o| o.doc == s.doc) {
                        own.push(s);
                    }
                }
                // Other threads may have linked back to this document already, up to the
                // layer's limit: its own choices added can pass it (the file's
                // fixed-width lists then refused the build).
                self.keep_at_most(&mut own, max_links(self.params.m, l));
            }
            for s in &chosen {
                self.link_back(s.doc, doc, s.score, l);
            }
            entries = found;
        }
        if level > top {
            let mut entry = self.entry.lock();
            if level > entry.1 {
                *entry = (doc, level);
            }
        }
    }

    /// The nearest document to `query` reached from `from` on layer `l` by moving to a
    /// better neighbour while there is one.
    fn greedy(&self, query: &[f32], mut from: Scored, l: usize, scratch: &mut Vec<u32>) -> Scored {
        loop {
            let mut moved = false;
            self.links(from.doc, l, scratch);
            for &n in scratch.iter() {
                let s = Scored {
                    score: self.score(query, n),
                    doc: n,
                };
                if s > from {
                    from = s;
                    moved = true;
                }
            }
            if !moved {
                return from;
            }
        }
    }

    /// The best `ef` documents found on layer `l` from `entries` (best first).
    fn search_layer(
        &self,
        query: &[f32],
        entries: &[Scored],
        ef: usize,
        l: usize,
        visited: &mut Visited,
        scratch: &mut Vec<u32>,
    ) -> Vec<Scored> {
        visited.reset(self.nodes.len());
        let mut candidates: BinaryHeap<Scored> = BinaryHeap::with_capacity(4 * ef);
        let mut found: BinaryHeap<std::cmp::Reverse<Scored>> = BinaryHeap::with_capacity(ef + 1);
        for &e in entries {
            if visited.insert(e.doc) {
                candidates.push(e);
                found.push(std::cmp::Reverse(e));
                if found.len() > ef {
                    found.pop();
                }
            }
        }
        while let Some(c) = candidates.pop() {
            if found.len() >= ef && found.peek().is_some_and(|w| c < w.0) {
                break;
            }
            self.links(c.doc, l, scratch);
            scratch.retain(|&n| visited.insert(n));
            for &n in scratch.iter() {
                prefetch(self.row(n));
            }
            for &n in scratch.iter() {
                let s = Scored {
                    score: self.score(query, n),
                    doc: n,
                };
                if found.len() < ef || found.peek().is_some_and(|w| s > w.0) {
                    candidates.push(s);
                    found.push(std::cmp::Reverse(s));
                    if found.len() > ef {
                        found.pop();
                    }
                }
            }
        }
        let mut out: Vec<Scored> = found.into_iter().map(|r| r.0).collect();
        out.sort_unstable_by(|a, b| b.cmp(a));
        out
    }

    /// Up to `max` of `candidates` (best first, scored against the document being
    /// linked) by the diversity heuristic: a candidate is kept if it is nearer the
    /// document than it is to every candidate kept before it.
    fn choose(&self, candidates: &[Scored], max: usize) -> Vec<Scored> {
        let mut chosen: Vec<Scored> = Vec::with_capacity(max + 1);
        for &c in candidates {
            if chosen.len() >= max {
                break;
            }
            let row = self.row(c.doc);
            if chosen
                .iter()
                .all(|k| sane(dot_rows(self.row(k.doc), row)) <= c.score)
            {
                chosen.push(c);
            }
        }
        chosen
    }

    /// Adds `doc` (scoring `score` against `to`) to `to`'s neighbours on layer `l`,
    /// re-choosing them by the heuristic when the list is full.
    fn link_back(&self, to: u32, doc: u32, score: f32, l: usize) {
        let max = max_links(self.params.m, l);
        let mut list = self.nodes[to as usize].links[l].lock();
        if list.iter().any(|s| s.doc == doc) {
            return;
        }
        list.push(Scored { score, doc });
        self.keep_at_most(&mut list, max);
    }

    /// Re-chooses `list` (a document's neighbours on one layer) by the heuristic when it
    /// holds more than `max`.
    fn keep_at_most(&self, list: &mut Vec<Scored>, max: usize) {
        if list.len() > max {
            list.sort_unstable_by(|a, b| b.cmp(a));
            *list = self.choose(list, max);
        }
    }

    /// The layers as the file writes them.
    fn finish(self) -> BuiltGraph {
        let (entry, top) = *self.entry.lock();
        let mut heap_bytes = 0;
        let mut layers: Vec<LayerLinks> = (0..=top).map(|_| LayerLinks::default()).collect();
        for (doc, node) in self.nodes.into_iter().enumerate() {
            heap_bytes += std::mem::size_of::<Node>();
            for (l, list) in node.links.into_vec().into_iter().enumerate() {
                let list = list.into_inner();
                heap_bytes += std::mem::size_of::<Mutex<Vec<Scored>>>()
                    + std::mem::size_of::<Scored>() * list.capacity();
                if l > 0 {
                    layers[l].nodes.push(doc as u32);
                }
                layers[l]
                    .neighbours
                    .push(list.iter().map(|s| s.doc).collect());
            }
        }
        BuiltGraph {
            entry,
            layers,
            heap_bytes,
            reused: 0,
        }
    }
}

/// A row's bytes as f32s.
pub(crate) fn decode(row: &[u8]) -> Vec<f32> {
    row.as_chunks::<4>()
        .0
        .iter()
        .map(|b| f32::from_le_bytes(*b))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_fall_geometrically_and_do_not_depend_on_anything_but_the_id() {
        let m = 16;
        let counts = (0..100_000u32).fold([0usize; 5], |mut c, d| {
            let l = layer_of(d, m).min(4);
            for x in c.iter_mut().take(l + 1) {
                *x += 1;
            }
            c
        });
        assert_eq!(counts[0], 100_000);
        // One in 16 reaches layer 1 (6,250 expected), one in 256 layer 2 (391).
        assert!((5_900..6_600).contains(&counts[1]), "{counts:?}");
        assert!((300..480).contains(&counts[2]), "{counts:?}");
        assert_eq!(layer_of(12_345, m), layer_of(12_345, m));
    }

    #[test]
    fn scored_orders_by_score_then_the_lower_document() {
        let a = Scored { score: 1.0, doc: 5 };
        let b = Scored { score: 1.0, doc: 3 };
        let c = Scored { score: 2.0, doc: 9 };
        assert!(c > a && b > a);
        assert_eq!(sane(f32::NAN), f32::NEG_INFINITY);
        assert_eq!(sane(f32::INFINITY), f32::INFINITY);
    }
}
