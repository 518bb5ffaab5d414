//! One self-contained HTML report (`--html FILE`): the environment, every table and every
//! chart of a run in one file that needs no network (the stylesheet and the SVGs are
//! inline, there is no script), readable in a browser and printable (a print
//! stylesheet). [`Page`] is the writer; `reports` turns each kind of run into a page.
//!
//! Every text that reaches the page goes through [`escape`]: query texts, index paths and
//! labels may hold `<`, `&` or quotes.
//!
//! ```
//! use heddle_eval::html::{Body, Page};
//! let mut page = Page::new("a <title>", "a subtitle");
//! page.section("notes", "Notes", Body::new().paragraph("x < y & z"));
//! let html = page.render();
//! assert!(html.contains("x &lt; y &amp; z") && html.contains("a &lt;title&gt;"));
//! ```

mod reports;

use std::fmt::Write;
use std::path::Path;

use anyhow::Context;

pub use reports::{bench_page, environment_body, ladder_sections, quality_page, writes_page};

/// Escapes text for HTML (and SVG) character data and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A whole report: a title, a subtitle, and sections in order (each listed in the
/// contents at the top).
#[derive(Debug, Clone)]
pub struct Page {
    title: String,
    subtitle: String,
    sections: Vec<(String, String, Body)>,
}

/// The body of one section, built from escaped parts.
#[derive(Debug, Clone, Default)]
pub struct Body(String);

/// A table: a header row, then rows; a row may carry a class (`overloaded`, `invalid`,
/// `disturbed`) that the stylesheet marks.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub caption: Option<String>,
    pub header: Vec<String>,
    pub rows: Vec<(Option<&'static str>, Vec<String>)>,
}

impl Body {
    pub fn new() -> Self {
        Body::default()
    }

    pub fn paragraph(mut self, text: &str) -> Self {
        let _ = writeln!(self.0, "<p>{}</p>", escape(text));
        self
    }

    /// Preformatted text: the plain-text tables, as the terminal shows them.
    pub fn pre(mut self, text: &str) -> Self {
        let _ = writeln!(self.0, "<pre>{}</pre>", escape(text.trim_end()));
        self
    }

    /// An SVG document, inline. The SVGs are the project's own (every text in them is
    /// escaped where it is drawn); an XML declaration, if any, is dropped.
    pub fn svg(mut self, svg: &str, caption: &str) -> Self {
        let svg = match svg.find("<svg") {
            Some(i) => &svg[i..],
            None => svg,
        };
        let _ = writeln!(
            self.0,
            "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>",
            svg.trim_end(),
            escape(caption)
        );
        self
    }

    pub fn table(mut self, t: &Table) -> Self {
        self.0.push_str("<div class=\"scroll\"><table>\n");
        if let Some(c) = &t.caption {
            let _ = writeln!(self.0, "<caption>{}</caption>", escape(c));
        }
        self.0.push_str("<thead><tr>");
        for h in &t.header {
            let _ = write!(self.0, "<th>{}</th>", escape(h));
        }
        self.0.push_str("</tr></thead>\n<tbody>\n");
        for (class, cells) in &t.rows {
            match class {
                Some(c) => {
                    let _ = write!(self.0, "<tr class=\"{c}\">");
                }
                None => self.0.push_str("<tr>"),
            }
            for cell in cells {
                let numeric = cell
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_digit() || c == '—' || c == '-' || c == '+');
                let _ = write!(
                    self.0,
                    "<td{}>{}</td>",
                    if numeric { " class=\"num\"" } else { "" },
                    escape(cell)
                );
            }
            self.0.push_str("</tr>\n");
        }
        self.0.push_str("</tbody>\n</table></div>\n");
        self
    }
}

/// The stylesheet, screen and print: no web fonts, nothing fetched.
const STYLE: &str = r#"
:root { color-scheme: light; }
body { font-family: Helvetica, Arial, sans-serif; color: #222; margin: 24px auto; max-width: 1100px; padding: 0 16px; line-height: 1.4; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; border-bottom: 1px solid #ccc; padding-bottom: 3px; margin-top: 28px; }
p.subtitle { color: #555; margin: 0 0 12px; }
nav ol { columns: 3; font-size: 13px; padding-left: 20px; }
pre { background: #f6f6f6; border: 1px solid #e2e2e2; padding: 8px; overflow-x: auto; font-size: 12px; line-height: 1.3; }
div.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
caption { text-align: left; color: #555; padding-bottom: 4px; }
th, td { border: 1px solid #d6d6d6; padding: 3px 7px; white-space: nowrap; }
th { background: #eef2f7; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.overloaded td { background: #fbeaea; }
tr.invalid td { background: #fff3cd; }
tr.disturbed td { background: #e6ecf8; }
figure { margin: 12px 0; }
figure svg { max-width: 100%; height: auto; border: 1px solid #e2e2e2; }
figcaption { color: #555; font-size: 13px; }
footer { color: #888; font-size: 12px; margin-top: 32px; }
@page { size: A4; margin: 12mm; }
@media print {
  body { margin: 0; max-width: none; font-size: 10pt; }
  nav { display: none; }
  h2 { break-after: avoid; }
  figure, table { break-inside: avoid; }
  pre { white-space: pre-wrap; font-size: 7pt; border: none; background: none; }
  div.scroll { overflow: visible; }
  table { font-size: 8pt; }
  th, td { padding: 1px 4px; white-space: normal; }
  figure svg { width: 100%; border: none; }
}
"#;

impl Page {
    pub fn new(title: &str, subtitle: &str) -> Self {
        Page {
            title: title.to_string(),
            subtitle: subtitle.to_string(),
            sections: Vec::new(),
        }
    }

    /// Adds a section; `id` is its anchor (a plain word the caller chooses).
    pub fn section(&mut self, id: &str, heading: &str, body: Body) -> &mut Self {
        self.sections
            .push((id.to_string(), heading.to_string(), body));
        self
    }

    /// The whole document.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"generator\" content=\"heddle-eval {}\">\n<title>{}</title>\n\
             <style>{STYLE}</style>\n</head>\n<body data-report=\"heddle\">\n",
            env!("CARGO_PKG_VERSION"),
            escape(&self.title)
        );
        let _ = writeln!(
            out,
            "<header>\n<h1>{}</h1>\n<p class=\"subtitle\">{}</p>\n</header>",
            escape(&self.title),
            escape(&self.subtitle)
        );
        out.push_str("<nav><ol>\n");
        for (id, heading, _) in &self.sections {
            let _ = writeln!(
                out,
                "<li><a href=\"#{}\">{}</a></li>",
                escape(id),
                escape(heading)
            );
        }
        out.push_str("</ol></nav>\n");
        for (id, heading, body) in &self.sections {
            let _ = writeln!(
                out,
                "<section id=\"{}\">\n<h2>{}</h2>\n{}</section>",
                escape(id),
                escape(heading),
                body.0
            );
        }
        let _ = writeln!(
            out,
            "<footer>Written by heddle-eval {}; self-contained: no script, nothing fetched.</footer>\n</body>\n</html>",
            env!("CARGO_PKG_VERSION")
        );
        out
    }

    /// Writes the page, replacing the file atomically (a temporary file beside it, then
    /// a rename). Its directory must exist ([`crate::output`]).
    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        let tmp = path.with_file_name(format!(
            ".{}.{}.tmp",
            path.file_name()
                .map_or("report".into(), |n| n.to_string_lossy()),
            std::process::id()
        ));
        std::fs::write(&tmp, self.render())
            .with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, path).with_context(|| format!("replacing {}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_text_is_escaped_and_nothing_is_fetched() {
        let hostile = r#"<script>alert("x")</script> & 'q'"#;
        let mut page = Page::new(hostile, hostile);
        page.section(
            "q",
            hostile,
            Body::new().paragraph(hostile).pre(hostile).table(&Table {
                caption: Some(hostile.to_string()),
                header: vec![hostile.to_string()],
                rows: vec![(None, vec![hostile.to_string()])],
            }),
        );
        let html = page.render();
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("& '"), "a bare ampersand: {html}");
        // title, h1, subtitle, contents, heading, paragraph, pre, caption, th, td.
        let escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;";
        assert_eq!(html.matches(escaped).count(), 10, "{html}");
    }
}
