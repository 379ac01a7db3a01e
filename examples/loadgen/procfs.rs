//! What the kernel says about a process: resident memory (`VmRSS`, and its
//! peak `VmHWM`) from `/proc/<pid>/status`, open descriptors from
//! `/proc/<pid>/fd`, and CPU time from `/proc/<pid>/stat` (and the whole
//! machine's from `/proc/stat`).

use std::time::Duration;

use crate::Res;

/// Resident memory in KiB: now, and the peak since the process started.
#[derive(Debug, Clone, Copy, Default)]
pub struct Mem {
    pub rss_kib: u64,
    pub hwm_kib: u64,
}

pub fn mem(pid: u32) -> Res<Mem> {
    let status = status(pid)?;
    let field =
        |name: &str| kib(&status, name).ok_or_else(|| format!("/proc/{pid}/status has no {name}"));
    Ok(Mem {
        rss_kib: field("VmRSS:")?,
        hwm_kib: field("VmHWM:")?,
    })
}

/// VmRSS split into what the process allocated (`RssAnon`) and the pages
/// of its binary and libraries mapped from the page cache (`RssFile`), KiB.
pub fn rss_split(pid: u32) -> Res<(u64, u64)> {
    let status = status(pid)?;
    let field = |name: &str| kib(&status, name).unwrap_or(0);
    Ok((field("RssAnon:"), field("RssFile:")))
}

fn status(pid: u32) -> Res<String> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("cannot read /proc/{pid}/status: {e}"))
}

/// The `name` line of a `/proc/PID/status` text, in KiB.
fn kib(status: &str, name: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Open file descriptors.
pub fn fds(pid: u32) -> Res<usize> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(Iterator::count)
        .map_err(|e| format!("cannot list /proc/{pid}/fd: {e}"))
}

/// User plus system CPU time the process has used.
pub fn cpu(pid: u32) -> Res<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_err(|e| format!("cannot read /proc/{pid}/stat: {e}"))?;
    // The command name may hold spaces and parentheses: fields start after
    // the last ')'. utime and stime are fields 14 and 15 (11 and 12 here).
    let rest = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .ok_or("malformed stat")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
    let total = ticks(11)
        .zip(ticks(12))
        .map(|(u, s)| u + s)
        .ok_or("malformed stat")?;
    let hz = rustix::param::clock_ticks_per_second().max(1);
    Ok(Duration::from_micros(total * 1_000_000 / hz))
}

/// CPU time of several processes, for per-call accounting.
pub fn cpus(pids: &[u32]) -> Vec<Duration> {
    pids.iter()
        .map(|&pid| cpu(pid).unwrap_or_default())
        .collect()
}

/// CPU time of the whole machine from `/proc/stat`, over all CPUs: busy
/// (user, nice, system, irq, softirq) and stolen by the hypervisor.
pub fn machine() -> Res<(Duration, Duration)> {
    let stat = std::fs::read_to_string("/proc/stat")
        .map_err(|e| format!("cannot read /proc/stat: {e}"))?;
    let fields: Vec<u64> = stat
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("cpu "))
        .ok_or("malformed /proc/stat")?
        .split_whitespace()
        .map(|f| f.parse::<u64>().map_err(|e| format!("/proc/stat: {e}")))
        .collect::<Res<_>>()?;
    let at = |i: usize| fields.get(i).copied().unwrap_or(0);
    let hz = rustix::param::clock_ticks_per_second().max(1);
    let time = |ticks: u64| Duration::from_micros(ticks * 1_000_000 / hz);
    Ok((time(at(0) + at(1) + at(2) + at(5) + at(6)), time(at(7))))
}

/// CPU time of every live thread of a process, to the nanosecond (the
/// first field of `/proc/<pid>/task/<tid>/schedstat`); `/proc/<pid>/stat`
/// counts in clock ticks, too coarse for a few thousand calls of tens of
/// microseconds each. Falls back to `stat` when schedstat is missing.
pub fn cpu_exact(pid: u32) -> Duration {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return cpu(pid).unwrap_or_default();
    };
    let mut total = 0u64;
    for task in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("schedstat")) else {
            return cpu(pid).unwrap_or_default();
        };
        total += stat
            .split_whitespace()
            .next()
            .and_then(|ns| ns.parse::<u64>().ok())
            .unwrap_or(0);
    }
    Duration::from_nanos(total)
}
