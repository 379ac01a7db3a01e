//! How untrusted text is shown: titles, programs, cwds, addresses and
//! screens come from terminal programs and hc, and must never drive or
//! spoof the terminal (or log viewer) they are printed on. Every output
//! path escapes through here: the `inspect-core` table and JSON, tool text
//! renderings, log fields and the audit line. Unix-ms timestamps are made
//! readable here too. Neutral ground: it imports nothing of the adapter.
//!
//! Escaped: every control character (Unicode category Cc: C0, DEL, C1),
//! every format character (Cf: bidi embeddings, overrides and isolates,
//! zero-width characters, BOM, tag characters, ...), and the line and
//! paragraph separators U+2028/U+2029 (Zl, Zp), which log viewers, editors
//! and JavaScript-based consoles take as line breaks: one escaped line must
//! stay one line.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::time::{Duration, UNIX_EPOCH};

/// The format characters (General_Category=Cf) of Unicode 16.0, as
/// inclusive ranges. Kept by hand so that no dependency is needed for one
/// table; `format_ranges_match_the_known_members` checks its shape.
const FORMAT_CHARACTERS: [(u32, u32); 21] = [
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
];

/// Whether `c` could drive or spoof a terminal or split a line: a control
/// (Cc) or format (Cf) character, or U+2028/U+2029.
pub fn is_hazard(c: char) -> bool {
    let code = u32::from(c);
    match code {
        0..=0x1F | 0x7F..=0x9F | 0x2028 | 0x2029 => true,
        // Printable ASCII, and the wide stretches without a format
        // character (Latin to Hebrew; punctuation to CJK and Hangul).
        0x20..=0x7E | 0xA0..=0xAC | 0xAE..=0x05FF | 0x2070..=0xFEFE => false,
        _ => FORMAT_CHARACTERS
            .binary_search_by(|&(first, last)| {
                if last < code {
                    std::cmp::Ordering::Less
                } else if first > code {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .is_ok(),
    }
}

/// `s` with every control and format character (and U+2028/U+2029)
/// escaped as `\u{XXXX}`, for tables, log fields and one-line texts.
pub fn printable(s: &str) -> Cow<'_, str> {
    escape_where(s, is_hazard)
}

/// Like [`printable`], but keeps LF and TAB: for multi-line text such as a
/// screen, whose layout they carry.
pub(crate) fn printable_lines(s: &str) -> Cow<'_, str> {
    escape_where(s, |c| c != '\n' && c != '\t' && is_hazard(c))
}

/// [`printable`], cut to its first `max_chars` characters when longer, with
/// how long it was: for values from outside (a client's method name, path
/// or header, an address) in log lines, which must stay short.
pub(crate) fn bounded(s: &str, max_chars: usize) -> Cow<'_, str> {
    let Some((cut, _)) = s.char_indices().nth(max_chars) else {
        return printable(s);
    };
    let total = s.chars().count();
    Cow::Owned(format!("{}…[{total} chars]", printable(&s[..cut])))
}

fn escape_where(s: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    replace_where(s, &escape, |out, c| {
        let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
    })
}

/// `s` with each character `escape` picks written by `write`, and the runs
/// between them copied whole; borrowed when nothing is picked.
fn replace_where<'s>(
    s: &'s str,
    escape: &impl Fn(char) -> bool,
    write: impl Fn(&mut String, char),
) -> Cow<'s, str> {
    let Some(first) = first_escape(s, escape) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 16);
    let mut rest = s;
    let mut at = Some(first);
    while let Some(found) = at {
        out.push_str(&rest[..found]);
        let c = rest[found..].chars().next().expect("found at a character");
        write(&mut out, c);
        rest = &rest[found + c.len_utf8()..];
        at = first_escape(rest, escape);
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Where the first character of `s` that `escape` wants escaped starts.
/// Text is skipped 16 bytes at a time while no byte in them can start a
/// hazard ([`plain_byte`]: printable ASCII, most of UTF-8, and LF and TAB
/// when `escape` keeps them); past that, only a byte that can start a
/// hazard ([`MAYBE_HAZARD`]) has its character decoded and asked.
fn first_escape(s: &str, escape: &impl Fn(char) -> bool) -> Option<usize> {
    const RUN: usize = 16;
    let layout = !escape('\n') && !escape('\t');
    let bytes = s.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if let Some(run) = bytes
            .get(at..at + RUN)
            .and_then(|r| <&[u8; RUN]>::try_from(r).ok())
            && run
                .iter()
                .fold(true, |plain, &b| plain & plain_byte(b, layout))
        {
            at += RUN;
            continue;
        }
        if !MAYBE_HAZARD[usize::from(bytes[at])] {
            at += 1;
            continue;
        }
        // No continuation byte is marked, so `at` starts a character.
        let c = s[at..].chars().next()?;
        if escape(c) {
            return Some(at);
        }
        at += c.len_utf8();
    }
    None
}

/// A byte that starts no hazard, in the ranges common text is made of:
/// printable ASCII, UTF-8 continuation bytes, the leads of U+00C0-U+05FF
/// (Latin to Hebrew) and of U+3000-U+EFFF (CJK, Hangul); with `layout`,
/// LF and TAB too. [`MAYBE_HAZARD`] marks none of them (a test holds it);
/// the few other harmless bytes take the byte-at-a-time path. Four ranges,
/// so the compiler tests 16 bytes at once.
#[inline(always)]
fn plain_byte(b: u8, layout: bool) -> bool {
    // `|`, not `||`: no branch.
    let within = |low: u8, high: u8| b.wrapping_sub(low) <= high - low;
    within(0x20, 0x7E)
        | within(0x80, 0xC1)
        | within(0xC3, 0xD7)
        | within(0xE3, 0xEE)
        | (layout & ((b == b'\n') | (b == b'\t')))
}

/// The bytes that can start a hazard's UTF-8 encoding ([`is_hazard`]): the
/// ASCII controls and DEL, and the lead bytes of C1 (0xC2), U+2028/U+2029
/// (0xE2) and of every format-character range. No continuation byte
/// (0x80-0xBF) is marked.
const MAYBE_HAZARD: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[0x7F] = true;
    table[lead_byte(0x80)] = true;
    table[lead_byte(0x2028)] = true;
    let mut i = 0;
    while i < FORMAT_CHARACTERS.len() {
        let (first, last) = FORMAT_CHARACTERS[i];
        let mut lead = lead_byte(first);
        while lead <= lead_byte(last) {
            table[lead] = true;
            lead += 1;
        }
        i += 1;
    }
    table
};

/// The first byte of `code`'s UTF-8 encoding.
const fn lead_byte(code: u32) -> usize {
    (match code {
        0..=0x7F => code,
        0x80..=0x7FF => 0xC0 | (code >> 6),
        0x800..=0xFFFF => 0xE0 | (code >> 12),
        _ => 0xF0 | (code >> 18),
    }) as usize
}

/// JSON text (as serde_json writes it) with every control and format
/// character that serde_json leaves raw written as a `\uXXXX` escape
/// (a surrogate pair above U+FFFF). The JSON means the same; printed on a
/// terminal it cannot drive it. serde_json escapes U+0000-U+001F inside
/// strings itself, so those found raw are the layout's whitespace and stay;
/// the others (DEL, C1, format characters) can only occur inside strings,
/// where the escape is valid.
pub(crate) fn json(text: &str) -> Cow<'_, str> {
    let raw_in_strings = |c: char| c >= '\u{7f}' && is_hazard(c);
    replace_where(text, &raw_in_strings, |out, c| {
        let mut units = [0u16; 2];
        for unit in c.encode_utf16(&mut units) {
            let _ = write!(out, "\\u{unit:04x}");
        }
    })
}

/// A unix-ms timestamp as RFC 3339 UTC, e.g. `2025-11-30T05:20:00.123Z`;
/// `-` for a negative one.
pub(crate) fn readable_ms(ms: i64) -> String {
    match u64::try_from(ms) {
        Ok(ms) => {
            humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
        }
        Err(_) => "-".to_owned(),
    }
}

/// A duration as people say it: `850 ms`, `42 s`, `7 min`, `3 h 5 min`.
pub(crate) fn readable_age(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..120_000 => format!("{} s", ms / 1_000),
        120_000..7_200_000 => format!("{} min", ms / 60_000),
        _ => format!("{} h {} min", ms / 3_600_000, ms / 60_000 % 60),
    }
}

#[cfg(test)]
mod tests {
    //! What is escaped and what is not, checked against the definition over
    //! every character.

    use super::*;

    #[test]
    fn long_values_are_cut_and_say_how_long_they_were() {
        assert_eq!(bounded("short", 8), "short");
        assert_eq!(bounded("exactly8", 8), "exactly8");
        assert_eq!(bounded("nine chars", 4), "nine…[10 chars]");
        let hostile = format!("\u{1b}[2J{}", "é".repeat(300));
        let shown = bounded(&hostile, 256);
        assert!(shown.starts_with("\\u{001b}[2J"), "{shown}");
        assert!(shown.ends_with("…[304 chars]"), "{shown}");
    }

    #[test]
    fn control_and_format_characters_from_programs_are_escaped() {
        assert_eq!(printable("ok é 日本 🙂"), "ok é 日本 🙂");
        assert_eq!(printable("a\u{1b}]0;x\u{7}b"), "a\\u{001b}]0;x\\u{0007}b");
        for (raw, shown) in [
            ("c1\u{9b}31m", "c1\\u{009b}31m"),
            ("osc\u{9d}", "osc\\u{009d}"),
            ("del\u{7f}", "del\\u{007f}"),
            ("abc\u{202e}fed", "abc\\u{202e}fed"),
            ("iso\u{2067}late", "iso\\u{2067}late"),
            ("zw\u{200b}sp", "zw\\u{200b}sp"),
            ("bom\u{feff}", "bom\\u{feff}"),
            ("tag\u{e0041}", "tag\\u{e0041}"),
            ("tab\tlf\n", "tab\\u{0009}lf\\u{000a}"),
            ("ls\u{2028}ps\u{2029}", "ls\\u{2028}ps\\u{2029}"),
        ] {
            assert_eq!(printable(raw), shown, "{raw:?}");
        }
        assert_eq!(
            printable_lines("a\tb\nc\u{202e}\u{2028}"),
            "a\tb\nc\\u{202e}\\u{2028}"
        );
    }

    #[test]
    fn json_keeps_its_meaning_and_loses_raw_hazards() {
        let value =
            serde_json::json!({"title": "x\u{9b}y\u{202e}z\u{7f}\u{e0041}\n\u{2029}", "ok": "é🙂"});
        let written = serde_json::to_string_pretty(&value).unwrap();
        let escaped = json(&written);
        assert!(
            !escaped.chars().any(|c| c != '\n' && is_hazard(c)),
            "{escaped}"
        );
        assert!(escaped.contains("\\u009b") && escaped.contains("\\u202e"));
        assert!(escaped.contains("\\u2029"), "{escaped}");
        assert!(escaped.contains("\\udb40\\udc41"), "{escaped}");
        let reread: serde_json::Value = serde_json::from_str(&escaped).unwrap();
        assert_eq!(reread, value);
        assert!(matches!(json("{\"a\":\"é\"}"), Cow::Borrowed(_)));
    }

    #[test]
    fn format_ranges_match_the_known_members() {
        for pair in FORMAT_CHARACTERS.windows(2) {
            assert!(pair[0].1 < pair[1].0, "ranges overlap or are unsorted");
        }
        for cf in [
            '\u{ad}', '\u{61c}', '\u{200e}', '\u{2066}', '\u{2069}', '\u{feff}',
        ] {
            assert!(is_hazard(cf), "{cf:?}");
        }
        for ordinary in ['a', ' ', '\u{a0}', '\u{2010}', '\u{3000}', '\u{1f642}'] {
            assert!(!is_hazard(ordinary), "{ordinary:?}");
        }
    }

    #[test]
    fn every_hazard_starts_with_a_marked_byte_and_is_found_among_plain_text() {
        let mut utf8 = [0u8; 4];
        let mut text = String::new();
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let lead = c.encode_utf8(&mut utf8).as_bytes()[0];
            assert!(
                !is_hazard(c) || MAYBE_HAZARD[usize::from(lead)],
                "{c:?} starts with an unmarked {lead:#x}"
            );
            // Found exactly where it is, after text of every width (and,
            // for a screen, of its layout), and never when not asked for.
            // Only `escape` can pick a character, so a miss is the only
            // possible fault: every hazard is tried, other characters
            // sampled.
            if !is_hazard(c) && u32::from(c) % 97 != 0 {
                continue;
            }
            let lines = |c: char| c != '\n' && c != '\t' && is_hazard(c);
            for (prefix, escape) in [
                (
                    "plain ascii, then é日本🙂",
                    &is_hazard as &dyn Fn(char) -> bool,
                ),
                ("plain ascii\tthen\né日本🙂 and more", &lines),
            ] {
                text.clear();
                text.push_str(prefix);
                text.push(c);
                text.push('x');
                let expected = escape(c).then_some(prefix.len());
                assert_eq!(first_escape(&text, &escape), expected, "{c:?}");
            }
        }
        assert!((0x80..=0xBF).all(|b| !MAYBE_HAZARD[b]));
        for b in 0..=255u8 {
            let marked = MAYBE_HAZARD[usize::from(b)];
            assert!(!(plain_byte(b, false) && marked), "{b:#x}");
            assert!(!(plain_byte(b, true) && marked && b != b'\n' && b != b'\t'));
        }
        assert_eq!(
            printable_lines("é\tb\n日\u{2028}本\n"),
            "é\tb\n日\\u{2028}本\n"
        );
    }

    #[test]
    fn the_fast_hazard_test_agrees_with_the_definition_everywhere() {
        let slow = |c: char| {
            let code = u32::from(c);
            c.is_control()
                || matches!(c, '\u{2028}' | '\u{2029}')
                || FORMAT_CHARACTERS
                    .iter()
                    .any(|&(first, last)| (first..=last).contains(&code))
        };
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            assert_eq!(is_hazard(c), slow(c), "{c:?}");
        }
    }

    #[test]
    fn the_fast_scan_finds_a_hazard_wherever_it_sits() {
        let pieces = [
            "a", "é", "日", "🙂", "─", "\u{7f}", "\u{1b}", "\u{202e}", "\u{2028}", "\n", "\t",
        ];
        for length in [0, 1, 15, 16, 17, 31, 32, 33, 100] {
            for (i, hazard) in pieces.iter().enumerate() {
                for at in [0, length / 2, length] {
                    let mut text: String = (0..length).map(|n| pieces[n % 4]).collect::<String>();
                    let cut = text.char_indices().nth(at).map_or(text.len(), |(b, _)| b);
                    text.insert_str(cut, hazard);
                    let want = text.chars().any(is_hazard);
                    assert_eq!(
                        first_escape(&text, &is_hazard).is_some(),
                        want,
                        "{i} {length} {at}"
                    );
                    let reference: String = text
                        .chars()
                        .map(|c| match is_hazard(c) {
                            true => format!("\\u{{{:04x}}}", u32::from(c)),
                            false => c.to_string(),
                        })
                        .collect();
                    assert_eq!(printable(&text), reference);
                }
            }
        }
    }

    #[test]
    fn timestamps_read_as_utc() {
        assert_eq!(readable_ms(1_764_480_000_123), "2025-11-30T05:20:00.123Z");
        assert_eq!(readable_ms(-1), "-");
    }
}
