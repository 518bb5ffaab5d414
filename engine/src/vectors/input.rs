//! What a vector must be to enter an index or query it: the index's dimension, every
//! component a finite number, and a length (Euclidean norm) of at most 1e18
//! ([`MAX_VECTOR_NORM`]). Checked where vectors come in (the writer's `add`, the
//! searcher's query), so that segments only ever hold rows of the right length, no NaN
//! can reach a score comparison, and no inner product or distance overflows to infinity.

use crate::document::Document;
use crate::error::{Error, Result};

/// The largest vector dimension an index may have: far above any text encoder's (384 for
/// MiniLM, 4,096 for the largest in common use), low enough that no manifest can make a
/// reader size a row, or a query check, beyond 256 KiB.
pub const MAX_VECTOR_DIM: usize = 1 << 16;

/// The largest Euclidean norm a vector may have. By Cauchy–Schwarz every partial sum of
/// an inner product of two such vectors is at most 1e36 in magnitude, and every squared
/// distance between them (or a centroid, an average of them) at most 4e36: all below
/// f32's largest value, 3.4e38, so no score or distance is ever infinite. Text encoders
/// give unit vectors; no encoder comes near this.
pub(crate) const MAX_VECTOR_NORM: f64 = 1e18;

/// Why a vector does not fit an index (see [`Error::DocumentVector`] and
/// [`Error::QueryVector`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VectorProblem {
    /// The vector has another length than the index's dimension.
    #[error("vector has {found} dimensions, the index has {expected}")]
    Dimension { expected: usize, found: usize },
    /// A component is NaN or infinite (a score would not be a number).
    #[error("vector component {at} is {value}, not a finite number")]
    NotFinite { at: usize, value: f32 },
    /// The vector's Euclidean norm is above 1e18: scores computed with it
    /// could overflow to infinity. Scale it down (unit vectors are what encoders give).
    #[error(
        "vector norm {norm:e} is above the largest allowed, {max:e}: its scores could overflow"
    )]
    TooLarge { norm: f64, max: f64 },
    /// The index has vectors and the document has none: give it one, or create the
    /// index without a vector dimension.
    #[error("no vector, and every document of this index needs one of {dim} dimensions")]
    Missing { dim: usize },
    /// The index was created without a vector dimension.
    #[error(
        "this index stores no vectors (build it with vectors: heddle-eval index --vectors FILE)"
    )]
    NoVectors,
}

/// Checks `vector` against an index of dimension `dim`.
fn check(vector: &[f32], dim: usize) -> std::result::Result<(), VectorProblem> {
    if vector.len() != dim {
        return Err(VectorProblem::Dimension {
            expected: dim,
            found: vector.len(),
        });
    }
    if let Some(at) = vector.iter().position(|v| !v.is_finite()) {
        return Err(VectorProblem::NotFinite {
            at,
            value: vector[at],
        });
    }
    // In f64: the squares of finite f32 values cannot overflow there.
    let norm = vector
        .iter()
        .map(|&v| f64::from(v) * f64::from(v))
        .sum::<f64>()
        .sqrt();
    if norm > MAX_VECTOR_NORM {
        return Err(VectorProblem::TooLarge {
            norm,
            max: MAX_VECTOR_NORM,
        });
    }
    Ok(())
}

/// Whether `doc` may enter an index of vector dimension `dim` (`None`: no vectors).
pub(crate) fn check_document(doc: &Document, dim: Option<u32>) -> Result<()> {
    let problem = match (dim, doc.vector.as_deref()) {
        (None, None) => return Ok(()),
        (None, Some(_)) => VectorProblem::NoVectors,
        (Some(dim), None) => VectorProblem::Missing { dim: dim as usize },
        (Some(dim), Some(v)) => match check(v, dim as usize) {
            Ok(()) => return Ok(()),
            Err(p) => p,
        },
    };
    Err(Error::DocumentVector {
        id: doc.id.clone(),
        problem,
    })
}

/// Whether `query` may search an index of vector dimension `dim`.
pub(crate) fn check_query(query: &[f32], dim: Option<u32>) -> Result<()> {
    let problem = match dim {
        None => VectorProblem::NoVectors,
        Some(dim) => match check(query, dim as usize) {
            Ok(()) => return Ok(()),
            Err(p) => p,
        },
    };
    Err(Error::QueryVector { problem })
}

/// A vector dimension asked for in settings, as the manifest records it: 1 to
/// [`MAX_VECTOR_DIM`].
pub(crate) fn checked_dim(dim: Option<usize>) -> Result<Option<u32>> {
    match dim {
        None => Ok(None),
        Some(d) if (1..=MAX_VECTOR_DIM).contains(&d) => Ok(Some(d as u32)),
        Some(d) => Err(Error::InvalidArgument(format!(
            "vector dimension {d}: must be 1 to {MAX_VECTOR_DIM}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(vector: Option<Vec<f32>>) -> Document {
        let d = Document::new("doc-7", "", "");
        match vector {
            Some(v) => d.with_vector(v),
            None => d,
        }
    }

    fn problem(e: Error) -> (String, VectorProblem) {
        match e {
            Error::DocumentVector { id, problem } => (id, problem),
            other => panic!("expected a document vector error, got {other:?}"),
        }
    }

    #[test]
    fn documents_need_a_finite_vector_of_the_index_dimension_or_none_at_all() {
        assert!(check_document(&doc(None), None).is_ok());
        assert!(check_document(&doc(Some(vec![0.5, -1.0, 0.0])), Some(3)).is_ok());
        let cases = [
            (doc(Some(vec![1.0])), None, VectorProblem::NoVectors),
            (doc(None), Some(3), VectorProblem::Missing { dim: 3 }),
            (
                doc(Some(vec![1.0, 2.0])),
                Some(3),
                VectorProblem::Dimension {
                    expected: 3,
                    found: 2,
                },
            ),
            (
                doc(Some(vec![1.0, f32::INFINITY, 0.0])),
                Some(3),
                VectorProblem::NotFinite {
                    at: 1,
                    value: f32::INFINITY,
                },
            ),
        ];
        for (d, dim, expected) in cases {
            let err = check_document(&d, dim).unwrap_err();
            assert!(err.to_string().contains("\"doc-7\""), "{err}");
            assert_eq!(problem(err), ("doc-7".to_string(), expected));
        }
        // NaN is not equal to itself: compare its place and kind.
        let err = check_document(&doc(Some(vec![f32::NAN, 0.0, 0.0])), Some(3)).unwrap_err();
        assert!(matches!(
            problem(err).1,
            VectorProblem::NotFinite { at: 0, value } if value.is_nan()
        ));
    }

    #[test]
    fn queries_are_checked_like_documents() {
        assert!(check_query(&[1.0, 2.0], Some(2)).is_ok());
        let cases: [(&[f32], Option<u32>); 3] = [
            (&[1.0], Some(2)),
            (&[f32::NAN, 1.0], Some(2)),
            (&[1.0], None),
        ];
        for (q, dim) in cases {
            assert!(matches!(
                check_query(q, dim),
                Err(Error::QueryVector { .. })
            ));
        }
    }

    /// 3e38 is a finite f32, but two such vectors' inner product is not: refused at the
    /// door, for documents and queries alike. At the bound, every product and squared
    /// distance stays finite in f32.
    #[test]
    fn vectors_whose_scores_could_overflow_are_refused() {
        let huge = vec![3e38f32, 0.0];
        let err = check_document(&doc(Some(huge.clone())), Some(2)).unwrap_err();
        assert!(matches!(problem(err).1, VectorProblem::TooLarge { .. }));
        assert!(matches!(
            check_query(&huge, Some(2)),
            Err(Error::QueryVector {
                problem: VectorProblem::TooLarge { .. }
            })
        ));
        // Many moderate components add up: the norm, not each value, is bounded.
        let wide = vec![1e17f32; 400]; // norm 2e18
        assert!(check_query(&wide, Some(400)).is_err());
        // Just inside the bound (f32 rounding of the exact bound could land outside it).
        let at_bound = 0.999 * MAX_VECTOR_NORM as f32 / 2f32.sqrt();
        let v = [at_bound, at_bound];
        assert!(check_query(&v, Some(2)).is_ok());
        let dot: f32 = v.iter().map(|x| x * x).sum();
        let minus = [-at_bound, -at_bound];
        let distance: f32 = v.iter().zip(&minus).map(|(a, b)| (a - b) * (a - b)).sum();
        assert!(dot.is_finite() && distance.is_finite(), "{dot} {distance}");
    }

    #[test]
    fn dimensions_are_bounded() {
        assert_eq!(checked_dim(None).unwrap(), None);
        assert_eq!(checked_dim(Some(384)).unwrap(), Some(384));
        assert!(checked_dim(Some(0)).is_err());
        assert!(checked_dim(Some(MAX_VECTOR_DIM + 1)).is_err());
    }
}
