//! heddle-corpus: BEIR corpora in and out, synthetic corpora, query sets.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use heddle::{Analyzer, AnalyzerConfig, Document};
use heddle_corpus::beir::{BeirError, QueriesWriter, Query, open_corpus};
use heddle_corpus::queries::{
    BAND_WEIGHTS, BANDS, ClassShare, DfTable, QueryClass, SampledStyle, TermStats, class_queries,
    frequent_terms, question_queries, rare_max_df, rare_terms, term_queries,
};
use heddle_corpus::stats::{corpus_stats, plural, thousands};
use heddle_corpus::synth::{
    Generator, GeneratorConfig, LengthModel, TREC_COVID_DOCS, WordModel, learn,
};

/// One line to stderr, like `eprintln!` but never a panic. heddle-corpus writes its
/// results to files (and `stats` to stdout, where a closed pipe ends the report quietly);
/// stderr carries only progress and notes, so a closed stderr (`2>&1 | head`) loses them
/// rather than aborting a corpus half written.
macro_rules! note {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

#[derive(Parser)]
#[command(
    name = "heddle-corpus",
    version,
    about = "BEIR corpora: synthesize, sample queries, describe"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write a synthetic TREC-COVID-style corpus: DIR/corpus.jsonl and DIR/queries.jsonl.
    Synth {
        /// Output directory (created if missing).
        #[arg(long)]
        out: PathBuf,
        /// Documents to write, at least 1.
        #[arg(long, default_value_t = TREC_COVID_DOCS, value_parser = at_least_one_doc)]
        docs: u64,
        /// Seeds the generator: the same seed and flags write the same corpus.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Learn the vocabulary and word frequencies from this BEIR corpus (directory or
        /// corpus.jsonl) instead of the built-in model.
        #[arg(long)]
        like: Option<PathBuf>,
        /// Length shape: TREC-COVID's published shape, or the --like corpus's own lengths.
        #[arg(long, value_enum, default_value_t = Lengths::TrecCovid)]
        lengths: Lengths,
        /// Number of TREC-COVID-like question queries written to queries.jsonl.
        #[arg(long, default_value_t = 50)]
        queries: usize,
        /// Worker threads (default: all cores). Never changes the output.
        #[arg(long)]
        threads: Option<usize>,
        /// Probability that a word repeats an earlier word of its document.
        #[arg(long, default_value_t = GeneratorConfig::default().burstiness)]
        burstiness: f64,
        /// Number of topics (0 or 1: none).
        #[arg(long, default_value_t = GeneratorConfig::default().topics)]
        topics: u64,
        /// Fraction of fresh words drawn from the document's topic.
        #[arg(long, default_value_t = GeneratorConfig::default().topicality)]
        topicality: f64,
    },
    /// Sample a query set from a corpus's own vocabulary, by document-frequency band, or
    /// make query classes on purpose (--class).
    Queries {
        /// BEIR directory or corpus.jsonl.
        #[arg(long)]
        corpus: PathBuf,
        /// Output queries.jsonl.
        #[arg(long)]
        out: PathBuf,
        /// Queries to write.
        #[arg(long, default_value_t = 1000)]
        count: usize,
        /// Terms per query, MIN..MAX inclusive (for --style terms).
        #[arg(long, default_value = "2..5", value_parser = parse_range)]
        terms: (usize, usize),
        /// Seeds the sampling: the same seed and flags write the same queries.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Bags of terms, or TREC-COVID-like questions (function words around the terms).
        #[arg(long, value_enum, default_value_t = Style::Terms)]
        style: Style,
        /// Query classes, comma-separated or repeated, each NAME or NAME:WEIGHT; --count is
        /// split by weight. sampled (--style, as without --class), frequent-rare (a term in >25%
        /// of docs with 1-2 in <=0.1%), all-rare, all-frequent (2-4 terms), long (8-16
        /// words of a question from one document). Each line gets metadata.class.
        #[arg(long, value_delimiter = ',')]
        class: Vec<ClassShare>,
        /// Analyzer preset for document frequencies (english, lucene-english or plain);
        /// as the index's. Default: english with --class, plain without (the sets made
        /// before classes).
        #[arg(long)]
        analyzer: Option<String>,
    },
    /// Describe a corpus: size, length distribution, vocabulary, Zipf and Heaps exponents.
    Stats {
        /// BEIR directory or corpus.jsonl.
        #[arg(long)]
        corpus: PathBuf,
        /// Analyzer preset the vocabulary is counted with: plain (lowercase only),
        /// english or lucene-english.
        #[arg(long, default_value = "plain")]
        analyzer: String,
        /// How many top terms (by document frequency) to list.
        #[arg(long, default_value_t = 20)]
        top: usize,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Lengths {
    TrecCovid,
    Like,
}

#[derive(Clone, Copy, ValueEnum)]
enum Style {
    Terms,
    Questions,
}

/// `--docs`: refused at 0 before anything is written (it made an empty corpus, then
/// failed on its queries).
fn at_least_one_doc(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(0) => Err("an empty corpus is no corpus; give at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{s:?}: {e}")),
    }
}

fn parse_range(s: &str) -> Result<(usize, usize), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("{s:?}: expected MIN..MAX, e.g. 2..5"))?;
    let min = a
        .trim()
        .parse()
        .map_err(|_| format!("{a:?} is not a number"))?;
    let max = b
        .trim()
        .trim_start_matches('=')
        .parse()
        .map_err(|_| format!("{b:?} is not a number"))?;
    if min == 0 || min > max {
        return Err(format!("{s}: need 1 <= MIN <= MAX"));
    }
    Ok((min, max))
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return parse_error(&e),
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            note!("heddle-corpus: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// What clap's `exit` does for `--help`, `--version` and a bad command line, except that
/// text that cannot be written (`--help >/dev/full`) is an error (exit 1) rather than a
/// silent success: clap itself ignores the failed write.
fn parse_error(e: &clap::Error) -> ExitCode {
    match e.print() {
        Ok(()) => ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2)),
        Err(io) => {
            let to = if e.use_stderr() { "error" } else { "output" };
            note!("heddle-corpus: error: writing to standard {to}: {io}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Synth {
            out,
            docs,
            seed,
            like,
            lengths,
            queries,
            threads,
            burstiness,
            topics,
            topicality,
        } => {
            let mut config = GeneratorConfig {
                docs,
                seed,
                burstiness,
                topics,
                topicality,
                ..GeneratorConfig::default()
            };
            if let Some(t) = threads {
                config.threads = t.max(1);
            }
            synth(&out, config, like.as_deref(), lengths, queries)
        }
        Command::Queries {
            corpus,
            out,
            count,
            terms,
            seed,
            style,
            class,
            analyzer,
        } => {
            if class.is_empty() {
                let analyzer = analyzer.as_deref().unwrap_or("plain");
                sample_queries(&corpus, &out, count, terms, seed, style, analyzer)
            } else {
                let analyzer = analyzer.as_deref().unwrap_or("english");
                let style = match style {
                    Style::Terms => SampledStyle::Terms {
                        min: terms.0,
                        max: terms.1,
                    },
                    Style::Questions => SampledStyle::Questions,
                };
                classed_queries(&corpus, &out, count, &class, style, seed, analyzer)
            }
        }
        Command::Stats {
            corpus,
            analyzer,
            top,
        } => {
            let analyzer = Analyzer::new(AnalyzerConfig::preset(&analyzer)?);
            let reader = open_corpus(&corpus)?;
            let path = reader.path().to_path_buf();
            let stats = corpus_stats(with_progress("stats", reader), &analyzer, top)?;
            let report = format!("corpus            {}\n{stats}", path.display());
            // One write, and a reader that stops early (`| head`) is not an error.
            let mut stdout = std::io::stdout().lock();
            match stdout
                .write_all(report.as_bytes())
                .and_then(|()| stdout.flush())
            {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err(e).context("writing to standard output")
                }
                _ => Ok(()),
            }
        }
    }
}

/// Passes documents through, printing a progress line to stderr every two seconds.
fn with_progress(
    what: &'static str,
    docs: impl Iterator<Item = Result<Document, BeirError>>,
) -> impl Iterator<Item = Result<Document, BeirError>> {
    let start = Instant::now();
    let mut last = 0.0;
    docs.enumerate().map(move |(i, d)| {
        let t = start.elapsed().as_secs_f64();
        if t - last >= 2.0 {
            note!("{what}: {} read {t:.1} s", plural(i as u64, "doc"));
            last = t;
        }
        d
    })
}

fn synth(
    out: &Path,
    config: GeneratorConfig,
    like: Option<&Path>,
    lengths: Lengths,
    query_count: usize,
) -> Result<()> {
    if !(0.0..1.0).contains(&config.burstiness) || !(0.0..1.0).contains(&config.topicality) {
        bail!("--burstiness and --topicality must be in [0, 1)");
    }
    let seed = config.seed;
    let start = Instant::now();
    let (model, length_model) = match like {
        Some(dir) => {
            let reader = open_corpus(dir)?;
            let path = reader.path().to_path_buf();
            let learned = learn(with_progress("learn", reader))?;
            note!(
                "synth: learned {} from {} ({}) of {}",
                plural(learned.words.len() as u64, "word"),
                plural(learned.docs, "document"),
                plural(learned.tokens, "token"),
                path.display()
            );
            let lengths = match lengths {
                Lengths::TrecCovid => LengthModel::trec_covid(),
                Lengths::Like => LengthModel::Empirical(learned.lengths.clone()),
            };
            (
                WordModel::from_learned(&learned, format!("learned from {}", path.display())),
                lengths,
            )
        }
        None => {
            if matches!(lengths, Lengths::Like) {
                bail!("--lengths like needs --like DIR");
            }
            (WordModel::builtin(), LengthModel::trec_covid())
        }
    };
    let summary = model.summary();
    note!(
        "synth: model: {}; {} head words, {} known rare words, tail mass {:.3}, tail exponent {:.3}",
        summary.description,
        thousands(summary.head_words as u64),
        thousands(summary.known_tail_words as u64),
        summary.tail_mass,
        summary.tail_alpha
    );
    let generator = Generator {
        model,
        lengths: length_model,
        config,
    };
    fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let corpus_path = out.join("corpus.jsonl");
    let tmp = out.join("corpus.jsonl.partial");
    let file = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let gen_start = Instant::now();
    let mut last = 0.0;
    let mut progress = |done: u64, total: u64| {
        let t = gen_start.elapsed().as_secs_f64();
        if t - last >= 2.0 || done == total {
            note!(
                "synth: {}/{} docs ({:.0}%) {t:.1} s",
                thousands(done),
                thousands(total),
                100.0 * done as f64 / total.max(1) as f64
            );
            last = t;
        }
    };
    let (generated, writer) = generator
        .write_corpus(BufWriter::with_capacity(1 << 20, file), &mut progress)
        .with_context(|| format!("writing {}", tmp.display()))?;
    writer
        .into_inner()
        .map_err(|e| e.into_error())
        .and_then(|f| f.sync_all())
        .with_context(|| format!("writing {}", tmp.display()))?;
    fs::rename(&tmp, &corpus_path)
        .with_context(|| format!("renaming {} to {}", tmp.display(), corpus_path.display()))?;

    let table = generated.df_table(&generator.model);
    let queries = question_queries(&table, query_count, seed)?;
    let queries_path = out.join("queries.jsonl");
    write_queries(&queries_path, &queries)?;
    note!(
        "synth: wrote {} ({}, mean {:.1} words) to {} and {} to {} in {:.1} s",
        plural(generated.docs, "document"),
        plural(generated.tokens, "token"),
        generated.tokens as f64 / generated.docs.max(1) as f64,
        corpus_path.display(),
        plural(queries.len() as u64, "query"),
        queries_path.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

fn write_queries(path: &Path, queries: &[Query]) -> Result<()> {
    let file = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut w = QueriesWriter::new(BufWriter::new(file));
    for q in queries {
        w.write(q)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    w.finish()?.flush()?;
    Ok(())
}

fn sample_queries(
    corpus: &Path,
    out: &Path,
    count: usize,
    (min, max): (usize, usize),
    seed: u64,
    style: Style,
    analyzer: &str,
) -> Result<()> {
    let analyzer = Analyzer::new(AnalyzerConfig::preset(analyzer)?);
    let reader = open_corpus(corpus)?;
    let table = DfTable::from_corpus(with_progress("queries", reader), &analyzer)?;
    for (band, weight) in BANDS.iter().zip(BAND_WEIGHTS) {
        note!(
            "queries: band {:<8} df {:>5.2}%..{:>5.2}% of {} (at least {}): {}, weight {:.0}%",
            band.name,
            100.0 * band.min_fraction,
            100.0 * band.max_fraction,
            plural(table.docs, "doc"),
            band.min_docs,
            plural(table.band_terms(band).len() as u64, "term"),
            100.0 * weight
        );
    }
    let queries = match style {
        Style::Terms => term_queries(&table, count, min, max, seed)?,
        Style::Questions => question_queries(&table, count, seed)?,
    };
    write_queries(out, &queries)?;
    note!(
        "queries: wrote {} to {}",
        plural(queries.len() as u64, "query"),
        out.display()
    );
    Ok(())
}

fn classed_queries(
    corpus: &Path,
    out: &Path,
    count: usize,
    mix: &[ClassShare],
    style: SampledStyle,
    seed: u64,
    analyzer: &str,
) -> Result<()> {
    let analyzer = Analyzer::new(AnalyzerConfig::preset(analyzer)?);
    let start = Instant::now();
    let reader = open_corpus(corpus)?;
    let stats = TermStats::from_corpus(with_progress("queries", reader), &analyzer)?;
    let docs = plural(stats.docs, "doc");
    for class in [QueryClass::FrequentRare, QueryClass::AllFrequent] {
        if mix.iter().any(|s| s.class == class) {
            let shown: Vec<String> = frequent_terms(&stats, class)
                .iter()
                .take(8)
                .map(|t| {
                    let word = t.word.as_deref().unwrap_or(&t.term);
                    format!("{word} {:.1}%", 100.0 * t.df as f64 / stats.docs as f64)
                })
                .collect();
            note!(
                "queries: {class}: frequent terms of {docs}: {}",
                shown.join(", ")
            );
        }
    }
    note!(
        "queries: rare terms (df 1..{} of {docs}): {}",
        rare_max_df(stats.docs),
        thousands(rare_terms(&stats).len() as u64)
    );
    let queries = class_queries(&stats, mix, count, style, seed, || open_corpus(corpus))?;
    let file = File::create(out).with_context(|| format!("creating {}", out.display()))?;
    let mut w = QueriesWriter::new(BufWriter::new(file));
    for q in &queries {
        w.write_with_class(&q.query, q.class.name())
            .with_context(|| format!("writing {}", out.display()))?;
    }
    w.finish()?.flush()?;
    let per_class: Vec<String> = mix
        .iter()
        .map(|s| {
            let n = queries.iter().filter(|q| q.class == s.class).count();
            format!("{} {n}", s.class)
        })
        .collect();
    note!(
        "queries: wrote {} ({}) to {} in {:.1} s",
        plural(queries.len() as u64, "query"),
        per_class.join(", "),
        out.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 17: `synth --docs`, `queries --count` and others had no help line.
    #[test]
    fn every_argument_has_help() {
        use clap::CommandFactory;
        let mut missing = Vec::new();
        for sub in Cli::command().get_subcommands() {
            for arg in sub.get_arguments() {
                if !arg.is_hide_set() && arg.get_help().is_none() {
                    missing.push(format!("{} --{}", sub.get_name(), arg.get_id()));
                }
            }
        }
        assert!(missing.is_empty(), "without help: {missing:?}");
    }

    #[test]
    fn term_ranges_parse() {
        assert_eq!(parse_range("2..5"), Ok((2, 5)));
        assert_eq!(parse_range("3..=3"), Ok((3, 3)));
        assert!(parse_range("5..2").is_err());
        assert!(parse_range("0..2").is_err());
        assert!(parse_range("2-5").is_err());
    }
}
