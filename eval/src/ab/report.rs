//! The A/B's report: one JSON value ([`AbReport`]) and its table, every line within 100
//! columns: the builds, the environment, the runs with their load, then one row per
//! figure with its verdict and each pair's figures.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use super::binary::Build;
use super::compare::{FigureResult, FloorSource};
use super::figures::Measure;
use super::policy::Policy;
use super::runner::{Arm, RunRecord};
use super::verdict::Verdict;
use crate::bench::report::Table;
use crate::bench::report::format::{micros, rate};
use crate::env::render::{fit, wrap};
use crate::env::{Comparability, Environment};

pub const AB_FORMAT: u32 = 1;

/// `ab` compares two builds; `noise` runs one against itself to measure the floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Ab,
    Noise,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AbReport {
    pub format: u32,
    pub tool: String,
    pub mode: Mode,
    pub arm: Arm,
    pub baseline: Build,
    pub candidate: Build,
    pub pairs: usize,
    /// The arguments every run's `bench` got (but `--json`).
    pub bench_args: Vec<String>,
    /// The ladder's rates (or the writes arm's one rate), the same for every run.
    pub rates: Vec<f64>,
    /// How they were chosen: `named`, or derived from the baseline's calibration.
    pub rates_rule: String,
    /// The session's own environment (this process, on the index's storage).
    pub environment: Environment,
    /// The runs' own environments compared (absent when the builds record none).
    pub comparability: Option<Comparability>,
    pub policy: Policy,
    /// The A/A report the floors came from (`--floor`), and why it was not used if not.
    pub floor_file: Option<String>,
    pub floor_note: Option<String>,
    /// Every run's window was the same length (to a twentieth).
    pub windows_equal: bool,
    pub runs: Vec<RunRecord>,
    pub figures: Vec<FigureResult>,
    /// Whether instructions were counted, and if not why not.
    #[serde(default)]
    pub cost: String,
}

impl AbReport {
    /// The verdicts, counted: `(regressions, improvements, no change, ungateable)`.
    pub fn tally(&self) -> (usize, usize, usize, usize) {
        let n = |v| self.figures.iter().filter(|f| f.verdict == v).count();
        (
            n(Verdict::Regression),
            n(Verdict::Improvement),
            n(Verdict::NoChange),
            n(Verdict::Ungateable),
        )
    }
}

fn value(unit: &str, v: Option<f64>) -> String {
    match (unit, v) {
        (_, None) => "-".to_string(),
        ("µs", Some(v)) => micros(v.round() as u64),
        ("s", Some(v)) => micros((v * 1e6).round() as u64),
        ("count", Some(v)) => crate::cost::report::count(v),
        (_, Some(v)) => format!("{}/s", rate(v.round())),
    }
}

fn pct(v: f64) -> String {
    format!("{:+.1}%", 100.0 * v)
}

fn build_line(label: &str, b: &Build) -> String {
    let commit = b
        .commit
        .as_deref()
        .map_or(String::new(), |c| format!(" = {}", &c[..c.len().min(12)]));
    fit(format!("  {label} {}{commit}: {}", b.spec, b.binary))
}

/// The whole report as text.
pub fn render(r: &AbReport) -> String {
    let mut out = String::new();
    let what = match r.arm {
        Arm::Ladder => "read ladder",
        Arm::Writes => "writes arm (commit cost on reads)",
    };
    let _ = writeln!(
        out,
        "heddle-eval ab ({}): {what}, {} in ABBA order",
        match r.mode {
            Mode::Ab => "baseline against candidate",
            Mode::Noise => "noise floor, one build against itself",
        },
        crate::progress::plural(r.pairs as u64, "pair")
    );
    let _ = writeln!(out, "{}", build_line("A baseline", &r.baseline));
    if r.mode == Mode::Ab {
        let _ = writeln!(out, "{}", build_line("B candidate", &r.candidate));
    }
    let rates: Vec<String> = r.rates.iter().map(|&x| rate(x)).collect();
    let _ = writeln!(
        out,
        "{}",
        fit(format!(
            "  rates {} /s ({})",
            rates.join(", "),
            r.rates_rule
        ))
    );
    let _ = writeln!(
        out,
        "{}",
        fit(format!("  bench {}", r.bench_args.join(" ")))
    );
    for line in crate::env::render::header(&r.environment) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(c) = &r.comparability {
        let labels: Vec<String> = ["A", "B"].iter().map(|s| s.to_string()).collect();
        for line in c.lines(&labels) {
            let _ = writeln!(out, "{}", fit(format!("  {line}")));
        }
    }
    runs(r, &mut out);
    out.push('\n');
    let _ = writeln!(
        out,
        "Each build's figure is the median of its per-run figures (each run's own quantile),"
    );
    let _ = writeln!(
        out,
        "never a percentile pooled over runs; interval: 95% bootstrap over the pairs."
    );
    let _ = writeln!(
        out,
        "{}",
        fit(format!(
            "Policy {}; floor: {}",
            r.policy.source,
            match (r.mode, &r.floor_file, &r.floor_note) {
                (Mode::Noise, _, _) => {
                    "the largest difference within an A/A pair or among one side's runs".to_string()
                }
                (_, Some(f), None) => format!("{f} and the range of each build's runs"),
                (_, _, Some(note)) => note.clone(),
                (_, None, None) => {
                    "the range of each build's runs in this session (no --floor)".to_string()
                }
            }
        ))
    );
    let mut t = Table::new(&[
        "figure",
        "A",
        "B",
        "change",
        "95% interval",
        "floor",
        "limit",
        "verdict",
    ]);
    for f in &r.figures {
        t.row(vec![
            f.key.clone(),
            value(&f.unit, f.median_baseline),
            value(&f.unit, f.median_candidate),
            f.change.map_or("-".to_string(), pct),
            f.interval.map_or("-".to_string(), |(lo, hi)| {
                format!("[{}, {}]", pct(lo), pct(hi))
            }),
            f.floor.map_or("-".to_string(), |x| {
                format!(
                    "{:.1}%{}",
                    100.0 * x,
                    match f.floor_source {
                        FloorSource::InRun => "r",
                        _ => "",
                    }
                )
            }),
            format!("{:.0}%", 100.0 * f.threshold),
            f.verdict.word().to_string(),
        ]);
    }
    out.push_str(&t.render());
    for line in wrap(&legend(r)) {
        let _ = writeln!(out, "{line}");
    }
    pairs(r, &mut out);
    if !r.cost.is_empty() {
        let _ = writeln!(out, "{}", fit(r.cost.clone()));
    }
    for line in wrap(&gate_line(r)) {
        let _ = writeln!(out, "{line}");
    }
    let (reg, imp, same, ungateable) = r.tally();
    let _ = writeln!(
        out,
        "\nverdict: {reg} regression{}, {imp} improvement{}, {same} no change, {ungateable} ungateable",
        if reg == 1 { "" } else { "s" },
        if imp == 1 { "" } else { "s" }
    );
    if !r.windows_equal {
        let _ = writeln!(
            out,
            "WARNING: the runs' windows differ in length by more than 5%: not a matched comparison"
        );
    }
    out
}

/// One line: which measures could give a verdict in this session and from what floor,
/// and which could not and why — on a busy machine the latency verdicts are withheld
/// while CPU time and instructions may still be gated.
pub fn gate_line(r: &AbReport) -> String {
    let mut could = Vec::new();
    let mut could_not = Vec::new();
    for m in [Measure::Wall, Measure::Cpu, Measure::Instructions] {
        let figs: Vec<&FigureResult> = r.figures.iter().filter(|f| f.measure == m).collect();
        if figs.is_empty() {
            continue;
        }
        let gated: Vec<&&FigureResult> = figs
            .iter()
            .filter(|f| f.verdict != Verdict::Ungateable)
            .collect();
        if gated.is_empty() {
            let why = if figs.iter().any(|f| f.withheld) {
                "withheld: a run was disturbed"
            } else {
                "each limit ≤ its floor"
            };
            could_not.push(format!("{} ({why})", m.name()));
        } else {
            let floor = gated.iter().filter_map(|f| f.floor).fold(0.0f64, f64::max);
            could.push(format!(
                "{} ({} of {}, floor ≤ {:.2}%)",
                m.name(),
                gated.len(),
                figs.len(),
                100.0 * floor
            ));
        }
    }
    let list = |v: Vec<String>| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    format!("gateable: {}; not: {}", list(could), list(could_not))
}

/// What the figures table's marks mean: `r` and `ungateable` only if the table holds one.
fn legend(r: &AbReport) -> String {
    let mut notes = Vec::new();
    if r.figures
        .iter()
        .any(|f| f.floor.is_some() && f.floor_source == FloorSource::InRun)
    {
        notes.push("floor r: from this session's runs only");
    }
    notes.push(
        "limit: the policy's threshold, which a verdict needs the change to pass with its \
         interval clear of zero",
    );
    if r.figures.iter().any(|f| f.verdict == Verdict::Ungateable) {
        notes.push("ungateable: limit ≤ floor");
    }
    notes.join("; ")
}

fn runs(r: &AbReport, out: &mut String) {
    let load = |l: Option<f64>| l.map_or("?".to_string(), |l| format!("{l:.2}"));
    let cells: Vec<String> = r
        .runs
        .iter()
        .map(|x| {
            format!(
                "{}{} {}→{} {:.1}s{}",
                x.order + 1,
                x.side.letter(),
                load(x.load_start),
                load(x.load_end),
                x.measured.window_secs,
                if x.measured.disturbed.is_empty() {
                    ""
                } else {
                    " DISTURBED"
                }
            )
        })
        .collect();
    let mut line = "  runs (load start→end, window):".to_string();
    for c in cells {
        if line.chars().count() + c.len() + 3 > crate::env::render::WIDTH {
            let _ = writeln!(out, "{line}");
            line = "   ".to_string();
        }
        line.push_str(" | ");
        line.push_str(&c);
    }
    let _ = writeln!(out, "{line}");
    let disturbed: Vec<&RunRecord> = r
        .runs
        .iter()
        .filter(|x| !x.measured.disturbed.is_empty())
        .collect();
    if !disturbed.is_empty() {
        for line in wrap(&format!(
            "  {} of {} runs DISTURBED (docs/PERF.md, rule 8): every wall-clock verdict is \
             withheld (CPU time and instructions are gated by their own floors)",
            disturbed.len(),
            r.runs.len()
        )) {
            let _ = writeln!(out, "{line}");
        }
        for x in disturbed {
            for why in &x.measured.disturbed {
                let _ = writeln!(
                    out,
                    "{}",
                    fit(format!("    run {}{}: {why}", x.order + 1, x.side.letter()))
                );
            }
        }
    }
}

/// Each pair's figures, A → B, when they fit; the JSON always has them.
fn pairs(r: &AbReport, out: &mut String) {
    if r.pairs > 4 {
        let _ = writeln!(out, "(each pair's figures: in the JSON, `figures[].pairs`)");
        return;
    }
    let mut headers = vec!["figure".to_string()];
    headers.extend((1..=r.pairs).map(|p| format!("pair {p}: A → B")));
    let h: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut t = Table::new(&h);
    for f in &r.figures {
        let mut row = vec![f.key.clone()];
        row.extend(
            f.pairs
                .iter()
                .map(|&(a, b)| format!("{} → {}", value(&f.unit, a), value(&f.unit, b))),
        );
        t.row(row);
    }
    let _ = writeln!(out, "\neach pair's figures");
    out.push_str(&t.render());
}
