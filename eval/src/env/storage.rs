//! The storage under a directory: its mount (filesystem, source, options), the block
//! device behind it, and the kernel's write-back settings. A commit's latency reports the
//! platform's write path as much as heddle's code, so every report says which it was.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::machine::read;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Storage {
    /// The directory asked about, as given.
    pub dir: String,
    pub mount_point: Option<String>,
    pub fs_type: Option<String>,
    /// What is mounted (`/dev/vda1`, `tmpfs`, `overlay`, …).
    pub mount_source: Option<String>,
    /// Per-mount options (`rw,relatime`).
    pub mount_options: Option<String>,
    /// The filesystem's own options (`rw,discard,…`).
    pub super_options: Option<String>,
    /// The block device's kernel name (`vda`, `nvme0n1`), the whole disk for a
    /// partition; absent for filesystems without one (tmpfs, overlay, network).
    pub block_device: Option<String>,
    pub device_model: Option<String>,
    pub rotational: Option<bool>,
    /// The I/O scheduler in use.
    pub scheduler: Option<String>,
    pub vm_dirty: VmDirty,
}

/// `vm.dirty_*`: when the kernel starts and forces write-back of dirty pages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VmDirty {
    pub ratio: Option<u64>,
    pub background_ratio: Option<u64>,
    pub bytes: Option<u64>,
    pub background_bytes: Option<u64>,
    pub expire_centisecs: Option<u64>,
    pub writeback_centisecs: Option<u64>,
}

impl VmDirty {
    pub fn read() -> Self {
        let v =
            |name: &str| read(format!("/proc/sys/vm/dirty_{name}")).and_then(|s| s.parse().ok());
        VmDirty {
            ratio: v("ratio"),
            background_ratio: v("background_ratio"),
            bytes: v("bytes"),
            background_bytes: v("background_bytes"),
            expire_centisecs: v("expire_centisecs"),
            writeback_centisecs: v("writeback_centisecs"),
        }
    }
}

impl Storage {
    /// The storage holding `dir` (which need not exist yet: its nearest existing
    /// ancestor is looked up).
    pub fn of(dir: &Path) -> Self {
        let mountinfo = read("/proc/self/mountinfo").unwrap_or_default();
        let mount = existing_ancestor(dir)
            .and_then(|p| std::fs::canonicalize(p).ok())
            .and_then(|p| Mount::containing(&mountinfo, &p));
        let disk = mount.as_ref().and_then(|m| Disk::of(&m.dev));
        Storage {
            dir: dir.display().to_string(),
            mount_point: mount.as_ref().map(|m| m.point.clone()),
            fs_type: mount.as_ref().map(|m| m.fs_type.clone()),
            mount_source: mount.as_ref().map(|m| m.source.clone()),
            mount_options: mount.as_ref().map(|m| m.options.clone()),
            super_options: mount.as_ref().map(|m| m.super_options.clone()),
            block_device: disk.as_ref().map(|d| d.name.clone()),
            device_model: disk.as_ref().and_then(|d| d.model.clone()),
            rotational: disk.as_ref().and_then(|d| d.rotational),
            scheduler: disk.as_ref().and_then(|d| d.scheduler.clone()),
            vm_dirty: VmDirty::read(),
        }
    }
}

fn existing_ancestor(dir: &Path) -> Option<PathBuf> {
    let abs = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(dir)
    };
    abs.ancestors().find(|p| p.exists()).map(Path::to_path_buf)
}

/// One line of /proc/self/mountinfo.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Mount {
    pub dev: String,
    pub point: String,
    pub options: String,
    pub fs_type: String,
    pub source: String,
    pub super_options: String,
}

impl Mount {
    /// `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue`
    pub fn parse(line: &str) -> Option<Mount> {
        let (left, right) = line.split_once(" - ")?;
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        Some(Mount {
            dev: l.get(2)?.to_string(),
            point: unescape(l.get(4)?),
            options: l.get(5)?.to_string(),
            fs_type: r.first()?.to_string(),
            source: unescape(r.get(1)?),
            super_options: r.get(2).unwrap_or(&"").to_string(),
        })
    }

    /// The mount `path` (absolute, canonical) lives on: the longest mount point that is
    /// a prefix of it by whole components; of several at one point, the last mounted.
    pub fn containing(mountinfo: &str, path: &Path) -> Option<Mount> {
        let mut best: Option<(usize, Mount)> = None;
        for m in mountinfo.lines().filter_map(Mount::parse) {
            let point = Path::new(&m.point);
            if path.starts_with(point) {
                let depth = point
                    .components()
                    .filter(|c| matches!(c, Component::Normal(_)))
                    .count();
                if best.as_ref().is_none_or(|(d, _)| depth >= *d) {
                    best = Some((depth, m));
                }
            }
        }
        best.map(|(_, m)| m)
    }
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The block device behind a `major:minor`, as sysfs describes it.
struct Disk {
    name: String,
    model: Option<String>,
    rotational: Option<bool>,
    scheduler: Option<String>,
}

impl Disk {
    fn of(dev: &str) -> Option<Disk> {
        if dev.starts_with("0:") {
            return None; // anonymous: tmpfs, overlay, network filesystems
        }
        let mut sys = std::fs::canonicalize(format!("/sys/dev/block/{dev}")).ok()?;
        if sys.join("partition").exists() {
            sys = sys.parent()?.to_path_buf();
        }
        let name = sys.file_name()?.to_string_lossy().into_owned();
        let scheduler = read(sys.join("queue/scheduler")).map(|s| {
            s.split_whitespace()
                .find_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
                .unwrap_or(&s)
                .to_string()
        });
        Some(Disk {
            name,
            model: read(sys.join("device/model")),
            rotational: read(sys.join("queue/rotational")).map(|r| r == "1"),
            scheduler,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
30 27 0:30 / /tmp rw,nosuid - tmpfs tmpfs rw,size=100k
31 27 254:1 / /data/my\\040disk rw,noatime shared:5 - xfs /dev/vdb1 rw,attr2
32 27 0:40 / /tmpfoo rw - tmpfs tmpfs rw
";

    #[test]
    fn the_longest_mount_point_by_components_holds_a_path() {
        let m = |p: &str| Mount::containing(MOUNTINFO, Path::new(p)).unwrap();
        assert_eq!(m("/work/index").fs_type, "ext4");
        assert_eq!(m("/tmp/x").fs_type, "tmpfs");
        assert_eq!(m("/tmp").point, "/tmp");
        // `/tmpfoo` is not under `/tmp`, and `/tmpx` under neither.
        assert_eq!(m("/tmpfoo/a").dev, "0:40");
        assert_eq!(m("/tmpx").fs_type, "ext4");
        let d = m("/data/my disk/idx");
        assert_eq!(
            (d.point.as_str(), d.source.as_str(), d.options.as_str()),
            ("/data/my disk", "/dev/vdb1", "rw,noatime")
        );
        assert_eq!(
            (d.fs_type.as_str(), d.super_options.as_str()),
            ("xfs", "rw,attr2")
        );
    }

    #[test]
    fn a_later_mount_at_the_same_point_hides_the_earlier() {
        let text = format!("{MOUNTINFO}40 27 0:50 / /tmp rw - ramfs none rw\n");
        assert_eq!(
            Mount::containing(&text, Path::new("/tmp/a"))
                .unwrap()
                .fs_type,
            "ramfs"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_machines_temporary_directory_has_a_filesystem() {
        let s = Storage::of(&std::env::temp_dir().join("not-yet-made"));
        assert!(s.fs_type.is_some() && s.mount_point.is_some(), "{s:?}");
    }
}
