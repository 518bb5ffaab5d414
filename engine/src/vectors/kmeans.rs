//! Spherical k-means over a segment's rows: the centroids of an IVF file and the list
//! each document goes to.
//!
//! A document belongs to the centroid with which its inner product is largest, the same
//! measure a search ranks lists and documents by. Centroids are kept at unit length
//! (the normalised mean of their documents), so for unit vectors (MiniLM's) the largest
//! inner product is the nearest centroid, and a centroid cannot take documents from
//! its neighbours by being long.
//!
//! Bounded and deterministic: training uses at most [`SAMPLE_PER_LIST`] rows a list,
//! chosen by a fixed-seed generator, for at most [`MAX_ITERATIONS`] rounds; each
//! document's assignment depends only on the centroids and its row, and centroid sums
//! are added in document order, so the same rows give the same file whatever the
//! threads. The work is O(sample × lists × dim) a round and O(docs × lists × dim) for
//! the final assignment; the heap O(docs + lists × dim), never a copy of the rows.

use rayon::prelude::*;

use super::dot::dot;
use super::file::Rows;

/// Training rows per list, at most (Faiss warns below 39; more changes the centroids
/// little and costs a round in proportion).
pub(crate) const SAMPLE_PER_LIST: usize = 64;

/// Rounds of assignment and update, at most (fewer if no assignment changes).
pub(crate) const MAX_ITERATIONS: usize = 10;

/// The generator's seed: fixed, so a build is reproducible.
const SEED: u64 = 0x6865_6464_6c65_0016;

/// Rows a parallel task assigns.
const TASK_ROWS: usize = 512;

/// How much an empty list's new centroid differs from the one it splits (relative, per
/// component).
const SPLIT: f32 = 1.0 / 1024.0;

/// The outcome: `lists × dim` centroid values (each centroid of unit length, or zero),
/// the list of each document, and the most heap the clustering held.
pub(crate) struct Clustering {
    pub centroids: Vec<f32>,
    pub assignment: Vec<u32>,
    pub heap_bytes: usize,
}

/// Clusters `rows` (finite values) into `lists` lists (1 to the number of rows),
/// assigning rows on rayon's current pool if `parallel`, else on this thread.
pub(crate) fn cluster(rows: Rows<'_>, lists: usize, parallel: bool) -> Clustering {
    let (docs, dim) = (rows.len(), rows.dim());
    let lists = lists.clamp(1, docs.max(1));
    let sample = sample_indices(docs, (lists * SAMPLE_PER_LIST).min(docs), SEED);
    let row = |doc: usize| rows.row(doc).expect("doc ids below the row count");

    // Initial centroids: evenly spaced rows of the (random) sample, so that documents
    // stored in topic order still seed every part of the space.
    let mut centroids = vec![0f32; lists * dim];
    for (l, c) in centroids.chunks_exact_mut(dim.max(1)).enumerate() {
        if let Some(&doc) = sample.get(l * sample.len() / lists) {
            decode_into(row(doc as usize), c);
            normalise(c);
        }
    }
    let mut assignment = vec![u32::MAX; sample.len()];
    let mut sums = vec![0f64; lists * dim];
    let mut counts = vec![0u32; lists];
    for _ in 0..MAX_ITERATIONS {
        let changed = assign(
            rows,
            Some(&sample),
            &centroids,
            dim,
            &mut assignment,
            parallel,
        );
        if changed == 0 {
            break;
        }
        update(
            rows,
            &sample,
            &assignment,
            &mut centroids,
            &mut sums,
            &mut counts,
            dim,
        );
    }
    let training_bytes =
        4 * (sample.capacity() + assignment.capacity() + counts.capacity()) + 8 * sums.capacity();
    drop((sample, sums, counts));
    let mut all = vec![u32::MAX; docs];
    assign(rows, None, &centroids, dim, &mut all, parallel);
    Clustering {
        heap_bytes: 4 * centroids.capacity() + training_bytes.max(4 * all.capacity()),
        centroids,
        assignment: all,
    }
}

/// Sets `out[i]` to the list of row `docs[i]` (row `i` without `docs`): the centroid with
/// the largest inner product, the first of equals. Returns how many changed.
fn assign(
    rows: Rows<'_>,
    docs: Option<&[u32]>,
    centroids: &[f32],
    dim: usize,
    out: &mut [u32],
    parallel: bool,
) -> usize {
    let task = |(t, part): (usize, &mut [u32])| -> usize {
        let mut changed = 0;
        for (i, slot) in part.iter_mut().enumerate() {
            let at = t * TASK_ROWS + i;
            let doc = docs.map_or(at, |d| d[at] as usize);
            let row = rows.row(doc).expect("doc ids below the row count");
            let best = nearest(centroids, dim, row);
            changed += usize::from(*slot != best);
            *slot = best;
        }
        changed
    };
    if parallel {
        out.par_chunks_mut(TASK_ROWS).enumerate().map(task).sum()
    } else {
        out.chunks_mut(TASK_ROWS).enumerate().map(task).sum()
    }
}

/// The centroid of `centroids` with the largest inner product with `row`; the first of
/// equals (a score that is not a number never wins).
#[inline]
pub(crate) fn nearest(centroids: &[f32], dim: usize, row: &[u8]) -> u32 {
    let mut best = (f32::NEG_INFINITY, 0u32);
    for (l, c) in centroids.chunks_exact(dim.max(1)).enumerate() {
        let score = dot(c, row);
        if score > best.0 {
            best = (score, l as u32);
        }
    }
    best.1
}

/// Moves each centroid to its rows' normalised mean, then gives each empty list half of
/// the largest one (a copy of its centroid, both nudged apart).
fn update(
    rows: Rows<'_>,
    sample: &[u32],
    assignment: &[u32],
    centroids: &mut [f32],
    sums: &mut [f64],
    counts: &mut [u32],
    dim: usize,
) {
    sums.fill(0.0);
    counts.fill(0);
    for (&doc, &l) in sample.iter().zip(assignment) {
        let row = rows.row(doc as usize).expect("doc ids below the row count");
        let sum = &mut sums[l as usize * dim..(l as usize + 1) * dim];
        for (s, b) in sum.iter_mut().zip(row.as_chunks::<4>().0) {
            *s += f64::from(f32::from_le_bytes(*b));
        }
        counts[l as usize] += 1;
    }
    for ((c, sum), &count) in centroids
        .chunks_exact_mut(dim.max(1))
        .zip(sums.chunks_exact(dim.max(1)))
        .zip(counts.iter())
    {
        let norm = sum.iter().map(|s| s * s).sum::<f64>().sqrt();
        // An empty list, or rows that cancel out, keep the centroid they had.
        if count > 0 && norm > 0.0 && norm.is_finite() {
            for (v, s) in c.iter_mut().zip(sum) {
                *v = (s / norm) as f32;
            }
        }
    }
    for empty in 0..counts.len() {
        if counts[empty] != 0 {
            continue;
        }
        let Some((largest, &size)) = counts
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(&a.0)))
        else {
            break;
        };
        if size < 2 {
            break; // nothing left to split
        }
        for i in 0..dim {
            let (from, to) = (largest * dim + i, empty * dim + i);
            let nudge = if i % 2 == 0 { SPLIT } else { -SPLIT };
            centroids[to] = centroids[from] * (1.0 + nudge);
            centroids[from] *= 1.0 - nudge;
        }
        normalise(&mut centroids[empty * dim..(empty + 1) * dim]);
        normalise(&mut centroids[largest * dim..(largest + 1) * dim]);
        counts[empty] = size / 2;
        counts[largest] = size - size / 2;
    }
}

fn decode_into(row: &[u8], out: &mut [f32]) {
    for (v, b) in out.iter_mut().zip(row.as_chunks::<4>().0) {
        *v = f32::from_le_bytes(*b);
    }
}

/// Scales `v` to unit length (in f64, so that no finite vector overflows); a zero vector
/// stays zero.
fn normalise(v: &mut [f32]) {
    let norm = v
        .iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt();
    if norm > 0.0 && norm.is_finite() {
        for x in v.iter_mut() {
            *x = (f64::from(*x) / norm) as f32;
        }
    }
}

/// `take` distinct indices of `0..n`, ascending, each set of them equally likely
/// (selection sampling, Knuth's algorithm S), from a generator seeded with `seed`.
fn sample_indices(n: usize, take: usize, seed: u64) -> Vec<u32> {
    let mut rng = SplitMix64(seed);
    let mut out = Vec::with_capacity(take);
    for i in 0..n {
        let needed = (take - out.len()) as u64;
        if needed == 0 {
            break;
        }
        if rng.next() % ((n - i) as u64) < needed {
            out.push(i as u32);
        }
    }
    out
}

/// Steele, Lea and Flood's SplitMix64: small, fast and good enough to choose a sample.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vectors::{VectorTable, encode_rows};
    use std::path::Path;

    fn clustered(rows: &[Vec<f32>], lists: usize, parallel: bool) -> Clustering {
        let dim = rows[0].len() as u32;
        let body = encode_rows(dim, rows.len(), rows.iter().map(Vec::as_slice));
        let table = VectorTable::open(Path::new("v"), &body, rows.len() as u32, dim).unwrap();
        cluster(table.rows(&body), lists, parallel)
    }

    #[test]
    fn samples_are_distinct_ascending_and_complete_when_asked_for_all() {
        let s = sample_indices(1000, 100, 7);
        assert_eq!(s.len(), 100);
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(sample_indices(50, 50, 7), (0..50).collect::<Vec<u32>>());
        assert_eq!(
            sample_indices(1000, 100, 7),
            s,
            "the same seed, the same sample"
        );
        assert_ne!(sample_indices(1000, 100, 8), s);
    }

    #[test]
    fn well_separated_groups_become_lists_and_every_row_its_nearest() {
        // Three tight groups around the axes, 40 rows each, interleaved.
        let rows: Vec<Vec<f32>> = (0..120)
            .map(|i| {
                let mut v = vec![0.01 * (i % 7) as f32; 3];
                v[i % 3] = 1.0;
                v
            })
            .collect();
        let c = clustered(&rows, 3, false);
        assert_eq!(c.centroids.len(), 9);
        for (i, &l) in c.assignment.iter().enumerate() {
            assert_eq!(l, c.assignment[i % 3], "row {i} is with its group");
        }
        let mut groups: Vec<u32> = c.assignment[..3].to_vec();
        groups.sort();
        assert_eq!(groups, [0, 1, 2], "one list per group");
        for centroid in c.centroids.chunks(3) {
            let norm: f32 = centroid.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-5, "{centroid:?}");
        }
        assert!(c.heap_bytes >= 4 * (c.centroids.len() + c.assignment.len()));
    }

    #[test]
    fn threads_do_not_change_the_outcome() {
        let rows: Vec<Vec<f32>> = (0..3000u32)
            .map(|i| {
                (0..8)
                    .map(|j| ((i * 7919 + j * 104_729) % 1000) as f32 / 500.0 - 1.0)
                    .collect()
            })
            .collect();
        let one = clustered(&rows, 20, false);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let many = pool.install(|| clustered(&rows, 20, true));
        assert_eq!(one.assignment, many.assignment);
        assert_eq!(one.centroids, many.centroids);
    }

    #[test]
    fn identical_rows_one_dimension_and_zero_rows_end_without_a_panic() {
        let same = vec![vec![0.6f32, 0.8]; 500];
        let c = clustered(&same, 20, false);
        assert_eq!(c.assignment.len(), 500);
        assert!(c.assignment.iter().all(|&l| l < 20));
        let line: Vec<Vec<f32>> = (0..300).map(|i| vec![i as f32 - 150.0]).collect();
        let c = clustered(&line, 17, false);
        // Two directions on a line: positives in one list, negatives in another.
        assert_eq!(c.assignment[0], c.assignment[10]);
        assert_eq!(c.assignment[299], c.assignment[200]);
        assert_ne!(c.assignment[0], c.assignment[299]);
        let zeros = vec![vec![0f32; 4]; 50];
        let c = clustered(&zeros, 7, true);
        assert!(c.centroids.iter().all(|v| v.is_finite()));
        // One row, one list.
        let c = clustered(&[vec![1.0, 2.0]], 5, false);
        assert_eq!(
            (c.assignment.as_slice(), c.centroids.len()),
            (&[0u32][..], 2)
        );
    }

    #[test]
    fn the_nearest_centroid_is_the_largest_inner_product_the_first_of_equals() {
        let centroids = [1.0f32, 0.0, 0.0, 1.0, 0.0, 1.0];
        let row: Vec<u8> = [0.2f32, 0.9].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(nearest(&centroids, 2, &row), 1);
        let row: Vec<u8> = [f32::NAN, 0.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(nearest(&centroids, 2, &row), 0);
    }
}
