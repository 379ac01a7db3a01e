//! How untrusted text is shown: titles, programs, cwds and addresses come
//! from terminal programs and hc, and must never drive the terminal (or the
//! log viewer) they are printed on. Every output path (tool texts, the
//! `inspect-core` table, log fields, the audit line) escapes through here,
//! and unix-ms timestamps are made readable here too. Neutral ground: it
//! imports nothing of the adapter.

use std::borrow::Cow;
use std::time::{Duration, UNIX_EPOCH};

/// `s` with every control character escaped, so printing it cannot drive
/// a terminal.
pub fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// A unix-ms timestamp as RFC 3339 UTC, e.g. `2025-11-30T05:20:00.123Z`;
/// `-` for a negative one.
pub fn readable_ms(ms: i64) -> String {
    match u64::try_from(ms) {
        Ok(ms) => {
            humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
        }
        Err(_) => "-".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_from_programs_are_escaped() {
        assert_eq!(printable("ok"), "ok");
        assert_eq!(printable("a\u{1b}]0;x\u{7}b"), "a\\u{1b}]0;x\\u{7}b");
        assert_eq!(printable("c1\u{9b}"), "c1\\u{9b}");
    }

    #[test]
    fn timestamps_read_as_utc() {
        assert_eq!(readable_ms(1_764_480_000_123), "2025-11-30T05:20:00.123Z");
        assert_eq!(readable_ms(-1), "-");
    }
}
