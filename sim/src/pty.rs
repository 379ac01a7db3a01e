//! Real programs in real PTYs: starting one (40×120, `TERM=xterm-256color`),
//! writing to it, killing it, the thread that hands its output on and the
//! thread that notices its exit. The program is reaped here (not by
//! `portable-pty`) so a signal death reads as `128 + signal` like a shell
//! reports it, and so a kill can never hit a recycled pid. What the output
//! means, and where the exit is recorded, is for whoever watches it
//! ([`ProgramEvents`]; the terminal, which owns the screen).

#![allow(
    unsafe_code,
    reason = "kill, waitid and waitpid on the child program it started"
)]

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};

use crate::wire::{TERMINAL_COLS, TERMINAL_ROWS};

/// The `TERM` every simulated terminal advertises.
const TERM: &str = "xterm-256color";
/// Bytes read from a PTY at a time.
const READ_CHUNK_BYTES: usize = 16 * 1024;

/// What to run in a new PTY.
#[derive(Debug, Clone)]
pub(crate) struct ProgramSpec {
    pub path: PathBuf,
    pub args: Vec<String>,
    pub cwd: PathBuf,
}

impl ProgramSpec {
    /// The name a record shows until the program reports its own.
    pub(crate) fn basename(&self) -> String {
        self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |name| name.to_string_lossy().into_owned(),
        )
    }
}

/// A running program's input and its right to be killed. Its output and
/// its exit are watched through the [`Watch`] that [`spawn`] returns beside it.
pub struct PtyProgram {
    pid: libc::pid_t,
    writer: Mutex<Box<dyn Write + Send>>,
    /// Kept open for the program's lifetime: dropping it hangs the PTY up.
    _master: Mutex<Box<dyn MasterPty + Send>>,
}

/// A started program's output and exit, not yet watched: [`Watch::start`]
/// hands them to their watcher once it exists.
pub(crate) struct Watch {
    pid: libc::pid_t,
    reader: Box<dyn Read + Send>,
}

/// Who hears from a program in a PTY, each on a thread of its own.
pub(crate) trait ProgramEvents: Send + Sync + 'static {
    /// One chunk of the program's output, in order.
    fn output(&self, chunk: &[u8]);

    /// The program exited and is not yet reaped. The watcher reaps it with
    /// [`Reap::exit_code`] under the same lock it holds around
    /// [`PtyProgram::kill`], so a kill never reaches a recycled pid.
    fn exited(&self, reap: Reap);
}

/// The right to reap an exited program, once.
pub(crate) struct Reap {
    pid: libc::pid_t,
}

/// Starts `spec` in a new PTY.
pub(crate) fn spawn(spec: &ProgramSpec) -> io::Result<(PtyProgram, Watch)> {
    let size = PtySize {
        rows: TERMINAL_ROWS,
        cols: TERMINAL_COLS,
        pixel_width: 0,
        pixel_height: 0,
    };
    let pair = native_pty_system()
        .openpty(size)
        .map_err(io::Error::other)?;
    let mut command = CommandBuilder::new(&spec.path);
    command.args(&spec.args);
    command.cwd(&spec.cwd);
    command.env("TERM", TERM);
    let child = pair
        .slave
        .spawn_command(command)
        .map_err(io::Error::other)?;
    // The parent's copy of the slave must close, or reads never see EOF.
    drop(pair.slave);
    let pid = child
        .process_id()
        .and_then(|pid| libc::pid_t::try_from(pid).ok())
        .ok_or_else(|| io::Error::other("spawned program has no pid"))?;
    let reader = pair.master.try_clone_reader().map_err(io::Error::other)?;
    let writer = pair.master.take_writer().map_err(io::Error::other)?;
    let program = PtyProgram {
        pid,
        writer: Mutex::new(writer),
        _master: Mutex::new(pair.master),
    };
    Ok((program, Watch { pid, reader }))
}

impl PtyProgram {
    /// Writes all of `bytes` to the program's input (blocking).
    pub fn write_all(&self, bytes: &[u8]) -> io::Result<()> {
        let mut writer = self
            .writer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        writer.write_all(bytes)?;
        writer.flush()
    }

    /// Sends SIGKILL. Call only under the lock the watcher reaps under
    /// ([`ProgramEvents::exited`]), and only while no exit is recorded: the
    /// program is then alive or an unreaped zombie, so the pid is its own.
    pub fn kill(&self) {
        // SAFETY: kill(2) has no memory effects; see above for why the pid is ours.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
        }
    }
}

impl Watch {
    /// Starts the output thread and the exit thread (named after `name`),
    /// which report to `events`.
    pub(crate) fn start(self, name: &str, events: Arc<impl ProgramEvents>) -> io::Result<()> {
        let Watch { pid, mut reader } = self;
        let output_events = Arc::clone(&events);
        std::thread::Builder::new()
            .name(format!("pty-out-{name}"))
            .spawn(move || {
                let mut buffer = vec![0; READ_CHUNK_BYTES];
                loop {
                    match reader.read(&mut buffer) {
                        Ok(0) => break,
                        Ok(read) => output_events.output(&buffer[..read]),
                        Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                        // EIO: every holder of the PTY's other end is gone.
                        Err(_) => break,
                    }
                }
            })?;
        std::thread::Builder::new()
            .name(format!("pty-exit-{name}"))
            .spawn(move || {
                wait_exited(pid);
                events.exited(Reap { pid });
            })?;
        Ok(())
    }
}

/// Waits until the program has exited, leaving it unreaped (`WNOWAIT`) so
/// its pid cannot be recycled yet.
fn wait_exited(pid: libc::pid_t) {
    loop {
        // SAFETY: siginfo_t is plain data; waitid fills it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let id = libc::id_t::try_from(pid).unwrap_or_default();
        // SAFETY: waits on our own child; info is a valid out-pointer, and
        // WNOWAIT leaves the child unreaped so its pid stays ours.
        let result =
            unsafe { libc::waitid(libc::P_PID, id, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if result == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return;
        }
    }
}

impl Reap {
    /// Reaps the program; its exit code, `128 + signal` for a signal death,
    /// or -1 if it could not be read.
    pub(crate) fn exit_code(self) -> i32 {
        let mut status = 0;
        // SAFETY: reaps our own child; status is a valid out-pointer.
        let reaped = unsafe { libc::waitpid(self.pid, &mut status, 0) };
        if reaped != self.pid {
            -1
        } else if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else if libc::WIFSIGNALED(status) {
            128 + libc::WTERMSIG(status)
        } else {
            -1
        }
    }
}
