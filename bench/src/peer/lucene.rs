//! Lucene's side: its index built by the Java program in `bench/lucene/HeddleLucene.java`
//! (run with `java -cp <the fat jar>:<its classes>`), and the command that starts it
//! serving.
//!
//! Matched analysis: the corpus is analysed once by heddle's analyzer into a file of
//! pre-analysed documents (`id TAB title TAB tokens`, title and text tokens together as
//! heddle's flat field); Lucene indexes that with a whitespace analyzer, so both engines
//! hold the same terms with the same frequencies and lengths. Native analysis: Lucene
//! reads corpus.jsonl itself and runs its `EnglishAnalyzer` over title + " " + text, and
//! over each query's text.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail, ensure};
use clap::Args;
use heddle::Analyzer;
use serde::{Deserialize, Serialize};

use crate::analysis::{Analysis, Peer};
use crate::protocol::escape;
use crate::workdir::CorpusFingerprint;

/// How the JVM is found and started.
#[derive(Debug, Clone, Args)]
pub struct JavaArgs {
    /// The java launcher.
    #[arg(long, value_name = "PATH", default_value = "java")]
    pub java: PathBuf,
    /// The Lucene classpath: the Anserini fat jar (Lucene 9.9.1 inside) and the directory
    /// HeddleLucene.class was compiled to, `:`-separated (`make compare-lucene` sets it).
    #[arg(long, value_name = "CP")]
    pub lucene_classpath: String,
    /// JVM options, space-separated (the JVM's defaults when empty: G1, heap a quarter of
    /// the machine's memory).
    #[arg(
        long,
        value_name = "OPTS",
        default_value = "",
        allow_hyphen_values = true
    )]
    pub jvm_opts: String,
}

impl JavaArgs {
    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.java);
        cmd.args(self.jvm_opts.split_whitespace())
            .arg("-cp")
            .arg(&self.lucene_classpath)
            .arg("HeddleLucene");
        cmd
    }

    /// The command that serves `index` over the protocol: in matched analysis a query
    /// arrives as heddle's tokens, in native analysis as its text, which the child
    /// analyses with `EnglishAnalyzer`.
    pub fn serve_command(
        &self,
        index: &Path,
        analysis: Analysis,
        threads: usize,
        k1: f64,
        b: f64,
    ) -> Command {
        let mut cmd = self.command();
        cmd.arg("serve")
            .arg("--index")
            .arg(index)
            .arg("--analysis")
            .arg(analysis.name())
            .arg("--threads")
            .arg(threads.to_string())
            .arg("--k1")
            .arg(k1.to_string())
            .arg("--b")
            .arg(b.to_string());
        cmd
    }
}

/// What Lucene's build reports, and what it was built from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LuceneBuild {
    pub docs: u64,
    /// Lucene's own time: reading the pre-analysed file, indexing, commit, merges.
    pub seconds: f64,
    pub bytes: u64,
    pub segments: usize,
    pub flushed_segments: usize,
    pub add_seconds: f64,
    pub commit_seconds: f64,
    pub merge_seconds: f64,
    pub lucene: String,
    /// heddle's analysis of the corpus into the pre-analysed file (one thread), done
    /// before Lucene's build; absent when the file was reused, and in native analysis
    /// (Lucene's own analysis is then inside `seconds`).
    #[serde(default)]
    pub analysis_seconds: Option<f64>,
    /// Peak RSS of the JVM that built it, KiB.
    #[serde(default)]
    pub peak_rss_kib: Option<u64>,
}

#[cfg(test)]
impl LuceneBuild {
    /// A build record of one document, for tests of what is kept and printed.
    pub(crate) fn one_document() -> Self {
        LuceneBuild {
            docs: 1,
            seconds: 1.0,
            bytes: 1,
            segments: 1,
            flushed_segments: 1,
            add_seconds: 1.0,
            commit_seconds: 0.0,
            merge_seconds: 0.0,
            lucene: "9.9.1".into(),
            analysis_seconds: None,
            peak_rss_kib: None,
        }
    }
}

/// What a Lucene index was built from and with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LuceneKey {
    /// Whose analysis made its terms (records written before native mode were matched).
    #[serde(default)]
    pub analysis: Analysis,
    pub corpus: CorpusFingerprint,
    pub threads: usize,
    pub ram_mb: usize,
    pub segments: usize,
    pub k1: f64,
    pub b: f64,
    pub classpath: String,
    pub heddle_bench_version: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct LuceneRecord {
    key: LuceneKey,
    build: LuceneBuild,
    built_at_unix: u64,
}

/// `WORKDIR/matched/lucene/` (the index, its record, the pre-analysed documents) or
/// `WORKDIR/native-lucene/lucene/` (the index and its record).
pub struct LuceneSlot {
    root: PathBuf,
}

impl LuceneSlot {
    pub fn new(workdir: &Path, analysis: Analysis) -> Self {
        LuceneSlot {
            root: workdir.join(analysis.dir_name(Peer::Lucene)).join("lucene"),
        }
    }

    pub fn index_dir(&self) -> PathBuf {
        self.root.join("index")
    }

    fn record(&self) -> PathBuf {
        self.root.join("build.json")
    }

    pub fn docs_file(&self) -> PathBuf {
        self.root.join("docs.tsv")
    }

    /// The record of a reusable index for `key`.
    pub fn reusable(&self, key: &LuceneKey) -> Option<LuceneBuild> {
        let text = std::fs::read_to_string(self.record()).ok()?;
        let r: LuceneRecord = serde_json::from_str(&text).ok()?;
        (r.key == *key && self.index_dir().is_dir()).then_some(r.build)
    }

    /// Builds the index (in matched analysis, the pre-analysed file first if it is not
    /// there for this corpus), and records it.
    pub fn build(
        &self,
        java: &JavaArgs,
        corpus: &Path,
        analyzer: &Analyzer,
        key: &LuceneKey,
    ) -> anyhow::Result<LuceneBuild> {
        let _ = std::fs::remove_file(self.record());
        if self.index_dir().exists() {
            std::fs::remove_dir_all(self.index_dir())?;
        }
        std::fs::create_dir_all(&self.root)
            .with_context(|| format!("creating {}", self.root.display()))?;
        let mut cmd = java.command();
        cmd.arg("build")
            .arg("--index")
            .arg(self.index_dir())
            .arg("--analysis")
            .arg(key.analysis.name());
        let analysis_seconds = match key.analysis {
            Analysis::Matched => {
                let seconds = self.pre_analyse(corpus, analyzer, &key.corpus)?;
                cmd.arg("--docs").arg(self.docs_file());
                seconds
            }
            Analysis::Native => {
                cmd.arg("--corpus").arg(corpus);
                None
            }
        };
        cmd.arg("--threads")
            .arg(key.threads.to_string())
            .arg("--k1")
            .arg(key.k1.to_string())
            .arg("--b")
            .arg(key.b.to_string())
            .arg("--ram-mb")
            .arg(key.ram_mb.to_string())
            .arg("--segments")
            .arg(key.segments.to_string());
        eprintln!("lucene: building {}", self.index_dir().display());
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| {
                format!("starting {cmd:?} (is Java installed? make compare-lucene installs it)")
            })?;
        let pid = child.id();
        // The JVM's peak, read while it runs (its /proc entry goes when it exits).
        let peak = std::thread::spawn(move || {
            let mut peak = None;
            while let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
                if let Some(v) = super::backend::status_kib(&s, "VmHWM:") {
                    peak = Some(v);
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            peak
        });
        let output = child.wait_with_output()?;
        let peak_rss_kib = peak.join().ok().flatten();
        if !output.status.success() {
            bail!(
                "Lucene's build failed ({}); its stderr is above",
                output.status
            );
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        let line = stdout
            .lines()
            .rev()
            .find(|l| l.starts_with('{'))
            .context("Lucene's build printed no stats")?;
        let mut build: LuceneBuild =
            serde_json::from_str(line).with_context(|| format!("reading {line:?}"))?;
        build.analysis_seconds = analysis_seconds;
        build.peak_rss_kib = peak_rss_kib;
        let record = LuceneRecord {
            key: key.clone(),
            build: build.clone(),
            built_at_unix: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        };
        std::fs::write(self.record(), serde_json::to_string_pretty(&record)?)?;
        Ok(build)
    }

    /// Writes the pre-analysed file unless it is there for this corpus; its time, if
    /// written.
    fn pre_analyse(
        &self,
        corpus: &Path,
        analyzer: &Analyzer,
        fingerprint: &CorpusFingerprint,
    ) -> anyhow::Result<Option<f64>> {
        let stamp = self.root.join("docs.fingerprint");
        let want = serde_json::to_string(fingerprint)?;
        if std::fs::read_to_string(&stamp).ok().as_deref() == Some(want.as_str())
            && self.docs_file().is_file()
        {
            return Ok(None);
        }
        let _ = std::fs::remove_file(&stamp);
        let t = Instant::now();
        let n = write_pre_analysed(corpus, analyzer, &self.docs_file())?;
        let secs = t.elapsed().as_secs_f64();
        eprintln!("lucene: {n} documents analysed by heddle's analyzer in {secs:.1} s");
        std::fs::write(&stamp, want)?;
        Ok(Some(secs))
    }
}

/// One pre-analysed document line: id and title escaped, then heddle's tokens of title
/// and text, space-separated (a token holds no whitespace: heddle's tokenizer splits on
/// it).
pub fn pre_analysed_line(analyzer: &Analyzer, id: &str, title: &str, text: &str) -> String {
    let mut tokens = analyzer.tokens(title);
    tokens.extend(analyzer.tokens(text));
    format!("{}\t{}\t{}", escape(id), escape(title), tokens.join(" "))
}

/// Writes every document of `corpus` pre-analysed to `out`; returns how many.
pub fn write_pre_analysed(corpus: &Path, analyzer: &Analyzer, out: &Path) -> anyhow::Result<u64> {
    let tmp = out.with_extension("tmp");
    let mut w = BufWriter::new(
        std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?,
    );
    let mut reader = heddle_corpus::beir::open_corpus(corpus)?;
    let path = reader.path().to_path_buf();
    let mut n = 0u64;
    while let Some(doc) = reader.next() {
        let doc = doc.with_context(|| format!("{}:{}", path.display(), reader.line()))?;
        writeln!(
            w,
            "{}",
            pre_analysed_line(analyzer, &doc.id, &doc.title, &doc.text)
        )?;
        n += 1;
    }
    w.flush()?;
    drop(w);
    std::fs::rename(&tmp, out)?;
    ensure!(n > 0, "{}: no documents", corpus.display());
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use heddle::AnalyzerConfig;

    fn key(analysis: Analysis) -> LuceneKey {
        LuceneKey {
            analysis,
            corpus: CorpusFingerprint {
                path: "/c/corpus.jsonl".into(),
                bytes: 10,
                fnv1a64: "0".into(),
            },
            threads: 2,
            ram_mb: 64,
            segments: 1,
            k1: 0.9,
            b: 0.4,
            classpath: "x.jar:classes".into(),
            heddle_bench_version: "0".into(),
        }
    }

    #[test]
    fn matched_and_native_lucene_indexes_live_apart_and_are_never_reused_for_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let matched = LuceneSlot::new(dir.path(), Analysis::Matched);
        let native = LuceneSlot::new(dir.path(), Analysis::Native);
        assert_eq!(matched.index_dir(), dir.path().join("matched/lucene/index"));
        assert_eq!(
            native.index_dir(),
            dir.path().join("native-lucene/lucene/index")
        );
        // A matched record in the native slot (as if the folders were mixed up) is still
        // not reusable for a native build: the key names the analysis.
        std::fs::create_dir_all(native.index_dir()).unwrap();
        let build = LuceneBuild::one_document();
        let record = LuceneRecord {
            key: key(Analysis::Matched),
            build: build.clone(),
            built_at_unix: 0,
        };
        std::fs::write(native.record(), serde_json::to_string(&record).unwrap()).unwrap();
        assert!(native.reusable(&key(Analysis::Native)).is_none());
        assert_eq!(native.reusable(&key(Analysis::Matched)), Some(build));
    }

    #[test]
    fn a_record_from_before_native_mode_reads_as_matched() {
        let mut v = serde_json::to_value(key(Analysis::Matched)).unwrap();
        v.as_object_mut().unwrap().remove("analysis");
        let old: LuceneKey = serde_json::from_value(v).unwrap();
        assert_eq!(old, key(Analysis::Matched));
    }

    #[test]
    fn the_serving_jvm_is_told_the_analysis() {
        let java = JavaArgs {
            java: "java".into(),
            lucene_classpath: "x.jar".into(),
            jvm_opts: "-Xmx1g".into(),
        };
        for analysis in [Analysis::Matched, Analysis::Native] {
            let cmd = java.serve_command(Path::new("/i"), analysis, 3, 0.9, 0.4);
            let args: Vec<String> = cmd
                .get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let at = args.iter().position(|a| a == "--analysis").unwrap();
            assert_eq!(args[at + 1], analysis.name(), "{args:?}");
            assert_eq!(&args[..4], ["-Xmx1g", "-cp", "x.jar", "HeddleLucene"]);
        }
    }

    #[test]
    fn a_pre_analysed_line_holds_heddles_tokens_of_title_and_text() {
        let a = Analyzer::new(AnalyzerConfig::english());
        let line = pre_analysed_line(&a, "d\t1", "Bats and Viruses", "The viruses of bats.");
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 3, "{line}");
        assert_eq!(f[0], "d\\t1");
        assert_eq!(f[1], "Bats and Viruses");
        let mut want = a.tokens("Bats and Viruses");
        want.extend(a.tokens("The viruses of bats."));
        assert_eq!(f[2].split(' ').collect::<Vec<_>>(), want);
        assert!(
            !want.contains(&"and".to_string()),
            "stop words are heddle's to drop"
        );
    }
}
