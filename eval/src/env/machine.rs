//! The machine: host, CPU (model, cores, microcode, frequency policy), kernel, memory.
//! Read from /proc and /sys; a field the system does not expose is `None` (unknown).

use std::path::Path;

use serde::{Deserialize, Serialize};

/// What a reader needs to know about the machine to judge whether two runs compare.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub host: Option<String>,
    pub cpu_model: Option<String>,
    /// Logical CPUs the kernel lists.
    pub logical_cores: Option<usize>,
    /// Distinct (package, core) pairs: logical CPUs that are not SMT siblings.
    pub physical_cores: Option<usize>,
    /// CPUs this process may run on (its affinity mask): what the instrument uses.
    pub available_cores: usize,
    pub microcode: Option<String>,
    /// The CPU reports running under a hypervisor (a VM: its neighbours are invisible).
    pub hypervisor: Option<bool>,
    /// cpufreq scaling governor of CPU 0.
    pub governor: Option<String>,
    /// SMT (hyper-threading): `on`, `off`, `notsupported`, … as the kernel says.
    pub smt: Option<String>,
    /// Turbo / boost: `on` or `off`.
    pub turbo: Option<String>,
    /// The clock source timings are read from (tsc, kvm-clock, hpet…).
    pub clocksource: Option<String>,
    pub kernel: Option<String>,
    /// The kernel's build string (`#1 SMP PREEMPT_DYNAMIC …`).
    pub kernel_version: Option<String>,
    pub memory_total_kib: Option<u64>,
    pub memory_available_kib: Option<u64>,
    pub swap_total_kib: Option<u64>,
}

impl Machine {
    /// This machine, now.
    pub fn read() -> Self {
        let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
        let cpu = CpuInfo::parse(&cpuinfo);
        let meminfo = read("/proc/meminfo").unwrap_or_default();
        let smt = read("/sys/devices/system/cpu/smt/control")
            .or_else(|| read("/sys/devices/system/cpu/smt/active").map(|a| on_off(&a)));
        Machine {
            host: read("/proc/sys/kernel/hostname"),
            cpu_model: cpu.model,
            logical_cores: cpu.logical,
            physical_cores: cpu.physical,
            available_cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            microcode: cpu.microcode,
            hypervisor: cpu.hypervisor,
            governor: read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            smt,
            turbo: turbo(),
            clocksource: read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
            kernel: read("/proc/sys/kernel/osrelease"),
            kernel_version: read("/proc/sys/kernel/version"),
            memory_total_kib: meminfo_kib(&meminfo, "MemTotal"),
            memory_available_kib: meminfo_kib(&meminfo, "MemAvailable"),
            swap_total_kib: meminfo_kib(&meminfo, "SwapTotal"),
        }
    }
}

/// A file's trimmed text; `None` if it cannot be read or is empty.
pub(super) fn read(path: impl AsRef<Path>) -> Option<String> {
    let s = std::fs::read_to_string(path).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

fn on_off(flag: &str) -> String {
    if flag == "1" { "on" } else { "off" }.to_string()
}

/// intel_pstate says `no_turbo`; acpi-cpufreq and amd-pstate say `boost`.
fn turbo() -> Option<String> {
    if let Some(no) = read("/sys/devices/system/cpu/intel_pstate/no_turbo") {
        return Some(if no == "1" { "off" } else { "on" }.to_string());
    }
    read("/sys/devices/system/cpu/cpufreq/boost").map(|b| on_off(&b))
}

fn meminfo_kib(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
}

/// What /proc/cpuinfo says.
#[derive(Debug, Default, PartialEq)]
pub(super) struct CpuInfo {
    pub model: Option<String>,
    pub logical: Option<usize>,
    pub physical: Option<usize>,
    pub microcode: Option<String>,
    pub hypervisor: Option<bool>,
}

impl CpuInfo {
    pub fn parse(text: &str) -> Self {
        let mut out = CpuInfo::default();
        let mut logical = 0;
        let mut cores: Vec<(String, String)> = Vec::new();
        let mut ids_complete = true;
        for block in text.split("\n\n").filter(|b| !b.trim().is_empty()) {
            let field = |key: &str| {
                block.lines().find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    (k.trim() == key).then(|| v.trim().to_string())
                })
            };
            if field("processor").is_none() {
                continue;
            }
            logical += 1;
            out.model = out.model.or_else(|| field("model name"));
            out.microcode = out.microcode.or_else(|| field("microcode"));
            if let Some(flags) = field("flags") {
                let vm = flags.split_whitespace().any(|f| f == "hypervisor");
                out.hypervisor = Some(out.hypervisor.unwrap_or(false) || vm);
            }
            match (field("physical id"), field("core id")) {
                (Some(p), Some(c)) => {
                    if !cores.contains(&(p.clone(), c.clone())) {
                        cores.push((p, c));
                    }
                }
                _ => ids_complete = false,
            }
        }
        if logical > 0 {
            out.logical = Some(logical);
            out.physical = (ids_complete && !cores.is_empty()).then_some(cores.len());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuinfo_counts_smt_siblings_once() {
        let cpu = |n: u32, core: u32| {
            format!(
                "processor\t: {n}\nmodel name\t: Test CPU @ 3.00GHz\nmicrocode\t: 0xf0\nphysical id\t: 0\ncore id\t\t: {core}\nflags\t\t: fpu sse2\n"
            )
        };
        let text = [cpu(0, 0), cpu(1, 1), cpu(2, 0), cpu(3, 1)].join("\n");
        let info = CpuInfo::parse(&text);
        assert_eq!(info.model.as_deref(), Some("Test CPU @ 3.00GHz"));
        assert_eq!((info.logical, info.physical), (Some(4), Some(2)));
        assert_eq!(info.microcode.as_deref(), Some("0xf0"));
        assert_eq!(info.hypervisor, Some(false));
    }

    #[test]
    fn missing_core_ids_leave_physical_cores_unknown() {
        let info = CpuInfo::parse("processor : 0\nflags : fpu hypervisor\n\nprocessor : 1\n");
        assert_eq!((info.logical, info.physical), (Some(2), None));
        assert_eq!(info.hypervisor, Some(true));
        assert_eq!((info.model, info.microcode), (None, None));
        assert_eq!(CpuInfo::parse(""), CpuInfo::default());
    }

    #[test]
    fn meminfo_fields_in_kib() {
        let m = "MemTotal:       24683584 kB\nMemAvailable:   1000 kB\n";
        assert_eq!(meminfo_kib(m, "MemTotal"), Some(24_683_584));
        assert_eq!(meminfo_kib(m, "MemAvailable"), Some(1_000));
        assert_eq!(meminfo_kib(m, "SwapTotal"), None);
    }
}
