//! Handing a bound listening socket to a child process as systemd does:
//! the socket on descriptor 3, `LISTEN_FDS=1`, and `LISTEN_PID` the child's
//! own pid (a shell names its pid, then becomes the program). Tests and the
//! bench start the adapter this way, so no port is ever guessed.

#![allow(
    unsafe_code,
    reason = "pre_exec between fork and exec, to put the socket on descriptor 3"
)]

use std::net::TcpListener;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// The descriptor systemd passes the first socket in.
const LISTEN_FD: i32 = 3;

/// A command that runs `program` with `listener` inherited as its first
/// socket; add arguments, environment and I/O as usual. The caller keeps
/// `listener` open until the child is spawned.
pub fn command_with_listener(program: &Path, listener: &TcpListener) -> Command {
    command_with_descriptor(program, listener, "LISTEN_PID=$$ LISTEN_FDS=1")
}

/// A command that runs `program` with `socket` on descriptor 3 and the
/// shell assignments `environment` before it (`$$` is the program's own
/// pid), to hand it what systemd would not: a socket that does not listen,
/// `LISTEN_FDS=2`, a `LISTEN_PID` of another process, and so on.
pub fn command_with_descriptor(
    program: &Path,
    socket: &impl AsRawFd,
    environment: &str,
) -> Command {
    let fd = socket.as_raw_fd();
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(format!(r#"{environment} exec "$0" "$@""#))
        .arg(program);
    // SAFETY: between fork and exec only async-signal-safe calls (dup2,
    // fcntl) on a descriptor this process owns.
    unsafe {
        command.pre_exec(move || {
            if fd == LISTEN_FD {
                // dup2 onto itself would keep close-on-exec.
                let flags = libc::fcntl(fd, libc::F_GETFD);
                libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC);
            } else if libc::dup2(fd, LISTEN_FD) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command
}
