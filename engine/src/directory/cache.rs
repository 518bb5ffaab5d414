//! Telling the kernel that a file's cached pages will not be read soon.
//!
//! A segment the memory budget flushed is fsynced and then not read until the commit
//! opens it. Linux keeps recently written file data in large page-cache folios (up to
//! 2 MiB on the kernels measured), and mapping a file maps whole folios: the commit's
//! open, which reads a few bytes of each file's header and footer, would map megabytes
//! of each flushed segment into the writer's resident set, so a writer's peak grew
//! with the number of segments the corpus needed (docs/RESULTS.md, "Indexing in a
//! memory budget"). Dropping the clean pages after the fsync makes that open read
//! only what it touches.

use std::path::Path;

/// Asks the kernel to drop `path`'s cached pages (which must be clean: call after an
/// fsync). Advice only: an error, or a platform without `posix_fadvise`, changes
/// nothing but the memory a later map of the file shows.
pub(crate) fn drop_cached_pages(path: &Path) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        if let Ok(file) = super::open_regular(path) {
            // SAFETY: posix_fadvise reads no memory of ours; the descriptor is open for
            // the duration of the call.
            unsafe {
                libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = path;
}
