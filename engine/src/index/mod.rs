//! Index, writer, snapshots.
/// A named step of commit at which a test can make the writer fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failpoint {
    AfterSegmentWrite,
}
