//! Microbenchmarks of the postings codec: decoding whole lists and seeking in them.
//! `cargo bench -p heddle --bench postings`. Numbers are for comparing versions of the
//! codec on one machine, not claims (docs/PERF.md).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use heddle::bench_support::{decode_all, encode, seek_all};

/// A list of `df` postings spread over `1..=gap_max` gaps, tfs mostly small.
fn list(df: usize, gap_max: u32) -> (Vec<u32>, Vec<u32>) {
    let mut state = 0x9e3779b97f4a7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut doc = 0u32;
    let mut docs = Vec::with_capacity(df);
    let mut tfs = Vec::with_capacity(df);
    for _ in 0..df {
        doc += 1 + (next() % gap_max as u64) as u32;
        docs.push(doc);
        tfs.push(1 + (next() % 100).saturating_sub(80) as u32);
    }
    (docs, tfs)
}

fn decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode");
    for (df, gap) in [(1_000usize, 100u32), (100_000, 2), (100_000, 50)] {
        let (docs, tfs) = list(df, gap);
        let bytes = encode(&docs, &tfs);
        group.throughput(Throughput::Elements(df as u64));
        group.bench_with_input(
            BenchmarkId::new(format!("gap{gap}"), df),
            &bytes,
            |b, bytes| b.iter(|| decode_all(bytes, df as u32)),
        );
    }
    group.finish();
}

fn seek(c: &mut Criterion) {
    let mut group = c.benchmark_group("seek");
    let df = 100_000usize;
    let (docs, tfs) = list(df, 10);
    let bytes = encode(&docs, &tfs);
    let last = *docs.last().unwrap();
    for stride in [50u32, 1_000, 20_000] {
        let targets: Vec<u32> = (0..last).step_by(stride as usize).collect();
        group.throughput(Throughput::Elements(targets.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("stride", stride),
            &targets,
            |b, targets| b.iter(|| seek_all(&bytes, df as u32, targets)),
        );
    }
    group.finish();
}

criterion_group!(benches, decode, seek);
criterion_main!(benches);
