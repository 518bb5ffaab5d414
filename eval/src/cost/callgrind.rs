//! Running a build's query loop under callgrind, and reading what callgrind wrote.
//!
//! The loop's one measured function is [`MEASURED`]: callgrind collects only inside it
//! (`--toggle-collect`) and writes a part after each call (`--dump-after`), all parts in
//! one file (`--combine-dumps`). Part `i` is then query `i`'s cost, and the last part,
//! written at program termination, holds whatever was collected outside the function
//! (nothing, unless the toggle failed to match). The caches simulated are fixed, not
//! the host's, so that a miss count means the same on any machine.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail, ensure};

/// The symbol callgrind toggles collection on: the probe's one measured function.
pub const MEASURED: &str = "heddle_cost_query";

/// The simulated caches, `size,associativity,line`: a common x86 L1 and an 8 MiB last
/// level. Fixed (callgrind would otherwise read the host's, and a VM reports odd ones:
/// this project's said a 256 MiB direct-mapped LL), so that miss counts compare across
/// machines.
pub const I1: &str = "32768,8,64";
pub const D1: &str = "32768,8,64";
pub const LL: &str = "8388608,16,64";

/// The valgrind to use: `explicit`, else `valgrind` on the PATH.
pub fn find_valgrind(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(p) = explicit {
        ensure!(p.is_file(), "--valgrind {}: no such file", p.display());
        return Ok(p.to_path_buf());
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("valgrind"))
        .find(|p| p.is_file())
        .context(
            "valgrind is not installed (Debian: `apt-get install valgrind`, or `make cost` \
             installs it); `heddle-eval cost` counts instructions under its callgrind",
        )
}

/// `valgrind --version`, e.g. `valgrind-3.19.0`.
pub fn version(valgrind: &Path) -> anyhow::Result<String> {
    let out = Command::new(valgrind)
        .arg("--version")
        .output()
        .with_context(|| format!("running {}", valgrind.display()))?;
    ensure!(
        out.status.success(),
        "{} --version failed",
        valgrind.display()
    );
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Valgrind's own arguments for the probe: collection only inside [`MEASURED`], a part
/// per call, the fixed caches simulated, output to `out`.
pub fn valgrind_args(out: &Path) -> Vec<String> {
    vec![
        "--tool=callgrind".into(),
        format!("--toggle-collect={MEASURED}"),
        format!("--dump-after={MEASURED}"),
        "--combine-dumps=yes".into(),
        "--collect-atstart=no".into(),
        "--cache-sim=yes".into(),
        format!("--I1={I1}"),
        format!("--D1={D1}"),
        format!("--LL={LL}"),
        "--dump-instr=no".into(),
        "--dump-line=no".into(),
        format!("--callgrind-out-file={}", out.display()),
    ]
}

/// Runs `binary probe_args…` under callgrind, its log in `log`; returns the output file.
pub fn run(
    valgrind: &Path,
    binary: &Path,
    probe_args: &[String],
    out: &Path,
    log: &Path,
) -> anyhow::Result<()> {
    let status = Command::new(valgrind)
        .args(valgrind_args(out))
        .arg(binary)
        .args(probe_args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?)
        .status()
        .with_context(|| format!("running {}", valgrind.display()))?;
    if !status.success() {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(8).collect();
        bail!(
            "{} under callgrind failed ({status}); its last lines:\n{}",
            binary.display(),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    Ok(())
}

/// One part of a callgrind output file: why it was written and its totals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The part's `desc: Trigger:` text, e.g. `--dump-after=heddle_cost_query`.
    pub trigger: String,
    /// Totals per event, in the order of [`Parsed::events`].
    pub totals: Vec<u64>,
}

/// A whole callgrind output file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// Event names, e.g. `Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw`.
    pub events: Vec<String>,
    pub parts: Vec<Part>,
}

impl Parsed {
    /// The index of event `name`, or an error naming the events there are.
    pub fn event(&self, name: &str) -> anyhow::Result<usize> {
        self.events.iter().position(|e| e == name).with_context(|| {
            format!(
                "the callgrind output has no {name} event (it has {})",
                self.events.join(" ")
            )
        })
    }
}

/// Parses callgrind's output format (the header lines that matter here; cost lines are
/// skipped: each part's `totals:` or `summary:` line is its whole cost). `source` names
/// the file in errors.
pub fn parse(text: &str, source: &str) -> anyhow::Result<Parsed> {
    let mut events: Option<Vec<String>> = None;
    let mut parts: Vec<Part> = Vec::new();
    // The part being read: its trigger and totals so far.
    let mut current: Option<(String, Option<Vec<u64>>)> = None;
    let mut seen_any = false;
    let finish = |current: Option<(String, Option<Vec<u64>>)>,
                  parts: &mut Vec<Part>,
                  line: usize|
     -> anyhow::Result<()> {
        if let Some((trigger, totals)) = current {
            let totals = totals.with_context(|| {
                format!("{source}: the part ending before line {line} has no totals")
            })?;
            parts.push(Part { trigger, totals });
        }
        Ok(())
    };
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if let Some(v) = line.strip_prefix("version:") {
            ensure!(
                v.trim() == "1",
                "{source}:{n}: callgrind format version {} (this reads 1)",
                v.trim()
            );
            seen_any = true;
        } else if let Some(p) = line.strip_prefix("part:") {
            finish(current.take(), &mut parts, n)?;
            p.trim()
                .parse::<u64>()
                .with_context(|| format!("{source}:{n}: `part:` is not a number: {line:?}"))?;
            current = Some((String::new(), None));
        } else if let Some(t) = line.strip_prefix("desc: Trigger:") {
            if current.is_none() {
                current = Some((String::new(), None)); // a file of one part has no `part:`
            }
            if let Some(c) = current.as_mut() {
                c.0 = t.trim().to_string();
            }
        } else if let Some(e) = line.strip_prefix("events:") {
            let names: Vec<String> = e.split_whitespace().map(String::from).collect();
            ensure!(!names.is_empty(), "{source}:{n}: `events:` names no event");
            match &events {
                Some(known) if *known != names => {
                    bail!("{source}:{n}: the events change between parts ({line:?})")
                }
                _ => events = Some(names),
            }
        } else if let Some(t) = line
            .strip_prefix("totals:")
            .or_else(|| line.strip_prefix("summary:"))
        {
            let names = events
                .as_ref()
                .with_context(|| format!("{source}:{n}: totals before any `events:` line"))?;
            let mut values = t
                .split_whitespace()
                .map(|x| x.parse::<u64>())
                .collect::<Result<Vec<u64>, _>>()
                .with_context(|| format!("{source}:{n}: totals that are not counts: {line:?}"))?;
            ensure!(
                values.len() <= names.len(),
                "{source}:{n}: {} totals for {} events",
                values.len(),
                names.len()
            );
            // Callgrind leaves out trailing zeros.
            values.resize(names.len(), 0);
            if current.is_none() {
                current = Some((String::new(), None));
            }
            if let Some(c) = current.as_mut() {
                // `summary:` and `totals:` agree; keep the first.
                c.1.get_or_insert(values);
            }
        }
    }
    ensure!(
        seen_any,
        "{source}: not a callgrind output file (no `version:` line)"
    );
    finish(current.take(), &mut parts, text.lines().count() + 1)?;
    let events = events.with_context(|| format!("{source}: no `events:` line"))?;
    Ok(Parsed { events, parts })
}

/// The parts written after [`MEASURED`] returned, in order — one per measured query —
/// and the cost collected outside it (the termination part's), which should be none.
pub fn measured_parts(p: &Parsed, source: &str) -> anyhow::Result<(Vec<Vec<u64>>, Vec<u64>)> {
    let after = format!("--dump-after={MEASURED}");
    let mut measured = Vec::new();
    let mut outside = vec![0u64; p.events.len()];
    for (i, part) in p.parts.iter().enumerate() {
        if part.trigger == after {
            measured.push(part.totals.clone());
        } else if part.trigger.starts_with("Program termination") {
            for (o, v) in outside.iter_mut().zip(&part.totals) {
                *o += v;
            }
        } else {
            bail!(
                "{source}: part {} was written for {:?}, not after {MEASURED}",
                i + 1,
                part.trigger
            );
        }
    }
    Ok((measured, outside))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written by callgrind 3.19 for a C program calling its `work` three times, the
    /// way the probe is run (`--toggle-collect=work --dump-after=work
    /// --combine-dumps=yes --cache-sim=yes`), cost lines shortened.
    const SMALL: &str = "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 8089\ncmd:  ./t\npart: 1\n\n\ndesc: I1 cache: 32768 B, 64 B, 8-way associative\ndesc: Timerange: Basic block 0 - 28734\ndesc: Trigger: --dump-after=work\n\npositions: line\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\nsummary: 7007 1\n\n\nob=(1) t\nfl=(1) t.c\nfn=(1) work\n0 7007 1\n\ntotals: 7007 1\n\npart: 2\n\ndesc: Trigger: --dump-after=work\n\npositions: line\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\nsummary: 14007 1 0 2 0 0 1\n\nfn=(1)\n0 14007 1\n\ntotals: 14007 1 0 2 0 0 1\n\npart: 3\n\ndesc: Trigger: Program termination\n\npositions: line\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\nsummary: 0\n\n\ntotals: 0\n";

    #[test]
    fn parts_are_read_in_order_with_trailing_zeros_restored() {
        let p = parse(SMALL, "t").unwrap();
        assert_eq!(p.events.len(), 9);
        assert_eq!(p.parts.len(), 3);
        assert_eq!(p.parts[0].totals, vec![7007, 1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(p.parts[1].totals, vec![14007, 1, 0, 2, 0, 0, 1, 0, 0]);
        assert_eq!(p.parts[2].trigger, "Program termination");
        assert_eq!(p.event("ILmr").unwrap(), 6);
        assert!(p.event("Bc").is_err());
    }

    #[test]
    fn only_dumps_after_the_measured_function_count_as_queries() {
        let text = SMALL.replace("--dump-after=work", &format!("--dump-after={MEASURED}"));
        let p = parse(&text, "t").unwrap();
        let (measured, outside) = measured_parts(&p, "t").unwrap();
        assert_eq!(measured.len(), 2);
        assert_eq!(measured[1][0], 14007);
        assert!(outside.iter().all(|&v| v == 0));
        // A part written for another function is refused, not counted as a query.
        let p = parse(SMALL, "t").unwrap();
        let e = measured_parts(&p, "t").unwrap_err().to_string();
        assert!(
            e.contains("part 1") && e.contains("--dump-after=work"),
            "{e}"
        );
    }

    #[test]
    fn malformed_files_name_the_line() {
        let e = parse("version: 1\nevents: Ir\ntotals: 12 x\n", "f.cg")
            .unwrap_err()
            .to_string();
        assert!(e.contains("f.cg:3"), "{e}");
        let e = parse("version: 1\nevents: Ir\ntotals: 1 2\n", "f.cg")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("f.cg:3") && e.contains("2 totals for 1 events"),
            "{e}"
        );
        assert!(
            parse("hello\n", "f.cg")
                .unwrap_err()
                .to_string()
                .contains("not a callgrind")
        );
        let e = parse(
            "version: 1\nevents: Ir\npart: 1\npart: 2\ntotals: 3\n",
            "f.cg",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("no totals"), "{e}");
        let e = parse("version: 2\n", "f.cg").unwrap_err().to_string();
        assert!(e.contains("f.cg:1"), "{e}");
    }
}
