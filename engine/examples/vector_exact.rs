//! Measures exact vector search: builds an index of N random unit vectors of DIM
//! dimensions (default 171,000 × 384, TREC-COVID's size and MiniLM's dimension) in a
//! temporary directory, then times queries of random unit vectors, one thread, after one
//! warm-up query (which verifies the file's checksums).
//! Usage: `vector_exact [N] [DIM] [QUERIES] [K]`; run it with `--release`.

use std::time::Instant;

use heddle::{Document, Index, IndexSettings};

/// A pseudo-random unit vector (xorshift).
fn unit_vector(seed: u64, dim: usize) -> Vec<f32> {
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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = |i: usize, default: usize| -> Result<usize, Box<dyn std::error::Error>> {
        Ok(std::env::args().nth(i).map_or(Ok(default), |a| a.parse())?)
    };
    let (n, dim, queries, k) = (arg(1, 171_000)?, arg(2, 384)?, arg(3, 50)?, arg(4, 10)?);
    let dir = tempfile::tempdir()?;
    let settings = IndexSettings {
        vector_dim: Some(dim),
        ..Default::default()
    };
    let index = Index::create(dir.path(), settings)?;
    let started = Instant::now();
    let mut writer = index.writer()?;
    writer.set_memory_budget(512 << 20);
    for i in 0..n {
        writer
            .add(Document::new(format!("d{i}"), "", "").with_vector(unit_vector(i as u64, dim)))?;
    }
    writer.commit()?;
    writer.wait_for_merges()?;
    println!(
        "indexed {n} vectors of {dim} dimensions in {:.1} s ({} segments)",
        started.elapsed().as_secs_f64(),
        index.segments().len()
    );
    let searcher = index.searcher();
    searcher.search_vector_exact(&unit_vector(u64::MAX, dim), k)?; // verifies, warms
    let qs: Vec<Vec<f32>> = (0..queries)
        .map(|i| unit_vector(1 << 40 | i as u64, dim))
        .collect();
    let started = Instant::now();
    let mut hits = 0;
    for q in &qs {
        hits += searcher.search_vector_exact(q, k)?.len();
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{queries} queries, k {k}: {:.2} ms a query, {:.1} queries/s, {:.2} GB/s of rows ({hits} hits)",
        1e3 * secs / queries as f64,
        queries as f64 / secs,
        (n * dim * 4 * queries) as f64 / secs / 1e9
    );
    Ok(())
}
