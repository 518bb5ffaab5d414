//! Measures approximate vector search against exact search: recall@10 and time per
//! query, one thread, at several search efforts (the graph walk's `ef`).
//!
//! ```text
//! cargo run --release -p heddle --example vector_ann -- [options]
//!   --n N               synthetic vectors (default 171000, TREC-COVID's size)
//!   --dim D             their dimension (default 384, MiniLM's)
//!   --clusters C        Gaussian mixture components (default 1000)
//!   --spread S          noise norm around each unit centre before normalising (default 1.0)
//!   --embeddings FILE   index these vectors instead: JSONL lines {"_id": str, "vector":
//!                       [f32, ...]} (heddle-eval embed's cache), or a binary file
//!                       `n u32 | dim u32 | n × dim f32`, all little-endian
//!   --limit N           index only the first N vectors of --embeddings
//!   --query-embeddings FILE   queries in the same formats (default: with --embeddings,
//!                       --queries vectors held out of the file, evenly spaced; without,
//!                       fresh draws from the mixture)
//!   --queries Q         queries (default 200)
//!   --passes P          timed passes over the queries per probe count (default 1)
//!   --exact-passes P    timed passes of exact search (default 1)
//!   --k K               hits per query (default 10)
//!   --ef LIST           efforts to measure, each a candidate count or `all` (exhaustive;
//!                       default 10,16,24,32,48,64,96,128,192,256)
//!   --segments S        commits the vectors are added in (default 2), then merged into one
//!   --sizes LIST        commit these many vectors in turn instead (the rest in one last
//!                       commit), e.g. 120000,30000,8000
//!   --keep-segments     search the segments as committed, without the merge
//!   --policy            merge in the background by the default merge policy while
//!                       committing, as `heddle-eval add` does, and search the segments it
//!                       leaves (implies --keep-segments)
//!   --min-docs M        GraphSettings::min_docs (default heddle's)
//!   --m M               GraphSettings::m (default heddle's)
//!   --ef-construction E GraphSettings::ef_construction (default heddle's)
//! ```
//!
//! Times are wall-clock per query on this thread after a warm-up pass (which verifies
//! the files' checksums); medians need 200 samples and p99 10,000 (docs/PERF.md, rule
//! 3), otherwise they are not printed.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use heddle::{
    Document, GraphSettings, Hit, Index, IndexSettings, SearchEffort, VectorSearchOptions,
};

struct Options {
    n: usize,
    dim: usize,
    clusters: usize,
    spread: f32,
    embeddings: Option<PathBuf>,
    limit: Option<usize>,
    query_embeddings: Option<PathBuf>,
    queries: usize,
    passes: usize,
    exact_passes: usize,
    k: usize,
    efforts: Vec<SearchEffort>,
    segments: usize,
    sizes: Vec<usize>,
    keep_segments: bool,
    policy: bool,
    graph: GraphSettings,
}

fn parse() -> Result<Options, String> {
    let mut o = Options {
        n: 171_000,
        dim: 384,
        clusters: 1000,
        spread: 1.0,
        embeddings: None,
        limit: None,
        query_embeddings: None,
        queries: 200,
        passes: 1,
        exact_passes: 1,
        k: 10,
        efforts: [10, 16, 24, 32, 48, 64, 96, 128, 192, 256]
            .map(SearchEffort::Candidates)
            .to_vec(),
        segments: 2,
        sizes: Vec::new(),
        keep_segments: false,
        policy: false,
        graph: GraphSettings::default(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--keep-segments" || flag == "--policy" {
            o.keep_segments = true;
            o.policy |= flag == "--policy";
            continue;
        }
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let number = |v: &str| v.parse::<usize>().map_err(|e| format!("{flag} {v}: {e}"));
        match flag.as_str() {
            "--n" => o.n = number(&value)?,
            "--dim" => o.dim = number(&value)?,
            "--clusters" => o.clusters = number(&value)?.max(1),
            "--spread" => o.spread = value.parse().map_err(|e| format!("{flag}: {e}"))?,
            "--embeddings" => o.embeddings = Some(value.into()),
            "--limit" => o.limit = Some(number(&value)?),
            "--query-embeddings" => o.query_embeddings = Some(value.into()),
            "--queries" => o.queries = number(&value)?.max(1),
            "--passes" => o.passes = number(&value)?.max(1),
            "--exact-passes" => o.exact_passes = number(&value)?.max(1),
            "--k" => o.k = number(&value)?,
            "--segments" => o.segments = number(&value)?.max(1),
            "--sizes" => {
                o.sizes = value.split(',').map(number).collect::<Result<_, _>>()?;
            }
            "--min-docs" => o.graph.min_docs = value.parse().map_err(|e| format!("{flag}: {e}"))?,
            "--m" => o.graph.m = value.parse().map_err(|e| format!("{flag}: {e}"))?,
            "--ef-construction" => {
                o.graph.ef_construction = value.parse().map_err(|e| format!("{flag}: {e}"))?
            }
            "--ef" => {
                o.efforts.clear();
                for p in value.split(',') {
                    o.efforts.push(match p {
                        "all" => SearchEffort::Exhaustive,
                        count => SearchEffort::Candidates(number(count)?),
                    });
                }
            }
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(o)
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

    fn gaussian(&mut self) -> f64 {
        let u = self.uniform().max(1e-300);
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * self.uniform()).cos()
    }
}

fn normalised(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

/// Unit vectors from a mixture of Gaussians around random unit centres of unequal
/// popularity (the square of a uniform value picks the centre).
struct Mixture {
    centres: Vec<Vec<f32>>,
    spread: f32,
}

impl Mixture {
    fn new(clusters: usize, dim: usize, spread: f32) -> Self {
        let centres = (0..clusters)
            .map(|c| {
                let mut rng = Rng::new(0xC0FFEE ^ (c as u64) << 20);
                normalised((0..dim).map(|_| rng.gaussian() as f32).collect())
            })
            .collect();
        Mixture { centres, spread }
    }

    fn vector(&self, i: u64) -> Vec<f32> {
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

#[derive(serde::Deserialize)]
struct EmbeddingLine {
    #[serde(rename = "_id")]
    id: String,
    vector: Vec<f32>,
}

/// A document's id and vector.
type Embedding = (String, Vec<f32>);

/// (id, vector) pairs from a JSONL or binary embeddings file, all of one dimension.
fn read_embeddings(path: &Path) -> Result<Vec<Embedding>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let what = |detail: String| format!("{}: {detail}", path.display());
    let out: Vec<Embedding> = if path.extension().is_some_and(|e| e == "jsonl") {
        let text = std::str::from_utf8(&bytes).map_err(|e| what(e.to_string()))?;
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                let line: EmbeddingLine =
                    serde_json::from_str(l).map_err(|e| what(format!("line {}: {e}", i + 1)))?;
                Ok((line.id, line.vector))
            })
            .collect::<Result<_, String>>()?
    } else {
        let word = |at: usize| -> Result<usize, String> {
            let b = bytes
                .get(at..at + 4)
                .ok_or_else(|| what("shorter than its 8-byte header".into()))?;
            Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        };
        let (n, dim) = (word(0)?, word(4)?);
        if dim == 0 || bytes.len() != 8 + n * dim * 4 {
            return Err(what(format!(
                "{n} vectors of {dim} need {} bytes, the file has {}",
                8 + n * dim * 4,
                bytes.len()
            )));
        }
        bytes[8..]
            .chunks_exact(dim * 4)
            .enumerate()
            .map(|(i, row)| {
                let v = row
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                (format!("v{i}"), v)
            })
            .collect()
    };
    let dim = out.first().map_or(0, |(_, v)| v.len());
    if let Some((id, v)) = out.iter().find(|(_, v)| v.len() != dim || dim == 0) {
        return Err(what(format!(
            "{id} has {} dimensions, the first {dim}",
            v.len()
        )));
    }
    Ok(out)
}

/// Nearest-rank quantile `q` of sorted `samples`, if at least 100 samples lie beyond it.
fn quantile(samples: &[Duration], q: f64) -> Option<Duration> {
    let n = samples.len();
    let rank = ((q * n as f64).ceil() as usize).max(1);
    (n - rank >= 100).then(|| samples[rank - 1])
}

fn ms(d: Option<Duration>) -> String {
    d.map_or("—".into(), |d| format!("{:.3}", d.as_secs_f64() * 1e3))
}

/// Runs every query `passes` times after a warm-up pass; returns the warm-up's hits and
/// the sorted times.
fn timed(
    queries: &[Vec<f32>],
    passes: usize,
    mut search: impl FnMut(&[f32]) -> Vec<Hit>,
) -> (Vec<Vec<Hit>>, Vec<Duration>) {
    let hits: Vec<Vec<Hit>> = queries.iter().map(|q| search(q)).collect();
    let mut times = Vec::with_capacity(queries.len() * passes);
    for _ in 0..passes {
        for q in queries {
            let t = Instant::now();
            std::hint::black_box(search(q));
            times.push(t.elapsed());
        }
    }
    times.sort();
    (hits, times)
}

fn recall(exact: &[Vec<Hit>], found: &[Vec<Hit>]) -> f64 {
    let per_query = exact.iter().zip(found).map(|(e, a)| {
        let hit = e
            .iter()
            .filter(|h| a.iter().any(|g| g.doc == h.doc))
            .count();
        hit as f64 / e.len().max(1) as f64
    });
    per_query.sum::<f64>() / exact.len() as f64
}

/// How many vectors each commit adds: `sizes` in turn (clipped to what there is) and the
/// rest in one more, or else `n` split evenly over `segments`.
fn commit_sizes(n: usize, segments: usize, sizes: &[usize]) -> Vec<usize> {
    if sizes.is_empty() {
        let per_commit = n.div_ceil(segments).max(1);
        return (0..n)
            .step_by(per_commit)
            .map(|s| per_commit.min(n - s))
            .collect();
    }
    let mut left = n;
    let mut out = Vec::new();
    for &size in sizes {
        let size = size.min(left);
        if size > 0 {
            out.push(size);
        }
        left -= size;
    }
    if left > 0 {
        out.push(left);
    }
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let o = parse()?;
    let (docs, queries): (Vec<Embedding>, Vec<Vec<f32>>) = match &o.embeddings {
        Some(path) => {
            let mut all = read_embeddings(path)?;
            all.truncate(o.limit.unwrap_or(usize::MAX));
            let (all, queries) = match &o.query_embeddings {
                Some(q) => {
                    let queries = read_embeddings(q)?.into_iter().take(o.queries);
                    (all, queries.map(|(_, v)| v).collect())
                }
                None => {
                    // Every (n / queries)-th vector becomes a query, out of the index.
                    let step = (all.len() / o.queries).max(2);
                    let (mut docs, mut queries) = (Vec::with_capacity(all.len()), Vec::new());
                    for (i, (id, v)) in all.into_iter().enumerate() {
                        if i % step == 0 && queries.len() < o.queries {
                            queries.push(v);
                        } else {
                            docs.push((id, v));
                        }
                    }
                    (docs, queries)
                }
            };
            println!(
                "{}: {} vectors of {} dimensions, {} queries",
                path.display(),
                all.len(),
                all.first().map_or(0, |(_, v)| v.len()),
                queries.len()
            );
            (all, queries)
        }
        None => {
            let mixture = Mixture::new(o.clusters, o.dim, o.spread);
            let docs = (0..o.n as u64)
                .map(|i| (format!("d{i}"), mixture.vector(i)))
                .collect();
            let queries = (0..o.queries as u64)
                .map(|i| mixture.vector(1 << 40 | i))
                .collect();
            println!(
                "synthetic: {} unit vectors of {} dimensions, {} clusters, spread {}, {} queries",
                o.n, o.dim, o.clusters, o.spread, o.queries
            );
            (docs, queries)
        }
    };
    let dim = docs.first().map_or(o.dim, |(_, v)| v.len());
    if let Some(q) = queries.iter().find(|q| q.len() != dim) {
        return Err(format!("a query has {} dimensions, the vectors {dim}", q.len()).into());
    }

    let dir = tempfile::tempdir()?;
    let settings = IndexSettings {
        vector_dim: Some(dim),
        ..Default::default()
    };
    let index = Index::create(dir.path(), settings)?;
    let mut writer = index.writer()?;
    writer.set_background_merges(o.policy);
    writer.set_graph(o.graph)?;
    let started = Instant::now();
    let commits = commit_sizes(docs.len(), o.segments, &o.sizes);
    let mut rest = &docs[..];
    for &size in &commits {
        let (chunk, after) = rest.split_at(size);
        rest = after;
        for (id, v) in chunk {
            writer.add(Document::new(id.clone(), "", "").with_vector(v.clone()))?;
        }
        writer.commit()?;
    }
    if o.policy {
        writer.wait_for_merges()?;
    }
    let shape = |index: &Index| -> Vec<String> {
        index
            .segments()
            .iter()
            .map(|s| match s.vector_graph {
                true => format!("{} docs with a graph", s.doc_count),
                false => format!("{} docs, no graph", s.doc_count),
            })
            .collect()
    };
    println!(
        "indexed in {:.1} s ({} commits{}, graphs built on {} threads, dot product {}): {}",
        started.elapsed().as_secs_f64(),
        commits.len(),
        if o.policy {
            ", merged by the default policy"
        } else {
            ""
        },
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        heddle::dot_kernel(),
        shape(&index).join("; ")
    );
    if !o.keep_segments && index.segments().len() > 1 {
        let started = Instant::now();
        let reused = writer.merge(1)?.map_or(0, |m| m.graph_reused);
        println!(
            "merged into one in {:.1} s (rows copied; graph links of {reused} documents kept, \
             the others linked in): {}",
            started.elapsed().as_secs_f64(),
            shape(&index).join("; ")
        );
    }
    drop(docs);

    let searcher = index.searcher();
    let k = o.k;
    println!(
        "{} queries, k {k}, one thread; {} timed searches an effort, {} exact; ms a query",
        queries.len(),
        queries.len() * o.passes,
        queries.len() * o.exact_passes
    );
    println!(
        "{:>10} {:>10} {:>10} {:>10} {:>10} {:>9} {:>11} {:>9}",
        "ef", "recall@10", "median", "p99", "walked", "rewalked", "rows/query", "row walks"
    );
    let (exact, times) = timed(&queries, o.exact_passes, |q| {
        searcher.search_vector_exact(q, k).expect("exact search")
    });
    println!(
        "{:>10} {:>10.4} {:>10} {:>10} {:>10} {:>9} {:>11} {:>9}",
        "exact",
        1.0,
        ms(quantile(&times, 0.5)),
        ms(quantile(&times, 0.99)),
        "-",
        "-",
        index.num_docs(),
        "-"
    );
    for &effort in &o.efforts {
        let opts = VectorSearchOptions { k, effort };
        let (mut rows, mut walked, mut rewalked, mut row_walks) = (0u64, 0u64, 0u64, 0u64);
        let (found, times) = timed(&queries, o.passes, |q| {
            let (hits, stats) = searcher
                .search_vector_with_stats(q, &opts)
                .expect("approximate search");
            rows += stats.rows_scored;
            walked += stats.segments_walked as u64;
            rewalked += stats.rewalks as u64;
            row_walks += stats.row_walks as u64;
            hits
        });
        let label = match effort {
            SearchEffort::Candidates(n) => n.to_string(),
            SearchEffort::Exhaustive => "all".into(),
        };
        let searches = ((1 + o.passes) * queries.len()) as f64;
        println!(
            "{:>10} {:>10.4} {:>10} {:>10} {:>10.1} {:>9.2} {:>11.0} {:>9.3}",
            label,
            recall(&exact, &found),
            ms(quantile(&times, 0.5)),
            ms(quantile(&times, 0.99)),
            walked as f64 / searches,
            rewalked as f64 / searches,
            rows as f64 / searches,
            row_walks as f64 / searches
        );
    }
    Ok(())
}
