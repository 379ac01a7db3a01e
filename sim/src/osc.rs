//! The filter between a program's output and the VT parser. It takes OSC 7501
//! status reports out of the byte stream (contract §6) and watches mode 2026
//! (synchronized output) so `terminal.read` can say whether the screen was
//! caught mid-update. Sequences may arrive split across any number of reads;
//! everything else passes through untouched for `vt100` to interpret.

use crate::wire::Status;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
/// The OSC number hc reserves for status reports.
const STATUS_OSC: &[u8] = b"7501;";
/// The private mode a program sets while it draws a frame atomically.
const SYNCHRONIZED_OUTPUT_MODE: &str = "2026";
/// An OSC longer than this is not a status report; it is handed on as is
/// rather than buffered without bound.
const MAX_OSC_BYTES: usize = 4096;
/// Likewise for a control sequence (real ones are a few bytes).
const MAX_CSI_BYTES: usize = 64;

/// A status report taken out of the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusReport {
    pub status: Status,
    /// `;program=<name>`, when the report carried one.
    pub program: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    Escape,
    Osc,
    OscEscape,
    Csi,
}

/// The filter; one per terminal, fed every chunk the program writes.
#[derive(Debug)]
pub struct OscFilter {
    state: State,
    /// The sequence in progress, from its ESC.
    pending: Vec<u8>,
    synchronized: bool,
}

impl Default for OscFilter {
    fn default() -> Self {
        OscFilter {
            state: State::Ground,
            pending: Vec::new(),
            synchronized: false,
        }
    }
}

impl OscFilter {
    /// True while the program has synchronized output on (`ESC[?2026h`
    /// seen, `ESC[?2026l` not yet).
    pub fn synchronized(&self) -> bool {
        self.synchronized
    }

    /// Filters one chunk: bytes for the screen go to `screen`, status
    /// reports to `reports`, in order. A sequence cut by the end of the
    /// chunk is held until the next one.
    pub fn feed(&mut self, input: &[u8], screen: &mut Vec<u8>, reports: &mut Vec<StatusReport>) {
        let mut index = 0;
        while index < input.len() {
            let byte = input[index];
            let consumed = match self.state {
                State::Ground => {
                    let rest = &input[index..];
                    let plain = rest.iter().position(|&b| b == ESC).unwrap_or(rest.len());
                    screen.extend_from_slice(&rest[..plain]);
                    if plain < rest.len() {
                        self.begin(State::Escape);
                    }
                    index += plain + 1;
                    continue;
                }
                State::Escape => self.escape(byte, screen),
                State::Osc => self.osc(byte, screen, reports),
                State::OscEscape => self.osc_escape(byte, screen, reports),
                State::Csi => self.csi(byte, screen),
            };
            if consumed {
                index += 1;
            }
        }
    }

    fn begin(&mut self, state: State) {
        self.pending.clear();
        self.pending.push(ESC);
        self.state = state;
    }

    /// Hands the sequence in progress to the screen unchanged.
    fn pass_through(&mut self, screen: &mut Vec<u8>) {
        screen.append(&mut self.pending);
        self.state = State::Ground;
    }

    fn escape(&mut self, byte: u8, screen: &mut Vec<u8>) -> bool {
        match byte {
            b']' => {
                self.pending.push(byte);
                self.state = State::Osc;
            }
            b'[' => {
                self.pending.push(byte);
                self.state = State::Csi;
            }
            ESC => {
                screen.push(ESC);
            }
            _ => {
                self.pending.push(byte);
                self.pass_through(screen);
            }
        }
        true
    }

    fn osc(&mut self, byte: u8, screen: &mut Vec<u8>, reports: &mut Vec<StatusReport>) -> bool {
        match byte {
            BEL => {
                self.pending.push(byte);
                self.finish_osc(1, screen, reports);
            }
            ESC => {
                self.pending.push(byte);
                self.state = State::OscEscape;
            }
            _ => {
                self.pending.push(byte);
                if self.pending.len() > MAX_OSC_BYTES {
                    self.pass_through(screen);
                }
            }
        }
        true
    }

    fn osc_escape(
        &mut self,
        byte: u8,
        screen: &mut Vec<u8>,
        reports: &mut Vec<StatusReport>,
    ) -> bool {
        if byte == b'\\' {
            self.pending.push(byte);
            self.finish_osc(2, screen, reports);
            return true;
        }
        // An ESC that is not ST cancels the OSC and starts a new sequence;
        // the byte after it is looked at again in that light.
        self.pending.pop();
        self.pass_through(screen);
        self.begin(State::Escape);
        false
    }

    fn finish_osc(
        &mut self,
        terminator_len: usize,
        screen: &mut Vec<u8>,
        reports: &mut Vec<StatusReport>,
    ) {
        let body = &self.pending[2..self.pending.len() - terminator_len];
        match body.strip_prefix(STATUS_OSC) {
            Some(fields) => {
                reports.extend(parse_report(fields));
                self.pending.clear();
                self.state = State::Ground;
            }
            None => self.pass_through(screen),
        }
    }

    fn csi(&mut self, byte: u8, screen: &mut Vec<u8>) -> bool {
        match byte {
            0x20..=0x3f => {
                self.pending.push(byte);
                if self.pending.len() > MAX_CSI_BYTES {
                    self.pass_through(screen);
                }
                true
            }
            0x40..=0x7e => {
                self.pending.push(byte);
                self.track_private_mode();
                self.pass_through(screen);
                true
            }
            _ => {
                self.pass_through(screen);
                false
            }
        }
    }

    /// Notes `ESC [ ? … 2026 … h|l` (the pending sequence is complete).
    fn track_private_mode(&mut self) {
        let Some((&last, body)) = self.pending[2..].split_last() else {
            return;
        };
        let Some(params) = body.strip_prefix(b"?") else {
            return;
        };
        let names_mode = params
            .split(|&b| b == b';')
            .any(|param| param == SYNCHRONIZED_OUTPUT_MODE.as_bytes());
        if names_mode {
            match last {
                b'h' => self.synchronized = true,
                b'l' => self.synchronized = false,
                _ => {}
            }
        }
    }
}

/// `status=<state>[;program=<name>]`, fields in any order; a report without
/// a valid state is ignored whole.
fn parse_report(fields: &[u8]) -> Option<StatusReport> {
    let fields = std::str::from_utf8(fields).ok()?;
    let mut status = None;
    let mut program = None;
    for field in fields.split(';') {
        match field.split_once('=') {
            Some(("status", state)) => status = Status::from_report(state),
            Some(("program", name)) if !name.is_empty() => program = Some(name.to_string()),
            _ => {}
        }
    }
    Some(StatusReport {
        status: status?,
        program,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&[u8]]) -> (OscFilter, Vec<u8>, Vec<StatusReport>) {
        let mut filter = OscFilter::default();
        let (mut screen, mut reports) = (Vec::new(), Vec::new());
        for chunk in chunks {
            filter.feed(chunk, &mut screen, &mut reports);
        }
        (filter, screen, reports)
    }

    fn report(status: Status, program: Option<&str>) -> StatusReport {
        StatusReport {
            status,
            program: program.map(str::to_string),
        }
    }

    #[test]
    fn a_report_split_at_every_byte_boundary_is_taken_out_whole() {
        let stream: &[u8] =
            b"ab\x1b]7501;status=working;program=claude\x07cd\x1b]7501;status=done\x1b\\ef";
        for cut in 0..=stream.len() {
            for second_cut in cut..=stream.len() {
                let (_, screen, reports) = run(&[
                    &stream[..cut],
                    &stream[cut..second_cut],
                    &stream[second_cut..],
                ]);
                assert_eq!(screen, b"abcdef", "cuts at {cut} and {second_cut}");
                assert_eq!(
                    reports,
                    vec![
                        report(Status::Working, Some("claude")),
                        report(Status::Done, None)
                    ]
                );
            }
        }
    }

    #[test]
    fn an_unknown_state_is_ignored_but_still_stripped() {
        let (_, screen, reports) = run(&[b"x\x1b]7501;status=sleeping\x07y"]);
        assert_eq!(screen, b"xy");
        assert!(reports.is_empty());
    }

    #[test]
    fn other_sequences_reach_the_screen_unchanged() {
        let stream: &[u8] = b"\x1b]2;my title\x07\x1b[1;31mred\x1b[0m\x1b]0;t\x1b\\\x1b(B";
        let (_, screen, reports) = run(&[stream]);
        assert_eq!(screen, stream);
        assert!(reports.is_empty());
    }

    #[test]
    fn an_escape_inside_an_osc_cancels_it_and_starts_anew() {
        let (_, screen, reports) = run(&[b"\x1b]7501;sta\x1b[0m\x1b]7501;status=idle\x07"]);
        assert_eq!(screen, b"\x1b]7501;sta\x1b[0m");
        assert_eq!(reports, vec![report(Status::Idle, None)]);
    }

    #[test]
    fn synchronized_output_is_tracked_across_chunks() {
        let (filter, _, _) = run(&[b"\x1b[?20", b"26h frame"]);
        assert!(filter.synchronized());
        let (filter, _, _) = run(&[b"\x1b[?2004;2026h", b"frame\x1b[?2026l"]);
        assert!(!filter.synchronized());
    }

    #[test]
    fn an_unterminated_osc_is_released_past_its_cap() {
        let mut stream = b"\x1b]7501;".to_vec();
        stream.extend(std::iter::repeat_n(b'x', MAX_OSC_BYTES + 10));
        let (_, screen, _) = run(&[&stream]);
        assert!(screen.len() > MAX_OSC_BYTES);
    }
}
