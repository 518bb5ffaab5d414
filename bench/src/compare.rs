//! `heddle-bench bench`: builds (or reuses) each engine's index of one BEIR corpus, checks
//! that the engines agree, then measures both in one process — open time, a sequential
//! pass, and the instrument's open-loop ladder with the engines alternating rung by rung
//! — and each engine's peak memory in a process of its own. Everything is quoted as
//! heddle/tantivy ratios (docs/PERF.md, "heddle against tantivy").

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, ensure};
use clap::Args;
use heddle_eval::bench::queries::QueryCycle;
use heddle_eval::bench::report::BenchReport;
use heddle_eval::bench::stats::spread;
use heddle_eval::bench::writes::WritesReport;
use heddle_eval::bench::{Backend, BackendFactory, BenchArgs};

use crate::agreement::{self, AgreementReport, Class, MATCHED_THRESHOLD, QueryAgreement};
use crate::analysis::{Analysis, Peer};
use crate::child;
use crate::engines::{
    BuildOptions, BuildStats, Engine, TANTIVY_VERSION, TantivyBackend, corpus_file,
};
use crate::reference;
use crate::report::{self, COMPARE_FORMAT, CompareReport, EngineFigures, Machine};
use crate::workdir::{BuildKey, BuildRecord, CorpusFingerprint, Slot};
use heddle_eval::bench::sequential::per_query::{self, PerQueryReport};
use heddle_eval::bench::sequential::{SequentialReport, passes_for, run_sequential};

/// tantivy's indexing memory over all its threads unless told otherwise, MiB.
pub(crate) const TANTIVY_MEMORY_MIB: usize = 1024;

/// Everything `heddle-eval bench` takes (but `--index`: each engine has its own index,
/// built from `--corpus` under `--workdir`), and the comparison's own settings.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// BEIR directory holding corpus.jsonl (or the corpus.jsonl file itself).
    #[arg(long, value_name = "DIR")]
    pub corpus: PathBuf,

    /// Where each engine's index is kept, and reused while the corpus and the build
    /// settings are unchanged [default: results/compare/work in the repository].
    #[arg(long, value_name = "DIR", default_value_os_t = default_workdir(), hide_default_value = true)]
    pub workdir: PathBuf,

    /// matched: both engines index and query heddle's tokens (the comparison). native:
    /// each engine's own English analysis (out of the box; answers differ).
    #[arg(long, value_enum, default_value_t = Analysis::Matched)]
    pub analysis: Analysis,

    /// Rebuild the indexes even if reusable ones exist.
    #[arg(long)]
    pub rebuild: bool,

    /// Indexing threads, the same for both engines [default: the number of cores].
    #[arg(long, value_name = "N")]
    pub index_threads: Option<usize>,

    /// tantivy's indexing memory budget over all its threads, in MiB (when --memory-mib
    /// is not given; heddle then builds in one commit, without a budget).
    #[arg(long, value_name = "MIB", default_value_t = TANTIVY_MEMORY_MIB)]
    pub tantivy_memory_mib: usize,

    /// Both engines index in this memory budget, in MiB: heddle's writer budget (what
    /// `heddle-eval index --memory-mb` sets) and tantivy's indexing arena over all its
    /// threads.
    #[arg(long, value_name = "MIB", conflicts_with = "tantivy_memory_mib")]
    pub memory_mib: Option<usize>,

    /// How many segments each index has: `matched` (heddle's build decides; tantivy is
    /// merged down to heddle's count), `natural` (each engine's own merge policy runs
    /// during its build and is waited for), or a number N (both merged down to at most
    /// N after the build).
    #[arg(long, value_name = "matched|natural|N", default_value = "matched", value_parser = SegmentTarget::parse)]
    pub segments: SegmentTarget,

    /// Queries per engine in the sequential pass (whole passes over the query set;
    /// 10,000 makes p99 reportable).
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub sequential_samples: u64,

    /// Opens of each index (alternating engines) whose median is the open time.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub open_rounds: usize,

    /// Measure the open times only (after one uncounted open of each index, which the
    /// full comparison's agreement check stands in for), print them with the ratio and
    /// stop: no agreement check, sequential pass, ladder or memory rung.
    #[arg(long)]
    pub open_only: bool,

    /// How deep each engine is asked in the agreement check, to find ties at the cut.
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    pub agreement_depth: usize,

    /// Go on to the timings even if the matched engines disagree (the figures are then
    /// not a speed comparison, and say so).
    #[arg(long)]
    pub allow_disagreement: bool,

    /// Requests in each engine's memory rung (a fresh process per engine); 0 skips it.
    #[arg(long, value_name = "N", default_value_t = 5_000)]
    pub memory_requests: u64,

    /// Writes the comparison (every figure and ratio, the agreement per query) here.
    #[arg(long, value_name = "FILE")]
    pub compare_json: Option<PathBuf>,

    #[command(flatten)]
    pub bench: BenchArgs,
}

/// How many segments the compared indexes are built with (`--segments`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentTarget {
    /// heddle's build decides; tantivy is merged down to heddle's count.
    Matched,
    /// Each engine's own merge policy during the build.
    Natural,
    /// Both merged down to at most this many.
    AtMost(usize),
}

impl SegmentTarget {
    fn parse(s: &str) -> Result<Self, String> {
        match s {
            "matched" => Ok(SegmentTarget::Matched),
            "natural" => Ok(SegmentTarget::Natural),
            n => match n.parse::<usize>() {
                Ok(0) | Err(_) => Err(format!(
                    "{n:?}: expected matched, natural or a number of segments of at least 1"
                )),
                Ok(n) => Ok(SegmentTarget::AtMost(n)),
            },
        }
    }
}

/// tantivy's BM25 is fixed at k1 1.2, b 0.75 (the engine's default), so heddle is
/// compared at those: `--k1`/`--b` (from `heddle-eval bench`'s flags) may not differ.
pub(crate) fn tantivy_bm25(args: &CompareArgs) -> anyhow::Result<()> {
    let fixed = heddle::Bm25Params::default();
    ensure!(
        args.bench.k1 == fixed.k1 && args.bench.b == fixed.b,
        "--k1 {} --b {}: tantivy's BM25 is fixed at k1 {} b {}, and heddle is compared at the same",
        args.bench.k1,
        args.bench.b,
        fixed.k1,
        fixed.b
    );
    Ok(())
}

/// `results/compare/work` under the repository heddle-bench was built from, wherever the
/// command is run. heddle-bench is a tool of the checkout (built and run with cargo, never
/// installed), so the build-time path names the checkout; relative to the working
/// directory, a run from bench/ or a subfolder built a second pair of indexes (minutes on
/// a real corpus) somewhere nobody looks, and requiring the flag would make every quick
/// run longer to type than the Makefile's. `results/` is the repository's ignored
/// output folder.
pub fn default_workdir() -> PathBuf {
    let bench = Path::new(env!("CARGO_MANIFEST_DIR"));
    bench
        .parent()
        .unwrap_or(bench)
        .join("results")
        .join("compare")
        .join("work")
}

/// Runs the comparison; prints as it goes and returns the report.
pub fn run(args: &CompareArgs) -> anyhow::Result<CompareReport> {
    tantivy_bm25(args)?;
    // Every output is checked before the indexes are built (minutes on a real corpus),
    // by heddle-eval's one rule: the directory must exist and is never created.
    for (p, flag) in [
        (&args.compare_json, "--compare-json"),
        (&args.bench.json, "--json"),
        (&args.bench.svg, "--svg"),
        (&args.bench.html, "--html"),
    ] {
        if let Some(p) = p {
            heddle_eval::output::check_file(p, flag)?;
        }
    }
    let load_start = heddle_eval::bench::probe::load_average();
    let mut environment = heddle_eval::env::Environment::capture(&args.workdir);
    // 1. Indexes.
    let Prepared {
        corpus,
        engines,
        built,
        factories,
    } = prepare(args)?;

    // 2. Agreement, before any timing.
    let mut agreement_text = None;
    let agreement = if built.len() == 2 {
        let report = check_agreement(args, &built)?;
        let threshold = (args.analysis == Analysis::Matched).then_some(MATCHED_THRESHOLD);
        agreement_text = Some(agreement::render(&report, threshold));
        print!("{}", agreement_text.as_deref().unwrap_or_default());
        println!();
        report.require(threshold, args.allow_disagreement)?;
        Some(report)
    } else {
        None
    };

    // 3. Open times, alternating engines.
    let opens = time_opens(args, &factories)?;

    // 4. Sequential pass, and its figures query by query.
    let queries = QueryCycle::load(&args.bench.queries, args.bench.seed)?;
    let mut per_query = None;
    let passes = passes_for(args.sequential_samples, queries.len());
    let sequential = if args.sequential_samples > 0 {
        let opened: Vec<(String, Arc<dyn Backend>)> = factories
            .iter()
            .map(|f| Ok((f.name().to_string(), f.open(&args.workdir)?)))
            .collect::<anyhow::Result<_>>()?;
        let refs: Vec<(&str, &dyn Backend)> =
            opened.iter().map(|(n, b)| (n.as_str(), &**b)).collect();
        eprintln!(
            "compare: sequential pass: {passes} passes of {} queries per engine, alternating",
            queries.len()
        );
        let reports = run_sequential(&refs, &queries, passes, args.bench.k);
        println!("{}", heddle_eval::bench::sequential::render(&reports));
        per_query = per_query_report(&reports, &queries, passes, &built)?;
        if let Some(r) = &per_query {
            println!("{}", per_query::render(r));
        }
        reports.into_iter().map(Some).collect()
    } else {
        vec![None; factories.len()]
    };

    // 5. The ladder: the instrument itself, both engines alternating rung by rung.
    let mut bench = args.bench.clone();
    bench.index = args.workdir.clone();
    if bench.baseline.is_none() && engines.contains(&Engine::Tantivy) && engines.len() > 1 {
        bench.baseline = Some(Engine::Tantivy.name().to_string());
    }
    if bench.label.is_none() {
        bench.label = Some(args.analysis.label(Peer::Tantivy).to_string());
    }
    // The comparison writes the one page, with the ladder's sections in it.
    bench.html = None;
    let ladder = heddle_eval::bench::run(&bench, &factories)?;

    // 6. Memory, each engine in a fresh process.
    let memory_rate = memory_rate(&ladder);
    let mut memory = Vec::new();
    for (engine, _, _, dir) in &built {
        if args.memory_requests == 0 {
            memory.push(None);
            continue;
        }
        eprintln!(
            "compare: {}: memory rung at {}/s in a fresh process",
            engine.name(),
            memory_rate
        );
        memory.push(Some(child::spawn_serve_rss(
            *engine,
            dir,
            args.analysis,
            &args.bench.queries,
            memory_rate,
            args.memory_requests,
            ladder.settings.threads,
            ladder.settings.inflight,
            args.bench.k,
            args.bench.seed,
        )?));
    }

    let figures: Vec<EngineFigures> = built
        .into_iter()
        .zip(opens)
        .zip(sequential)
        .zip(memory)
        .map(
            |((((engine, stats, reused, _), opens), sequential), memory)| EngineFigures {
                engine: engine.name().to_string(),
                build: stats,
                reused,
                open_secs: spread(&opens).expect("at least one open"),
                sequential,
                memory,
            },
        )
        .collect();
    environment.finish();
    let report = CompareReport {
        format: COMPARE_FORMAT,
        tool: format!("heddle-bench {}", env!("CARGO_PKG_VERSION")),
        tantivy_version: TANTIVY_VERSION.to_string(),
        analysis: args.analysis.name().to_string(),
        analysis_label: args.analysis.label(Peer::Tantivy).to_string(),
        corpus: corpus.display().to_string(),
        queries: args.bench.queries.display().to_string(),
        machine: Machine::this(load_start),
        ratios: report::ratios(&figures, Some(&ladder)),
        held: report::holds(&ladder),
        engines: figures,
        agreement,
        ladder_json: args.bench.json.as_ref().map(|p| p.display().to_string()),
        memory_rate: (args.memory_requests > 0).then_some(memory_rate),
        per_query,
        environment: Some(environment),
    };
    println!();
    print!("{}", report::render_ratios(&report));
    if let Some(path) = &args.compare_json {
        report::write(&report, path)?;
        eprintln!("compare: wrote {}", path.display());
    }
    if let Some(path) = &args.bench.html {
        report::html::page(&report, &ladder, agreement_text.as_deref()).write(path)?;
        eprintln!("compare: wrote {}", path.display());
    }
    Ok(report)
}

/// The engines asked for, their indexes (built or reused) and backend factories: what
/// both the comparison and the writes arm start from.
/// Each engine's open times over `--open-rounds` rounds, engines alternating within a
/// round (the clock stops before the backend is dropped).
fn time_opens(
    args: &CompareArgs,
    factories: &[Box<dyn BackendFactory>],
) -> anyhow::Result<Vec<Vec<f64>>> {
    let mut opens: Vec<Vec<f64>> = vec![Vec::new(); factories.len()];
    for round in 0..args.open_rounds.max(1) {
        for (i, f) in factories.iter().enumerate() {
            let t = Instant::now();
            let backend = f
                .open(&args.workdir)
                .with_context(|| format!("opening {}", f.name()))?;
            opens[i].push(t.elapsed().as_secs_f64());
            drop(backend);
        }
        eprintln!(
            "compare: open round {}/{}",
            round + 1,
            args.open_rounds.max(1)
        );
    }
    Ok(opens)
}

/// `--open-only`: the indexes as `bench` builds or reuses them, one uncounted open of
/// each (so that both start from the same warm page cache, as after the full
/// comparison's agreement check), then `--open-rounds` alternating rounds. Prints each
/// engine's median [min–max] and, with two engines, the ratio of the medians (heddle
/// over tantivy).
pub fn run_open_only(args: &CompareArgs) -> anyhow::Result<()> {
    tantivy_bm25(args)?;
    let Prepared { factories, .. } = prepare(args)?;
    for f in &factories {
        drop(
            f.open(&args.workdir)
                .with_context(|| format!("opening {}", f.name()))?,
        );
    }
    let opens = time_opens(args, &factories)?;
    let mut medians = Vec::new();
    for (f, times) in factories.iter().zip(&opens) {
        let s = spread(times).expect("at least one open");
        println!(
            "open {}: {:.1} µs [{:.1}–{:.1}] over {} opens",
            f.name(),
            s.median * 1e6,
            s.min * 1e6,
            s.max * 1e6,
            times.len()
        );
        medians.push((f.name().to_string(), s.median));
    }
    let of = |name: &str| medians.iter().find(|(n, _)| n == name).map(|(_, m)| *m);
    if let (Some(h), Some(t)) = (of(Engine::Heddle.name()), of(Engine::Tantivy.name())) {
        println!("open heddle/tantivy: {:.2}×", h / t);
    }
    Ok(())
}

struct Prepared {
    corpus: PathBuf,
    engines: Vec<Engine>,
    built: Vec<(Engine, BuildStats, bool, PathBuf)>,
    factories: Vec<Box<dyn BackendFactory>>,
}

fn prepare(args: &CompareArgs) -> anyhow::Result<Prepared> {
    let engines = selected(&args.bench.engines)?;
    let corpus = corpus_file(&args.corpus);
    ensure!(
        corpus.is_file(),
        "{}: no corpus.jsonl there",
        args.corpus.display()
    );
    eprintln!("compare: {}", args.analysis.label(Peer::Tantivy));
    let built = indexes(args, &engines, &corpus)?;
    let factories = built
        .iter()
        .map(|(e, _, _, dir)| e.factory(dir, args.analysis))
        .collect();
    Ok(Prepared {
        corpus,
        engines,
        built,
        factories,
    })
}

/// Builds each engine's index of `corpus` under `--workdir` (or reuses the one built
/// from the same corpus with the same settings), in the order of `engines`.
pub(crate) fn indexes(
    args: &CompareArgs,
    engines: &[Engine],
    corpus: &Path,
) -> anyhow::Result<Vec<(Engine, BuildStats, bool, PathBuf)>> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = args.index_threads.unwrap_or(cores);
    ensure!(threads >= 1, "--index-threads must be at least 1");
    eprintln!("compare: fingerprinting {}", corpus.display());
    let fingerprint = CorpusFingerprint::of(corpus)?;
    let mut built: Vec<(Engine, BuildStats, bool, PathBuf)> = Vec::new();
    let mut heddle_segments = None;
    for &engine in &order_for_build(engines) {
        let options = BuildOptions::new(
            args.analysis,
            Peer::Tantivy,
            threads,
            // 0: the engine's own policy decides (BuildOptions::segments).
            match (args.segments, engine) {
                (SegmentTarget::Matched, Engine::Heddle) | (SegmentTarget::Natural, _) => 0,
                (SegmentTarget::Matched, Engine::Tantivy) => heddle_segments.unwrap_or(1),
                (SegmentTarget::AtMost(n), _) => n,
            },
            match (args.memory_mib, engine) {
                (Some(mib), _) => mib << 20,
                (None, Engine::Heddle) => 0,
                (None, Engine::Tantivy) => args.tantivy_memory_mib << 20,
            },
        );
        let slot = Slot::new(&args.workdir, args.analysis, Peer::Tantivy, engine);
        let key = BuildKey::new(engine, fingerprint.clone(), options.clone());
        let (stats, reused) = match slot.reusable(&key).filter(|_| !args.rebuild) {
            Some(record) => {
                eprintln!(
                    "compare: {}: reusing the index in {} (built from the same corpus with the same settings; --rebuild to rebuild)",
                    engine.name(),
                    slot.index_dir().display()
                );
                (record.stats, true)
            }
            None => {
                slot.clear()?;
                eprintln!(
                    "compare: {}: building {} in a fresh process",
                    engine.name(),
                    slot.index_dir().display()
                );
                let stats = child::spawn_build(engine, corpus, &slot.staging_dir(), &options)?;
                let built_at_unix = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                slot.commit(&BuildRecord {
                    key,
                    stats: stats.clone(),
                    built_at_unix,
                })?;
                (stats, false)
            }
        };
        eprintln!(
            "compare: {}: {}, {}, {} bytes, built in {:.2} s ({:.0} documents/s){}",
            engine.name(),
            heddle_eval::progress::plural(stats.docs, "document"),
            heddle_eval::progress::plural(stats.segments as u64, "segment"),
            stats.bytes,
            stats.seconds,
            stats.docs_per_sec,
            if reused { " [reused]" } else { "" }
        );
        if engine == Engine::Heddle {
            heddle_segments = Some(stats.segments.max(1));
        }
        built.push((engine, stats, reused, slot.index_dir()));
    }
    if let [(_, a, ..), (_, b, ..)] = &built[..] {
        ensure!(
            a.docs == b.docs,
            "the engines indexed different numbers of documents ({} and {})",
            a.docs,
            b.docs
        );
    }
    // Back to the order of --engines.
    built.sort_by_key(|(e, ..)| engines.iter().position(|x| x == e));
    Ok(built)
}

/// `heddle-bench bench --writes`: each engine's index built (or reused) as for the
/// comparison, then the instrument's writes arm on copies of both, engines alternating
/// trial by trial (docs/PERF.md, "The writes arm"). No agreement check, sequential pass
/// or ladder: the arm measures what a commit costs the reads beside it.
pub fn run_writes(args: &CompareArgs) -> anyhow::Result<WritesReport> {
    tantivy_bm25(args)?;
    let Prepared { factories, .. } = prepare(args)?;
    let mut bench = args.bench.clone();
    bench.index = args.workdir.clone();
    heddle_eval::bench::writes::run(&bench, &factories)
}

/// The engines of `--engines` (default: both), in that order.
fn selected(names: &[String]) -> anyhow::Result<Vec<Engine>> {
    if names.is_empty() {
        return Ok(Engine::ALL.to_vec());
    }
    let mut out = Vec::new();
    for n in names {
        let e = Engine::parse(n)?;
        ensure!(!out.contains(&e), "engine {n:?} named twice");
        out.push(e);
    }
    Ok(out)
}

/// heddle first: its segment count is tantivy's target.
fn order_for_build(engines: &[Engine]) -> Vec<Engine> {
    let mut v = engines.to_vec();
    v.sort_by_key(|e| *e != Engine::Heddle);
    v
}

pub(crate) fn check_agreement(
    args: &CompareArgs,
    built: &[(Engine, BuildStats, bool, PathBuf)],
) -> anyhow::Result<AgreementReport> {
    let k = args.bench.k;
    let depth = args.agreement_depth.max(k);
    let searchers = built
        .iter()
        .map(|(e, _, _, dir)| e.scored(dir, args.analysis))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let queries = heddle_eval::formats::read_topics(&args.bench.queries)?;
    eprintln!(
        "compare: agreement check: {} queries on both engines, top {k} (asked {depth} deep)",
        queries.len()
    );
    let mut results = Vec::with_capacity(queries.len());
    for q in queries {
        let a = searchers[0].search_scored(&q.text, depth)?;
        let b = searchers[1].search_scored(&q.text, depth)?;
        results.push((q.id, q.text, a, b));
    }
    let mut report = agreement::report((built[0].0.name(), built[1].0.name()), k, depth, results);
    if args.analysis == Analysis::Matched && report.differs > 0 {
        explain_by_length_code(args, built, &mut report)?;
    }
    Ok(report)
}

/// Recomputes, with the reference BM25, both engines' scores of every document in the
/// queries that differ; a query whose scores are all reproduced (heddle's from the exact
/// length, tantivy's from its length code) differs by the length code alone.
fn explain_by_length_code(
    args: &CompareArgs,
    built: &[(Engine, BuildStats, bool, PathBuf)],
    report: &mut AgreementReport,
) -> anyhow::Result<()> {
    let heddle_is_a = built[0].0 == Engine::Heddle;
    let tantivy_dir = &built[if heddle_is_a { 1 } else { 0 }].3;
    let tantivy = TantivyBackend::open(tantivy_dir, args.analysis)?;
    let analyzer = heddle::Analyzer::new(args.analysis.heddle_analyzer(Peer::Tantivy));
    let differing: Vec<&QueryAgreement> = report
        .per_query
        .iter()
        .filter(|q| q.class == Class::Differs)
        .collect();
    let ids: HashSet<String> = differing
        .iter()
        .flat_map(|q| q.docs.iter().map(|d| d.id.clone()))
        .collect();
    eprintln!(
        "compare: {} queries differ beyond ties; re-scoring their {} documents with the reference BM25",
        differing.len(),
        ids.len()
    );
    let docs = reference::read_docs(&corpus_file(&args.corpus), &ids, &analyzer)?;
    let mut terms: HashSet<String> = HashSet::new();
    for q in &differing {
        terms.extend(reference::query_terms(&analyzer, &q.query).into_keys());
    }
    let stats = tantivy.collection_stats(terms.iter().map(String::as_str))?;
    let close = |got: Option<f64>, want: f64, tolerance: f64| {
        got.is_some_and(|g| (g - want).abs() <= tolerance * want.abs().max(1e-12))
    };
    agreement::explain(report, |q| {
        let query = reference::query_terms(&analyzer, &q.query);
        q.docs.iter().all(|d| {
            let Some(terms) = docs.get(&d.id) else {
                return false;
            };
            let (heddle, tantivy) = if heddle_is_a {
                (d.score_a, d.score_b)
            } else {
                (d.score_b, d.score_a)
            };
            close(heddle, reference::score_exact(&stats, &query, terms), 1e-9)
                && close(tantivy, reference::score_coded(&stats, &query, terms), 1e-5)
        })
    });
    Ok(())
}

/// heddle against tantivy query by query, with each query classed by the shares of
/// documents its terms are in (heddle's index and analyzer say which: both engines index
/// the same tokens). `None` unless both engines ran.
fn per_query_report(
    reports: &[SequentialReport],
    queries: &QueryCycle,
    passes: u64,
    built: &[(Engine, BuildStats, bool, PathBuf)],
) -> anyhow::Result<Option<PerQueryReport>> {
    let find = |name: &str| reports.iter().find(|r| r.engine == name);
    let (Some(h), Some(t)) = (find("heddle"), find("tantivy")) else {
        return Ok(None);
    };
    let Some((_, _, _, dir)) = built.iter().find(|b| b.0 == Engine::Heddle) else {
        return Ok(None);
    };
    let index = heddle::Index::open(dir)
        .with_context(|| format!("opening heddle index {}", dir.display()))?;
    let searcher = index.searcher();
    let analyzer = index.analyzer();
    let docs = searcher.num_docs().max(1) as f64;
    // The sequential pass asks query i of the cycle i-th in every pass.
    let texts: Vec<String> = (0..queries.len() as u64)
        .map(|i| queries.get(i).to_string())
        .collect();
    // Each query's terms' shares of the documents, looked up once (a lookup can fail on
    // a damaged dictionary block).
    let mut share_of: std::collections::HashMap<&str, Vec<f64>> = Default::default();
    for q in &texts {
        let mut terms = analyzer.tokens(q);
        terms.sort();
        terms.dedup();
        let mut shares = Vec::with_capacity(terms.len());
        for t in &terms {
            shares.push(searcher.doc_freq(heddle::Field::Flat, t)? as f64 / docs);
        }
        share_of.insert(q, shares);
    }
    let shares = |q: &str| -> Option<Vec<f64>> { share_of.get(q).cloned() };
    let mut report = per_query::report(
        &["heddle", "tantivy"],
        passes,
        &texts,
        &[&h.per_query_median_us, &t.per_query_median_us],
        &shares,
    );
    if let Some(r) = report.as_mut() {
        per_query::add_cpu(
            r,
            &texts,
            &[&h.per_query_cpu_median_us, &t.per_query_cpu_median_us],
            &shares,
        );
    }
    Ok(report)
}

/// The memory rung's rate: the fastest rung where no engine shed (it stresses memory
/// most while staying a latency measurement), else the slowest rung.
pub(crate) fn memory_rate(ladder: &BenchReport) -> f64 {
    let rates = &ladder.ladder.rates;
    let clean = |i: usize| {
        !ladder
            .summary
            .iter()
            .any(|s| s.rung == i && (s.overloaded || !s.valid))
    };
    (0..rates.len())
        .filter(|&i| clean(i))
        .map(|i| rates[i])
        .reduce(f64::max)
        .or_else(|| rates.iter().copied().reduce(f64::min))
        .unwrap_or(1.0)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: CompareArgs,
    }

    fn parse(extra: &[&str]) -> CompareArgs {
        let mut argv = vec!["t", "--corpus", "c", "--queries", "q", "--index", "."];
        argv.extend(extra);
        Wrapper::try_parse_from(argv).unwrap().args
    }

    /// Issue 17: the default was `results/compare/work` relative to wherever one stood.
    #[test]
    fn the_default_workdir_is_under_the_repositorys_results() {
        let workdir = parse(&[]).workdir;
        assert!(workdir.is_absolute(), "{}", workdir.display());
        assert!(
            workdir.ends_with("results/compare/work"),
            "{}",
            workdir.display()
        );
        let repo = workdir.ancestors().nth(3).unwrap();
        assert!(
            repo.join("bench/Cargo.toml").is_file(),
            "{}",
            repo.display()
        );
        assert!(
            repo.join("engine/Cargo.toml").is_file(),
            "{}",
            repo.display()
        );
        assert_eq!(parse(&["--workdir", "w"]).workdir, Path::new("w"));
    }
}
