//! Documents per second of the encoder on a BEIR corpus, at each requested thread count.
//!
//! ```text
//! cargo run --release -p heddle-encoder --example throughput -- ../shared/data/scifact/corpus.jsonl \
//!     [--limit 1000] [--threads 1,2] [--batch 1] [--kernel-threads 1]
//! ```
//!
//! Each document is `title + " " + text`, trimmed, as BEIR feeds sentence-transformers.
//! `--threads N` runs N worker threads sharing one encoder, each encoding `--batch`
//! documents at a time; candle's own kernels use `--kernel-threads` threads (default 1, so
//! that N workers are N busy threads). `--threads 1 --kernel-threads 2` instead spreads
//! each encoding over two threads, which is what a single query would use.

use std::io::{BufRead, Write};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use heddle_encoder::{Encoder, ModelFiles};

struct Options {
    corpus: PathBuf,
    limit: Option<usize>,
    threads: Vec<usize>,
    batch: usize,
    kernel_threads: NonZeroUsize,
}

const USAGE: &str =
    "usage: throughput CORPUS.jsonl [--limit N] [--threads 1,2] [--batch N] [--kernel-threads N]";

fn parse_options() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let mut options = Options {
        corpus: PathBuf::new(),
        limit: None,
        threads: vec![1, 2],
        batch: 1,
        kernel_threads: NonZeroUsize::MIN,
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
    Ok(options)
}

/// The corpus's documents as BEIR hands them to sentence-transformers.
fn read_documents(options: &Options) -> Result<Vec<String>, String> {
    let path = &options.corpus;
    let file = std::fs::File::open(path).map_err(|error| format!("{}: {error}", path.display()))?;
    let mut documents = Vec::new();
    for (number, line) in std::io::BufReader::new(file).lines().enumerate() {
        if options.limit.is_some_and(|limit| documents.len() >= limit) {
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
        documents.push(
            format!("{} {}", field("title"), field("text"))
                .trim()
                .to_string(),
        );
    }
    Ok(documents)
}

/// Encodes every document with `threads` workers; returns the elapsed time.
fn run(
    encoder: &Encoder,
    documents: &[&str],
    threads: usize,
    batch: usize,
) -> Result<Duration, String> {
    let next_batch = AtomicUsize::new(0);
    let encoded = AtomicUsize::new(0);
    let batches: Vec<&[&str]> = documents.chunks(batch).collect();
    let start = Instant::now();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| -> Result<(), String> {
                    loop {
                        let Some(texts) = batches.get(next_batch.fetch_add(1, Ordering::Relaxed))
                        else {
                            return Ok(());
                        };
                        encoder
                            .encode_batch(texts)
                            .map_err(|error| error.to_string())?;
                        encoded.fetch_add(texts.len(), Ordering::Relaxed);
                    }
                })
            })
            .collect();
        // The progress line, redrawn each second on standard error.
        let mut last_report = start;
        while !workers.iter().all(|worker| worker.is_finished()) {
            std::thread::sleep(Duration::from_millis(100));
            if last_report.elapsed() >= Duration::from_secs(1) {
                last_report = Instant::now();
                let done = encoded.load(Ordering::Relaxed);
                let seconds = start.elapsed().as_secs_f64();
                eprint!(
                    "\r  {threads} thread(s): {done}/{} documents, {:.1} documents/s   ",
                    documents.len(),
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
    Ok(start.elapsed())
}

fn main() {
    let options = parse_options().unwrap_or_else(|message| {
        eprintln!("{message}");
        std::process::exit(2)
    });
    // SAFETY: first statement after argument parsing, before any thread is started and
    // before candle runs a kernel.
    unsafe { heddle_encoder::set_kernel_threads(options.kernel_threads) };

    let result = (|| -> Result<(), String> {
        let load_start = Instant::now();
        let files = ModelFiles::fetch().map_err(|error| error.to_string())?;
        let encoder = Encoder::load(&files).map_err(|error| error.to_string())?;
        eprintln!(
            "model loaded in {:.2} s from {}",
            load_start.elapsed().as_secs_f64(),
            files.model_dir().display()
        );

        let documents = read_documents(&options)?;
        let mut texts: Vec<&str> = documents.iter().map(String::as_str).collect();
        if options.batch > 1 {
            // Similar lengths side by side, so a batch pads little.
            texts.sort_by_key(|text| text.len());
        }
        let mut pieces = 0usize;
        for text in &texts {
            pieces += encoder
                .token_count(text)
                .map_err(|error| error.to_string())?;
        }
        encoder
            .encode("warm-up")
            .map_err(|error| error.to_string())?;
        println!(
            "{}: {} documents, {:.1} word pieces each on average (at most {}); batch {}, kernel threads {}",
            options.corpus.display(),
            texts.len(),
            pieces as f64 / texts.len().max(1) as f64,
            encoder.max_seq_length(),
            options.batch,
            options.kernel_threads
        );
        for &threads in &options.threads {
            let elapsed = run(&encoder, &texts, threads, options.batch)?.as_secs_f64();
            println!(
                "threads {threads}: {:.1} documents/s ({} documents in {elapsed:.1} s, {:.0} word pieces/s)",
                texts.len() as f64 / elapsed,
                texts.len(),
                pieces as f64 / elapsed
            );
        }
        Ok(())
    })();
    if let Err(message) = result {
        eprintln!("throughput: {message}");
        std::process::exit(1);
    }
}
