//! The synthetic corpus end to end: determinism, TREC-COVID shape, Zipf and Heaps laws,
//! and that what it writes reads back through the BEIR readers.

use heddle::{Analyzer, AnalyzerConfig};
use heddle_corpus::beir::{CorpusReader, Query, QueryReader};
use heddle_corpus::queries::{BANDS, DfTable, question_queries};
use heddle_corpus::stats::corpus_stats;
use heddle_corpus::synth::{Generator, GeneratorConfig, LengthModel, WordModel, learn};

const DOCS: u64 = 3_000;

fn generator(model: WordModel, seed: u64) -> Generator {
    Generator {
        model,
        lengths: LengthModel::trec_covid(),
        config: GeneratorConfig {
            docs: DOCS,
            seed,
            ..GeneratorConfig::default()
        },
    }
}

fn corpus_bytes(g: &Generator) -> Vec<u8> {
    g.write_corpus(Vec::new(), &mut |_, _| {}).unwrap().1
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let a = corpus_bytes(&generator(WordModel::builtin(), 7));
    let b = corpus_bytes(&generator(WordModel::builtin(), 7));
    let c = corpus_bytes(&generator(WordModel::builtin(), 8));
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn builtin_corpus_has_trec_covid_shape_zipf_words_and_growing_vocabulary() {
    let bytes = corpus_bytes(&generator(WordModel::builtin(), 7));
    let docs: Vec<_> = CorpusReader::new(bytes.as_slice(), "synth/corpus.jsonl")
        .collect::<Result<_, _>>()
        .expect("the generated corpus reads back without error");
    assert_eq!(docs.len() as u64, DOCS);
    let analyzer = Analyzer::new(AnalyzerConfig::plain());
    let stats = corpus_stats(docs.iter().cloned().map(Ok), &analyzer, 10).unwrap();

    // Mean length within 10% of TREC-COVID's 160.8 words, with a long right tail.
    assert!(
        (stats.mean_len - 160.8).abs() < 16.08,
        "mean {}",
        stats.mean_len
    );
    assert!(stats.p99_len > 2 * stats.median_len, "{stats}");
    let empty = stats.empty_texts as f64 / DOCS as f64;
    assert!((0.015..0.05).contains(&empty), "empty texts {empty}");

    // Rank-frequency close to a power law with a natural-text exponent.
    let zipf = stats.zipf.expect("enough ranks to fit");
    assert!((0.8..1.3).contains(&zipf.exponent), "{zipf:?}");
    assert!(zipf.r_squared > 0.95, "{zipf:?}");

    // Heaps: the vocabulary keeps growing as a power of the tokens, not flattening.
    let heaps = stats.heaps.expect("enough samples to fit");
    assert!((0.45..0.9).contains(&heaps.exponent), "{heaps:?}");
    let half = corpus_stats(docs[..docs.len() / 2].iter().cloned().map(Ok), &analyzer, 0).unwrap();
    let growth = stats.vocabulary as f64 / half.vocabulary as f64;
    assert!(
        growth > 1.35,
        "doubling the corpus grew the vocabulary {growth:.2}x"
    );
}

#[test]
fn a_corpus_like_another_matches_its_vocabulary_and_zipf_exponent() {
    // The reference corpus is itself generated, so the test needs no downloaded data.
    let reference = corpus_bytes(&generator(WordModel::builtin(), 1));
    let read = || CorpusReader::new(reference.as_slice(), "reference/corpus.jsonl");
    let learned = learn(read()).unwrap();
    let like = Generator {
        model: WordModel::from_learned(&learned, "reference"),
        lengths: LengthModel::Empirical(learned.lengths.clone()),
        config: GeneratorConfig {
            docs: DOCS,
            seed: 2,
            ..GeneratorConfig::default()
        },
    };
    let copy = corpus_bytes(&like);
    let analyzer = Analyzer::new(AnalyzerConfig::plain());
    let real = corpus_stats(read(), &analyzer, 0).unwrap();
    let synth = corpus_stats(CorpusReader::new(copy.as_slice(), "copy"), &analyzer, 0).unwrap();
    assert!(
        (synth.mean_len / real.mean_len - 1.0).abs() < 0.05,
        "{synth}\n{real}"
    );
    let vocab_ratio = synth.vocabulary as f64 / real.vocabulary as f64;
    assert!((0.85..1.15).contains(&vocab_ratio), "{synth}\n{real}");
    let (zs, zr) = (synth.zipf.unwrap().exponent, real.zipf.unwrap().exponent);
    assert!((zs - zr).abs() < 0.1, "zipf {zs} vs {zr}");
}

#[test]
fn fifty_questions_average_ten_point_six_words_of_corpus_terms() {
    let g = generator(WordModel::builtin(), 7);
    let (generated, bytes) = g.write_corpus(Vec::new(), &mut |_, _| {}).unwrap();
    let table = generated.df_table(&g.model);
    let queries = question_queries(&table, 50, 7).unwrap();

    let mut out = heddle_corpus::beir::QueriesWriter::new(Vec::new());
    for q in &queries {
        out.write(q).unwrap();
    }
    let back: Vec<Query> = QueryReader::new(out.finish().unwrap().as_slice(), "q")
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(back, queries);

    let analyzer = Analyzer::new(AnalyzerConfig::plain());
    let words: usize = queries.iter().map(|q| analyzer.tokens(&q.text).len()).sum();
    assert_eq!(words, 530, "mean 10.6 words");

    // The generator's own df table agrees with one counted from the written corpus, and
    // every content word of every query lies in one of the bands.
    let counted =
        DfTable::from_corpus(CorpusReader::new(bytes.as_slice(), "c"), &analyzer).unwrap();
    let in_bands: Vec<&str> = BANDS
        .iter()
        .flat_map(|b| counted.band_terms(b))
        .map(|(t, _)| t)
        .collect();
    let template_words: Vec<&str> = heddle_corpus::queries::TEMPLATES
        .iter()
        .flat_map(|t| t.split(' '))
        .collect();
    for q in &queries {
        for w in q.text.split(' ').filter(|w| !template_words.contains(w)) {
            assert!(in_bands.contains(&w), "{w:?} of {q:?} is not in a df band");
        }
    }
}
