//! `heddle-eval read-loop` (hidden): the reader process of the concurrency tests. For a
//! fixed time or number of rounds it opens the index afresh and searches it, and reloads
//! and searches one long-lived handle, while other processes commit, merge and rebuild.
//! Every failure is counted and the first few printed; any failure fails the command.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::bail;
use clap::Args;
use heddle::{Index, SearchOptions};

#[derive(Debug, Args)]
pub struct ReadLoopArgs {
    /// The index to open and search.
    #[arg(long)]
    pub index: PathBuf,
    /// Stop after this many seconds…
    #[arg(long, default_value_t = 5.0)]
    pub secs: f64,
    /// …or after this many rounds, whichever comes first (0: no limit).
    #[arg(long, default_value_t = 0)]
    pub rounds: u64,
    /// The query each round runs.
    #[arg(long, default_value = "every")]
    pub query: String,
    /// Create this file once the first round is done (the long-lived handle open and
    /// searched), so that a test can change the index under a reader known to be reading.
    #[arg(long, value_name = "FILE")]
    pub ready: Option<PathBuf>,
}

pub fn run(args: &ReadLoopArgs) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs_f64(args.secs);
    let opts = SearchOptions::default();
    let mut long_lived: Option<Index> = None;
    let (mut rounds, mut failures) = (0u64, 0u64);
    let mut fail = |what: &str, e: &dyn std::fmt::Display| {
        failures += 1;
        if failures <= 5 {
            crate::note!("read-loop: {what} failed: {e}");
        }
    };
    while Instant::now() < deadline && (args.rounds == 0 || rounds < args.rounds) {
        rounds += 1;
        match Index::open(&args.index) {
            Ok(index) => {
                if let Err(e) = index.searcher().search(&args.query, &opts) {
                    fail("search after open", &e);
                }
                if long_lived.is_none() {
                    long_lived = Some(index);
                }
            }
            Err(e) => fail("open", &e),
        }
        if let Some(index) = &long_lived {
            match index.reload() {
                Ok(()) => {
                    if let Err(e) = index.searcher().search(&args.query, &opts) {
                        fail("search after reload", &e);
                    }
                }
                Err(e) => fail("reload", &e),
            }
        }
        if rounds == 1
            && let Some(ready) = &args.ready
        {
            std::fs::write(ready, b"")?;
        }
    }
    crate::note!(
        "read-loop: {rounds} rounds (open + search, reload + search), {failures} failures"
    );
    if failures > 0 {
        bail!("{failures} of {rounds} rounds failed");
    }
    Ok(())
}
