//! Word segmentation and lowercasing.

use unicode_segmentation::UnicodeSegmentation;

/// The words of `text` by Unicode word boundaries (UAX #29): runs that contain at least
/// one letter or digit. Punctuation and whitespace between them are dropped; `2.5`,
/// `10,000` and `don't` stay whole, hyphens split.
pub(crate) fn words(text: &str) -> impl Iterator<Item = &str> {
    text.unicode_words()
}

/// Appends the lowercase form of `word` to `out`, with an ASCII fast path.
pub(crate) fn lowercase_into(word: &str, out: &mut String) {
    if word.is_ascii() {
        out.push_str(word);
        out.make_ascii_lowercase();
    } else {
        for c in word.chars() {
            out.extend(c.to_lowercase());
        }
    }
}
