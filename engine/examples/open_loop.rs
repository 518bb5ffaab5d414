//! Opens an index again and again and reports the median open time: a fixed workload
//! for profiling `Index::open` (`perf record`, or `valgrind --tool=callgrind` for stable
//! instruction counts). The comparison with tantivy is `heddle-bench bench --open-only`.
//! Usage: `open_loop INDEX [OPENS]`.

use std::time::Instant;

use heddle::Index;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = args.get(1) else {
        return Err("usage: open_loop INDEX [OPENS]".into());
    };
    let opens: usize = args.get(2).map_or(Ok(101), |n| n.parse())?;
    let mut times = Vec::with_capacity(opens);
    for _ in 0..opens.max(1) {
        let t = Instant::now();
        let index = Index::open(dir)?;
        times.push(t.elapsed().as_secs_f64());
        drop(index);
    }
    times.sort_by(f64::total_cmp);
    let median = times[(times.len() - 1) / 2];
    println!(
        "{} opens: median {:.1} µs, min {:.1} µs, max {:.1} µs",
        times.len(),
        median * 1e6,
        times[0] * 1e6,
        times[times.len() - 1] * 1e6
    );
    Ok(())
}
