//! Top-10 per query class (1-2 terms, 3-5, 6+, a frequent word with rare ones, and two
//! co-occurring mid-frequency words) on a generated Zipf corpus, pruned (block-max
//! MaxScore) against the exhaustive oracle.
//! `cargo bench -p heddle --bench topk`.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use heddle::{AnalyzerConfig, Document, Index, IndexSettings, SearchOptions};

const VOCAB: usize = 20_000;

/// Word for a Zipf rank: "w<rank>".
fn corpus(docs: usize) -> Vec<Document> {
    let mut state = 0x2545f4914f6cdd1du64;
    let mut uniform = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    // Inverse CDF of a Zipf(1.1) over VOCAB ranks, tabulated.
    let weights: Vec<f64> = (1..=VOCAB).map(|r| 1.0 / (r as f64).powf(1.1)).collect();
    let total: f64 = weights.iter().sum();
    let mut cdf = Vec::with_capacity(VOCAB);
    let mut acc = 0.0;
    for w in &weights {
        acc += w / total;
        cdf.push(acc);
    }
    (0..docs)
        .map(|i| {
            let len = 40 + (uniform() * 240.0) as usize;
            // Nine documents in ten cite "wx" once every 12 words, so its tf grows with
            // the length, as "webster" does in a dictionary (the class of issue 14).
            let cites = uniform() < 0.9;
            // One document in eight carries both "wa" and "wb" once, one in twenty only
            // "wa": two mid-frequency words that co-occur, as "syn" and "zool" do in
            // GCIDE (the `mixed` class that stayed slowest against tantivy).
            let pair = uniform();
            let mut text: Vec<String> = (0..len)
                .map(|j| {
                    let u = uniform();
                    if cites && j % 12 == 0 {
                        return "wx".to_string();
                    }
                    format!("w{}", cdf.partition_point(|&c| c < u))
                })
                .collect();
            if pair < 0.125 {
                text.extend(["wa".to_string(), "wb".to_string()]);
            } else if pair < 0.175 {
                text.push("wa".to_string());
            }
            Document::new(format!("d{i}"), "", text.join(" "))
        })
        .collect()
}

fn topk(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(
        dir.path(),
        IndexSettings {
            analyzer: AnalyzerConfig::plain(),
            per_field: false,
            ..Default::default()
        },
    )
    .unwrap();
    let mut writer = index.writer().unwrap();
    for d in corpus(50_000) {
        writer.add(d).unwrap();
    }
    writer.commit().unwrap();
    let searcher = index.searcher();
    // Mixed frequent and rare terms per class.
    let classes = [
        ("1-2 terms", vec!["w3 w250", "w17", "w40 w1200"]),
        (
            "3-5 terms",
            vec![
                "w2 w30 w400",
                "w5 w60 w700 w8000",
                "w1 w10 w100 w1000 w10000",
            ],
        ),
        (
            "6+ terms",
            vec![
                "w0 w4 w20 w90 w300 w900",
                "w1 w3 w9 w27 w81 w243 w729 w2187",
            ],
        ),
        (
            "frequent+rare",
            vec!["wx w5000", "wx w9000 w12000", "wx w3000", "wx w15000 w7000"],
        ),
        ("co-occurring", vec!["wa wb", "wb wa w40", "wa wb w3"]),
    ];
    let opts = SearchOptions::default();
    let mut group = c.benchmark_group("top10");
    for (class, queries) in &classes {
        group.bench_with_input(BenchmarkId::new("maxscore", class), queries, |b, qs| {
            b.iter(|| {
                qs.iter()
                    .map(|q| searcher.search(q, &opts).unwrap().len())
                    .sum::<usize>()
            })
        });
        group.bench_with_input(BenchmarkId::new("exhaustive", class), queries, |b, qs| {
            b.iter(|| {
                qs.iter()
                    .map(|q| searcher.search_exhaustive(q, &opts).unwrap().len())
                    .sum::<usize>()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, topk);
criterion_main!(benches);
