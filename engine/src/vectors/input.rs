//! What a vector must be to enter an index or query it: the index's dimension, every
//! component a finite number. Checked where vectors come in (the writer's `add`, the
//! searcher's query), so that segments only ever hold rows of the right length and no
//! NaN can reach a score comparison.

use crate::document::Document;
use crate::error::{Error, Result};

/// The largest vector dimension an index may have: far above any text encoder's (384 for
/// MiniLM, 4,096 for the largest in common use), low enough that no manifest can make a
/// reader size a row, or a query check, beyond 256 KiB.
pub const MAX_VECTOR_DIM: usize = 1 << 16;

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
    /// The index has vectors and the document has none: give it one, or create the
    /// index without a vector dimension.
    #[error("no vector, and every document of this index needs one of {dim} dimensions")]
    Missing { dim: usize },
    /// The index was created without a vector dimension.
    #[error("this index stores no vectors (create it with IndexSettings::vector_dim)")]
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
    match vector.iter().position(|v| !v.is_finite()) {
        Some(at) => Err(VectorProblem::NotFinite {
            at,
            value: vector[at],
        }),
        None => Ok(()),
    }
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

    #[test]
    fn dimensions_are_bounded() {
        assert_eq!(checked_dim(None).unwrap(), None);
        assert_eq!(checked_dim(Some(384)).unwrap(), Some(384));
        assert!(checked_dim(Some(0)).is_err());
        assert!(checked_dim(Some(MAX_VECTOR_DIM + 1)).is_err());
    }
}
