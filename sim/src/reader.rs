//! The line reader (`hc-sim reader`), the program of a `reader` terminal: a
//! plain command-line program that never enables bracketed paste (mode
//! 2004). Its tty stays in the kernel's canonical mode, so input is echoed
//! and handed over a line at a time, and every CR or LF in a paste is an
//! Enter. It reports `idle` over OSC 7501 whenever it waits at its prompt.
//! A line `ask` makes it print a question, report `working`, and take the
//! NEXT line as the answer; any other line is quoted back. This shows what
//! a multi-line prompt does to such a program: its second line answers
//! whatever its first line started.

use std::io::{BufRead, StdinLock};
use std::process::ExitCode;

use crate::tty::{emit, say, visible};
use crate::wire::Status;

/// The name the reader reports as its program.
pub(crate) const PROGRAM: &str = "reader";
/// The prompt it draws before each `idle` report.
pub(crate) const PROMPT: &str = "reader> ";
/// The command line that makes it ask a question.
pub(crate) const ASK: &str = "ask";
/// What it prints for [`ASK`] before it reads the answer.
pub(crate) const QUESTION: &str = "question: answer?";
/// Prefix of the line that quotes an answer.
pub(crate) const ANSWERED_PREFIX: &str = "answered: ";
/// Prefix of the line that quotes any other command line.
pub(crate) const LINE_PREFIX: &str = "line: ";

/// Runs the reader on stdin/stdout until its input ends.
pub(crate) fn run() -> ExitCode {
    // Like a conforming program, it reports only to a terminal that
    // answered the protocol's feature-detection query.
    let reports = crate::tty::detect(&crate::tty::RawMode::enter());
    let report = |status: Status| {
        if reports {
            crate::tty::report(status, PROGRAM);
        }
    };
    let mut input = Lines(std::io::stdin().lock());
    loop {
        emit(PROMPT.as_bytes());
        report(Status::Idle);
        let Some(line) = input.next_line() else {
            return ExitCode::SUCCESS;
        };
        if line == ASK {
            say(QUESTION);
            report(Status::Working);
            let Some(answer) = input.next_line() else {
                return ExitCode::SUCCESS;
            };
            say(&format!("{ANSWERED_PREFIX}{}", visible(&answer)));
        } else {
            say(&format!("{LINE_PREFIX}{}", visible(&line)));
        }
    }
}

/// Stdin, a line at a time.
struct Lines(StdinLock<'static>);

impl Lines {
    /// The next line without its line end (LF, or CR LF when the tty does
    /// not translate CR); `None` once input ends or fails.
    fn next_line(&mut self) -> Option<String> {
        let mut line = Vec::new();
        match self.0.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(strip_line_end(&line)),
        }
    }
}

fn strip_line_end(line: &[u8]) -> String {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    String::from_utf8_lossy(line).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ends_are_stripped_and_nothing_else() {
        assert_eq!(strip_line_end(b"ask\n"), "ask");
        assert_eq!(strip_line_end(b"ask\r\n"), "ask");
        assert_eq!(strip_line_end(b" two  words \n"), " two  words ");
        assert_eq!(strip_line_end(b"no end"), "no end");
    }
}
