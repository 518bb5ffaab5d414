//! Surviving a mapped file that shrinks under a running reader.
//!
//! heddle never changes a published file, but another program may: `truncate`, or
//! `cp`/`rsync --inplace` over a live index. A read of a mapped page past the file's new
//! end raises SIGBUS, whose default action ends the process: one `truncate` would stop a
//! server answering every other request. So heddle handles SIGBUS itself. Each map is
//! registered here (its address range, in a fixed table the handler can read without a
//! lock or an allocation); a fault inside a registered range marks that map as changed,
//! puts a page of zeros in place of the page that vanished (so the faulting read
//! completes instead of faulting again) and counts the fault. The zeros are never
//! served as data: every checked read of a marked file fails
//! ([`super::MappedFile::check_intact`]), and a request during which a fault happened
//! fails if its snapshot holds a marked file (`Snapshot::check_intact`). A SIGBUS outside
//! every registered range is passed on to the handler that was there before (Rust's
//! stack-overflow handler, or the default action), so a real bug still stops the
//! process as it did (docs/DECISIONS.md, "A file truncated under a reader").

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, Once, OnceLock};

/// Maps registered at once. Beyond this, a map is simply not protected (a fault in it
/// ends the process, as without this module); an index of 713 segments of 8 files is a
/// tenth of it.
const SLOTS: usize = 1 << 16;

struct Slot {
    /// Taken by a registration.
    claimed: AtomicBool,
    /// The map's first address; 0 while the slot is free or being filled.
    start: AtomicUsize,
    /// The map's length, rounded up to whole pages.
    len: AtomicUsize,
    /// A fault happened inside this map.
    faulted: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)] // a template, copied per element
const FREE: Slot = Slot {
    claimed: AtomicBool::new(false),
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    faulted: AtomicBool::new(false),
};

static TABLE: [Slot; SLOTS] = [FREE; SLOTS];
/// One past the highest slot ever claimed: the handler scans no further.
static HIGH: AtomicUsize = AtomicUsize::new(0);
/// Faults handled since the process started.
static FAULTS: AtomicU64 = AtomicU64::new(0);
static PAGE: AtomicUsize = AtomicUsize::new(4096);
/// The paths of claimed slots, for the messages (never touched by the handler).
static PATHS: Mutex<Vec<(usize, PathBuf)>> = Mutex::new(Vec::new());
/// The SIGBUS disposition before ours, to pass foreign faults on to.
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();
static INSTALL: Once = Once::new();

/// A map's entry in the table, released when dropped (before the map is unmapped).
pub(crate) struct Registration {
    slot: Option<usize>,
}

impl Registration {
    /// Whether a read of the map faulted because the file shrank.
    #[inline]
    pub(crate) fn faulted(&self) -> bool {
        // Fast path: no fault ever, one relaxed load.
        FAULTS.load(Ordering::Relaxed) != 0
            && self
                .slot
                .is_some_and(|s| TABLE[s].faulted.load(Ordering::Acquire))
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let Some(s) = self.slot else { return };
        if let Ok(mut paths) = PATHS.lock() {
            paths.retain(|(slot, _)| *slot != s);
        }
        let slot = &TABLE[s];
        slot.start.store(0, Ordering::Release);
        slot.len.store(0, Ordering::Release);
        slot.faulted.store(false, Ordering::Release);
        slot.claimed.store(false, Ordering::Release);
    }
}

/// Registers the map of `len` bytes at `start` (of the file at `path`), installing the
/// handler on first use.
pub(crate) fn register(start: *const u8, len: usize, path: &std::path::Path) -> Registration {
    INSTALL.call_once(install);
    let page = PAGE.load(Ordering::Relaxed);
    let Some(s) = (0..SLOTS).find(|&s| {
        TABLE[s]
            .claimed
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }) else {
        return Registration { slot: None };
    };
    if let Ok(mut paths) = PATHS.lock() {
        paths.push((s, path.to_path_buf()));
    }
    HIGH.fetch_max(s + 1, Ordering::AcqRel);
    let slot = &TABLE[s];
    slot.faulted.store(false, Ordering::Release);
    slot.len.store(len.div_ceil(page) * page, Ordering::Release);
    slot.start.store(start as usize, Ordering::Release);
    Registration { slot: Some(s) }
}

/// Faults handled so far: a request compares it before and after.
#[inline]
pub(crate) fn faults() -> u64 {
    FAULTS.load(Ordering::Acquire)
}

/// The files of the registered maps a fault has marked.
pub(crate) fn faulted_paths() -> Vec<PathBuf> {
    let Ok(paths) = PATHS.lock() else {
        return Vec::new();
    };
    paths
        .iter()
        .filter(|(s, _)| TABLE[*s].faulted.load(Ordering::Acquire))
        .map(|(_, p)| p.clone())
        .collect()
}

fn install() {
    // SAFETY: sysconf, sigaction and sigemptyset are called with valid arguments; the
    // handler only does what is safe in a signal handler (atomics, mmap, sigaction).
    unsafe {
        let page = libc::sysconf(libc::_SC_PAGESIZE);
        if page > 0 {
            PAGE.store(page as usize, Ordering::Relaxed);
        }
        let mut previous: libc::sigaction = std::mem::zeroed();
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigbus as *const () as usize;
        // SA_ONSTACK: a fault on a thread near its stack's end still has a stack to run on.
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigemptyset(&mut action.sa_mask);
        // Recorded before ours is live, so the handler always finds it.
        if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) != 0 {
            return;
        }
        let _ = PREVIOUS.set(previous);
        libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
    }
}

extern "C" fn on_sigbus(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    let mut ours = false;
    for slot in &TABLE[..HIGH.load(Ordering::Acquire).min(SLOTS)] {
        let start = slot.start.load(Ordering::Acquire);
        if start != 0 && addr >= start && addr - start < slot.len.load(Ordering::Acquire) {
            slot.faulted.store(true, Ordering::Release);
            ours = true;
        }
    }
    if ours {
        let page = PAGE.load(Ordering::Relaxed);
        // SAFETY: the page lies inside a live read-only map of ours (its registration
        // outlives every read of it); replacing it with zeros changes only what a read
        // of a page that no longer exists returns, and every such read is refused.
        let patched = unsafe {
            libc::mmap(
                (addr & !(page - 1)) as *mut libc::c_void,
                page,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if patched != libc::MAP_FAILED {
            FAULTS.fetch_add(1, Ordering::AcqRel);
            return;
        }
    }
    pass_on(signal, info, context);
}

/// What would have happened without this module: the previous handler runs, or the
/// default action is restored so that the faulting instruction, run again, ends the
/// process with SIGBUS as before.
fn pass_on(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    let previous = PREVIOUS.get();
    let handler = previous.map_or(libc::SIG_DFL, |p| p.sa_sigaction);
    // SAFETY: a handler recorded from sigaction is called as its flags say; restoring the
    // default disposition is always valid.
    unsafe {
        if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
            let mut default: libc::sigaction = std::mem::zeroed();
            default.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(libc::SIGBUS, &default, std::ptr::null_mut());
        } else if previous.is_some_and(|p| p.sa_flags & libc::SA_SIGINFO != 0) {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(handler);
            f(signal, info, context);
        } else {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(handler);
            f(signal);
        }
    }
}
