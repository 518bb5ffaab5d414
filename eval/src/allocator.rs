//! The glibc allocator's policy, chosen by each program for its own work: handing freed
//! heap back to the operating system while indexing, keeping it while encoding.
//!
//! glibc's malloc keeps memory a program frees for its next allocations: after a
//! segment build frees a hundred MiB, the process's resident set stays where the build
//! left it, so a writer working in a memory budget would look (and, to the machine, be)
//! as large as its largest build ever was, growing with every larger one. The engine
//! frees what it built; whether to pay for returning it is the program's choice (it is
//! one process-wide call), so every program that indexes in a budget (`index`, `add`,
//! heddle-bench's heddle build) asks for it in one place, [`return_memory_after_flushes`].

use std::sync::Arc;

use heddle::IndexWriter;

/// Allocations at least this large get pages of their own (glibc's `M_MMAP_THRESHOLD`).
pub const OWN_PAGES_FROM: usize = 64 << 10;

/// Makes large allocations map pages of their own, returned to the system when freed,
/// instead of being carved from the heap (glibc; elsewhere nothing). A segment build's
/// large buffers then leave no holes in the heap for the next build to miss: with glibc's
/// default (a threshold that rises to 32 MiB as large blocks are freed), a writer
/// in a 128 MiB budget peaked 7 MiB above its accounting at 171k documents and 30 MiB
/// above it at 1.7M, growing with every segment; with pages of their own it stays flat
/// (docs/RESULTS.md, "Indexing in a memory budget"). Call once, before indexing.
pub fn prefer_returning_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a tunable of glibc's allocator; any value is valid, and
    // it takes effect for later allocations.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, OWN_PAGES_FROM as libc::c_int);
    }
}

/// Returns the allocator's free memory to the system where the allocator can (glibc's
/// `malloc_trim`); elsewhere does nothing. Costs about a millisecond per hundred MiB
/// returned, once per segment written.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointer and only walks glibc's own free lists under
    // its arena locks; it is safe to call at any time from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// What a program indexing in a memory budget does so that its resident set follows
/// the budget instead of the largest build so far: large allocations on pages of their
/// own ([`prefer_returning_memory`]) and the freed memory handed back after each segment
/// `writer` writes for its budget ([`release_free_memory`], as the writer's
/// [`IndexWriter::set_after_flush`] hook).
pub fn return_memory_after_flushes(writer: &mut IndexWriter) {
    prefer_returning_memory();
    writer.set_after_flush(Some(Arc::new(release_free_memory)));
}

/// The opposite policy, for encoding (`embed`): keep freed memory for the next batch
/// instead of returning it and faulting it in again; a batch's tensors are freed and
/// the same sizes allocated again moments later. See docs/DECISIONS.md, "Embedding a
/// corpus". Call once, before encoding; glibc only, elsewhere nothing.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets tunables of glibc's allocator; any value is valid, and
    // they take effect for later allocations.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
    }
}
