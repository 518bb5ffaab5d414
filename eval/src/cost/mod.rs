//! `heddle-eval cost`: a fixed query set on a fixed index, counted instruction by
//! instruction under valgrind's callgrind: instructions and simulated cache misses per
//! query, per query class and in total. Unlike a time, the count does not depend on the
//! machine's other tenants, so two builds compared this way give a change that a busy
//! 2-core VM cannot blur (docs/PERF.md, "Instructions per query").
//!
//! Flow: [`measure`] runs a build's own binary as `BIN cost --probe …` under
//! [`callgrind`] — the [`probe`] writes its plan (queries and their classes), warms up,
//! then runs each query once through the one function callgrind collects in — and
//! [`report`] puts the plan and callgrind's per-query parts together. The set is
//! chosen here, not by the probe ([`probe::query_set`]), and may be split into `--jobs`
//! parts counted at once, each by its own valgrind (callgrind runs one thread at a time,
//! so one process uses one core); by default it is one part, as the counts depend on the
//! split (docs/PERF.md, "Instructions per query"). With
//! `--candidate`, the baseline is counted twice (A, B, A): the second A is the floor.

pub mod callgrind;
pub mod probe;
pub mod report;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, ensure};
use clap::Args;
use serde::{Deserialize, Serialize};

use self::report::{COST_FORMAT, ClassChange, CostReport};
use crate::bench::probe::Rusage;

/// `heddle-eval cost`.
#[derive(Debug, Clone, Args)]
pub struct CostArgs {
    /// The index the queries run on.
    #[arg(long, value_name = "DIR")]
    pub index: PathBuf,

    /// The queries: BEIR queries.jsonl or a TREC topics file; the first --count of them
    /// in the file's order (cycling if it holds fewer).
    #[arg(long, value_name = "FILE")]
    pub queries: PathBuf,

    /// Queries counted, each once.
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    pub count: usize,

    /// Queries run before counting starts (the first of each part; not counted).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub warmup: usize,

    /// Parts of the query set counted at the same time, each by its own valgrind
    /// process. Each part plans, warms up and first reads the index on its own, so the
    /// counts depend on the split (on the synthetic set, 2 parts counted 0.3% more
    /// instructions than 1, and 4.4% more for its all-rare queries): builds compared must
    /// be counted with the same --jobs, and figures quoted say it.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_JOBS)]
    pub jobs: usize,

    /// Hits per query.
    #[arg(long, value_name = "K", default_value_t = 10)]
    pub k: usize,

    /// The build counted: a `heddle-eval` binary or a git revision of --repo [default:
    /// this binary].
    #[arg(long, value_name = "REV|BINARY")]
    pub baseline: Option<String>,

    /// A second build: counted between two runs of the baseline (A B A), class by class
    /// against it, the two baseline runs giving the floor.
    #[arg(long, value_name = "REV|BINARY")]
    pub candidate: Option<String>,

    /// The git repository revisions are taken from.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,

    /// Where revisions are built [default: REPO/target/ab].
    #[arg(long, value_name = "DIR")]
    pub build_dir: Option<PathBuf>,

    /// The valgrind to run [default: `valgrind` on the PATH].
    #[arg(long, value_name = "PATH")]
    pub valgrind: Option<PathBuf>,

    /// Writes the report (or the comparison) as JSON here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Internal: run the query loop itself (what runs under callgrind).
    #[arg(long, hide = true, requires = "plan")]
    pub probe: bool,

    /// Internal: where the probe writes its plan.
    #[arg(long, hide = true, value_name = "FILE")]
    pub plan: Option<PathBuf>,
}

/// How many valgrind processes count a query set at once, unless told otherwise: one, on
/// any machine, so that figures compare with every earlier one (see `--jobs`).
pub const DEFAULT_JOBS: usize = 1;

fn default_jobs() -> usize {
    DEFAULT_JOBS
}

/// What [`measure`] counts: the same for every build of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostSpec {
    pub index: PathBuf,
    pub queries: PathBuf,
    pub count: usize,
    pub warmup: usize,
    pub k: usize,
    /// Parts counted at once (see `--jobs`).
    #[serde(default = "default_jobs")]
    pub jobs: usize,
}

/// The query set's parts: `jobs` contiguous runs (fewer if there are fewer queries),
/// their lengths differing by at most one.
pub fn split(queries: usize, jobs: usize) -> Vec<std::ops::Range<usize>> {
    let parts = jobs.clamp(1, queries.max(1));
    let (base, extra) = (queries / parts, queries % parts);
    let mut start = 0;
    (0..parts)
        .map(|i| {
            let len = base + usize::from(i < extra);
            let r = start..start + len;
            start += len;
            r
        })
        .filter(|r| !r.is_empty())
        .collect()
}

/// One part's files.
struct Part {
    args: Vec<String>,
    out: PathBuf,
    plan: PathBuf,
    log: PathBuf,
}

/// Counts `binary`'s query loop under callgrind, its files in `workdir` (named by
/// `tag`): the set [`probe::query_set`] picks, split into `spec.jobs` parts, each part
/// written to a query file of its own and counted by its own valgrind, all at once. The
/// probe takes every query of the file it is given, so a build from before the split
/// counts the same queries.
pub fn measure(
    valgrind: &Path,
    binary: &Path,
    spec: &CostSpec,
    workdir: &Path,
    tag: &str,
) -> anyhow::Result<CostReport> {
    ensure!(spec.count >= 1, "--count must be at least 1");
    ensure!(spec.jobs >= 1, "--jobs must be at least 1");
    std::fs::create_dir_all(workdir).with_context(|| format!("creating {}", workdir.display()))?;
    let set = probe::query_set(&spec.queries, spec.count)?;
    let mut parts = Vec::new();
    for (i, range) in split(set.len(), spec.jobs).into_iter().enumerate() {
        let name = format!("{tag}-{}", i + 1);
        let queries = workdir.join(format!("queries-{name}.jsonl"));
        let mut text = String::new();
        for (n, q) in set[range.clone()].iter().enumerate() {
            let line = serde_json::json!({"_id": (range.start + n + 1).to_string(), "text": q});
            text.push_str(&line.to_string());
            text.push('\n');
        }
        std::fs::write(&queries, text).with_context(|| format!("writing {}", queries.display()))?;
        let out = workdir.join(format!("callgrind-{name}.out"));
        let _ = std::fs::remove_file(&out);
        let plan = workdir.join(format!("plan-{name}.json"));
        let args: Vec<String> = vec![
            "cost".into(),
            "--probe".into(),
            "--plan".into(),
            plan.display().to_string(),
            "--index".into(),
            spec.index.display().to_string(),
            "--queries".into(),
            queries.display().to_string(),
            "--count".into(),
            range.len().to_string(),
            "--warmup".into(),
            spec.warmup.to_string(),
            "--k".into(),
            spec.k.to_string(),
        ];
        let log = workdir.join(format!("callgrind-{name}.log"));
        parts.push(Part {
            args,
            out,
            plan,
            log,
        });
    }
    let started = Instant::now();
    let cpu_before = Rusage::children();
    let ran: Vec<anyhow::Result<()>> = std::thread::scope(|s| {
        let running: Vec<_> = parts
            .iter()
            .map(|p| s.spawn(|| callgrind::run(valgrind, binary, &p.args, &p.out, &p.log)))
            .collect();
        running
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a callgrind run's thread panicked")))
            })
            .collect()
    });
    let wall_secs = started.elapsed().as_secs_f64();
    let cpu = Rusage::children().since(&cpu_before);
    ran.into_iter().collect::<anyhow::Result<Vec<()>>>()?;
    let (mut per_query, mut outside) = (Vec::with_capacity(set.len()), 0);
    for p in &parts {
        let source = p.out.display().to_string();
        let text = std::fs::read_to_string(&p.out).with_context(|| format!("reading {source}"))?;
        let parsed = callgrind::parse(&text, &source)?;
        let plan_text = std::fs::read_to_string(&p.plan)
            .with_context(|| format!("reading {}", p.plan.display()))?;
        let plan: Vec<probe::Planned> = serde_json::from_str(&plan_text)
            .with_context(|| format!("{}: not a cost plan", p.plan.display()))?;
        let (rows, out) = report::per_query(&plan, &parsed, &source)?;
        per_query.extend(rows);
        outside += out;
    }
    Ok(CostReport {
        format: COST_FORMAT,
        tool: format!("heddle-eval cost {}", env!("CARGO_PKG_VERSION")),
        binary: binary.display().to_string(),
        index: spec.index.display().to_string(),
        queries: spec.queries.display().to_string(),
        k: spec.k,
        warmup: spec.warmup,
        valgrind: callgrind::version(valgrind)?,
        caches: format!(
            "I1 {} D1 {} LL {}",
            callgrind::I1,
            callgrind::D1,
            callgrind::LL
        ),
        total_instructions: per_query.iter().map(|q| q.instructions).sum(),
        outside_instructions: outside,
        wall_secs,
        cpu_secs: Some(cpu.user_secs + cpu.system_secs),
        jobs: parts.len(),
        classes: report::classes(&per_query),
        per_query,
    })
}

/// Two builds compared: the reports of A, B and A again, and the classes' changes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CostComparison {
    pub baseline: CostReport,
    pub candidate: CostReport,
    pub baseline_again: CostReport,
    pub classes: Vec<ClassChange>,
}

/// The command.
pub fn run(a: &CostArgs) -> anyhow::Result<()> {
    let spec = CostSpec {
        index: a.index.clone(),
        queries: a.queries.clone(),
        count: a.count,
        warmup: a.warmup,
        k: a.k,
        jobs: a.jobs,
    };
    if a.probe {
        let plan = a.plan.clone().context("--probe needs --plan")?;
        return probe::run(&probe::ProbeSpec {
            index: spec.index,
            queries: spec.queries,
            count: spec.count,
            warmup: spec.warmup,
            k: spec.k,
            plan,
        });
    }
    ensure!(a.count >= 1, "--count must be at least 1");
    ensure!(a.jobs >= 1, "--jobs must be at least 1");
    ensure!(
        a.index.is_dir(),
        "--index {}: no such directory",
        a.index.display()
    );
    // The query file is read now, so that a bad one fails before valgrind starts.
    probe::query_set(&a.queries, 1)?;
    if let Some(p) = &a.json {
        crate::output::check_file(p, "--json")?;
    }
    let valgrind = callgrind::find_valgrind(a.valgrind.as_deref())?;
    let cache = a
        .build_dir
        .clone()
        .unwrap_or_else(|| a.repo.join("target/ab"));
    let this = std::env::current_exe().context("finding this binary")?;
    let baseline = match &a.baseline {
        Some(s) => PathBuf::from(crate::ab::binary::prepare(s, &a.repo, &cache)?.binary),
        None => this,
    };
    let workdir = std::env::temp_dir().join(format!("heddle-cost-{}", std::process::id()));
    let count = |what: &str, bin: &Path, tag: &str| -> anyhow::Result<CostReport> {
        crate::note!(
            "cost: counting {what} ({}) on {} queries under callgrind",
            bin.display(),
            a.count
        );
        let r = measure(&valgrind, bin, &spec, &workdir, tag)?;
        crate::note!(
            "cost: {what}: {:.0} s ({:.0} s of CPU in {} valgrind processes)",
            r.wall_secs,
            r.cpu_secs.unwrap_or(0.0),
            r.jobs
        );
        Ok(r)
    };
    // The report's text is printed after its file is written and the work directory
    // removed: a standard output that cannot be written loses neither.
    let result = (|| -> anyhow::Result<String> {
        let a_report = count("the baseline", &baseline, "a")?;
        let Some(c) = &a.candidate else {
            let text = report::render(&a_report);
            if let Some(p) = &a.json {
                write_json(p, &a_report)?;
            }
            return Ok(text);
        };
        let candidate = PathBuf::from(crate::ab::binary::prepare(c, &a.repo, &cache)?.binary);
        let b_report = count("the candidate", &candidate, "b")?;
        let again = count("the baseline again", &baseline, "a2")?;
        let classes = report::compare(&a_report, &b_report, Some(&again));
        let text = report::render_compare(&classes, &a_report.binary, &b_report.binary);
        if let Some(p) = &a.json {
            write_json(
                p,
                &CostComparison {
                    baseline: a_report,
                    candidate: b_report,
                    baseline_again: again,
                    classes,
                },
            )?;
        }
        Ok(text)
    })();
    match result {
        Ok(text) => {
            let _ = std::fs::remove_dir_all(&workdir);
            crate::out!("{text}");
            Ok(())
        }
        Err(e) => Err(e.context(format!(
            "(callgrind's output and log are kept in {})",
            workdir.display()
        ))),
    }
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let mut json = serde_json::to_string_pretty(value)?;
    json.push('\n');
    std::fs::write(path, json).with_context(|| format!("writing {}", path.display()))?;
    crate::note!("cost: wrote {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_cover_the_set_in_order_and_differ_by_one_at_most() {
        assert_eq!(split(7, 2), vec![0..4, 4..7]);
        assert_eq!(split(1000, 2), vec![0..500, 500..1000]);
        assert_eq!(split(3, 8), vec![0..1, 1..2, 2..3], "never an empty part");
        assert_eq!(split(5, 1), vec![0..5]);
        assert_eq!(split(10, 3), vec![0..4, 4..7, 7..10]);
    }
}
