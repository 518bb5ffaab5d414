//! Times each query of a file by both top-k paths, to see where one beats the other:
//! `text_paths INDEX QUERIES.txt K [REPEATS]` (one query a line) prints, a line a query,
//! the document count of its most frequent term, then the best of REPEATS (default 5)
//! runs' microseconds by MaxScore and by term at a time, and checks that both give the
//! same ranking. Stored fields are never read.

use std::time::Instant;

use heddle::{Field, Index, SearchOptions, TopKPath};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        return Err("usage: text_paths INDEX QUERIES.txt K [REPEATS]".into());
    }
    let index = Index::open(&args[1])?;
    let queries = std::fs::read_to_string(&args[2])?;
    let k: usize = args[3].parse()?;
    let repeats: usize = args.get(4).map_or(Ok(5), |r| r.parse())?;
    let searcher = index.searcher();
    let opts = SearchOptions {
        k,
        ..Default::default()
    };
    println!("max_df\tmaxscore_us\ttaat_us\tquery");
    for q in queries.lines().filter(|l| !l.trim().is_empty()) {
        let mut most = 0;
        for t in index.analyzer().tokens(q) {
            most = most.max(searcher.doc_freq(Field::Flat, &t)?);
        }
        let mut best = [f64::INFINITY; 2];
        let mut answers = [Vec::new(), Vec::new()];
        for _ in 0..repeats {
            for (i, path) in [TopKPath::MaxScore, TopKPath::TermAtATime]
                .into_iter()
                .enumerate()
            {
                let started = Instant::now();
                answers[i] = searcher.search_docs_by(q, &opts, path)?;
                best[i] = best[i].min(started.elapsed().as_secs_f64() * 1e6);
            }
        }
        let bits = |a: &[(u64, f64)]| -> Vec<(u64, u64)> {
            a.iter().map(|&(d, s)| (d, s.to_bits())).collect()
        };
        if bits(&answers[0]) != bits(&answers[1]) {
            return Err(format!("the two paths ranked {q:?} differently").into());
        }
        println!("{most}\t{:.0}\t{:.0}\t{q}", best[0], best[1]);
    }
    Ok(())
}
