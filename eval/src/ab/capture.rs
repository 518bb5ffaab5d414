//! `--capture-into FILE`: the report written into a markdown file between two markers,
//! everything else in the file left byte for byte as it was. A results document is
//! never overwritten whole.

use std::path::Path;

use anyhow::{Context, bail};

pub const BEGIN: &str = "<!-- BEGIN heddle capture -->";
pub const END: &str = "<!-- END heddle capture -->";

/// `text` with what lies between the markers replaced by `content` (the markers stay,
/// each on its line). Fails unless each marker occurs exactly once, BEGIN first.
pub fn splice(text: &str, content: &str) -> anyhow::Result<String> {
    let count = |m: &str| text.matches(m).count();
    if count(BEGIN) != 1 || count(END) != 1 {
        bail!(
            "the file must hold exactly one `{BEGIN}` and one `{END}` (it has {} and {})",
            count(BEGIN),
            count(END)
        );
    }
    let start = text.find(BEGIN).expect("counted") + BEGIN.len();
    let end = text.find(END).expect("counted");
    if end < start {
        bail!("`{END}` comes before `{BEGIN}`");
    }
    let mut body = content.to_string();
    if !body.ends_with('\n') {
        body.push('\n');
    }
    Ok(format!("{}\n{body}{}", &text[..start], &text[end..]))
}

/// Splices `content` into the file at `path` and replaces it atomically.
pub fn capture_into(path: &Path, content: &str) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--capture-into {}", path.display()))?;
    let out =
        splice(&text, content).with_context(|| format!("--capture-into {}", path.display()))?;
    let tmp = path.with_file_name(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map_or("capture".into(), |n| n.to_string_lossy()),
        std::process::id()
    ));
    std::fs::write(&tmp, out).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("replacing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_text_between_the_markers_changes() {
        let before = "# Results\n\nkept ✓ \r\n\n<!-- BEGIN heddle capture -->\nold\nold\n<!-- END heddle capture -->\ntail, no newline";
        let after = splice(before, "new table").unwrap();
        let (head, rest) = after.split_once(BEGIN).unwrap();
        assert_eq!(head, before.split_once(BEGIN).unwrap().0);
        assert_eq!(
            rest.split_once(END).unwrap().1,
            before.split_once(END).unwrap().1
        );
        assert!(after.contains("<!-- BEGIN heddle capture -->\nnew table\n<!-- END"));
        // Twice is the same as once.
        assert_eq!(splice(&after, "new table").unwrap(), after);
    }

    #[test]
    fn a_file_without_exactly_one_pair_of_markers_is_refused() {
        assert!(splice("no markers", "x").is_err());
        assert!(splice(&format!("{END}\n{BEGIN}\n"), "x").is_err());
        assert!(splice(&format!("{BEGIN}{END}{BEGIN}{END}"), "x").is_err());
    }
}
