//! Query classes (`heddle-corpus queries --class`) on a synthetic corpus: each class's
//! queries obey its document-frequency rule, checked against document frequencies counted
//! here independently; the default output is byte-identical to the generator before
//! classes; a corpus that cannot make a class says which.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::Command;

use heddle::{Analyzer, AnalyzerConfig, Document};
use heddle_corpus::beir::{BeirError, CorpusReader, CorpusWriter, QueryReader};
use heddle_corpus::queries::{
    ClassError, ClassShare, ClassedQuery, LONG_WORDS, OPENERS, QueryClass, SampledStyle, TermStats,
    class_queries,
};
use heddle_corpus::synth::{Generator, GeneratorConfig, LengthModel, WordModel};

const DOCS: u64 = 2_000;

/// What `heddle-corpus synth --docs 2000` writes (seed 0).
fn synth_bytes() -> Vec<u8> {
    let g = Generator {
        model: WordModel::builtin(),
        lengths: LengthModel::trec_covid(),
        config: GeneratorConfig {
            docs: DOCS,
            seed: 0,
            ..GeneratorConfig::default()
        },
    };
    g.write_corpus(Vec::new(), &mut |_, _| {}).unwrap().1
}

fn synth_docs() -> Vec<Document> {
    CorpusReader::new(synth_bytes().as_slice(), "synth")
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Document frequencies, the plain way: the set of each document's tokens, counted.
fn naive_df(docs: &[Document], analyzer: &Analyzer) -> HashMap<String, u64> {
    let mut df = HashMap::new();
    for d in docs {
        let terms: HashSet<String> = analyzer
            .tokens(&d.title)
            .into_iter()
            .chain(analyzer.tokens(&d.text))
            .collect();
        for t in terms {
            *df.entry(t).or_insert(0) += 1;
        }
    }
    df
}

fn generate(
    docs: &[Document],
    analyzer: &Analyzer,
    mix: &[ClassShare],
    count: usize,
    seed: u64,
) -> Result<Vec<ClassedQuery>, ClassError> {
    let stats = TermStats::from_corpus(docs.iter().cloned().map(Ok), analyzer)?;
    class_queries(
        &stats,
        mix,
        count,
        SampledStyle::Terms { min: 2, max: 5 },
        seed,
        || Ok::<_, BeirError>(docs.iter().cloned().map(Ok)),
    )
}

fn all_classes() -> Vec<ClassShare> {
    QueryClass::ALL
        .iter()
        .map(|&class| ClassShare { class, weight: 1 })
        .collect()
}

#[test]
fn each_class_obeys_its_document_frequency_rule() {
    let docs = synth_docs();
    let english = Analyzer::new(AnalyzerConfig::english());
    let plain = Analyzer::new(AnalyzerConfig::plain());
    let df = naive_df(&docs, &english);
    let n = docs.len() as u64;
    let frequent = |t: &String| df[t] * 4 > n;
    let rare = |t: &String| (1..=(n / 1000).max(1)).contains(&df[t]);
    let texts: Vec<String> = docs
        .iter()
        .map(|d| {
            format!(
                " {} {} ",
                plain.tokens(&d.title).join(" "),
                plain.tokens(&d.text).join(" ")
            )
        })
        .collect();

    let queries = generate(&docs, &english, &all_classes(), 500, 11).unwrap();
    assert_eq!(queries.len(), 500);
    let mut per_class: HashMap<QueryClass, usize> = HashMap::new();
    for (i, q) in queries.iter().enumerate() {
        assert_eq!(q.query.id, (i + 1).to_string());
        *per_class.entry(q.class).or_default() += 1;
        let terms = english.tokens(&q.query.text);
        let distinct: HashSet<&String> = terms.iter().collect();
        let why = format!("{:?} {:?} terms {terms:?}", q.class, q.query.text);
        match q.class {
            QueryClass::Sampled => {}
            QueryClass::FrequentRare => {
                assert!((2..=3).contains(&terms.len()), "{why}");
                assert_eq!(distinct.len(), terms.len(), "{why}");
                assert_eq!(terms.iter().filter(|t| frequent(t)).count(), 1, "{why}");
                assert_eq!(
                    terms.iter().filter(|t| rare(t)).count(),
                    terms.len() - 1,
                    "{why}"
                );
            }
            QueryClass::AllRare => {
                assert!((2..=4).contains(&terms.len()), "{why}");
                assert_eq!(distinct.len(), terms.len(), "{why}");
                assert!(terms.iter().all(rare), "{why}");
            }
            QueryClass::AllFrequent => {
                assert!((2..=4).contains(&terms.len()), "{why}");
                assert_eq!(distinct.len(), terms.len(), "{why}");
                assert!(terms.iter().all(frequent), "{why}");
            }
            QueryClass::Long => {
                let words: Vec<&str> = q.query.text.split(' ').collect();
                assert!(
                    (LONG_WORDS.0..=LONG_WORDS.1).contains(&words.len()),
                    "{why}"
                );
                let opener = OPENERS
                    .iter()
                    .find(|o| q.query.text.starts_with(&format!("{o} ")))
                    .unwrap_or_else(|| panic!("no opener: {why}"));
                let body = format!(" {} ", &q.query.text[opener.len() + 1..]);
                assert!(
                    texts.iter().any(|t| t.contains(&body)),
                    "not a run of words of any document: {why}"
                );
            }
        }
    }
    for class in QueryClass::ALL {
        assert_eq!(per_class.get(&class), Some(&100), "{class}");
    }
    // Deterministic in the seed.
    assert_eq!(
        queries,
        generate(&docs, &english, &all_classes(), 500, 11).unwrap()
    );
    assert_ne!(
        queries,
        generate(&docs, &english, &all_classes(), 500, 12).unwrap()
    );
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_heddle-corpus"))
        .args(args)
        .output()
        .expect("run heddle-corpus")
}

fn write_corpus(dir: &Path, docs: impl IntoIterator<Item = Document>) {
    let mut w = CorpusWriter::new(Vec::new());
    for d in docs {
        w.write(&d).unwrap();
    }
    std::fs::write(dir.join("corpus.jsonl"), w.finish().unwrap()).unwrap();
}

/// `tests/data/sampled-synth2000-seed3.jsonl` was written by heddle-corpus before query
/// classes existed: `queries --corpus <synth --docs 2000> --count 40 --seed 3`.
#[test]
fn default_output_is_byte_identical_to_before_classes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("corpus.jsonl"), synth_bytes()).unwrap();
    let corpus = dir.path().to_str().unwrap();
    let out = dir.path().join("q.jsonl");
    let o = run(&[
        "queries",
        "--corpus",
        corpus,
        "--out",
        out.to_str().unwrap(),
        "--count",
        "40",
        "--seed",
        "3",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = include_bytes!("data/sampled-synth2000-seed3.jsonl");
    assert_eq!(std::fs::read(&out).unwrap(), before);

    // `--class sampled` (same analyzer) makes the same texts, with the class attached,
    // and every line reads back through the BEIR reader the benches use.
    let classed = dir.path().join("c.jsonl");
    let o = run(&[
        "queries",
        "--corpus",
        corpus,
        "--out",
        classed.to_str().unwrap(),
        "--count",
        "40",
        "--seed",
        "3",
        "--class",
        "sampled",
        "--analyzer",
        "plain",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = std::fs::read_to_string(&classed).unwrap();
    assert!(
        lines
            .lines()
            .all(|l| l.ends_with(r#","metadata":{"class":"sampled"}}"#)),
        "{lines}"
    );
    let back: Vec<_> = QueryReader::new(lines.as_bytes(), "c.jsonl")
        .collect::<Result<_, _>>()
        .unwrap();
    let plain: Vec<_> = QueryReader::new(&before[..], "before")
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(back, plain);
}

#[test]
fn the_cli_mix_labels_every_line_and_splits_the_count() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("corpus.jsonl"), synth_bytes()).unwrap();
    let out = dir.path().join("q.jsonl");
    let o = run(&[
        "queries",
        "--corpus",
        dir.path().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--count",
        "30",
        "--class",
        "frequent-rare:2,all-rare",
        "--class",
        "long",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = std::fs::read_to_string(&out).unwrap();
    let count = |class: &str| {
        lines
            .lines()
            .filter(|l| l.contains(&format!(r#""metadata":{{"class":"{class}"}}"#)))
            .count()
    };
    assert_eq!(
        (count("frequent-rare"), count("all-rare"), count("long")),
        (15, 8, 7),
        "{lines}"
    );
}

/// Every word in one document only: nothing is frequent, everything is rare.
fn no_frequent_docs() -> Vec<Document> {
    (0..300)
        .map(|i| Document::new(format!("d{i}"), "", format!("alpha{i}x beta{i}y gamma{i}z")))
        .collect()
}

#[test]
fn a_corpus_without_frequent_terms_names_the_class_it_cannot_make() {
    let docs = no_frequent_docs();
    let english = Analyzer::new(AnalyzerConfig::english());
    for class in [QueryClass::FrequentRare, QueryClass::AllFrequent] {
        let mix = [
            ClassShare {
                class: QueryClass::AllRare,
                weight: 1,
            },
            ClassShare { class, weight: 1 },
        ];
        let err = generate(&docs, &english, &mix, 10, 0).unwrap_err();
        assert!(
            matches!(err, ClassError::NoFrequentTerms { class: c, found: 0, .. } if c == class),
            "{err:?}"
        );
        assert!(
            err.to_string().starts_with(&format!("class {class}:")),
            "{err}"
        );
    }
    // What the corpus can make, it makes.
    let rare_only = [ClassShare {
        class: QueryClass::AllRare,
        weight: 1,
    }];
    assert_eq!(
        generate(&docs, &english, &rare_only, 10, 0).unwrap().len(),
        10
    );

    // The binary: a failure exit and the message, no panic.
    let dir = tempfile::tempdir().unwrap();
    write_corpus(dir.path(), no_frequent_docs());
    let out = dir.path().join("q.jsonl");
    let o = run(&[
        "queries",
        "--corpus",
        dir.path().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--class",
        "all-rare,frequent-rare",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        stderr.contains("error: class frequent-rare: needs 1 frequent"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}
