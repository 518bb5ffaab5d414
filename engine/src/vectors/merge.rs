//! The vectors of a merged segment: each source's rows of the documents the merge keeps,
//! copied as bytes in merged order (sources in order, each in its doc order).

use super::file::{header, sealed_capacity};
use crate::error::{Error, Result};
use crate::segment::SegmentComponent;
use crate::segment::footer;
use crate::segment::merger::{MergeSource, PURGED};

/// A segment's vector dimension and its vectors file, ready to write.
type MergedVectors = (Option<u32>, Option<(SegmentComponent, Vec<u8>)>);

/// The merged segment's vector dimension and its sealed vectors file (both `None` when
/// the sources hold no vectors). `doc_maps[s][doc]` is source `s`'s document `doc`'s
/// new id, or [`PURGED`]. Every source's rows are verified as they are read.
pub(crate) fn merge_vectors(
    sources: &[MergeSource<'_>],
    doc_maps: &[Vec<u32>],
) -> Result<MergedVectors> {
    let Some(first) = sources.first() else {
        return Ok((None, None));
    };
    let dim = first.reader.meta().vector_dim;
    if let Some(other) = sources.iter().find(|s| s.reader.meta().vector_dim != dim) {
        // The manifest's check makes every segment share the index's dimension.
        return Err(Error::InvalidArgument(format!(
            "merging {} (vectors {:?}) with {} (vectors {:?})",
            first.reader.meta().name,
            dim,
            other.reader.meta().name,
            other.reader.meta().vector_dim
        )));
    }
    let Some(dim) = dim else {
        return Ok((None, None));
    };
    let kept: usize = doc_maps
        .iter()
        .map(|m| m.iter().filter(|&&d| d != PURGED).count())
        .sum();
    let mut body = Vec::with_capacity(sealed_capacity(kept, dim));
    body.extend_from_slice(&header(kept as u32, dim));
    let mut copied = 0usize;
    for (src, map) in sources.iter().zip(doc_maps) {
        let meta = src.reader.meta();
        let vectors = src.reader.vectors().ok_or_else(|| {
            Error::InvalidArgument(format!("segment {} holds no vectors", meta.name))
        })?;
        let rows = vectors.rows()?;
        // The doc map covers the segment's documents, as many as its rows (both
        // checked against the manifest's doc_count at open).
        for (row, &new) in rows.iter().zip(map) {
            if new != PURGED {
                body.extend_from_slice(row);
                copied += 1;
            }
        }
    }
    if copied != kept {
        return Err(Error::InvalidArgument(format!(
            "merge kept {kept} documents but copied {copied} vectors"
        )));
    }
    footer::append_footer(&mut body);
    Ok((Some(dim), Some((SegmentComponent::Vectors, body))))
}
