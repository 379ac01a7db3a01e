//! What a config that does not parse is told: where JSON's common slips
//! are, which key repeats on which lines, and figment's errors in the words
//! of the file (the key's path, the value found, the kind expected).

use crate::json_keys::{self, Repeat};

/// What JSON's common slips look like where parsing stopped: a comma
/// before a closing bracket, or a comment; empty for anything else.
pub(super) fn json_slip(text: &str, error: &serde_json::Error) -> &'static str {
    let Some(line) = text.lines().nth(error.line().saturating_sub(1)) else {
        return "";
    };
    // serde_json counts columns in bytes, from 1, at the offending one.
    let at = line
        .get(error.column().saturating_sub(1)..)
        .unwrap_or_default()
        .trim_start();
    let before: String = text
        .lines()
        .take(error.line().saturating_sub(1))
        .chain(std::iter::once(
            line.get(..error.column().saturating_sub(1))
                .unwrap_or_default(),
        ))
        .collect::<Vec<_>>()
        .join("\n");
    if at.starts_with("//") || at.starts_with("/*") || at.starts_with('#') {
        "; JSON has no comments: remove it"
    } else if (at.starts_with('}') || at.starts_with(']')) && before.trim_end().ends_with(',') {
        "; JSON allows no comma before a closing } or ]: remove it"
    } else {
        ""
    }
}

/// What a repeated key's refusal says: the key where it is, and both lines.
pub(super) fn repeated(text: &str, repeat: &Repeat) -> String {
    let key = key_words(repeat.path.iter().chain([&repeat.key]));
    format!(
        "`{key}` is given twice (lines {} and {}): keep one of them (a repeated key would otherwise silently take its last value)",
        json_keys::line_of(text, repeat.offsets.0),
        json_keys::line_of(text, repeat.offsets.1)
    )
}

/// A key as the config spells it: `sendAllowlist[0].created_ms`.
fn key_words<'a>(parts: impl IntoIterator<Item = &'a String>) -> String {
    let mut key = String::new();
    for part in parts {
        if part.bytes().all(|b| b.is_ascii_digit()) && !key.is_empty() {
            key.push_str(&format!("[{part}]"));
        } else {
            if !key.is_empty() {
                key.push('.');
            }
            key.push_str(part);
        }
    }
    key
}

pub(super) fn figment_detail(error: figment::Error) -> String {
    let key = key_words(&error.path);
    let kind = match &error.kind {
        // figment's own wording nests quotes inside quotes; say it plainly.
        figment::error::Kind::UnknownField(field, known) => {
            return format!(
                "unknown key {field:?}{} ({}); the keys here are: {}",
                match key.rsplit_once('.') {
                    Some((parent, _)) => format!(" in {parent:?}"),
                    None => String::new(),
                },
                match known.iter().find(|k| k.eq_ignore_ascii_case(field)) {
                    Some(meant) => format!("did you mean {meant:?}? keys are case-sensitive"),
                    None => "a misspelling?".to_owned(),
                },
                known.join(", ")
            );
        }
        // figment's own wording quotes the list inside quotes
        // (``a` or `b``); say it plainly.
        figment::error::Kind::UnknownVariant(found, expected) => {
            format!("{found:?} is not one of: {}", expected.join(", "))
        }
        // A number of another type, or out of its type's range: what the
        // key takes and means, never a Rust type.
        figment::error::Kind::InvalidType(actual, _)
        | figment::error::Kind::InvalidValue(actual, _)
            if super::numbers::at(&key).is_some() =>
        {
            let number = super::numbers::at(&key).expect("just found");
            let hint = match actual {
                figment::error::Actual::Str(s) if s.trim().parse::<f64>().is_ok() => {
                    ": write it as a number, without quotes"
                }
                _ => "",
            };
            format!("{}, got {}{hint}", number.wants(), actual_words(actual))
        }
        figment::error::Kind::InvalidType(actual, expected)
        | figment::error::Kind::InvalidValue(actual, expected) => format!(
            "must be {}, got {}",
            expected_words(expected),
            actual_words(actual)
        ),
        kind => kind.to_string(),
    };
    if key.is_empty() {
        kind
    } else {
        format!("`{key}`: {kind}")
    }
}

/// A value as the config's JSON spells it, not as serde names its type.
fn actual_words(actual: &figment::error::Actual) -> String {
    use figment::error::Actual;
    match actual {
        Actual::Bool(b) => b.to_string(),
        Actual::Unsigned(n) => n.to_string(),
        Actual::Signed(n) => n.to_string(),
        Actual::Float(n) => n.to_string(),
        Actual::Char(c) => format!("the string {:?}", c.to_string()),
        Actual::Str(s) => format!(
            "the string {}",
            crate::escape::bounded(&format!("{s:?}"), 80)
        ),
        Actual::Unit | Actual::Option => "null".to_owned(),
        Actual::Seq => "a list".to_owned(),
        Actual::Map => "an object".to_owned(),
        _ => "a value of another kind".to_owned(),
    }
}

/// What serde expected, in the config's words.
fn expected_words(expected: &str) -> String {
    let words = expected.trim_start_matches("a ").trim_start_matches("an ");
    match words {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64" | "i128"
        | "isize" => "a whole number".to_owned(),
        "f32" | "f64" => "a number".to_owned(),
        "string" | "str" | "borrowed string" => "a string".to_owned(),
        "boolean" | "bool" => "true or false".to_owned(),
        "sequence" => "a list".to_owned(),
        "map" => "an object".to_owned(),
        _ => expected.to_owned(),
    }
}
