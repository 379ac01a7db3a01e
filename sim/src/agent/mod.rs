//! The scripted agent (`hc-sim agent`), the program the simulator runs in
//! an agent terminal. It puts its tty in raw mode, enables bracketed paste,
//! reports its state over OSC 7501 and answers each submitted prompt:
//! `working`, a reply quoting the prompt (inside synchronized output), then
//! `done` after a delay — or `blocked` (`/block`, until a prompt `y`),
//! `error` (`/error`), holding `working` (`/hold`, until a prompt `go`), or
//! exit code 3 (`/exit`). Input that arrives while it works is queued.

mod keys;

use std::io::Read;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use crate::tty::{RawMode, emit, say, visible};
use crate::wire::Status;
pub(crate) use keys::PromptReader;

/// The name the agent reports as its program.
pub(crate) const PROGRAM: &str = "sim-agent";
/// What a blocked agent asks (its `msg` too).
const APPROVE_QUESTION: &str = "approve? (y)";
/// What a failed task says (its `msg` too).
const FAILED: &str = "the task failed";
/// The prompt line it draws while waiting for input.
pub(crate) const PROMPT: &str = "sim-agent> ";
/// Prefix of each line of the reply that quotes a prompt.
pub(crate) const REPLY_PREFIX: &str = "reply: ";
/// The exit code of `/exit`.
pub(crate) const EXIT_CODE: u8 = 3;

const BRACKETED_PASTE_ON: &[u8] = b"\x1b[?2004h";
const SYNC_ON: &[u8] = b"\x1b[?2026h";
const SYNC_OFF: &[u8] = b"\x1b[?2026l";

/// Runs the agent on stdin/stdout until its input ends or `/exit`. Like a
/// conforming program it asks the terminal whether it speaks the Program
/// Status Protocol first, and reports only if it does.
pub(crate) fn run(delay: Duration) -> ExitCode {
    let raw = RawMode::enter();
    let reports = crate::tty::detect(&raw);
    emit(BRACKETED_PASTE_ON);
    emit(PROMPT.as_bytes());
    let mut agent = Agent {
        delay,
        mode: Mode::Ready,
        reports,
    };
    agent.report(Status::Idle);
    let (prompts, queue) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = PromptReader::default();
        let mut stdin = std::io::stdin();
        let mut buffer = [0; 4096];
        while let Ok(read @ 1..) = stdin.read(&mut buffer) {
            for prompt in reader.feed(&buffer[..read]) {
                if prompts.send(prompt).is_err() {
                    return;
                }
            }
        }
    });
    for prompt in queue {
        if let Some(code) = agent.answer(&prompt) {
            return ExitCode::from(code);
        }
    }
    ExitCode::SUCCESS
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Ready,
    /// Reported `blocked`; waits for a prompt `y`.
    Blocked,
    /// Holding `working`; waits for a prompt `go`.
    Holding,
}

struct Agent {
    delay: Duration,
    mode: Mode,
    /// The terminal answered the feature-detection query.
    reports: bool,
}

impl Agent {
    /// Answers one prompt; `Some(code)` when the agent should exit.
    fn answer(&mut self, prompt: &str) -> Option<u8> {
        emit(b"\r\n");
        let word = prompt.trim();
        let settled = match self.mode {
            Mode::Blocked if word == "y" => {
                say("approved");
                Some(Status::Done)
            }
            Mode::Blocked => {
                say("still waiting for y");
                None
            }
            Mode::Holding if word == "go" => {
                say("released");
                Some(Status::Done)
            }
            Mode::Holding => {
                say("holding: send go to release");
                None
            }
            Mode::Ready => return self.work(prompt),
        };
        if settled.is_some() {
            self.mode = Mode::Ready;
        }
        emit(PROMPT.as_bytes());
        if let Some(status) = settled {
            self.report(status);
        }
        None
    }

    /// A new task: report working, quote the prompt, then settle.
    fn work(&mut self, prompt: &str) -> Option<u8> {
        self.report(Status::Working);
        let mut reply = SYNC_ON.to_vec();
        for line in prompt.replace("\r\n", "\n").split(['\r', '\n']) {
            reply.extend_from_slice(format!("{REPLY_PREFIX}{}\r\n", visible(line)).as_bytes());
        }
        emit(&reply);
        let settled = if prompt.contains("/block") {
            emit(SYNC_OFF);
            say(APPROVE_QUESTION);
            self.mode = Mode::Blocked;
            Status::Blocked
        } else if prompt.contains("/error") {
            emit(SYNC_OFF);
            say(&format!("error: {FAILED}"));
            Status::Error
        } else if prompt.contains("/hold") {
            emit(SYNC_OFF);
            say("holding until go");
            self.mode = Mode::Holding;
            Status::Working
        } else if prompt.contains("/exit") {
            emit(SYNC_OFF);
            say("bye");
            return Some(EXIT_CODE);
        } else {
            // Half the work happens with the frame still open, so readers
            // can catch the screen mid-update (`complete: false`).
            std::thread::sleep(self.delay / 2);
            emit(SYNC_OFF);
            std::thread::sleep(self.delay - self.delay / 2);
            Status::Done
        };
        emit(PROMPT.as_bytes());
        match settled {
            Status::Working => {}
            // Why it waits, as agents that speak the protocol say it.
            Status::Blocked => self.report_why(
                settled,
                Some(termstate_core::Kind::Permission),
                Some(APPROVE_QUESTION),
            ),
            Status::Error => self.report_why(settled, None, Some(FAILED)),
            _ => self.report(settled),
        }
        None
    }
}

impl Agent {
    /// Reports a state under the agent's program name, if the terminal
    /// speaks the protocol.
    fn report(&self, status: Status) {
        self.report_why(status, None, None);
    }

    /// Reports a state with why it holds.
    fn report_why(&self, status: Status, kind: Option<termstate_core::Kind>, msg: Option<&str>) {
        if self.reports {
            crate::tty::report_why(status, PROGRAM, kind, msg);
        }
    }
}
