//! Texts per second of the encoder, and each text's latency (p50, p99), on a BEIR corpus's
//! documents or its queries, at each requested thread count.
//!
//! ```text
//! cargo run --release -p heddle-encoder --example throughput -- ../shared/data/scifact/corpus.jsonl \
//!     [--limit 1000] [--threads 1,2] [--batch 1] [--kernel-threads 1] [--precision f32] [--json OUT]
//! cargo run --release -p heddle-encoder --example throughput -- \
//!     --queries ../shared/data/scifact/queries.jsonl --qrels ../shared/data/scifact/qrels/test.tsv \
//!     --threads 1 --kernel-threads 2
//! ```
//!
//! Each document is `title + " " + text`, trimmed, as BEIR feeds sentence-transformers; a
//! query is its `text`, and `--qrels` keeps only the queries it judges (SciFact's 300 test
//! queries). `--threads N` runs N worker threads sharing one encoder, each encoding `--batch`
//! texts at a time; the encoder's kernels use `--kernel-threads` threads (default 1, so
//! that N workers are N busy threads). `--threads 1 --kernel-threads 2` instead spreads
//! each encoding over two threads, which is what a single query would use.
//!
//! The latency of a text is the wall time of its `encode_batch` call (tokenizing included);
//! with `--batch` above 1 it is the call's, shared by the batch. Quantiles are nearest-rank
//! (the smallest latency at or above the fraction), as scripts/encoder-anchor.py takes them.
//! `--precision int8` loads the model with its linear layers in int8 (`Precision::Int8`)
//! instead of f32. `--json OUT` appends one JSON object a run (a thread count) to OUT;
//! `--per-text OUT.tsv` appends one line a call: threads, kernel threads, the index of its
//! first text, its word pieces and its latency in ms.

use std::io::{BufRead, Write};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use heddle_encoder::{Encoder, ModelFiles, Precision};

struct Options {
    corpus: PathBuf,
    queries: bool,
    qrels: Option<PathBuf>,
    limit: Option<usize>,
    threads: Vec<usize>,
    batch: usize,
    kernel_threads: NonZeroUsize,
    precision: Precision,
    json: Option<PathBuf>,
    per_text: Option<PathBuf>,
}

const USAGE: &str = "usage: throughput CORPUS.jsonl | --queries QUERIES.jsonl [--qrels TSV] \
[--limit N] [--threads 1,2] [--batch N] [--kernel-threads N] [--precision f32|int8] [--json OUT] \
[--per-text OUT.tsv]";

fn parse_options() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let mut options = Options {
        corpus: PathBuf::new(),
        queries: false,
        qrels: None,
        limit: None,
        threads: vec![1, 2],
        batch: 1,
        kernel_threads: NonZeroUsize::MIN,
        precision: Precision::F32,
        json: None,
        per_text: None,
    };
    let number = |flag: &str, value: Option<String>| -> Result<usize, String> {
        let value = value.ok_or(format!("{flag} needs a value"))?;
        value
            .parse()
            .map_err(|_| format!("{flag}: {value:?} is not a number"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--limit" => options.limit = Some(number("--limit", args.next())?),
            "--batch" => options.batch = number("--batch", args.next())?.max(1),
            "--kernel-threads" => {
                options.kernel_threads = NonZeroUsize::new(number("--kernel-threads", args.next())?)
                    .ok_or("--kernel-threads must be at least 1")?
            }
            "--threads" => {
                let list = args.next().ok_or("--threads needs a value")?;
                options.threads = list
                    .split(',')
                    .map(|count| number("--threads", Some(count.to_string())))
                    .collect::<Result<_, _>>()?;
                if options.threads.contains(&0) {
                    return Err("--threads: counts must be at least 1".to_string());
                }
            }
            "--queries" => {
                options.corpus = args.next().ok_or("--queries needs a file")?.into();
                options.queries = true;
            }
            "--precision" => {
                options.precision = match args.next().as_deref() {
                    Some("f32") => Precision::F32,
                    Some("int8") => Precision::Int8,
                    other => return Err(format!("--precision: {other:?} is not f32 or int8")),
                }
            }
            "--qrels" => options.qrels = Some(args.next().ok_or("--qrels needs a file")?.into()),
            "--json" => options.json = Some(args.next().ok_or("--json needs a file")?.into()),
            "--per-text" => {
                options.per_text = Some(args.next().ok_or("--per-text needs a file")?.into())
            }
            "-h" | "--help" => return Err(USAGE.to_string()),
            _ if options.corpus.as_os_str().is_empty() && !arg.starts_with('-') => {
                options.corpus = arg.into()
            }
            _ => return Err(format!("unexpected argument {arg:?}\n{USAGE}")),
        }
    }
    if options.corpus.as_os_str().is_empty() {
        return Err(USAGE.to_string());
    }
    if options.qrels.is_some() && !options.queries {
        return Err("--qrels goes with --queries".to_string());
    }
    Ok(options)
}

/// The query ids a BEIR qrels file (query-id, corpus-id, score; a header line) judges.
fn judged_queries(path: &PathBuf) -> Result<std::collections::HashSet<String>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|error| format!("{}: {error}", path.display()))?;
    let mut ids = std::collections::HashSet::new();
    for (number, line) in text.lines().enumerate().skip(1) {
        let Some(id) = line.split('\t').next().filter(|id| !id.is_empty()) else {
            return Err(format!("{}:{}: no query id", path.display(), number + 1));
        };
        ids.insert(id.to_string());
    }
    Ok(ids)
}

/// The corpus's documents as BEIR hands them to sentence-transformers, or its queries.
fn read_texts(options: &Options) -> Result<Vec<String>, String> {
    let path = &options.corpus;
    let judged = options.qrels.as_ref().map(judged_queries).transpose()?;
    let file = std::fs::File::open(path).map_err(|error| format!("{}: {error}", path.display()))?;
    let mut texts = Vec::new();
    for (number, line) in std::io::BufReader::new(file).lines().enumerate() {
        if options.limit.is_some_and(|limit| texts.len() >= limit) {
            break;
        }
        let line = line.map_err(|error| format!("{}: {error}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let record: serde_json::Value = serde_json::from_str(&line)
            .map_err(|error| format!("{}:{}: {error}", path.display(), number + 1))?;
        let field = |name: &str| {
            record
                .get(name)
                .and_then(|value| value.as_str())
                .unwrap_or("")
        };
        if options.queries {
            if judged
                .as_ref()
                .is_some_and(|ids| !ids.contains(field("_id")))
            {
                continue;
            }
            texts.push(field("text").to_string());
        } else {
            texts.push(
                format!("{} {}", field("title"), field("text"))
                    .trim()
                    .to_string(),
            );
        }
    }
    Ok(texts)
}

/// The nearest-rank quantile `fraction` of sorted `values`.
fn quantile(sorted: &[Duration], fraction: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (fraction * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Encodes every text with `threads` workers; returns the elapsed time and each call's
/// latency with the index of its batch: each worker's calls in the order they ended, one
/// worker after another (with one worker, the order encoded).
fn run(
    encoder: &Encoder,
    texts: &[&str],
    threads: usize,
    batch: usize,
) -> Result<(Duration, Vec<(usize, Duration)>), String> {
    let next_batch = AtomicUsize::new(0);
    let encoded = AtomicUsize::new(0);
    let latencies = Mutex::new(Vec::with_capacity(texts.len()));
    let batches: Vec<&[&str]> = texts.chunks(batch).collect();
    let start = Instant::now();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| -> Result<(), String> {
                    let mut own = Vec::new();
                    loop {
                        let index = next_batch.fetch_add(1, Ordering::Relaxed);
                        let Some(texts) = batches.get(index) else {
                            latencies.lock().map_err(|_| "poisoned")?.extend(own);
                            return Ok(());
                        };
                        let call = Instant::now();
                        encoder
                            .encode_batch(texts)
                            .map_err(|error| error.to_string())?;
                        own.push((index, call.elapsed()));
                        encoded.fetch_add(texts.len(), Ordering::Relaxed);
                    }
                })
            })
            .collect();
        // The progress line, redrawn each second on standard error.
        let mut last_report = start;
        while !workers.iter().all(|worker| worker.is_finished()) {
            std::thread::sleep(Duration::from_millis(20));
            if last_report.elapsed() >= Duration::from_secs(1) {
                last_report = Instant::now();
                let done = encoded.load(Ordering::Relaxed);
                let seconds = start.elapsed().as_secs_f64();
                eprint!(
                    "\r  {threads} thread(s): {done}/{} texts, {:.1} texts/s   ",
                    texts.len(),
                    done as f64 / seconds
                );
                let _ = std::io::stderr().flush();
            }
        }
        eprintln!();
        workers
            .into_iter()
            .try_for_each(|worker| worker.join().map_err(|_| "a worker panicked".to_string())?)
    })?;
    let elapsed = start.elapsed();
    Ok((elapsed, latencies.into_inner().map_err(|_| "poisoned")?))
}

/// Appends one line a call to `path`: threads, kernel threads, the call's first text (its
/// place among the texts as encoded: sorted by length when `--batch` is above 1), the
/// call's word pieces (`pieces_of`: each text's), its latency in
/// ms. For finding where a quantile's time goes (by length, by text), beside another
/// runtime's own per-text figures.
fn write_per_text(
    path: &PathBuf,
    pieces_of: &[usize],
    batch: usize,
    threads: usize,
    kernel_threads: usize,
    calls: &[(usize, Duration)],
) -> Result<(), String> {
    let failed = |error: std::io::Error| format!("{}: {error}", path.display());
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(failed)?;
    let mut out = std::io::BufWriter::new(file);
    for &(index, latency) in calls {
        let pieces: usize = pieces_of[index * batch..((index + 1) * batch).min(pieces_of.len())]
            .iter()
            .sum();
        writeln!(
            out,
            "{threads}\t{kernel_threads}\t{}\t{pieces}\t{:.4}",
            index * batch,
            latency.as_secs_f64() * 1e3
        )
        .map_err(failed)?;
    }
    out.flush().map_err(failed)
}

fn main() {
    let options = parse_options().unwrap_or_else(|message| {
        eprintln!("{message}");
        std::process::exit(2)
    });
    // SAFETY: first statement after argument parsing, before any thread is started and
    // before the encoder runs a kernel.
    unsafe { heddle_encoder::set_kernel_threads(options.kernel_threads) };

    let result = (|| -> Result<(), String> {
        let load_start = Instant::now();
        let files = ModelFiles::fetch().map_err(|error| error.to_string())?;
        let encoder =
            Encoder::load_with(&files, options.precision).map_err(|error| error.to_string())?;
        eprintln!(
            "model loaded ({}) in {:.2} s from {}",
            options.precision.name(),
            load_start.elapsed().as_secs_f64(),
            files.model_dir().display()
        );

        let owned = read_texts(&options)?;
        let mut texts: Vec<&str> = owned.iter().map(String::as_str).collect();
        if options.batch > 1 {
            // Similar lengths side by side, so a batch pads little.
            texts.sort_by_key(|text| text.len());
        }
        // Each text's word pieces, counted once: for the average and for `--per-text`.
        let pieces_of: Vec<usize> = texts
            .iter()
            .map(|text| encoder.token_count(text))
            .collect::<Result<_, _>>()
            .map_err(|error| error.to_string())?;
        let pieces: usize = pieces_of.iter().sum();
        // Warm-up: the first texts once, so that first-touch page faults and the kernel
        // threads' start are not counted in a text's latency.
        for text in texts.iter().take(8) {
            encoder.encode(text).map_err(|error| error.to_string())?;
        }
        let kind = if options.queries {
            "queries"
        } else {
            "documents"
        };
        let average_pieces = pieces as f64 / texts.len().max(1) as f64;
        println!(
            "{}: {} {kind}, {average_pieces:.1} word pieces each on average (at most {}); batch {}, kernel threads {}, {}",
            options.corpus.display(),
            texts.len(),
            encoder.max_seq_length(),
            options.batch,
            options.kernel_threads,
            options.precision.name()
        );
        for &threads in &options.threads {
            let (elapsed, calls) = run(&encoder, &texts, threads, options.batch)?;
            if let Some(path) = &options.per_text {
                let kernel_threads = options.kernel_threads.get();
                write_per_text(
                    path,
                    &pieces_of,
                    options.batch,
                    threads,
                    kernel_threads,
                    &calls,
                )?;
            }
            let mut latencies: Vec<Duration> = calls.iter().map(|&(_, latency)| latency).collect();
            latencies.sort();
            let elapsed = elapsed.as_secs_f64();
            let per_second = texts.len() as f64 / elapsed;
            let milliseconds = |duration: Duration| duration.as_secs_f64() * 1e3;
            let (p50, p99) = (
                milliseconds(quantile(&latencies, 0.50)),
                milliseconds(quantile(&latencies, 0.99)),
            );
            let mean = latencies
                .iter()
                .map(|&latency| milliseconds(latency))
                .sum::<f64>()
                / latencies.len().max(1) as f64;
            println!(
                "threads {threads}: {per_second:.1} {kind}/s ({} in {elapsed:.1} s, {:.0} word pieces/s); \
per {}: p50 {p50:.2} ms, p99 {p99:.2} ms, mean {mean:.2} ms",
                texts.len(),
                pieces as f64 / elapsed,
                if options.batch > 1 { "batch" } else { "text" },
            );
            if let Some(path) = &options.json {
                let record = serde_json::json!({
                    "runtime": "heddle-encoder",
                    "precision": options.precision.name(),
                    "kind": kind,
                    "texts": texts.len(),
                    "word_pieces_mean": average_pieces,
                    "threads": threads,
                    "kernel_threads": options.kernel_threads.get(),
                    "batch": options.batch,
                    "per_second": per_second,
                    "p50_ms": p50,
                    "p99_ms": p99,
                    "mean_ms": mean,
                });
                let mut file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|error| format!("{}: {error}", path.display()))?;
                writeln!(file, "{record}")
                    .map_err(|error| format!("{}: {error}", path.display()))?;
            }
        }
        Ok(())
    })();
    if let Err(message) = result {
        eprintln!("throughput: {message}");
        std::process::exit(1);
    }
}
