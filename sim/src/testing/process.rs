//! The `hc-sim` child process: starting it, waiting for its ready line
//! while its stdout keeps draining, and ending it — SIGTERM with a grace
//! period (it then kills its own programs and removes its sockets), or
//! SIGKILL, or the former on drop. A process is signalled only while it is
//! not yet reaped, so a signal never reaches a recycled pid.

#![allow(
    unsafe_code,
    reason = "kill(SIGTERM) to the simulator process it started"
)]

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::Error;

/// How long `hc-sim` may take to print its ready line: longer than its own
/// 10 s wait for programs to start, so a slow machine is not taken for a
/// hung simulator.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a terminated simulator may take to kill its programs and exit
/// before it is SIGKILLed.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// How often a terminated simulator is checked for exit.
const EXIT_POLL: Duration = Duration::from_millis(10);

/// A running `hc-sim`; terminated on drop.
#[derive(Debug)]
pub(super) struct Process {
    pub(super) child: Child,
}

impl Process {
    /// Starts `binary` with `args`, its stderr to the file `stderr` (or to
    /// ours), and waits for its ready line for `socket`; the process, the
    /// line and the core_id it announced.
    pub(super) fn start(
        binary: &Path,
        args: Vec<OsString>,
        stderr: Option<&Path>,
        socket: &Path,
    ) -> Result<(Process, String, String), Error> {
        let stderr = match stderr {
            Some(path) => Stdio::from(
                File::create(path).map_err(Error::io(format!("create {}", path.display())))?,
            ),
            None => Stdio::inherit(),
        };
        let child = Command::new(binary)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(Error::io(format!("start {}", binary.display())))?;
        // From here on, an early return terminates the process (Drop).
        let mut process = Process { child };
        let ready_line = process.ready_line()?;
        let core_id = parse_ready_line(&ready_line, socket)?;
        Ok((process, ready_line, core_id))
    }

    /// Waits for the first stdout line (the ready line, with its newline).
    /// The rest of stdout is drained until the process exits, so it never
    /// blocks on, or dies of, a full or closed pipe.
    fn ready_line(&mut self) -> Result<String, Error> {
        let stdout = self.child.stdout.take().expect("hc-sim's stdout is piped");
        let (sender, receiver) = mpsc::channel();
        std::thread::Builder::new()
            .name("hc-sim-stdout".into())
            .spawn(move || {
                let mut reader = BufReader::new(stdout);
                let mut line = String::new();
                let read = reader.read_line(&mut line).map(|_| line);
                let _ = sender.send(read);
                let _ = io::copy(&mut reader, &mut io::sink());
            })
            .map_err(Error::io("start the thread reading hc-sim's stdout"))?;
        match receiver.recv_timeout(READY_TIMEOUT) {
            Ok(Ok(line)) if !line.is_empty() => Ok(line),
            Ok(Ok(_)) => {
                let status = self.terminate();
                Err(Error::NotReady(format!(
                    "it exited first ({}); its stderr says why",
                    describe(status)
                )))
            }
            Ok(Err(error)) => Err(Error::Io {
                action: "read hc-sim's ready line".into(),
                source: error,
            }),
            Err(_) => Err(Error::NotReady(format!(
                "no ready line within {} s",
                READY_TIMEOUT.as_secs()
            ))),
        }
    }

    /// SIGTERM, then SIGKILL if it is still running after [`STOP_GRACE`];
    /// the exit status, unless waiting for it failed.
    pub(super) fn terminate(&mut self) -> Option<ExitStatus> {
        if let Ok(Some(status)) = self.child.try_wait() {
            return Some(status);
        }
        let pid = libc::pid_t::try_from(self.child.id()).expect("pids fit in pid_t");
        // SAFETY: kill(2) has no memory effects, and the child is not yet
        // reaped (checked above), so the pid is still its own.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + STOP_GRACE;
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) => std::thread::sleep(EXIT_POLL),
                Err(_) => break,
            }
        }
        self.kill()
    }

    /// SIGKILL (a no-op on a reaped child), then reap it.
    pub(super) fn kill(&mut self) -> Option<ExitStatus> {
        let _ = self.child.kill();
        self.child.wait().ok()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.terminate();
    }
}

fn describe(status: Option<ExitStatus>) -> String {
    status.map_or_else(|| "exit status unknown".into(), |status| status.to_string())
}

/// The core_id from `ready core_id=<id> socket=<path>\n`, checking the
/// socket is the one asked for.
fn parse_ready_line(line: &str, socket: &Path) -> Result<String, Error> {
    let expected_tail = format!(" socket={}", socket.display());
    line.strip_suffix('\n')
        .and_then(|line| line.strip_prefix("ready core_id="))
        .and_then(|rest| rest.strip_suffix(&expected_tail))
        .filter(|core_id| !core_id.is_empty() && !core_id.contains(' '))
        .map(str::to_owned)
        .ok_or_else(|| Error::NotReady(format!("unexpected first line {line:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ready_line_gives_the_core_id_for_the_socket_asked_for() {
        let socket = Path::new("/tmp/d/hc.sock");
        let line = "ready core_id=1b4e28ba-2fa1-41d2-883f-0016d3cca427 socket=/tmp/d/hc.sock\n";
        assert_eq!(
            parse_ready_line(line, socket).unwrap(),
            "1b4e28ba-2fa1-41d2-883f-0016d3cca427"
        );
        let elsewhere = "ready core_id=x socket=/tmp/other.sock\n";
        assert!(parse_ready_line(elsewhere, socket).is_err());
        assert!(parse_ready_line("listening\n", socket).is_err());
        let printed = crate::service::ready_line("abc", socket);
        assert_eq!(parse_ready_line(&printed, socket).unwrap(), "abc");
    }
}
