//! The regression policy: per kind of figure, the relative change that counts as a
//! regression (or an improvement). The project's own is `eval/regression-policy.json`,
//! built into the binary; `--policy FILE` reads another.
//!
//! ```json
//! { "default": 0.10, "thresholds": { "p50": 0.05, "p99": 0.10, "capacity": 0.05 } }
//! ```
//!
//! A threshold is checked against the measured noise floor before any verdict: one at
//! or below the floor makes the figure ungateable (docs/PERF.md, rule 9).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, ensure};
use serde::{Deserialize, Serialize};

/// The project's policy, as checked in.
pub const PROJECT_POLICY: &str = include_str!("../../regression-policy.json");

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    /// Where it came from: a file, or `built in`.
    #[serde(default)]
    pub source: String,
    /// For a kind the table does not name.
    pub default: f64,
    /// Kind (`p50`, `p90`, `p99`, `capacity`, `commit`, `exclusive`) → threshold, as a
    /// fraction (0.05 = 5%). A key naming one figure exactly (`rung 1 p99`) wins.
    #[serde(default)]
    pub thresholds: BTreeMap<String, f64>,
}

impl Policy {
    pub fn parse(text: &str, source: &str) -> anyhow::Result<Policy> {
        let mut p: Policy =
            serde_json::from_str(text).with_context(|| format!("reading the policy {source}"))?;
        p.source = source.to_string();
        for (k, &v) in std::iter::once((&"default".to_string(), &p.default)).chain(&p.thresholds) {
            ensure!(
                v.is_finite() && v > 0.0,
                "the policy {source}: threshold {k} = {v} is not a positive fraction"
            );
        }
        Ok(p)
    }

    pub fn project() -> Policy {
        Policy::parse(PROJECT_POLICY, "built in (eval/regression-policy.json)")
            .expect("the checked-in policy parses (a unit test reads it)")
    }

    pub fn read(path: &Path) -> anyhow::Result<Policy> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the policy {}", path.display()))?;
        Policy::parse(&text, &path.display().to_string())
    }

    /// The threshold for a figure: its own key, else its kind, else the default.
    pub fn threshold(&self, key: &str, kind: &str) -> f64 {
        self.thresholds
            .get(key)
            .or_else(|| self.thresholds.get(kind))
            .copied()
            .unwrap_or(self.default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_projects_policy_parses_and_names_every_kind() {
        let p = Policy::project();
        for kind in [
            "p50",
            "p90",
            "p99",
            "capacity",
            "commit",
            "exclusive",
            "cpu-p50",
            "cpu-p90",
            "cpu-p99",
            "instructions",
            "cache-misses",
        ] {
            assert!(p.thresholds.contains_key(kind), "{kind}");
        }
    }

    #[test]
    fn a_figures_own_key_wins_over_its_kind() {
        let p = Policy::parse(
            r#"{"default": 0.2, "thresholds": {"p99": 0.1, "rung 1 p99": 0.3}}"#,
            "t",
        )
        .unwrap();
        assert_eq!(p.threshold("rung 1 p99", "p99"), 0.3);
        assert_eq!(p.threshold("rung 2 p99", "p99"), 0.1);
        assert_eq!(p.threshold("capacity", "capacity"), 0.2);
        assert!(Policy::parse(r#"{"default": 0}"#, "t").is_err());
    }
}
