//! Block-max MaxScore and the term-at-a-time sums (and the plan that picks between them)
//! must return exactly what the exhaustive oracle returns: the same ids, the same scores
//! to the bit, the same tie order — on random corpora, lengths, queries, k, BM25
//! parameters and segment splits.

use heddle::{
    AnalyzerConfig, Bm25Params, BpConfig, Document, Index, IndexSettings, Reorder, SearchOptions,
    TopKPath,
};
use proptest::prelude::*;

const VOCAB: [&str; 24] = [
    "alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa", "lambda",
    "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi",
    "omega",
];

/// Word `i` with probability ∝ 1/(i+1)^1.1, from a uniform draw: a Zipf-like corpus so
/// lists range from a handful of postings to many full blocks.
fn zipf_word(u: f64) -> &'static str {
    let weights: Vec<f64> = (0..VOCAB.len())
        .map(|i| 1.0 / ((i + 1) as f64).powf(1.1))
        .collect();
    let total: f64 = weights.iter().sum();
    let mut acc = 0.0;
    for (i, w) in weights.iter().enumerate() {
        acc += w / total;
        if u < acc {
            return VOCAB[i];
        }
    }
    VOCAB[VOCAB.len() - 1]
}

/// One document's words: mostly short (0–39 words), sometimes long (64–300 words) or with
/// one word repeated 64–150 times, so lengths and tfs reach past 63, where the skip
/// table's one-byte bound codes stop being exact (a wrongly rounded code must fail here);
/// and sometimes of any length with the most frequent word once every few words, so its
/// tf grows with the length (as "webster" does in a dictionary: the documents whose
/// largest tf and smallest length sit in different postings, which the block bounds of
/// formats before 7 paired); and sometimes short with the pair [`MID_PAIR`] in it.
fn document_words() -> impl Strategy<Value = Vec<f64>> {
    prop_oneof![
        8 => prop::collection::vec(0.0f64..1.0, 0..40),
        1 => prop::collection::vec(0.0f64..1.0, 64..300),
        2 => (prop::collection::vec(0.0f64..1.0, 1..200), 3usize..12).prop_map(|(mut w, every)| {
            for u in w.iter_mut().step_by(every) {
                *u = 0.0; // VOCAB[0], the most frequent word
            }
            w
        }),
        1 => (0.0f64..1.0, 64usize..150, prop::collection::vec(0.0f64..1.0, 0..20))
            .prop_map(|(u, n, mut rest)| {
                rest.extend(std::iter::repeat_n(u, n));
                rest
            }),
        2 => prop::collection::vec(0.0f64..1.0, 0..30).prop_map(|mut w| {
            w.extend([MID_PAIR[0], MID_PAIR[1]].map(draw_of));
            w
        }),
    ]
}

/// Two mid-frequency words that the corpus puts together in many short documents, as
/// GCIDE's entries pair "syn" and "zool": close bounds, nearly every block of both able
/// to reach θ, the class the block-at-a-time range scan was built for.
const MID_PAIR: [usize; 2] = [9, 12];

/// A uniform draw that `zipf_word` turns into `VOCAB[i]`.
fn draw_of(i: usize) -> f64 {
    let weights: Vec<f64> = (0..VOCAB.len())
        .map(|j| 1.0 / ((j + 1) as f64).powf(1.1))
        .collect();
    let total: f64 = weights.iter().sum();
    let below: f64 = weights[..i].iter().sum::<f64>() / total;
    below + weights[i] / total / 2.0
}

fn corpus() -> impl Strategy<Value = Vec<Document>> {
    prop::collection::vec(document_words(), 1..900).prop_map(|docs| {
        docs.into_iter()
            .enumerate()
            .map(|(i, words)| {
                let text: Vec<&str> = words.into_iter().map(zipf_word).collect();
                Document::new(format!("d{i}"), "", text.join(" "))
            })
            .collect()
    })
}

/// Any words, or the class behind the tail of issue 14: the most frequent word with one
/// or two rare ones (only rare terms can lift θ above the frequent term's bound, so
/// pruning lives on its block bounds); or the co-occurring pair [`MID_PAIR`], alone or
/// with another word.
fn query() -> impl Strategy<Value = String> {
    let rare = VOCAB.len() - 8..VOCAB.len();
    prop_oneof![
        3 => prop::collection::vec(0..VOCAB.len(), 1..8),
        1 => prop::collection::vec(rare, 1..3).prop_map(|mut ws| {
            ws.insert(0, 0);
            ws
        }),
        1 => prop::collection::vec(0..VOCAB.len(), 0..2).prop_map(|mut ws| {
            ws.extend(MID_PAIR);
            ws
        }),
    ]
    .prop_map(|ws| {
        ws.into_iter()
            .map(|w| VOCAB[w])
            .collect::<Vec<_>>()
            .join(" ")
    })
}

#[test]
fn the_mid_pair_draws_give_its_two_words() {
    for i in MID_PAIR {
        assert_eq!(zipf_word(draw_of(i)), VOCAB[i]);
    }
}

fn check(docs: &[Document], segments: usize, queries: &[String], k: usize, bm25: Bm25Params) {
    check_with_deletes(docs, segments, &[], queries, k, bm25, false);
}

/// Segments reordered by BP, split small enough that these corpora get several levels.
fn bp() -> Reorder {
    Reorder::Bp(BpConfig {
        min_df: 2,
        min_partition: 8,
        ..BpConfig::default()
    })
}

/// `check`, after deleting in a last commit the documents at positions `deleted`
/// (modulo the corpus size) and, when there are any, each query's best few documents:
/// the ones a search that counted deleted documents would most wrongly rely on.
/// An empty index with the plain analyzer at `dir`.
fn plain_index(dir: &std::path::Path) -> Index {
    Index::create(
        dir,
        IndexSettings {
            analyzer: AnalyzerConfig::plain(),
            ..Default::default()
        },
    )
    .unwrap()
}

fn check_with_deletes(
    docs: &[Document],
    segments: usize,
    deleted: &[usize],
    queries: &[String],
    k: usize,
    bm25: Bm25Params,
    reorder: bool,
) {
    let dir = tempfile::tempdir().unwrap();
    let index = plain_index(dir.path());
    let mut writer = index.writer().unwrap();
    if reorder {
        writer.set_reorder(bp());
    }
    for chunk in docs.chunks(docs.len().div_ceil(segments)) {
        for d in chunk {
            writer.add(d.clone()).unwrap();
        }
        writer.commit().unwrap();
    }
    if !deleted.is_empty() {
        for &i in deleted {
            writer.delete(&docs[i % docs.len()].id);
        }
        let before = index.searcher();
        let best = SearchOptions {
            k: 3,
            ..Default::default()
        };
        for q in queries {
            for hit in before.search_exhaustive(q, &best).unwrap() {
                writer.delete(&hit.id);
            }
        }
        writer.commit().unwrap();
    }
    let searcher = index.searcher();
    let opts = SearchOptions {
        k,
        bm25,
        ..Default::default()
    };
    for q in queries {
        let planned = searcher.search(q, &opts).unwrap();
        let oracle = searcher.search_exhaustive(q, &opts).unwrap();
        let key = |hits: &[heddle::Hit]| -> Vec<(u64, u64)> {
            hits.iter().map(|h| (h.doc, h.score.to_bits())).collect()
        };
        assert_eq!(
            key(&planned),
            key(&oracle),
            "query {q:?}, k {k}, {bm25:?}, {segments} segments, reordered {reorder}"
        );
        // Each path on its own, whichever the plan would pick for this k.
        for path in [TopKPath::MaxScore, TopKPath::TermAtATime] {
            let docs = searcher.search_docs_by(q, &opts, path).unwrap();
            let docs: Vec<(u64, u64)> = docs.iter().map(|&(d, s)| (d, s.to_bits())).collect();
            assert_eq!(
                docs,
                key(&oracle),
                "{path:?}: query {q:?}, k {k}, {bm25:?}, {segments} segments, reordered {reorder}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_top_k_path_equals_exhaustive(
        docs in corpus(),
        segments in 1usize..4,
        queries in prop::collection::vec(query(), 1..6),
        k in prop_oneof![Just(1usize), Just(10), 1usize..60],
        k1 in prop_oneof![Just(1.2f64), Just(0.9), 0.0f64..3.0],
        b in prop_oneof![Just(0.75f64), Just(0.4), Just(0.0), Just(1.0), 0.0f64..=1.0],
        reorder in any::<bool>(),
    ) {
        check_with_deletes(&docs, segments, &[], &queries, k, Bm25Params { k1, b }, reorder);
    }
}

/// Corpora of 5,000–8,000 documents: the most frequent word's list runs to 16 blocks and
/// more (in each of up to two segments), so the search starts from a θ taken from its best blocks (`search::threshold`)
/// and skips ranges with cursors left pending (undecoded) between them. Deleted
/// documents must count for neither.
fn long_corpus() -> impl Strategy<Value = Vec<Document>> {
    prop::collection::vec(document_words(), 5000..8000).prop_map(|docs| {
        docs.into_iter()
            .enumerate()
            .map(|(i, words)| {
                let text: Vec<&str> = words.into_iter().map(zipf_word).collect();
                Document::new(format!("d{i}"), "", text.join(" "))
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, ..ProptestConfig::default() })]

    #[test]
    fn every_top_k_path_equals_exhaustive_on_long_lists_with_deletes(
        docs in long_corpus(),
        segments in 1usize..3,
        deleted in prop::collection::vec(0usize..8000, 0..400),
        queries in prop::collection::vec(query(), 1..8),
        k in prop_oneof![Just(1usize), Just(10), 1usize..200],
        k1 in prop_oneof![Just(1.2f64), 0.0f64..3.0],
        b in prop_oneof![Just(0.75f64), Just(0.0), Just(1.0), 0.0f64..=1.0],
        reorder in any::<bool>(),
    ) {
        // The frequent words alone too: there the best blocks hold the top k themselves,
        // so a starting θ even slightly too high drops one of them.
        let mut queries = queries;
        queries.extend(["alpha", "alpha beta"].map(String::from));
        check_with_deletes(&docs, segments, &deleted, &queries, k, Bm25Params { k1, b }, reorder);
    }
}

/// Many equal scores (identical documents) at the cut: ties must resolve to the lowest
/// internal ids, as in the oracle.
#[test]
fn ties_at_the_cut_resolve_like_the_oracle() {
    let docs: Vec<Document> = (0..700)
        .map(|i| {
            Document::new(
                format!("t{i}"),
                "",
                if i % 3 == 0 {
                    "alpha beta"
                } else {
                    "alpha gamma"
                },
            )
        })
        .collect();
    for k in [1, 5, 10, 200, 300] {
        for reorder in [false, true] {
            check_with_deletes(
                &docs,
                2,
                &[],
                &["alpha beta gamma".to_string(), "alpha".to_string()],
                k,
                Bm25Params::default(),
                reorder,
            );
        }
    }
}

#[test]
fn invalid_bm25_parameters_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let index = Index::create(dir.path(), IndexSettings::default()).unwrap();
    for bm25 in [
        Bm25Params { k1: -1.0, b: 0.5 },
        Bm25Params { k1: 1.0, b: 1.5 },
        Bm25Params {
            k1: f64::NAN,
            b: 0.5,
        },
    ] {
        let opts = SearchOptions {
            k: 10,
            bm25,
            ..Default::default()
        };
        assert!(matches!(
            index.searcher().search("x", &opts),
            Err(heddle::Error::InvalidArgument(_))
        ));
    }
}

/// A document of `tf` × "alpha" padded with "pad" to `len` words.
fn padded(id: usize, tf: usize, len: usize) -> Document {
    let mut words = vec!["alpha"; tf];
    words.resize(len, "pad");
    Document::new(format!("q{id}"), "", words.join(" "))
}

/// The skip table stores a block's largest tf and smallest length per occurrence (in
/// quarter tokens) as one-byte codes that are exact only below 64 (then …, 97, 103, …).
/// Two blocks of "alpha": the first's best document sets θ between what the second
/// block's best document scores and what a wrongly rounded code would let the second
/// block promise. Rounding the smallest ratio up (400 quarters → the next code) or the
/// largest tf down (100 → 97) skips the second block and loses the true top hit; the
/// right rounding keeps it.
#[test]
fn quantized_block_bounds_never_prune_a_better_document() {
    // By length: doc 0 has length 101 (θ), doc 200 length 100 (the answer), the rest 200.
    let by_length: Vec<Document> = (0..256)
        .map(|i| match i {
            0 => padded(i, 1, 101),
            200 => padded(i, 1, 100),
            _ => padded(i, 1, 200),
        })
        .collect();
    // By tf: doc 0 has tf 99 (θ), doc 200 tf 100 (the answer), the rest tf 1; the two
    // have the same 3 tokens per occurrence, so only the tf code tells their blocks apart.
    let by_tf: Vec<Document> = (0..256)
        .map(|i| match i {
            0 => padded(i, 99, 297),
            200 => padded(i, 100, 300),
            _ => padded(i, 1, 300),
        })
        .collect();
    for docs in [by_length, by_tf] {
        check(&docs, 1, &["alpha".to_string()], 1, Bm25Params::default());
        let dir = tempfile::tempdir().unwrap();
        let index = Index::create(dir.path(), IndexSettings::default()).unwrap();
        let mut writer = index.writer().unwrap();
        for d in &docs {
            writer.add(d.clone()).unwrap();
        }
        writer.commit().unwrap();
        let opts = SearchOptions {
            k: 1,
            ..Default::default()
        };
        let hits = index.searcher().search("alpha", &opts).unwrap();
        assert_eq!(hits[0].id, "q200", "the second block's best document");
    }
}

/// The non-essential lists' block bounds are reused for consecutive candidates up to the
/// end of the blocks they were read from, and not one doc further. "alpha" is in docs
/// 1–256 (two blocks: 1–128 at tf 1, then 129 at tf 20), "beta" in docs 0 (tf 2), 128 and
/// 129 (tf 1); b = 0, so only tf counts. With k = 1, doc 0 sets θ = B(2) ≈ 8.73, above
/// alpha's bound, so alpha is non-essential. Doc 128 is dropped on alpha's first-block
/// bound (B(1) + A(1) ≈ 8.40); doc 129 scores B(1) + A(20) ≈ 10.6 and is the answer, but
/// only if its candidate test reads alpha's second block rather than reusing the first's.
#[test]
fn block_bounds_are_not_reused_past_their_blocks() {
    let docs: Vec<Document> = (0..2000)
        .map(|i| {
            let text = match i {
                0 => "beta beta".to_string(),
                128 => "alpha beta".to_string(),
                129 => format!("beta {}", vec!["alpha"; 20].join(" ")),
                1..=256 => "alpha".to_string(),
                _ => "gamma".to_string(),
            };
            Document::new(format!("d{i}"), "", text)
        })
        .collect();
    let bm25 = Bm25Params { k1: 1.2, b: 0.0 };
    check(&docs, 1, &["alpha beta".to_string()], 1, bm25);
    // The scenario is the one described: doc 129 wins.
    let dir = tempfile::tempdir().unwrap();
    let index = plain_index(dir.path());
    let mut writer = index.writer().unwrap();
    for d in &docs {
        writer.add(d.clone()).unwrap();
    }
    writer.commit().unwrap();
    let opts = SearchOptions {
        k: 1,
        bm25,
        ..Default::default()
    };
    let hits = index
        .searcher()
        .search_exhaustive("alpha beta", &opts)
        .unwrap();
    assert_eq!(hits[0].id, "d129");
}

/// A range the essential list's block spans is skipped only if no document in it can
/// beat θ, and a non-essential list may have several blocks there: its first block's
/// bound speaks for that block alone. Here the first segment sets θ high; in the second,
/// "rare" (essential) has one block over thousands of documents, "common" (non-essential,
/// in every other document with tf 1) has its own blocks of 256 documents, and one
/// document in a later block of "common" (tf 8, short) beats θ. Counting only the
/// first "common" block's bound over the whole "rare" block skips it.
#[test]
fn a_non_essential_lists_later_blocks_count_within_a_range() {
    let filler = |n: usize| vec!["filler"; n].join(" ");
    let mut docs = Vec::new();
    for i in 0..4096 {
        let text = if i < 12 {
            format!("rare rare rare common common common {}", filler(6))
        } else {
            filler(20)
        };
        docs.push(Document::new(format!("a{i}"), "", text));
    }
    for i in 0..4096 {
        let text = if i == 1600 {
            format!("rare rare rare {}", ["common"; 8].join(" "))
        } else {
            let mut words = vec![filler(18)];
            if i % 2 == 0 {
                words.push("common".to_string());
            }
            if i % 16 == 0 {
                words.push("rare".to_string());
            }
            words.join(" ")
        };
        docs.push(Document::new(format!("b{i}"), "", text));
    }
    for k in [10, 12, 13] {
        check_with_deletes(
            &docs,
            2,
            &[],
            &["rare common".to_string()],
            k,
            Bm25Params::default(),
            false,
        );
    }
}
