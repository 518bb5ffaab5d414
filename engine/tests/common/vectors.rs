//! Vectors for the engine's vector tests, and the brute-force oracle they are checked
//! against (written here from the definition, not with the engine's code).

use std::path::Path;

use heddle::{AnalyzerConfig, Document, Hit, Index, IndexSettings};

/// A dimension with one full block of the dot product's 16 lanes and a tail of 8.
pub const DIM: usize = 24;

/// A deterministic pseudo-random unit vector for `seed` (xorshift, then normalised).
pub fn unit_vector(seed: u64, dim: usize) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut v: Vec<f32> = (0..dim)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

/// Document `doc{i}` with a few words and its own vector (`unit_vector(i)`).
pub fn vector_doc(i: usize) -> Document {
    let words = ["virus", "mask", "vaccine", "hospital", "bat", "droplet"];
    let text: Vec<&str> = (0..(2 + i % 5)).map(|j| words[(i + j * 5) % 6]).collect();
    Document::new(format!("doc{i}"), format!("title {i}"), text.join(" "))
        .with_vector(unit_vector(i as u64, DIM))
}

/// A new English index in `dir` whose documents carry vectors of `dim` dimensions.
pub fn vector_index(dir: &Path, dim: usize) -> Index {
    let settings = IndexSettings {
        analyzer: AnalyzerConfig::english(),
        vector_dim: Some(dim),
        ..Default::default()
    };
    Index::create(dir, settings).unwrap()
}

/// Every live document's (id, inner product with `query`), best first (ties by id).
pub fn brute_force(live: &[Document], query: &[f32]) -> Vec<(String, f64)> {
    let mut scored: Vec<(String, f64)> = live
        .iter()
        .map(|d| {
            let v = d.vector.as_ref().expect("every document has a vector");
            let dot: f64 = v
                .iter()
                .zip(query)
                .map(|(&a, &b)| a as f64 * b as f64)
                .sum();
            (d.id.clone(), dot)
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored
}

/// Asserts that `hits` are an exact top `k` of `live` for `query`: as many as k (or all
/// live documents), best first, each scored with its own vector, and each rank's score
/// the brute force's at that rank (so no better document was missed). Scores are
/// compared within f32 rounding: the engine sums in f32, the oracle in f64.
pub fn assert_exact_top_k(hits: &[Hit], live: &[Document], query: &[f32], k: usize) {
    let expected = brute_force(live, query);
    assert_eq!(hits.len(), k.min(live.len()), "hit count");
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-5;
    for (rank, hit) in hits.iter().enumerate() {
        let own = expected
            .iter()
            .find(|(id, _)| *id == hit.id)
            .unwrap_or_else(|| panic!("{} is not a live document", hit.id));
        assert!(
            close(hit.score, own.1),
            "{}: score {} vs its own {}",
            hit.id,
            hit.score,
            own.1
        );
        assert!(
            close(hit.score, expected[rank].1),
            "rank {rank}: {} scored {}, the brute force's rank {rank} is {} at {}",
            hit.id,
            hit.score,
            expected[rank].0,
            expected[rank].1
        );
        if rank > 0 {
            assert!(
                hits[rank - 1].score >= hit.score,
                "not best first at {rank}"
            );
        }
    }
    let mut ids: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), hits.len(), "an id twice");
}

/// A mixture of Gaussians on the unit sphere, as text embeddings cluster by topic:
/// `clusters` random unit centres, of unequal popularity; a vector is a centre plus
/// Gaussian noise of about `spread` in norm, normalised. Deterministic: vector `i` is the
/// same on every call.
pub struct Mixture {
    centres: Vec<Vec<f32>>,
    spread: f32,
}

/// A deterministic generator of uniform and Gaussian values (xorshift64*).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A standard normal value (Box–Muller).
    fn gaussian(&mut self) -> f64 {
        let u = self.uniform().max(1e-300);
        let v = self.uniform();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

fn normalised(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

impl Mixture {
    pub fn new(clusters: usize, dim: usize, spread: f32, seed: u64) -> Self {
        let centres = (0..clusters)
            .map(|c| {
                let mut rng = Rng::new(seed ^ (c as u64) << 20);
                normalised((0..dim).map(|_| rng.gaussian() as f32).collect())
            })
            .collect();
        Mixture { centres, spread }
    }

    /// Vector `i`: its cluster drawn with probability falling with the cluster's number
    /// (the square of a uniform value picks it), then the noise.
    pub fn vector(&self, i: u64) -> Vec<f32> {
        let mut rng = Rng::new(i.wrapping_add(0x5EED));
        let u = rng.uniform();
        let centre = &self.centres[((u * u) * self.centres.len() as f64) as usize];
        let scale = self.spread / (centre.len() as f32).sqrt();
        normalised(
            centre
                .iter()
                .map(|&c| c + scale * rng.gaussian() as f32)
                .collect(),
        )
    }
}

/// Vector `i` with uniformly random components in [-1, 1) (not normalised: no structure
/// at all for the lists to find).
pub fn uniform_vector(i: u64, dim: usize) -> Vec<f32> {
    let mut rng = Rng::new(i ^ 0xA11CE);
    (0..dim)
        .map(|_| (2.0 * rng.uniform() - 1.0) as f32)
        .collect()
}

/// Mean recall@k of `approximate` against `exact` (lists of hits per query): the share
/// of each exact top k the approximate one found, by internal doc id.
pub fn mean_recall(exact: &[Vec<Hit>], approximate: &[Vec<Hit>]) -> f64 {
    assert_eq!(exact.len(), approximate.len());
    let per_query = exact.iter().zip(approximate).map(|(e, a)| {
        let found = e
            .iter()
            .filter(|h| a.iter().any(|g| g.doc == h.doc))
            .count();
        found as f64 / e.len().max(1) as f64
    });
    per_query.sum::<f64>() / exact.len() as f64
}
