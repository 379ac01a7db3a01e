//! The filter between a program's output and the VT parser, as hc's is:
//! it takes the Program Status Protocol (OSC 7501, revision 0.4) out of
//! the byte stream (contract §6), answers the protocol's feature-detection
//! query and the primary device attributes query that follows it, and
//! watches mode 2026 (synchronized output) so `terminal.read` can say
//! whether the screen was caught mid-update. Sequences may arrive split
//! across any number of reads; everything else passes through untouched for
//! `vt100` to interpret.
//!
//! The OSC 7501 grammar is `termstate-core`'s (`state=…:app=…`, `kind`,
//! `msg` in base64, `progress`, `id` for a child record, `clear`, ended by
//! ST or BEL): no hand-written parser here. A report with `id=` describes
//! a sub-task and changes nothing of the terminal; `app` names its program.

use termstate_core::scan::{Event, Scanner};
use termstate_core::{Capabilities, Message, Terminator};

use crate::wire::Status;

const ESC: u8 = 0x1b;
/// The private mode a program sets while it draws a frame atomically.
const SYNCHRONIZED_OUTPUT_MODE: &[u8] = b"2026";
/// A control sequence longer than this is not watched (real ones are a few
/// bytes); it still reaches the screen unchanged.
const MAX_CSI_BYTES: usize = 64;
/// hc's answer to primary device attributes (`CSI c`): a VT220-class
/// terminal. Programs send it right after the OSC 7501 query, and take an
/// answer to it without a 7501 reply first as "not supported".
pub(crate) const DA1_REPLY: &[u8] = b"\x1b[?62;22c";

/// What a program said to its terminal over OSC 7501.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProgramReport {
    /// The root record's state, its `app` when the report named one, and
    /// why it holds: `kind` (with `blocked`) and `msg`, decoded.
    State {
        status: Status,
        program: Option<String>,
        kind: Option<&'static str>,
        msg: Option<String>,
    },
    /// `state=clear` for the root record: the program reports nothing now.
    Cleared,
}

/// Where the CSI watcher is in the pass-through bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Csi {
    Ground,
    Escape,
    /// Inside `ESC [`; its parameter bytes are in `OscFilter::csi`.
    Params,
}

/// The filter; one per terminal, fed every chunk the program writes.
#[derive(Debug)]
pub(crate) struct OscFilter {
    scanner: Scanner,
    csi_state: Csi,
    csi: Vec<u8>,
    synchronized: bool,
}

impl Default for OscFilter {
    fn default() -> Self {
        OscFilter {
            scanner: Scanner::new(),
            csi_state: Csi::Ground,
            csi: Vec::new(),
            synchronized: false,
        }
    }
}

/// What one chunk of output held besides the screen's bytes.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Filtered {
    /// Status reports of the root record, in order.
    pub reports: Vec<ProgramReport>,
    /// Bytes the terminal answers with (to the program's input), in order.
    pub answers: Vec<u8>,
}

impl OscFilter {
    /// True while the program has synchronized output on (`ESC[?2026h`
    /// seen, `ESC[?2026l` not yet).
    pub(crate) fn synchronized(&self) -> bool {
        self.synchronized
    }

    /// Filters one chunk: bytes for the screen go to `screen`; reports and
    /// answers to `filtered`, in order. A sequence cut by the end of the
    /// chunk is held until the next one.
    pub(crate) fn feed(&mut self, input: &[u8], screen: &mut Vec<u8>, filtered: &mut Filtered) {
        let Self {
            scanner,
            csi_state,
            csi,
            synchronized,
        } = self;
        scanner.feed(input, |event| match event {
            Event::Passthrough(bytes) => {
                watch_csi(bytes, csi_state, csi, synchronized, &mut filtered.answers);
                screen.extend_from_slice(bytes);
            }
            Event::Sequence {
                message,
                terminator,
            } => match message {
                Ok(Message::Report(report)) if report.id.is_none() => {
                    filtered.reports.push(ProgramReport::State {
                        status: Status::from_state(report.state),
                        program: report.app.map(|app| app.as_str().to_owned()),
                        kind: report.kind.map(termstate_core::Kind::as_str),
                        msg: report.msg.and_then(|msg| {
                            let mut decoded = vec![0; msg.len()];
                            msg.decode_into(&mut decoded).map(str::to_owned)
                        }),
                    });
                }
                Ok(Message::Clear { id: None }) => filtered.reports.push(ProgramReport::Cleared),
                // The feature-detection query (a program never sends the
                // reply form): answered in the terminator it came with.
                Ok(Message::Feature(_)) => answer_query(terminator, &mut filtered.answers),
                // A child record's report or clear, or a sequence the spec
                // says to discard: taken off the screen, changing nothing.
                Ok(_) | Err(_) => {}
            },
        });
    }
}

/// The capability reply: every revision-0.4 state and kind.
fn answer_query(terminator: Terminator, answers: &mut Vec<u8>) {
    let mut reply = String::new();
    Capabilities::default()
        .write_reply(&mut reply, terminator)
        .expect("writing to a String cannot fail");
    answers.extend_from_slice(reply.as_bytes());
}

/// Follows control sequences in pass-through bytes (without changing
/// them): `ESC [ ? … 2026 … h|l` turns synchronized output on or off, and
/// `ESC [ c` / `ESC [ 0 c` asks for the device attributes.
fn watch_csi(
    bytes: &[u8],
    state: &mut Csi,
    params: &mut Vec<u8>,
    synchronized: &mut bool,
    answers: &mut Vec<u8>,
) {
    for &byte in bytes {
        *state = match (*state, byte) {
            (_, ESC) => Csi::Escape,
            (Csi::Escape, b'[') => {
                params.clear();
                Csi::Params
            }
            (Csi::Params, 0x20..=0x3f) if params.len() < MAX_CSI_BYTES => {
                params.push(byte);
                Csi::Params
            }
            (Csi::Params, 0x40..=0x7e) => {
                finish_csi(params, byte, synchronized, answers);
                Csi::Ground
            }
            _ => Csi::Ground,
        };
    }
}

fn finish_csi(params: &[u8], last: u8, synchronized: &mut bool, answers: &mut Vec<u8>) {
    if last == b'c' && (params.is_empty() || params == b"0") {
        answers.extend_from_slice(DA1_REPLY);
        return;
    }
    let Some(modes) = params.strip_prefix(b"?") else {
        return;
    };
    if modes
        .split(|&b| b == b';')
        .any(|mode| mode == SYNCHRONIZED_OUTPUT_MODE)
    {
        match last {
            b'h' => *synchronized = true,
            b'l' => *synchronized = false,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&[u8]]) -> (OscFilter, Vec<u8>, Filtered) {
        let mut filter = OscFilter::default();
        let (mut screen, mut filtered) = (Vec::new(), Filtered::default());
        for chunk in chunks {
            filter.feed(chunk, &mut screen, &mut filtered);
        }
        (filter, screen, filtered)
    }

    fn state(status: Status, program: Option<&str>) -> ProgramReport {
        ProgramReport::State {
            status,
            program: program.map(str::to_string),
            kind: None,
            msg: None,
        }
    }

    #[test]
    fn a_report_split_at_every_byte_boundary_is_taken_out_whole() {
        // `msg` is base64 ("OK"); BEL and ST both end a report.
        let stream: &[u8] =
            b"ab\x1b]7501;state=working:app=claude:msg=T0s=\x07cd\x1b]7501;state=done\x1b\\ef";
        for cut in 0..=stream.len() {
            for second_cut in cut..=stream.len() {
                let (_, screen, filtered) = run(&[
                    &stream[..cut],
                    &stream[cut..second_cut],
                    &stream[second_cut..],
                ]);
                assert_eq!(screen, b"abcdef", "cuts at {cut} and {second_cut}");
                assert_eq!(
                    filtered.reports,
                    vec![
                        ProgramReport::State {
                            status: Status::Working,
                            program: Some("claude".into()),
                            kind: None,
                            msg: Some("OK".into()),
                        },
                        state(Status::Done, None)
                    ]
                );
            }
        }
    }

    #[test]
    fn child_records_unknown_states_and_the_old_dialect_change_nothing() {
        let (_, screen, filtered) = run(&[
            b"x\x1b]7501;state=working:id=build/test:progress=40\x07",
            b"\x1b]7501;state=sleeping\x07",
            b"\x1b]7501;status=working;program=claude\x07y",
        ]);
        assert_eq!(screen, b"xy");
        assert!(filtered.reports.is_empty(), "{:?}", filtered.reports);
    }

    #[test]
    fn clear_and_blocked_kinds_are_read() {
        let (_, _, filtered) = run(&[
            b"\x1b]7501;state=blocked:kind=permission:app=pi\x1b\\\x1b]7501;state=clear\x07",
        ]);
        assert_eq!(
            filtered.reports,
            vec![
                ProgramReport::State {
                    status: Status::Blocked,
                    program: Some("pi".into()),
                    kind: Some("permission"),
                    msg: None,
                },
                ProgramReport::Cleared
            ]
        );
    }

    #[test]
    fn the_feature_query_and_device_attributes_are_answered_in_order() {
        let (_, screen, filtered) = run(&[termstate_core::detect::QUERY]);
        assert_eq!(screen, b"\x1b[c", "DA1 still reaches the screen's parser");
        let mut detector = termstate_core::detect::Detector::new();
        assert_eq!(
            detector.feed(&filtered.answers),
            Some(termstate_core::detect::Outcome::Supported(
                Capabilities::default()
            )),
            "{:?}",
            String::from_utf8_lossy(&filtered.answers)
        );
    }

    #[test]
    fn other_sequences_reach_the_screen_unchanged() {
        let stream: &[u8] = b"\x1b]2;my title\x07\x1b[1;31mred\x1b[0m\x1b]0;t\x1b\\\x1b(B";
        let (_, screen, filtered) = run(&[stream]);
        assert_eq!(screen, stream);
        assert_eq!(filtered, Filtered::default());
    }

    #[test]
    fn synchronized_output_is_tracked_across_chunks() {
        let (filter, _, _) = run(&[b"\x1b[?20", b"26h frame"]);
        assert!(filter.synchronized());
        let (filter, _, _) = run(&[b"\x1b[?2004;2026h", b"frame\x1b[?2026l"]);
        assert!(!filter.synchronized());
    }
}
