//! The vector sets both engines index: read from heddle-eval's embeddings cache (JSONL) or
//! from the binary form this module writes, or made here from a seed (SciFact's real
//! vectors with noise, a clustered mixture). Every vector is normalised to unit length
//! on the way in, so that inner product (heddle's score) and cosine (the peer's) rank
//! alike.
//!
//! The binary form is the one `engine/examples/vector_ann.rs` reads: `n u32 | dim u32 |
//! n × dim f32`, all little-endian — numpy reads it as `np.fromfile(f, "<f4", offset=8)`,
//! so the optional faiss/hnswlib script needs no parser. Document `i` of a set has the
//! external id `i` (decimal) in both engines; query `i` is asked as the text `i`.

use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;

use anyhow::{Context, bail, ensure};
use serde::Deserialize;

/// Vectors of one dimension, row after row.
#[derive(Debug, Clone, PartialEq)]
pub struct Vectors {
    pub dim: usize,
    pub rows: Vec<f32>,
}

impl Vectors {
    pub fn new(dim: usize) -> Self {
        Vectors {
            dim,
            rows: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.rows.len().checked_div(self.dim).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn row(&self, i: usize) -> &[f32] {
        &self.rows[i * self.dim..(i + 1) * self.dim]
    }

    pub fn iter(&self) -> impl Iterator<Item = &[f32]> {
        self.rows.chunks_exact(self.dim.max(1))
    }

    /// Appends `v` normalised to unit length; refuses a wrong width, a non-finite value
    /// or a zero vector (it has no direction to rank by).
    pub fn push_normalised(&mut self, v: &[f32]) -> Result<(), String> {
        if v.len() != self.dim {
            return Err(format!("{} dimensions, expected {}", v.len(), self.dim));
        }
        if let Some(x) = v.iter().find(|x| !x.is_finite()) {
            return Err(format!("a value is {x}"));
        }
        let norm = v
            .iter()
            .map(|&x| f64::from(x) * f64::from(x))
            .sum::<f64>()
            .sqrt();
        if norm == 0.0 {
            return Err("a zero vector".into());
        }
        self.rows
            .extend(v.iter().map(|&x| (f64::from(x) / norm) as f32));
        Ok(())
    }

    /// Reads `path`: JSONL lines `{"_id": …, "vector": [f32, …]}` (heddle-eval embed's
    /// cache; the ids are not kept, the order is) if it ends in `.jsonl`, else the binary
    /// form. Errors name the file and, for JSONL, the line.
    pub fn read(path: &Path) -> anyhow::Result<Vectors> {
        let file =
            std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
        if path.extension().is_some_and(|e| e == "jsonl") {
            read_jsonl(BufReader::new(file), path)
        } else {
            read_binary(BufReader::new(file), path)
        }
    }

    /// Writes the binary form to `path` (its directory is created).
    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let n = u32::try_from(self.len()).context("more than 2³² vectors")?;
        let dim = u32::try_from(self.dim).context("a dimension above 2³²")?;
        let tmp = path.with_extension("partial");
        let mut out = BufWriter::new(
            std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?,
        );
        out.write_all(&n.to_le_bytes())?;
        out.write_all(&dim.to_le_bytes())?;
        for x in &self.rows {
            out.write_all(&x.to_le_bytes())?;
        }
        out.into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_all())
            .with_context(|| format!("writing {}", tmp.display()))?;
        // Whole or absent: a run interrupted while writing leaves no half file to reuse.
        std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))
    }
}

#[derive(Deserialize)]
struct Line {
    vector: Vec<f32>,
}

fn read_jsonl(reader: impl BufRead, path: &Path) -> anyhow::Result<Vectors> {
    let mut out: Option<Vectors> = None;
    for (i, line) in reader.lines().enumerate() {
        let at = || format!("{}:{}", path.display(), i + 1);
        let line = line.with_context(at)?;
        if line.trim().is_empty() {
            continue;
        }
        let parsed: Line = serde_json::from_str(&line)
            .with_context(|| format!("{}: not a {{\"_id\", \"vector\"}} line", at()))?;
        let set = out.get_or_insert_with(|| Vectors::new(parsed.vector.len()));
        ensure!(set.dim > 0, "{}: an empty vector", at());
        set.push_normalised(&parsed.vector)
            .map_err(|e| anyhow::anyhow!("{}: {e}", at()))?;
    }
    let set = out.with_context(|| format!("{}: no vectors", path.display()))?;
    Ok(set)
}

fn read_binary(mut reader: impl Read, path: &Path) -> anyhow::Result<Vectors> {
    let mut head = [0u8; 8];
    reader
        .read_exact(&mut head)
        .with_context(|| format!("{}: shorter than its 8-byte header", path.display()))?;
    let n = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
    let dim = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
    ensure!(
        (1..=65_536).contains(&dim),
        "{}: dimension {dim} in the header (1 to 65,536 expected)",
        path.display()
    );
    let mut set = Vectors::new(dim);
    let mut row = vec![0u8; dim * 4];
    let mut v = vec![0f32; dim];
    for i in 0..n {
        reader.read_exact(&mut row).with_context(|| {
            format!(
                "{}: the header says {n} vectors of {dim}, the file ends in vector {i}",
                path.display()
            )
        })?;
        for (x, b) in v.iter_mut().zip(row.chunks_exact(4)) {
            *x = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        set.push_normalised(&v)
            .map_err(|e| anyhow::anyhow!("{}: vector {i}: {e}", path.display()))?;
    }
    let mut rest = [0u8; 1];
    if reader.read(&mut rest)? != 0 {
        bail!(
            "{}: bytes after the {n} vectors of {dim} its header announces",
            path.display()
        );
    }
    ensure!(n > 0, "{}: no vectors", path.display());
    Ok(set)
}

/// A seeded generator of uniform and Gaussian values (splitmix64), so that a set is the
/// same on every machine and in every run.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller, one value of each pair).
    pub fn gaussian(&mut self) -> f64 {
        let u = self.uniform().max(f64::MIN_POSITIVE);
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * self.uniform()).cos()
    }
}

/// The generator of item `i` under `seed`: each vector has its own stream, so a set can
/// be made in any order (or in parallel) and still be the same.
fn rng_for(seed: u64, stream: u64, i: u64) -> Rng {
    let mut r = Rng::new(seed ^ stream.rotate_left(32));
    let base = r.next_u64();
    Rng::new(base ^ i.wrapping_mul(0xD1B5_4A32_D192_ED03))
}

/// `n` noisy copies of `source`'s rows, cycling through them: copy `i` is row
/// `i mod len` plus Gaussian noise of expected norm `noise` (each coordinate
/// `noise / √dim`), normalised. Real embeddings' structure (their clusters, their
/// anisotropy) is kept while the set grows to any size without encoding anything.
pub fn noisy_copies(source: &Vectors, n: usize, noise: f32, seed: u64) -> Vectors {
    let dim = source.dim;
    let scale = f64::from(noise) / (dim as f64).sqrt();
    let mut out = Vectors::new(dim);
    out.rows.reserve(n * dim);
    let mut v = vec![0f32; dim];
    for i in 0..n {
        let mut rng = rng_for(seed, 1, i as u64);
        let src = source.row(i % source.len());
        for (x, &s) in v.iter_mut().zip(src) {
            *x = (f64::from(s) + scale * rng.gaussian()) as f32;
        }
        // A zero sum has probability zero; a row that is one anyway keeps its source.
        if out.push_normalised(&v).is_err() {
            out.rows.extend_from_slice(src);
        }
    }
    out
}

/// A clustered mixture: `clusters` random unit centres, each vector drawn from one of
/// them (unequal popularity: the square of a uniform value picks it) plus Gaussian noise
/// of expected norm `spread`, normalised. Queries are further draws from the same
/// mixture (`stream` apart), never one of the documents.
pub struct Mixture {
    dim: usize,
    centres: Vectors,
    spread: f32,
    seed: u64,
}

impl Mixture {
    pub fn new(clusters: usize, dim: usize, spread: f32, seed: u64) -> Self {
        let mut centres = Vectors::new(dim);
        for c in 0..clusters.max(1) {
            let mut rng = rng_for(seed, 2, c as u64);
            let v: Vec<f32> = (0..dim).map(|_| rng.gaussian() as f32).collect();
            if centres.push_normalised(&v).is_err() {
                let mut axis = vec![0f32; dim];
                axis[c % dim] = 1.0;
                centres.rows.extend_from_slice(&axis);
            }
        }
        Mixture {
            dim,
            centres,
            spread,
            seed,
        }
    }

    /// `n` draws; `stream` 3 for documents, 4 for queries.
    pub fn draw(&self, n: usize, stream: u64) -> Vectors {
        let scale = f64::from(self.spread) / (self.dim as f64).sqrt();
        let mut out = Vectors::new(self.dim);
        out.rows.reserve(n * self.dim);
        let mut v = vec![0f32; self.dim];
        for i in 0..n {
            let mut rng = rng_for(self.seed, stream, i as u64);
            let u = rng.uniform();
            let c = ((u * u) * self.centres.len() as f64) as usize;
            let centre = self.centres.row(c.min(self.centres.len() - 1));
            for (x, &m) in v.iter_mut().zip(centre) {
                *x = (f64::from(m) + scale * rng.gaussian()) as f32;
            }
            if out.push_normalised(&v).is_err() {
                out.rows.extend_from_slice(centre);
            }
        }
        out
    }

    pub fn documents(&self, n: usize) -> Vectors {
        self.draw(n, 3)
    }

    pub fn queries(&self, n: usize) -> Vectors {
        self.draw(n, 4)
    }
}
