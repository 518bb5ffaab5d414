//! `heddle-eval quality`: nDCG@10 and recall@100 (or the `-m` measures) of an index on
//! judged queries, as `trec_eval -c -m ndcg_cut.10 -m recall.100` computes them, and the
//! run file to prove it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;
use heddle::{Bm25Params, Index};
use serde_json::json;

use super::display::{escape_controls, natural_cmp};
use super::ranking::{RankingArgs, bm25_flags, result_count};
use crate::progress::{plural, thousands};
use crate::quality::{self, METRICS, Metric, Retrieval, Run};

#[derive(Debug, Args)]
pub struct QualityArgs {
    /// The index to search (a directory built by `heddle-eval index`).
    #[arg(long)]
    pub index: PathBuf,
    /// Queries: BEIR queries.jsonl (or the directory holding it) or a TREC topics file
    /// (qid<TAB>text a line), told apart by their content.
    #[arg(long)]
    pub queries: PathBuf,
    /// Judgments: BEIR qrels .tsv (or a BEIR directory: qrels/test.tsv) or TREC qrels
    /// (qid iter docid rel), told apart by their content. Every query in it is evaluated.
    #[arg(long)]
    pub qrels: PathBuf,
    /// BM25 term-frequency saturation, from 0 to 1000 (Anserini's BEIR baselines use 0.9).
    #[arg(long, default_value_t = Bm25Params::default().k1)]
    pub k1: f64,
    /// BM25 length normalisation, from 0 to 1 (Anserini's BEIR baselines use 0.4).
    #[arg(long, default_value_t = Bm25Params::default().b)]
    pub b: f64,
    /// Measures to report, repeatable or comma-separated: ndcg_cut.K (nDCG@K), map (MAP),
    /// map_cut.K (MAP@K), recip_rank (MRR), MRR@K, P.K (P@K), recall.K (R@K); `P.5,10`
    /// is P@5 and P@10. Default: nDCG@10 and R@100.
    #[arg(short = 'm', long = "metric", value_name = "MEASURE")]
    pub metrics: Vec<String>,
    /// Drop a hit whose id equals the query id (pyserini's --remove-query for BEIR).
    #[arg(long)]
    pub remove_query: bool,
    /// Results kept per query (and written to --run-out), from 1 to 4294967295; a query
    /// never yields more than the index's live documents.
    #[arg(long, default_value_t = 1000)]
    pub hits: u64,
    #[command(flatten)]
    pub ranking: RankingArgs,
    /// Write a TREC run file (qid Q0 docid rank score tag), --hits lines a query.
    #[arg(long)]
    pub run_out: Option<PathBuf>,
    /// The run file's tag column.
    #[arg(long, default_value = "heddle")]
    pub tag: String,
    /// Print every query's figures too (text: query ids in natural order, 2 before 10).
    #[arg(long)]
    pub per_query: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write one self-contained HTML report here (means, every query, environment).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

pub fn run(args: &QualityArgs) -> anyhow::Result<()> {
    let retrieval = retrieval(args)?;
    let metrics = metrics_flag(&args.metrics)?;
    for (p, flag) in [(&args.run_out, "--run-out"), (&args.html, "--html")] {
        if let Some(p) = p {
            crate::output::check_file(p, flag)?;
        }
    }
    let mut environment = crate::env::Environment::capture(&args.index);
    let index = Index::open(&args.index)
        .with_context(|| format!("opening the index at {}", args.index.display()))?;
    let qrels = quality::read_qrels(&args.qrels)?;
    let texts = read_queries(&args.queries)?;
    let missing: Vec<&str> = qrels
        .keys()
        .filter(|q| !texts.contains_key(*q))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        bail!(
            "{} of {} {} judgments but no text in {}: {}{}",
            plural(missing.len() as u64, "query"),
            args.qrels.display(),
            if missing.len() == 1 { "has" } else { "have" },
            args.queries.display(),
            escape_controls(&missing[..missing.len().min(10)].join(", ")),
            if missing.len() > 10 { ", ..." } else { "" }
        );
    }

    let started = Instant::now();
    let searcher = index.searcher();
    let mut run = Run::new();
    for qid in qrels.keys() {
        let entries = retrieval.run_query(&searcher, qid, &texts[qid])?;
        run.insert(qid, entries)?;
    }
    let seconds = started.elapsed().as_secs_f64();
    let eval = quality::evaluate(&run, &qrels, &metrics);
    if let Some(path) = &args.run_out {
        run.write_trec_file(path, &args.tag)?;
    }

    let segments = index.segments();
    let tokens: u64 = segments.iter().map(|s| s.tokens.flat).sum();
    let terms = index.term_count();
    environment.finish();
    if let Some(path) = &args.html {
        let page = crate::html::quality_page(
            &args.index.display().to_string(),
            &retrieval.describe(),
            &eval,
            &texts,
            &environment,
        );
        page.write(path)?;
    }
    if args.json {
        let mut out = json!({
            "index": args.index.display().to_string(),
            "documents": index.num_docs(),
            "analyzer": index.analyzer().config().name,
            "flat_tokens": tokens,
            "flat_terms": terms,
            "ranking": retrieval.describe(),
            "streams": retrieval.stream_settings(),
            "queries": eval.queries(),
            "seconds": seconds,
        });
        for (m, metric) in eval.metrics.iter().enumerate() {
            out[metric.trec_name()] = json!(eval.mean(m));
        }
        if args.per_query {
            let per_query: serde_json::Map<String, serde_json::Value> = eval
                .per_query
                .iter()
                .map(|(q, v)| {
                    let fields: serde_json::Map<String, serde_json::Value> = eval
                        .metrics
                        .iter()
                        .zip(v)
                        .map(|(m, x)| (m.trec_name(), json!(x)))
                        .collect();
                    (q.clone(), serde_json::Value::Object(fields))
                })
                .collect();
            out["per_query"] = serde_json::Value::Object(per_query);
        }
        if let Some(path) = &args.run_out {
            out["run_file"] = json!(path.display().to_string());
        }
        out["environment"] = serde_json::to_value(&environment)?;
        crate::outln!("{}", serde_json::to_string(&out)?);
        return Ok(());
    }

    crate::outln!(
        "index {}: {} documents, analyzer {}; flat field after analysis: {} tokens, {} distinct terms",
        args.index.display(),
        thousands(index.num_docs()),
        index.analyzer().config().name,
        thousands(tokens),
        thousands(terms)
    );
    crate::outln!("ranking: {}", retrieval.describe());
    // Quality figures depend on the build alone, not on the machine: its line only.
    if let Some(build) = crate::env::render::header(&environment).first() {
        crate::outln!("{build}");
    }
    if args.per_query {
        let labels: Vec<String> = eval.metrics.iter().map(|m| m.label()).collect();
        let widths: Vec<usize> = labels.iter().map(|l| l.len().max(6)).collect();
        let header: Vec<String> = labels
            .iter()
            .zip(&widths)
            .map(|(l, w)| format!("{l:>w$}"))
            .collect();
        crate::outln!("{:<12} {}", "query", header.join("  "));
        let mut rows: Vec<(&String, &Vec<f64>)> = eval.per_query.iter().collect();
        rows.sort_by(|a, b| natural_cmp(a.0, b.0));
        for (qid, values) in rows {
            let cells: Vec<String> = values
                .iter()
                .zip(&widths)
                .map(|(v, w)| format!("{v:>w$.4}"))
                .collect();
            crate::outln!("{:<12} {}", escape_controls(qid), cells.join("  "));
        }
    }
    crate::outln!(
        "queries evaluated: {} (every query in {}; one without results scores 0), {:.2} s",
        eval.queries(),
        args.qrels.display(),
        seconds
    );
    let width = eval
        .metrics
        .iter()
        .map(|m| m.label().len())
        .max()
        .unwrap_or(0)
        .max(8);
    for (m, metric) in eval.metrics.iter().enumerate() {
        crate::outln!("{:<width$} {:.4}", metric.label(), eval.mean(m));
    }
    if let Some(path) = &args.run_out {
        crate::outln!("run file: {}", path.display());
    }
    Ok(())
}

/// `-m` values, or nDCG@10 and R@100 when there are none.
pub(super) fn metrics_flag(values: &[String]) -> anyhow::Result<Vec<Metric>> {
    if values.is_empty() {
        return Ok(METRICS.to_vec());
    }
    Metric::parse_list(values).context("-m/--metric")
}

fn retrieval(args: &QualityArgs) -> anyhow::Result<Retrieval> {
    let bm25 = bm25_flags(args.k1, args.b)?;
    let hits = result_count("--hits", args.hits)?;
    args.ranking.retrieval(bm25, hits, args.remove_query)
}

/// Query id → text. A query id given twice is an error (which text would count?).
fn read_queries(path: &std::path::Path) -> anyhow::Result<HashMap<String, String>> {
    Ok(crate::formats::read_unique_topics(path)?
        .into_iter()
        .map(|q| (q.id, q.text))
        .collect())
}
