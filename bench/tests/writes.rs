//! `heddle-bench bench --writes` end to end on the fixture: both engines' indexes copied,
//! written to by the instrument's writer thread, every commit visible to the committing
//! thread when it returns, and neither source index changed.

mod common;

use std::process::Command;

use heddle_eval::bench::writes::read_json;

#[test]
fn both_engines_commit_visibly_on_copies_and_leave_their_sources_alone() {
    let dir = tempfile::tempdir().unwrap();
    common::write_fixture(&dir.path().join("data"), 600, 20, 5, true);
    let json = dir.path().join("out/writes.json");
    std::fs::create_dir(dir.path().join("out")).unwrap(); // outputs' directories are never made
    let scratch = dir.path().join("scratch");
    let out = Command::new(env!("CARGO_BIN_EXE_heddle-bench"))
        .args([
            "bench",
            "--writes",
            "--corpus",
            dir.path().join("data").to_str().unwrap(),
            "--queries",
            dir.path().join("data/queries.jsonl").to_str().unwrap(),
            "--workdir",
            dir.path().join("work").to_str().unwrap(),
            "--rate",
            "200",
            "--samples",
            "300",
            "--min-duration",
            "0",
            "--inflight",
            "1000",
            "--warmup",
            "10",
            "--write-docs",
            "50",
            "--commit-every",
            "0.3",
            "--commit-threads",
            "1",
            "--scratch",
            scratch.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "--svg",
            dir.path().join("out/writes.svg").to_str().unwrap(),
            "--html",
            dir.path().join("out/writes.html").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.matches("byte-identical").count(), 2, "{stdout}");

    let report = read_json(&json).unwrap();
    assert_eq!(report.sources.len(), 2);
    assert!(report.sources.iter().all(|s| s.identical()));
    let engines: Vec<&str> = report.trials.iter().map(|t| t.engine.as_str()).collect();
    assert_eq!(engines, ["heddle", "tantivy"]);
    for t in &report.trials {
        assert!(t.valid, "{}: {:?}", t.engine, t.invalid_reasons);
        assert!(!t.run.commits.is_empty());
        assert!(
            t.run
                .commits
                .iter()
                .all(|c| c.visible && c.visible_hits == 50)
        );
    }
    let phases: Vec<&str> = report.trials[1].run.commits[0]
        .phases
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(phases, ["add", "prepare", "commit", "reload"]);
    assert_eq!(report.trials[1].run.commits[0].exclusive_ns, None);
    assert!(report.trials[0].run.commits[0].exclusive_ns.is_some());
    // One panel per trial, a band per phase of every commit, in the SVG and the page.
    let phases: usize = report
        .trials
        .iter()
        .flat_map(|t| &t.run.commits)
        .map(|c| c.phases.len())
        .sum();
    let svg = std::fs::read_to_string(dir.path().join("out/writes.svg")).unwrap();
    assert_eq!(svg.matches("class=\"trial\"").count(), 2);
    assert_eq!(svg.matches("class=\"phase\"").count(), phases);
    let page = std::fs::read_to_string(dir.path().join("out/writes.html")).unwrap();
    assert_eq!(page.matches("class=\"phase\"").count(), phases);
    assert!(page.contains("<section id=\"summary\">") && page.contains("tantivy"));
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0);
}
