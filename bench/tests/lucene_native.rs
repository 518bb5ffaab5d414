//! `heddle-bench lucene --analysis native` against a real Lucene, on the fixture: each
//! engine's own English analysis, the agreement reported and not required, the indexes
//! kept apart from matched mode's.
//!
//! Needs a JDK and the Anserini fat jar (`make lucene-setup` fetches it), so it is
//! ignored by `cargo test` and `make bench-test`; run it with
//! `cargo test --test lucene_native -- --ignored`. Without `javac` or the jar it says so
//! and passes.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The jar `make lucene-setup` keeps, or `HEDDLE_LUCENE_JAR`.
fn lucene_jar() -> Option<PathBuf> {
    let jar = match std::env::var_os("HEDDLE_LUCENE_JAR") {
        Some(j) => PathBuf::from(j),
        None => PathBuf::from(std::env::var_os("HOME")?).join(
            ".cache/heddle/lucene/pyserini-1.6.0/pyserini/resources/jars/anserini-1.7.1-fatjar.jar",
        ),
    };
    jar.is_file().then_some(jar)
}

/// HeddleLucene.class compiled against `jar` into `out`; `None` without a JDK.
fn compile(jar: &Path, out: &Path) -> Option<()> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("lucene/HeddleLucene.java");
    let status = Command::new("javac")
        .args(["--release", "17", "-cp"])
        .arg(jar)
        .arg("-d")
        .arg(out)
        .arg(source)
        .status()
        .ok()?;
    assert!(status.success(), "javac failed on HeddleLucene.java");
    Some(())
}

fn lucene(dir: &Path, classpath: &str, analysis: &str, json: &Path) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_heddle-bench"))
        .arg("lucene")
        .arg("--corpus")
        .arg(dir.join("data"))
        .arg("--queries")
        .arg(dir.join("data/queries.jsonl"))
        .arg("--workdir")
        .arg(dir.join("work"))
        .args(["--lucene-classpath", classpath])
        .args(["--index-threads", "2", "--threads", "2"])
        .args(["--agreement-only", "--analysis", analysis])
        .arg("--compare-json")
        .arg(json)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    (stdout, stderr)
}

#[test]
#[ignore = "needs a JDK and the Lucene jar: cargo test --test lucene_native -- --ignored"]
fn native_analysis_runs_lucenes_english_analyzer_and_reports_without_a_gate() {
    let Some(jar) = lucene_jar() else {
        eprintln!("skipped: no Lucene jar (make lucene-setup, or set HEDDLE_LUCENE_JAR)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let classes = dir.path().join("classes");
    std::fs::create_dir(&classes).unwrap();
    if compile(&jar, &classes).is_none() {
        eprintln!("skipped: no javac");
        return;
    }
    let classpath = format!("{}:{}", jar.display(), classes.display());
    // Long documents too, so that Lucene's one-byte length code parts the engines on
    // some queries, as it does in matched mode.
    common::write_fixture(&dir.path().join("data"), 300, 30, 31, true);

    let json = dir.path().join("native.json");
    let (out, _) = lucene(dir.path(), &classpath, "native", &json);
    assert!(
        out.contains(
            "NATIVE analysis (heddle lucene-english vs Lucene EnglishAnalyzer: different tokens, different answers)"
        ),
        "{out}"
    );
    assert!(out.contains("no threshold"), "{out}");
    let work = dir.path().join("work");
    assert!(work.join("native-lucene/heddle/index").is_dir());
    assert!(work.join("native-lucene/lucene/index").is_dir());
    assert!(
        !work.join("matched").exists(),
        "native built nothing matched"
    );
    let index = heddle::Index::open(work.join("native-lucene/heddle/index")).unwrap();
    assert_eq!(index.analyzer().config().name, "lucene-english");

    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["analysis"], "native");
    assert_eq!(report["protocol_mismatches"], 0);
    // The fixture's plain words stem alike under both analyzers, so the engines score
    // alike, and the reference BM25 over heddle's tokens explains every query that
    // differs by the length code: a Lucene that indexed or queried unanalysed text
    // would be neither.
    let agreement = &report["agreement"];
    let median = agreement["score_diff_median"].as_f64().unwrap();
    assert!(median < 1e-5, "scores differ by {median}:\n{out}");
    assert_eq!(agreement["length_code_checked"], true, "{out}");
    assert!(agreement["length_code"].as_u64().unwrap() > 0, "{out}");
    let explained = agreement["agreeing_explained"].as_f64().unwrap();
    assert!(explained >= 0.95, "explained {explained}:\n{out}");
    assert!(
        out.contains("differ by lucene's one-byte length code alone"),
        "{out}"
    );
    assert!(report["lucene_build"]["analysis_seconds"].is_null());

    // Matched mode in the same working directory builds its own indexes, and its gate
    // still passes.
    let json = dir.path().join("matched.json");
    let (out, _) = lucene(dir.path(), &classpath, "matched", &json);
    assert!(out.contains("PASS"), "{out}");
    assert!(!out.contains("NATIVE"), "{out}");
    assert!(work.join("matched/lucene/index").is_dir());
    let index = heddle::Index::open(work.join("matched/heddle/index")).unwrap();
    assert_eq!(index.analyzer().config().name, "english");
}
