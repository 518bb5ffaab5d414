//! Named steps of a commit or merge at which a test can make the writer stop, as a
//! crash there would. A leaf module at the crate's root (re-exported as
//! `index::Failpoint`): the error type names it, and taking it from `index/` tied the
//! error type, and so every module, into one import circle with the index.

/// A step of publishing a new segment (by [`crate::IndexWriter::commit`] or a merge).
/// When armed with [`crate::IndexWriter::fail_at`], the operation returns
/// [`crate::Error::Failpoint`] right after that step, leaving the disk exactly as a crash
/// there would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failpoint {
    /// Segment files written, not yet fsynced.
    AfterSegmentWrite,
    /// Segment files (and any delete files) and their directory entries fsynced.
    AfterSegmentFsync,
    /// `MANIFEST.tmp` written and fsynced, not yet renamed.
    AfterTempManifest,
    /// `MANIFEST` replaced and the directory fsynced: durable, not yet published to this
    /// process's readers.
    AfterManifestRename,
    /// Published; the first file no snapshot uses any more has been removed, the rest
    /// not yet.
    DuringFileRemoval,
}

impl Failpoint {
    pub const ALL: [Failpoint; 5] = [
        Failpoint::AfterSegmentWrite,
        Failpoint::AfterSegmentFsync,
        Failpoint::AfterTempManifest,
        Failpoint::AfterManifestRename,
        Failpoint::DuringFileRemoval,
    ];
}
