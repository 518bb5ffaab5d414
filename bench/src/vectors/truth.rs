//! The yardstick: each query's exact top k by inner product, computed here by brute force
//! (neither engine's own exact search, so that neither is marked against itself), and
//! recall@k against it.

use super::data::Vectors;

/// Each query's exact top `k` document numbers, best first; equal scores rank the lower
/// number first. Scores are accumulated in f64, so rounding cannot reorder two documents
/// whose f32 scores an engine computes differently only in the last bit... unless their
/// true scores are that close, which recall then counts as a miss either way (rare on
/// real-valued vectors; see docs/DECISIONS.md, "The vector peer").
pub fn exact_top_k(docs: &Vectors, queries: &Vectors, k: usize, threads: usize) -> Vec<Vec<u32>> {
    let n = queries.len();
    let threads = threads.clamp(1, n.max(1));
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); n];
    let chunk = n.div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for (t, slots) in out.chunks_mut(chunk).enumerate() {
            s.spawn(move || {
                for (j, slot) in slots.iter_mut().enumerate() {
                    *slot = top_k_of(docs, queries.row(t * chunk + j), k);
                }
            });
        }
    });
    out
}

fn top_k_of(docs: &Vectors, q: &[f32], k: usize) -> Vec<u32> {
    // (score, doc) kept sorted best first; k is small (10), so insertion is cheapest.
    let mut best: Vec<(f64, u32)> = Vec::with_capacity(k + 1);
    for (d, row) in docs.iter().enumerate() {
        let s = dot(row, q);
        if best.len() == k && s <= best[k - 1].0 {
            continue;
        }
        let at = best.partition_point(|&(b, _)| b >= s);
        best.insert(at, (s, d as u32));
        best.truncate(k);
    }
    best.into_iter().map(|(_, d)| d).collect()
}

/// Inner product in f64, four lanes (so that the compiler vectorises it).
pub fn dot(a: &[f32], b: &[f32]) -> f64 {
    let mut acc = [0f64; 4];
    let chunks = a.len() / 4 * 4;
    for i in (0..chunks).step_by(4) {
        for l in 0..4 {
            acc[l] += f64::from(a[i + l]) * f64::from(b[i + l]);
        }
    }
    let mut s = acc[0] + acc[1] + acc[2] + acc[3];
    for i in chunks..a.len() {
        s += f64::from(a[i]) * f64::from(b[i]);
    }
    s
}

/// Mean recall@k over the queries: the share of each query's exact top k that `found`
/// holds (`found[i]` as external ids, the document numbers in decimal; anything else
/// counts as a miss). `found` may be longer or shorter than k; only its first k count.
pub fn recall(exact: &[Vec<u32>], found: &[Vec<String>], k: usize) -> f64 {
    assert_eq!(exact.len(), found.len(), "one answer per query");
    if exact.is_empty() {
        return 0.0;
    }
    let per_query = exact.iter().zip(found).map(|(e, f)| {
        let want = &e[..e.len().min(k)];
        if want.is_empty() {
            return 1.0;
        }
        let got: Vec<u32> = f
            .iter()
            .take(k)
            .filter_map(|id| id.parse::<u32>().ok())
            .collect();
        let hits = want.iter().filter(|d| got.contains(d)).count();
        hits as f64 / want.len() as f64
    });
    per_query.sum::<f64>() / exact.len() as f64
}
