//! The `bench` command line as a library: [`BenchArgs`] and [`run`], so that another
//! binary can register more engines behind the same flags.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail, ensure};
use clap::Args;

use super::backend::{Backend, BackendFactory, HeddleFactory};
use super::ladder::{calibrate, derived, derived_with, named, run_ladder, warm_up};
use super::loadgen::Arrivals;
use super::queries::QueryCycle;
use super::report::hgrm::write_rung;
use super::report::{
    BenchReport, EngineRun, FORMAT_VERSION, LadderPlan, RungReport, Settings, WarmupReport, Width,
    render_svg, render_table_as, summarise, write_json,
};
use super::sequential::per_query::{self, PerQueryReport};
use super::sequential::{SequentialReport, passes_for, run_sequential};
use crate::env::Environment;
use crate::quality::{Combine, Retrieval, StreamSpec};
use crate::serve::{HttpFactory, Target};

/// `heddle-eval bench`: an open-loop ladder of query rates. Request `i` of a rung is due
/// at a scheduled time whatever earlier requests are doing, and its latency runs from
/// that time to its completion. See docs/PERF.md for every rule the figures obey.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// The index to search (each engine opens it its own way); not needed with --target.
    #[arg(
        long,
        value_name = "DIR",
        required_unless_present = "target",
        default_value = ".",
        hide_default_value = true
    )]
    pub index: PathBuf,

    /// Drive a search server over HTTP instead of an engine in this process:
    /// `http://HOST:PORT/INDEX` (or `http://HOST:PORT/PREFIX/INDEX`, e.g. Quickwit's
    /// `/api/v1/_elastic/INDEX`), any server speaking the Elasticsearch `_search` subset
    /// of `heddle-eval serve` (Elasticsearch, OpenSearch, Quickwit's ES endpoint). One
    /// async client thread issues each request at its due time, on a keep-alive
    /// connection of its own (--inflight connections, opened before the first rung);
    /// the client's own time and the server's (where it reports it) are shown per rung.
    #[arg(long, value_name = "URL", conflicts_with_all = ["engines", "baseline", "threads"])]
    pub target: Option<String>,

    /// The field each `match` query names with --target [default: flat, heddle's title
    /// and text as one; for Elasticsearch name a field of its mapping, e.g. text].
    #[arg(
        long,
        value_name = "FIELD",
        default_value = "flat",
        requires = "target"
    )]
    pub target_field: String,

    /// BEIR queries.jsonl (or the directory holding it) or a TREC topics file
    /// (`qid<TAB>text`); requests cycle through the queries in a seeded shuffled order.
    #[arg(long, value_name = "FILE")]
    pub queries: PathBuf,

    /// Offered rates in requests per second, one rung each, e.g. `50,100,200`. Without
    /// it, an open-loop calibration rung estimates capacity and the ladder is derived
    /// from it (docs/PERF.md, "The ladder").
    #[arg(long, value_name = "R1,R2,...", value_delimiter = ',')]
    pub rates: Vec<f64>,

    /// How arrivals are spaced within a rung.
    #[arg(long, value_enum, default_value_t = Arrivals::Uniform)]
    pub arrivals: Arrivals,

    /// Worker threads executing requests [default: the number of cores; at most 1024].
    #[arg(long, value_name = "N", value_parser = crate::cli::thread_count())]
    pub threads: Option<usize>,

    /// Most requests due but unfinished; one due beyond that is shed
    /// [default: 4 per worker].
    #[arg(long, value_name = "N")]
    pub inflight: Option<usize>,

    /// Requests per rung (at least; see --min-duration).
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub samples: u64,

    /// Each rung lasts at least this many seconds (more requests at high rates).
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    pub min_duration: f64,

    /// Runs the whole ladder this many times; figures are the median with min and max.
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub repeat: usize,

    /// Hits per query.
    #[arg(long, default_value_t = 10)]
    pub k: usize,

    /// The arm heddle runs: text (BM25 over the flat field), vector (the query encoded,
    /// then the inner product against the documents' vectors, as --vector-search says)
    /// or hybrid (both, fused by RRF with k = 60, each read --depth deep). Each request's encoding is inside
    /// its latency, and a table gives its share. vector and hybrid need an index with
    /// vectors of the encoder's width.
    #[arg(long, value_parser = ["text", "vector", "hybrid"], default_value = "text")]
    pub arm: String,

    /// What encodes queries for --arm vector and hybrid: minilm (all-MiniLM-L6-v2
    /// through heddle-encoder, one model shared by every worker, its kernels on one
    /// thread per request), minilm-int8 (the same with its linear layers in int8, opt-in)
    /// or hashing:DIM (a bag-of-words stand-in without a model).
    #[arg(long, default_value = "minilm")]
    pub encoder: String,

    /// How --arm vector and hybrid search the vectors: hnsw (a walk of each large
    /// segment's graph keeping --ef candidates; segments under 2,048 documents are
    /// scanned exactly) or exact (every live vector scored), as `quality --vector-search`.
    #[arg(long, value_parser = ["hnsw", "exact"], default_value = "hnsw")]
    pub vector_search: String,

    /// Candidates an hnsw search keeps in each segment's graph (as `quality --ef`).
    #[arg(long, default_value_t = heddle::DEFAULT_EF as u32, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub ef: u32,

    /// How many results of each stream --arm hybrid fuses (as `quality --depth`):
    /// 1,000 by default, the depth BEIR's fused runs are read to. A fused score depends
    /// on it, so the hybrid arm's quality is that of `quality --depth` with the same value.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub depth: Option<u32>,

    /// --arm vector and hybrid: a worker that takes a request while others are already
    /// waiting takes up to N of them and encodes their queries in one run of the model
    /// (its weights read once for all), then searches each in turn, each request done
    /// when its own search is; nothing waits for a batch to fill. 1: each request
    /// encoded alone.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub encode_batch: u32,

    /// BM25 term-frequency saturation for heddle's searches, from 0 to 1000 (as
    /// `search --k1`).
    #[arg(long, default_value_t = heddle::Bm25Params::default().k1)]
    pub k1: f64,

    /// BM25 length normalisation for heddle's searches, from 0 to 1 (as `search --b`).
    #[arg(long, default_value_t = heddle::Bm25Params::default().b)]
    pub b: f64,

    /// Seeds the query order and Poisson arrivals.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,

    /// Queries in the warm-up pass before the first rung [default: each query once, at
    /// most 2,000].
    #[arg(long, value_name = "N")]
    pub warmup: Option<u64>,

    /// Requests in a calibration rung (fewer if that would take over 30 s).
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    pub calibration_samples: u64,

    /// Engines to run, by name, in this order [default: all registered].
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    pub engines: Vec<String>,

    /// The engine the comparison section divides by: ratios are each other engine's
    /// figure over this one's [default: the first engine].
    #[arg(long, value_name = "ENGINE")]
    pub baseline: Option<String>,

    /// A label for the run, shown in the table's header and the plot's subtitle (e.g.
    /// which analysis the engines ran).
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,

    /// A derived ladder's rungs, as fractions of the estimated capacity
    /// [default: 0.125,0.25,0.5,0.75,1,2].
    #[arg(long, value_name = "F1,F2,...", value_delimiter = ',')]
    pub fractions: Vec<f64>,

    /// Writes every figure and the raw histograms as JSON here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Writes a plot of latency quantiles against offered rate here.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,

    /// Writes one self-contained HTML report here (no network: styles and plots inline):
    /// the environment, every table and the plot, readable in a browser and printable.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Writes each rung's latency distribution into this directory in HdrHistogram's
    /// percentile-distribution form (`.hgrm`, as `wrk2 --latency` prints it).
    #[arg(long, value_name = "DIR")]
    pub hgrm: Option<PathBuf>,

    /// A rung during which other processes use more than this many cores on average is
    /// marked disturbed [default: a quarter of the cores].
    #[arg(long, value_name = "CORES")]
    pub max_others_cpu: Option<f64>,

    /// A rung whose dispatcher lag p99 exceeds this many times its latency p50 is
    /// marked disturbed [default: 1].
    #[arg(long, value_name = "RATIO")]
    pub max_lag_ratio: Option<f64>,

    /// Prints every column, each figure with `[min–max]` over repetitions (the default
    /// table fits 100 columns: medians and the main columns).
    #[arg(long)]
    pub wide: bool,

    /// Before the ladder, a sequential pass of this many queries per engine (whole
    /// passes over the query set, engines alternating pass by pass; 10,000 makes its
    /// p99 reportable), reported query by query: the slowest queries (with two engines,
    /// the highest ratios) and each query class's p50 and p99 [default: none].
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub sequential: u64,

    /// The writes arm instead of the ladder: on a fresh copy of the index, open-loop
    /// reads at one rate while a writer adds documents and commits; reads due during a
    /// commit are reported apart from the rest (docs/PERF.md, "The writes arm").
    #[arg(long)]
    pub writes: bool,

    /// With --writes --target: write into the target's index (the writes arm cannot copy
    /// a server's index). Each batch is posted to its `_bulk` as `create` actions with ids
    /// `heddle-writes-…` (a corpus id is never overwritten), and each trial deletes what
    /// it wrote. Refused without this flag, so that no run writes into a server by
    /// accident.
    #[arg(long, requires_all = ["writes", "target"])]
    pub writes_to_target: bool,

    /// The writes arm's read rate, per second [default: a quarter of the capacity an
    /// open-loop calibration measures].
    #[arg(long, value_name = "R", requires = "writes")]
    pub rate: Option<f64>,

    /// Documents per commit in the writes arm.
    #[arg(long, value_name = "N", default_value_t = 20_000, requires = "writes")]
    pub write_docs: usize,

    /// BEIR corpus.jsonl to take the written documents from [default: generated
    /// TREC-COVID-style documents with ids (`w-…`) that cannot collide].
    #[arg(long, value_name = "FILE", requires = "writes")]
    pub write_corpus: Option<PathBuf>,

    /// Keep committing a batch every SECONDS until the reads end [default: one commit].
    #[arg(long, value_name = "SECONDS", requires = "writes")]
    pub commit_every: Option<f64>,

    /// Threads a commit may use to build its segment; several values run the arm once
    /// for each (the trade of commit time against read tail) [default: 1 and the number
    /// of cores; each at most 1024].
    #[arg(long, value_name = "N1,N2", value_delimiter = ',', requires = "writes", value_parser = crate::cli::thread_count())]
    pub commit_threads: Vec<usize>,

    /// Where the writes arm makes its copy of the index [default: the system's
    /// temporary directory].
    #[arg(long, value_name = "DIR", requires = "writes")]
    pub scratch: Option<PathBuf>,
}

/// The engines `heddle-eval bench` knows, at the BM25 parameters of `--k1` and `--b`,
/// running `--arm`.
pub fn engines_for(args: &BenchArgs) -> anyhow::Result<Vec<Box<dyn BackendFactory>>> {
    let ranking = arm_ranking(args)?.map(Arc::new);
    if args.encode_batch > 1 && ranking.is_none() {
        bail!("--encode-batch batches the queries' encodings: --arm text encodes none");
    }
    Ok(vec![Box::new(HeddleFactory {
        bm25: bm25(args)?,
        ranking,
        encode_batch: args.encode_batch as usize,
    })])
}

/// The ranking of `--arm vector` or `hybrid` (`None` for text: the plain BM25 path).
fn arm_ranking(args: &BenchArgs) -> anyhow::Result<Option<Retrieval>> {
    if args.depth.is_some() && args.arm != "hybrid" {
        bail!(
            "--depth is how deep --arm hybrid reads each stream it fuses; --arm {} fuses none",
            args.arm
        );
    }
    let streams = match args.arm.as_str() {
        "vector" => vec![StreamSpec::Vector],
        "hybrid" => vec![StreamSpec::bm25(heddle::Field::Flat), StreamSpec::Vector],
        _ => return Ok(None),
    };
    if args.target.is_some() {
        bail!(
            "--arm {} runs in this process: the server loads no encoder",
            args.arm
        );
    }
    let mut r = Retrieval::single(heddle::Field::Flat, bm25(args)?, args.k.max(1), false);
    r.combine = if streams.len() > 1 {
        Combine::Rrf
    } else {
        Combine::Single
    };
    r.weights = vec![1.0; streams.len()];
    r.streams = streams;
    r.query_vectors = Some(crate::cli::encoder_by_name(&args.encoder)?);
    r.effort = crate::cli::ranking::vector_effort(&args.vector_search, args.ef as usize);
    r.rrf.depth = args.depth.map(|d| d as usize);
    Ok(Some(r))
}

/// `--k1` and `--b`, checked by the engine's rule.
fn bm25(args: &BenchArgs) -> anyhow::Result<heddle::Bm25Params> {
    heddle::Bm25Params::new(args.k1, args.b)
        .with_context(|| format!("--k1 {:?} --b {:?}", args.k1, args.b))
}

/// Runs the bench: opens and warms up each selected engine, calibrates if no rates were
/// named, runs the ladder with the engines alternating rung by rung, prints the table
/// on stdout and writes the JSON and SVG if asked. Progress goes to stderr. Every file
/// is written before anything is printed: a standard output that cannot be written (a
/// full disk) fails the command without losing the measurement.
pub fn run(args: &BenchArgs, engines: &[Box<dyn BackendFactory>]) -> anyhow::Result<BenchReport> {
    let report = measure(args, engines)?;
    if let Some(path) = &args.html {
        crate::html::bench_page(&report).write(path)?;
        crate::note!("bench: wrote {}", path.display());
    }
    if !report.sequential.is_empty() {
        crate::outln!("{}", super::sequential::render(&report.sequential));
    }
    if let Some(r) = &report.per_query {
        crate::outln!("{}", super::sequential::per_query::render(r));
    }
    let table = render_table_as(
        &report,
        if args.wide {
            Width::Wide
        } else {
            Width::Narrow
        },
    );
    crate::out!("{table}");
    Ok(report)
}

/// [`run`] without the table on stdout (the JSON, SVG and `.hgrm` files are written).
pub fn measure(
    args: &BenchArgs,
    engines: &[Box<dyn BackendFactory>],
) -> anyhow::Result<BenchReport> {
    ensure!(
        !args.writes,
        "--writes is the writes arm: run it with heddle_eval::bench::writes::run"
    );
    // With --target the engine is the server at that URL, whatever this binary registers.
    let http: Vec<Box<dyn BackendFactory>>;
    let engines = match http_engine(args)? {
        Some(factory) => {
            http = vec![Box::new(factory)];
            &http[..]
        }
        None => engines,
    };
    let chosen = select(engines, &args.engines)?;
    if let Some(base) = &args.baseline {
        ensure!(
            chosen.iter().any(|e| e.name() == base),
            "--baseline {base:?} is not one of the engines run"
        );
    }
    let queries = QueryCycle::load(&args.queries, args.seed)?;
    let settings = settings(args, queries.len())?;
    check_outputs(args)?;
    let environment = Environment::capture(&environment_dir(args));

    let mut opened: Vec<(String, Arc<dyn Backend>, f64)> = Vec::new();
    for factory in chosen {
        let started = Instant::now();
        let backend = factory
            .open(&args.index)
            .with_context(|| format!("opening {} for {}", args.index.display(), factory.name()))?;
        opened.push((
            factory.name().to_string(),
            backend,
            started.elapsed().as_secs_f64(),
        ));
    }

    let warm_n = args.warmup.unwrap_or(queries.len().min(2_000) as u64);
    let mut warmups = Vec::new();
    for (name, backend, _) in &opened {
        crate::note!(
            "bench: {name}: warm-up, {}",
            crate::progress::plural(warm_n, "query")
        );
        let w = warm_up(&**backend, &queries, warm_n, settings.k);
        ensure!(
            warm_n == 0 || w.errors < warm_n,
            "{name}: every warm-up query failed on {}: {}",
            args.index.display(),
            super::ladder::first_error(&**backend, &queries, settings.k)
        );
        warmups.push(w);
    }

    let (sequential, per_query) = if args.sequential > 0 {
        sequential_pass(args, &opened, &queries, settings.k)?
    } else {
        (Vec::new(), None)
    };

    let plan = if args.rates.is_empty() {
        let mut calibrations = Vec::new();
        for ((name, backend, _), w) in opened.iter().zip(&warmups) {
            let hint = w.latency_us.mean.unwrap_or(1_000.0);
            calibrations.push(calibrate(
                &**backend,
                name,
                hint,
                args.calibration_samples,
                &settings,
                &queries,
            )?);
        }
        if args.fractions.is_empty() {
            derived(calibrations)
        } else {
            derived_with(calibrations, &args.fractions)
        }
    } else {
        named(&args.rates)
    };

    let engines_ref: Vec<(&str, &dyn Backend)> =
        opened.iter().map(|(n, b, _)| (n.as_str(), &**b)).collect();
    let partial = Partial {
        settings: &settings,
        plan: &plan,
        opened: opened.iter().map(|(n, _, s)| (n.clone(), *s)).collect(),
        warmups: &warmups,
        environment: &environment,
        sequential: &sequential,
        per_query: per_query.as_ref(),
    };
    // On disk before the first rung and after every rung, so that an interrupted run
    // (SIGINT, a crash) leaves every finished rung, marked incomplete.
    if let Some(path) = &args.json {
        write_json(
            &partial.report(&vec![Vec::new(); opened.len()], false),
            path,
        )?;
    }
    let mut written: anyhow::Result<()> = Ok(());
    let rungs = run_ladder(
        &engines_ref,
        &plan.rates,
        &settings,
        &queries,
        &mut |rungs| {
            if written.is_err() {
                return;
            }
            written = (|| {
                if let Some(dir) = &args.hgrm
                    && let Some(newest) = rungs.iter().flatten().max_by_key(|r| r.sequence)
                {
                    write_rung(dir, newest)?;
                }
                if let Some(path) = &args.json {
                    write_json(&partial.report(rungs, false), path)?;
                }
                Ok(())
            })();
        },
    );
    written?;
    let report = partial.finish(rungs);

    if let Some(path) = &args.json {
        write_json(&report, path)?;
        crate::note!("bench: wrote {}", path.display());
    }
    if let Some(path) = &args.svg {
        super::report::write_svg(&render_svg(&report), path)?;
        crate::note!("bench: wrote {}", path.display());
    }
    Ok(report)
}

/// The sequential pass over every opened engine and its per-query report: with two
/// engines, ratios are the other engine's over the `--baseline` one's (the second's
/// if none is named); query classes come from the first engine that can say what its
/// terms' document frequencies are.
fn sequential_pass(
    args: &BenchArgs,
    opened: &[(String, Arc<dyn Backend>, f64)],
    queries: &QueryCycle,
    k: usize,
) -> anyhow::Result<(Vec<SequentialReport>, Option<PerQueryReport>)> {
    let mut order: Vec<&(String, Arc<dyn Backend>, f64)> = opened.iter().collect();
    if let (Some(base), 2) = (&args.baseline, order.len())
        && order[0].0 == *base
    {
        order.swap(0, 1);
    }
    let engines: Vec<(&str, &dyn Backend)> =
        order.iter().map(|(n, b, _)| (n.as_str(), &**b)).collect();
    let passes = passes_for(args.sequential, queries.len());
    crate::note!(
        "bench: sequential pass: {} of {} per engine, alternating",
        crate::progress::plural(passes, "pass"),
        crate::progress::plural(queries.len() as u64, "query")
    );
    let reports = run_sequential(&engines, queries, passes, k);
    // The pass asks query i of the cycle i-th in every pass.
    let texts: Vec<String> = (0..queries.len() as u64)
        .map(|i| queries.get(i).to_string())
        .collect();
    let mut shares: HashMap<&str, Vec<f64>> = HashMap::new();
    if let Some(source) = engines
        .iter()
        .map(|(_, b)| *b)
        .find(|b| matches!(b.term_shares(""), Ok(Some(_))))
    {
        for q in &texts {
            if let Some(s) = source.term_shares(q)? {
                shares.insert(q, s);
            }
        }
    }
    let names: Vec<&str> = engines.iter().map(|(n, _)| *n).collect();
    let medians: Vec<&[Option<f64>]> = reports
        .iter()
        .map(|r| r.per_query_median_us.as_slice())
        .collect();
    let mut per_query = per_query::report(&names, passes, &texts, &medians, &|q| {
        shares.get(q).cloned()
    });
    if let Some(p) = per_query.as_mut() {
        let cpu: Vec<&[Option<f64>]> = reports
            .iter()
            .map(|r| r.per_query_cpu_median_us.as_slice())
            .collect();
        per_query::add_cpu(p, &texts, &cpu, &|q| shares.get(q).cloned());
    }
    Ok((reports, per_query))
}

/// Everything a report holds but the rungs, to write it after each rung and at the end.
struct Partial<'a> {
    settings: &'a Settings,
    plan: &'a LadderPlan,
    opened: Vec<(String, f64)>,
    warmups: &'a [WarmupReport],
    environment: &'a Environment,
    sequential: &'a [SequentialReport],
    per_query: Option<&'a PerQueryReport>,
}

impl Partial<'_> {
    fn report(&self, rungs: &[Vec<RungReport>], complete: bool) -> BenchReport {
        let mut environment = self.environment.clone();
        environment.finish();
        let all: Vec<RungReport> = rungs.iter().flatten().cloned().collect();
        BenchReport {
            format: FORMAT_VERSION,
            tool: "heddle-eval bench".to_string(),
            mode: "open-loop".to_string(),
            settings: self.settings.clone(),
            ladder: self.plan.clone(),
            engines: self
                .opened
                .iter()
                .zip(self.warmups)
                .zip(rungs)
                .map(|(((name, open_secs), warmup), rungs)| EngineRun {
                    name: name.clone(),
                    open_secs: *open_secs,
                    warmup: warmup.clone(),
                    rungs: rungs.clone(),
                })
                .collect(),
            summary: summarise(&all),
            environment: Some(environment),
            complete,
            sequential: self.sequential.to_vec(),
            per_query: self.per_query.cloned(),
        }
    }

    fn finish(&self, rungs: Vec<Vec<RungReport>>) -> BenchReport {
        self.report(&rungs, true)
    }
}

/// `--target`'s engine: a keep-alive pool as large as the in-flight cap, so that every
/// admitted request has a connection of its own.
fn http_engine(args: &BenchArgs) -> anyhow::Result<Option<HttpFactory>> {
    let Some(url) = &args.target else {
        return Ok(None);
    };
    Ok(Some(HttpFactory {
        target: Target::parse(url)?,
        field: args.target_field.clone(),
        pool: settings(args, 1)?.inflight,
    }))
}

/// Where the environment's storage and fsync cost are measured: the index, or with
/// --target (the index is the server's) the temporary directory of this machine.
fn environment_dir(args: &BenchArgs) -> PathBuf {
    if args.target.is_some() {
        std::env::temp_dir()
    } else {
        args.index.clone()
    }
}

/// Every output path is checked before the first rung: a run of many minutes must not
/// end in "cannot write".
fn check_outputs(args: &BenchArgs) -> anyhow::Result<()> {
    for (p, flag) in [
        (&args.json, "--json"),
        (&args.svg, "--svg"),
        (&args.html, "--html"),
    ] {
        if let Some(p) = p {
            crate::output::check_file(p, flag)?;
        }
    }
    if let Some(d) = &args.hgrm {
        crate::output::check_dir(d, "--hgrm")?;
    }
    Ok(())
}

pub(super) fn select<'a>(
    engines: &'a [Box<dyn BackendFactory>],
    names: &[String],
) -> anyhow::Result<Vec<&'a dyn BackendFactory>> {
    ensure!(!engines.is_empty(), "no engines registered");
    if names.is_empty() {
        return Ok(engines.iter().map(|e| &**e).collect());
    }
    let mut out = Vec::new();
    for name in names {
        let Some(e) = engines.iter().find(|e| e.name() == name) else {
            let known: Vec<&str> = engines.iter().map(|e| e.name()).collect();
            bail!(
                "unknown engine {name:?}; this binary has: {}",
                known.join(", ")
            );
        };
        ensure!(
            !out.iter().any(|o: &&dyn BackendFactory| o.name() == name),
            "engine {name:?} named twice"
        );
        out.push(&**e);
    }
    Ok(out)
}

pub(super) fn settings(args: &BenchArgs, query_count: usize) -> anyhow::Result<Settings> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = args.threads.unwrap_or(cores);
    ensure!(threads >= 1, "--threads must be at least 1");
    let inflight = args.inflight.unwrap_or(4 * threads);
    ensure!(inflight >= 1, "--inflight must be at least 1");
    // Over HTTP one client thread drives every request (an async client): no request
    // waits for a worker, and the in-flight cap is the pool's size.
    let threads = if args.target.is_some() { 1 } else { threads };
    ensure!(args.samples >= 1, "--samples must be at least 1");
    ensure!(args.repeat >= 1, "--repeat must be at least 1");
    ensure!(
        args.min_duration.is_finite() && args.min_duration >= 0.0,
        "--min-duration must be a non-negative number of seconds"
    );
    for &r in &args.rates {
        ensure!(
            r.is_finite() && r > 0.0,
            "--rates: {r} is not a positive rate"
        );
    }
    ensure!(
        args.rates.is_empty() || args.fractions.is_empty(),
        "--fractions shapes a derived ladder; with --rates the rates are named"
    );
    if let Some(r) = args.max_lag_ratio {
        ensure!(
            r.is_finite() && r > 0.0,
            "--max-lag-ratio: {r} is not a positive ratio"
        );
    }
    if let Some(c) = args.max_others_cpu {
        ensure!(
            c.is_finite() && c >= 0.0,
            "--max-others-cpu: {c} is not a number of cores"
        );
    }
    for &f in &args.fractions {
        ensure!(
            f.is_finite() && f > 0.0,
            "--fractions: {f} is not a positive fraction"
        );
    }
    let target = args.target.as_deref().map(Target::parse).transpose()?;
    let in_process_bm25 = match target {
        Some(_) => None,
        None => Some(bm25(args)?),
    };
    Ok(Settings {
        index: match &target {
            Some(t) => t.url(),
            None => args.index.display().to_string(),
        },
        target: target.map(|t| t.url()),
        queries: args.queries.display().to_string(),
        query_count,
        arrivals: args.arrivals,
        threads,
        inflight,
        cores,
        samples: args.samples,
        min_duration_secs: args.min_duration,
        k: args.k,
        k1: in_process_bm25.map(|p| p.k1),
        b: in_process_bm25.map(|p| p.b),
        seed: args.seed,
        repeat: args.repeat,
        baseline: args.baseline.clone(),
        label: args.label.clone(),
        ranking: match &args.arm[..] {
            "text" => None,
            arm => Some(format!(
                "the {arm} arm (encoder {}, {} vector search{}{}{})",
                args.encoder,
                args.vector_search,
                match args.vector_search.as_str() {
                    "hnsw" => format!(", ef {}", args.ef),
                    _ => String::new(),
                },
                match arm {
                    "hybrid" => format!(
                        ", each stream fused {} deep",
                        args.depth
                            .map_or(crate::quality::DEFAULT_FUSION_DEPTH, |d| d as usize)
                    ),
                    _ => String::new(),
                },
                match args.encode_batch {
                    1 => String::new(),
                    n => format!(", up to {n} waiting queries encoded together"),
                }
            )),
        },
        max_others_cpu: args.max_others_cpu,
        max_lag_ratio: args.max_lag_ratio,
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Command {
        #[command(flatten)]
        bench: BenchArgs,
    }

    fn bench_args(extra: &[&str]) -> BenchArgs {
        let base = ["bench", "--index", "idx", "--queries", "q.jsonl"];
        let args = Command::try_parse_from(base.iter().chain(extra)).unwrap();
        args.bench
    }

    #[test]
    fn queries_encoded_together_rank_as_each_encoded_alone() {
        use crate::quality::TextEncoder;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("idx");
        let settings = heddle::IndexSettings {
            vector_dim: Some(8),
            ..Default::default()
        };
        let index = heddle::Index::create(&path, settings).unwrap();
        let mut w = index.writer().unwrap();
        let encoder = crate::quality::HashingEncoder { dim: 8 };
        let docs = [
            ("d1", "vitamin d and bone density"),
            ("d2", "bone fractures in older adults"),
            ("d3", "statins lower cholesterol"),
            ("d4", "masks and respiratory viruses"),
        ];
        for (id, text) in docs {
            let doc =
                heddle::Document::new(id, "", text).with_vector(encoder.encode(text).unwrap());
            w.add(doc).unwrap();
        }
        w.commit().unwrap();
        let path = path.to_string_lossy().into_owned();
        let open = |batch: &str| {
            let mut args = bench_args(&[
                "--arm",
                "hybrid",
                "--encoder",
                "hashing:8",
                "--encode-batch",
                batch,
            ]);
            args.index = path.clone().into();
            engines_for(&args)
                .unwrap()
                .remove(0)
                .open(&args.index)
                .unwrap()
        };
        let (alone, together) = (open("1"), open("3"));
        assert_eq!((alone.batch_limit(), together.batch_limit()), (1, 3));
        let queries = ["bone density", "cholesterol statins", "viruses"];
        let mut answers = Vec::new();
        together.answer_batch(&queries, 10, &mut |i, answer| answers.push((i, answer)));
        assert_eq!(answers.iter().map(|a| a.0).collect::<Vec<_>>(), [0, 1, 2]);
        let mut encodes = Vec::new();
        for (query, (_, answer)) in queries.iter().zip(answers) {
            let answer = answer.unwrap();
            assert_eq!(answer.ids, alone.answer(query, 10).unwrap().ids, "{query}");
            encodes.push(answer.parts.expect("the hybrid arm's parts").encode);
        }
        // Each request waited for the one encoding of the batch.
        assert!(encodes.iter().all(|&e| e == encodes[0]), "{encodes:?}");
        // The text arm has nothing to encode together.
        let error = engines_for(&bench_args(&["--encode-batch", "2"]))
            .err()
            .unwrap();
        assert!(error.to_string().contains("--encode-batch"), "{error}");
    }

    #[test]
    fn the_hybrid_arm_fuses_each_stream_to_the_depth_asked_for() {
        let depth = |extra: &[&str]| {
            let args =
                bench_args(&[&["--arm", "hybrid", "--encoder", "hashing:8"], extra].concat());
            arm_ranking(&args).unwrap().unwrap().depth()
        };
        assert_eq!(depth(&[]), Some(crate::quality::DEFAULT_FUSION_DEPTH));
        assert_eq!(depth(&["--depth", "100"]), Some(100));
        // Fewer than the hits asked for is still what was asked (as `quality --depth`).
        assert_eq!(depth(&["--depth", "3", "--k", "10"]), Some(3));
    }

    #[test]
    fn depth_is_refused_where_nothing_is_fused() {
        for arm in ["text", "vector"] {
            let args = bench_args(&["--arm", arm, "--encoder", "hashing:8", "--depth", "100"]);
            let error = arm_ranking(&args).unwrap_err().to_string();
            assert!(error.contains("--depth"), "{error}");
        }
        assert!(
            Command::try_parse_from(["bench", "--index", "i", "--queries", "q", "--depth", "0"])
                .is_err()
        );
    }
}
