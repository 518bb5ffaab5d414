//! Exact maximum-inner-product search: every live row of every segment scored against
//! the query, the best k kept. The permanent oracle an approximate index must match, and
//! written for speed all the same: rows are scanned front to back in place, no
//! allocation per row, and a row is looked up in the delete set only when its score
//! would enter the top k (most rows lose to the heap's floor first).

use std::path::Path;

use super::dot::dot;
use super::file::{Rows, non_finite_in};
use crate::error::{Error, Result};
use crate::index::Snapshot;
use crate::search::topk::TopK;

/// The `k` documents of `snapshot` whose vectors have the largest inner product with
/// `query` (already checked against the index's dimension), ties by ascending internal
/// doc id, as BM25's.
pub(crate) fn top_k(snapshot: &Snapshot, query: &[f32], k: usize) -> Result<TopK> {
    let mut top = TopK::new(k);
    for (s, live) in snapshot.segments().iter().enumerate() {
        let meta = live.reader.meta();
        let vectors = live.reader.vectors().ok_or_else(|| {
            Error::InvalidArgument(format!("segment {} holds no vectors", meta.name))
        })?;
        if meta.live_docs() == 0 {
            continue;
        }
        let rows = vectors.rows()?;
        scan(
            rows,
            query,
            snapshot.doc_base(s),
            |doc| live.is_deleted(doc),
            &mut top,
            vectors.path(),
        )?;
    }
    Ok(top)
}

/// Scores every row of one segment, whose first document has internal id `base`, into
/// `top`, skipping documents `deleted` says are. A row holding a value that is not a
/// finite number (a crafted file with valid checksums) is an error naming `path`.
pub(crate) fn scan(
    rows: Rows<'_>,
    query: &[f32],
    base: u64,
    deleted: impl Fn(u32) -> bool,
    top: &mut TopK,
    path: &Path,
) -> Result<()> {
    check_query_dim(rows.dim(), query, path)?;
    // Documents arrive in ascending internal id: one that only ties the kept floor
    // loses the tie, so it is skipped with the losers.
    let mut floor = top.threshold();
    for (doc, row) in rows.iter().enumerate() {
        let mut score = dot(query, row);
        if !score.is_finite() {
            score = overflowed(row, score, doc, path, "vectors")?;
        }
        let score = f64::from(score);
        if floor.is_some_and(|f| score <= f) || deleted(doc as u32) {
            continue;
        }
        top.push(score, base + doc as u64);
        floor = top.threshold();
    }
    Ok(())
}

/// Refuses a query whose dimension is not `dim`, that of the rows of `path`: the dot
/// product would score the shorter of the two without a word.
pub(crate) fn check_query_dim(dim: usize, query: &[f32], path: &Path) -> Result<()> {
    if dim == query.len() {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "{}: rows of {dim} dimensions, a query of {}",
        path.display(),
        query.len()
    )))
}

/// A score that is not a finite number. From a row holding NaN or infinity: the file
/// breaks its invariant, an error. From finite values whose products overflow (vectors
/// of magnitude beyond ~1e19, which no encoder makes): infinity ranks as the largest
/// score, and NaN (infinities of both signs) as the smallest, never above a number.
#[cold]
#[inline(never)]
pub(crate) fn overflowed(
    row: &[u8],
    score: f32,
    doc: usize,
    path: &Path,
    what: &'static str,
) -> Result<f32> {
    if let Some((at, value)) = non_finite_in(row) {
        return Err(Error::Corrupt {
            path: path.to_path_buf(),
            what,
            detail: format!("document {doc}: component {at} is {value}, not a finite number"),
        });
    }
    Ok(if score.is_nan() {
        f32::NEG_INFINITY
    } else {
        score
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vectors::{VectorTable, encode_rows};

    fn scan_all(
        rows: &[Vec<f32>],
        query: &[f32],
        k: usize,
        deleted: &[u32],
    ) -> Result<Vec<(u64, f64)>> {
        let dim = query.len() as u32;
        let body = encode_rows(dim, rows.len(), rows.iter().map(Vec::as_slice));
        let table = VectorTable::open(Path::new("v"), &body, rows.len() as u32, dim).unwrap();
        let mut top = TopK::new(k);
        scan(
            table.rows(&body),
            query,
            100,
            |d| deleted.contains(&d),
            &mut top,
            Path::new("v"),
        )?;
        Ok(top
            .into_sorted()
            .into_iter()
            .map(|s| (s.doc, s.score))
            .collect())
    }

    #[test]
    fn keeps_the_best_rows_ties_to_the_lower_doc_deleted_ones_never() {
        let rows = vec![
            vec![1.0, 0.0],
            vec![0.0, 3.0],
            vec![2.0, 0.0],
            vec![3.0, 0.0], // 3.0: ties doc 1; deleted below
            vec![0.0, 1.5], // 3.0 with the query's 2: ties doc 1, later
            vec![-1.0, -1.0],
        ];
        let q = [1.0, 2.0];
        let got = scan_all(&rows, &q, 3, &[]).unwrap();
        assert_eq!(got, [(101, 6.0), (103, 3.0), (104, 3.0)]);
        let got = scan_all(&rows, &q, 3, &[1, 3]).unwrap();
        assert_eq!(got, [(104, 3.0), (102, 2.0), (100, 1.0)]);
        let got = scan_all(&rows, &q, 100, &[]).unwrap();
        assert_eq!(got.len(), 6);
        assert_eq!(got[5], (105, -3.0));
    }

    #[test]
    fn a_stored_nan_is_an_error_and_an_overflow_still_ranks() {
        let err = scan_all(&[vec![1.0, f32::NAN]], &[1.0, 1.0], 1, &[]).unwrap_err();
        assert!(err.to_string().contains("component 1 is NaN"), "{err}");
        // Finite values whose products overflow: +inf first, NaN (inf - inf) last.
        let rows = vec![vec![1e30, 1e30], vec![1.0, 1.0], vec![1e30, -1e30]];
        let got = scan_all(&rows, &[1e30, 1e30], 3, &[]).unwrap();
        assert_eq!(got[0], (100, f64::INFINITY));
        assert_eq!(got[1].0, 101);
        assert_eq!(got[2], (102, f64::NEG_INFINITY));
    }
}
