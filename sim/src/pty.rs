//! Real programs in real PTYs: starting one (40×120, `TERM=xterm-256color`),
//! the thread that feeds its output to its terminal, the thread that notices
//! its exit, and killing it. The program is reaped here (not by
//! `portable-pty`) so a signal death reads as `128 + signal` like a shell
//! reports it, and so a kill can never hit a recycled pid.

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};

use crate::clock::unix_ms;
use crate::terminal::{Exit, Terminal};
use crate::wire::{TERMINAL_COLS, TERMINAL_ROWS};

/// The `TERM` every simulated terminal advertises.
const TERM: &str = "xterm-256color";
/// Bytes read from a PTY at a time.
const READ_CHUNK_BYTES: usize = 16 * 1024;

/// What to run in a new PTY.
#[derive(Debug, Clone)]
pub struct ProgramSpec {
    pub path: PathBuf,
    pub args: Vec<String>,
    pub cwd: PathBuf,
}

impl ProgramSpec {
    /// The name a record shows until the program reports its own.
    pub fn basename(&self) -> String {
        self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |name| name.to_string_lossy().into_owned(),
        )
    }
}

/// A running program's handles. Its output reader is handed to
/// [`start_threads`] separately.
pub struct PtyProgram {
    pid: libc::pid_t,
    writer: Mutex<Box<dyn Write + Send>>,
    /// Kept open for the program's lifetime: dropping it hangs the PTY up.
    _master: Mutex<Box<dyn MasterPty + Send>>,
}

/// Starts `spec` in a new PTY.
pub fn spawn(spec: &ProgramSpec) -> io::Result<(PtyProgram, Box<dyn Read + Send>)> {
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
    Ok((program, reader))
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

    /// Sends SIGKILL. Call only while the terminal's state is locked and its
    /// exit is not recorded: the program is then alive or an unreaped
    /// zombie, so the pid is still its own.
    pub fn kill(&self) {
        // SAFETY: kill(2) has no memory effects; see above for why the pid is ours.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
        }
    }

    fn pid(&self) -> libc::pid_t {
        self.pid
    }
}

/// Starts the output thread and the exit thread of a PTY terminal.
pub fn start_threads(terminal: Arc<Terminal>, mut reader: Box<dyn Read + Send>) -> io::Result<()> {
    let output_terminal = Arc::clone(&terminal);
    std::thread::Builder::new()
        .name(format!("pty-out-{}", terminal.address))
        .spawn(move || {
            let mut buffer = vec![0; READ_CHUNK_BYTES];
            loop {
                match reader.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(read) => {
                        output_terminal.apply_output(&buffer[..read]);
                    }
                    Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                    // EIO: every holder of the PTY's other end is gone.
                    Err(_) => break,
                }
            }
        })?;
    std::thread::Builder::new()
        .name(format!("pty-exit-{}", terminal.address))
        .spawn(move || watch_exit(&terminal))?;
    Ok(())
}

/// Waits for the program to exit, then reaps it and records the exit under
/// the terminal's state lock (see [`PtyProgram::kill`]).
fn watch_exit(terminal: &Terminal) {
    let crate::terminal::Backend::Pty(program) = &terminal.backend else {
        return;
    };
    let pid = program.pid();
    loop {
        // SAFETY: siginfo_t is plain data; waitid fills it. WNOWAIT leaves
        // the zombie in place so the pid cannot be recycled yet.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let id = libc::id_t::try_from(pid).unwrap_or_default();
        let result =
            unsafe { libc::waitid(libc::P_PID, id, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if result == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            break;
        }
    }
    let mut state = terminal.state();
    let mut status = 0;
    // SAFETY: reaps our own child; status is a valid out-pointer.
    let reaped = unsafe { libc::waitpid(pid, &mut status, 0) };
    let exit_code = if reaped != pid {
        -1
    } else if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        -1
    };
    state.exit.get_or_insert(Exit {
        finished_ms: unix_ms().max(terminal.created_ms),
        exit_code,
    });
    drop(state);
    terminal.notify_change();
}
