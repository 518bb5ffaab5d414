//! Text for a terminal: ids, titles and query ids are data from files, so their control
//! characters are shown escaped; a document cannot move the cursor, recolour the screen
//! or forge a line of output. JSON output is exact and goes through none of this.

use std::borrow::Cow;
use std::cmp::Ordering;

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

/// Natural order for ids: runs of digits compare as numbers (`2` < `10` < `100`), the
/// rest as text, so `q2` comes before `q10`. Ties (`7` and `007`) fall back to the bytes.
pub(crate) fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a, b);
    loop {
        match (x.chars().next(), y.chars().next()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let (n, rest_x) = split_digits(x);
                let (m, rest_y) = split_digits(y);
                let (n, m) = (n.trim_start_matches('0'), m.trim_start_matches('0'));
                let order = n.len().cmp(&m.len()).then_with(|| n.cmp(m));
                if order != Ordering::Equal {
                    return order;
                }
                (x, y) = (rest_x, rest_y);
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(&d);
                }
                (x, y) = (&x[c.len_utf8()..], &y[d.len_utf8()..]);
            }
        }
    }
}

fn split_digits(s: &str) -> (&str, &str) {
    s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()))
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

    #[test]
    fn ids_sort_naturally_numbers_as_numbers() {
        let mut ids = vec![
            "100", "10", "2", "1", "q10", "q2", "q1b", "q1a", "b", "a10", "a9", "007", "7",
        ];
        ids.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            ids,
            [
                "1", "2", "007", "7", "10", "100", "a9", "a10", "b", "q1a", "q1b", "q2", "q10"
            ]
        );
        // Digits longer than any integer type still compare.
        assert_eq!(
            natural_cmp("99999999999999999999999", "100000000000000000000000"),
            Ordering::Less
        );
    }
}
