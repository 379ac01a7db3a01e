//! System calls per call, counted by `strace -c -f` attached to a running
//! server while it serves a known number of calls. strace slows the server
//! down, so these calls are never the timed ones; the counts are what the
//! kernel saw, by name.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::Res;

/// Every system call the server made during the traced calls, by name.
#[derive(Debug, Clone)]
pub struct Syscalls {
    calls: u64,
    /// (name, count), most frequent first.
    by_name: Vec<(String, u64)>,
}

/// Traces `pid` while `work` makes `calls` calls; `None` when strace is
/// not installed or could not attach.
pub async fn count<T>(
    pid: u32,
    dir: &Path,
    calls: usize,
    work: impl Future<Output = Res<T>>,
) -> Res<Option<Syscalls>> {
    count_run(pid, dir, async { work.await.map(|_| calls as u64) }).await
}

/// Traces `pid` while `work` runs; `work` says how many calls it made.
pub async fn count_run(
    pid: u32,
    dir: &Path,
    work: impl Future<Output = Res<u64>>,
) -> Res<Option<Syscalls>> {
    let out = dir.join(format!("strace-c-{pid}.txt"));
    let mut strace = Command::new("strace");
    strace.args(["-c", "-f", "-qq", "-o"]).arg(&out);
    // strace prints nothing when attached; give it time to reach every thread.
    let Some((calls, _)) = attached(strace, pid, Duration::from_millis(500), work).await? else {
        return Ok(None);
    };
    let Ok(text) = std::fs::read_to_string(&out) else {
        return Ok(None);
    };
    Ok(parse(&text).map(|by_name| Syscalls { calls, by_name }))
}

/// The rows of strace's summary table (`% time seconds usecs/call calls
/// [errors] syscall`), without the total.
fn parse(text: &str) -> Option<Vec<(String, u64)>> {
    let mut rows = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 5 || fields[0].parse::<f64>().is_err() {
            continue;
        }
        let (Some(name), Ok(count)) = (fields.last(), fields[3].parse::<u64>()) else {
            continue;
        };
        if *name != "total" {
            rows.push(((*name).to_owned(), count));
        }
    }
    rows.sort_by_key(|row| std::cmp::Reverse(row.1));
    (!rows.is_empty()).then_some(rows)
}

/// Syscalls per call, or "n/a" without strace.
pub fn per_call(s: Option<&Syscalls>) -> String {
    match s {
        Some(s) => {
            let total: u64 = s.by_name.iter().map(|(_, n)| n).sum();
            format!("{:.1}", total as f64 / s.calls.max(1) as f64)
        }
        None => "n/a".into(),
    }
}

/// The most frequent calls per call, e.g. "recvfrom 3.0, sendto 2.0".
pub fn breakdown(s: Option<&Syscalls>) -> String {
    let Some(s) = s else {
        return "n/a".into();
    };
    s.by_name
        .iter()
        .take(7)
        .map(|(name, n)| format!("{name} {:.2}", *n as f64 / s.calls.max(1) as f64))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The libc allocation entry points counted, as `perf probe` names them
/// (`scripts/bench.sh` adds the probes when perf is installed).
const ALLOCATION_PROBES: [&str; 3] = [
    "probe_libc:malloc",
    "probe_libc:calloc",
    "probe_libc:realloc",
];

/// Heap allocations per call (malloc, calloc and realloc entered) while
/// `work` runs, counted by `perf stat` on uprobes; `work` says how many
/// calls it made. `None` without perf or the probes.
pub async fn allocations(
    pid: u32,
    dir: &Path,
    work: impl Future<Output = Res<u64>>,
) -> Res<Option<f64>> {
    let out = dir.join(format!("perf-stat-{pid}.txt"));
    let mut perf = Command::new("perf");
    perf.args(["stat", "-x", ",", "-o"]).arg(&out);
    for probe in ALLOCATION_PROBES {
        perf.args(["-e", probe]);
    }
    let Some((calls, status)) = attached(perf, pid, Duration::from_millis(300), work).await? else {
        return Ok(None);
    };
    // perf ends 0, or 130 (or by the signal itself) on SIGINT.
    if !status.is_ok_and(|s| s.success() || s.code() == Some(130) || s.code().is_none()) {
        return Ok(None);
    }
    let Ok(text) = std::fs::read_to_string(&out) else {
        return Ok(None);
    };
    // `count,unit,event,...` per event; "<not counted>" when a probe is
    // missing.
    let mut total = 0u64;
    let mut seen = 0;
    for line in text.lines() {
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() > 2 && ALLOCATION_PROBES.contains(&fields[2]) {
            let Ok(n) = fields[0].parse::<u64>() else {
                return Ok(None);
            };
            total += n;
            seen += 1;
        }
    }
    Ok((seen == ALLOCATION_PROBES.len()).then(|| total as f64 / calls.max(1) as f64))
}

/// Runs `tracer` attached to `pid` (`-p PID` added), lets it settle, runs
/// `work`, then stops the tracer with SIGINT (so it writes its summary) and
/// waits for it: `work`'s count and the tracer's exit, or `None` when the
/// tracer cannot be started.
async fn attached(
    mut tracer: Command,
    pid: u32,
    settle: Duration,
    work: impl Future<Output = Res<u64>>,
) -> Res<Option<(u64, std::io::Result<std::process::ExitStatus>)>> {
    let Ok(mut child) = tracer
        .arg("-p")
        .arg(pid.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return Ok(None);
    };
    tokio::time::sleep(settle).await;
    let done = work.await;
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    );
    let status = child.wait();
    Ok(Some((done?, status)))
}
