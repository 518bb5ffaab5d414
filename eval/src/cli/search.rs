//! `heddle-eval search`: one query's top k hits, or a whole topics file turned into a TREC
//! run (`--queries FILE --run-out FILE`).

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;
use heddle::{Bm25Params, Field, Index, Searcher};
use serde::Serialize;
use serde_json::json;

use super::display::escape_controls;
use super::ranking::{RankingArgs, bm25_flags, result_count};
use crate::progress::{Progress, plural};
use crate::quality::{RankedHit, Retrieval, Run, RunEntry, StreamSettings, StreamSpec};

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The index to search (a directory built by `heddle-eval index`).
    #[arg(long)]
    pub index: PathBuf,
    /// Hits to return, from 1 to 4294967295 [default: 10; 1000 a query with --queries];
    /// no search returns more than the index's live documents.
    #[arg(long)]
    pub k: Option<u64>,
    /// BM25 term-frequency saturation, from 0 to 1000.
    #[arg(long, default_value_t = Bm25Params::default().k1)]
    pub k1: f64,
    /// BM25 length normalisation, from 0 to 1.
    #[arg(long, default_value_t = Bm25Params::default().b)]
    pub b: f64,
    #[command(flatten)]
    pub ranking: RankingArgs,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Search every query of this file instead of one: BEIR queries.jsonl or a TREC
    /// topics file (qid<TAB>text), told apart by their content. Needs --run-out.
    #[arg(long, value_name = "FILE", requires = "run_out", conflicts_with_all = ["query", "query_text"])]
    pub queries: Option<PathBuf>,
    /// With --queries, or --query-vectors alone (each vector's exact nearest documents,
    /// no query text needed): write the results as a TREC run (qid Q0 docid rank score
    /// tag), --k lines a query at most, as `quality --run-out` writes it.
    #[arg(long, value_name = "FILE")]
    pub run_out: Option<PathBuf>,
    /// The run file's tag column.
    #[arg(long, default_value = "heddle", requires = "run_out")]
    pub tag: String,
    /// The query; several words are joined with spaces. Words after `--` are never
    /// options (`search --index I -- -word`). With no words, or `-`, the query is read
    /// from stdin.
    #[arg(conflicts_with = "query_text")]
    pub query: Vec<String>,
    /// The query as one argument, which may start with `-` (`--query -word`).
    #[arg(long = "query", value_name = "TEXT", allow_hyphen_values = true)]
    pub query_text: Option<String>,
}

/// The longest query read from stdin: far beyond any real query, and a bound on what a
/// mistaken pipe (a whole corpus, say) can make the command hold.
const MAX_STDIN_QUERY_BYTES: u64 = 1 << 20;

/// Hits a query of a `--queries` run keeps unless `--k` says otherwise (as `quality`).
const BATCH_K: u64 = 1000;

#[derive(Serialize)]
struct JsonHit<'a> {
    rank: usize,
    id: &'a str,
    score: f64,
    title: &'a str,
}

#[derive(Serialize)]
struct JsonResult<'a> {
    query: &'a str,
    k: u64,
    ranking: String,
    /// Every stream's field, k1, b and weight (one stream without --fuse).
    streams: Vec<StreamSettings>,
    /// The BM25 parameters of a single stream; absent for a fusion, whose streams may
    /// each have their own.
    #[serde(skip_serializing_if = "Option::is_none")]
    k1: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    b: Option<f64>,
    hits: Vec<JsonHit<'a>>,
    /// Why there are no hits, when there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    why_empty: Option<String>,
}

pub fn run(args: &SearchArgs) -> anyhow::Result<()> {
    // `--query-vectors FILE --run-out RUN` without --queries: a dense run by query id.
    let vectors_only = args.queries.is_none() && args.ranking.query_vectors.is_some();
    let batch = args.queries.is_some() || vectors_only;
    if args.run_out.is_some() && !batch {
        bail!("--run-out writes the run of --queries or --query-vectors; give one of them");
    }
    if let Some(p) = &args.run_out {
        crate::output::check_file(p, "--run-out")?;
    }
    let k_flag = args.k.unwrap_or(if batch { BATCH_K } else { 10 });
    let k = result_count("--k", k_flag)?;
    let bm25 = bm25_flags(args.k1, args.b)?;
    if vectors_only {
        if args.ranking.arm.is_some() || args.ranking.fuse.is_some() {
            bail!("--arm and --fuse rank query texts: give them with --queries");
        }
        return run_vectors(
            args,
            args.ranking
                .query_vectors
                .as_deref()
                .unwrap_or(Path::new("")),
            k,
        );
    }
    let retrieval = args.ranking.retrieval(bm25, k, false)?;
    if batch {
        return run_batch(args, &retrieval);
    }
    let query = query_text(args)?;
    let index = Index::open(&args.index)?;
    let searcher = index.searcher();
    let hits = retrieval.rank(&searcher, "", &query)?;
    let why_empty = if hits.is_empty() {
        Some(why_empty(&index, &searcher, &retrieval, &query)?)
    } else {
        None
    };
    let single = (retrieval.streams.len() == 1 && args.ranking.fuse.is_none())
        .then(|| retrieval.stream_settings()[0].clone());
    if args.json {
        let result = JsonResult {
            query: &query,
            k: k_flag,
            ranking: retrieval.describe(),
            streams: retrieval.stream_settings(),
            k1: single.as_ref().and_then(|s| s.k1),
            b: single.as_ref().and_then(|s| s.b),
            hits: hits
                .iter()
                .enumerate()
                .map(|(i, h)| JsonHit {
                    rank: i + 1,
                    id: &h.id,
                    score: h.score,
                    title: &h.title,
                })
                .collect(),
            why_empty,
        };
        crate::outln!("{}", serde_json::to_string(&result)?);
        return Ok(());
    }
    crate::outln!("ranking: {}", retrieval.describe());
    if let Some(why) = why_empty {
        crate::outln!("no hits: {why}");
    }
    for (i, RankedHit { id, title, score }) in hits.iter().enumerate() {
        crate::outln!(
            "{:>3}  {:<24} {:>9.4}  {}",
            i + 1,
            escape_controls(id),
            score,
            escape_controls(title)
        );
    }
    Ok(())
}

/// `--queries FILE --run-out FILE`: every query's ranking, written as a TREC run.
fn run_batch(args: &SearchArgs, retrieval: &Retrieval) -> anyhow::Result<()> {
    let (Some(path), Some(run_out)) = (&args.queries, &args.run_out) else {
        bail!("--queries needs --run-out");
    };
    let queries = crate::formats::read_unique_topics(path)?;
    let index = Index::open(&args.index)?;
    let searcher = index.searcher();
    let started = Instant::now();
    let mut progress = Progress::new("search");
    let mut run = Run::new();
    for (i, q) in queries.iter().enumerate() {
        let entries = retrieval.run_query(&searcher, &q.id, &q.text)?;
        if !entries.is_empty() {
            run.insert(&q.id, entries)?;
        }
        progress.tick(|| format!("{} of {}", i + 1, plural(queries.len() as u64, "query")));
    }
    let seconds = started.elapsed().as_secs_f64();
    run.write_trec_file(run_out, &args.tag)?;
    let empty = queries.len() - run.len();
    if args.json {
        let out = json!({
            "index": args.index.display().to_string(),
            "queries_file": path.display().to_string(),
            "queries": queries.len(),
            "queries_without_hits": empty,
            "k": retrieval.hits,
            "ranking": retrieval.describe(),
            "streams": retrieval.stream_settings(),
            "run_file": run_out.display().to_string(),
            "seconds": seconds,
        });
        crate::outln!("{}", serde_json::to_string(&out)?);
        return Ok(());
    }
    crate::outln!("ranking: {}", retrieval.describe());
    crate::outln!(
        "{} from {} ({} without hits), {:.2} s",
        plural(queries.len() as u64, "query"),
        path.display(),
        empty,
        seconds
    );
    crate::outln!("run file: {}", run_out.display());
    Ok(())
}

/// `--query-vectors FILE --run-out FILE` without --queries: every query vector's nearest
/// documents by inner product, written as a TREC run (no query text needed), searched
/// as `--vector-search` says (IVF by default, as every vector arm; exact: the oracle).
fn run_vectors(args: &SearchArgs, path: &Path, k: usize) -> anyhow::Result<()> {
    let Some(run_out) = &args.run_out else {
        bail!("--query-vectors needs --run-out");
    };
    let index = Index::open(&args.index)?;
    let Some(dim) = index.vector_dim() else {
        bail!(
            "{}: stores no vectors (build it with `index --vectors`)",
            args.index.display()
        );
    };
    let queries = crate::vectors::read_query_vectors(path, Some(dim))?;
    let searcher = index.searcher();
    let started = Instant::now();
    let mut progress = Progress::new("search");
    let mut run = Run::new();
    let effort = args.ranking.effort();
    for (i, (id, vector)) in queries.iter().enumerate() {
        let hits = match effort {
            Some(effort) => {
                searcher.search_vector(vector, &heddle::VectorSearchOptions { k, effort })
            }
            None => searcher.search_vector_exact(vector, k),
        };
        let entries: Vec<RunEntry> = hits
            .with_context(|| format!("query {id:?} of {}", path.display()))?
            .into_iter()
            .map(|hit| RunEntry::new(hit.id, hit.score))
            .collect();
        if !entries.is_empty() {
            run.insert(id, entries)?;
        }
        progress.tick(|| format!("{} of {}", i + 1, plural(queries.len() as u64, "query")));
    }
    let seconds = started.elapsed().as_secs_f64();
    run.write_trec_file(run_out, &args.tag)?;
    let ranking = match effort {
        Some(heddle::SearchEffort::Candidates(ef)) => {
            format!("inner product of {dim}-dimensional vectors, HNSW ef {ef} (approximate)")
        }
        Some(heddle::SearchEffort::Exhaustive) => {
            format!("inner product of {dim}-dimensional vectors, every row scored")
        }
        None => format!("exact inner product of {dim}-dimensional vectors"),
    };
    if args.json {
        let out = json!({
            "index": args.index.display().to_string(),
            "query_vectors_file": path.display().to_string(),
            "queries": queries.len(),
            "k": k,
            "ranking": ranking,
            "run_file": run_out.display().to_string(),
            "seconds": seconds,
        });
        crate::outln!("{}", serde_json::to_string(&out)?);
        return Ok(());
    }
    crate::outln!("ranking: {ranking}");
    crate::outln!(
        "{} from {}, {:.2} s",
        plural(queries.len() as u64, "query vector"),
        path.display(),
        seconds
    );
    crate::outln!("run file: {}", run_out.display());
    Ok(())
}

/// Why `query` found nothing: it has no words, only stop words, or none of its terms is
/// in the index.
fn why_empty(
    index: &Index,
    searcher: &Searcher,
    retrieval: &Retrieval,
    query: &str,
) -> anyhow::Result<String> {
    let analyzer = index.analyzer();
    let mut terms = analyzer.tokens(query);
    if terms.is_empty() {
        return Ok(match analyzer.only_stop_words(query) {
            Some(stop_words) => format!(
                "every word of the query is a stop word of the index's analyzer ({}): {}",
                analyzer.config().name,
                escape_controls(&stop_words.join(", "))
            ),
            None => format!(
                "the query has no words to search for once analysed ({}: stop words, and \
                 words longer than {} characters, are dropped)",
                analyzer.config().name,
                analyzer.config().max_token_chars
            ),
        });
    }
    terms.sort();
    terms.dedup();
    let fields: Vec<Field> = retrieval
        .streams
        .iter()
        .filter_map(|s| match s {
            StreamSpec::Bm25 { field, .. } => Some(*field),
            StreamSpec::Vector => None,
        })
        .collect();
    let mut present = false;
    for t in &terms {
        for &f in &fields {
            present |= searcher.doc_freq(f, t)? > 0;
        }
    }
    if !present {
        return Ok(format!(
            "no document contains any of: {} (the query's terms after analysis)",
            escape_controls(&terms.join(", "))
        ));
    }
    Ok(format!("no documents match {query:?}"))
}

/// The query from `--query`, the words, or stdin (no words, or `-`).
fn query_text(args: &SearchArgs) -> anyhow::Result<String> {
    if let Some(text) = &args.query_text {
        return Ok(text.clone());
    }
    if !(args.query.is_empty() || args.query == ["-"]) {
        return Ok(args.query.join(" "));
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        bail!("no query: give its words, --query TEXT, or pipe it on stdin");
    }
    let mut bytes = Vec::new();
    stdin
        .lock()
        .take(MAX_STDIN_QUERY_BYTES + 1)
        .read_to_end(&mut bytes)
        .context("reading the query from stdin")?;
    if bytes.len() as u64 > MAX_STDIN_QUERY_BYTES {
        bail!("the query on stdin is longer than {MAX_STDIN_QUERY_BYTES} bytes");
    }
    String::from_utf8(bytes).context("the query on stdin is not UTF-8")
}
