//! Eight-bit codes of a segment's rows, which steer a graph walk: one byte per component
//! instead of four, so a walk that scores thousands of scattered rows reads a quarter of
//! the memory (a 1,000-deep walk over 171k MiniLM rows spent most of its time waiting for
//! rows, not multiplying them: docs/RESULTS.md, "Graph walks steered by 8-bit codes").
//!
//! Each component is coded on its own scale (scalar quantization, as faiss's SQ8): the
//! segment's smallest and largest value of that component span 0..=255, so a coded value
//! is within half a step of the row's. A query is scored against codes as `base + Σ wᵢ·cᵢ`
//! with `wᵢ = qᵢ · stepᵢ` and `base = Σ qᵢ · lowᵢ`, which is the query's dot product with
//! the decoded row; its distance from the exact score is at most `Σ |qᵢ| · stepᵢ / 2`
//! plus rounding.
//!
//! Codes only decide where a walk goes and which documents it keeps; every score a search
//! returns is recomputed from the row in the vectors file ([`super::ann`]). They are made
//! in memory from the verified rows the first time a segment is walked, and live as long
//! as its reader: derived data, never written, so they add nothing to the index format.

use std::path::Path;

use super::file::{Rows, non_finite_in};
use crate::error::{Error, Result};

/// Largest code: the 256 levels of a byte.
const LEVELS: f32 = 255.0;

/// One segment's rows, coded.
pub(crate) struct Codes {
    dim: usize,
    /// Each component's smallest value in the segment: code 0.
    low: Vec<f32>,
    /// Each component's value per code step (0 where every row holds the same value).
    step: Vec<f32>,
    /// `dim` codes a document, in doc order, then unused bytes (the mapping is at least
    /// one byte long).
    bytes: memmap2::MmapMut,
    /// Bytes of `bytes` that hold codes.
    len: usize,
}

impl Codes {
    /// The codes of `rows` (the vectors file at `path`, verified). An error if a row
    /// holds a value that is not a finite number, as an exact scan of the segment gives.
    pub(crate) fn of(rows: Rows<'_>, path: &Path) -> Result<Codes> {
        let dim = rows.dim();
        let mut low = vec![f32::INFINITY; dim];
        let mut high = vec![f32::NEG_INFINITY; dim];
        for (doc, row) in rows.iter().enumerate() {
            let mut finite = true;
            for ((l, h), b) in low.iter_mut().zip(&mut high).zip(row.as_chunks::<4>().0) {
                let v = f32::from_le_bytes(*b);
                finite &= v.is_finite();
                *l = l.min(v);
                *h = h.max(v);
            }
            if !finite && let Some((at, value)) = non_finite_in(row) {
                return Err(Error::Corrupt {
                    path: path.to_path_buf(),
                    what: "vectors",
                    detail: format!(
                        "document {doc}: component {at} is {value}, not a finite number"
                    ),
                });
            }
        }
        // A span too wide for an f32 (values near ±f32::MAX) gives an infinite step:
        // every code of that component is then 0, and a query's weight for it infinite
        // or NaN, which the walk's scores treat as any overflow (NaN ranks last).
        let step: Vec<f32> = low
            .iter()
            .zip(&high)
            .map(|(&l, &h)| if h > l { (h - l) / LEVELS } else { 0.0 })
            .collect();
        let len = rows.len() * dim;
        let mut bytes = code_space(len, path)?;
        for (row, out) in rows.iter().zip(bytes.chunks_exact_mut(dim.max(1))) {
            for (((&l, &s), b), c) in low.iter().zip(&step).zip(row.as_chunks::<4>().0).zip(out) {
                let v = f32::from_le_bytes(*b);
                // Rounded to the nearest code: `v - l` is at least 0, so adding a half and
                // truncating rounds (without a call to libm's `roundf`), and `as`
                // saturates (NaN to 0), so no value leaves 0..=255.
                *c = if s > 0.0 {
                    ((v - l) / s + 0.5) as u8
                } else {
                    0
                };
            }
        }
        if rows.len() == 0 {
            low.iter_mut().for_each(|l| *l = 0.0);
        }
        Ok(Codes {
            dim,
            low,
            step,
            bytes,
            len,
        })
    }

    /// Document `doc`'s codes; `None` past the last document.
    #[inline]
    pub(crate) fn code(&self, doc: u32) -> Option<&[u8]> {
        let start = (doc as usize).checked_mul(self.dim)?;
        self.bytes[..self.len].get(start..start.checked_add(self.dim)?)
    }

    /// `query` prepared for scoring against these codes (a query of the segment's
    /// dimension: the search checked it).
    pub(crate) fn query(&self, query: &[f32]) -> CodedQuery {
        let weights: Vec<f32> = query.iter().zip(&self.step).map(|(&q, &s)| q * s).collect();
        let base = query.iter().zip(&self.low).map(|(&q, &l)| q * l).sum();
        CodedQuery {
            margin: margin(&weights),
            weights,
            base,
        }
    }

    /// Bytes held in memory.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.len + 4 * (self.low.len() + self.step.len())
    }
}

/// Zeroed memory for `len` codes, asked to be backed by huge pages: a walk reads codes
/// scattered over tens of megabytes, and with 4 KiB pages nearly every row it scores
/// missed the TLB as well as the cache. Only a hint (where the kernel allows
/// transparent huge pages on request); an error only if the memory cannot be had.
fn code_space(len: usize, path: &Path) -> Result<memmap2::MmapMut> {
    let space = memmap2::MmapMut::map_anon(len.max(1)).map_err(|e| Error::io(path, e))?;
    #[cfg(target_os = "linux")]
    let _ = space.advise(memmap2::Advice::HugePage);
    Ok(space)
}

/// How far apart two documents' coded scores may fall from their exact order: three
/// standard deviations of the difference of two documents' coding errors. Each
/// component's rounding error is uniform over a step, so a coded score's error has
/// variance `Σ wᵢ² / 12`, and the difference of two independent ones twice that. Not a
/// bound (that is `Σ |wᵢ| / 2`, tens of times wider on real embeddings): the width
/// within which a walk rescores documents it would otherwise leave (infinite when the
/// codes' scale overflowed, so that then everything met is rescored).
fn margin(weights: &[f32]) -> f32 {
    let variance: f64 = weights
        .iter()
        .map(|&w| f64::from(w) * f64::from(w))
        .sum::<f64>()
        / 12.0;
    let margin = (3.0 * (2.0 * variance).sqrt()) as f32;
    if margin.is_finite() {
        margin
    } else {
        f32::INFINITY
    }
}

/// A query scaled to one segment's codes.
pub(crate) struct CodedQuery {
    weights: Vec<f32>,
    base: f32,
    /// See [`margin`].
    margin: f32,
}

impl CodedQuery {
    /// The query's dot product with the row `code` decodes to.
    #[inline]
    pub(crate) fn score(&self, code: &[u8]) -> f32 {
        self.base + super::dot::dot_codes(&self.weights, code)
    }

    /// The width below the last document a walk keeps within which it rescores the
    /// documents it met ([`margin`]).
    pub(crate) fn margin(&self) -> f32 {
        self.margin
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vectors::{VectorTable, encode_rows};

    fn coded(rows: &[Vec<f32>]) -> Codes {
        let dim = rows.first().map_or(1, Vec::len);
        let body = encode_rows(dim as u32, rows.len(), rows.iter().map(|r| &r[..]));
        let p = Path::new("v");
        let table = VectorTable::open(p, &body, rows.len() as u32, dim as u32).unwrap();
        Codes::of(table.rows(&body), p).unwrap()
    }

    fn random_rows(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        (0..n)
            .map(|j| {
                (0..dim)
                    .map(|i| next() * (1 + (i + j) % 5) as f32)
                    .collect()
            })
            .collect()
    }

    /// The stated bound: a coded score is within half a step of every component of the
    /// exact score, plus f32 rounding of both sums.
    #[test]
    fn a_coded_score_is_within_half_a_step_of_the_exact_one() {
        for dim in [1, 3, 8, 17, 64, 384] {
            let rows = random_rows(200, dim, dim as u64);
            let codes = coded(&rows);
            assert_eq!(codes.held(), 200 * dim + 8 * dim);
            for (qi, q) in random_rows(5, dim, 99 + dim as u64).iter().enumerate() {
                let cq = codes.query(q);
                for (doc, row) in rows.iter().enumerate() {
                    let exact: f64 = q.iter().zip(row).map(|(&a, &b)| f64::from(a * b)).sum();
                    let half_steps: f64 = q
                        .iter()
                        .zip(&codes.step)
                        .map(|(&a, &s)| f64::from(a.abs() * s) / 2.0)
                        .sum();
                    let magnitude: f64 = q
                        .iter()
                        .zip(row)
                        .map(|(&a, &b)| f64::from((a * b).abs()))
                        .sum();
                    let rounding = 8.0 * dim as f64 * f64::from(f32::EPSILON) * (magnitude + 1.0);
                    let got = f64::from(cq.score(codes.code(doc as u32).unwrap()));
                    assert!(
                        (got - exact).abs() <= half_steps + rounding,
                        "dim {dim} query {qi} doc {doc}: coded {got}, exact {exact}, \
                         bound {half_steps} + {rounding}"
                    );
                }
            }
        }
    }

    /// Each component's extremes are codes 0 and 255, and decode exactly to themselves;
    /// a component every row shares codes to 0 and still scores exactly.
    #[test]
    fn extremes_and_constant_components_decode_exactly() {
        let rows = vec![
            vec![-2.0, 7.0, 0.5],
            vec![6.0, 7.0, -0.5],
            vec![1.0, 7.0, 0.25],
        ];
        let codes = coded(&rows);
        assert_eq!(codes.code(0).unwrap(), &[0, 0, 255]);
        assert_eq!(codes.code(1).unwrap(), &[255, 0, 0]);
        assert_eq!(codes.code(2).unwrap()[1], 0);
        assert!(codes.code(3).is_none());
        let q = [1.0f32, 1.0, 2.0];
        let cq = codes.query(&q);
        let near = |got: f32, want: f32| (got - want).abs() <= 1e-5;
        assert!(near(cq.score(codes.code(0).unwrap()), -2.0 + 7.0 + 1.0));
        assert!(near(cq.score(codes.code(1).unwrap()), 6.0 + 7.0 - 1.0));
    }

    #[test]
    fn a_row_that_is_not_a_number_is_an_error_naming_it() {
        let rows = [vec![1.0, 2.0], vec![3.0, f32::NAN]];
        let body = encode_rows(2, 2, rows.iter().map(|r| &r[..]));
        let p = Path::new("seg-1.vec");
        let table = VectorTable::open(p, &body, 2, 2).unwrap();
        let err = Codes::of(table.rows(&body), p).err().expect("an error");
        let text = err.to_string();
        assert!(
            text.contains("seg-1.vec") && text.contains("document 1: component 1"),
            "{text}"
        );
    }

    /// Values at the edge of f32 give infinite steps: no panic, and no code out of range.
    #[test]
    fn values_near_the_largest_f32_code_without_panicking() {
        let rows = vec![vec![f32::MAX, -1.0], vec![-f32::MAX, 1.0]];
        let codes = coded(&rows);
        assert_eq!(codes.code(0).unwrap()[1], 0);
        assert_eq!(codes.code(1).unwrap()[1], 255);
        let _ = codes.query(&[1.0, 1.0]).score(codes.code(0).unwrap());
    }

    #[test]
    fn no_rows_give_no_codes() {
        let codes = coded(&[]);
        assert!(codes.code(0).is_none());
    }
}
