//! `heddle-bench vectors`: heddle's approximate vector search against the peer (usearch's
//! HNSW) on one vector set — the same vectors, query vectors and k for both, measured by
//! the same instrument (docs/PERF.md, "heddle against a vector peer"):
//!
//! 1. each engine's index built in a process of its own (build time, peak RSS, bytes),
//!    or reused while the vectors and settings are unchanged;
//! 2. the exact top k of every query, by brute force here;
//! 3. each engine's effort swept: recall@k and a sequential pass at every setting;
//! 4. at each target recall, each engine's cheapest setting reaching it (bisection on
//!    the effort), timed, and checked to be at equal recall;
//! 5. at the ladder's target: a sequential pass with both engines alternating (median of
//!    passes per query), the instrument's open-loop ladder, and each engine's serving
//!    memory in a fresh process;
//! 6. heddle/peer ratios, a table, the recall–QPS chart (SVG) and an HTML page.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, UNIX_EPOCH};

use anyhow::{Context, ensure};
use clap::Args;
use heddle_eval::bench::BenchArgs;
use heddle_eval::bench::queries::QueryCycle;
use heddle_eval::bench::sequential::{passes_for, per_query, run_sequential};
use serde::{Deserialize, Serialize};

use super::child::{self, query_texts};
use super::data::Vectors;
use super::engines::{
    VectorBackend, VectorBuild, VectorBuildOptions, VectorEngine, VectorFactory, VectorSearch,
};
use super::report::{self, VectorsReport};
use super::sweep::{self, Matched, Point};
use super::truth;

/// `heddle-bench vectors`: every flag of `heddle-eval bench` that shapes the ladder
/// (--rates, --fractions, --samples, --threads, --inflight, --k, --seed, --repeat …) and
/// the comparison's own.
#[derive(Debug, Clone, Args)]
pub struct VectorsArgs {
    /// The documents' vectors: heddle-eval embed's JSONL cache, or the binary form
    /// (`n u32 | dim u32 | n × dim f32`, little-endian). Normalised on reading.
    #[arg(long, value_name = "FILE")]
    pub base: PathBuf,

    /// The query vectors, in either form.
    #[arg(long, value_name = "FILE")]
    pub query_vectors: PathBuf,

    /// The set's name in tables and charts.
    #[arg(long, default_value = "vectors")]
    pub name: String,

    /// A sentence on where the set comes from, for the report.
    #[arg(long, default_value = "")]
    pub describe: String,

    /// Where the report, chart, ladder and request file go.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,

    /// Where each engine's index is kept, and reused while the vectors and settings are
    /// unchanged [default: OUT/work].
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,

    /// Rebuild the indexes even if reusable ones exist.
    #[arg(long)]
    pub rebuild: bool,

    /// Build threads, the same for both engines [default: the number of cores].
    #[arg(long, value_name = "N")]
    pub index_threads: Option<usize>,

    /// heddle's segments after the build: merged down to N (0: as its commit leaves
    /// them).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub heddle_segments: usize,

    /// heddle's efforts to sweep (the candidates a walk of each segment's graph keeps: HNSW's ef)
    /// [default: 1,2,3,4,6,8,12,16,24,32,48,64,96,128].
    #[arg(long, value_name = "E1,E2,...", value_delimiter = ',')]
    pub heddle_efforts: Vec<usize>,

    /// The peer's efforts to sweep (usearch's expansion_search)
    /// [default: 10,16,24,32,48,64,96,128,192,256,384,512].
    #[arg(long, value_name = "E1,E2,...", value_delimiter = ',')]
    pub usearch_efforts: Vec<usize>,

    /// The recalls at which the engines are compared, each at its cheapest setting
    /// reaching it.
    #[arg(long, value_name = "R1,R2,...", value_delimiter = ',', default_values_t = [0.90, 0.95, 0.99])]
    pub recalls: Vec<f64>,

    /// The recall whose settings the sequential pass, the ladder and the memory rungs
    /// run at.
    #[arg(long, value_name = "R", default_value_t = 0.95)]
    pub ladder_recall: f64,

    /// The agreement check: two settings compared at a target recall may differ in
    /// recall by at most this much.
    #[arg(long, value_name = "R", default_value_t = 0.01)]
    pub recall_tolerance: f64,

    /// Timed searches per setting of the sweep (whole passes over the queries; 10,000
    /// makes its p99 reportable).
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub sweep_samples: u64,

    /// Searches per engine in the sequential pass at the ladder's settings (engines
    /// alternating pass by pass).
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub sequential_samples: u64,

    /// Requests in each engine's memory rung (a fresh process each); 0 skips it.
    #[arg(long, value_name = "N", default_value_t = 5_000)]
    pub memory_requests: u64,

    /// Skip the open-loop ladder (and the memory rungs, whose rate it sets).
    #[arg(long)]
    pub no_ladder: bool,

    #[command(flatten)]
    pub bench: BenchArgs,
}

/// Runs the comparison on one set; prints as it goes; writes OUT/report.json,
/// OUT/recall-qps.svg, OUT/report.html (and the ladder's JSON and SVG).
pub fn run(args: &VectorsArgs) -> anyhow::Result<VectorsReport> {
    let started = Instant::now();
    let k = args.bench.k;
    ensure!(k >= 1, "--k must be at least 1");
    let targets = sweep::targets(&args.recalls)?;
    ensure!(
        args.ladder_recall > 0.0 && args.ladder_recall <= 1.0,
        "--ladder-recall {}: expected a number above 0 and at most 1",
        args.ladder_recall
    );
    let efforts_of = |e: VectorEngine| -> anyhow::Result<Vec<usize>> {
        let given = match e {
            VectorEngine::Heddle => &args.heddle_efforts,
            VectorEngine::Usearch => &args.usearch_efforts,
        };
        let defaults = e.default_efforts();
        sweep::efforts(if given.is_empty() { &defaults } else { given })
            .with_context(|| format!("--{}-efforts", e.name()))
    };
    let efforts: Vec<Vec<usize>> = VectorEngine::ALL
        .iter()
        .map(|&e| efforts_of(e))
        .collect::<anyhow::Result<_>>()?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let mut environment = heddle_eval::env::Environment::capture(&args.out);

    let docs = Vectors::read(&args.base)?;
    let queries = Arc::new(Vectors::read(&args.query_vectors)?);
    ensure!(
        docs.dim == queries.dim,
        "{} has vectors of {} dimensions, {} of {}",
        args.base.display(),
        docs.dim,
        args.query_vectors.display(),
        queries.dim
    );
    eprintln!(
        "vectors: {}: {} documents and {} queries of {} dimensions, k {k}",
        args.name,
        docs.len(),
        queries.len(),
        docs.dim
    );
    // The instrument reads requests from a topics file: query i is the text `i`.
    let topics = args.out.join("requests.tsv");
    let texts = query_texts(queries.len());
    std::fs::write(
        &topics,
        texts
            .iter()
            .map(|t| format!("q{t}\t{t}\n"))
            .collect::<String>(),
    )
    .with_context(|| format!("writing {}", topics.display()))?;

    // 1. Indexes.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = args.index_threads.unwrap_or(cores);
    ensure!(threads >= 1, "--index-threads must be at least 1");
    let workdir = args
        .workdir
        .clone()
        .unwrap_or_else(|| args.out.join("work"));
    let mut builds = Vec::new();
    for engine in VectorEngine::ALL {
        let opts = VectorBuildOptions {
            threads,
            segments: match engine {
                VectorEngine::Heddle => args.heddle_segments,
                VectorEngine::Usearch => 1,
            },
        };
        builds.push(build_or_reuse(
            engine,
            &args.base,
            &workdir,
            &opts,
            args.rebuild,
        )?);
    }

    // 2. The exact answers.
    let t = Instant::now();
    eprintln!("vectors: exact top {k} of every query, by brute force on {cores} threads");
    let exact = truth::exact_top_k(&docs, &queries, k, cores);
    let truth_seconds = t.elapsed().as_secs_f64();
    let (doc_count, dim) = (docs.len(), docs.dim);
    drop(docs);

    let search_threads = args.bench.threads.unwrap_or(cores).max(cores);
    let cycle = QueryCycle::new(texts.clone(), args.bench.seed);
    let mut sweeps: Vec<Sweeper> = VectorEngine::ALL
        .iter()
        .map(|&engine| Sweeper {
            engine,
            dir: index_dir(&workdir, engine),
            queries: queries.clone(),
            exact: &exact,
            k,
            threads: search_threads,
            recalls: BTreeMap::new(),
            timed: BTreeMap::new(),
        })
        .collect();

    // 3. The sweep.
    for (s, grid) in sweeps.iter_mut().zip(&efforts) {
        for &effort in grid {
            let p = s.timed(effort, &cycle, args.sweep_samples)?;
            eprintln!(
                "vectors: {} effort {effort}: recall@{k} {:.4}, p50 {}, {:.0} queries/s",
                s.engine.name(),
                p.recall,
                report::us(p.p50_us.map(|v| v as f64)),
                p.qps.unwrap_or(0.0)
            );
        }
    }

    // 4. Matched at each target (and at the ladder's).
    let mut all_targets = targets.clone();
    if !all_targets.contains(&args.ladder_recall) {
        all_targets.push(args.ladder_recall);
    }
    let mut matched: Vec<Matched> = Vec::new();
    for &target in &all_targets {
        let mut found: Vec<Option<Point>> = Vec::new();
        for (s, grid) in sweeps.iter_mut().zip(&efforts) {
            let max = *grid.last().expect("a non-empty effort list");
            let (lo, hi) = sweep::bracket(&s.recalls, target, max);
            let effort = {
                let s_ref: &mut Sweeper = s;
                let mut recall_of = |e: usize| s_ref.recall(e);
                sweep::min_effort_reaching(lo, hi, target, &mut recall_of)?
            };
            found.push(match effort {
                Some(e) => Some(s.timed(e, &cycle, args.sweep_samples)?),
                None => {
                    eprintln!(
                        "vectors: {} does not reach recall {target} at effort {max} (the largest swept)",
                        s.engine.name()
                    );
                    None
                }
            });
        }
        let peer = found.pop().flatten();
        let heddle = found.pop().flatten();
        let m = sweep::matched(target, heddle, peer, args.recall_tolerance);
        eprintln!("vectors: {}", report::matched_line(&m));
        matched.push(m);
    }
    let at_ladder = matched
        .iter()
        .find(|m| m.target == args.ladder_recall)
        .cloned()
        .expect("the ladder's target was matched");
    matched.retain(|m| targets.contains(&m.target));

    // 5. The sequential pass, ladder and memory at the ladder's settings.
    let (Some(h), Some(p)) = (&at_ladder.heddle, &at_ladder.peer) else {
        anyhow::bail!(
            "an engine does not reach recall {} at any effort swept: nothing to run the ladder at (raise its efforts or lower --ladder-recall)",
            args.ladder_recall
        );
    };
    let chosen = [h.effort, p.effort];
    let factories: Vec<VectorFactory> = VectorEngine::ALL
        .iter()
        .zip(chosen)
        .map(|(&engine, effort)| VectorFactory {
            engine,
            dir: index_dir(&workdir, engine),
            effort,
            queries: queries.clone(),
            threads: search_threads,
        })
        .collect();
    let mut sequential = Vec::new();
    let mut per_query_text = None;
    if args.sequential_samples > 0 {
        let opened: Vec<VectorBackend> = factories
            .iter()
            .map(|f| -> anyhow::Result<VectorBackend> {
                Ok(VectorBackend {
                    search: super::engines::open(f.engine, &f.dir, f.effort, 1)?,
                    queries: queries.clone(),
                })
            })
            .collect::<anyhow::Result<_>>()?;
        let passes = passes_for(args.sequential_samples, cycle.len());
        eprintln!(
            "vectors: sequential pass at recall {}: {passes} passes of {} queries per engine, alternating",
            args.ladder_recall,
            cycle.len()
        );
        let refs: Vec<(&str, &dyn heddle_eval::bench::Backend)> = VectorEngine::ALL
            .iter()
            .zip(&opened)
            .map(|(e, b)| (e.name(), b as &dyn heddle_eval::bench::Backend))
            .collect();
        sequential = run_sequential(&refs, &cycle, passes, k);
        println!("{}", heddle_eval::bench::sequential::render(&sequential));
        let in_order: Vec<String> = (0..cycle.len() as u64)
            .map(|i| cycle.get(i).to_string())
            .collect();
        let none = |_: &str| None;
        if let Some(r) = per_query::report(
            &["heddle", "usearch"],
            passes,
            &in_order,
            &[
                &sequential[0].per_query_median_us,
                &sequential[1].per_query_median_us,
            ],
            &none,
        ) {
            let text = per_query::render(&r);
            println!("{text}");
            per_query_text = Some(text);
        }
    }

    let mut ladder = None;
    let mut memory: Vec<Option<child::VectorServeRss>> = vec![None, None];
    if !args.no_ladder {
        let mut bench = args.bench.clone();
        bench.index = workdir.clone();
        bench.queries = topics.clone();
        bench.baseline = Some(VectorEngine::Usearch.name().to_string());
        bench.label = Some(format!(
            "{}: heddle effort {}, usearch ef {} (recall@{k} ≥ {})",
            args.name, chosen[0], chosen[1], args.ladder_recall
        ));
        bench.json = Some(args.out.join("ladder.json"));
        bench.svg = Some(args.out.join("ladder.svg"));
        bench.html = None;
        let boxed: Vec<Box<dyn heddle_eval::bench::BackendFactory>> = factories
            .iter()
            .map(|f| Box::new(f.clone()) as Box<dyn heddle_eval::bench::BackendFactory>)
            .collect();
        let l = heddle_eval::bench::run(&bench, &boxed)?;
        if args.memory_requests > 0 {
            let rate = crate::compare::memory_rate(&l);
            for (i, f) in factories.iter().enumerate() {
                eprintln!(
                    "vectors: {}: memory rung at {rate}/s in a fresh process",
                    f.engine.name()
                );
                memory[i] = Some(child::spawn_serve_rss(
                    f.engine,
                    &f.dir,
                    &args.query_vectors,
                    f.effort,
                    rate,
                    args.memory_requests,
                    l.settings.threads,
                    l.settings.inflight,
                    k,
                    args.bench.seed,
                )?);
            }
        }
        ladder = Some(l);
    }

    environment.finish();
    let curves = sweeps
        .iter()
        .map(|s| report::Curve {
            engine: s.engine,
            effort_name: s.engine.effort_name().to_string(),
            points: s.timed.values().cloned().collect(),
        })
        .collect();
    let report = VectorsReport {
        format: report::FORMAT,
        tool: format!("heddle-bench {}", env!("CARGO_PKG_VERSION")),
        usearch_version: super::engines::USEARCH_VERSION.to_string(),
        set: report::SetInfo {
            name: args.name.clone(),
            describe: args.describe.clone(),
            base: args.base.display().to_string(),
            query_vectors: args.query_vectors.display().to_string(),
            documents: doc_count,
            queries: queries.len(),
            dim,
        },
        k,
        truth_seconds,
        recall_tolerance: args.recall_tolerance,
        ladder_recall: args.ladder_recall,
        builds,
        curves,
        matched,
        at_ladder,
        sequential,
        held: ladder
            .as_ref()
            .map(crate::report::holds)
            .unwrap_or_default(),
        memory,
        ladder_json: ladder
            .as_ref()
            .map(|_| args.out.join("ladder.json").display().to_string()),
        seconds: started.elapsed().as_secs_f64(),
        environment: Some(environment),
    };
    let table = report::render(&report);
    println!("{table}");
    report::write_all(
        &report,
        ladder.as_ref(),
        per_query_text.as_deref(),
        &args.out,
    )?;
    Ok(report)
}

/// One engine's measurements, cached by effort: recall alone (the bisection's), and
/// timed points.
struct Sweeper<'a> {
    engine: VectorEngine,
    dir: PathBuf,
    queries: Arc<Vectors>,
    exact: &'a [Vec<u32>],
    k: usize,
    threads: usize,
    recalls: BTreeMap<usize, f64>,
    timed: BTreeMap<usize, Point>,
}

impl Sweeper<'_> {
    fn open(&self, effort: usize) -> anyhow::Result<Arc<dyn VectorSearch>> {
        super::engines::open(self.engine, &self.dir, effort, self.threads)
    }

    /// Recall at `effort`: every query once (which also warms the index).
    fn recall(&mut self, effort: usize) -> anyhow::Result<f64> {
        if let Some(&r) = self.recalls.get(&effort) {
            return Ok(r);
        }
        let search = self.open(effort)?;
        let r = self.recall_with(&*search, effort)?;
        Ok(r)
    }

    fn recall_with(&mut self, search: &dyn VectorSearch, effort: usize) -> anyhow::Result<f64> {
        let found: Vec<Vec<String>> = self
            .queries
            .iter()
            .map(|q| search.search(q, self.k))
            .collect::<anyhow::Result<_>>()
            .with_context(|| format!("{} at effort {effort}", self.engine.name()))?;
        let r = truth::recall(self.exact, &found, self.k);
        self.recalls.insert(effort, r);
        Ok(r)
    }

    /// Recall and a sequential pass of `samples` searches at `effort`.
    fn timed(&mut self, effort: usize, cycle: &QueryCycle, samples: u64) -> anyhow::Result<Point> {
        if let Some(p) = self.timed.get(&effort) {
            return Ok(p.clone());
        }
        let search = self.open(effort)?;
        // Recall first: a whole pass that also warms the index before the timed passes.
        let recall = self.recall_with(&*search, effort)?;
        let backend = VectorBackend {
            search,
            queries: self.queries.clone(),
        };
        let passes = passes_for(samples, cycle.len());
        let seq = run_sequential(&[(self.engine.name(), &backend)], cycle, passes, self.k)
            .pop()
            .expect("one engine, one report");
        ensure!(
            seq.errors == 0,
            "{} at effort {effort}: {} searches failed",
            self.engine.name(),
            seq.errors
        );
        let mut medians: Vec<f64> = seq.per_query_median_us.iter().flatten().copied().collect();
        medians.sort_by(f64::total_cmp);
        let mean =
            (!medians.is_empty()).then(|| medians.iter().sum::<f64>() / medians.len() as f64);
        let p = Point {
            effort,
            recall,
            samples: seq.latency_us.count,
            passes,
            p50_us: seq.latency_us.p50,
            p99_us: seq.latency_us.p99,
            mean_us: seq.latency_us.mean,
            query_median_p50_us: (!medians.is_empty()).then(|| medians[medians.len() / 2]),
            qps: mean.filter(|&m| m > 0.0).map(|m| 1e6 / m),
        };
        self.timed.insert(effort, p.clone());
        Ok(p)
    }
}

fn index_dir(workdir: &Path, engine: VectorEngine) -> PathBuf {
    workdir.join(engine.name())
}

/// What a kept index was built from: reused only while all of it is unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct BuildKey {
    engine: VectorEngine,
    base: String,
    base_bytes: u64,
    base_modified_ns: u128,
    options: VectorBuildOptions,
    configuration: String,
    tool: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct BuildRecord {
    key: BuildKey,
    build: VectorBuild,
}

fn build_or_reuse(
    engine: VectorEngine,
    base: &Path,
    workdir: &Path,
    opts: &VectorBuildOptions,
    rebuild: bool,
) -> anyhow::Result<VectorBuild> {
    let meta = std::fs::metadata(base).with_context(|| format!("reading {}", base.display()))?;
    let key = BuildKey {
        engine,
        base: std::fs::canonicalize(base)?.display().to_string(),
        base_bytes: meta.len(),
        base_modified_ns: meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos()),
        options: opts.clone(),
        configuration: engine.configuration(),
        tool: env!("CARGO_PKG_VERSION").to_string(),
    };
    let dir = index_dir(workdir, engine);
    let record_path = workdir.join(format!("{}.build.json", engine.name()));
    if !rebuild
        && dir.is_dir()
        && let Ok(text) = std::fs::read_to_string(&record_path)
        && let Ok(record) = serde_json::from_str::<BuildRecord>(&text)
        && record.key == key
    {
        eprintln!(
            "vectors: {}: reusing {} (built from the same vectors with the same settings; --rebuild to rebuild)",
            engine.name(),
            dir.display()
        );
        return Ok(record.build);
    }
    std::fs::create_dir_all(workdir).with_context(|| format!("creating {}", workdir.display()))?;
    let _ = std::fs::remove_file(&record_path);
    let staging = workdir.join(format!("{}.partial", engine.name()));
    for d in [&dir, &staging] {
        if d.exists() {
            std::fs::remove_dir_all(d).with_context(|| format!("removing {}", d.display()))?;
        }
    }
    eprintln!(
        "vectors: {}: building in a fresh process on {} threads",
        engine.name(),
        opts.threads
    );
    let build = child::spawn_build(engine, base, &staging, opts)?;
    std::fs::rename(&staging, &dir)
        .with_context(|| format!("renaming {} to {}", staging.display(), dir.display()))?;
    std::fs::write(
        &record_path,
        serde_json::to_string_pretty(&BuildRecord {
            key,
            build: build.clone(),
        })?,
    )
    .with_context(|| format!("writing {}", record_path.display()))?;
    eprintln!(
        "vectors: {}: built in {:.2} s, {} bytes, peak RSS {} KiB",
        engine.name(),
        build.seconds,
        build.bytes,
        build.peak_rss_kib.unwrap_or(0)
    );
    Ok(build)
}
