//! The writes arm (`bench --writes`): what a commit costs the reads that arrive while it
//! runs. Each trial copies the index to a fresh directory, opens and warms the copy,
//! reads it open loop at one fixed rate, and a third of the way through has a writer
//! thread add a batch and commit; reads due during the write are reported apart from
//! the rest. The source index is fingerprinted before and after and must not change.
//!
//! Flow: [`scratch`] (copy, fingerprint) → [`batches`] (the documents written) →
//! [`trial`] (reads + writer, split by due time) → [`summary`] (over repetitions) →
//! [`table`] (stdout), the JSON ([`model::WritesReport`]), the plot ([`svg`], `--svg`) and
//! the HTML report (`--html`, [`crate::html`]). The rules are in
//! docs/PERF.md, "The writes arm".

pub mod batches;
pub mod model;
pub mod scratch;
pub mod summary;
pub mod svg;
pub mod table;
mod target;
pub mod trial;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use self::batches::WriteSource;
use self::scratch::{Fingerprint, ScratchCopy, SourceCheck};
use self::trial::{TrialSpec, batches_needed, first_write_ns, run_trial};
use super::backend::{Backend, BackendFactory, WriteOptions};
use super::cli::{BenchArgs, select, settings};
use super::ladder::{calibrate, requests_for, round_rate, warm_up};
use super::queries::QueryCycle;
use super::report::{Calibration, Settings};
use crate::serve::{HttpFactory, Target};

pub use self::model::*;
pub use self::target::TARGET_ID_PREFIX;

/// The read rate when none is named: this fraction of the smallest capacity measured.
/// A quarter leaves the engine room for a commit's threads without queueing reads
/// before the commit starts, so that what changes during it is the commit's doing.
pub const RATE_FRACTION: f64 = 0.25;

/// Runs the writes arm with the engines of `args.engines` (default: all of `engines`):
/// every repetition, every `--commit-threads` value, every engine in turn. Prints the
/// table on stdout, writes the JSON if asked, and fails if a source index changed.
pub fn run(args: &BenchArgs, engines: &[Box<dyn BackendFactory>]) -> anyhow::Result<WritesReport> {
    check_flags(args)?;
    for (p, flag) in [
        (&args.json, "--json"),
        (&args.svg, "--svg"),
        (&args.html, "--html"),
    ] {
        if let Some(p) = p {
            crate::output::check_file(p, flag)?;
        }
    }
    let queries = QueryCycle::load(&args.queries, args.seed)?;
    let settings = settings(args, queries.len())?;
    // Over HTTP the one engine is the target's server, written in place.
    let http = match &args.target {
        Some(url) => Some(HttpFactory {
            target: Target::parse(url)?,
            field: args.target_field.clone(),
            pool: settings.inflight,
        }),
        None => None,
    };
    let chosen: Vec<&dyn BackendFactory> = match &http {
        Some(f) => vec![f],
        None => select(engines, &args.engines)?,
    };
    let commit_threads = match http {
        Some(_) => vec![0], // the server's own
        None => commit_threads(args, settings.cores),
    };
    let scratch = args.scratch.clone().unwrap_or_else(default_scratch);
    let mut environment = if http.is_some() {
        crate::env::Environment::capture(&scratch)
    } else {
        std::fs::create_dir_all(&scratch)
            .with_context(|| format!("creating the scratch directory {}", scratch.display()))?;
        // The copies are made in `scratch`: its filesystem is where commits are written.
        crate::env::Environment::capture(&scratch.join("copy"))
    };

    let mut sources: Vec<SourceCheck> = Vec::new();
    for f in chosen.iter().filter(|_| http.is_none()) {
        let dir = f.source_dir(&args.index);
        let shown = dir.display().to_string();
        if sources.iter().any(|s| s.dir == shown) {
            continue;
        }
        let before = Fingerprint::of(&dir)
            .with_context(|| format!("fingerprinting the source index {shown}"))?;
        crate::note!(
            "bench: source {shown}: {} files, {} bytes, hash {:016x}",
            before.files,
            before.bytes,
            before.hash
        );
        sources.push(SourceCheck {
            dir: shown,
            before,
            after: None,
        });
    }
    let warm_n = args.warmup.unwrap_or(queries.len().min(2_000) as u64);

    let (rate, rate_rule, capacity, calibrations) = match args.rate {
        Some(r) => (r, "named".to_string(), None, Vec::new()),
        None => {
            let calibrations = match &http {
                Some(f) => vec![target::calibrate(f, args, &settings, &queries, warm_n)?],
                None => calibrate_all(args, &chosen, &settings, &queries, &scratch, warm_n)?,
            };
            let capacity = calibrations
                .iter()
                .map(|c| c.capacity_per_sec)
                .fold(f64::INFINITY, f64::min);
            (
                round_rate(RATE_FRACTION * capacity),
                "quarter-capacity".to_string(),
                Some(capacity),
                calibrations,
            )
        }
    };
    let requests = requests_for(rate, settings.samples, settings.min_duration_secs);
    let every = args.commit_every.map(Duration::from_secs_f64);
    let spec_for = |repetition: usize| TrialSpec {
        engine: "",
        label: "",
        rate,
        requests,
        seed: trial_seed(&settings, repetition),
        commit_every: every,
    };
    let needed = (0..settings.repeat)
        .map(|rep| batches_needed(&spec_for(rep).schedule(&settings), every))
        .max()
        .unwrap_or(1);
    let source = match &args.write_corpus {
        Some(path) => WriteSource::Corpus(path.clone()),
        None => WriteSource::Generated {
            seed: settings.seed ^ 0x5752_4954_4553, // "WRITES": not the corpus's seed
        },
    };
    crate::note!(
        "bench: preparing {needed} batch(es) of {} documents: {}",
        args.write_docs,
        source.describe()
    );
    if http.is_some() {
        // The arm's checks search for the written documents: every batch at the end, in
        // one search, which a server answers only up to its result window.
        ensure!(
            needed * args.write_docs < crate::serve::MAX_RESULT_WINDOW as usize,
            "--writes --target: {needed} batches of {} documents, and servers answer at \
             most {} hits to the search that checks them all at the end; give fewer \
             --write-docs or a longer --commit-every",
            args.write_docs,
            crate::serve::MAX_RESULT_WINDOW
        );
    }
    let mut batches = batches::load(&source, args.write_docs, needed)?;
    if http.is_some() {
        target::prefix_ids(&mut batches);
    }
    let schedule0 = spec_for(0).schedule(&settings);
    let write_settings = WriteSettings {
        rate,
        rate_rule,
        capacity_per_sec: capacity,
        requests,
        schedule_secs: schedule0.due_ns().last().copied().unwrap_or(0) as f64 / 1e9,
        first_write_secs: first_write_ns(&schedule0) as f64 / 1e9,
        docs_per_commit: args.write_docs,
        source: source.describe(),
        batches: batches.len(),
        commit_every_secs: args.commit_every,
        commit_threads: commit_threads.clone(),
        scratch: match &http {
            Some(f) => f.target.url(),
            None => scratch.display().to_string(),
        },
    };

    // On disk after every trial, so that an interrupted run leaves every finished one.
    let partial = |trials: &[TrialReport]| -> anyhow::Result<()> {
        let Some(path) = &args.json else {
            return Ok(());
        };
        let mut env = environment.clone();
        env.finish();
        let report = WritesReport {
            format: WRITES_FORMAT,
            tool: "heddle-eval bench --writes".to_string(),
            mode: "open-loop writes".to_string(),
            settings: settings.clone(),
            writes: write_settings.clone(),
            calibrations: calibrations.clone(),
            sources: sources.clone(),
            summary: summary::summarise(trials),
            trials: trials.to_vec(),
            environment: Some(env),
            complete: false,
        };
        write_json(&report, path)
    };
    let mut trials = Vec::new();
    partial(&trials)?;
    for repetition in 0..settings.repeat {
        for &threads in &commit_threads {
            for factory in &chosen {
                let label = format!(
                    "writes {threads} commit thread{} rep {}/{}",
                    if threads == 1 { "" } else { "s" },
                    repetition + 1,
                    settings.repeat
                );
                let spec = TrialSpec {
                    engine: factory.name(),
                    label: &label,
                    ..spec_for(repetition)
                };
                let mut report = match &http {
                    Some(f) => target::trial(f, &spec, &settings, &queries, &batches, warm_n)?,
                    None => trial(
                        *factory, args, &spec, &settings, &queries, &batches, &scratch, warm_n,
                        threads,
                    )?,
                };
                report.repetition = repetition;
                report.sequence = trials.len();
                trials.push(report);
                partial(&trials)?;
            }
        }
    }

    for s in &mut sources {
        s.after = Some(Fingerprint::of(std::path::Path::new(&s.dir))?);
    }
    environment.finish();
    let report = WritesReport {
        format: WRITES_FORMAT,
        tool: "heddle-eval bench --writes".to_string(),
        mode: "open-loop writes".to_string(),
        settings,
        writes: write_settings,
        calibrations,
        sources,
        summary: summary::summarise(&trials),
        trials,
        environment: Some(environment),
        complete: true,
    };
    let width = match args.wide {
        true => crate::bench::report::Width::Wide,
        false => crate::bench::report::Width::Narrow,
    };
    // The files before the table: a standard output that cannot be written must not
    // lose the measurement.
    let text = table::render_as(&report, width);
    if let Some(path) = &args.json {
        write_json(&report, path)?;
        crate::note!("bench: wrote {}", path.display());
    }
    if let Some(path) = &args.svg {
        crate::bench::report::write_svg(&svg::render_svg(&report), path)?;
        crate::note!("bench: wrote {}", path.display());
    }
    if let Some(path) = &args.html {
        crate::html::writes_page(&report, &text).write(path)?;
        crate::note!("bench: wrote {}", path.display());
    }
    crate::out!("{text}");
    if let Some(changed) = report.sources.iter().find(|s| !s.identical()) {
        bail!(
            "the source index {} CHANGED during the writes arm (it must never be written)",
            changed.dir
        );
    }
    Ok(report)
}

fn check_flags(args: &BenchArgs) -> anyhow::Result<()> {
    ensure!(args.writes, "the writes arm runs with --writes");
    if args.target.is_some() {
        ensure!(
            args.writes_to_target,
            "--writes --target: the writes arm would write into the target's own index \
             (a server's index cannot be copied): each trial posts its batches to the \
             target's _bulk and deletes them at its end. If that is what you want, add \
             --writes-to-target"
        );
        ensure!(
            args.commit_threads.is_empty() && args.scratch.is_none(),
            "--commit-threads and --scratch belong to the writes arm in this process; a \
             server commits with its own threads, in its own index"
        );
        ensure!(
            args.write_docs < crate::serve::MAX_RESULT_WINDOW as usize,
            "--write-docs {} with --target: each commit is checked visible by one search \
             for its documents, and servers answer at most {} hits (Elasticsearch's \
             max_result_window); give --write-docs 5000 or so (a _bulk body must also \
             fit the server's limit: `serve --max-body`, 10 MiB by default)",
            args.write_docs,
            crate::serve::MAX_RESULT_WINDOW
        );
    }
    ensure!(
        args.rates.is_empty() && args.fractions.is_empty(),
        "--rates and --fractions shape the ladder; the writes arm reads at one --rate"
    );
    ensure!(
        args.baseline.is_none(),
        "--baseline belongs to the ladder, not the writes arm"
    );
    if let Some(r) = args.rate {
        ensure!(
            r.is_finite() && r > 0.0,
            "--rate: {r} is not a positive rate"
        );
    }
    if let Some(e) = args.commit_every {
        ensure!(
            e.is_finite() && e > 0.0,
            "--commit-every: {e} is not a positive number of seconds"
        );
    }
    ensure!(args.write_docs >= 1, "--write-docs must be at least 1");
    ensure!(
        args.commit_threads.iter().all(|&t| t >= 1),
        "--commit-threads must be at least 1"
    );
    Ok(())
}

/// `--commit-threads`, or 1 and the number of cores.
fn commit_threads(args: &BenchArgs, cores: usize) -> Vec<usize> {
    let mut v = if args.commit_threads.is_empty() {
        vec![1, cores.max(1)]
    } else {
        args.commit_threads.clone()
    };
    let mut seen = Vec::new();
    v.retain(|t| {
        let new = !seen.contains(t);
        seen.push(*t);
        new
    });
    v
}

/// The same arrivals for every engine and thread count of a repetition, new ones for
/// each repetition (as the ladder seeds its rungs).
fn trial_seed(settings: &Settings, repetition: usize) -> u64 {
    settings.seed ^ ((repetition as u64) << 32) ^ 0x7772
}

/// Each engine's capacity, measured as the ladder measures it (docs/PERF.md, "The
/// ladder"), on a copy of its index opened for reading only.
fn calibrate_all(
    args: &BenchArgs,
    chosen: &[&dyn BackendFactory],
    settings: &Settings,
    queries: &QueryCycle,
    scratch: &std::path::Path,
    warm_n: u64,
) -> anyhow::Result<Vec<Calibration>> {
    let mut out = Vec::new();
    for factory in chosen {
        let copy = ScratchCopy::of(&factory.source_dir(&args.index), scratch)?;
        let backend = factory.open(copy.dir()).with_context(|| {
            format!(
                "opening the copy {} for {}",
                copy.dir().display(),
                factory.name()
            )
        })?;
        crate::note!(
            "bench: {}: warm-up for calibration, {warm_n} queries",
            factory.name()
        );
        let w = warm_up(&*backend, queries, warm_n, settings.k);
        let hint = w.latency_us.mean.unwrap_or(1_000.0);
        out.push(calibrate(
            &*backend,
            factory.name(),
            hint,
            args.calibration_samples,
            settings,
            queries,
        )?);
        drop(backend);
        drop(copy);
    }
    Ok(out)
}

/// One trial: a fresh copy, opened for writes with `threads` build threads, warmed, run,
/// then closed and removed.
#[allow(clippy::too_many_arguments)]
fn trial(
    factory: &dyn BackendFactory,
    args: &BenchArgs,
    spec: &TrialSpec<'_>,
    settings: &Settings,
    queries: &QueryCycle,
    batches: &[batches::Batch],
    scratch: &std::path::Path,
    warm_n: u64,
    threads: usize,
) -> anyhow::Result<TrialReport> {
    let copy = ScratchCopy::of(&factory.source_dir(&args.index), scratch)?;
    crate::note!(
        "bench: {} {}: copied {} bytes to {} in {:.2} s",
        spec.engine,
        spec.label,
        copy.bytes,
        copy.dir().display(),
        copy.secs
    );
    let opened = Instant::now();
    let backend: Arc<dyn Backend> = factory
        .open_for_writes(copy.dir(), &WriteOptions { threads })
        .with_context(|| {
            format!(
                "opening the copy {} for writes with {}",
                copy.dir().display(),
                factory.name()
            )
        })?;
    let open_secs = opened.elapsed().as_secs_f64();
    let warmup = warm_up(&*backend, queries, warm_n, settings.k);
    ensure!(
        warm_n == 0 || warmup.errors < warm_n,
        "{}: every warm-up query failed on the copy of {}: {}",
        spec.engine,
        args.index.display(),
        crate::bench::ladder::first_error(&*backend, queries, settings.k)
    );
    let run = run_trial(&*backend, spec, settings, queries, batches);
    drop(backend);
    let (copy_bytes, copy_secs) = (copy.bytes, copy.secs);
    drop(copy);
    Ok(trial_report(
        spec, run, warmup, threads, copy_bytes, copy_secs, open_secs,
    ))
}

/// A trial's report: its run judged (a failed writer or read, a commit not visible when
/// it returned, a suspend make it invalid).
fn trial_report(
    spec: &TrialSpec<'_>,
    run: TrialRun,
    warmup: crate::bench::report::WarmupReport,
    threads: usize,
    copy_bytes: u64,
    copy_secs: f64,
    open_secs: f64,
) -> TrialReport {
    let mut invalid_reasons = Vec::new();
    if let Some(e) = &run.writer_error {
        invalid_reasons.push(format!("the writer failed: {e}"));
    }
    let read_errors = run.in_commit.errors + run.outside.errors;
    if read_errors > 0 {
        invalid_reasons.push(format!(
            "{read_errors} reads failed (first: {})",
            run.first_read_error.as_deref().unwrap_or("?")
        ));
    }
    if let Some(c) = run.commits.iter().find(|c| !c.visible) {
        invalid_reasons.push(format!(
            "commit {} was not visible when it returned ({} hits for {} documents)",
            c.batch + 1,
            c.visible_hits,
            c.docs
        ));
    }
    if !run.all_visible_at_end {
        invalid_reasons.push("not every written document was found at the end".to_string());
    }
    if let Some(s) = run
        .suspended_secs
        .filter(|&s| s > super::probe::SuspendClock::THRESHOLD.as_secs_f64())
    {
        invalid_reasons.push(format!("machine suspended for {s:.1} s"));
    }
    TrialReport {
        engine: spec.engine.to_string(),
        repetition: 0,
        commit_threads: threads,
        sequence: 0,
        copy_bytes,
        copy_secs,
        open_secs,
        warmup,
        rate: spec.rate,
        run,
        valid: invalid_reasons.is_empty(),
        invalid_reasons,
    }
}

/// Where a writes run keeps its copies when `--scratch` is not given.
pub fn default_scratch() -> PathBuf {
    std::env::temp_dir()
}

/// Writes the whole report as JSON, replacing the file atomically (a temporary file
/// beside it, then a rename). Its directory must exist ([`crate::output`]).
pub fn write_json(report: &WritesReport, path: &std::path::Path) -> anyhow::Result<()> {
    let mut text = serde_json::to_string(report)?;
    text.push('\n');
    let tmp = path.with_file_name(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map_or("writes".into(), |n| n.to_string_lossy()),
        std::process::id()
    ));
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("replacing {}", path.display()))
}

/// Reads a report written by [`write_json`].
pub fn read_json(path: &std::path::Path) -> anyhow::Result<WritesReport> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}
