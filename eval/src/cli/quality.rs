//! `heddle-eval quality`: nDCG@10 and recall@100 of an index on judged queries, as
//! `trec_eval -c -m ndcg_cut.10 -m recall.100` computes them, and the run file to prove it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;
use heddle::Index;
use serde_json::json;

use super::display::escape_controls;
use super::ranking::{RankingArgs, bm25_flags, result_count};
use crate::progress::thousands;
use crate::quality::{self, METRICS, Retrieval, Run};

#[derive(Debug, Args)]
pub struct QualityArgs {
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
    #[arg(long, default_value_t = 0.9)]
    pub k1: f64,
    /// BM25 length normalisation, from 0 to 1 (Anserini's BEIR baselines use 0.4).
    #[arg(long, default_value_t = 0.4)]
    pub b: f64,
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
    /// Print every query's figures too.
    #[arg(long)]
    pub per_query: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &QualityArgs) -> anyhow::Result<()> {
    let retrieval = retrieval(args)?;
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
            "{} queries of {} have judgments but no text in {}: {}{}",
            missing.len(),
            args.qrels.display(),
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
    let eval = quality::evaluate(&run, &qrels, &METRICS);
    if let Some(path) = &args.run_out {
        run.write_trec_file(path, &args.tag)?;
    }

    let segments = index.segments();
    let tokens: u64 = segments.iter().map(|s| s.tokens.flat).sum();
    let terms = index.term_count();
    environment.finish();
    if args.json {
        let mut out = json!({
            "index": args.index.display().to_string(),
            "documents": index.num_docs(),
            "analyzer": index.analyzer().config().name,
            "flat_tokens": tokens,
            "flat_terms": terms,
            "ranking": retrieval.describe(),
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
        println!("{}", serde_json::to_string(&out)?);
        return Ok(());
    }

    println!(
        "index {}: {} documents, analyzer {}; flat field after analysis: {} tokens, {} distinct terms",
        args.index.display(),
        thousands(index.num_docs()),
        index.analyzer().config().name,
        thousands(tokens),
        thousands(terms)
    );
    println!("ranking: {}", retrieval.describe());
    // Quality figures depend on the build alone, not on the machine: its line only.
    if let Some(build) = crate::env::render::header(&environment).first() {
        println!("{build}");
    }
    if args.per_query {
        let header: Vec<String> = eval.metrics.iter().map(|m| m.label()).collect();
        println!("{:<12} {}", "query", header.join("  "));
        for (qid, values) in &eval.per_query {
            let cells: Vec<String> = values.iter().map(|v| format!("{v:.4}")).collect();
            println!("{:<12} {}", escape_controls(qid), cells.join("   "));
        }
    }
    println!(
        "queries evaluated: {} (every query in {}; one without results scores 0), {:.2} s",
        eval.queries(),
        args.qrels.display(),
        seconds
    );
    for (m, metric) in eval.metrics.iter().enumerate() {
        println!("{:<8} {:.4}", metric.label(), eval.mean(m));
    }
    if let Some(path) = &args.run_out {
        println!("run file: {}", path.display());
    }
    Ok(())
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
