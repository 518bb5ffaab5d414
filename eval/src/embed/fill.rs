//! Filling a cache: the items not yet encoded, in windows sorted by length and cut into
//! batches, encoded by worker threads, appended by one writer as each batch finishes.
//!
//! ```text
//! this thread: input ─ windows of WINDOW items not done, sorted by length ─ batches ─┐
//! workers (--threads): encode_batch ─────────────────────────────────────────────────┤
//! writer: append + fsync + done.json, progress line ◄─────────────────────────────────┘
//! ```
//!
//! Every text of a batch is padded to the batch's longest, so neighbours in length waste
//! least; a window, not the whole input, is sorted so that memory stays a window's texts
//! whatever the corpus's size. Between batches each worker waits while the pause file
//! exists (`--pause-while`), so that a long encoding can give the machine back to someone
//! measuring.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::TextEncoder;
use super::cache::{EmbeddingCache, Resumed};
use super::input::{Input, Item, Survey};
use crate::progress::{plural, thousands};

/// Items sorted by length together before they are cut into batches.
pub const WINDOW: usize = 4096;

/// How a fill runs.
#[derive(Debug, Clone)]
pub struct FillOptions {
    /// Worker threads, each encoding one batch at a time.
    pub threads: usize,
    /// Texts a batch.
    pub batch: usize,
    /// While this file exists, workers wait before their next batch.
    pub pause_while: Option<PathBuf>,
    /// How often the pause file is looked at while it exists.
    pub pause_poll: Duration,
    /// The least time between two progress lines.
    pub progress_every: Duration,
}

impl Default for FillOptions {
    fn default() -> Self {
        FillOptions {
            threads: 1,
            batch: 1,
            pause_while: None,
            pause_poll: Duration::from_secs(5),
            progress_every: Duration::from_secs(10),
        }
    }
}

/// What a fill did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FillReport {
    /// Items encoded by this run.
    pub encoded: u64,
    /// Seconds spent encoding (from the first batch handed out to the last written),
    /// time paused left out.
    pub seconds: f64,
    /// Seconds spent paused.
    pub paused_seconds: f64,
}

/// One batch: the texts and the ids they belong to.
struct Batch {
    ids: Vec<String>,
    texts: Vec<String>,
}

type Encoded = anyhow::Result<Vec<(String, Vec<f32>)>>;

/// Encodes every item of `input` that `resumed` does not mark done, appending each batch
/// to `cache` as it finishes. Progress lines go to `say` (stderr, in the command).
pub fn fill(
    encoder: &dyn TextEncoder,
    input: &Input,
    survey: &Survey,
    cache: &mut EmbeddingCache,
    resumed: &Resumed,
    options: &FillOptions,
    say: &(dyn Fn(&str) + Sync),
) -> anyhow::Result<FillReport> {
    let total = resumed.done.len() as u64;
    let todo = total - resumed.count as u64;
    if todo == 0 {
        return Ok(FillReport::default());
    }
    let threads = options.threads.max(1);
    let batch_size = options.batch.max(1);
    let stop = AtomicBool::new(false);
    let paused_ms = AtomicU64::new(0);
    let (work_tx, work_rx) = sync_channel::<Batch>(threads * 2);
    let work_rx = Arc::new(Mutex::new(work_rx));
    let (done_tx, done_rx) = sync_channel::<Encoded>(threads * 2);
    let started = Instant::now();

    let (produced, written) = std::thread::scope(|scope| {
        for _ in 0..threads {
            let (work_rx, done_tx) = (Arc::clone(&work_rx), done_tx.clone());
            let (stop, paused_ms) = (&stop, &paused_ms);
            scope.spawn(move || work(encoder, &work_rx, &done_tx, stop, paused_ms, options));
        }
        // Only the workers hold the receiving end now: when they stop, sending fails.
        drop(work_rx);
        drop(done_tx);
        let (stop, paused_ms) = (&stop, &paused_ms);
        let writer = scope.spawn(move || {
            let mut progress = ProgressLine {
                noun: input.noun(),
                total,
                before: total - todo,
                started,
                last: None,
                every: options.progress_every,
                pause_while: options.pause_while.as_deref(),
                paused_ms,
                threads,
                said_paused: false,
            };
            let result = write(cache, &done_rx, &mut progress, say);
            if result.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
            result
        });
        let produced = produce(input, survey, resumed, batch_size, &work_tx, stop);
        if produced.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        drop(work_tx);
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the writer thread panicked")));
        (produced, written)
    });
    let encoded = written?;
    produced?;
    if encoded != todo {
        bail!(
            "{}: {} of {} {} were encoded; the input changed while it was read?",
            input.path().display(),
            thousands(encoded),
            thousands(todo),
            input.noun()
        );
    }
    let paused_seconds = paused_ms.load(Ordering::Relaxed) as f64 / 1000.0 / threads as f64;
    Ok(FillReport {
        encoded,
        seconds: (started.elapsed().as_secs_f64() - paused_seconds).max(0.0),
        paused_seconds,
    })
}

/// Reads the input in order and hands out its items not done, a window at a time,
/// sorted by length within the window and cut into batches.
fn produce(
    input: &Input,
    survey: &Survey,
    resumed: &Resumed,
    batch_size: usize,
    work: &SyncSender<Batch>,
    stop: &AtomicBool,
) -> anyhow::Result<()> {
    let mut window: Vec<Item> = Vec::with_capacity(WINDOW);
    let mut ordinal = 0usize;
    for item in input.items()? {
        let item = item?;
        if survey.ordinals.get(&item.id).map(|&o| o as usize) != Some(ordinal) {
            bail!(
                "{}: {:?} is not where it was when the file was first read: the file \
                 changed while it was encoded",
                input.path().display(),
                item.id
            );
        }
        ordinal += 1;
        if !resumed.done[ordinal - 1] {
            window.push(item);
        }
        if window.len() == WINDOW && !send_window(&mut window, batch_size, work, stop) {
            return Ok(());
        }
    }
    send_window(&mut window, batch_size, work, stop);
    Ok(())
}

/// Sends `window`'s items as batches of similar length; false once nobody receives.
fn send_window(
    window: &mut Vec<Item>,
    batch_size: usize,
    work: &SyncSender<Batch>,
    stop: &AtomicBool,
) -> bool {
    window.sort_by_key(|item| item.text.len());
    let mut items = window.drain(..).peekable();
    while items.peek().is_some() {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let (ids, texts) = items
            .by_ref()
            .take(batch_size)
            .map(|item| (item.id, item.text))
            .unzip();
        if work.send(Batch { ids, texts }).is_err() {
            return false;
        }
    }
    true
}

/// One worker: waits out the pause file, takes a batch, encodes it, passes it on.
fn work(
    encoder: &dyn TextEncoder,
    work: &Mutex<Receiver<Batch>>,
    done: &SyncSender<Encoded>,
    stop: &AtomicBool,
    paused_ms: &AtomicU64,
    options: &FillOptions,
) {
    loop {
        if let Some(pause) = &options.pause_while {
            while pause.exists() && !stop.load(Ordering::Relaxed) {
                std::thread::sleep(options.pause_poll);
                paused_ms.fetch_add(options.pause_poll.as_millis() as u64, Ordering::Relaxed);
            }
        }
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let batch = match work.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => return,
        };
        let Ok(batch) = batch else {
            return;
        };
        let texts: Vec<&str> = batch.texts.iter().map(String::as_str).collect();
        let encoded = encoder.encode_batch(&texts).and_then(|vectors| {
            if vectors.len() != batch.ids.len() {
                bail!(
                    "the encoder returned {} vectors for {} texts",
                    vectors.len(),
                    batch.ids.len()
                );
            }
            Ok(batch.ids.iter().cloned().zip(vectors).collect())
        });
        let encoded = encoded.with_context(|| {
            format!(
                "encoding a batch of {} (from {:?})",
                plural(batch.ids.len() as u64, "text"),
                batch.ids[0]
            )
        });
        if done.send(encoded).is_err() {
            return;
        }
    }
}

/// The writer: appends each finished batch, says how far it got. Returns how many items
/// it wrote.
fn write(
    cache: &mut EmbeddingCache,
    done: &Receiver<Encoded>,
    progress: &mut ProgressLine,
    say: &(dyn Fn(&str) + Sync),
) -> anyhow::Result<u64> {
    let mut written = 0u64;
    loop {
        if let Some(line) = progress.line(written, false) {
            say(&line);
        }
        match done.recv_timeout(Duration::from_millis(250)) {
            Ok(batch) => {
                let batch = batch?;
                cache.append(&batch)?;
                written += batch.len() as u64;
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    if let Some(line) = progress.line(written, true) {
        say(&line);
    }
    Ok(written)
}

/// The progress line: done / total, documents/s this run, time left.
struct ProgressLine<'a> {
    noun: &'static str,
    total: u64,
    /// Done before this run.
    before: u64,
    started: Instant,
    last: Option<Instant>,
    every: Duration,
    pause_while: Option<&'a Path>,
    /// Milliseconds paused, summed over the workers.
    paused_ms: &'a AtomicU64,
    threads: usize,
    said_paused: bool,
}

impl ProgressLine<'_> {
    /// The line to print now, if one is due (`last`: always).
    fn line(&mut self, written: u64, last: bool) -> Option<String> {
        let paused = self.pause_while.filter(|p| p.exists());
        if let Some(pause) = paused {
            if std::mem::replace(&mut self.said_paused, true) {
                return None;
            }
            return Some(format!(
                "embed: {}: paused while {} exists ({} of {} done)",
                self.noun,
                pause.display(),
                thousands(self.before + written),
                thousands(self.total)
            ));
        }
        self.said_paused = false;
        let due = self.last.is_none_or(|t| t.elapsed() >= self.every);
        if !(last || due) {
            return None;
        }
        self.last = Some(Instant::now());
        // Time the workers spent paused is left out of the rate.
        let paused = self.paused_ms.load(Ordering::Relaxed) as f64 / 1000.0 / self.threads as f64;
        let seconds = (self.started.elapsed().as_secs_f64() - paused).max(1e-9);
        let rate = written as f64 / seconds;
        let left = self.total - self.before - written;
        let eta = if left == 0 {
            "done".to_string()
        } else if written == 0 {
            "time left unknown yet".to_string()
        } else {
            format!("about {} left", duration(left as f64 / rate))
        };
        Some(format!(
            "embed: {}: {} / {} ({:.1}%), {:.2} {}/s, {eta}",
            self.noun,
            thousands(self.before + written),
            thousands(self.total),
            100.0 * (self.before + written) as f64 / self.total.max(1) as f64,
            rate,
            self.noun
        ))
    }
}

/// `3 h 05 min`, `4 min 10 s`, `12 s`.
fn duration(seconds: f64) -> String {
    let s = seconds.round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::duration;

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration(12.4), "12 s");
        assert_eq!(duration(250.0), "4 min 10 s");
        assert_eq!(duration(3.0 * 3600.0 + 5.0 * 60.0 + 20.0), "3 h 05 min");
    }
}
