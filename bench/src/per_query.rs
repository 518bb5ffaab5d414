//! The sequential pass query by query: each query's median latency per engine and their
//! ratio, the distribution of those ratios, the worst queries, and quantiles per query
//! class. A pooled p99 hides *which* queries are slow; a class of queries that one engine
//! handles 10× worse can sit under a level median (issue 14: a word in most documents
//! with one or two rare ones).
//!
//! Classes come from the query's terms as the index sees them (its analyzer, its
//! document frequencies), so they hold for any query set: by document frequency —
//! `frequent+rare` (a term in more than 25% of documents and one in at most 1%),
//! `all-frequent` (every term in more than 25%), `all-rare` (every term in at most 1%),
//! `mixed` (the rest), `no-terms` — and by the number of terms (1–2, 3–5, 6+).

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
    pub df_class: String,
    pub terms: usize,
    /// Median over the passes, µs, per engine (A then B).
    pub a_us: f64,
    pub b_us: f64,
    /// A / B.
    pub ratio: f64,
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
    pub a_us: Quantiles,
    pub b_us: Quantiles,
    /// Quantiles of the per-query ratios within the class.
    pub ratio: Quantiles,
}

/// Engine A against engine B, query by query.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PerQueryReport {
    pub a: String,
    pub b: String,
    /// Passes each query's median is taken over.
    pub passes: u64,
    pub ratio: Quantiles,
    /// The [`WORST`] queries by ratio, worst first.
    pub worst: Vec<QueryRow>,
    pub by_df: Vec<ClassRow>,
    pub by_terms: Vec<ClassRow>,
}

/// What the index says of a query's terms: the share of documents holding each.
pub type TermShares<'a> = &'a dyn Fn(&str) -> Vec<f64>;

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

/// Builds the report from each query's median latency over `passes` passes (µs) for
/// engines A and B. Queries an engine failed every time (`None`) are left out.
pub fn report(
    names: (&str, &str),
    passes: u64,
    queries: &[String],
    a: &[Option<f64>],
    b: &[Option<f64>],
    shares: TermShares<'_>,
) -> Option<PerQueryReport> {
    let mut rows: Vec<QueryRow> = Vec::new();
    for (i, query) in queries.iter().enumerate() {
        let (Some(qa), Some(qb)) = (a[i], b[i]) else {
            continue;
        };
        let terms = shares(query);
        rows.push(QueryRow {
            query: query.clone(),
            df_class: df_class(&terms).to_string(),
            terms: terms.len(),
            a_us: qa,
            b_us: qb,
            ratio: qa / qb.max(1e-3),
        });
    }
    let ratio = Quantiles::of(&rows.iter().map(|r| r.ratio).collect::<Vec<_>>())?;
    let mut worst = rows.clone();
    worst.sort_by(|x, y| y.ratio.total_cmp(&x.ratio));
    worst.truncate(WORST);
    Some(PerQueryReport {
        a: names.0.to_string(),
        b: names.1.to_string(),
        passes,
        ratio,
        worst,
        by_df: classes(&rows, |r| r.df_class.clone()),
        by_terms: classes(&rows, |r| terms_class(r.terms).to_string()),
    })
}

fn classes(rows: &[QueryRow], class: impl Fn(&QueryRow) -> String) -> Vec<ClassRow> {
    let mut names: Vec<String> = rows.iter().map(&class).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|name| {
            let members: Vec<&QueryRow> = rows.iter().filter(|r| class(r) == name).collect();
            let pick = |f: fn(&QueryRow) -> f64| {
                Quantiles::of(&members.iter().map(|r| f(r)).collect::<Vec<_>>())
            };
            Some(ClassRow {
                queries: members.len(),
                a_us: pick(|r| r.a_us)?,
                b_us: pick(|r| r.b_us)?,
                ratio: pick(|r| r.ratio)?,
                class: name,
            })
        })
        .collect()
}

/// The median (nearest rank) of one query's latencies over the passes.
pub fn median(values: &[f64]) -> Option<f64> {
    Quantiles::of(values).map(|q| q.p50)
}

/// The report as text: the ratio distribution, the worst queries and the two class
/// tables.
pub fn render(r: &PerQueryReport) -> String {
    let x = |v: f64| format!("{v:.2}×");
    let us = |v: f64| format!("{v:.0} µs");
    let mut out = format!(
        "per query ({}/{}, median of {} passes each, {} queries): ratio p50 {}, p90 {}, p99 {}, worst {}\n",
        r.a,
        r.b,
        r.passes,
        r.ratio.n,
        x(r.ratio.p50),
        x(r.ratio.p90),
        x(r.ratio.p99),
        x(r.ratio.max)
    );
    out.push_str(&format!("  {} worst by ratio:\n", r.worst.len()));
    for w in &r.worst {
        let mut query: String = w.query.chars().take(60).collect();
        if query.len() < w.query.len() {
            query.push('…');
        }
        out.push_str(&format!(
            "    {:>7}  {} {:>9}  {} {:>9}  {:<13} {:?}\n",
            x(w.ratio),
            r.a,
            us(w.a_us),
            r.b,
            us(w.b_us),
            w.df_class,
            query
        ));
    }
    for (title, rows) in [
        ("by document frequency", &r.by_df),
        ("by terms", &r.by_terms),
    ] {
        out.push_str(&format!(
            "  {title}: class, queries, {a} p50/p99, {b} p50/p99, ratio p50/p99\n",
            a = r.a,
            b = r.b
        ));
        for c in rows {
            out.push_str(&format!(
                "    {:<13} {:>5}  {:>9} {:>9}  {:>9} {:>9}  {:>7} {:>7}\n",
                c.class,
                c.queries,
                us(c.a_us.p50),
                us(c.a_us.p99),
                us(c.b_us.p50),
                us(c.b_us.p99),
                x(c.ratio.p50),
                x(c.ratio.p99)
            ));
        }
    }
    out
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

    /// Three queries: one frequent+rare that A runs 10× slower, two level ones. The
    /// worst list, the ratio distribution and the classes must say so.
    #[test]
    fn the_slow_class_stands_out() {
        let queries: Vec<String> = ["webster recrimination", "alpha beta", "gamma"]
            .map(String::from)
            .to_vec();
        let shares = |q: &str| match q {
            "webster recrimination" => vec![0.9, 0.0001],
            "alpha beta" => vec![0.3, 0.4],
            _ => vec![0.001],
        };
        // Per-pass latencies: the median of each query is the middle value.
        let a = [
            vec![1600.0, 1700.0, 1500.0],
            vec![100.0, 90.0, 110.0],
            vec![50.0; 3],
        ];
        let b = [vec![160.0, 170.0, 150.0], vec![100.0; 3], vec![50.0; 3]];
        let (a, b) = (a.map(|v| median(&v)), b.map(|v| median(&v)));
        let r = report(("heddle", "tantivy"), 3, &queries, &a, &b, &shares).unwrap();
        assert_eq!(r.passes, 3);
        assert_eq!(r.worst[0].query, "webster recrimination");
        assert!((r.worst[0].ratio - 10.0).abs() < 1e-9);
        assert_eq!(r.ratio.max, r.worst[0].ratio);
        assert_eq!(r.ratio.p50, 1.0);
        let fr = r.by_df.iter().find(|c| c.class == "frequent+rare").unwrap();
        assert_eq!(fr.queries, 1);
        assert_eq!((fr.a_us.p50, fr.b_us.p50), (1600.0, 160.0));
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
    }
}
