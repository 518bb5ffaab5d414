//! Named steps of a commit at which a test can make the writer stop, as a crash would.

/// A step of [`super::IndexWriter::commit`]. When armed with
/// [`super::IndexWriter::fail_at`], the commit returns [`crate::Error::Failpoint`] right
/// after that step, leaving the disk exactly as a crash there would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failpoint {
    /// Segment files written, not yet fsynced.
    AfterSegmentWrite,
    /// Segment files and their directory entries fsynced.
    AfterSegmentFsync,
    /// `MANIFEST.tmp` written and fsynced, not yet renamed.
    AfterTempManifest,
    /// `MANIFEST` replaced and the directory fsynced: the commit is durable but not
    /// yet published to this process's readers.
    AfterManifestRename,
}

impl Failpoint {
    pub const ALL: [Failpoint; 4] = [
        Failpoint::AfterSegmentWrite,
        Failpoint::AfterSegmentFsync,
        Failpoint::AfterTempManifest,
        Failpoint::AfterManifestRename,
    ];
}
