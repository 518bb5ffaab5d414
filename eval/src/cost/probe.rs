//! The side of `cost` that runs under callgrind (`cost --probe`): opens the index, says
//! which query it will run in which order and of what class (the plan), warms up, then
//! runs each query once through [`heddle_cost_query`], the only function callgrind
//! collects in. Nothing here is timed: callgrind counts.

use std::path::{Path, PathBuf};

use anyhow::Context;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::bench::sequential::per_query::df_class;
use crate::bench::{Backend, BackendFactory, HeddleFactory};

/// One query of the plan, in the order it is measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Planned {
    pub query: String,
    /// `frequent+rare`, `all-rare`, … (see the sequential pass's per-query report).
    pub df_class: String,
    /// Distinct terms as the index analyses the query.
    pub terms: usize,
}

/// The seed of [`query_set`]'s sample: fixed, so that every build and every machine
/// counts the same queries.
pub const SAMPLE_SEED: u64 = 35;

/// What is counted: `count` queries of the file. Every query in the file's order when
/// it holds at most `count` (cycling when it holds fewer); otherwise `count` of them
/// drawn with [`SAMPLE_SEED`] and kept in the file's order, so that a file grouped by
/// class (as `heddle-corpus queries` writes one) gives every class its share rather
/// than its first class only. Fixed: the same file and count give the same set.
pub fn query_set(queries: &Path, count: usize) -> anyhow::Result<Vec<String>> {
    let texts: Vec<String> = crate::formats::read_topics(queries)?
        .into_iter()
        .map(|q| q.text)
        .collect();
    anyhow::ensure!(!texts.is_empty(), "{} holds no queries", queries.display());
    Ok(pick(texts, count))
}

fn pick(texts: Vec<String>, count: usize) -> Vec<String> {
    if count >= texts.len() {
        return (0..count).map(|i| texts[i % texts.len()].clone()).collect();
    }
    let mut rng = ChaCha8Rng::seed_from_u64(SAMPLE_SEED);
    let mut chosen = rand::seq::index::sample(&mut rng, texts.len(), count).into_vec();
    chosen.sort_unstable();
    chosen.into_iter().map(|i| texts[i].clone()).collect()
}

/// The measured function: one query, start to finish, as `bench` runs it (a snapshot
/// taken, the query analysed, scored, the top `k` collected and their ids returned). It
/// is a symbol of its own, never inlined, so that callgrind's `--toggle-collect` and
/// `--dump-after` can name it.
#[unsafe(no_mangle)]
#[inline(never)]
pub fn heddle_cost_query(backend: &dyn Backend, query: &str, k: usize) -> anyhow::Result<usize> {
    backend.search(query, k).map(|ids| ids.len())
}

/// The probe's settings, as `cost --probe` passes them.
#[derive(Debug, Clone)]
pub struct ProbeSpec {
    pub index: PathBuf,
    pub queries: PathBuf,
    pub count: usize,
    pub warmup: usize,
    pub k: usize,
    /// Where the plan is written (JSON, before anything is measured).
    pub plan: PathBuf,
}

/// Runs the probe: plan, warm-up (the first `warmup` queries of the set, not
/// collected), then every query once through [`heddle_cost_query`].
///
/// All of it on a thread of its own. The main thread's stack and heap begin just past
/// the program's arguments and environment, so a path one byte longer shifted every
/// buffer's alignment, and memcpy and memset take other paths on other alignments: two
/// counts of one build on the same queries differed by 100–300 instructions a query
/// (0.006% of the synthetic set) when only the length of a file name differed. A
/// thread's stack is mapped afresh, and glibc gives its allocations an arena of their
/// own, so neither depends on what the process was started with.
pub fn run(spec: &ProbeSpec) -> anyhow::Result<()> {
    let spec = spec.clone();
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || run_here(&spec))
        .context("starting the probe's thread")?
        .join()
        .map_err(|_| anyhow::anyhow!("the probe's thread panicked"))?
}

fn run_here(spec: &ProbeSpec) -> anyhow::Result<()> {
    let backend = HeddleFactory::default().open(&spec.index)?;
    let set = query_set(&spec.queries, spec.count)?;
    let mut plan = Vec::with_capacity(set.len());
    for q in &set {
        let shares = backend.term_shares(q)?.unwrap_or_default();
        plan.push(Planned {
            query: q.clone(),
            df_class: df_class(&shares).to_string(),
            terms: shares.len(),
        });
    }
    let text = serde_json::to_string(&plan)?;
    std::fs::write(&spec.plan, text)
        .with_context(|| format!("writing the plan {}", spec.plan.display()))?;
    for q in set.iter().take(spec.warmup) {
        backend.search(q, spec.k)?;
    }
    for (i, q) in set.iter().enumerate() {
        let n = heddle_cost_query(backend.as_ref(), std::hint::black_box(q), spec.k)
            .with_context(|| format!("query {} ({q:?})", i + 1))?;
        std::hint::black_box(n);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_smaller_count_samples_every_part_of_a_grouped_file_in_its_order() {
        // Five classes of 200 queries, grouped as `heddle-corpus queries` writes them.
        let texts: Vec<String> = (0..1000).map(|i| format!("c{} q{i}", i / 200)).collect();
        let set = pick(texts.clone(), 200);
        assert_eq!(set, pick(texts.clone(), 200), "fixed by the seed");
        assert_eq!(set.len(), 200);
        let index = |q: &String| texts.iter().position(|t| t == q).unwrap();
        assert!(
            set.windows(2).all(|w| index(&w[0]) < index(&w[1])),
            "in the file's order, each once"
        );
        for class in 0..5 {
            let n = set
                .iter()
                .filter(|q| q.starts_with(&format!("c{class} ")))
                .count();
            assert!((20..=60).contains(&n), "class {class}: {n} of 200");
        }
    }

    #[test]
    fn a_count_beyond_the_file_takes_it_all_in_order_and_cycles() {
        let texts: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        assert_eq!(pick(texts.clone(), 3), texts);
        assert_eq!(pick(texts, 5), ["a", "b", "c", "a", "b"]);
    }
}
