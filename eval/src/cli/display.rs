//! Text for a terminal: ids, titles and query ids are data from files, so their control
//! characters are shown escaped; a document cannot move the cursor, recolour the screen
//! or forge a line of output. JSON output is exact and goes through none of this.

use std::borrow::Cow;

/// `s` with each control character (and each bidirectional override, which reorders
/// what follows it on screen) written as a Rust escape: `\n`, `\t`, `\u{1b}`, `\u{202e}`.
/// Everything else, backslashes included, is shown as is: this is for reading, not for
/// parsing back (use --json for that).
pub(crate) fn escape_controls(s: &str) -> Cow<'_, str> {
    if !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if needs_escape(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert!(matches!(
            escape_controls("plain ünï ☃ \\n"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            escape_controls("a\nb\tc\u{1b}[31md\u{7f}\u{9b}\u{202e}e\r"),
            "a\\nb\\tc\\u{1b}[31md\\u{7f}\\u{9b}\\u{202e}e\\r"
        );
        assert_eq!(format!("{:<6}|", escape_controls("x")), "x     |");
    }
}
