//! Document reordering by recursive graph bisection ("BP", Dhulipala et al. 2016;
//! Mackenzie et al. 2021): an index-time choice of which internal doc id each document
//! of a new segment gets, so that documents sharing terms sit close together.
//!
//! The documents and their terms form a bipartite graph. BP splits the documents in two
//! halves, then swaps documents between the halves while a swap lowers the estimated
//! cost of the postings, then recurses into each half. The cost of a term in a part of
//! `n` documents, `d` of them containing it, is `d · log2(n / (d + 1))` bits: the size of
//! its gaps if its documents were spread evenly. Moving a document from one half to the
//! other changes the degrees of its terms only, so its gain is a sum over its terms of a
//! per-term difference computed once per iteration. Two documents swap when the sum of
//! their gains is positive; the best candidates of each side are paired first.
//!
//! Smaller gaps pack into fewer bits, and documents that share a query's terms end up in
//! the same 128-posting blocks, whose block-max bounds then leave the others skippable.
//!
//! Deterministic: no randomness (the initial split is the insertion order), every gain
//! is a sequential sum over one document's terms, and ties are broken by doc id, so the
//! order does not depend on the number of threads or on timing.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use rayon::prelude::*;

/// How a commit orders the documents of the segment it builds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Reorder {
    /// Insertion order: the i-th document added is the segment's doc i.
    #[default]
    None,
    /// Recursive graph bisection over the flat field's terms.
    Bp(BpConfig),
}

/// Bounds on the work of [`Reorder::Bp`]; the defaults follow the papers' settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BpConfig {
    /// Terms in fewer documents than this are left out of the graph: they cost few bits
    /// wherever their documents go, and add work.
    pub min_df: u32,
    /// Terms in more than this fraction of the segment's documents are left out: their
    /// gaps are small in any order.
    pub max_df_ratio: f64,
    /// A part of at most this many documents is not split further.
    pub min_partition: u32,
    /// Levels of bisection at most (the root is level 0; at most 32 are run).
    pub max_depth: u32,
    /// Swap rounds per bisection at most (at most 64 are run); a
    /// bisection also stops when no swap gains.
    pub max_iterations: u32,
}

/// The most levels of bisection any configuration runs: 2^32 documents are more than
/// a segment holds.
const MAX_DEPTH: u32 = 32;

/// The most swap rounds any configuration runs per bisection. Rounds need not converge
/// (two documents with the same terms have the same positive gain on either side and
/// would swap back and forth), so a bound is part of the method.
const MAX_ITERATIONS: u32 = 64;

impl Default for BpConfig {
    fn default() -> Self {
        BpConfig {
            min_df: 4,
            max_df_ratio: 0.5,
            min_partition: 32,
            max_depth: 24,
            max_iterations: 20,
        }
    }
}

/// Reports reordering progress as (work done, total work), in document-levels; called
/// from build threads, often: the receiver throttles its output.
pub type ReorderProgress = Arc<dyn Fn(u64, u64) + Send + Sync>;

/// The documents' terms (ids `0..n_terms`, each doc's ascending), compressed by row.
pub(crate) struct ForwardIndex {
    offsets: Vec<usize>,
    terms: Vec<u32>,
    n_terms: usize,
}

impl ForwardIndex {
    /// Builds the graph from `n_docs` documents and the postings of each term (doc ids
    /// ascending across the slices of one term; a term's df is the slices' total
    /// length), keeping the terms whose df is within `config`'s bounds.
    pub(crate) fn from_postings(
        n_docs: usize,
        terms: &[Vec<&[u32]>],
        config: &BpConfig,
    ) -> ForwardIndex {
        let max_df = (config.max_df_ratio * n_docs as f64).floor();
        let kept: Vec<&Vec<&[u32]>> = terms
            .iter()
            .filter(|lists| {
                let df = lists.iter().map(|l| l.len()).sum::<usize>();
                df >= config.min_df.max(2) as usize && df as f64 <= max_df
            })
            .collect();
        let mut offsets = vec![0usize; n_docs + 1];
        for lists in &kept {
            for &d in lists.iter().flat_map(|l| l.iter()) {
                offsets[d as usize + 1] += 1;
            }
        }
        for i in 0..n_docs {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut out = vec![0u32; offsets[n_docs]];
        for (t, lists) in kept.iter().enumerate() {
            for &d in lists.iter().flat_map(|l| l.iter()) {
                out[fill[d as usize]] = t as u32;
                fill[d as usize] += 1;
            }
        }
        ForwardIndex {
            offsets,
            terms: out,
            n_terms: kept.len(),
        }
    }

    fn terms_of(&self, doc: u32) -> &[u32] {
        &self.terms[self.offsets[doc as usize]..self.offsets[doc as usize + 1]]
    }

    fn n_docs(&self) -> usize {
        self.offsets.len() - 1
    }
}

/// Per-bisection working arrays, one entry per term; all zero between uses.
struct Scratch {
    left: Vec<u32>,
    right: Vec<u32>,
    gain_left: Vec<f32>,
    gain_right: Vec<f32>,
}

struct Bisector<'a> {
    graph: &'a ForwardIndex,
    config: BpConfig,
    /// `log2(i)` for `i` in `0..=n_docs + 1` (entry 0 unused).
    log2: Vec<f32>,
    scratch: Mutex<Vec<Scratch>>,
    done: AtomicU64,
    total: u64,
    progress: Option<ReorderProgress>,
}

/// The order BP gives the graph's documents: `order[new] = old`. Runs on the current
/// rayon pool.
pub(crate) fn bp_order(
    graph: &ForwardIndex,
    config: &BpConfig,
    progress: Option<ReorderProgress>,
) -> Vec<u32> {
    let n = graph.n_docs();
    let mut order: Vec<u32> = (0..n as u32).collect();
    let min_partition = config.min_partition.max(2) as usize;
    let mut levels = 0u64;
    let mut size = n;
    while size > min_partition && levels < config.max_depth.min(MAX_DEPTH) as u64 {
        levels += 1;
        size = size.div_ceil(2);
    }
    let log2 = (0..n + 2)
        .map(|i| {
            if i == 0 {
                0.0
            } else {
                (i as f64).log2() as f32
            }
        })
        .collect();
    let bisector = Bisector {
        graph,
        config: BpConfig {
            min_partition: min_partition as u32,
            max_depth: config.max_depth.min(MAX_DEPTH),
            max_iterations: config.max_iterations.min(MAX_ITERATIONS),
            ..*config
        },
        log2,
        scratch: Mutex::new(Vec::new()),
        done: AtomicU64::new(0),
        total: levels * n as u64,
        progress,
    };
    if let Some(p) = &bisector.progress {
        p(0, bisector.total);
    }
    bisector.bisect(&mut order, 0);
    if let Some(p) = &bisector.progress {
        p(bisector.total, bisector.total);
    }
    order
}

/// Below this many documents a part's gains are computed on one thread.
const PARALLEL_GAINS: usize = 4096;

impl Bisector<'_> {
    fn bisect(&self, docs: &mut [u32], depth: u32) {
        if docs.len() <= self.config.min_partition as usize || depth >= self.config.max_depth {
            return;
        }
        self.split(docs);
        let done = self.done.fetch_add(docs.len() as u64, Ordering::Relaxed) + docs.len() as u64;
        if let Some(p) = &self.progress {
            p(done.min(self.total), self.total);
        }
        let (left, right) = docs.split_at_mut(docs.len() / 2);
        rayon::join(
            || self.bisect(left, depth + 1),
            || self.bisect(right, depth + 1),
        );
    }

    fn take_scratch(&self) -> Scratch {
        self.scratch.lock().pop().unwrap_or_else(|| {
            let n = self.graph.n_terms;
            Scratch {
                left: vec![0; n],
                right: vec![0; n],
                gain_left: vec![0.0; n],
                gain_right: vec![0.0; n],
            }
        })
    }

    /// Rearranges `docs` so that its first half and its second half are the two parts.
    fn split(&self, docs: &mut [u32]) {
        let graph = self.graph;
        let mid = docs.len() / 2;
        let mut s = self.take_scratch();
        let mut touched: Vec<u32> = Vec::new();
        for (i, &d) in docs.iter().enumerate() {
            for &t in graph.terms_of(d) {
                let t = t as usize;
                if s.left[t] == 0 && s.right[t] == 0 {
                    touched.push(t as u32);
                }
                if i < mid {
                    s.left[t] += 1;
                } else {
                    s.right[t] += 1;
                }
            }
        }
        let (log_left, log_right) = (self.log2[mid], self.log2[docs.len() - mid]);
        let mut gains: Vec<(f32, u32)> = vec![(0.0, 0); docs.len()];
        for _ in 0..self.config.max_iterations {
            for &t in &touched {
                let t = t as usize;
                let (l, r) = (s.left[t], s.right[t]);
                s.gain_left[t] = self.move_gain(log_left, log_right, l, r);
                s.gain_right[t] = self.move_gain(log_right, log_left, r, l);
            }
            let (gl, gr) = (&s.gain_left, &s.gain_right);
            let gain_of = |i: usize, d: u32| -> (f32, u32) {
                let table = if i < mid { gl } else { gr };
                let g = graph.terms_of(d).iter().map(|&t| table[t as usize]).sum();
                (g, d)
            };
            if docs.len() >= PARALLEL_GAINS {
                gains
                    .par_iter_mut()
                    .zip(docs.par_iter())
                    .enumerate()
                    .for_each(|(i, (g, &d))| *g = gain_of(i, d));
            } else {
                for (i, (g, &d)) in gains.iter_mut().zip(docs.iter()).enumerate() {
                    *g = gain_of(i, d);
                }
            }
            let by_gain = |a: &(f32, u32), b: &(f32, u32)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
            let (gains_left, gains_right) = gains.split_at_mut(mid);
            gains_left.sort_unstable_by(by_gain);
            gains_right.sort_unstable_by(by_gain);
            let swaps = gains_left
                .iter()
                .zip(gains_right.iter())
                .take_while(|(a, b)| a.0 + b.0 > 0.0)
                .count();
            for (a, b) in gains_left[..swaps].iter().zip(&gains_right[..swaps]) {
                for &t in graph.terms_of(a.1) {
                    s.left[t as usize] -= 1;
                    s.right[t as usize] += 1;
                }
                for &t in graph.terms_of(b.1) {
                    s.right[t as usize] -= 1;
                    s.left[t as usize] += 1;
                }
            }
            // The slice takes the new sides, best-kept first (any order within a side).
            for (i, slot) in docs.iter_mut().enumerate() {
                *slot = if i < mid {
                    if i < swaps {
                        gains_right[i].1
                    } else {
                        gains_left[i].1
                    }
                } else {
                    let j = i - mid;
                    if j < swaps {
                        gains_left[j].1
                    } else {
                        gains_right[j].1
                    }
                };
            }
            if swaps == 0 {
                break;
            }
        }
        for &t in &touched {
            let t = t as usize;
            s.left[t] = 0;
            s.right[t] = 0;
            s.gain_left[t] = 0.0;
            s.gain_right[t] = 0.0;
        }
        self.scratch.lock().push(s);
    }

    /// What moving one document holding the term from the part of `from` documents
    /// holding it (log2 of its size `log_from`) to the other saves, in estimated bits.
    fn move_gain(&self, log_from: f32, log_to: f32, from: u32, to: u32) -> f32 {
        let cost = |log_n: f32, d: u32| -> f32 {
            if d == 0 {
                0.0
            } else {
                d as f32 * (log_n - self.log2[d as usize + 1])
            }
        };
        let before = cost(log_from, from) + cost(log_to, to);
        let after = cost(log_from, from.saturating_sub(1)) + cost(log_to, to + 1);
        before - after
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two topics, mixed: the docs `topic` names use terms 0..8, the others 8..16.
    fn topic(d: u32) -> bool {
        d.wrapping_mul(0x9e37_79b9).rotate_left(7).is_multiple_of(2)
    }

    fn interleaved(n: u32) -> Vec<Vec<u32>> {
        let mut postings = vec![Vec::new(); 16];
        for d in 0..n {
            let base = if topic(d) { 0 } else { 8 };
            for t in base..base + 8 {
                if (d / 2 + t) % 3 != 0 {
                    postings[t as usize].push(d);
                }
            }
        }
        postings
    }

    fn graph(n: u32, postings: &[Vec<u32>], config: &BpConfig) -> ForwardIndex {
        let lists: Vec<Vec<&[u32]>> = postings.iter().map(|p| vec![p.as_slice()]).collect();
        ForwardIndex::from_postings(n as usize, &lists, config)
    }

    #[test]
    fn bp_separates_topics_and_is_a_permutation() {
        let config = BpConfig {
            min_partition: 8,
            ..BpConfig::default()
        };
        let g = graph(256, &interleaved(256), &config);
        let order = bp_order(&g, &config, None);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..256).collect::<Vec<u32>>());
        // The first split puts each topic on its own side.
        let on_left = order[..128].iter().filter(|&&d| topic(d)).count();
        let all = (0..256).filter(|&d| topic(d)).count();
        let apart = on_left.max(all - on_left) - on_left.min(all - on_left);
        assert!(
            apart + 16 >= all,
            "left half has {on_left} of the {all} docs of one topic"
        );
    }

    #[test]
    fn bp_is_deterministic_across_thread_counts() {
        let config = BpConfig {
            min_partition: 4,
            ..BpConfig::default()
        };
        let g = graph(5000, &interleaved(5000), &config);
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| bp_order(&g, &config, None))
        };
        assert_eq!(run(1), run(3));
    }

    #[test]
    fn degenerate_graphs_give_a_permutation() {
        let config = BpConfig::default();
        for n in [0usize, 1, 2, 33, 100] {
            let lists: Vec<Vec<&[u32]>> = Vec::new();
            let g = ForwardIndex::from_postings(n, &lists, &config);
            assert_eq!(
                bp_order(&g, &config, None),
                (0..n as u32).collect::<Vec<_>>()
            );
        }
    }
}
