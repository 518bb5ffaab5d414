//! Runs every query of a file against an index, a number of times: a fixed workload for
//! `valgrind --tool=callgrind` (instruction counts are stable on a noisy machine) and
//! `perf record`. Usage: `query_loop INDEX QUERIES.txt [REPEATS] [K] [exhaustive]` (one
//! query a line; `exhaustive` runs the oracle instead of the pruned path).

use heddle::{Index, SearchOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        return Err("usage: query_loop INDEX QUERIES.txt [REPEATS] [K]".into());
    }
    let index = Index::open(&args[1])?;
    let queries = std::fs::read_to_string(&args[2])?;
    let repeats: usize = args.get(3).map_or(Ok(1), |r| r.parse())?;
    let k: usize = args.get(4).map_or(Ok(10), |r| r.parse())?;
    let searcher = index.searcher();
    let opts = SearchOptions {
        k,
        ..Default::default()
    };
    let exhaustive = args.get(5).is_some_and(|a| a == "exhaustive");
    let mut hits = 0usize;
    for _ in 0..repeats {
        for q in queries.lines().filter(|l| !l.trim().is_empty()) {
            hits += if exhaustive {
                searcher.search_exhaustive(q, &opts)?.len()
            } else {
                searcher.search(q, &opts)?.len()
            };
        }
    }
    println!("{hits} hits");
    Ok(())
}
