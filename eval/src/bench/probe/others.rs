//! How much CPU other processes used while a piece of work ran: the machine's busy time
//! (/proc/stat, every CPU) less this process's own (getrusage), over the wall time, in
//! cores; and, apart, the time the hypervisor took from the machine (steal).
//!
//! This is what the 1-minute load average is a proxy for, without its two faults here:
//! it counts the instrument's own threads (a ladder's overloaded rung would mark the
//! next rung disturbed by itself), and it decays over a minute (a build that ended
//! seconds ago still counts, one that started seconds ago not yet).
//!
//! Steal is not counted as other processes: on this project's VMs it is a fifth of
//! whatever the VM runs (one spinning thread: 0.23 cores of steal; two: 0.42), a cap of
//! the platform rather than a neighbour, and counting it flagged every busy rung. It is
//! recorded beside. The guest's own clock runs on while a vCPU is stolen, so getrusage
//! can exceed /proc/stat's user and system time; the difference is clamped at zero.

use std::time::{Duration, Instant};

use super::Rusage;

/// One reading: the machine's busy and stolen time so far and this process's CPU time.
#[derive(Debug, Clone, Copy)]
pub struct CpuReading {
    at: Instant,
    machine_busy: Option<Duration>,
    machine_steal: Option<Duration>,
    own: Duration,
    /// CPU time of the local server behind `bench --target`, if one was found: part of
    /// the system measured, so not another tenant's.
    served: Duration,
}

impl CpuReading {
    pub fn now() -> Self {
        CpuReading::now_with(None)
    }

    /// A reading that counts process `server` (a local server the bench drives over
    /// HTTP) as part of this process.
    pub fn now_with(server: Option<u32>) -> Self {
        let own = Rusage::now();
        let machine = machine_times();
        CpuReading {
            at: Instant::now(),
            machine_busy: machine.map(|m| m.0),
            machine_steal: machine.map(|m| m.1),
            own: own.user + own.system,
            served: server
                .and_then(super::process_cpu)
                .unwrap_or(Duration::ZERO),
        }
    }

    /// Time the hypervisor took from the machine from `earlier` to `self`, in cores.
    pub fn steal_since(&self, earlier: &CpuReading) -> Option<f64> {
        let wall = self.at.duration_since(earlier.at).as_secs_f64();
        let steal = self.machine_steal?.checked_sub(earlier.machine_steal?)?;
        (wall > 0.0).then(|| steal.as_secs_f64() / wall)
    }

    /// Other processes' CPU use from `earlier` to `self`, in cores (0.5: half of one
    /// core on average); `None` where /proc/stat is unreadable or no time passed.
    pub fn others_since(&self, earlier: &CpuReading) -> Option<f64> {
        let wall = self.at.duration_since(earlier.at).as_secs_f64();
        let busy = self.machine_busy?.checked_sub(earlier.machine_busy?)?;
        let own = self.own.saturating_sub(earlier.own) + self.served.saturating_sub(earlier.served);
        (wall > 0.0).then(|| (busy.as_secs_f64() - own.as_secs_f64()).max(0.0) / wall)
    }
}

/// The clock ticks per second /proc/stat counts in.
fn ticks_per_sec() -> f64 {
    // SAFETY: sysconf reads a constant of the system and has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

/// Every CPU's busy time since boot (user, nice, system, irq, softirq) and its stolen
/// time.
fn machine_times() -> Option<(Duration, Duration)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let (busy, steal) = ticks_of(&text)?;
    let secs = |ticks: u64| Duration::from_secs_f64(ticks as f64 / ticks_per_sec());
    Some((secs(busy), secs(steal)))
}

/// The busy and steal ticks of /proc/stat's aggregate `cpu` line.
fn ticks_of(stat: &str) -> Option<(u64, u64)> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal [guest guest_nice: already in user]
    let field = |i: usize| v.get(i).copied().unwrap_or(0);
    (v.len() >= 4).then(|| {
        (
            field(0) + field(1) + field(2) + field(5) + field(6),
            field(7),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_is_every_field_but_idle_iowait_and_steal() {
        let stat = "cpu  100 20 30 5000 70 1 2 3 40 0\ncpu0 50 10 15 2500 35 1 1 2 20 0\n";
        assert_eq!(ticks_of(stat), Some((100 + 20 + 30 + 1 + 2, 3)));
        assert_eq!(ticks_of("cpu  1 2\n"), None, "too few fields");
        assert_eq!(ticks_of("intr 5\n"), None);
    }

    /// A thread of this process spinning is not another tenant: the reading must
    /// subtract it (where /proc/stat exists).
    #[test]
    fn this_processs_own_work_is_not_counted() {
        let before = CpuReading::now();
        let until = Instant::now() + Duration::from_millis(300);
        let mut x = 0u64;
        while Instant::now() < until {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let after = CpuReading::now();
        let Some(others) = after.others_since(&before) else {
            return; // no /proc/stat here
        };
        let wall = after.at.duration_since(before.at).as_secs_f64();
        let own = (after.own - before.own).as_secs_f64() / wall;
        let machine =
            (after.machine_busy.unwrap() - before.machine_busy.unwrap()).as_secs_f64() / wall;
        if own < 0.5 {
            return; // the machine was too busy to give the spin half a core: no test
        }
        // The spin is in the machine's busy time and must not be in the others' (0.1:
        // /proc/stat counts in ticks of 10 ms, over 0.3 s; with steal, the guest's clock
        // can charge the spin more than /proc/stat's busy time shows).
        assert!(
            machine >= 0.4,
            "the spin shows in /proc/stat: {machine} {own}"
        );
        assert!(
            others <= (machine - own).max(0.0) + 0.1,
            "others {others}, machine {machine}, own {own}"
        );
    }
}
