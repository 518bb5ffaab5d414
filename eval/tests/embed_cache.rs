#![cfg(feature = "embed")]
//! The embeddings cache through `heddle_eval::embed` with a counting stand-in for the
//! model: what is keyed by what, that a second run encodes nothing, and that a run killed
//! mid-batch resumes without trusting what it left half-written.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use heddle_corpus::beir::open_vectors;
use heddle_eval::embed::{
    self, Embedded, EmbeddingCache, FillOptions, Input, ModelIdentity, Survey, TextEncoder,
};

const DIM: usize = 8;

/// Encodes a text as DIM numbers derived from its bytes; counts the texts it encoded and
/// can be told to fail from a given batch on (a run that dies part-way).
struct Counting {
    texts: AtomicUsize,
    batches: AtomicUsize,
    fail_from_batch: Option<usize>,
    model: &'static str,
    seen: Mutex<Vec<String>>,
}

impl Counting {
    fn new() -> Self {
        Counting {
            texts: AtomicUsize::new(0),
            batches: AtomicUsize::new(0),
            fail_from_batch: None,
            model: "counting-model",
            seen: Mutex::new(Vec::new()),
        }
    }

    fn failing_from(batch: usize) -> Self {
        Counting {
            fail_from_batch: Some(batch),
            ..Counting::new()
        }
    }

    fn encoded(&self) -> usize {
        self.texts.load(Ordering::SeqCst)
    }
}

/// The stand-in's vector of `text`.
fn vector_of(text: &str) -> Vec<f32> {
    let mut state = 0xcbf2_9ce4_8422_2325u64;
    for byte in text.bytes() {
        state = (state ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    (0..DIM)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 40) as f32 / (1u64 << 24) as f32) - 0.5 + i as f32
        })
        .collect()
}

impl TextEncoder for Counting {
    fn identity(&self) -> ModelIdentity {
        let sha256 = format!(
            "{:0<64}",
            self.model.len() * 1000 + self.model.bytes().map(usize::from).sum::<usize>()
        );
        ModelIdentity {
            sha256,
            name: self.model.to_string(),
            dim: DIM,
        }
    }

    fn encode_batch(&self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
        let batch = self.batches.fetch_add(1, Ordering::SeqCst);
        if self.fail_from_batch.is_some_and(|from| batch >= from) {
            anyhow::bail!("the stand-in model fails at batch {batch}");
        }
        self.texts.fetch_add(texts.len(), Ordering::SeqCst);
        self.seen
            .lock()
            .unwrap()
            .extend(texts.iter().map(|t| t.to_string()));
        Ok(texts.iter().map(|t| vector_of(t)).collect())
    }
}

/// A corpus of `n` documents (title "t{i}", a text whose length varies) under `dir`.
fn corpus(dir: &Path, n: usize) -> PathBuf {
    let path = dir.join("corpus");
    std::fs::create_dir_all(&path).unwrap();
    let lines: String = (0..n)
        .map(|i| {
            format!(
                "{{\"_id\":\"d{i}\",\"title\":\"t{i}\",\"text\":\"{}\",\"metadata\":{{}}}}\n",
                "word ".repeat(1 + (i * 7) % 13)
            )
        })
        .collect();
    std::fs::write(path.join("corpus.jsonl"), lines).unwrap();
    path
}

fn options(threads: usize, batch: usize) -> FillOptions {
    FillOptions {
        threads,
        batch,
        pause_poll: Duration::from_millis(20),
        ..FillOptions::default()
    }
}

fn run(
    encoder: &Counting,
    input: &Input,
    cache: &Path,
    options: &FillOptions,
    out: Option<&Path>,
) -> anyhow::Result<Embedded> {
    embed::embed(input, encoder, cache, options, out, &|_| {})
}

/// The (id, vector) lines of a vectors file, each checked.
fn lines_of(path: &Path) -> Vec<(String, Vec<f32>)> {
    open_vectors(path)
        .unwrap()
        .map(|line| {
            let line = line.unwrap();
            (line.id, line.vector)
        })
        .collect()
}

/// Every line is the stand-in's vector of its document's text, each document once.
fn assert_complete(path: &Path, n: usize) {
    let mut lines = lines_of(path);
    assert_eq!(lines.len(), n, "{}", path.display());
    lines.sort_by_key(|(id, _)| id[1..].parse::<usize>().unwrap());
    for (i, (id, vector)) in lines.iter().enumerate() {
        assert_eq!(id, &format!("d{i}"));
        let text = format!("t{i} {}", "word ".repeat(1 + (i * 7) % 13))
            .trim()
            .to_string();
        assert_eq!(vector, &vector_of(&text), "{id}");
    }
}

#[test]
fn a_second_run_encodes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = Input::Corpus(corpus(dir.path(), 37));
    let cache = dir.path().join("cache");
    let encoder = Counting::new();
    let first = run(&encoder, &input, &cache, &options(2, 4), None).unwrap();
    assert_eq!(encoder.encoded(), 37);
    assert_eq!((first.cached, first.fill.encoded), (0, 37));
    assert_complete(&first.vectors, 37);

    let second = run(&encoder, &input, &cache, &options(2, 4), None).unwrap();
    assert_eq!(encoder.encoded(), 37, "the second run encoded again");
    assert_eq!((second.cached, second.fill.encoded), (37, 0));
    assert_eq!(second.cache_dir, first.cache_dir);
    assert_complete(&second.vectors, 37);
}

#[test]
fn documents_are_encoded_as_title_space_text_trimmed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corpus.jsonl");
    std::fs::write(
        &path,
        "{\"_id\":\"a\",\"title\":\"Bats\",\"text\":\"carry viruses. \"}\n\
         {\"_id\":\"b\",\"text\":\"no title\"}\n{\"_id\":\"c\",\"title\":\"only a title\"}\n",
    )
    .unwrap();
    let encoder = Counting::new();
    run(
        &encoder,
        &Input::Corpus(path),
        &dir.path().join("c"),
        &options(1, 8),
        None,
    )
    .unwrap();
    let mut seen = encoder.seen.lock().unwrap().clone();
    seen.sort();
    assert_eq!(seen, ["Bats carry viruses.", "no title", "only a title"]);
}

#[test]
fn the_cache_is_keyed_by_the_texts_and_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let path = corpus(dir.path(), 5).join("corpus.jsonl");
    let input = Input::Corpus(path.clone());
    let key = |input: &Input, model: &Counting| {
        embed::cache_dir(
            Path::new("/r"),
            &Survey::of(input).unwrap(),
            &model.identity(),
        )
    };
    let model = Counting::new();
    let original = key(&input, &model);

    // Another model: another directory.
    let other_model = Counting {
        model: "another-model",
        ..Counting::new()
    };
    assert_ne!(key(&input, &other_model), original);

    // A changed text: another directory.
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("word", "ward", 1)).unwrap();
    assert_ne!(key(&input, &model), original);
    // A changed id: another directory.
    std::fs::write(&path, text.replacen("\"d3\"", "\"d33\"", 1)).unwrap();
    assert_ne!(key(&input, &model), original);
    // The same documents in another order: another directory (lines are in input order).
    let mut lines: Vec<&str> = text.lines().collect();
    lines.swap(0, 1);
    std::fs::write(&path, lines.join("\n")).unwrap();
    assert_ne!(key(&input, &model), original);
    // What is not encoded (metadata, spacing of the JSON) does not change the key.
    std::fs::write(
        &path,
        text.replace("\"metadata\":{}", "\"metadata\":{\"url\":\"u\"}")
            .replace("\",\"", "\", \""),
    )
    .unwrap();
    assert_eq!(key(&input, &model), original);
}

#[test]
fn a_changed_corpus_is_encoded_into_a_cache_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let path = corpus(dir.path(), 6).join("corpus.jsonl");
    let input = Input::Corpus(path.clone());
    let cache = dir.path().join("cache");
    let encoder = Counting::new();
    let first = run(&encoder, &input, &cache, &options(1, 2), None).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("word", "ward", 1)).unwrap();
    let second = run(&encoder, &input, &cache, &options(1, 2), None).unwrap();
    assert_ne!(second.cache_dir, first.cache_dir);
    assert_eq!(encoder.encoded(), 12, "the changed corpus is encoded whole");
    assert!(first.vectors.is_file(), "the first cache stays");
}

#[test]
fn a_run_that_fails_part_way_keeps_its_finished_batches() {
    let dir = tempfile::tempdir().unwrap();
    let input = Input::Corpus(corpus(dir.path(), 20));
    let cache = dir.path().join("cache");
    // One worker, batches of 3: batches 0..4 succeed (12 documents), batch 4 fails.
    let dying = Counting::failing_from(4);
    let err = run(&dying, &input, &cache, &options(1, 3), None).unwrap_err();
    assert!(format!("{err:#}").contains("fails at batch 4"), "{err:#}");
    let survey = Survey::of(&input).unwrap();
    let dir_of = embed::cache_dir(&cache, &survey, &dying.identity());
    assert_eq!(lines_of(&dir_of.join("vectors.jsonl")).len(), 12);

    let healthy = Counting::new();
    let done = run(&healthy, &input, &cache, &options(2, 3), None).unwrap();
    assert_eq!(
        healthy.encoded(),
        8,
        "only what the first run did not finish"
    );
    assert_eq!(done.cached, 12);
    assert_complete(&done.vectors, 20);
}

/// A run killed while writing a batch: the last line is half there. It is cut off, not
/// trusted, and its document encoded again.
#[test]
fn resume_after_a_torn_last_line() {
    let dir = tempfile::tempdir().unwrap();
    let input = Input::Corpus(corpus(dir.path(), 10));
    let cache = dir.path().join("cache");
    let dying = Counting::failing_from(2);
    run(&dying, &input, &cache, &options(1, 3), None).unwrap_err();
    let survey = Survey::of(&input).unwrap();
    let vectors = embed::cache_dir(&cache, &survey, &dying.identity()).join("vectors.jsonl");
    assert_eq!(lines_of(&vectors).len(), 6);

    // What a kill in the middle of the next batch's write leaves.
    let torn = "{\"_id\":\"d9\",\"vector\":[0.1,0.2,0.";
    std::fs::OpenOptions::new()
        .append(true)
        .open(&vectors)
        .unwrap()
        .write_all(torn.as_bytes())
        .unwrap();

    let healthy = Counting::new();
    let done = run(&healthy, &input, &cache, &options(1, 3), None).unwrap();
    assert_eq!(done.dropped_bytes, torn.len() as u64);
    assert_eq!(done.cached, 6);
    assert_eq!(healthy.encoded(), 4);
    assert_complete(&done.vectors, 10);
}

/// Lines written but not yet counted as durable (killed between the batch's fsync and
/// the record's rename) are whole, but not trusted either: encoded again, never twice
/// in the file.
#[test]
fn lines_past_the_durable_record_are_dropped_even_when_whole() {
    let dir = tempfile::tempdir().unwrap();
    let input = Input::Corpus(corpus(dir.path(), 7));
    let cache = dir.path().join("cache");
    let dying = Counting::failing_from(1);
    run(&dying, &input, &cache, &options(1, 2), None).unwrap_err();
    let survey = Survey::of(&input).unwrap();
    let vectors = embed::cache_dir(&cache, &survey, &dying.identity()).join("vectors.jsonl");
    let kept = lines_of(&vectors);
    assert_eq!(kept.len(), 2);
    let extra_id = (0..7)
        .map(|i| format!("d{i}"))
        .find(|id| kept.iter().all(|(k, _)| k != id))
        .unwrap();
    let mut extra = Vec::new();
    heddle_corpus::beir::write_vector_line(&mut extra, &extra_id, &[0.0; DIM]).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&vectors)
        .unwrap()
        .write_all(&extra)
        .unwrap();

    let healthy = Counting::new();
    let done = run(&healthy, &input, &cache, &options(1, 2), None).unwrap();
    assert_eq!(done.dropped_bytes, extra.len() as u64);
    assert_eq!(healthy.encoded(), 5);
    assert_complete(&done.vectors, 7);
}

#[test]
fn a_damaged_cache_is_an_error_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let input = Input::Corpus(corpus(dir.path(), 6));
    let cache = dir.path().join("cache");
    let encoder = Counting::new();
    let done = run(&encoder, &input, &cache, &options(1, 2), None).unwrap();
    let text = std::fs::read_to_string(&done.vectors).unwrap();
    // Same length, so the durable record still covers the file: damage, not a tear.
    let second_line_start = text.find('\n').unwrap() + 1;
    let mut bytes = text.into_bytes();
    bytes[second_line_start] = b'[';
    std::fs::write(&done.vectors, &bytes).unwrap();
    let err = format!(
        "{:#}",
        run(&encoder, &input, &cache, &options(1, 2), None).unwrap_err()
    );
    assert!(
        err.contains(&format!("{}:2: ", done.vectors.display())),
        "{err}"
    );
    assert!(err.contains("remove"), "{err}");
    assert_eq!(encoder.encoded(), 6, "nothing encoded over a damaged cache");
}

#[test]
fn out_writes_the_vectors_in_input_order() {
    let dir = tempfile::tempdir().unwrap();
    let input = Input::Corpus(corpus(dir.path(), 25));
    let out = dir.path().join("vectors.jsonl");
    let encoder = Counting::new();
    // Batches of similar length finish out of corpus order.
    let done = run(
        &encoder,
        &input,
        &dir.path().join("c"),
        &options(2, 4),
        Some(&out),
    )
    .unwrap();
    let cached: Vec<String> = lines_of(&done.vectors).into_iter().map(|l| l.0).collect();
    let written: Vec<String> = lines_of(&out).into_iter().map(|l| l.0).collect();
    let in_order: Vec<String> = (0..25).map(|i| format!("d{i}")).collect();
    assert_ne!(
        cached, in_order,
        "the cache is in the order batches finished"
    );
    assert_eq!(written, in_order);
    assert_complete(&out, 25);
}

#[test]
fn queries_are_encoded_as_their_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("queries.jsonl");
    std::fs::write(
        &path,
        "{\"_id\":\"1\",\"text\":\"What do bats carry?\"}\n{\"_id\":\"2\",\"text\":\"masks\"}\n",
    )
    .unwrap();
    let out = dir.path().join("q.vectors.jsonl");
    let encoder = Counting::new();
    run(
        &encoder,
        &Input::Queries(path),
        &dir.path().join("c"),
        &options(1, 1),
        Some(&out),
    )
    .unwrap();
    let lines = lines_of(&out);
    assert_eq!(
        lines[0],
        ("1".to_string(), vector_of("What do bats carry?"))
    );
    assert_eq!(lines[1], ("2".to_string(), vector_of("masks")));
}

#[test]
fn an_input_repeating_an_id_is_refused_naming_both_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corpus.jsonl");
    std::fs::write(
        &path,
        "{\"_id\":\"a\",\"text\":\"x\"}\n{\"_id\":\"b\",\"text\":\"y\"}\n{\"_id\":\"a\",\"text\":\"z\"}\n",
    )
    .unwrap();
    let encoder = Counting::new();
    let err = run(
        &encoder,
        &Input::Corpus(path.clone()),
        &dir.path().join("c"),
        &options(1, 1),
        None,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        format!(
            "{}:3: duplicate id \"a\", first seen at line 1",
            path.display()
        )
    );
    assert_eq!(encoder.encoded(), 0);
}

#[test]
fn one_run_fills_a_cache_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let input = Input::Corpus(corpus(dir.path(), 3));
    let survey = Survey::of(&input).unwrap();
    let identity = Counting::new().identity();
    let root = dir.path().join("cache");
    let (first, _) = EmbeddingCache::open(&root, &input, &survey, &identity).unwrap();
    let err = EmbeddingCache::open(&root, &input, &survey, &identity)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("another heddle-eval embed is filling this cache"),
        "{err}"
    );
    drop(first);
    EmbeddingCache::open(&root, &input, &survey, &identity).unwrap();
}

#[test]
fn workers_wait_while_the_pause_file_exists() {
    let dir = tempfile::tempdir().unwrap();
    let input = Input::Corpus(corpus(dir.path(), 9));
    let pause = dir.path().join("quiet-please");
    std::fs::write(&pause, "").unwrap();
    let encoder = Counting::new();
    let options = FillOptions {
        pause_while: Some(pause.clone()),
        ..options(2, 2)
    };
    let lines = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            embed::embed(
                &input,
                &encoder,
                &dir.path().join("c"),
                &options,
                None,
                &|line| lines.lock().unwrap().push(line.to_string()),
            )
        });
        // However long the file stays, nothing is encoded while it does.
        for _ in 0..10 {
            std::thread::sleep(Duration::from_millis(30));
            assert_eq!(encoder.encoded(), 0);
        }
        std::fs::remove_file(&pause).unwrap();
        worker.join().unwrap().unwrap();
    });
    assert_eq!(encoder.encoded(), 9);
    let lines = lines.into_inner().unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("paused while") && l.contains("quiet-please")),
        "{lines:?}"
    );
    let last = lines.last().unwrap();
    assert!(last.contains("9 / 9 (100.0%)"), "{last}");
}

/// One digit of one vector changed: every line still checks (JSON, a known id, the
/// dimension, finite values), but the durable prefix's sha256 no longer matches the one
/// recorded, and the cache is refused instead of served (issue 33).
#[test]
fn a_changed_digit_in_a_cached_vector_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let input = Input::Corpus(corpus(dir.path(), 6));
    let cache = dir.path().join("cache");
    let encoder = Counting::new();
    let done = run(&encoder, &input, &cache, &options(1, 2), None).unwrap();
    let mut bytes = std::fs::read(&done.vectors).unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    let values = text.find("\"vector\":[").expect("a vector") + 10;
    let at = values
        + bytes[values..]
            .iter()
            .position(|b| (b'1'..=b'8').contains(b))
            .expect("a digit");
    bytes[at] += 1;
    std::fs::write(&done.vectors, &bytes).unwrap();
    let err = format!(
        "{:#}",
        run(&encoder, &input, &cache, &options(1, 2), None).unwrap_err()
    );
    assert!(
        err.contains("sha256 differs") && err.contains("remove"),
        "{err}"
    );
    assert_eq!(encoder.encoded(), 6, "nothing encoded over a changed cache");
}
