//! The vectors of a merged segment: each source's rows of the documents the merge keeps,
//! copied as bytes in merged order (sources in order, each in its doc order), streamed
//! to the file as they are read, so that a merge holds no row in memory (docs/
//! DECISIONS.md, "A merge streams its output").

use super::file::{header, non_finite_in};
use crate::error::{Error, Result};
use crate::segment::merger::{MergeSource, PURGED};
use crate::segment::sealed_file::SealedFileWriter;

/// The vector dimension the sources share (`None` when they hold no vectors). The
/// manifest's check makes every segment share the index's dimension; sources that
/// disagree are refused rather than merged into a file no manifest could describe.
pub(crate) fn merged_dim(sources: &[MergeSource<'_>]) -> Result<Option<u32>> {
    let Some(first) = sources.first() else {
        return Ok(None);
    };
    let dim = first.reader.meta().vector_dim;
    if let Some(other) = sources.iter().find(|s| s.reader.meta().vector_dim != dim) {
        return Err(Error::InvalidArgument(format!(
            "merging {} (vectors {:?}) with {} (vectors {:?})",
            first.reader.meta().name,
            dim,
            other.reader.meta().name,
            other.reader.meta().vector_dim
        )));
    }
    Ok(dim)
}

/// Writes the merged segment's vectors body (rows of `dim` values) to `out`: the header,
/// then every kept row. `doc_maps[s][doc]` is source `s`'s document `doc`'s new id, or
/// [`PURGED`]. Every source's rows are verified (their chunk CRCs) before they are
/// copied, and a kept row holding a value that is not a finite number (a crafted file
/// with valid checksums) is an error naming its file: the merged file, and the graph
/// built from it, hold finite values only.
pub(crate) fn write_merged_vectors(
    sources: &[MergeSource<'_>],
    doc_maps: &[Vec<u32>],
    dim: u32,
    out: &mut SealedFileWriter,
) -> Result<()> {
    let kept: usize = doc_maps
        .iter()
        .map(|m| m.iter().filter(|&&d| d != PURGED).count())
        .sum();
    out.write(&header(kept as u32, dim))?;
    let mut copied = 0usize;
    for (src, map) in sources.iter().zip(doc_maps) {
        let meta = src.reader.meta();
        let vectors = src.reader.vectors().ok_or_else(|| {
            Error::InvalidArgument(format!("segment {} holds no vectors", meta.name))
        })?;
        let rows = vectors.rows()?;
        // The doc map covers the segment's documents, as many as its rows (both
        // checked against the manifest's doc_count at open).
        for (doc, (row, &new)) in rows.iter().zip(map).enumerate() {
            if new != PURGED {
                if let Some((at, value)) = non_finite_in(row) {
                    return Err(Error::Corrupt {
                        path: vectors.path().to_path_buf(),
                        what: "vectors",
                        detail: format!(
                            "document {doc}: component {at} is {value}, not a finite number"
                        ),
                    });
                }
                out.write(row)?;
                copied += 1;
            }
        }
    }
    if copied != kept {
        return Err(Error::InvalidArgument(format!(
            "merge kept {kept} documents but copied {copied} vectors"
        )));
    }
    Ok(())
}
