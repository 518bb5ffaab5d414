//! `heddle-bench lucene`: heddle against Lucene, a peer that cannot live in this process
//! (docs/PERF.md rule 12; docs/DECISIONS.md, "Lucene as a second peer").
//!
//! Three engines, all behind the instrument's `Backend`: heddle in this process, heddle
//! in a child process (`heddle-child`) and Lucene in a child JVM, both children reached
//! over the same line protocol ([`crate::protocol`]). heddle-child / lucene is the
//! like-for-like ratio (the protocol's cost is on both sides); heddle / heddle-child is
//! what the protocol adds. Order of work: indexes (built or reused), the agreement gate
//! (nothing is timed if it fails), open times, the sequential pass, the open-loop ladder
//! (engines alternating rung by rung), each child's memory, the table.
//!
//! `--tantivy` adds a fourth engine, tantivy in this process, exactly as `heddle-bench
//! bench` runs it (its index reused from the same working directory, its agreement with
//! heddle gated the same way): the three engines then share one sequential pass and one
//! ladder, and the table gains heddle / tantivy beside the Lucene ratios.
//!
//! `--analysis matched` (the default): both engines index and query heddle's `english`
//! tokens. `--analysis native`: heddle runs its `lucene-english` preset and Lucene its
//! own `EnglishAnalyzer`, each over the raw text; the agreement check is then reported
//! but gates nothing, and every output says the answers differ.

pub mod backend;
pub mod lucene;
pub mod table;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, ensure};
use clap::Args;
use heddle::{Analyzer, Bm25Params};
use heddle_eval::bench::ladder::{RungSpec, run_rung, warm_up};
use heddle_eval::bench::queries::QueryCycle;
use heddle_eval::bench::report::Settings;
use heddle_eval::bench::sequential::per_query::{self, PerQueryReport};
use heddle_eval::bench::sequential::{SequentialReport, passes_for, run_sequential};
use heddle_eval::bench::stats::{Spread, spread};
use heddle_eval::bench::{Backend, BackendFactory, BenchArgs};
use serde::{Deserialize, Serialize};

use crate::agreement::{self, AgreementReport, Class, MATCHED_THRESHOLD};
use crate::analysis::{Analysis, Peer};
use crate::child;
use crate::compare::{self, CompareArgs, SegmentTarget};
use crate::engines::{
    BuildOptions, BuildStats, Engine, HeddleAt, HeddleScored, ScoredSearch, corpus_file,
};
use crate::reference;
use crate::report::held::{EngineHold, holds};
use crate::workdir::{BuildKey, BuildRecord, CorpusFingerprint, Slot};
use backend::{ChildFactory, ChildRss, ChildSpec, QueryForm, WarmRule, Warmed};
use lucene::{JavaArgs, LuceneBuild, LuceneKey, LuceneSlot};

/// The engines' names in every report.
pub const HEDDLE: &str = "heddle";
pub const HEDDLE_CHILD: &str = "heddle-child";
pub const LUCENE: &str = "lucene";
pub const TANTIVY: &str = "tantivy";

/// `heddle-bench lucene`'s flags: the comparison's own, the JVM's, and every
/// `heddle-eval bench` flag but --index.
#[derive(Debug, Clone, Args)]
pub struct LuceneArgs {
    /// BEIR directory holding corpus.jsonl (or the corpus.jsonl file itself).
    #[arg(long, value_name = "DIR")]
    pub corpus: PathBuf,
    /// Where the indexes are kept and reused while corpus and settings are unchanged
    /// [default: results/compare/work in the repository].
    #[arg(long, value_name = "DIR", default_value_os_t = crate::compare::default_workdir(), hide_default_value = true)]
    pub workdir: PathBuf,
    /// Rebuild both indexes even if reusable ones exist.
    #[arg(long)]
    pub rebuild: bool,
    /// matched: both engines index and query heddle's `english` tokens (Lucene through a
    /// WhitespaceAnalyzer), the only mode quoted as a speed comparison; native: heddle's
    /// `lucene-english` against Lucene's own EnglishAnalyzer over the raw text (the
    /// answers differ; agreement is reported, not required).
    #[arg(long, value_enum, default_value_t = Analysis::Matched)]
    pub analysis: Analysis,
    /// Also run tantivy in this process (matched analysis only), as `heddle-bench bench`
    /// does: all three engines in one sequential pass and one ladder.
    #[arg(long)]
    pub tantivy: bool,
    /// Indexing threads, the same for every engine [default: the number of cores].
    #[arg(long, value_name = "N")]
    pub index_threads: Option<usize>,
    /// Lucene's indexing RAM buffer (IndexWriterConfig.setRAMBufferSizeMB), MiB; heddle
    /// builds in one commit without a budget, as `make compare` builds it.
    #[arg(long, value_name = "MIB", default_value_t = 1024)]
    pub lucene_ram_mib: usize,
    /// Queries per engine in the sequential pass.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub sequential_samples: u64,
    /// Starts of each engine (alternating) whose median is its open time.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub open_rounds: usize,
    /// How deep each engine is asked in the agreement check.
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    pub agreement_depth: usize,
    /// Go on to the timings even if the engines disagree (the figures are then not a
    /// speed comparison, and say so).
    #[arg(long)]
    pub allow_disagreement: bool,
    /// Stop after the agreement check: no timing at all.
    #[arg(long)]
    pub agreement_only: bool,
    /// Requests in each engine's memory rung (a fresh process each); 0 skips it.
    #[arg(long, value_name = "N", default_value_t = 5_000)]
    pub memory_requests: u64,
    /// JIT warm-up: at least this many whole passes over the query set per child start.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub warm_min_passes: usize,
    /// JIT warm-up: at most this many passes.
    #[arg(long, value_name = "N", default_value_t = 30)]
    pub warm_max_passes: usize,
    /// JIT warm-up: stable when a pass's mean latency is within this fraction of the
    /// pass before.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.05)]
    pub warm_tolerance: f64,
    /// Writes the comparison (every figure, the agreement per query) here.
    #[arg(long, value_name = "FILE")]
    pub compare_json: Option<PathBuf>,
    #[command(flatten)]
    pub java: JavaArgs,
    #[command(flatten)]
    pub bench: BenchArgs,
}

/// One engine's figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Figures {
    pub engine: String,
    pub build_secs: Option<f64>,
    pub docs: Option<u64>,
    pub docs_per_sec: Option<f64>,
    pub index_bytes: Option<u64>,
    pub segments: Option<usize>,
    pub build_peak_rss_kib: Option<u64>,
    /// From starting the engine (its process, for a child) until it can answer, s.
    pub open_secs: Option<Spread<f64>>,
    /// The engine's own time to open its index (inside its process), s.
    pub open_engine_secs: Option<Spread<f64>>,
    pub sequential: Option<SequentialReport>,
    pub warm_up: Vec<Warmed>,
    pub held: Option<EngineHold>,
    pub memory: Option<ChildRss>,
    /// A child's own account of its searches in the sequential pass (its searching
    /// thread's CPU, its service time); the parent's `sequential.cpu_us` is then the
    /// protocol's client side.
    #[serde(default)]
    pub child_time: Option<backend::ChildTime>,
}

/// The whole comparison, as --compare-json writes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LuceneReport {
    /// Records written before native mode were matched.
    #[serde(default)]
    pub analysis: Analysis,
    /// How every output names the mode ([`Analysis::label`]).
    #[serde(default)]
    pub analysis_label: String,
    pub corpus: String,
    pub queries: String,
    pub lucene_version: String,
    pub k1: f64,
    pub b: f64,
    pub warm_rule: WarmRule,
    pub agreement: AgreementReport,
    /// Queries whose top k through the protocol differ from heddle in-process (0: the
    /// protocol changes no answer).
    pub protocol_mismatches: usize,
    pub lucene_build: LuceneBuild,
    pub engines: Vec<Figures>,
    /// heddle-child against lucene, query by query and per class.
    pub per_query: Option<PerQueryReport>,
    /// heddle in-process against heddle-child, query by query.
    pub per_query_protocol: Option<PerQueryReport>,
    /// With --tantivy: heddle against tantivy on every query (gated as in `bench`).
    #[serde(default)]
    pub tantivy_agreement: Option<AgreementReport>,
    /// With --tantivy: heddle in-process against tantivy, query by query.
    #[serde(default)]
    pub per_query_tantivy: Option<PerQueryReport>,
    pub memory_rate: Option<f64>,
    pub environment: Option<heddle_eval::env::Environment>,
}

/// Runs the comparison.
pub fn run(args: &LuceneArgs) -> anyhow::Result<LuceneReport> {
    let bm25 = Bm25Params {
        k1: args.bench.k1,
        b: args.bench.b,
    };
    let mut environment = heddle_eval::env::Environment::capture(&args.workdir);
    let corpus = corpus_file(&args.corpus);
    ensure!(
        corpus.is_file(),
        "{}: no corpus.jsonl there",
        args.corpus.display()
    );
    if args.tantivy {
        TantivyPeer::check(args)?;
    }
    let analysis = args.analysis;
    let label = analysis.label(Peer::Lucene);
    eprintln!("lucene: {label}");
    // heddle's analyzer: in matched mode it also makes Lucene's tokens.
    let analyzer = Arc::new(Analyzer::new(analysis.heddle_analyzer(Peer::Lucene)));

    // 1. Indexes.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = args.index_threads.unwrap_or(cores).max(1);
    eprintln!("lucene: fingerprinting {}", corpus.display());
    let fingerprint = CorpusFingerprint::of(&corpus)?;
    let (heddle_stats, heddle_dir) = heddle_index(args, &corpus, &fingerprint, threads)?;
    let tantivy = if args.tantivy {
        Some(TantivyPeer::prepare(args, &corpus)?)
    } else {
        None
    };
    let slot = LuceneSlot::new(&args.workdir, analysis);
    let key = LuceneKey {
        analysis,
        corpus: fingerprint,
        threads,
        ram_mb: args.lucene_ram_mib,
        segments: heddle_stats.segments.max(1),
        k1: bm25.k1,
        b: bm25.b,
        classpath: args.java.lucene_classpath.clone(),
        heddle_bench_version: env!("CARGO_PKG_VERSION").to_string(),
    };
    let lucene_build = match slot.reusable(&key).filter(|_| !args.rebuild) {
        Some(b) => {
            eprintln!(
                "lucene: reusing {} (--rebuild to rebuild)",
                slot.index_dir().display()
            );
            b
        }
        None => slot.build(&args.java, &corpus, &analyzer, &key)?,
    };
    ensure!(
        lucene_build.docs == heddle_stats.docs,
        "the engines indexed different numbers of documents (heddle {}, lucene {})",
        heddle_stats.docs,
        lucene_build.docs
    );

    let queries = Arc::new(QueryCycle::load(&args.bench.queries, args.bench.seed)?);
    let rule = WarmRule {
        min_passes: args.warm_min_passes,
        max_passes: args.warm_max_passes,
        tolerance: args.warm_tolerance,
    };
    let serve_threads = args.bench.threads.unwrap_or(cores).max(1);
    let specs = child_specs(
        args,
        &heddle_dir,
        &slot.index_dir(),
        serve_threads,
        bm25,
        &analyzer,
    )?;

    // 2. Agreement, before any timing.
    let lucene_probe = ChildFactory::new(specs[1].clone()).start()?;
    let heddle_child_probe = ChildFactory::new(specs[0].clone()).start()?;
    let heddle_scored = HeddleScored::open(&heddle_dir)?.with_bm25(bm25);
    let (agreement, protocol_mismatches) = check_agreement(
        args,
        &corpus,
        &analyzer,
        &heddle_scored,
        &heddle_child_probe,
        &lucene_probe,
    )?;
    drop(heddle_child_probe);
    // Native analysis: the engines see different tokens, so their answers may differ
    // and the figure is reported, never required.
    let threshold = (analysis == Analysis::Matched).then_some(MATCHED_THRESHOLD);
    println!("{label}");
    print!("{}", agreement::render(&agreement, threshold));
    println!(
        "  through the protocol, heddle-child's top {} differs from heddle in-process on {} queries",
        args.bench.k, protocol_mismatches
    );
    ensure!(
        protocol_mismatches == 0,
        "heddle through the protocol answers differently from heddle in-process on {protocol_mismatches} queries: the protocol is broken"
    );
    agreement.require(threshold, args.allow_disagreement)?;
    if let Some(t) = &tantivy {
        print!(
            "{}",
            agreement::render(&t.agreement, Some(MATCHED_THRESHOLD))
        );
        t.agreement
            .require(Some(MATCHED_THRESHOLD), args.allow_disagreement)?;
    }
    let lucene_version = lucene_probe.process.ready.version.clone();
    drop(lucene_probe);
    let heddle_built = |engine: &str| Figures {
        engine: engine.into(),
        build_secs: Some(heddle_stats.seconds),
        docs: Some(heddle_stats.docs),
        docs_per_sec: Some(heddle_stats.docs_per_sec),
        index_bytes: Some(heddle_stats.bytes),
        segments: Some(heddle_stats.segments),
        build_peak_rss_kib: heddle_stats.peak_rss_kib,
        ..Default::default()
    };
    let mut report = LuceneReport {
        analysis,
        analysis_label: label.to_string(),
        corpus: corpus.display().to_string(),
        queries: args.bench.queries.display().to_string(),
        lucene_version,
        k1: bm25.k1,
        b: bm25.b,
        warm_rule: rule,
        agreement,
        protocol_mismatches,
        lucene_build: lucene_build.clone(),
        engines: vec![
            heddle_built(HEDDLE),
            // The heddle child serves heddle's index: its build figures are heddle's, so
            // that the like-for-like column has them too.
            heddle_built(HEDDLE_CHILD),
            Figures {
                engine: LUCENE.into(),
                build_secs: Some(lucene_build.seconds),
                docs: Some(lucene_build.docs),
                docs_per_sec: Some(lucene_build.docs as f64 / lucene_build.seconds.max(1e-9)),
                index_bytes: Some(lucene_build.bytes),
                segments: Some(lucene_build.segments),
                build_peak_rss_kib: lucene_build.peak_rss_kib,
                ..Default::default()
            },
        ],
        per_query: None,
        per_query_protocol: None,
        tantivy_agreement: tantivy.as_ref().map(|t| t.agreement.clone()),
        per_query_tantivy: None,
        memory_rate: None,
        environment: None,
    };
    if let Some(t) = &tantivy {
        // Last, so that the children's figures keep their places (1 and 2).
        report.engines.push(Figures {
            engine: TANTIVY.into(),
            build_secs: Some(t.stats.seconds),
            docs: Some(t.stats.docs),
            docs_per_sec: Some(t.stats.docs_per_sec),
            index_bytes: Some(t.stats.bytes),
            segments: Some(t.stats.segments),
            build_peak_rss_kib: t.stats.peak_rss_kib,
            ..Default::default()
        });
    }
    if args.agreement_only {
        write_json(args, &report)?;
        return Ok(report);
    }

    // 3. Open times, engines alternating within each round.
    time_opens(args, &heddle_dir, &specs, tantivy.as_ref(), &mut report)?;

    // 4. The sequential pass, children warmed up by the rule first.
    let warm_factories: Vec<ChildFactory> = specs
        .iter()
        .map(|s| {
            let mut f = ChildFactory::new(s.clone());
            f.warm = Some((queries.clone(), args.bench.k, rule));
            f
        })
        .collect();
    let heddle_factory = HeddleAt::with_bm25(&heddle_dir, bm25);
    if args.sequential_samples > 0 {
        let heddle = heddle_factory.open(&heddle_dir)?;
        warm_up(&*heddle, &queries, queries.len() as u64, args.bench.k);
        // Started and warmed here rather than through the factory, so that each child's
        // own account of its searches (CPU, service time) can be read after the pass.
        let mut children: Vec<backend::ChildBackend> = Vec::new();
        for f in &warm_factories {
            let c = f.start()?;
            let w = backend::warm(&c, &f.spec.name, &queries, args.bench.k, &rule);
            f.warmed.lock().expect("poisoned").push(w);
            let _ = c.take_own_time();
            children.push(c);
        }
        let tantivy_backend = match &tantivy {
            Some(t) => {
                let b = t.factory.open(&t.dir)?;
                warm_up(&*b, &queries, queries.len() as u64, args.bench.k);
                Some(b)
            }
            None => None,
        };
        // In the order of `report.engines`.
        let mut engines: Vec<(&str, &dyn Backend)> = vec![
            (HEDDLE, &*heddle),
            (HEDDLE_CHILD, &children[0]),
            (LUCENE, &children[1]),
        ];
        if let Some(b) = &tantivy_backend {
            engines.push((TANTIVY, &**b));
        }
        let passes = passes_for(args.sequential_samples, queries.len());
        eprintln!(
            "lucene: sequential pass: {passes} passes of {} queries per engine, alternating",
            queries.len()
        );
        let reports = run_sequential(&engines, &queries, passes, args.bench.k);
        println!("{label}");
        println!("{}", heddle_eval::bench::sequential::render(&reports));
        let per_query = per_query_reports(&reports, &queries, passes, &heddle_dir)?;
        for r in [
            &per_query.like_for_like,
            &per_query.protocol,
            &per_query.tantivy,
        ]
        .into_iter()
        .flatten()
        {
            println!("{}", per_query::render(r));
        }
        report.per_query = per_query.like_for_like;
        report.per_query_protocol = per_query.protocol;
        report.per_query_tantivy = per_query.tantivy;
        for (f, s) in report.engines.iter_mut().zip(reports) {
            f.sequential = Some(s);
        }
        for (f, c) in report.engines[1..].iter_mut().zip(&children) {
            f.child_time = c.take_own_time();
        }
        drop(children);
    }

    // 5. The ladder: the instrument itself, the engines alternating rung by rung.
    let mut bench = args.bench.clone();
    bench.index = args.workdir.clone();
    bench.baseline.get_or_insert_with(|| LUCENE.to_string());
    bench
        .label
        .get_or_insert_with(|| format!("{label}, children over the line protocol"));
    bench.html = None;
    let mut factories: Vec<Box<dyn BackendFactory>> = vec![
        Box::new(heddle_factory.clone()),
        Box::new(warm_factories[0].clone()),
        Box::new(warm_factories[1].clone()),
    ];
    if let Some(t) = &tantivy {
        factories.push(Engine::Tantivy.factory(&t.dir, analysis));
    }
    let ladder = heddle_eval::bench::run(&bench, &factories)?;
    let held = holds(&ladder);
    for f in report.engines.iter_mut() {
        f.held = held.iter().find(|h| h.engine == f.engine).cloned();
    }
    for (i, wf) in warm_factories.iter().enumerate() {
        report.engines[i + 1].warm_up = wf.warmed.lock().expect("poisoned").clone();
    }

    // 6. Memory: each engine in a fresh process, one rung at the fastest clean rate.
    if args.memory_requests > 0 {
        let rate = crate::compare::memory_rate(&ladder);
        report.memory_rate = Some(rate);
        // The engines in this process, each measured in a process of its own.
        let in_process = std::iter::once((Engine::Heddle, HEDDLE, heddle_dir.clone())).chain(
            tantivy
                .as_ref()
                .map(|t| (Engine::Tantivy, TANTIVY, t.dir.clone())),
        );
        for (engine, name, dir) in in_process {
            eprintln!("lucene: {name}: memory rung at {rate}/s in a fresh process");
            let m = child::spawn_serve_rss(
                engine,
                &dir,
                analysis,
                &args.bench.queries,
                rate,
                args.memory_requests,
                ladder.settings.threads,
                ladder.settings.inflight,
                args.bench.k,
                args.bench.seed,
            )?;
            if let Some(f) = report.engines.iter_mut().find(|f| f.engine == name) {
                f.memory = Some(ChildRss {
                    vm_hwm_kib: m.vm_hwm_kib,
                    rss_anon_kib: m.rss_anon_peak_kib,
                    rss_file_kib: m.rss_file_peak_kib,
                    heap: None,
                });
            }
        }
        for (i, wf) in warm_factories.iter().enumerate() {
            eprintln!(
                "lucene: {}: memory rung at {rate}/s in a fresh process",
                wf.spec.name
            );
            let mut fresh = ChildFactory::new(wf.spec.clone());
            fresh.warm = wf.warm.clone();
            let backend = fresh.start()?;
            backend::warm(&backend, &wf.spec.name, &queries, args.bench.k, &rule);
            let settings = Settings {
                samples: args.memory_requests,
                ..ladder.settings.clone()
            };
            let spec = RungSpec {
                engine: &wf.spec.name,
                label: "memory rung",
                repetition: 0,
                rung: 0,
                rate,
                requests: args.memory_requests,
                seed: args.bench.seed,
                calibration: false,
            };
            let _ = run_rung(&backend, &spec, &settings, &queries);
            report.engines[i + 1].memory = Some(backend.memory());
        }
    }
    environment.finish();
    report.environment = Some(environment);
    println!();
    print!("{}", table::render(&report));
    write_json(args, &report)?;
    Ok(report)
}

/// --compare-json: the report as it stands (after --agreement-only, the agreement and
/// the builds).
fn write_json(args: &LuceneArgs, report: &LuceneReport) -> anyhow::Result<()> {
    if let Some(path) = &args.compare_json {
        std::fs::write(path, serde_json::to_string_pretty(report)?)
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("lucene: wrote {}", path.display());
    }
    Ok(())
}

/// heddle's index, built (in a fresh process) or reused exactly as `heddle-bench bench`
/// builds it in matched mode: one commit, its merge policy waited for. In matched mode it
/// is the very index `heddle-bench bench` uses; in native mode it is built with
/// `lucene-english` in a folder of its own.
fn heddle_index(
    args: &LuceneArgs,
    corpus: &Path,
    fingerprint: &CorpusFingerprint,
    threads: usize,
) -> anyhow::Result<(BuildStats, PathBuf)> {
    let options = BuildOptions::new(args.analysis, Peer::Lucene, threads, 0, 0);
    let slot = Slot::new(&args.workdir, args.analysis, Peer::Lucene, Engine::Heddle);
    let key = BuildKey::new(Engine::Heddle, fingerprint.clone(), options.clone());
    let stats = match slot.reusable(&key).filter(|_| !args.rebuild) {
        Some(r) => {
            eprintln!("lucene: heddle: reusing {}", slot.index_dir().display());
            r.stats
        }
        None => {
            slot.clear()?;
            eprintln!(
                "lucene: heddle: building {} in a fresh process",
                slot.index_dir().display()
            );
            let stats = child::spawn_build(Engine::Heddle, corpus, &slot.staging_dir(), &options)?;
            slot.commit(&BuildRecord {
                key,
                stats: stats.clone(),
                built_at_unix: SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
            })?;
            stats
        }
    };
    Ok((stats, slot.index_dir()))
}

/// The two children: heddle-child (sent the query text) and Lucene (in matched analysis
/// sent heddle's tokens of it, made in this process inside the timed call; in native
/// analysis sent the text, which it analyses itself).
fn child_specs(
    args: &LuceneArgs,
    heddle_dir: &Path,
    lucene_dir: &Path,
    threads: usize,
    bm25: Bm25Params,
    analyzer: &Arc<Analyzer>,
) -> anyhow::Result<Vec<ChildSpec>> {
    let heddle_child = heddle_child_exe()?;
    let hd = heddle_dir.to_path_buf();
    let java = args.java.clone();
    let ld = lucene_dir.to_path_buf();
    let analysis = args.analysis;
    Ok(vec![
        ChildSpec {
            name: HEDDLE_CHILD.into(),
            command: Arc::new(move || {
                let mut c = Command::new(&heddle_child);
                c.arg("--index")
                    .arg(&hd)
                    .arg("--threads")
                    .arg(threads.to_string())
                    .arg("--k1")
                    .arg(bm25.k1.to_string())
                    .arg("--b")
                    .arg(bm25.b.to_string());
                c
            }),
            query_form: QueryForm::Text,
            score_scale: 1.0,
            index: heddle_dir.to_path_buf(),
        },
        ChildSpec {
            name: LUCENE.into(),
            command: Arc::new(move || java.serve_command(&ld, analysis, threads, bm25.k1, bm25.b)),
            query_form: match analysis {
                Analysis::Matched => QueryForm::Tokens(analyzer.clone()),
                Analysis::Native => QueryForm::Text,
            },
            // Lucene's BM25 (since 8.0) leaves out heddle's constant factor k1 + 1.
            score_scale: bm25.k1 + 1.0,
            index: lucene_dir.to_path_buf(),
        },
    ])
}

/// `heddle-child`, beside this executable (cargo builds both into one directory).
pub fn heddle_child_exe() -> anyhow::Result<PathBuf> {
    let me = std::env::current_exe()?;
    let exe = me.with_file_name(format!("heddle-child{}", std::env::consts::EXE_SUFFIX));
    ensure!(
        exe.is_file(),
        "{} not found beside {} (cargo build --release in bench/ builds both)",
        exe.display(),
        me.display()
    );
    Ok(exe)
}

/// heddle (in-process) against Lucene on every query, and heddle-child against heddle
/// in-process (the protocol must change nothing).
fn check_agreement(
    args: &LuceneArgs,
    corpus: &Path,
    analyzer: &Analyzer,
    heddle: &HeddleScored,
    heddle_child: &backend::ChildBackend,
    lucene: &backend::ChildBackend,
) -> anyhow::Result<(AgreementReport, usize)> {
    let k = args.bench.k;
    let depth = args.agreement_depth.max(k);
    let queries = heddle_eval::formats::read_topics(&args.bench.queries)?;
    eprintln!(
        "lucene: agreement check: {} queries, top {k} (asked {depth} deep)",
        queries.len()
    );
    let mut results = Vec::with_capacity(queries.len());
    let mut mismatches = 0;
    for q in queries {
        let a = heddle.search_scored(&q.text, depth)?;
        let b = lucene.search_scored(&q.text, depth)?;
        let c = heddle_child.search_scored(&q.text, k)?;
        let top = |l: &[crate::engines::ScoredHit]| -> Vec<String> {
            l.iter().take(k).map(|h| h.id.clone()).collect()
        };
        if top(&a) != top(&c) {
            mismatches += 1;
        }
        results.push((q.id, q.text, a, b));
    }
    let mut report = agreement::report((HEDDLE, LUCENE), k, depth, results);
    // The reference BM25 scores one token stream for both engines: heddle's. In native
    // analysis that is lucene-english, written to match EnglishAnalyzer; where Lucene's
    // tokens differ from it on a query or a document involved, Lucene's score is not
    // reproduced and the query stays `differs` (the analysis's doing).
    if report.differs > 0 {
        explain(
            args.analysis,
            corpus,
            analyzer,
            heddle,
            lucene,
            &mut report,
            args.bench.k1,
            args.bench.b,
        )?;
    }
    Ok((report, mismatches))
}

/// Reclassifies a differing query as the length code's doing when the reference BM25
/// over heddle's tokens reproduces, for every document involved, heddle's score from the
/// exact length (with heddle's own N, document frequencies and total length) and
/// Lucene's from its one-byte norm (with Lucene's own statistics; its N is the documents
/// that hold a token). In matched analysis both engines hold heddle's tokens; in native
/// analysis a query is only explained where Lucene's analysis gave the same scores.
#[allow(clippy::too_many_arguments)]
fn explain(
    analysis: Analysis,
    corpus: &Path,
    analyzer: &Analyzer,
    heddle: &HeddleScored,
    lucene: &backend::ChildBackend,
    report: &mut AgreementReport,
    k1: f64,
    b: f64,
) -> anyhow::Result<()> {
    let differing: Vec<_> = report
        .per_query
        .iter()
        .filter(|q| q.class == Class::Differs)
        .collect();
    let ids: HashSet<String> = differing
        .iter()
        .flat_map(|q| q.docs.iter().map(|d| d.id.clone()))
        .collect();
    let mut terms: Vec<String> = differing
        .iter()
        .flat_map(|q| reference::query_terms(analyzer, &q.query).into_keys())
        .collect();
    terms.sort();
    terms.dedup();
    eprintln!(
        "lucene: {} queries differ beyond ties; re-scoring their {} documents with the reference BM25",
        differing.len(),
        ids.len()
    );
    let docs = reference::read_docs(corpus, &ids, analyzer)?;
    let ls = lucene.process.stats(&terms)?;
    let heddle_df = terms
        .iter()
        .map(|t| Ok((t.clone(), heddle.doc_freq(t)?)))
        .collect::<anyhow::Result<_>>()?;
    let heddle_stats = reference::CollectionStats {
        docs: heddle.num_docs(),
        // The same tokens in matched analysis; in native analysis heddle's own, counted
        // (heddle does not publish its total length).
        total_tokens: match analysis {
            Analysis::Matched => ls.total_tokens,
            Analysis::Native => reference::total_tokens(corpus, analyzer)?,
        },
        df: heddle_df,
    };
    let lucene_stats = reference::CollectionStats {
        docs: ls.doc_count,
        total_tokens: ls.total_tokens,
        df: terms.iter().cloned().zip(ls.df.iter().copied()).collect(),
    };
    let params = reference::Params { k1, b };
    let close = |got: Option<f64>, want: f64, tol: f64| {
        got.is_some_and(|g| (g - want).abs() <= tol * want.abs().max(1e-12))
    };
    agreement::explain(report, |q| {
        let query = reference::query_terms(analyzer, &q.query);
        q.docs.iter().all(|d| {
            let Some(t) = docs.get(&d.id) else {
                return false;
            };
            close(
                d.score_a,
                reference::score_exact_with(&params, &heddle_stats, &query, t),
                1e-9,
            ) && close(
                d.score_b,
                (k1 + 1.0) * reference::score_lucene(&params, &lucene_stats, &query, t),
                1e-5,
            )
        })
    });
    Ok(())
}

/// Each engine's open time: alternating starts, the clock stopped when it can answer.
fn time_opens(
    args: &LuceneArgs,
    heddle_dir: &Path,
    specs: &[ChildSpec],
    tantivy: Option<&TantivyPeer>,
    report: &mut LuceneReport,
) -> anyhow::Result<()> {
    let mut total: Vec<Vec<f64>> = vec![Vec::new(); report.engines.len()];
    let mut own: Vec<Vec<f64>> = vec![Vec::new(); report.engines.len()];
    for round in 0..args.open_rounds.max(1) {
        let t = Instant::now();
        let index = heddle::Index::open(heddle_dir)?;
        let s = t.elapsed().as_secs_f64();
        drop(index);
        total[0].push(s);
        own[0].push(s);
        for (i, spec) in specs.iter().enumerate() {
            let b = ChildFactory::new(spec.clone()).start()?;
            total[i + 1].push(b.process.started_in.as_secs_f64());
            own[i + 1].push(b.process.ready.open_ns as f64 / 1e9);
        }
        if let Some(t) = tantivy {
            // In process, as heddle: the open is the engine's own.
            let start = Instant::now();
            let backend = t.factory.open(&t.dir)?;
            let s = start.elapsed().as_secs_f64();
            drop(backend);
            total[3].push(s);
            own[3].push(s);
        }
        eprintln!(
            "lucene: open round {}/{}",
            round + 1,
            args.open_rounds.max(1)
        );
    }
    for (i, f) in report.engines.iter_mut().enumerate() {
        f.open_secs = spread(&total[i]);
        f.open_engine_secs = spread(&own[i]);
    }
    Ok(())
}

/// The sequential pass query by query and per class.
#[derive(Default)]
struct PerQueryReports {
    /// heddle-child against lucene.
    like_for_like: Option<PerQueryReport>,
    /// heddle in-process against heddle-child.
    protocol: Option<PerQueryReport>,
    /// heddle in-process against tantivy (with --tantivy).
    tantivy: Option<PerQueryReport>,
}

/// heddle-child against lucene (the like-for-like), heddle against heddle-child (the
/// protocol) and heddle against tantivy where it ran, query by query and per class;
/// classes from heddle's index.
fn per_query_reports(
    reports: &[SequentialReport],
    queries: &QueryCycle,
    passes: u64,
    heddle_dir: &Path,
) -> anyhow::Result<PerQueryReports> {
    let find = |n: &str| reports.iter().find(|r| r.engine == n);
    let (Some(h), Some(c), Some(l)) = (find(HEDDLE), find(HEDDLE_CHILD), find(LUCENE)) else {
        return Ok(PerQueryReports::default());
    };
    let index = heddle::Index::open(heddle_dir)?;
    let searcher = index.searcher();
    let analyzer = index.analyzer();
    let docs = searcher.num_docs().max(1) as f64;
    let texts: Vec<String> = (0..queries.len() as u64)
        .map(|i| queries.get(i).to_string())
        .collect();
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
    let like = per_query::report(
        &[HEDDLE_CHILD, LUCENE],
        passes,
        &texts,
        &[&c.per_query_median_us, &l.per_query_median_us],
        &shares,
    );
    let protocol = per_query::report(
        &[HEDDLE, HEDDLE_CHILD],
        passes,
        &texts,
        &[&h.per_query_median_us, &c.per_query_median_us],
        &shares,
    );
    let tantivy = find(TANTIVY).and_then(|t| {
        per_query::report(
            &[HEDDLE, TANTIVY],
            passes,
            &texts,
            &[&h.per_query_median_us, &t.per_query_median_us],
            &shares,
        )
    });
    Ok(PerQueryReports {
        like_for_like: like,
        protocol,
        tantivy,
    })
}

/// tantivy beside the Lucene comparison (--tantivy): its index and its agreement with
/// heddle, both exactly as `heddle-bench bench` makes them.
struct TantivyPeer {
    stats: BuildStats,
    dir: PathBuf,
    factory: Box<dyn BackendFactory>,
    agreement: AgreementReport,
}

impl TantivyPeer {
    /// Refuses settings tantivy cannot run with, before any index is built.
    fn check(args: &LuceneArgs) -> anyhow::Result<()> {
        ensure!(
            args.analysis == Analysis::Matched,
            "--tantivy runs with matched analysis only: natively, heddle's analyzer differs by peer"
        );
        compare::tantivy_bm25(&args.as_tantivy_comparison())
    }

    /// Builds or reuses tantivy's index (and heddle's, which `bench` shares with this
    /// comparison in matched analysis) and checks the two engines' answers.
    fn prepare(args: &LuceneArgs, corpus: &Path) -> anyhow::Result<Self> {
        let settings = args.as_tantivy_comparison();
        let built = compare::indexes(&settings, &[Engine::Heddle, Engine::Tantivy], corpus)?;
        let agreement = compare::check_agreement(&settings, &built)?;
        let (_, stats, _, dir) = built
            .into_iter()
            .find(|(engine, ..)| *engine == Engine::Tantivy)
            .context("tantivy's index was not built")?;
        Ok(TantivyPeer {
            stats,
            factory: Engine::Tantivy.factory(&dir, Analysis::Matched),
            dir,
            agreement,
        })
    }
}

impl LuceneArgs {
    /// The settings `heddle-bench bench` would run the heddle–tantivy comparison with,
    /// from this comparison's: the same corpus, working directory, threads and queries;
    /// tantivy's segments matched to heddle's and its indexing memory at `bench`'s default.
    fn as_tantivy_comparison(&self) -> CompareArgs {
        CompareArgs {
            corpus: self.corpus.clone(),
            workdir: self.workdir.clone(),
            analysis: self.analysis,
            rebuild: self.rebuild,
            index_threads: self.index_threads,
            tantivy_memory_mib: compare::TANTIVY_MEMORY_MIB,
            memory_mib: None,
            segments: SegmentTarget::Matched,
            sequential_samples: self.sequential_samples,
            open_rounds: self.open_rounds,
            open_only: false,
            agreement_depth: self.agreement_depth,
            allow_disagreement: self.allow_disagreement,
            memory_requests: self.memory_requests,
            compare_json: None,
            bench: self.bench.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: LuceneArgs,
    }

    fn parse(extra: &[&str]) -> Result<LuceneArgs, clap::Error> {
        let mut argv = vec![
            "t",
            "--corpus",
            "c",
            "--queries",
            "q",
            "--lucene-classpath",
            "x.jar",
            // The instrument's flag, which main() refuses when given (its default is ".").
            "--index",
            ".",
        ];
        argv.extend(extra);
        Wrapper::try_parse_from(argv).map(|w| w.args)
    }

    #[test]
    fn tantivy_refuses_native_analysis_and_other_bm25_before_building_anything() {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("corpus.jsonl");
        std::fs::write(&corpus, "{\"_id\": \"1\", \"text\": \"a\"}\n").unwrap();
        let workdir = dir.path().join("work");
        for (extra, names) in [
            (&["--analysis", "native"][..], "matched analysis only"),
            (&["--k1", "0.9"][..], "tantivy's BM25 is fixed"),
        ] {
            let mut argv = vec!["--tantivy"];
            argv.extend(extra);
            let mut args = parse(&argv).unwrap();
            args.corpus = corpus.clone();
            args.workdir = workdir.clone();
            let error = run(&args).unwrap_err().to_string();
            assert!(error.contains(names), "{extra:?}: {error}");
            assert!(!workdir.exists(), "{extra:?}: built before refusing");
        }
    }

    #[test]
    fn analysis_is_matched_unless_native_is_asked_for() {
        assert_eq!(parse(&[]).unwrap().analysis, Analysis::Matched);
        let native = parse(&["--analysis", "native", "--agreement-only"]).unwrap();
        assert_eq!(native.analysis, Analysis::Native);
        assert!(native.agreement_only);
        assert!(parse(&["--analysis", "lucene"]).is_err());
    }
}
