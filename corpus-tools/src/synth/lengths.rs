//! How many words a document's title and text get.
//!
//! The default shape is TREC-COVID's as the BEIR paper gives it: mean title + text length
//! 160.8 words, a few percent of documents with an empty text (title only), titles of
//! roughly 8–20 words. Text lengths are a mixture of two lognormals: most abstracts are
//! close to the median (σ = 0.45), one in seven comes from a wide component (σ = 1.0)
//! that supplies both the very short texts and the long right tail (a few hundred
//! documents over 1,000 words at full scale). With `--like`, the lengths of the real
//! corpus's documents can be resampled instead.

use super::detmath;
use super::rng::Stream;

/// Lengths of one document, in words as heddle's `plain` analyzer counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocLengths {
    pub title: u32,
    pub text: u32,
}

/// The parametric TREC-COVID-like shape.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeParams {
    /// Target mean of title + text words over all documents.
    pub mean_words: f64,
    /// Fraction of documents whose text is empty.
    pub empty_text: f64,
    /// Median title length in words.
    pub title_median: f64,
}

impl ShapeParams {
    /// TREC-COVID as published in the BEIR paper (table 1).
    pub fn trec_covid() -> ShapeParams {
        ShapeParams {
            mean_words: 160.8,
            empty_text: 0.03,
            title_median: 12.0,
        }
    }
}

const TITLE_SIGMA: f64 = 0.3;
const TITLE_MIN: f64 = 3.0;
const TITLE_MAX: f64 = 40.0;
const NARROW_SIGMA: f64 = 0.45;
const WIDE_SIGMA: f64 = 1.0;
const WIDE_WEIGHT: f64 = 1.0 / 7.0;
/// The wide component's median relative to the narrow one's.
const WIDE_MEDIAN: f64 = 0.8;
const TEXT_MAX: f64 = 8000.0;

/// Where lengths come from.
#[derive(Debug, Clone)]
pub enum LengthModel {
    /// The parametric shape.
    Shape(ShapeParams),
    /// Lengths of real documents, drawn uniformly (from a `--like` corpus).
    Empirical(Vec<DocLengths>),
}

impl LengthModel {
    pub fn trec_covid() -> LengthModel {
        LengthModel::Shape(ShapeParams::trec_covid())
    }

    pub(crate) fn sample(&self, s: &mut Stream) -> DocLengths {
        match self {
            LengthModel::Empirical(all) => all[s.below(all.len() as u64) as usize],
            LengthModel::Shape(p) => {
                let title = lognormal(s, p.title_median, TITLE_SIGMA)
                    .round()
                    .clamp(TITLE_MIN, TITLE_MAX) as u32;
                if s.chance(p.empty_text) {
                    return DocLengths { title, text: 0 };
                }
                let median = narrow_median(p);
                let text = if s.chance(WIDE_WEIGHT) {
                    lognormal(s, median * WIDE_MEDIAN, WIDE_SIGMA)
                } else {
                    lognormal(s, median, NARROW_SIGMA)
                };
                DocLengths {
                    title,
                    text: text.round().clamp(1.0, TEXT_MAX) as u32,
                }
            }
        }
    }
}

/// The narrow component's median that gives the target mean: mean(title) is the
/// lognormal mean exp(σ²/2) · median, and the text mixture's mean is median times
/// ((1 - w) e^{σn²/2} + w · m_w · e^{σw²/2}).
fn narrow_median(p: &ShapeParams) -> f64 {
    let title_mean = p.title_median * detmath::exp(TITLE_SIGMA * TITLE_SIGMA / 2.0);
    let text_mean = (p.mean_words - title_mean) / (1.0 - p.empty_text);
    let factor = (1.0 - WIDE_WEIGHT) * detmath::exp(NARROW_SIGMA * NARROW_SIGMA / 2.0)
        + WIDE_WEIGHT * WIDE_MEDIAN * detmath::exp(WIDE_SIGMA * WIDE_SIGMA / 2.0);
    text_mean / factor
}

fn lognormal(s: &mut Stream, median: f64, sigma: f64) -> f64 {
    median * detmath::exp(sigma * s.normal())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::rng::Purpose;

    #[test]
    fn trec_covid_shape_has_the_published_mean_and_a_long_tail() {
        let m = LengthModel::trec_covid();
        let n = 40_000;
        let mut s = Stream::new(11, Purpose::Documents, 0);
        let docs: Vec<DocLengths> = (0..n).map(|_| m.sample(&mut s)).collect();
        let mean = docs.iter().map(|d| (d.title + d.text) as f64).sum::<f64>() / n as f64;
        assert!((mean - 160.8).abs() < 3.0, "mean {mean}");
        let empty = docs.iter().filter(|d| d.text == 0).count() as f64 / n as f64;
        assert!((0.02..0.04).contains(&empty), "empty {empty}");
        let titles_in_range = docs.iter().filter(|d| (8..=20).contains(&d.title)).count();
        assert!(titles_in_range as f64 / n as f64 > 0.85);
        let long = docs.iter().filter(|d| d.text > 1000).count();
        let short = docs.iter().filter(|d| d.text > 0 && d.text < 20).count();
        assert!(long > 20, "{long} texts over 1,000 words");
        assert!(short > 20, "{short} texts under 20 words");
    }

    #[test]
    fn empirical_lengths_are_resampled() {
        let real = vec![
            DocLengths { title: 3, text: 7 },
            DocLengths { title: 9, text: 0 },
        ];
        let m = LengthModel::Empirical(real.clone());
        let mut s = Stream::new(1, Purpose::Documents, 0);
        for _ in 0..100 {
            assert!(real.contains(&m.sample(&mut s)));
        }
    }
}
