//! The process listening on a local TCP port: the server behind a loopback `--target`,
//! whose CPU is part of the system measured rather than another tenant's
//! ([`CpuReading::now_with`](super::CpuReading::now_with)).

use std::time::Duration;

/// The pid of the process that holds a listening TCP socket on `port` (any local
/// address), from /proc/net/tcp{,6} and each process's open descriptors; `None` if none
/// is found or /proc cannot say (another user's process, another machine).
pub fn listener_pid(port: u16) -> Option<u32> {
    let inode = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .find_map(|table| listening_inode(&table, port))?;
    let wanted = format!("socket:[{inode}]");
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if std::fs::read_link(fd.path()).is_ok_and(|l| l.to_str() == Some(wanted.as_str())) {
                return Some(pid);
            }
        }
    }
    None
}

/// The inode of the socket listening on `port` in one /proc/net/tcp table.
fn listening_inode(table: &str, port: u16) -> Option<u64> {
    table.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        let local_port = f.get(1)?.rsplit_once(':')?.1;
        let listening = *f.get(3)? == "0A";
        (listening && u16::from_str_radix(local_port, 16).ok()? == port)
            .then(|| f.get(9)?.parse().ok())
            .flatten()
    })
}

/// CPU time (user + system) a process has used so far, from /proc/PID/stat.
pub fn process_cpu(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from its end.
    let after = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of stat(5) are the 12th and 13th after the name.
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf reads a constant of the system and has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = if hz > 0 { hz as f64 } else { 100.0 };
    Some(Duration::from_secs_f64(ticks as f64 / hz))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_listening_row_by_port() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1\n   1: 0100007F:1F91 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 77 1\n";
        assert_eq!(listening_inode(table, 0x1F90), Some(4242));
        assert_eq!(
            listening_inode(table, 0x1F91),
            None,
            "established, not listening"
        );
    }

    #[test]
    fn finds_this_processs_own_listener() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        if std::fs::metadata("/proc/net/tcp").is_err() {
            return; // no /proc here
        }
        assert_eq!(listener_pid(port), Some(std::process::id()));
        assert!(process_cpu(std::process::id()).is_some());
    }
}
