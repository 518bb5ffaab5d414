//! The threads the encoder's kernels run on: a fork–join team whose helpers spin between
//! products instead of sleeping.
//!
//! A query is 24 products of 50–100 µs a thread with a few µs of attention and LayerNorm
//! between them. On rayon's pool (the kernels' threads until session 20) an idle thread
//! yields 32 times and then sleeps on a futex, so the second thread was put to sleep and
//! woken again about 45 times a query: perf counted 90 futex calls and 1,450 sched_yield a
//! query, 25% more CPU than one thread for 1.16× its speed. Here:
//!
//! - a helper waits for work by spinning (`spin_loop`, no system call) for [`SPIN`] after
//!   its last part, and only then sleeps on a condition variable;
//! - the calling thread is a member of the team: it takes parts itself, and a part goes to
//!   whichever thread asks for it first, so a helper still waking up costs only the parts
//!   it does not get to;
//! - a caller that finds the team busy (another thread is encoding) runs every part
//!   itself, so concurrent callers never wait for each other.
//!
//! The team's size is [`set_kernel_threads`]'s, else `RAYON_NUM_THREADS` (how it was set
//! before the team existed), else one thread a logical core.

use std::cell::Cell;
use std::num::NonZeroUsize;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long an idle helper spins before it sleeps: longer than the gap between two products
/// of one text (attention, LayerNorm), short enough that an idle team costs little CPU.
const SPIN: Duration = Duration::from_micros(200);

/// Spins between two looks at the clock.
const SPINS_A_CLOCK_READ: u32 = 64;

/// Parts a job is cut into per thread of the team: more than one, so that the caller (or a
/// helper already awake) takes the parts of a helper still waking up.
const PARTS_A_THREAD: usize = 2;

/// The size `set_kernel_threads` asked for (0: not set).
static REQUESTED_THREADS: AtomicUsize = AtomicUsize::new(0);

/// Makes the encoder's kernels use `threads` threads each call (`1`: the calling thread only).
///
/// # Safety
///
/// Sets environment variables (`RAYON_NUM_THREADS` and `CANDLE_NUM_THREADS`, for any rayon
/// or candle code elsewhere in the process), which is sound only while no other thread of
/// the process reads or writes the environment: call it first thing in `main`, before any
/// thread exists. It must also come before the first encoding, which sizes the team.
pub unsafe fn set_kernel_threads(threads: NonZeroUsize) {
    REQUESTED_THREADS.store(threads.get(), Ordering::Relaxed);
    let value = threads.to_string();
    // SAFETY: the caller promises that no other thread exists yet (see above).
    unsafe {
        std::env::set_var("RAYON_NUM_THREADS", &value);
        std::env::set_var("CANDLE_NUM_THREADS", &value);
    }
}

/// The team's size when it is first used.
fn configured_threads() -> usize {
    match REQUESTED_THREADS.load(Ordering::Relaxed) {
        0 => std::env::var("RAYON_NUM_THREADS")
            .ok()
            .and_then(|value| value.trim().parse::<NonZeroUsize>().ok())
            .or_else(|| std::thread::available_parallelism().ok())
            .map_or(1, NonZeroUsize::get),
        requested => requested,
    }
}

thread_local! {
    /// The team `Team::install` made current on this thread (null: the global one).
    static INSTALLED: Cell<*const Team> = const { Cell::new(std::ptr::null()) };
}

/// Runs `f` with the team current on this thread: the one installed, else the process's.
pub(crate) fn with_current<R>(f: impl FnOnce(&Team) -> R) -> R {
    let installed = INSTALLED.with(Cell::get);
    if installed.is_null() {
        static GLOBAL: OnceLock<Team> = OnceLock::new();
        f(GLOBAL.get_or_init(|| Team::new(configured_threads())))
    } else {
        // SAFETY: `install` sets the pointer from a `&Team` that outlives the call it
        // brackets, and restores the previous value before that borrow ends.
        f(unsafe { &*installed })
    }
}

/// The parts of one job, with a generation that tells one job from the next.
///
/// Packed into one word so that a helper claims a part with one compare-and-swap that also
/// proves the job is still the one it saw: generation in the upper 32 bits, the number of
/// parts in the next 16, the next unclaimed part in the lowest 16.
#[derive(Clone, Copy)]
struct Parts {
    generation: u32,
    count: u16,
    next: u16,
}

impl Parts {
    fn pack(self) -> u64 {
        (u64::from(self.generation) << 32) | (u64::from(self.count) << 16) | u64::from(self.next)
    }

    fn unpack(word: u64) -> Self {
        Parts {
            generation: (word >> 32) as u32,
            count: (word >> 16) as u16,
            next: word as u16,
        }
    }
}

/// The generation of `Shared::parts` before the team's first job.
const NO_JOB_YET: u32 = 0;

/// Most parts one job may have.
const MAX_PARTS: usize = u16::MAX as usize;

/// What the caller and the helpers share.
struct Shared {
    /// `Parts`, packed.
    parts: AtomicU64,
    /// The current job: a `*const &(dyn Fn(usize) + Sync)` on the caller's stack, valid
    /// while the job has parts not yet finished.
    job: AtomicPtr<()>,
    /// Parts of the current job not yet finished.
    unfinished: AtomicUsize,
    /// Whether a part of the current job panicked.
    panicked: AtomicBool,
    /// Helpers asleep (or about to be) on `wake`.
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
    shutdown: AtomicBool,
}

/// Threads that run the parts of one job at a time together with the caller.
pub struct Team {
    shared: Arc<Shared>,
    helpers: Vec<JoinHandle<()>>,
    /// Set while a caller owns the team.
    busy: AtomicBool,
}

impl Team {
    /// A team of `threads` threads: the caller and `threads - 1` helpers (none for 0 or 1).
    pub fn new(threads: usize) -> Self {
        let shared = Arc::new(Shared {
            parts: AtomicU64::new(
                Parts {
                    generation: NO_JOB_YET,
                    count: 0,
                    next: 0,
                }
                .pack(),
            ),
            job: AtomicPtr::new(std::ptr::null_mut()),
            unfinished: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
            shutdown: AtomicBool::new(false),
        });
        let helpers = (1..threads.max(1))
            .filter_map(|index| {
                let shared = Arc::clone(&shared);
                // A helper that cannot be started leaves its parts to the caller.
                std::thread::Builder::new()
                    .name(format!("heddle-kernel-{index}"))
                    .spawn(move || help(&shared))
                    .ok()
            })
            .collect();
        Team {
            shared,
            helpers,
            busy: AtomicBool::new(false),
        }
    }

    /// Threads that may run a job's parts at once (the caller included).
    pub fn threads(&self) -> usize {
        self.helpers.len() + 1
    }

    /// How many parts to cut a job into: one (run it on the caller) when it is too small to
    /// be worth handing over or there is no helper, else [`PARTS_A_THREAD`] a thread.
    pub(crate) fn parts(&self, worth_splitting: bool) -> usize {
        if worth_splitting && !self.helpers.is_empty() {
            self.threads() * PARTS_A_THREAD
        } else {
            1
        }
    }

    /// Runs `f` with this team as the one the encoder's kernels use on this thread.
    pub fn install<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Restore(*const Team);
        impl Drop for Restore {
            fn drop(&mut self) {
                INSTALLED.with(|installed| installed.set(self.0));
            }
        }
        let _restore = Restore(INSTALLED.with(|installed| installed.replace(self)));
        f()
    }

    /// Runs `run(0)`, …, `run(parts - 1)`, each once, on the caller and any helper free to
    /// help, and returns when all are done. A panic in a part is raised again here after
    /// every part has finished. More than [`MAX_PARTS`] parts run on the caller alone.
    pub(crate) fn split(&self, parts: usize, run: &(dyn Fn(usize) + Sync)) {
        if parts <= 1
            || parts > MAX_PARTS
            || self.helpers.is_empty()
            || self.busy.swap(true, Ordering::Acquire)
        {
            (0..parts).for_each(run);
            return;
        }
        let shared = &*self.shared;
        let job: &(dyn Fn(usize) + Sync) = run;
        shared.job.store(
            &job as *const &(dyn Fn(usize) + Sync) as *mut (),
            Ordering::Relaxed,
        );
        shared.unfinished.store(parts, Ordering::Relaxed);
        let generation = Parts::unpack(shared.parts.load(Ordering::Relaxed))
            .generation
            .wrapping_add(1);
        // Publishes the job (SeqCst: ordered before the look at `sleepers` below, which
        // pairs with a helper's increment of it before its last look at `parts`).
        shared.parts.store(
            Parts {
                generation,
                count: parts as u16,
                next: 0,
            }
            .pack(),
            Ordering::SeqCst,
        );
        if shared.sleepers.load(Ordering::SeqCst) > 0 {
            let _guard = shared.lock.lock().unwrap_or_else(PoisonError::into_inner);
            shared.wake.notify_all();
        }
        work(shared, generation);
        let mut spins = 0u32;
        while shared.unfinished.load(Ordering::Acquire) != 0 {
            // A helper was descheduled in the middle of its part: give the core back now
            // and then rather than spin against it.
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(1024) {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        self.busy.store(false, Ordering::Release);
        if shared.panicked.swap(false, Ordering::Relaxed) {
            panic!("a part of a kernel split between threads panicked");
        }
    }
}

impl Drop for Team {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::SeqCst);
        {
            let _guard = self
                .shared
                .lock
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            self.shared.wake.notify_all();
        }
        for helper in self.helpers.drain(..) {
            // A helper's panic was already reported by the part that raised it.
            let _ = helper.join();
        }
    }
}

/// Claims and runs parts of job `generation` until none is left unclaimed.
fn work(shared: &Shared, generation: u32) {
    loop {
        let word = shared.parts.load(Ordering::Acquire);
        let parts = Parts::unpack(word);
        if parts.generation != generation || parts.next >= parts.count {
            return;
        }
        if shared
            .parts
            .compare_exchange_weak(word, word + 1, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            continue;
        }
        let job = shared.job.load(Ordering::Relaxed) as *const &(dyn Fn(usize) + Sync);
        // SAFETY: the claim above read the word the caller published after storing `job`
        // (acquire pairs with its store), and the caller keeps `job` alive and unchanged
        // until every part is finished, this one included.
        let run = unsafe { *job };
        if catch_unwind(AssertUnwindSafe(|| run(usize::from(parts.next)))).is_err() {
            shared.panicked.store(true, Ordering::Relaxed);
        }
        shared.unfinished.fetch_sub(1, Ordering::Release);
    }
}

/// A helper's life: wait for a job (spinning, then asleep), help with it, again.
fn help(shared: &Shared) {
    // The generation the team was made with, not the one current when this thread first
    // runs: a caller may publish its first job before a slow-starting helper gets here,
    // and a helper that took that job's generation as already seen would leave its parts
    // to the caller (the wake test hung on it on a loaded machine).
    let mut seen = NO_JOB_YET;
    loop {
        let mut idle_since = Instant::now();
        let mut spins = 0u32;
        loop {
            let generation = Parts::unpack(shared.parts.load(Ordering::Acquire)).generation;
            if generation != seen {
                seen = generation;
                break;
            }
            if shared.shutdown.load(Ordering::Relaxed) {
                return;
            }
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(SPINS_A_CLOCK_READ) && idle_since.elapsed() >= SPIN {
                let mut guard = shared.lock.lock().unwrap_or_else(PoisonError::into_inner);
                shared.sleepers.fetch_add(1, Ordering::SeqCst);
                while Parts::unpack(shared.parts.load(Ordering::SeqCst)).generation == seen
                    && !shared.shutdown.load(Ordering::SeqCst)
                {
                    guard = shared
                        .wake
                        .wait(guard)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                shared.sleepers.fetch_sub(1, Ordering::SeqCst);
                idle_since = Instant::now();
            } else {
                std::hint::spin_loop();
            }
        }
        work(shared, seen);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Splits a job of `parts` parts on `team` and asserts that each ran exactly once.
    fn split_and_count(team: &Team, parts: usize, context: &str) {
        let runs: Vec<AtomicUsize> = (0..parts).map(|_| AtomicUsize::new(0)).collect();
        team.split(parts, &|part| {
            runs[part].fetch_add(1, Ordering::Relaxed);
        });
        let counts: Vec<usize> = runs.iter().map(|r| r.load(Ordering::Relaxed)).collect();
        assert!(
            counts.iter().all(|&count| count == 1),
            "{context}, {parts} parts: {counts:?}"
        );
    }

    #[test]
    fn every_part_runs_exactly_once_on_any_team() {
        for threads in [1, 2, 3] {
            let team = Team::new(threads);
            for parts in [0, 1, 2, 7, 64, MAX_PARTS + 1] {
                for _round in 0..if parts > 64 { 1 } else { 50 } {
                    split_and_count(&team, parts, &format!("{threads} threads"));
                }
            }
        }
    }

    /// Splits `team`'s next job in two parts that each wait until a part has run off the
    /// calling thread: it ends only if a helper took a part (a hang is the failure, and a
    /// part panics after 60 s of it).
    fn split_needing_a_helper(team: &Team, round: usize) {
        let helper_ran = AtomicBool::new(false);
        let caller = std::thread::current().id();
        let started = Instant::now();
        team.split(2, &|_| {
            if std::thread::current().id() != caller {
                helper_ran.store(true, Ordering::Relaxed);
            }
            while !helper_ran.load(Ordering::Relaxed) {
                assert!(
                    started.elapsed() < Duration::from_secs(60),
                    "round {round}: no helper took a part"
                );
                std::hint::spin_loop();
            }
        });
        assert!(helper_ran.load(Ordering::Relaxed));
    }

    #[test]
    fn a_job_published_before_a_helper_first_runs_is_still_helped() {
        // The job goes out microseconds after the helper is spawned, before it has
        // usually run at all: it must still count that job as new.
        for round in 0..20 {
            split_needing_a_helper(&Team::new(2), round);
        }
    }

    #[test]
    fn helpers_take_parts_and_wake_after_sleeping() {
        let team = Team::new(2);
        for round in 0..3 {
            // Past the spin: the helper has gone to sleep, and the job must wake it.
            std::thread::sleep(SPIN * 5);
            split_needing_a_helper(&team, round);
        }
    }

    #[test]
    fn a_busy_team_runs_a_second_callers_parts_on_that_caller() {
        let team = Team::new(2);
        let inner_threads = Mutex::new(Vec::new());
        team.split(2, &|_| {
            let outer = std::thread::current().id();
            // Split again from inside a part: the team is busy, so this runs inline.
            team.split(3, &|_| {
                inner_threads
                    .lock()
                    .unwrap()
                    .push((outer, std::thread::current().id()));
            });
        });
        let inner = inner_threads.into_inner().unwrap();
        assert_eq!(inner.len(), 6);
        assert!(
            inner.iter().all(|(outer, ran_on)| outer == ran_on),
            "{inner:?}"
        );
    }

    #[test]
    fn two_callers_at_once_each_get_every_part_once() {
        let team = Team::new(2);
        std::thread::scope(|scope| {
            for caller in 0..2 {
                let team = &team;
                scope.spawn(move || {
                    for round in 0..500 {
                        split_and_count(team, 8, &format!("caller {caller}, round {round}"));
                    }
                });
            }
        });
    }

    #[test]
    fn a_panicking_part_is_raised_on_the_caller_and_the_team_still_works() {
        let team = Team::new(2);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            team.split(4, &|part| assert_ne!(part, 2, "part 2 fails"));
        }));
        assert!(outcome.is_err());
        let runs = AtomicUsize::new(0);
        team.split(4, &|_| {
            runs.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(runs.load(Ordering::Relaxed), 4);
    }

    #[test]
    fn install_makes_a_team_current_and_restores_the_previous_one() {
        let outer = Team::new(3);
        let inner = Team::new(2);
        outer.install(|| {
            assert_eq!(with_current(Team::threads), 3);
            inner.install(|| assert_eq!(with_current(Team::threads), 2));
            assert_eq!(with_current(Team::threads), 3);
        });
    }
}
