//! The byte cap: how long the adapter takes to refuse an hc reply over
//! 1 MiB, and how many bytes it read from hc's socket before it did.
//!
//! Bytes read are counted exactly from the adapter's own system calls:
//! `strace` attaches to the running adapter for one call and every
//! `read`/`recvfrom`/`recvmsg`/`readv` on a Unix stream socket is summed
//! (the stdio adapter's only Unix socket is its hc connection; stdin and
//! stdout are pipes). `/proc/<pid>/io` `rchar` cannot do this: the kernel
//! counts `read(2)` there but not `recvfrom(2)`, which is what tokio uses
//! on sockets. Timings are taken on calls without strace attached.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::Res;
use crate::stdio::{StdioAdapter, tool_failed_with};

/// What the adapter must say when hc's reply passes 1 MiB (spec section 3).
pub const TOO_LARGE: &str = "hc reply exceeded 1 MiB";

/// One refused call: how long it took.
pub async fn time_refusal(
    adapter: &mut StdioAdapter,
    tool: &str,
    arguments: &str,
) -> Res<Duration> {
    let started = Instant::now();
    let id = adapter.call_tool(tool, arguments).await?;
    let elapsed = started.elapsed();
    tool_failed_with(&adapter.line, id, TOO_LARGE)?;
    Ok(elapsed)
}

/// Bytes the adapter read from Unix stream sockets during one refused
/// call, or `None` when strace is not installed.
pub async fn bytes_read(
    adapter: &mut StdioAdapter,
    tool: &str,
    arguments: &str,
    dir: &Path,
) -> Res<Option<u64>> {
    let trace = dir.join(format!("strace-{tool}.txt"));
    let strace = Command::new("strace")
        .args([
            "-qq",
            "-f",
            "-yy",
            "-s",
            "0",
            "-e",
            "trace=read,recvfrom,recvmsg,readv",
            "-e",
            "signal=none",
            "-o",
        ])
        .arg(&trace)
        .arg("-p")
        .arg(adapter.pid().to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut strace) = strace else {
        return Ok(None);
    };
    // strace prints nothing when attached; give it time to reach every thread.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let id = adapter.call_tool(tool, arguments).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_child(&strace),
        rustix::process::Signal::INT,
    );
    let _ = strace.wait();
    tool_failed_with(&adapter.line, id?, TOO_LARGE)?;
    let text = std::fs::read_to_string(&trace).map_err(|e| format!("strace output: {e}"))?;
    Ok(Some(socket_bytes(&text)))
}

/// Sums the results of read calls on Unix stream sockets in strace output,
/// following calls that strace split into "unfinished" and "resumed" lines.
fn socket_bytes(trace: &str) -> u64 {
    let mut pending: HashMap<&str, bool> = HashMap::new();
    let mut total = 0;
    for line in trace.lines() {
        let pid = line.split_whitespace().next().unwrap_or("");
        let on_socket = if line.contains("<unfinished ...>") {
            pending.insert(pid, line.contains("UNIX-STREAM"));
            continue;
        } else if line.contains(" resumed>") {
            pending.remove(pid).unwrap_or(false)
        } else {
            line.contains("UNIX-STREAM")
        };
        if on_socket
            && let Some((_, result)) = line.rsplit_once(") = ")
            && let Ok(n) = result
                .split_whitespace()
                .next()
                .unwrap_or("")
                .parse::<u64>()
        {
            total += n;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    #[test]
    fn sums_socket_reads_only() {
        let trace = "1 recvfrom(9<UNIX-STREAM:[1->2]>, \"\"..., 16384, 0, NULL, NULL) = 16384\n\
                     1 read(0<pipe:[5]>, \"\"..., 8192) = 100\n\
                     2 recvfrom(9<UNIX-STREAM:[1->2]>, <unfinished ...>\n\
                     2 <... recvfrom resumed>\"\"..., 16384, 0, NULL, NULL) = 10\n\
                     1 recvfrom(9<UNIX-STREAM:[1->2]>, \"\"..., 16384, 0, NULL, NULL) = -1 EAGAIN\n";
        assert_eq!(super::socket_bytes(trace), 16394);
    }
}
