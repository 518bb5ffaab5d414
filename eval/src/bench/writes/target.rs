//! The writes arm over HTTP (`--writes --target URL --writes-to-target`): reads through
//! the HTTP backend, writes through the target's `_bulk`, in the target's own index.
//!
//! A server's index cannot be copied, so each trial writes into it: every batch is posted
//! as `create` actions (an id the index holds is refused, never replaced) with ids under
//! [`TARGET_ID_PREFIX`], with `refresh=true` so that the commit is visible when it
//! returns (heddle's `_bulk` always is), and the trial deletes every id it may have
//! written at its end. Documents carrying the arm's marker word found before a trial (an
//! interrupted run's) are deleted if their ids are the arm's, and refused otherwise.

use anyhow::{Context, bail, ensure};

use super::batches::{ALL_MARKER, Batch};
use super::trial::{TrialSpec, run_trial};
use super::{BenchArgs, TrialReport, trial_report};
use crate::bench::backend::Backend;
use crate::bench::ladder::{self, warm_up};
use crate::bench::queries::QueryCycle;
use crate::bench::report::{Calibration, Settings};
use crate::serve::{HttpBackend, HttpFactory};

/// Every id the writes arm gives a document in a target's index: no corpus id starts so,
/// and the cleanup deletes only ids that do.
pub const TARGET_ID_PREFIX: &str = "heddle-writes-";

/// Most rounds of deleting an earlier run's documents before a trial.
const CLEANUP_ROUNDS: usize = 100;

/// Puts [`TARGET_ID_PREFIX`] before every id (a `--write-corpus` file's ids are the
/// target's own corpus's, most likely).
pub(super) fn prefix_ids(batches: &mut [Batch]) {
    for b in batches {
        for d in &mut b.docs {
            d.id = format!("{TARGET_ID_PREFIX}{}", d.id);
        }
        for id in &mut b.sorted_ids {
            *id = format!("{TARGET_ID_PREFIX}{id}");
        }
        b.sorted_ids.sort_unstable();
    }
}

/// The target's capacity for reads, measured as the ladder measures it (no copy: reads
/// change nothing).
pub(super) fn calibrate(
    factory: &HttpFactory,
    args: &BenchArgs,
    settings: &Settings,
    queries: &QueryCycle,
    warm_n: u64,
) -> anyhow::Result<Calibration> {
    let backend = factory.open_http()?;
    crate::note!("bench: http: warm-up for calibration, {warm_n} queries");
    let w = warm_up(&*backend, queries, warm_n, settings.k);
    let hint = w.latency_us.mean.unwrap_or(1_000.0);
    ladder::calibrate(
        &*backend,
        "http",
        hint,
        args.calibration_samples,
        settings,
        queries,
    )
}

/// One trial in the target's index: clear an earlier run's documents, warm up, run the
/// reads and the writer, delete what this trial wrote.
pub(super) fn trial(
    factory: &HttpFactory,
    spec: &TrialSpec<'_>,
    settings: &Settings,
    queries: &QueryCycle,
    batches: &[Batch],
    warm_n: u64,
) -> anyhow::Result<TrialReport> {
    let url = factory.target.url();
    let opened = std::time::Instant::now();
    let backend = factory
        .open_http()
        .with_context(|| format!("opening {url}"))?;
    let open_secs = opened.elapsed().as_secs_f64();
    clear_leftovers(&backend, &url)?;
    let warmup = warm_up(&*backend, queries, warm_n, settings.k);
    ensure!(
        warm_n == 0 || warmup.errors < warm_n,
        "{}: every warm-up query failed on {url}: {}",
        spec.engine,
        crate::bench::ladder::first_error(&*backend, queries, settings.k)
    );
    crate::note!(
        "bench: {} {}: writing into {url} (ids {TARGET_ID_PREFIX}…)",
        spec.engine,
        spec.label
    );
    let run = run_trial(&*backend, spec, settings, queries, batches);
    let ids: Vec<String> = batches
        .iter()
        .flat_map(|b| b.docs.iter().map(|d| d.id.clone()))
        .collect();
    backend.delete_documents(&ids).with_context(|| {
        format!(
            "deleting the {} documents this trial may have written into {url}: those \
             written are still there (ids {TARGET_ID_PREFIX}…)",
            ids.len()
        )
    })?;
    let left = backend.search(ALL_MARKER, 10)?;
    ensure!(
        left.is_empty(),
        "{url} still finds {} written documents after deleting them (first: {})",
        left.len(),
        left[0]
    );
    crate::note!(
        "bench: {} {}: deleted the trial's documents from {url}",
        spec.engine,
        spec.label
    );
    Ok(trial_report(spec, run, warmup, 0, 0, 0.0, open_secs))
}

/// Deletes documents an earlier, interrupted run left (the arm's marker word, the arm's
/// ids); refuses to run beside documents with the marker word and other ids.
fn clear_leftovers(backend: &HttpBackend, url: &str) -> anyhow::Result<()> {
    for _ in 0..CLEANUP_ROUNDS {
        let hits = backend
            .search(ALL_MARKER, 1_000)
            .with_context(|| format!("looking for an earlier run's documents in {url}"))?;
        if hits.is_empty() {
            return Ok(());
        }
        if let Some(foreign) = hits.iter().find(|id| !id.starts_with(TARGET_ID_PREFIX)) {
            bail!(
                "{url} holds documents with the writes arm's marker word {ALL_MARKER} whose \
                 ids are not the arm's (e.g. {foreign}): refusing to write beside them"
            );
        }
        crate::note!(
            "bench: deleting {} documents an earlier writes run left in {url}",
            hits.len()
        );
        backend.delete_documents(&hits)?;
    }
    bail!(
        "{url}: an earlier run's documents were still found after {CLEANUP_ROUNDS} rounds of deleting them"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::writes::batches::{WriteSource, load};

    #[test]
    fn every_written_id_carries_the_prefix_and_the_batch_still_matches_itself() {
        let mut batches = load(&WriteSource::Generated { seed: 1 }, 5, 2).unwrap();
        prefix_ids(&mut batches);
        for b in &batches {
            assert!(b.docs.iter().all(|d| d.id.starts_with("heddle-writes-w-")));
            let ids: Vec<String> = b.docs.iter().map(|d| d.id.clone()).collect();
            assert!(b.is_exactly(ids));
        }
    }
}
