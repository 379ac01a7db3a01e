//! What the kernel says about a process: resident memory (`VmRSS`, and its
//! peak `VmHWM`) from `/proc/<pid>/status`, open descriptors from
//! `/proc/<pid>/fd`, and CPU time from `/proc/<pid>/stat`.

use std::time::Duration;

use crate::Res;

/// Resident memory in KiB: now, and the peak since the process started.
#[derive(Debug, Clone, Copy, Default)]
pub struct Mem {
    pub rss_kib: u64,
    pub hwm_kib: u64,
}

pub fn mem(pid: u32) -> Res<Mem> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("cannot read /proc/{pid}/status: {e}"))?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .ok_or_else(|| format!("/proc/{pid}/status has no {name}"))
    };
    Ok(Mem {
        rss_kib: field("VmRSS:")?,
        hwm_kib: field("VmHWM:")?,
    })
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
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Ok(Duration::from_micros(total * 1_000_000 / hz))
}

/// CPU time of several processes, for per-call accounting.
pub fn cpus(pids: &[u32]) -> Vec<Duration> {
    pids.iter()
        .map(|&pid| cpu(pid).unwrap_or_default())
        .collect()
}
