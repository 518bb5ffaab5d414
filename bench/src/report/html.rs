//! The comparison as one self-contained HTML page (`heddle-bench bench --html FILE`),
//! built with heddle-eval's HTML writer: the environment, the agreement check, the
//! heddle/tantivy ratios as a table, then the ladder's own sections (its table, the
//! plot, the sequential pass) and the whole text report.

use heddle_eval::bench::report::BenchReport;
use heddle_eval::html::{Body, Page, Table, environment_body, ladder_sections};

use super::{CompareReport, reading, render_ratios, show};

/// The page of one comparison run; `agreement` is the agreement check's text as printed.
pub fn page(report: &CompareReport, ladder: &BenchReport, agreement: Option<&str>) -> Page {
    let date = report
        .environment
        .as_ref()
        .map_or("date unknown".to_string(), |e| e.started_utc.clone());
    let mut page = Page::new(
        &format!(
            "heddle against tantivy {} — {}",
            report.tantivy_version, report.analysis_label
        ),
        &format!(
            "corpus {} · queries {} · {date} · {}",
            report.corpus, report.queries, report.tool
        ),
    );
    page.section(
        "environment",
        "Environment",
        environment_body(report.environment.as_ref()),
    );
    let ratios = Table {
        caption: Some("heddle / tantivy; above 1: heddle's figure is larger".to_string()),
        header: ["figure", "heddle", "tantivy", "heddle/tantivy", "reading"]
            .iter()
            .map(|h| h.to_string())
            .collect(),
        rows: report
            .ratios
            .iter()
            .map(|row| {
                let cell = |v: Option<f64>| v.map_or("—".to_string(), |v| show(row.kind, v));
                let mut words = row.ratio.map_or(String::new(), |r| reading(row, r));
                if !row.note.is_empty() {
                    words = format!("{words} ({})", row.note);
                }
                if row.disturbed {
                    words = format!("{words} (from a disturbed rung: may be the machine's)");
                }
                (
                    row.disturbed.then_some("disturbed"),
                    vec![
                        row.label.clone(),
                        cell(row.heddle),
                        cell(row.tantivy),
                        row.ratio.map_or("—".to_string(), |r| format!("{r:.2}×")),
                        words,
                    ],
                )
            })
            .collect(),
    };
    page.section("ratios", "Ratios", Body::new().table(&ratios));
    if let Some(text) = agreement {
        page.section("agreement", "Agreement", Body::new().pre(text));
    }
    ladder_sections(&mut page, ladder);
    let sequential: Vec<_> = report
        .engines
        .iter()
        .filter_map(|e| e.sequential.clone())
        .collect();
    if !sequential.is_empty() {
        page.section(
            "compare-sequential",
            "Sequential pass (each engine)",
            Body::new().pre(&heddle_eval::bench::sequential::render(&sequential)),
        );
    }
    if let Some(p) = &report.per_query {
        page.section(
            "compare-per-query",
            "Per query, heddle against tantivy",
            Body::new().pre(&heddle_eval::bench::sequential::per_query::render(p)),
        );
    }
    page.section(
        "comparison",
        "Every figure (the comparison's text report)",
        Body::new().pre(&render_ratios(report)),
    );
    page
}
