//! The working directory: each engine's index of a corpus, kept and reused while the
//! corpus and the build settings are unchanged.
//!
//! Layout: `WORKDIR/<analysis>/<engine>/index/` (the analysis's folder:
//! [`Analysis::dir_name`]) and beside it `build.json`, the
//! [`BuildRecord`] naming what was built from what. A record whose key differs from the
//! current one (another corpus, changed bytes, other threads, another version of either
//! engine or of heddle's format) means the index is rebuilt.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::analysis::{Analysis, Peer};
use crate::engines::{BuildOptions, BuildStats, Engine, TANTIVY_VERSION};

/// What an index was built from and with: equal keys mean the index can be reused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildKey {
    pub engine: Engine,
    pub corpus: CorpusFingerprint,
    pub options: BuildOptions,
    pub heddle_bench_version: String,
    /// heddle's on-disk format: an index of another format cannot be opened.
    pub heddle_format: u32,
    pub tantivy_version: String,
    /// The heddle build (commit) that made a heddle index in a memory budget, whose
    /// segments the writer's flushes and merge policy decided: neither is part of the
    /// format, and a change to either must not be measured on indexes the old code
    /// built. Absent without a budget (one commit, one segment, whatever the policies),
    /// so `make compare`'s indexes are not rebuilt on every commit. tantivy's index
    /// depends on heddle only through the segment count in its options.
    #[serde(default)]
    pub heddle_policy_build: Option<String>,
}

impl BuildKey {
    pub fn new(engine: Engine, corpus: CorpusFingerprint, options: BuildOptions) -> Self {
        let heddle_policy_build = (engine == Engine::Heddle && options.memory_bytes > 0)
            .then(|| heddle_eval::env::Build::this().short());
        BuildKey {
            engine,
            corpus,
            options,
            heddle_bench_version: env!("CARGO_PKG_VERSION").to_string(),
            heddle_format: heddle::segment::FORMAT_VERSION,
            tantivy_version: TANTIVY_VERSION.to_string(),
            heddle_policy_build,
        }
    }
}

/// A corpus file by size and content hash (FNV-1a, 64 bits, over every byte).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CorpusFingerprint {
    pub path: String,
    pub bytes: u64,
    pub fnv1a64: String,
}

impl CorpusFingerprint {
    pub fn of(path: &Path) -> anyhow::Result<Self> {
        let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let mut reader = BufReader::with_capacity(1 << 20, file);
        let mut buf = vec![0u8; 1 << 20];
        let (mut hash, mut bytes) = (FNV_OFFSET, 0u64);
        loop {
            let n = reader.read(&mut buf)?;
            if n == 0 {
                break;
            }
            hash = fnv1a(hash, &buf[..n]);
            bytes += n as u64;
        }
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        Ok(CorpusFingerprint {
            path: canonical.display().to_string(),
            bytes,
            fnv1a64: format!("{hash:016x}"),
        })
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash ^= b as u64;
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

/// `build.json`: the key and what the build measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BuildRecord {
    pub key: BuildKey,
    pub stats: BuildStats,
    /// Seconds since the Unix epoch when the build finished.
    pub built_at_unix: u64,
}

/// One engine's place in the working directory.
#[derive(Debug, Clone)]
pub struct Slot {
    root: PathBuf,
}

impl Slot {
    pub fn new(workdir: &Path, analysis: Analysis, peer: Peer, engine: Engine) -> Self {
        Slot {
            root: workdir.join(analysis.dir_name(peer)).join(engine.name()),
        }
    }

    pub fn index_dir(&self) -> PathBuf {
        self.root.join("index")
    }

    fn record_path(&self) -> PathBuf {
        self.root.join("build.json")
    }

    /// Where a build in progress goes before it is moved into place.
    pub fn staging_dir(&self) -> PathBuf {
        self.root.join("index.building")
    }

    /// The record of a reusable index for `key`, if there is one.
    pub fn reusable(&self, key: &BuildKey) -> Option<BuildRecord> {
        let text = std::fs::read_to_string(self.record_path()).ok()?;
        let record: BuildRecord = serde_json::from_str(&text).ok()?;
        (record.key == *key && self.index_dir().is_dir()).then_some(record)
    }

    /// Clears the slot for a new build: the old record first, so that an interrupted
    /// build is never mistaken for a complete one.
    pub fn clear(&self) -> anyhow::Result<()> {
        for path in [self.record_path()] {
            if path.exists() {
                std::fs::remove_file(&path)
                    .with_context(|| format!("removing {}", path.display()))?;
            }
        }
        for dir in [self.index_dir(), self.staging_dir()] {
            if dir.exists() {
                std::fs::remove_dir_all(&dir)
                    .with_context(|| format!("removing {}", dir.display()))?;
            }
        }
        std::fs::create_dir_all(&self.root)
            .with_context(|| format!("creating {}", self.root.display()))
    }

    /// Moves a finished build into place and writes its record.
    pub fn commit(&self, record: &BuildRecord) -> anyhow::Result<()> {
        std::fs::rename(self.staging_dir(), self.index_dir())
            .with_context(|| format!("moving the new index into {}", self.index_dir().display()))?;
        let json = serde_json::to_string_pretty(record)?;
        std::fs::write(self.record_path(), json)
            .with_context(|| format!("writing {}", self.record_path().display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_published_test_vectors() {
        assert_eq!(fnv1a(FNV_OFFSET, b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(FNV_OFFSET, b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(FNV_OFFSET, b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn heddles_native_index_against_lucene_is_not_its_native_index_against_tantivy() {
        let corpus = CorpusFingerprint {
            path: "/c/corpus.jsonl".into(),
            bytes: 1,
            fnv1a64: "0".into(),
        };
        let key = |analysis, peer| {
            BuildKey::new(
                Engine::Heddle,
                corpus.clone(),
                BuildOptions::new(analysis, peer, 2, 0, 0),
            )
        };
        // Matched: the one index both comparisons use.
        assert_eq!(
            key(Analysis::Matched, Peer::Tantivy),
            key(Analysis::Matched, Peer::Lucene)
        );
        assert_ne!(
            key(Analysis::Native, Peer::Tantivy),
            key(Analysis::Native, Peer::Lucene)
        );
        assert_eq!(
            key(Analysis::Native, Peer::Lucene).options.heddle_analyzer,
            "lucene-english"
        );
        let dir = Path::new("/w");
        let slot = |analysis, peer| Slot::new(dir, analysis, peer, Engine::Heddle).index_dir();
        assert_eq!(
            slot(Analysis::Matched, Peer::Tantivy),
            slot(Analysis::Matched, Peer::Lucene)
        );
        assert_ne!(
            slot(Analysis::Native, Peer::Tantivy),
            slot(Analysis::Native, Peer::Lucene)
        );
        // A record from before the analyzer was kept in the key was built with
        // `english`: it is still reused.
        let mut v = serde_json::to_value(key(Analysis::Matched, Peer::Tantivy)).unwrap();
        v["options"]
            .as_object_mut()
            .unwrap()
            .remove("heddle_analyzer");
        let old: BuildKey = serde_json::from_value(v).unwrap();
        assert_eq!(old, key(Analysis::Matched, Peer::Tantivy));
    }

    #[test]
    fn a_changed_corpus_or_setting_is_not_reused() {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("corpus.jsonl");
        std::fs::write(&corpus, "{\"_id\":\"1\",\"text\":\"a\"}\n").unwrap();
        let options = BuildOptions::new(Analysis::Matched, Peer::Tantivy, 2, 1, 64 << 20);
        let key = BuildKey::new(
            Engine::Heddle,
            CorpusFingerprint::of(&corpus).unwrap(),
            options.clone(),
        );
        let slot = Slot::new(dir.path(), Analysis::Matched, Peer::Tantivy, Engine::Heddle);
        slot.clear().unwrap();
        assert!(slot.reusable(&key).is_none(), "nothing built yet");
        std::fs::create_dir_all(slot.staging_dir()).unwrap();
        let stats = BuildStats {
            engine: Engine::Heddle,
            docs: 1,
            seconds: 0.1,
            docs_per_sec: 10.0,
            bytes: 1,
            segments: 1,
            phases: Vec::new(),
            peak_rss_kib: None,
            pre_merge_peak_rss_kib: None,
            threads: 2,
            memory_bytes: Some(0),
            segment_target: Some(0),
        };
        slot.commit(&BuildRecord {
            key: key.clone(),
            stats,
            built_at_unix: 0,
        })
        .unwrap();
        assert!(slot.reusable(&key).is_some());

        let more_threads = BuildKey::new(
            Engine::Heddle,
            key.corpus.clone(),
            BuildOptions {
                threads: 1,
                ..options
            },
        );
        assert!(slot.reusable(&more_threads).is_none());

        std::fs::write(&corpus, "{\"_id\":\"1\",\"text\":\"b\"}\n").unwrap();
        let changed = BuildKey::new(
            Engine::Heddle,
            CorpusFingerprint::of(&corpus).unwrap(),
            key.options.clone(),
        );
        assert_eq!(changed.corpus.bytes, key.corpus.bytes, "same size");
        assert!(slot.reusable(&changed).is_none(), "same size, other bytes");
    }
}
