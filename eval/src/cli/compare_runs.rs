//! `heddle-eval compare-runs A.run B.run --qrels FILE`: is B better than A, query by
//! query, with a paired bootstrap interval on the difference of each metric.

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use crate::progress::plural;
use crate::quality::{self, DEFAULT_RESAMPLES, DEFAULT_SEED, MAX_RESAMPLES, Run};

#[derive(Debug, Args)]
pub struct CompareRunsArgs {
    /// The baseline run (TREC format).
    pub a: PathBuf,
    /// The run compared with it.
    pub b: PathBuf,
    /// Judgments: BEIR qrels .tsv (or a BEIR directory) or TREC qrels (qid iter docid
    /// rel), told apart by their content. Every query in it is compared.
    #[arg(long)]
    pub qrels: PathBuf,
    /// Measures to compare, repeatable or comma-separated, named as for `quality -m`
    /// (ndcg_cut.10, map, map_cut.100, recip_rank, MRR@10, P.10, recall.100, ...).
    /// Default: nDCG@10 and R@100.
    #[arg(short = 'm', long = "metric", value_name = "MEASURE")]
    pub metrics: Vec<String>,
    /// Bootstrap resamples, from 1 to 1000000.
    #[arg(long, default_value_t = DEFAULT_RESAMPLES)]
    pub resamples: usize,
    /// The bootstrap's seed (fixed, so that the interval is reproducible).
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Print one JSON object instead of a table (measures under trec_eval's names).
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &CompareRunsArgs) -> anyhow::Result<()> {
    if args.resamples == 0 {
        anyhow::bail!("--resamples must be at least 1");
    }
    if args.resamples > MAX_RESAMPLES {
        anyhow::bail!(
            "--resamples {} is more than the {MAX_RESAMPLES} allowed (each is kept in memory)",
            args.resamples
        );
    }
    let metrics = super::quality::metrics_flag(&args.metrics)?;
    let qrels = quality::read_qrels(&args.qrels)?;
    let a = quality::evaluate(&Run::read_trec_file(&args.a)?, &qrels, &metrics);
    let b = quality::evaluate(&Run::read_trec_file(&args.b)?, &qrels, &metrics);
    let comparisons = quality::compare(&a, &b, args.resamples, args.seed)?;
    if args.json {
        let metrics: Vec<_> = comparisons
            .iter()
            .map(|c| {
                json!({
                    "metric": c.metric.trec_name(),
                    "a": c.mean_a,
                    "b": c.mean_b,
                    "diff": c.diff.mean,
                    "ci95": [c.diff.low, c.diff.high],
                    "excludes_zero": c.diff.excludes_zero(),
                    "won": c.won,
                    "lost": c.lost,
                    "tied": c.tied,
                })
            })
            .collect();
        let out = json!({
            "a": args.a.display().to_string(),
            "b": args.b.display().to_string(),
            "queries": a.queries(),
            "resamples": args.resamples,
            "seed": args.seed,
            "metrics": metrics,
        });
        crate::outln!("{}", serde_json::to_string(&out)?);
        return Ok(());
    }
    crate::outln!("A: {}", args.a.display());
    crate::outln!("B: {}", args.b.display());
    crate::outln!(
        "{} (every query in {}); 95% interval of B − A by paired bootstrap, {} resamples, seed {}",
        plural(a.queries() as u64, "query"),
        args.qrels.display(),
        args.resamples,
        args.seed
    );
    crate::outln!(
        "{:<8} {:>7} {:>7} {:>8}  {:<20} {:>14}",
        "metric",
        "A",
        "B",
        "B − A",
        "95% interval",
        "won/lost/tied"
    );
    for c in &comparisons {
        crate::outln!(
            "{:<8} {:>7.4} {:>7.4} {:>+8.4}  [{:+.4}, {:+.4}]{} {:>14}",
            c.metric.label(),
            c.mean_a,
            c.mean_b,
            shown(c.diff.mean),
            shown(c.diff.low),
            shown(c.diff.high),
            if c.diff.excludes_zero() { " *" } else { "  " },
            format!("{}/{}/{}", c.won, c.lost, c.tied)
        );
    }
    // The footnote explains a mark, so it is printed only under a table that has one.
    if comparisons.iter().any(|c| c.diff.excludes_zero()) {
        crate::outln!("* the interval excludes zero");
    } else {
        crate::outln!("no interval excludes zero");
    }
    Ok(())
}

/// A difference as printed to 4 places: one that rounds to zero is +0.0000, never
/// -0.0000 (differences of queries that cancel leave a rounding error of either sign).
fn shown(x: f64) -> f64 {
    if x.abs() < 5e-5 { 0.0 } else { x }
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn a_difference_that_rounds_to_zero_prints_without_a_minus() {
        assert_eq!(format!("{:+.4}", -1e-17), "-0.0000", "the case this guards");
        assert_eq!(format!("{:+.4}", shown(-1e-17)), "+0.0000");
        assert_eq!(format!("{:+.4}", shown(-0.0)), "+0.0000");
        assert_eq!(format!("{:+.4}", shown(-0.00012)), "-0.0001");
    }
}
