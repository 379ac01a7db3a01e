//! One terminal: its identity (address, created_ms), what it shows (a VT
//! screen fed through the OSC filter), what its program reported (status,
//! status_seq, program name), whether that program has exited, and its input
//! lock. It hears from its program as the program's [`ProgramEvents`];
//! starting, writing to and killing programs is `pty`'s business, and how
//! input is written under the lock is `input`'s.

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::watch;

mod screen;

use screen::Screen;

use crate::clock::{unix_ms, unix_us};
use crate::osc::ProgramReport;
use crate::pty::{ProgramEvents, PtyProgram, Reap};
use crate::wire::{Record, SUBMIT_KEY_ENTER, Status, StatusWhy, TERMINAL_COLS, TERMINAL_ROWS};

/// Exit code recorded for a SIGKILL death (`128 + 9`, as a shell reports it).
const KILLED_EXIT_CODE: i32 = 137;
/// Program name of the lightweight records `--idle-records` creates.
pub(crate) const IDLE_RECORD_PROGRAM: &str = "idle-record";

/// Where a terminal's input goes.
pub enum Backend {
    /// A real program in a PTY.
    Pty(PtyProgram),
    /// No program: input is accepted and dropped (idle records).
    Sink,
}

/// How a program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    pub finished_ms: u64,
    pub exit_code: i32,
}

/// Everything about a terminal that changes, behind one lock so a record or
/// a read is always a consistent snapshot.
pub struct State {
    pub status: Status,
    pub status_seq: u64,
    /// Why the status holds and since when; nothing before the first
    /// report.
    pub why: StatusWhy,
    /// The program name: the spawned binary's basename until a report
    /// carries `app=`.
    pub program: String,
    pub exit: Option<Exit>,
    /// When input was last written, for the keyboard-quiet wait.
    pub last_input: Option<Instant>,
    /// Characters typed at the keyboard (control `type`) since the last
    /// Enter: the user's draft, which draft protection holds sends for.
    pub draft: usize,
    /// Bytes of output seen so far.
    pub output_bytes: u64,
    screen: Option<Screen>,
}

/// A snapshot of the screen for `terminal.read`.
pub struct ScreenText {
    pub text: String,
    pub complete: bool,
    pub status: Status,
    pub status_seq: u64,
    pub why: StatusWhy,
}

pub struct Terminal {
    pub address: String,
    pub created_ms: u64,
    pub cwd: String,
    pub backend: Backend,
    /// The status word hc shows instead of the status, when it shows one
    /// outside the six (`--evidence`); the status itself stays `unknown`.
    pub shown_status: Option<&'static str>,
    state: Mutex<State>,
    /// Serializes input to this terminal; held from the guard check through
    /// the write (contract §4).
    pub input_lock: tokio::sync::Mutex<()>,
    /// Bumped on every output chunk and on exit, so waiters need not poll.
    changes: watch::Sender<u64>,
}

impl Terminal {
    /// A terminal whose program has not reported yet.
    pub fn with_program(
        address: String,
        created_ms: u64,
        cwd: String,
        program: String,
        backend: Backend,
    ) -> Self {
        let state = State {
            status: Status::Unknown,
            status_seq: 0,
            why: StatusWhy::default(),
            program,
            exit: None,
            last_input: None,
            draft: 0,
            output_bytes: 0,
            screen: Some(Screen::new()),
        };
        Self::new(address, created_ms, cwd, backend, state)
    }

    /// A lightweight idle record: no program, no screen, status `idle`.
    pub fn idle_record(address: String, created_ms: u64, cwd: String) -> Self {
        Self::programless(address, created_ms, cwd, Status::Idle)
    }

    /// A record with no program and no screen, in `status`.
    fn programless(address: String, created_ms: u64, cwd: String, status: Status) -> Self {
        let state = State {
            status,
            status_seq: 1,
            why: StatusWhy {
                since_ms: Some(created_ms),
                ..StatusWhy::default()
            },
            program: IDLE_RECORD_PROGRAM.to_string(),
            exit: None,
            last_input: None,
            draft: 0,
            output_bytes: 0,
            screen: None,
        };
        Self::new(address, created_ms, cwd, Backend::Sink, state)
    }

    /// A record with no program whose status is shown as `word`, a word
    /// outside the six (its status, for hc's guard, is `unknown`).
    pub fn record_showing(
        address: String,
        created_ms: u64,
        cwd: String,
        word: &'static str,
    ) -> Self {
        let mut terminal = Self::programless(address, created_ms, cwd, Status::Unknown);
        terminal.shown_status = Some(word);
        terminal
    }

    fn new(address: String, created_ms: u64, cwd: String, backend: Backend, state: State) -> Self {
        Terminal {
            address,
            created_ms,
            cwd,
            backend,
            shown_status: None,
            state: Mutex::new(state),
            input_lock: tokio::sync::Mutex::new(()),
            changes: watch::Sender::new(0),
        }
    }

    /// The terminal's state. A panic elsewhere never makes it unreadable.
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn record(&self) -> Record {
        let state = self.state();
        let title = state
            .screen
            .as_ref()
            .and_then(Screen::title)
            .unwrap_or_else(|| state.program.clone());
        Record {
            address: self.address.clone(),
            created_ms: self.created_ms,
            finished_ms: state.exit.map(|exit| exit.finished_ms),
            exit_code: state.exit.map(|exit| exit.exit_code),
            status: state.status,
            status_seq: state.status_seq,
            why: state.why.clone(),
            title,
            cwd: self.cwd.clone(),
            program: state.program.clone(),
            submit_key: SUBMIT_KEY_ENTER,
            rows: TERMINAL_ROWS,
            cols: TERMINAL_COLS,
        }
    }

    pub fn exit(&self) -> Option<Exit> {
        self.state().exit
    }

    /// Feeds one chunk of program output through the filter and the parser.
    /// Returns the wall clock (µs since the Unix epoch) read once the screen
    /// holds the chunk, still under the state lock, so every read that sees
    /// the chunk began after that instant; `None` for a terminal without a
    /// screen (an idle record), which ignores the chunk.
    pub fn apply_output(&self, chunk: &[u8]) -> Option<u64> {
        let (shown_us, answers) = {
            let mut state = self.state();
            let screen = state.screen.as_mut()?;
            let filtered = screen.feed(chunk);
            for report in filtered.reports {
                state.apply_report(report);
            }
            state.output_bytes += chunk.len() as u64;
            (unix_us(), filtered.answers)
        };
        // The terminal's answers to the program's queries go to its input
        // outside the input lock, as a terminal's replies do: programs
        // query when they start, before their first report, so no send
        // (which needs a report) is under way then.
        if !answers.is_empty()
            && let Backend::Pty(program) = &self.backend
        {
            let _ = program.write_all(&answers);
        }
        self.notify_change();
        Some(shown_us)
    }

    /// Keystrokes typed at the keyboard, as the draft sees them: Enter (CR
    /// or LF) submits the draft, ^C or ^U clears it, DEL or BS takes one
    /// character back, anything else adds to it.
    pub fn typed(&self, keys: &str) {
        {
            let mut state = self.state();
            for key in keys.chars() {
                state.draft = match key {
                    '\r' | '\n' | '\u{3}' | '\u{15}' => 0,
                    '\u{7f}' | '\u{8}' => state.draft.saturating_sub(1),
                    _ => state.draft + 1,
                };
            }
        }
        self.notify_change();
    }

    /// Wakes everyone in [`Terminal::wait_for`].
    fn notify_change(&self) {
        self.changes.send_modify(|generation| *generation += 1);
    }

    /// Kills the program with SIGKILL; an idle record finishes at once, as
    /// if it had been. Nothing happens to a finished terminal.
    pub fn kill(&self) {
        let mut state = self.state();
        if state.exit.is_some() {
            return;
        }
        match &self.backend {
            Backend::Pty(program) => program.kill(),
            Backend::Sink => {
                state.exit = Some(Exit {
                    finished_ms: unix_ms().max(self.created_ms),
                    exit_code: KILLED_EXIT_CODE,
                });
                drop(state);
                self.notify_change();
            }
        }
    }

    /// True when the program enabled bracketed paste (mode 2004).
    pub fn bracketed_paste(&self) -> bool {
        let state = self.state();
        state.screen.as_ref().is_some_and(Screen::bracketed_paste)
    }

    /// The screen as `terminal.read` returns it: each row's trailing blanks
    /// trimmed, trailing empty rows dropped, rows joined by `\n`; with
    /// `lines > 0`, up to that many scrollback lines come first.
    pub fn read(&self, lines: u64) -> ScreenText {
        let mut state = self.state();
        let (status, status_seq) = (state.status, state.status_seq);
        let why = state.why.clone();
        let Some(screen) = state.screen.as_mut() else {
            return ScreenText {
                text: String::new(),
                complete: true,
                status,
                status_seq,
                why,
            };
        };
        let (text, complete) = screen.text(lines);
        ScreenText {
            text,
            complete,
            status,
            status_seq,
            why,
        }
    }

    /// Waits until `condition` holds on the state or `timeout` passes;
    /// returns whether it held.
    pub async fn wait_for(&self, timeout: Duration, condition: impl Fn(&State) -> bool) -> bool {
        let mut changes = self.changes.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if condition(&self.state()) {
                return true;
            }
            match tokio::time::timeout_at(deadline, changes.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => return condition(&self.state()),
            }
        }
    }
}

impl ProgramEvents for Terminal {
    fn output(&self, chunk: &[u8]) {
        self.apply_output(chunk);
    }

    /// Reaps under the state lock, the lock [`Terminal::kill`] holds.
    fn exited(&self, reap: Reap) {
        let mut state = self.state();
        let exit_code = reap.exit_code();
        state.exit.get_or_insert(Exit {
            finished_ms: unix_ms().max(self.created_ms),
            exit_code,
        });
        drop(state);
        self.notify_change();
    }
}

impl State {
    fn apply_report(&mut self, report: ProgramReport) {
        let (status, program, kind, msg) = match report {
            ProgramReport::State {
                status,
                program,
                kind,
                msg,
            } => (status, program, kind, msg),
            ProgramReport::Cleared => (Status::Unknown, None, None, None),
        };
        if status != self.status {
            self.status = status;
            self.status_seq += 1;
            self.why.since_ms = Some(unix_ms());
        }
        // Why the status holds is the latest root report's, whatever it
        // repeats (child reports never reach here).
        self.why.kind = kind;
        self.why.msg = msg;
        if let Some(program) = program {
            self.program = program;
        }
    }
}
