//! What a cost run measured: each query's instructions and simulated cache misses, the
//! mean per query of each class and of all, and the table people read. Two runs (two
//! builds, or one build twice) compare class by class.

use std::fmt::Write;

use anyhow::ensure;
use serde::{Deserialize, Serialize};

use super::callgrind::{Parsed, measured_parts};
use super::probe::Planned;
use crate::bench::report::Table;
use crate::env::render::{fit, wrap};

pub const COST_FORMAT: u32 = 1;

fn one() -> usize {
    1
}

/// One query's cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryCost {
    pub query: String,
    pub df_class: String,
    pub terms: usize,
    /// Instructions executed (callgrind's Ir).
    pub instructions: u64,
    /// Simulated first-level data-cache misses, reads and writes (D1mr + D1mw).
    pub d1_misses: u64,
    /// Simulated last-level misses, instruction and data (ILmr + DLmr + DLmw).
    pub ll_misses: u64,
}

/// A class's (or all queries') mean cost per query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassCost {
    pub class: String,
    pub queries: usize,
    pub instructions: f64,
    pub d1_misses: f64,
    pub ll_misses: f64,
}

/// A whole cost run of one build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostReport {
    pub format: u32,
    pub tool: String,
    /// The binary whose query loop was counted.
    pub binary: String,
    pub index: String,
    pub queries: String,
    pub k: usize,
    pub warmup: usize,
    /// `valgrind --version`.
    pub valgrind: String,
    /// The simulated caches, `size,associativity,line` each.
    pub caches: String,
    /// Total instructions of every measured query.
    pub total_instructions: u64,
    /// Cost collected outside the measured function (should be 0): instructions.
    pub outside_instructions: u64,
    /// Wall time of the callgrind runs (run at once), opening and warm-up included.
    pub wall_secs: f64,
    /// User and system CPU time of the callgrind processes together (absent in reports
    /// from before it was recorded): beside `wall_secs`, how long they waited for a core.
    #[serde(default)]
    pub cpu_secs: Option<f64>,
    /// Valgrind processes the set was split between (1 before `--jobs` existed).
    #[serde(default = "one")]
    pub jobs: usize,
    /// All queries first, then each document-frequency class, then each term count.
    pub classes: Vec<ClassCost>,
    pub per_query: Vec<QueryCost>,
}

/// Puts the probe's plan and callgrind's parts together, query by query.
pub fn per_query(
    plan: &[Planned],
    parsed: &Parsed,
    source: &str,
) -> anyhow::Result<(Vec<QueryCost>, u64)> {
    let (parts, outside) = measured_parts(parsed, source)?;
    ensure!(
        parts.len() == plan.len(),
        "{source}: {} measured parts for {} planned queries (did a query fail?)",
        parts.len(),
        plan.len()
    );
    let ir = parsed.event("Ir")?;
    let ev = |name: &str| parsed.event(name);
    let (d1r, d1w) = (ev("D1mr")?, ev("D1mw")?);
    let (ilr, dlr, dlw) = (ev("ILmr")?, ev("DLmr")?, ev("DLmw")?);
    let rows = plan
        .iter()
        .zip(&parts)
        .map(|(p, t)| QueryCost {
            query: p.query.clone(),
            df_class: p.df_class.clone(),
            terms: p.terms,
            instructions: t[ir],
            d1_misses: t[d1r] + t[d1w],
            ll_misses: t[ilr] + t[dlr] + t[dlw],
        })
        .collect();
    Ok((rows, outside[ir]))
}

fn terms_class(terms: usize) -> String {
    match terms {
        0 => "0 terms",
        1..=2 => "1-2 terms",
        3..=5 => "3-5 terms",
        _ => "6+ terms",
    }
    .to_string()
}

/// `all`, then each document-frequency class, then each term-count class, in the order
/// first seen (a class with no query is left out).
pub fn classes(rows: &[QueryCost]) -> Vec<ClassCost> {
    let mut out = vec![mean("all", rows.iter().collect())];
    let keys: [fn(&QueryCost) -> String; 2] = [|q| q.df_class.clone(), |q| terms_class(q.terms)];
    for key in keys {
        let mut names: Vec<String> = Vec::new();
        for q in rows {
            let k = key(q);
            if !names.contains(&k) {
                names.push(k);
            }
        }
        names.sort();
        for name in names {
            out.push(mean(
                &name,
                rows.iter().filter(|q| key(q) == name).collect(),
            ));
        }
    }
    out
}

fn mean(class: &str, rows: Vec<&QueryCost>) -> ClassCost {
    let n = rows.len().max(1) as f64;
    let sum = |f: fn(&QueryCost) -> u64| rows.iter().map(|q| f(q) as f64).sum::<f64>() / n;
    ClassCost {
        class: class.to_string(),
        queries: rows.len(),
        instructions: sum(|q| q.instructions),
        d1_misses: sum(|q| q.d1_misses),
        ll_misses: sum(|q| q.ll_misses),
    }
}

/// A count as people read it: `812`, `45.3k`, `1.27M`, `3.10G`.
pub fn count(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// One build's cost as text.
pub fn render(r: &CostReport) -> String {
    let mut out = String::new();
    let head = [
        format!(
            "heddle-eval cost: {} queries of {}, top {}, under {} (callgrind)",
            r.per_query.len(),
            r.queries,
            r.k,
            r.valgrind
        ),
        format!("  binary {}", r.binary),
        format!("  index {}", r.index),
        format!(
            "  counted: each query's call only ({} warm-up queries first in each of {} \
             parts counted at once, not counted); caches simulated {}; {:.0} s under \
             callgrind{}",
            r.warmup,
            r.jobs,
            r.caches,
            r.wall_secs,
            r.cpu_secs
                .map(|c| format!(" ({c:.0} s of CPU)"))
                .unwrap_or_default()
        ),
    ];
    for line in head.iter().flat_map(|l| wrap(l)) {
        let _ = writeln!(out, "{line}");
    }
    let mut t = Table::new(&[
        "class",
        "queries",
        "instr/query",
        "D1 miss/query",
        "LL miss/query",
    ]);
    for c in &r.classes {
        t.row(vec![
            c.class.clone(),
            c.queries.to_string(),
            count(c.instructions),
            count(c.d1_misses),
            count(c.ll_misses),
        ]);
    }
    out.push_str(&t.render());
    let _ = writeln!(
        out,
        "total: {} instructions over {} queries{}",
        count(r.total_instructions as f64),
        r.per_query.len(),
        if r.outside_instructions > 0 {
            format!(
                "; WARNING: {} instructions were counted outside the measured function",
                r.outside_instructions
            )
        } else {
            String::new()
        }
    );
    let mut worst: Vec<&QueryCost> = r.per_query.iter().collect();
    worst.sort_by_key(|q| std::cmp::Reverse(q.instructions));
    let _ = writeln!(out, "most instructions:");
    for q in worst.into_iter().take(5) {
        let _ = writeln!(
            out,
            "{}",
            fit(format!(
                "  {:>8} {:<14} {}",
                count(q.instructions as f64),
                q.df_class,
                q.query.escape_debug()
            ))
        );
    }
    out
}

/// One class in two runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassChange {
    pub class: String,
    pub queries: usize,
    pub baseline: f64,
    pub candidate: f64,
    /// `candidate / baseline − 1`.
    pub change: Option<f64>,
    /// The baseline against itself (a second run of it): the A/A floor of this class.
    pub floor: Option<f64>,
}

/// Instructions per query, class by class: `a` against `b`, with `a_again` (a second
/// run of `a`) giving each class's A/A floor.
pub fn compare(a: &CostReport, b: &CostReport, a_again: Option<&CostReport>) -> Vec<ClassChange> {
    let rel = |x: f64, y: f64| (x > 0.0).then(|| y / x - 1.0);
    a.classes
        .iter()
        .map(|ca| {
            let find = |r: &CostReport| {
                r.classes
                    .iter()
                    .find(|c| c.class == ca.class)
                    .map(|c| c.instructions)
            };
            let cb = find(b);
            ClassChange {
                class: ca.class.clone(),
                queries: ca.queries,
                baseline: ca.instructions,
                candidate: cb.unwrap_or(f64::NAN),
                change: cb.and_then(|v| rel(ca.instructions, v)),
                floor: a_again
                    .and_then(find)
                    .and_then(|v| rel(ca.instructions, v))
                    .map(f64::abs),
            }
        })
        .collect()
}

/// The class-by-class comparison as text.
pub fn render_compare(rows: &[ClassChange], a: &str, b: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", fit(format!("instructions per query, A = {a}")));
    let _ = writeln!(out, "{}", fit(format!("                         B = {b}")));
    let mut t = Table::new(&["class", "queries", "A", "B", "change", "A/A floor"]);
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{:+.3}%", 100.0 * v));
    for r in rows {
        t.row(vec![
            r.class.clone(),
            r.queries.to_string(),
            count(r.baseline),
            count(r.candidate),
            pct(r.change),
            r.floor
                .map_or("-".to_string(), |f| format!("{:.3}%", 100.0 * f)),
        ]);
    }
    out.push_str(&t.render());
    for line in wrap(
        "A/A floor: the same build counted twice on the same queries (callgrind counts \
         instructions, not time: a change here is work added or removed, whatever the \
         machine was doing)",
    ) {
        let _ = writeln!(out, "{line}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(class: &str, terms: usize, ir: u64) -> QueryCost {
        QueryCost {
            query: format!("q{ir}"),
            df_class: class.to_string(),
            terms,
            instructions: ir,
            d1_misses: ir / 100,
            ll_misses: 1,
        }
    }

    #[test]
    fn classes_are_means_of_their_queries() {
        let rows = [
            q("all-rare", 1, 100),
            q("all-rare", 2, 300),
            q("mixed", 4, 1_000),
        ];
        let c = classes(&rows);
        let names: Vec<&str> = c.iter().map(|c| c.class.as_str()).collect();
        assert_eq!(
            names,
            ["all", "all-rare", "mixed", "1-2 terms", "3-5 terms"]
        );
        assert!((c[0].instructions - 1_400.0 / 3.0).abs() < 1e-9);
        assert_eq!((c[1].queries, c[1].instructions), (2, 200.0));
        assert_eq!(c[2].d1_misses, 10.0);
    }

    #[test]
    fn a_comparison_gives_each_class_its_change_and_floor() {
        let report = |scale: f64| CostReport {
            format: COST_FORMAT,
            tool: "t".into(),
            binary: "b".into(),
            index: "i".into(),
            queries: "q".into(),
            k: 10,
            warmup: 0,
            valgrind: "v".into(),
            caches: "c".into(),
            total_instructions: 0,
            outside_instructions: 0,
            wall_secs: 0.0,
            cpu_secs: None,
            jobs: 1,
            classes: classes(&[
                q("all-rare", 1, (100.0 * scale) as u64),
                q("mixed", 4, 1_000),
            ]),
            per_query: Vec::new(),
        };
        let rows = compare(&report(1.0), &report(1.2), Some(&report(1.0)));
        let rare = rows.iter().find(|r| r.class == "all-rare").unwrap();
        assert!((rare.change.unwrap() - 0.2).abs() < 1e-9);
        assert_eq!(rare.floor, Some(0.0));
        let mixed = rows.iter().find(|r| r.class == "mixed").unwrap();
        assert_eq!(mixed.change, Some(0.0));
        assert!(render_compare(&rows, "a", "b").contains("+20.000%"));
    }
}
