//! Query classes made on purpose, defined by the document frequencies of a query's
//! analyzed terms: the shapes that a sampled set may never contain.
//!
//! | class | terms |
//! |---|---|
//! | `sampled` | today's generator ([`term_queries`] or [`question_queries`]) |
//! | `frequent-rare` | one frequent term and 1–2 rare ones, the frequent one anywhere |
//! | `all-rare` | 2–4 rare terms |
//! | `all-frequent` | 2–4 frequent terms |
//! | `long` | a question opener and a run of words from one real document, 8–16 words |
//!
//! **Frequent**: a content word in more than 25% of the documents. A class that needs
//! more such terms than the corpus has (`frequent-rare` 1, `all-frequent` 8, so its
//! queries are not all one set) takes the next most frequent content words, down to those
//! in 5% of the documents. **Rare**: in at least 1 and at most 0.1% of the documents
//! (at most 1 below 2,000 documents). Content words are as in [`BANDS`](super::BANDS).
//! A class the corpus cannot make is an error naming it.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use heddle::{Analyzer, AnalyzerConfig, Document};

use super::df::DfTable;
use super::function_words::is_content_word;
use super::questions::question_queries;
use super::term_stats::{TermStat, TermStats};
use super::terms::{QuerySetError, term_queries};
use crate::beir::{BeirError, Query};
use crate::synth::{Purpose, Stream};

/// A query class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QueryClass {
    Sampled,
    FrequentRare,
    AllRare,
    AllFrequent,
    Long,
}

impl QueryClass {
    pub const ALL: [QueryClass; 5] = [
        QueryClass::Sampled,
        QueryClass::FrequentRare,
        QueryClass::AllRare,
        QueryClass::AllFrequent,
        QueryClass::Long,
    ];

    /// The name used on the command line and in the queries' `metadata.class`.
    pub fn name(self) -> &'static str {
        match self {
            QueryClass::Sampled => "sampled",
            QueryClass::FrequentRare => "frequent-rare",
            QueryClass::AllRare => "all-rare",
            QueryClass::AllFrequent => "all-frequent",
            QueryClass::Long => "long",
        }
    }

    /// How many frequent terms the class wants to choose among (0: none).
    fn frequent_wanted(self) -> usize {
        match self {
            QueryClass::FrequentRare => 1,
            QueryClass::AllFrequent => 8,
            _ => 0,
        }
    }
}

impl fmt::Display for QueryClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for QueryClass {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        QueryClass::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = QueryClass::ALL.iter().map(|c| c.name()).collect();
                format!("unknown query class {s:?}; known: {}", names.join(", "))
            })
    }
}

/// A class and its share of the queries: `NAME` (weight 1) or `NAME:WEIGHT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassShare {
    pub class: QueryClass,
    pub weight: u32,
}

impl FromStr for ClassShare {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (name, weight) = match s.split_once(':') {
            Some((name, w)) => {
                let w: u32 = w
                    .parse()
                    .map_err(|_| format!("{s:?}: weight {w:?} is not a whole number"))?;
                if w == 0 {
                    return Err(format!("{s:?}: a weight must be at least 1"));
                }
                (name, w)
            }
            None => (s, 1),
        };
        Ok(ClassShare {
            class: name.trim().parse()?,
            weight,
        })
    }
}

/// How the `sampled` class samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampledStyle {
    /// [`term_queries`] with `min..=max` terms.
    Terms { min: usize, max: usize },
    /// [`question_queries`].
    Questions,
}

/// A query and the class it was made for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassedQuery {
    pub query: Query,
    pub class: QueryClass,
}

/// Why a mix of classes could not be made.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ClassError {
    #[error("no query class given")]
    NoClasses,
    #[error("query class {class} is given twice; give it once with a weight (e.g. {class}:2)")]
    RepeatedClass { class: QueryClass },
    /// Fewer frequent terms than the class needs (see the module documentation).
    #[error(
        "class {class}: needs {need} frequent content words, found {found} (in more than 25% of the {docs} documents, or among the most frequent down to 5%; the most frequent content word is in {top_df}); leave {class} out of --class for this corpus"
    )]
    NoFrequentTerms {
        class: QueryClass,
        docs: u64,
        need: usize,
        found: usize,
        top_df: u32,
    },
    #[error(
        "class {class}: needs {need} rare content words (in 1 to {max_df} of the {docs} documents), found {found}; leave {class} out of --class for this corpus"
    )]
    NoRareTerms {
        class: QueryClass,
        docs: u64,
        max_df: u32,
        need: usize,
        found: usize,
    },
    #[error(
        "class long: needs a document of at least {need} words, the longest has {longest}; leave long out of --class for this corpus"
    )]
    NoLongDocument { need: u32, longest: u32 },
    #[error(
        "class long: the corpus changed between its two readings (document {doc} is gone or shorter)"
    )]
    CorpusChanged { doc: u64 },
    #[error("class sampled: {0}")]
    Sampled(#[from] QuerySetError),
    #[error(transparent)]
    Read(#[from] BeirError),
}

/// Whether `df` of `docs` documents is frequent: in more than 25% of them.
pub fn is_frequent(df: u32, docs: u64) -> bool {
    df as u64 * 4 > docs
}

/// The largest document frequency that is rare: 0.1% of `docs`, at least 1.
pub fn rare_max_df(docs: u64) -> u32 {
    (docs / 1000).clamp(1, u32::MAX as u64) as u32
}

/// Terms whose word can go in a query: a content word that analyzes back to the term.
fn usable(t: &TermStat) -> Option<&str> {
    t.word.as_deref().filter(|w| is_content_word(w))
}

/// The frequent terms `class` draws from: every usable term in more than 25% of the
/// documents, topped up to the class's want with the next most frequent ones that are in
/// at least 5%.
pub fn frequent_terms(stats: &TermStats, class: QueryClass) -> Vec<&TermStat> {
    let want = class.frequent_wanted();
    let mut out = Vec::new();
    for t in stats.terms.iter().filter(|t| usable(t).is_some()) {
        if is_frequent(t.df, stats.docs) || (out.len() < want && t.df as u64 * 20 >= stats.docs) {
            out.push(t);
        } else {
            break;
        }
    }
    out
}

/// The rare terms: usable, in 1 to [`rare_max_df`] documents.
pub fn rare_terms(stats: &TermStats) -> Vec<&TermStat> {
    let max = rare_max_df(stats.docs);
    stats
        .terms
        .iter()
        .filter(|t| t.df >= 1 && t.df <= max && usable(t).is_some())
        .collect()
}

/// Openers of the `long` class, function words only (TREC-COVID's topics start so).
pub const OPENERS: [&str; 10] = [
    "what is the",
    "what are the",
    "how does the",
    "how do",
    "are there any",
    "which",
    "can",
    "is there",
    "does the",
    "why do",
];

/// Words in a `long` query, opener included.
pub const LONG_WORDS: (usize, usize) = (8, 16);

/// `count` queries split over `mix` by weight (largest remainder; ties to the class given
/// first), in blocks in the order given, ids `1`, `2`, … Deterministic in `seed`; the
/// `sampled` block is the first queries of what the generator gives alone for `seed`.
/// `reread` opens the corpus again; it is called only when `long` queries are wanted.
pub fn class_queries<I>(
    stats: &TermStats,
    mix: &[ClassShare],
    count: usize,
    sampled: SampledStyle,
    seed: u64,
    reread: impl FnOnce() -> Result<I, BeirError>,
) -> Result<Vec<ClassedQuery>, ClassError>
where
    I: IntoIterator<Item = Result<Document, BeirError>>,
{
    let counts = split_count(count, mix)?;
    let rare = rare_terms(stats);
    // Every class is checked before any is made, so an error comes at once.
    for (share, &n) in mix.iter().zip(&counts) {
        if n > 0 {
            check(stats, share.class, &rare)?;
        }
    }
    let mut reread = Some(reread);
    let mut out = Vec::with_capacity(count);
    for (share, &n) in mix.iter().zip(&counts) {
        let class = share.class;
        let texts: Vec<String> = match class {
            QueryClass::Sampled => sampled_texts(&stats.df_table(), n, sampled, seed)?,
            QueryClass::FrequentRare => {
                let freq = frequent_terms(stats, class);
                (0..n)
                    .map(|q| {
                        let mut s = stream(seed, class, q);
                        let f = word(freq[s.below(freq.len() as u64) as usize]);
                        let k = (s.between(1, 2) as usize).min(rare.len());
                        let mut words = pick_distinct(&mut s, &rare, k);
                        words.insert(s.below(k as u64 + 1) as usize, f);
                        words.join(" ")
                    })
                    .collect()
            }
            QueryClass::AllRare | QueryClass::AllFrequent => {
                let pool = if class == QueryClass::AllRare {
                    rare.clone()
                } else {
                    frequent_terms(stats, class)
                };
                (0..n)
                    .map(|q| {
                        let mut s = stream(seed, class, q);
                        let k = (s.between(2, 4) as usize).min(pool.len());
                        pick_distinct(&mut s, &pool, k).join(" ")
                    })
                    .collect()
            }
            QueryClass::Long => {
                // split_count refused a repeated class, so this is the one reading.
                let open = reread.take().ok_or(ClassError::RepeatedClass { class })?;
                long_texts(stats, n, seed, open()?)?
            }
        };
        for text in texts {
            out.push(ClassedQuery {
                query: Query::new((out.len() + 1).to_string(), text),
                class,
            });
        }
    }
    Ok(out)
}

/// Queries per class: `count * weight / total`, the remainder to the largest fractions.
pub fn split_count(count: usize, mix: &[ClassShare]) -> Result<Vec<usize>, ClassError> {
    if mix.is_empty() {
        return Err(ClassError::NoClasses);
    }
    for (i, a) in mix.iter().enumerate() {
        if mix[..i].iter().any(|b| b.class == a.class) {
            return Err(ClassError::RepeatedClass { class: a.class });
        }
    }
    let total: u64 = mix.iter().map(|s| s.weight as u64).sum();
    let exact: Vec<(usize, u64)> = mix
        .iter()
        .map(|s| {
            let x = count as u128 * s.weight as u128;
            ((x / total as u128) as usize, (x % total as u128) as u64)
        })
        .collect();
    let mut counts: Vec<usize> = exact.iter().map(|e| e.0).collect();
    let mut order: Vec<usize> = (0..mix.len()).collect();
    order.sort_by(|&a, &b| exact[b].1.cmp(&exact[a].1).then(a.cmp(&b)));
    let left = count - counts.iter().sum::<usize>();
    for &i in order.iter().take(left) {
        counts[i] += 1;
    }
    Ok(counts)
}

/// Whether the corpus can make `class` at all.
fn check(stats: &TermStats, class: QueryClass, rare: &[&TermStat]) -> Result<(), ClassError> {
    let need_rare = match class {
        QueryClass::FrequentRare => 1,
        QueryClass::AllRare => 2,
        _ => 0,
    };
    if rare.len() < need_rare {
        return Err(ClassError::NoRareTerms {
            class,
            docs: stats.docs,
            max_df: rare_max_df(stats.docs),
            need: need_rare,
            found: rare.len(),
        });
    }
    let need_frequent = match class {
        QueryClass::FrequentRare => 1,
        QueryClass::AllFrequent => 2,
        _ => 0,
    };
    let found = frequent_terms(stats, class).len();
    if found < need_frequent {
        return Err(ClassError::NoFrequentTerms {
            class,
            docs: stats.docs,
            need: need_frequent,
            found,
            top_df: stats
                .terms
                .iter()
                .find(|t| usable(t).is_some())
                .map_or(0, |t| t.df),
        });
    }
    if class == QueryClass::Long {
        let need = (LONG_WORDS.1 - 1) as u32;
        let longest = stats.doc_words.iter().copied().max().unwrap_or(0);
        if longest < need {
            return Err(ClassError::NoLongDocument { need, longest });
        }
    }
    Ok(())
}

fn sampled_texts(
    table: &DfTable,
    n: usize,
    style: SampledStyle,
    seed: u64,
) -> Result<Vec<String>, QuerySetError> {
    let queries = match style {
        SampledStyle::Terms { min, max } => term_queries(table, n, min, max, seed)?,
        SampledStyle::Questions => question_queries(table, n, seed)?,
    };
    Ok(queries.into_iter().map(|q| q.text).collect())
}

fn stream(seed: u64, class: QueryClass, q: usize) -> Stream {
    let class_no = QueryClass::ALL
        .iter()
        .position(|&c| c == class)
        .unwrap_or(0) as u64;
    Stream::new(seed, Purpose::QueryClasses, (class_no << 40) | q as u64)
}

fn word(t: &TermStat) -> &str {
    usable(t).unwrap_or(&t.term)
}

/// `k` distinct words of `pool` (`k <= pool.len()`), in the order drawn.
fn pick_distinct<'a>(s: &mut Stream, pool: &[&'a TermStat], k: usize) -> Vec<&'a str> {
    let mut picked: Vec<usize> = Vec::with_capacity(k);
    while picked.len() < k.min(pool.len()) {
        let i = s.below(pool.len() as u64) as usize;
        if !picked.contains(&i) {
            picked.push(i);
        }
    }
    picked.into_iter().map(|i| word(pool[i])).collect()
}

/// `long` queries: for each, an opener, a length, then a document with enough words
/// (uniformly among them) and a uniformly placed run of its words (plain analysis, so
/// function words stay and the query reads like a question).
fn long_texts(
    stats: &TermStats,
    n: usize,
    seed: u64,
    docs: impl IntoIterator<Item = Result<Document, BeirError>>,
) -> Result<Vec<String>, ClassError> {
    // Documents by word count, longest first: those with at least w words are a prefix.
    let mut by_len: Vec<u32> = (0..stats.doc_words.len() as u32).collect();
    by_len.sort_unstable_by(|&a, &b| {
        let (wa, wb) = (stats.doc_words[a as usize], stats.doc_words[b as usize]);
        wb.cmp(&wa).then(a.cmp(&b))
    });
    struct Pick {
        opener: &'static str,
        body: usize,
        place: f64,
    }
    let mut picks = Vec::with_capacity(n);
    let mut wanted: HashMap<u64, Vec<usize>> = HashMap::new();
    for q in 0..n {
        let mut s = stream(seed, QueryClass::Long, q);
        let opener = OPENERS[s.below(OPENERS.len() as u64) as usize];
        let words = s.between(LONG_WORDS.0 as u64, LONG_WORDS.1 as u64) as usize;
        let body = words - opener.split(' ').count();
        let eligible = by_len.partition_point(|&d| stats.doc_words[d as usize] as usize >= body);
        // check() saw a document of LONG_WORDS.1 - 1 words, the longest body there is.
        let doc = by_len[s.below(eligible.max(1) as u64) as usize] as u64;
        wanted.entry(doc).or_default().push(q);
        picks.push((
            doc,
            Pick {
                opener,
                body,
                place: s.uniform(),
            },
        ));
    }
    let plain = Analyzer::new(AnalyzerConfig::plain());
    let mut texts: Vec<Option<String>> = vec![None; n];
    for (i, doc) in docs.into_iter().enumerate() {
        let doc = doc?;
        let Some(qs) = wanted.get(&(i as u64)) else {
            continue;
        };
        let mut tokens = plain.tokens(&doc.title);
        tokens.extend(plain.tokens(&doc.text));
        for &q in qs {
            let pick = &picks[q].1;
            if tokens.len() < pick.body {
                return Err(ClassError::CorpusChanged { doc: i as u64 });
            }
            let starts = tokens.len() - pick.body + 1;
            let start = ((pick.place * starts as f64) as usize).min(starts - 1);
            texts[q] = Some(format!(
                "{} {}",
                pick.opener,
                tokens[start..start + pick.body].join(" ")
            ));
        }
    }
    texts
        .into_iter()
        .zip(&picks)
        .map(|(t, (doc, _))| t.ok_or(ClassError::CorpusChanged { doc: *doc }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queries::function_words::is_function_word;

    fn share(class: QueryClass, weight: u32) -> ClassShare {
        ClassShare { class, weight }
    }

    #[test]
    fn class_names_parse_with_and_without_weights() {
        for c in QueryClass::ALL {
            assert_eq!(c.name().parse::<QueryClass>(), Ok(c));
        }
        assert_eq!(
            "frequent-rare:3".parse::<ClassShare>(),
            Ok(share(QueryClass::FrequentRare, 3))
        );
        assert_eq!("long".parse::<ClassShare>(), Ok(share(QueryClass::Long, 1)));
        assert!("long:0".parse::<ClassShare>().is_err());
        assert!(
            "rare"
                .parse::<ClassShare>()
                .unwrap_err()
                .contains("all-rare")
        );
    }

    #[test]
    fn counts_split_by_weight_with_remainders_to_the_largest_fraction() {
        use QueryClass::*;
        let even: Vec<ClassShare> = QueryClass::ALL.iter().map(|&c| share(c, 1)).collect();
        assert_eq!(split_count(1000, &even).unwrap(), [200; 5]);
        assert_eq!(split_count(7, &even).unwrap(), [2, 2, 1, 1, 1]);
        assert_eq!(
            split_count(10, &[share(Sampled, 1), share(Long, 2)]).unwrap(),
            [3, 7]
        );
        assert!(matches!(
            split_count(10, &[share(Long, 1), share(Long, 2)]),
            Err(ClassError::RepeatedClass { class: Long })
        ));
        assert!(matches!(split_count(10, &[]), Err(ClassError::NoClasses)));
    }

    #[test]
    fn openers_are_function_words_and_leave_room_for_a_body() {
        for o in OPENERS {
            assert!(o.split(' ').all(is_function_word), "{o}");
            assert!(o.split(' ').count() < LONG_WORDS.0, "{o}");
        }
    }

    fn stat(term: &str, df: u32) -> TermStat {
        TermStat {
            term: term.into(),
            df,
            word: Some(term.into()),
        }
    }

    #[test]
    fn frequent_means_over_a_quarter_topped_up_down_to_five_percent() {
        let stats = TermStats {
            docs: 1000,
            terms: vec![
                stat("webster", 900),
                stat("which", 400),
                stat("see", 236),
                stat("noun", 60),
                stat("verb", 50),
                stat("rare", 49),
            ],
            doc_words: vec![],
        };
        let names = |c| -> Vec<&str> {
            frequent_terms(&stats, c)
                .iter()
                .map(|t| t.term.as_str())
                .collect()
        };
        assert_eq!(names(QueryClass::FrequentRare), ["webster"]);
        assert_eq!(
            names(QueryClass::AllFrequent),
            ["webster", "see", "noun", "verb"]
        );
        assert!(is_frequent(251, 1000) && !is_frequent(250, 1000));
        assert_eq!((rare_max_df(1999), rare_max_df(171_332)), (1, 171));
    }
}
