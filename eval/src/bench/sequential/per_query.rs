//! The sequential pass query by query: each query's median latency per engine (and, with
//! two engines, their ratio), the distribution of those figures, the worst queries, and
//! quantiles per query class. A pooled p99 hides *which* queries are slow; a class of
//! queries that one engine handles 10× worse can sit under a level median (issue 14: a
//! word in most documents with one or two rare ones).
//!
//! With one engine the worst queries are the slowest; with two, those with the highest
//! ratio (the first engine's median over the second's).
//!
//! Classes come from the query's terms as an index sees them (its analyzer, its
//! document frequencies), so they hold for any query set: by document frequency —
//! `frequent+rare` (a term in more than 25% of documents and one in at most 1%),
//! `all-frequent` (every term in more than 25%), `all-rare` (every term in at most 1%),
//! `mixed` (the rest), `no-terms` — and by the number of terms (1–2, 3–5, 6+). An engine
//! that cannot say (`Backend::term_shares`) leaves the document-frequency classes out.

use serde::{Deserialize, Serialize};

/// A term in more than this share of the documents is frequent.
pub const FREQUENT: f64 = 0.25;
/// A term in at most this share of the documents is rare.
pub const RARE: f64 = 0.01;
/// How many of the worst queries a report lists.
pub const WORST: usize = 10;

/// One query's figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QueryRow {
    pub query: String,
    /// `None` where no engine could say what its terms' document frequencies are.
    pub df_class: Option<String>,
    pub terms: usize,
    /// Median over the passes, µs, per engine in the report's order.
    pub us: Vec<f64>,
    /// The first engine's median over the second's (two engines only).
    pub ratio: Option<f64>,
}

/// Nearest-rank quantiles of a set of values.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Quantiles {
    pub n: usize,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl Quantiles {
    /// `None` for no values. Nearest rank: the smallest value with at least q·n values
    /// at or below it.
    pub fn of(values: &[f64]) -> Option<Quantiles> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let at = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Some(Quantiles {
            n: v.len(),
            p50: at(0.50),
            p90: at(0.90),
            p99: at(0.99),
            max: v[v.len() - 1],
        })
    }
}

/// One class's quantiles over its queries' medians.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClassRow {
    pub class: String,
    pub queries: usize,
    /// Per engine, quantiles of the class's per-query medians, µs.
    pub us: Vec<Quantiles>,
    /// Quantiles of the per-query ratios within the class (two engines only).
    pub ratio: Option<Quantiles>,
}

/// The engines' figures query by query.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PerQueryReport {
    pub engines: Vec<String>,
    /// Passes each query's median is taken over.
    pub passes: u64,
    /// Quantiles of the per-query medians, per engine, µs.
    pub us: Vec<Quantiles>,
    /// Quantiles of the per-query ratios (two engines only).
    pub ratio: Option<Quantiles>,
    /// What `worst` is sorted by: `ratio` (two engines) or `latency` (the first
    /// engine's median).
    pub worst_by: String,
    /// The [`WORST`] queries, worst first.
    pub worst: Vec<QueryRow>,
    pub by_df: Vec<ClassRow>,
    pub by_terms: Vec<ClassRow>,
    /// The same classes over each query's median CPU time (the thread CPU clock), µs:
    /// the work per class, without the wait for a core ([`add_cpu`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_by_df: Vec<ClassRow>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_by_terms: Vec<ClassRow>,
}

/// What an index says of a query's terms: the share of documents holding each distinct
/// term, or `None` if it cannot say.
pub type TermShares<'a> = &'a dyn Fn(&str) -> Option<Vec<f64>>;

/// The document-frequency class of a query whose terms are in these shares of documents.
pub fn df_class(shares: &[f64]) -> &'static str {
    if shares.is_empty() {
        return "no-terms";
    }
    let frequent = shares.iter().filter(|&&s| s > FREQUENT).count();
    let rare = shares.iter().filter(|&&s| s <= RARE).count();
    if frequent == shares.len() {
        "all-frequent"
    } else if rare == shares.len() {
        "all-rare"
    } else if frequent > 0 && rare > 0 {
        "frequent+rare"
    } else {
        "mixed"
    }
}

fn terms_class(terms: usize) -> &'static str {
    match terms {
        0 => "0 terms",
        1..=2 => "1-2 terms",
        3..=5 => "3-5 terms",
        _ => "6+ terms",
    }
}

/// Builds the report from each query's median latency over `passes` passes (µs), one
/// slice per engine in `engines`' order. A query some engine failed every time (`None`)
/// is left out. The number of terms is the engine's count where it can say, else the
/// query's whitespace-separated words.
pub fn report(
    engines: &[&str],
    passes: u64,
    queries: &[String],
    medians: &[&[Option<f64>]],
    shares: TermShares<'_>,
) -> Option<PerQueryReport> {
    if engines.is_empty() || engines.len() != medians.len() {
        return None;
    }
    let two = engines.len() == 2;
    let mut rows: Vec<QueryRow> = Vec::new();
    for (i, query) in queries.iter().enumerate() {
        let Some(us) = medians
            .iter()
            .map(|m| m.get(i).copied().flatten())
            .collect::<Option<Vec<f64>>>()
        else {
            continue;
        };
        let terms = shares(query);
        rows.push(QueryRow {
            query: query.clone(),
            df_class: terms.as_deref().map(|t| df_class(t).to_string()),
            terms: terms
                .as_ref()
                .map_or_else(|| query.split_whitespace().count(), Vec::len),
            ratio: two.then(|| us[0] / us[1].max(1e-3)),
            us,
        });
    }
    let us = (0..engines.len())
        .map(|e| Quantiles::of(&rows.iter().map(|r| r.us[e]).collect::<Vec<_>>()))
        .collect::<Option<Vec<_>>>()?;
    let ratio = two
        .then(|| Quantiles::of(&rows.iter().filter_map(|r| r.ratio).collect::<Vec<_>>()))
        .flatten();
    let key = |r: &QueryRow| r.ratio.unwrap_or(r.us[0]);
    let mut worst = rows.clone();
    worst.sort_by(|x, y| key(y).total_cmp(&key(x)));
    worst.truncate(WORST);
    Some(PerQueryReport {
        engines: engines.iter().map(|e| e.to_string()).collect(),
        passes,
        us,
        ratio,
        worst_by: if two { "ratio" } else { "latency" }.to_string(),
        worst,
        by_df: classes(&rows, engines.len(), |r| r.df_class.clone()),
        by_terms: classes(&rows, engines.len(), |r| {
            Some(terms_class(r.terms).to_string())
        }),
        cpu_by_df: Vec::new(),
        cpu_by_terms: Vec::new(),
    })
}

/// Adds the class tables of CPU time to `report`, from each query's median CPU time per
/// engine (µs, in the query set's order as `report`'s medians were); classes as
/// `report` made them. Leaves them empty if any engine measured no CPU time.
pub fn add_cpu(
    report: &mut PerQueryReport,
    queries: &[String],
    cpu_medians: &[&[Option<f64>]],
    shares: TermShares<'_>,
) {
    if cpu_medians.len() != report.engines.len()
        || cpu_medians.iter().any(|m| m.iter().all(Option::is_none))
    {
        return;
    }
    let Some(cpu) = super::per_query::report(
        &report
            .engines
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        report.passes,
        queries,
        cpu_medians,
        shares,
    ) else {
        return;
    };
    report.cpu_by_df = cpu.by_df;
    report.cpu_by_terms = cpu.by_terms;
}

fn classes(
    rows: &[QueryRow],
    engines: usize,
    class: impl Fn(&QueryRow) -> Option<String>,
) -> Vec<ClassRow> {
    let mut names: Vec<String> = rows.iter().filter_map(&class).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|name| {
            let members: Vec<&QueryRow> = rows
                .iter()
                .filter(|r| class(r).as_deref() == Some(name.as_str()))
                .collect();
            let us = (0..engines)
                .map(|e| Quantiles::of(&members.iter().map(|r| r.us[e]).collect::<Vec<_>>()))
                .collect::<Option<Vec<_>>>()?;
            let ratios: Vec<f64> = members.iter().filter_map(|r| r.ratio).collect();
            Some(ClassRow {
                queries: members.len(),
                us,
                ratio: Quantiles::of(&ratios),
                class: name,
            })
        })
        .collect()
}

/// The median (nearest rank) of one query's latencies over the passes.
pub fn median(values: &[f64]) -> Option<f64> {
    Quantiles::of(values).map(|q| q.p50)
}

/// The report as text: the distribution, the worst queries and the two class tables
/// (each engine's p50 and p99 over the class's per-query medians, and with two engines
/// their ratio and the quantiles of the per-query ratios).
pub fn render(r: &PerQueryReport) -> String {
    let x = |v: f64| format!("{v:.2}×");
    let us = |v: f64| format!("{v:.0} µs");
    let mut out = format!(
        "per query ({}, median of {} passes each, {} queries):",
        r.engines.join("/"),
        r.passes,
        r.us.first().map_or(0, |q| q.n)
    );
    match &r.ratio {
        Some(q) => out.push_str(&format!(
            " ratio p50 {}, p90 {}, p99 {}, worst {}\n",
            x(q.p50),
            x(q.p90),
            x(q.p99),
            x(q.max)
        )),
        None => {
            for (name, q) in r.engines.iter().zip(&r.us) {
                out.push_str(&format!(
                    " {name} p50 {}, p90 {}, p99 {}, slowest {}",
                    us(q.p50),
                    us(q.p90),
                    us(q.p99),
                    us(q.max)
                ));
            }
            out.push('\n');
        }
    }
    out.push_str(&format!("  {} worst by {}:\n", r.worst.len(), r.worst_by));
    for w in &r.worst {
        let mut line = String::from("    ");
        if let Some(ratio) = w.ratio {
            line.push_str(&format!("{:>7}  ", x(ratio)));
        }
        for (name, v) in r.engines.iter().zip(&w.us) {
            line.push_str(&format!("{name} {:>9}  ", us(*v)));
        }
        line.push_str(&format!("{:<13} ", w.df_class.as_deref().unwrap_or("-")));
        // The query, quoted and escaped, in what is left of the line's 100 columns (cut
        // after escaping: an escape takes several columns).
        let room = crate::env::render::WIDTH
            .saturating_sub(line.chars().count())
            .max(22);
        let quoted = format!("{:?}", w.query);
        if quoted.chars().count() <= room {
            line.push_str(&quoted);
        } else {
            line.extend(quoted.chars().take(room - 2));
            line.push_str("…\"");
        }
        line.push('\n');
        out.push_str(&line);
    }
    for (title, rows) in [
        ("by document frequency", &r.by_df),
        ("by terms", &r.by_terms),
        ("CPU time by document frequency", &r.cpu_by_df),
        ("CPU time by terms", &r.cpu_by_terms),
    ] {
        if rows.is_empty() {
            continue;
        }
        let mut head = format!("  {title}: class, queries");
        for name in &r.engines {
            head.push_str(&format!(", {name} p50/p99"));
        }
        if r.engines.len() == 2 {
            head.push_str(", p50/p99 of each, as a ratio; per-query ratio p50/p99");
        }
        out.push_str(&head);
        out.push('\n');
        for c in rows {
            let mut line = format!("    {:<13} {:>5}", c.class, c.queries);
            for q in &c.us {
                line.push_str(&format!("  {:>8} {:>8}", us(q.p50), us(q.p99)));
            }
            if let ([a, b], Some(ratio)) = (&c.us[..], &c.ratio) {
                line.push_str(&format!(
                    "  {:>6} {:>6}  {:>6} {:>6}",
                    x(a.p50 / b.p50.max(1e-3)),
                    x(a.p99 / b.p99.max(1e-3)),
                    x(ratio.p50),
                    x(ratio.p99)
                ));
            }
            out.push_str(&line);
            out.push('\n');
        }
    }
    // The heading lines, wrapped where they run past 100 columns.
    out.lines()
        .flat_map(crate::env::render::wrap)
        .map(|l| l + "\n")
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_follow_the_shares_of_documents() {
        assert_eq!(df_class(&[0.9, 0.0001]), "frequent+rare");
        assert_eq!(df_class(&[0.9, 0.0001, 0.05]), "frequent+rare");
        assert_eq!(df_class(&[0.3, 0.5]), "all-frequent");
        assert_eq!(df_class(&[0.01, 0.002]), "all-rare");
        assert_eq!(df_class(&[0.9, 0.05]), "mixed");
        assert_eq!(df_class(&[]), "no-terms");
    }

    #[test]
    fn nearest_rank_quantiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let q = Quantiles::of(&v).unwrap();
        assert_eq!((q.p50, q.p90, q.p99, q.max), (50.0, 90.0, 99.0, 100.0));
        assert_eq!(Quantiles::of(&[7.0]).unwrap().p99, 7.0);
        assert!(Quantiles::of(&[]).is_none());
    }

    fn queries() -> Vec<String> {
        ["webster recrimination", "alpha beta", "gamma"]
            .map(String::from)
            .to_vec()
    }

    fn shares(q: &str) -> Option<Vec<f64>> {
        Some(match q {
            "webster recrimination" => vec![0.9, 0.0001],
            "alpha beta" => vec![0.3, 0.4],
            _ => vec![0.001],
        })
    }

    /// Three queries: one frequent+rare that A runs 10× slower, two level ones. The
    /// worst list, the ratio distribution and the classes must say so.
    #[test]
    fn the_slow_class_stands_out() {
        // Per-pass latencies: the median of each query is the middle value.
        let a = [
            vec![1600.0, 1700.0, 1500.0],
            vec![100.0, 90.0, 110.0],
            vec![50.0; 3],
        ];
        let b = [vec![160.0, 170.0, 150.0], vec![100.0; 3], vec![50.0; 3]];
        let (a, b) = (a.map(|v| median(&v)), b.map(|v| median(&v)));
        let r = report(&["heddle", "tantivy"], 3, &queries(), &[&a, &b], &shares).unwrap();
        assert_eq!(r.passes, 3);
        assert_eq!(r.worst_by, "ratio");
        assert_eq!(r.worst[0].query, "webster recrimination");
        assert!((r.worst[0].ratio.unwrap() - 10.0).abs() < 1e-9);
        let ratio = r.ratio.unwrap();
        assert_eq!(ratio.max, r.worst[0].ratio.unwrap());
        assert_eq!(ratio.p50, 1.0);
        let fr = r.by_df.iter().find(|c| c.class == "frequent+rare").unwrap();
        assert_eq!(fr.queries, 1);
        assert_eq!((fr.us[0].p50, fr.us[1].p50), (1600.0, 160.0));
        let names: Vec<&str> = r.by_df.iter().map(|c| c.class.as_str()).collect();
        assert_eq!(names, ["all-frequent", "all-rare", "frequent+rare"]);
        let terms: Vec<(&str, usize)> = r
            .by_terms
            .iter()
            .map(|c| (c.class.as_str(), c.queries))
            .collect();
        assert_eq!(terms, [("1-2 terms", 3)]);
        let text = render(&r);
        assert!(text.contains("worst 10.00×"), "{text}");
        assert!(text.contains("\"webster recrimination\""), "{text}");
        assert!(text.contains("frequent+rare"), "{text}");
    }

    /// One engine: the slowest queries come first, classes carry its quantiles alone,
    /// and no ratio appears anywhere.
    #[test]
    fn one_engine_lists_its_slowest_queries() {
        let a = [Some(1600.0), Some(100.0), Some(50.0)];
        let r = report(&["heddle"], 3, &queries(), &[&a], &shares).unwrap();
        assert_eq!(r.worst_by, "latency");
        let order: Vec<&str> = r.worst.iter().map(|w| w.query.as_str()).collect();
        assert_eq!(order, ["webster recrimination", "alpha beta", "gamma"]);
        assert!(r.ratio.is_none() && r.worst.iter().all(|w| w.ratio.is_none()));
        assert_eq!(r.us[0].max, 1600.0);
        let fr = r.by_df.iter().find(|c| c.class == "frequent+rare").unwrap();
        assert_eq!((fr.us.len(), fr.us[0].p50), (1, 1600.0));
        let text = render(&r);
        assert!(text.contains("worst by latency"), "{text}");
        assert!(text.contains("slowest 1600 µs"), "{text}");
        assert!(!text.contains('×'), "{text}");
    }

    /// An engine that cannot say its terms' document frequencies: no df classes, the
    /// terms counted as words, and a query some engine failed every time left out.
    #[test]
    fn without_shares_the_df_classes_are_left_out() {
        let a = [Some(10.0), None, Some(30.0)];
        let r = report(&["x"], 1, &queries(), &[&a], &|_| None).unwrap();
        assert!(r.by_df.is_empty());
        assert_eq!(r.us[0].n, 2, "the failed query is left out");
        assert!(r.worst.iter().all(|w| w.df_class.is_none()));
        assert_eq!(r.by_terms[0].queries, 2);
        assert!(report(&["x"], 1, &queries(), &[&[None, None, None]], &|_| None).is_none());
    }

    /// A query of escapes (each control character takes several columns once quoted) is
    /// cut after quoting, so its row stays within the width.
    #[test]
    fn a_query_of_control_characters_stays_within_the_width() {
        let long = "\u{1b}[31m".repeat(40);
        let qs = vec![long, "alpha beta".to_string()];
        let a = [Some(900.0), Some(100.0)];
        let b = [Some(100.0), Some(100.0)];
        let r = report(&["heddle", "tantivy"], 3, &qs, &[&a, &b], &|_| None).unwrap();
        let text = render(&r);
        for line in text.lines() {
            assert!(
                line.chars().count() <= crate::env::render::WIDTH,
                "{} columns: {line}",
                line.chars().count()
            );
        }
        assert!(text.contains("\\u{1b}[31m"), "{text}");
        assert!(text.contains("…\""), "{text}");
    }
}
