//! User-space instructions per `read_output` over stdio, counted by
//! valgrind (cachegrind, no cache simulation), for the adapter and the
//! floor. Unlike CPU time, the count does not move with the machine's
//! load, so a change of a few percent shows in one run. Each server runs
//! twice under valgrind, once with no calls and once with `calls`; the
//! difference over `calls` leaves start-up and exit out. The kernel's
//! share (system calls, wake-ups) is not counted: the syscall counts show
//! it is the same for both.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use crate::Res;
use crate::latency::{self, Expect};
use crate::stdio::StdioAdapter;
use crate::world::Bins;

/// valgrind is slow (tens of times); a server's exit, with its counts
/// written, gets this long.
const EXIT_WITHIN: Duration = Duration::from_secs(120);

/// Instructions per call: adapter, floor. `None` without valgrind.
pub async fn per_call(
    bins: &Bins,
    config: &Path,
    socket: &Path,
    expect: &Expect<'_>,
    dir: &Path,
    calls: usize,
) -> Res<Option<[f64; 2]>> {
    if !available().await {
        return Ok(None);
    }
    let mut per_call = [0.0; 2];
    for (server, figure) in per_call.iter_mut().enumerate() {
        let mut counted = [0u64; 2];
        for (run, n) in [0, calls].into_iter().enumerate() {
            let out = dir.join(format!("cachegrind-{server}-{n}.out"));
            let mut command = Command::new("valgrind");
            command
                .arg("--tool=cachegrind")
                .arg("--cache-sim=no")
                .arg(format!("--cachegrind-out-file={}", out.display()));
            if server == 0 {
                command
                    .arg(&bins.adapter)
                    .args(["serve", "--config"])
                    .arg(config);
            } else {
                command
                    .arg(bins.floor()?)
                    .arg("--socket")
                    .arg(socket)
                    .args(["--conns", "1", "stdio"]);
            }
            let log = dir.join(format!("cachegrind-{server}-{n}.err"));
            let mut stdio = StdioAdapter::spawn_command(command, &log)?;
            stdio.initialize().await?;
            latency::stdio(&mut stdio, expect, 0, n).await?;
            stdio.close_within(EXIT_WITHIN).await?;
            counted[run] = summary(&out)?;
        }
        *figure = counted[1].saturating_sub(counted[0]) as f64 / calls.max(1) as f64;
    }
    Ok(Some(per_call))
}

async fn available() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await
        .is_ok_and(|s| s.success())
}

/// The `summary:` line of a cachegrind output file: instructions executed.
fn summary(out: &Path) -> Res<u64> {
    let text =
        std::fs::read_to_string(out).map_err(|e| format!("cachegrind {}: {e}", out.display()))?;
    text.lines()
        .find_map(|line| line.strip_prefix("summary:"))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| format!("cachegrind {}: no summary line", out.display()))
}
