//! What the simulator's own programs (the scripted agent and the line
//! reader) share when they talk to their terminal: unbuffered writes,
//! whole lines, the Program Status Protocol as a conforming program speaks
//! it (OSC 7501 revision 0.4: feature detection first, then `state=…:app=…`
//! reports, only if the terminal answered), raw mode, and showing control
//! characters from their input in caret notation instead of executing
//! them. How each program reads its input and what it answers is its own
//! business.

#![allow(
    unsafe_code,
    reason = "raw stdout, poll, read and termios on its own terminal"
)]

use std::fs::File;
use std::io::Write;
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;
use std::time::{Duration, Instant};

use termstate_core::detect::{Detector, Outcome, QUERY};
use termstate_core::{Report, Terminator};

use crate::wire::Status;

/// How long a program waits for the terminal's answer to the feature
/// detection query before it takes the protocol as unsupported.
pub(crate) const DETECTION_TIMEOUT: Duration = Duration::from_secs(5);

/// Writes to the terminal unbuffered: one `write(2)` per call unless the
/// kernel takes less.
pub(crate) fn emit(bytes: &[u8]) {
    // SAFETY: fd 1 is open for the process's life; ManuallyDrop keeps this
    // handle from closing it.
    let mut stdout = ManuallyDrop::new(unsafe { File::from_raw_fd(1) });
    // A vanished terminal ends the program through its input anyway.
    let _ = stdout.write_all(bytes);
}

/// Writes one line and moves to the start of the next (CR LF, so it reads
/// the same whether or not the tty translates LF).
pub(crate) fn say(line: &str) {
    emit(format!("{line}\r\n").as_bytes());
}

/// Reports a state over OSC 7501 (contract §6) with `app=`, in one write,
/// ended by ST. `unknown` is not a state a program reports: nothing is
/// written for it.
pub(crate) fn report(status: Status, program: &str) {
    report_why(status, program, None, None);
}

/// Reports a state with why it holds: a `kind` (with `blocked`) and a
/// `msg`, as an agent that asks a question does.
pub(crate) fn report_why(
    status: Status,
    program: &str,
    kind: Option<termstate_core::Kind>,
    msg: Option<&str>,
) {
    let Some(state) = status.to_state() else {
        return;
    };
    let mut builder = Report::builder(state).app(program);
    if let Some(kind) = kind {
        builder = builder.kind(kind);
    }
    if let Some(msg) = msg {
        builder = builder.msg(msg);
    }
    let report = builder
        .build()
        .expect("the simulator's program names and messages are valid");
    let mut sequence = String::new();
    report
        .write(&mut sequence, Terminator::St)
        .expect("writing to a String cannot fail");
    emit(sequence.as_bytes());
}

/// Feature detection as the spec describes it: the OSC 7501 query and
/// primary device attributes right after it, then the terminal's replies
/// read (a byte at a time, so nothing after them is taken from the
/// program's input) until the device attributes answer or
/// [`DETECTION_TIMEOUT`] passes. Whether the terminal speaks the protocol.
/// The tty must be in raw mode (the `RawMode` proves it), or the replies
/// would wait in its line buffer, echoed.
pub(crate) fn detect(_raw: &RawMode) -> bool {
    emit(QUERY);
    let deadline = Instant::now() + DETECTION_TIMEOUT;
    let mut detector = Detector::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(byte) = read_byte(left) else {
            return matches!(detector.finish(), Outcome::Supported(_));
        };
        if let Some(outcome) = detector.feed(&[byte]) {
            return matches!(outcome, Outcome::Supported(_));
        }
    }
}

/// One byte of stdin, read past Rust's buffered `Stdin` (which would keep
/// what follows), or none within `timeout`.
fn read_byte(timeout: Duration) -> Option<u8> {
    let mut poll = libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    };
    let millis = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: one pollfd for fd 0, which is open for the process's life.
    if unsafe { libc::poll(&mut poll, 1, millis) } <= 0 {
        return None;
    }
    let mut byte = 0u8;
    // SAFETY: reads at most one byte into a local of that size.
    let read = unsafe { libc::read(0, (&mut byte as *mut u8).cast(), 1) };
    (read == 1).then_some(byte)
}

/// The tty in raw mode (no echo, no line editing, no signals) until dropped.
pub(crate) struct RawMode {
    saved: Option<libc::termios>,
}

impl RawMode {
    pub(crate) fn enter() -> RawMode {
        // SAFETY: termios is plain data filled by tcgetattr; fd 0 is ours.
        unsafe {
            let mut termios: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut termios) != 0 {
                return RawMode { saved: None };
            }
            let saved = termios;
            libc::cfmakeraw(&mut termios);
            libc::tcsetattr(0, libc::TCSANOW, &termios);
            RawMode { saved: Some(saved) }
        }
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        if let Some(saved) = &self.saved {
            // SAFETY: restores the settings read in `enter`.
            unsafe {
                libc::tcsetattr(0, libc::TCSANOW, saved);
            }
        }
    }
}

/// Shows control characters in caret notation (and C1 controls as
/// `<U+XXXX>`) so text quoted from input cannot drive the program's own
/// screen.
pub(crate) fn visible(line: &str) -> String {
    let mut shown = String::with_capacity(line.len());
    for c in line.chars() {
        match c {
            '\t' => shown.push(c),
            '\0'..='\x1f' => {
                shown.push('^');
                shown.push(char::from(c as u8 + 0x40));
            }
            '\x7f' => shown.push_str("^?"),
            '\u{80}'..='\u{9f}' => shown.push_str(&format!("<U+{:04X}>", u32::from(c))),
            _ => shown.push(c),
        }
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_executed() {
        assert_eq!(visible("a\x1b[31mb\x7f\u{85}"), "a^[[31mb^?<U+0085>");
    }
}
