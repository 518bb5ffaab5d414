//! Whether runs compare: which fields of their environments differ, and whether any of
//! those is the CPU, the kernel or the storage — then they do not.

use serde::{Deserialize, Serialize};

use super::Environment;

/// What a field describes. Runs that differ in a CPU, kernel or storage field are not
/// comparable; other differences are printed for the reader to weigh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Group {
    Build,
    Cpu,
    Kernel,
    Storage,
    Other,
}

impl Group {
    pub fn word(self) -> &'static str {
        match self {
            Group::Build => "build",
            Group::Cpu => "cpu",
            Group::Kernel => "kernel",
            Group::Storage => "storage",
            Group::Other => "other",
        }
    }

    /// Differences in this group make runs incomparable.
    pub fn decisive(self) -> bool {
        matches!(self, Group::Cpu | Group::Kernel | Group::Storage)
    }
}

/// One field that does not read the same in every run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    pub field: String,
    pub group: Group,
    /// The field's value in each run, in the order given.
    pub values: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparability {
    pub differences: Vec<Difference>,
    /// No CPU, kernel or storage field differs.
    pub comparable: bool,
}

impl Comparability {
    /// The groups that make the runs incomparable, named for a sentence.
    pub fn reasons(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        for d in self.differences.iter().filter(|d| d.group.decisive()) {
            let name = match d.group {
                Group::Cpu => "CPU",
                Group::Kernel => "kernel",
                _ => "storage",
            };
            if !out.contains(&name) {
                out.push(name);
            }
        }
        out
    }

    /// Lines for a report: each differing field with its values, then the verdict.
    /// `labels` name the runs (`baseline`, `run 2`, …).
    pub fn lines(&self, labels: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        if self.differences.is_empty() {
            out.push("environments: every recorded field is the same".to_string());
            return out;
        }
        out.push("environments differ:".to_string());
        for d in &self.differences {
            let values: Vec<String> = d
                .values
                .iter()
                .zip(
                    labels
                        .iter()
                        .map(String::as_str)
                        .chain(std::iter::repeat("?")),
                )
                .map(|(v, l)| format!("{l} {v}"))
                .collect();
            out.push(format!(
                "  {} ({}): {}",
                d.field,
                d.group.word(),
                values.join("; ")
            ));
        }
        if self.comparable {
            out.push("  same CPU, kernel and storage: comparable".to_string());
        } else {
            out.push(format!(
                "  NOT COMPARABLE: the {} differ{}; their figures are not one machine's",
                self.reasons().join(", "),
                if self.reasons().len() == 1 { "s" } else { "" }
            ));
        }
        out
    }
}

/// Every compared field of `env` with its group, values as text (`unknown` if absent).
/// Times, load averages, free memory and measured costs are left out: they differ
/// between any two runs and are shown in each report instead.
pub fn fields(env: &Environment) -> Vec<(&'static str, Group, String)> {
    fn s<T: ToString>(v: &Option<T>) -> String {
        v.as_ref().map_or("unknown".to_string(), T::to_string)
    }
    let (b, m, st) = (&env.build, &env.machine, &env.storage);
    let d = &st.vm_dirty;
    vec![
        ("heddle version", Group::Build, b.version.clone()),
        ("git commit", Group::Build, s(&b.git_commit)),
        ("git dirty", Group::Build, s(&b.git_dirty)),
        ("build profile", Group::Build, s(&b.profile)),
        ("opt level", Group::Build, s(&b.opt_level)),
        ("rustc", Group::Build, s(&b.rustc)),
        ("target", Group::Build, s(&b.target)),
        ("host", Group::Other, s(&m.host)),
        ("cpu model", Group::Cpu, s(&m.cpu_model)),
        ("logical cores", Group::Cpu, s(&m.logical_cores)),
        ("physical cores", Group::Cpu, s(&m.physical_cores)),
        ("available cores", Group::Cpu, m.available_cores.to_string()),
        ("microcode", Group::Cpu, s(&m.microcode)),
        ("governor", Group::Cpu, s(&m.governor)),
        ("smt", Group::Cpu, s(&m.smt)),
        ("turbo", Group::Cpu, s(&m.turbo)),
        ("hypervisor", Group::Other, s(&m.hypervisor)),
        ("clocksource", Group::Other, s(&m.clocksource)),
        ("kernel", Group::Kernel, s(&m.kernel)),
        ("kernel build", Group::Kernel, s(&m.kernel_version)),
        ("memory", Group::Other, s(&m.memory_total_kib)),
        ("swap", Group::Other, s(&m.swap_total_kib)),
        ("filesystem", Group::Storage, s(&st.fs_type)),
        ("mount source", Group::Storage, s(&st.mount_source)),
        ("mount options", Group::Storage, s(&st.mount_options)),
        ("filesystem options", Group::Storage, s(&st.super_options)),
        ("block device", Group::Storage, s(&st.block_device)),
        ("device model", Group::Storage, s(&st.device_model)),
        ("rotational", Group::Storage, s(&st.rotational)),
        ("io scheduler", Group::Storage, s(&st.scheduler)),
        ("vm.dirty_ratio", Group::Other, s(&d.ratio)),
        (
            "vm.dirty_background_ratio",
            Group::Other,
            s(&d.background_ratio),
        ),
        ("vm.dirty_bytes", Group::Other, s(&d.bytes)),
        (
            "vm.dirty_background_bytes",
            Group::Other,
            s(&d.background_bytes),
        ),
        (
            "vm.dirty_expire_centisecs",
            Group::Other,
            s(&d.expire_centisecs),
        ),
        (
            "vm.dirty_writeback_centisecs",
            Group::Other,
            s(&d.writeback_centisecs),
        ),
    ]
}

/// Which fields differ between the runs' environments.
pub fn compare(envs: &[&Environment]) -> Comparability {
    let all: Vec<_> = envs.iter().map(|e| fields(e)).collect();
    let mut differences = Vec::new();
    if let Some(first) = all.first() {
        for (i, (name, group, value)) in first.iter().enumerate() {
            if all.iter().any(|f| f[i].2 != *value) {
                differences.push(Difference {
                    field: name.to_string(),
                    group: *group,
                    values: all.iter().map(|f| f[i].2.clone()).collect(),
                });
            }
        }
    }
    let comparable = !differences.iter().any(|d| d.group.decisive());
    Comparability {
        differences,
        comparable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Environment {
        let tmp = tempfile::tempdir().unwrap();
        Environment::capture(&tmp.path().join("i"))
    }

    #[test]
    fn the_same_environment_compares() {
        let a = env();
        let c = compare(&[&a, &a.clone()]);
        assert!(c.comparable && c.differences.is_empty());
    }

    #[test]
    fn another_build_is_a_difference_but_still_comparable() {
        let a = env();
        let mut b = a.clone();
        b.build.git_commit = Some("f".repeat(40));
        b.load_start = None; // volatile: never a difference
        let c = compare(&[&a, &b]);
        assert!(c.comparable);
        assert_eq!(c.differences.len(), 1);
        assert_eq!(c.differences[0].field, "git commit");
    }

    #[test]
    fn another_cpu_kernel_or_disk_is_not_comparable_and_says_which() {
        let a = env();
        let mut b = a.clone();
        b.machine.cpu_model = Some("Other CPU".to_string());
        b.machine.kernel = None;
        b.storage.block_device = Some("nvme9n1".to_string());
        let c = compare(&[&a, &b]);
        assert!(!c.comparable);
        assert_eq!(c.reasons(), vec!["CPU", "kernel", "storage"]);
        let kernel = c.differences.iter().find(|d| d.field == "kernel").unwrap();
        assert_eq!(kernel.values[1], "unknown");
        let text = c.lines(&["a".to_string(), "b".to_string()]).join("\n");
        assert!(text.contains("cpu model (cpu): a "), "{text}");
        assert!(
            text.contains("b Other CPU") && text.contains("NOT COMPARABLE"),
            "{text}"
        );
    }
}
