//! Martin Porter's stemmer as Lucene's `PorterStemFilter` (and so Anserini) applies it.
//!
//! This is the algorithm of Porter's own reference implementation, which departs from
//! the 1980 paper (and from Snowball's `porter`) in two rules of step 2 — `-bli` becomes
//! `-ble` (the paper has `-abli` → `-able`) and `-logi` becomes `-log` — and leaves words
//! of one or two letters alone. In a biomedical corpus the difference is not academic:
//! `immunology` and `immunological` both become `immunolog` here (`immunologi` and
//! `immunolog` in Snowball's), and `possibly` becomes `possibl` (`possibli`).
//!
//! Like Lucene it works on UTF-16 code units; only ASCII letters take part in the rules,
//! any other character counts as a consonant.
//!
//! The steps keep Porter's structure: `b` is the word, `k` the index of its last
//! character, and a successful suffix test leaves in `j` the index of the last character
//! before the suffix, so that `m()` measures the stem the rule would keep.

use std::borrow::Cow;

/// Stems one lowercase token.
pub(crate) fn stem(word: &str) -> Cow<'_, str> {
    let units: Vec<u16> = word.encode_utf16().collect();
    if units.len() < 3 {
        return Cow::Borrowed(word);
    }
    let mut p = Porter {
        k: units.len() as i32 - 1,
        j: 0,
        b: units,
    };
    let original_len = p.b.len();
    p.step1ab();
    p.step1c();
    p.step2();
    p.step3();
    p.step4();
    p.step5();
    let end = (p.k + 1) as usize;
    if end == original_len && p.b[..end] == *word.encode_utf16().collect::<Vec<_>>() {
        return Cow::Borrowed(word);
    }
    match String::from_utf16(&p.b[..end]) {
        Ok(s) => Cow::Owned(s),
        // Only ASCII letters are ever removed or replaced, so this cannot happen.
        Err(_) => Cow::Borrowed(word),
    }
}

struct Porter {
    /// The word; never shrunk, `k` marks its current end (rules read stale units past
    /// `k` exactly where Porter's implementation does).
    b: Vec<u16>,
    k: i32,
    j: i32,
}

fn is(unit: u16, c: char) -> bool {
    unit == c as u16
}

impl Porter {
    fn at(&self, i: i32) -> u16 {
        self.b[i as usize]
    }

    /// Is `b[i]` a consonant? `y` is one at the start or after a vowel.
    fn cons(&self, i: i32) -> bool {
        match char::from_u32(self.at(i) as u32) {
            Some('a' | 'e' | 'i' | 'o' | 'u') => false,
            Some('y') => i == 0 || !self.cons(i - 1),
            _ => true,
        }
    }

    /// The measure of `b[0..=j]`: the number of vowel–consonant sequences, `m` in
    /// `[C](VC)^m[V]`.
    fn m(&self) -> usize {
        let mut n = 0;
        let mut i = 0;
        // Skip the leading consonants.
        loop {
            if i > self.j {
                return n;
            }
            if !self.cons(i) {
                break;
            }
            i += 1;
        }
        i += 1;
        loop {
            // A run of vowels...
            loop {
                if i > self.j {
                    return n;
                }
                if self.cons(i) {
                    break;
                }
                i += 1;
            }
            i += 1;
            n += 1;
            // ...then of consonants.
            loop {
                if i > self.j {
                    return n;
                }
                if !self.cons(i) {
                    break;
                }
                i += 1;
            }
            i += 1;
        }
    }

    /// Does `b[0..=j]` contain a vowel?
    fn vowel_in_stem(&self) -> bool {
        (0..=self.j).any(|i| !self.cons(i))
    }

    /// Do `b[i-1]` and `b[i]` form a double consonant?
    fn double_cons(&self, i: i32) -> bool {
        i >= 1 && self.at(i) == self.at(i - 1) && self.cons(i)
    }

    /// Is `b[i-2..=i]` consonant–vowel–consonant, the last not `w`, `x` or `y`? (The
    /// condition for restoring an `e`: `hop(e)`, `fil(e)`.)
    fn cvc(&self, i: i32) -> bool {
        if i < 2 || !self.cons(i) || self.cons(i - 1) || !self.cons(i - 2) {
            return false;
        }
        let last = self.at(i);
        !(is(last, 'w') || is(last, 'x') || is(last, 'y'))
    }

    /// Does the word end with `suffix`? If so, `j` marks the end of the stem before it.
    fn ends(&mut self, suffix: &str) -> bool {
        let len = suffix.len() as i32;
        let start = self.k - len + 1;
        if start < 0 {
            return false;
        }
        let matches = suffix
            .bytes()
            .enumerate()
            .all(|(o, c)| self.at(start + o as i32) == c as u16);
        if matches {
            self.j = self.k - len;
        }
        matches
    }

    /// Replaces what follows `j` with `s`.
    fn set_to(&mut self, s: &str) {
        let start = (self.j + 1) as usize;
        let needed = start + s.len();
        if self.b.len() < needed {
            self.b.resize(needed, 0);
        }
        for (o, c) in s.bytes().enumerate() {
            self.b[start + o] = c as u16;
        }
        self.k = self.j + s.len() as i32;
    }

    /// `set_to(s)` if the stem's measure is above 0.
    fn replace(&mut self, s: &str) {
        if self.m() > 0 {
            self.set_to(s);
        }
    }

    /// Plurals and `-ed`/`-ing`: caresses → caress, ponies → poni, cats → cat,
    /// agreed → agree, plastered → plaster, motoring → motor, hopping → hop, filing → file.
    fn step1ab(&mut self) {
        if is(self.at(self.k), 's') {
            if self.ends("sses") {
                self.k -= 2;
            } else if self.ends("ies") {
                self.set_to("i");
            } else if !is(self.at(self.k - 1), 's') {
                self.k -= 1;
            }
        }
        if self.ends("eed") {
            if self.m() > 0 {
                self.k -= 1;
            }
        } else if (self.ends("ed") || self.ends("ing")) && self.vowel_in_stem() {
            self.k = self.j;
            if self.ends("at") {
                self.set_to("ate");
            } else if self.ends("bl") {
                self.set_to("ble");
            } else if self.ends("iz") {
                self.set_to("ize");
            } else if self.double_cons(self.k) {
                let last = self.at(self.k);
                if !(is(last, 'l') || is(last, 's') || is(last, 'z')) {
                    self.k -= 1;
                }
            } else if self.m() == 1 && self.cvc(self.k) {
                self.set_to("e");
            }
        }
    }

    /// A final `y` after a vowel in the stem becomes `i`: happy → happi, sky stays.
    fn step1c(&mut self) {
        if self.ends("y") && self.vowel_in_stem() {
            let k = self.k as usize;
            self.b[k] = 'i' as u16;
        }
    }

    /// Double suffixes to single ones, when the stem's measure is above 0:
    /// relational → relate, digitizer → digitize, biologi → biolog.
    fn step2(&mut self) {
        if self.k == 0 {
            return;
        }
        let rules: &[(&str, &str)] = match char::from_u32(self.at(self.k - 1) as u32) {
            Some('a') => &[("ational", "ate"), ("tional", "tion")],
            Some('c') => &[("enci", "ence"), ("anci", "ance")],
            Some('e') => &[("izer", "ize")],
            Some('l') => &[
                ("bli", "ble"),
                ("alli", "al"),
                ("entli", "ent"),
                ("eli", "e"),
                ("ousli", "ous"),
            ],
            Some('o') => &[("ization", "ize"), ("ation", "ate"), ("ator", "ate")],
            Some('s') => &[
                ("alism", "al"),
                ("iveness", "ive"),
                ("fulness", "ful"),
                ("ousness", "ous"),
            ],
            Some('t') => &[("aliti", "al"), ("iviti", "ive"), ("biliti", "ble")],
            Some('g') => &[("logi", "log")],
            _ => &[],
        };
        self.first_rule(rules);
    }

    /// `-ic-`, `-full`, `-ness` and the like: triplicate → triplic, hopeful → hope.
    fn step3(&mut self) {
        let rules: &[(&str, &str)] = match char::from_u32(self.at(self.k) as u32) {
            Some('e') => &[("icate", "ic"), ("ative", ""), ("alize", "al")],
            Some('i') => &[("iciti", "ic")],
            Some('l') => &[("ical", "ic"), ("ful", "")],
            Some('s') => &[("ness", "")],
            _ => &[],
        };
        self.first_rule(rules);
    }

    /// The first rule whose suffix matches is the only one tried, whether or not its
    /// measure condition then holds.
    fn first_rule(&mut self, rules: &[(&str, &str)]) {
        for (suffix, replacement) in rules {
            if self.ends(suffix) {
                self.replace(replacement);
                return;
            }
        }
    }

    /// Removes a final suffix when the stem's measure is above 1:
    /// revival → reviv, adoption → adopt, homologous → homolog.
    fn step4(&mut self) {
        if self.k == 0 {
            return;
        }
        let suffixes: &[&str] = match char::from_u32(self.at(self.k - 1) as u32) {
            Some('a') => &["al"],
            Some('c') => &["ance", "ence"],
            Some('e') => &["er"],
            Some('i') => &["ic"],
            Some('l') => &["able", "ible"],
            Some('n') => &["ant", "ement", "ment", "ent"],
            Some('o') => {
                let after_s_or_t = self.ends("ion")
                    && self.j >= 0
                    && (is(self.at(self.j), 's') || is(self.at(self.j), 't'));
                if !after_s_or_t && !self.ends("ou") {
                    return;
                }
                &[]
            }
            Some('s') => &["ism"],
            Some('t') => &["ate", "iti"],
            Some('u') => &["ous"],
            Some('v') => &["ive"],
            Some('z') => &["ize"],
            _ => return,
        };
        if !suffixes.is_empty() && !suffixes.iter().any(|s| self.ends(s)) {
            return;
        }
        if self.m() > 1 {
            self.k = self.j;
        }
    }

    /// A final `e` (probate → probat, rate stays) and a final double `l` (controll →
    /// control) go when the measure allows.
    fn step5(&mut self) {
        self.j = self.k;
        if is(self.at(self.k), 'e') {
            let m = self.m();
            if m > 1 || (m == 1 && !self.cvc(self.k - 1)) {
                self.k -= 1;
            }
        }
        if is(self.at(self.k), 'l') && self.double_cons(self.k) && self.m() > 1 {
            self.k -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::stem;

    fn check(pairs: &[(&str, &str)]) {
        for (word, want) in pairs {
            assert_eq!(stem(word), *want, "stem({word:?})");
        }
    }

    #[test]
    fn the_examples_of_porters_paper() {
        check(&[
            ("caresses", "caress"),
            ("ponies", "poni"),
            ("ties", "ti"),
            ("caress", "caress"),
            ("cats", "cat"),
            ("feed", "feed"),
            ("agreed", "agre"),
            ("plastered", "plaster"),
            ("bled", "bled"),
            ("motoring", "motor"),
            ("sing", "sing"),
            ("conflated", "conflat"),
            ("troubled", "troubl"),
            ("sized", "size"),
            ("hopping", "hop"),
            ("tanned", "tan"),
            ("falling", "fall"),
            ("hissing", "hiss"),
            ("fizzed", "fizz"),
            ("failing", "fail"),
            ("filing", "file"),
            ("happy", "happi"),
            ("sky", "sky"),
            ("relational", "relat"),
            ("conditional", "condit"),
            ("rational", "ration"),
            ("digitizer", "digit"),
            ("callousness", "callous"),
            ("triplicate", "triplic"),
            ("hopeful", "hope"),
            ("goodness", "good"),
            ("revival", "reviv"),
            ("allowance", "allow"),
            ("adoption", "adopt"),
            ("homologous", "homolog"),
            ("effective", "effect"),
            ("probate", "probat"),
            ("rate", "rate"),
            ("cease", "ceas"),
            ("controlling", "control"),
            ("roll", "roll"),
            ("generalizations", "gener"),
            ("oscillators", "oscil"),
        ]);
    }

    #[test]
    fn the_reference_implementations_departures_from_the_paper() {
        // -bli → -ble and -logi → -log (Snowball's porter keeps "possibli", "immunologi").
        check(&[
            ("possibly", "possibl"),
            ("immunology", "immunolog"),
            ("immunological", "immunolog"),
            ("anthropology", "anthropolog"),
            // -logi needs a measure above 0 before it: bio-logi keeps its i.
            ("biology", "biologi"),
            ("biological", "biolog"),
        ]);
    }

    #[test]
    fn short_words_and_non_ascii_are_left_alone_where_lucene_leaves_them() {
        check(&[
            ("us", "us"),
            ("is", "is"),
            ("gas", "ga"),
            ("a", "a"),
            ("", ""),
        ]);
        check(&[("naïve", "naïv"), ("größe", "größe"), ("東京", "東京")]);
    }
}
