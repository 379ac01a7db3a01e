//! What a PTY terminal shows: its output fed through the OSC filter into a
//! VT screen with scrollback, read back as `terminal.read` returns text.

use crate::osc::{Filtered, OscFilter};
use crate::wire::{TERMINAL_COLS, TERMINAL_ROWS};

/// Scrollback kept per PTY terminal for `terminal.read` with `lines > 0`.
const SCROLLBACK_LINES: usize = 1000;

/// The screen of a PTY terminal.
pub(super) struct Screen {
    filter: OscFilter,
    parser: vt100::Parser<TitleWatcher>,
}

/// Keeps the last OSC 0/2 window title the program set.
#[derive(Default)]
struct TitleWatcher {
    title: Option<String>,
}

impl vt100::Callbacks for TitleWatcher {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.title = Some(String::from_utf8_lossy(title).into_owned());
    }
}

impl Screen {
    /// A blank screen of hc's size.
    pub(super) fn new() -> Screen {
        Screen {
            filter: OscFilter::default(),
            parser: vt100::Parser::new_with_callbacks(
                TERMINAL_ROWS.try_into().expect("rows are nonzero"),
                TERMINAL_COLS.try_into().expect("cols are nonzero"),
                SCROLLBACK_LINES,
                TitleWatcher::default(),
            ),
        }
    }

    /// Feeds one chunk of output: what the OSC filter passes reaches the
    /// screen; what it took out (reports, answers to queries) is returned.
    pub(super) fn feed(&mut self, chunk: &[u8]) -> Filtered {
        let (mut bytes, mut filtered) = (Vec::with_capacity(chunk.len()), Filtered::default());
        self.filter.feed(chunk, &mut bytes, &mut filtered);
        self.parser.process(&bytes);
        filtered
    }

    /// The last window title the program set.
    pub(super) fn title(&self) -> Option<String> {
        self.parser.callbacks().title.clone()
    }

    /// True when the program enabled bracketed paste (mode 2004).
    pub(super) fn bracketed_paste(&self) -> bool {
        self.parser.screen().bracketed_paste()
    }

    /// The text `terminal.read` returns (each row's trailing blanks
    /// trimmed, trailing empty rows dropped, rows joined by `\n`, up to
    /// `lines` of scrollback first) and whether it is complete (no
    /// synchronized update under way).
    pub(super) fn text(&mut self, lines: u64) -> (String, bool) {
        let mut rows = scrollback_rows(self.parser.screen_mut(), lines);
        rows.extend(visible_rows(self.parser.screen()));
        while rows.last().is_some_and(String::is_empty) {
            rows.pop();
        }
        (rows.join("\n"), !self.filter.synchronized())
    }
}

fn visible_rows(screen: &vt100::Screen) -> impl Iterator<Item = String> + '_ {
    screen
        .rows(0, TERMINAL_COLS)
        .map(|row| row.trim_end().to_string())
}

/// Up to `lines` of the newest scrollback, oldest first. Scrolling the view
/// is how `vt100` exposes history; the view is put back before returning.
fn scrollback_rows(screen: &mut vt100::Screen, lines: u64) -> Vec<String> {
    let wanted = usize::try_from(lines).unwrap_or(usize::MAX);
    let available = screen.scrollback_len().min(wanted);
    let page = usize::from(TERMINAL_ROWS);
    let mut rows = Vec::with_capacity(available);
    let mut offset = available;
    while offset > 0 {
        screen.set_scrollback(offset);
        let take = offset.min(page);
        rows.extend(visible_rows(screen).take(take));
        offset -= take;
    }
    screen.set_scrollback(0);
    rows
}
