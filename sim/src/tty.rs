//! What the simulator's own programs (the scripted agent and the line
//! reader) share when they talk to their terminal: unbuffered writes,
//! whole lines, OSC 7501 status reports, and showing control characters
//! from their input in caret notation instead of executing them. How each
//! program reads its input and what it answers is its own business.

use std::fs::File;
use std::io::Write;
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;

use crate::wire::Status;

/// Writes to the terminal unbuffered: one `write(2)` per call unless the
/// kernel takes less.
pub fn emit(bytes: &[u8]) {
    // SAFETY: fd 1 is open for the process's life; ManuallyDrop keeps this
    // handle from closing it.
    let mut stdout = ManuallyDrop::new(unsafe { File::from_raw_fd(1) });
    // A vanished terminal ends the program through its input anyway.
    let _ = stdout.write_all(bytes);
}

/// Writes one line and moves to the start of the next (CR LF, so it reads
/// the same whether or not the tty translates LF).
pub fn say(line: &str) {
    emit(format!("{line}\r\n").as_bytes());
}

/// Reports a state over OSC 7501 (contract §6) with `;program=`, in one
/// write.
pub fn report(status: Status, program: &str) {
    let sequence = format!("\x1b]7501;status={};program={program}\x07", status.as_str());
    emit(sequence.as_bytes());
}

/// Shows control characters in caret notation (and C1 controls as
/// `<U+XXXX>`) so text quoted from input cannot drive the program's own
/// screen.
pub fn visible(line: &str) -> String {
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
