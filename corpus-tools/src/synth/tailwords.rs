//! Words beyond the model's known vocabulary, made up from their index: unbounded, unique,
//! pronounceable.
//!
//! Tail word `t` is two or more consonant–vowel syllables followed by a suffix that starts
//! with a vowel or `y`: `t % 16` picks the suffix and `t / 16 + 76` written in bijective
//! base 75 picks the syllables. Because a suffix never starts with a consonant, a word
//! splits into syllables and suffix in exactly one way, so distinct indices give distinct
//! words, and [`decode`] can tell whether a real word happens to be spelled like one.
//! Rarer words (higher indices) get longer, as in natural text:
//!
//! | index | word |
//! |---|---|
//! | 0 | `babain` |
//! | 1 | `babaase` |
//! | 16 | `babein` |
//! | 90,000 | `bababain` |
//! | 2^30 | `becobulutuin` |

const CONSONANTS: &[u8; 15] = b"bcdfgklmnprstvz";
const VOWELS: &[u8; 5] = b"aeiou";
const SYLLABLES: u64 = 75;
const SUFFIXES: [&str; 16] = [
    "in", "ase", "ol", "ine", "osis", "itis", "ide", "an", "ate", "ic", "al", "ium", "one", "yl",
    "ema", "ent",
];

/// Appends tail word number `index` to `out`.
pub(crate) fn encode_into(index: u64, out: &mut String) {
    let suffix = SUFFIXES[(index % 16) as usize];
    // Bijective base-75 digits of n, least significant first; n > 75 so at least two.
    let mut n = index / 16 + SYLLABLES + 1;
    let mut digits = [0u8; 16];
    let mut len = 0;
    while n > 0 {
        let d = (n - 1) % SYLLABLES;
        digits[len] = d as u8;
        len += 1;
        n = (n - 1) / SYLLABLES;
    }
    for &d in digits[..len].iter().rev() {
        out.push(CONSONANTS[(d / 5) as usize] as char);
        out.push(VOWELS[(d % 5) as usize] as char);
    }
    out.push_str(suffix);
}

/// Tail word number `index` as a new string.
#[cfg(test)]
pub(crate) fn encode(index: u64) -> String {
    let mut s = String::new();
    encode_into(index, &mut s);
    s
}

/// The index whose tail word is spelled `word`, if any.
pub(crate) fn decode(word: &str) -> Option<u64> {
    let bytes = word.as_bytes();
    let mut n: u64 = 0;
    let mut i = 0;
    while i + 1 < bytes.len() {
        let (Some(c), Some(v)) = (
            CONSONANTS.iter().position(|&b| b == bytes[i]),
            VOWELS.iter().position(|&b| b == bytes[i + 1]),
        ) else {
            break;
        };
        n = n
            .checked_mul(SYLLABLES)?
            .checked_add((c * 5 + v) as u64 + 1)?;
        i += 2;
    }
    let suffix = SUFFIXES.iter().position(|s| s.as_bytes() == &bytes[i..])?;
    if i < 4 {
        return None;
    }
    let k = n.checked_sub(SYLLABLES + 1)?;
    k.checked_mul(16)?.checked_add(suffix as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_words_are_short_and_distinct() {
        assert_eq!(encode(0), "babain");
        assert_eq!(encode(1), "babaase");
        assert_eq!(encode(16), "babein");
        assert_eq!(encode(90_000), "bababain");
        let words: Vec<String> = (0..20_000).map(encode).collect();
        let mut sorted = words.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), words.len());
    }

    #[test]
    fn decode_inverts_encode_across_lengths() {
        for index in (0..200_000).chain([1 << 20, 1 << 33, u64::MAX / 17, u64::MAX]) {
            assert_eq!(decode(&encode(index)), Some(index), "{index}");
        }
    }

    #[test]
    fn real_words_mostly_do_not_decode() {
        for w in [
            "the", "virus", "protein", "in", "bapi", "ba", "xin", "babapinx",
        ] {
            assert_eq!(decode(w), None, "{w}");
        }
        // A real word can be spelled like a tail word; the model must skip those indices.
        assert!(decode("tomatoine").is_some());
    }

    #[test]
    fn words_get_longer_with_the_index() {
        assert!(encode(90_000).len() > encode(10).len());
        assert!(encode(1 << 30).len() > encode(90_000).len());
    }
}
