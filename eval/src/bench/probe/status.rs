//! Resident memory from /proc/self/status: total, anonymous and file-backed.

use serde::{Deserialize, Serialize};

/// VmRSS, RssAnon and RssFile in KiB; `None` where the kernel does not report them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryStatus {
    pub vm_rss: Option<u64>,
    pub rss_anon: Option<u64>,
    pub rss_file: Option<u64>,
}

impl MemoryStatus {
    /// Reads /proc/self/status; all `None` where it cannot be read (not Linux).
    pub fn now() -> Self {
        std::fs::read_to_string("/proc/self/status")
            .map(|s| MemoryStatus::parse(&s))
            .unwrap_or_default()
    }

    /// Parses the text of a `/proc/<pid>/status` file.
    pub fn parse(text: &str) -> Self {
        let mut out = MemoryStatus::default();
        for line in text.lines() {
            let Some((key, rest)) = line.split_once(':') else {
                continue;
            };
            let slot = match key {
                "VmRSS" => &mut out.vm_rss,
                "RssAnon" => &mut out.rss_anon,
                "RssFile" => &mut out.rss_file,
                _ => continue,
            };
            // "   12345 kB"
            *slot = rest.split_whitespace().next().and_then(|n| n.parse().ok());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_fields() {
        let text = "Name:\theddle\nVmPeak:\t 999 kB\nVmRSS:\t    2048 kB\nRssAnon:\t    1500 kB\nRssFile:\t     548 kB\nRssShmem:\t 0 kB\n";
        assert_eq!(
            MemoryStatus::parse(text),
            MemoryStatus {
                vm_rss: Some(2048),
                rss_anon: Some(1500),
                rss_file: Some(548)
            }
        );
        assert_eq!(MemoryStatus::parse("Name: x\n"), MemoryStatus::default());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn reads_this_process() {
        let m = MemoryStatus::now();
        assert!(m.vm_rss.unwrap() > 0 && m.rss_anon.is_some() && m.rss_file.is_some());
    }
}
