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
