//! The send gate as tables, no socket: one row per rule and per boundary of
//! `check_input` (text and config), `check_target` (core, lifetime,
//! approval, characters, mode) and `guard_for` (the send-mode table).

use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::config::{ConfigError, Invalid, RawConfig};

pub(super) const CORE: &str = "core-a";
/// The approved lifetimes: t1 one-line, t2 multi-line.
pub(super) const APPROVED: &str = r#"[
    {"address": "t1", "created_ms": 100},
    {"address": "t2", "created_ms": 200, "multiline": true}
]"#;

fn config(extra: &str) -> Config {
    let text = format!(r#"{{"socketPath": "/run/hc.sock", "sendAllowlist": {APPROVED}{extra}}}"#);
    let path = Path::new("/test/config.json");
    Config::validate(path, RawConfig::parse(path, &text).unwrap()).unwrap()
}

fn with_core() -> Loaded {
    Loaded::Valid(Arc::new(config(&format!(r#", "coreId": "{CORE}""#))))
}

pub(super) fn args(address: &str, text: &str) -> SendPromptArgs {
    SendPromptArgs {
        address: address.into(),
        text: text.into(),
        created_ms: None,
    }
}

fn core(id: &str) -> CoreId {
    CoreId::try_from(id.to_owned()).unwrap()
}

/// `check_input`'s refusal as its reason code and the index/character it
/// names, or "ok".
fn input(loaded: &Loaded, address: &str, text: &str) -> String {
    match check_input(&args(address, text), loaded) {
        Ok(_) => "ok".into(),
        Err(Refusal::ControlCharacter { index, character })
        | Err(Refusal::LineControl {
            index, character, ..
        }) => {
            format!("control_character {index} U+{:04X}", u32::from(character))
        }
        Err(refusal) => refusal.code().as_str().into(),
    }
}

#[test]
fn check_input_refuses_text_by_each_rule_and_boundary() {
    let loaded = with_core();
    let rows: [(&str, String, &str); 17] = [
        ("empty", String::new(), "text_empty"),
        ("one character", "a".into(), "ok"),
        ("16,000 characters", "é".repeat(16_000), "ok"),
        ("16,001 characters", "é".repeat(16_001), "text_too_long"),
        ("NUL", "a\0".into(), "control_character 1 U+0000"),
        ("ESC", "\x1b[2J".into(), "control_character 0 U+001B"),
        ("CR", "a\rb".into(), "control_character 1 U+000D"),
        (
            "unit separator",
            "\x1f".into(),
            "control_character 0 U+001F",
        ),
        ("DEL", "\x7f".into(), "control_character 0 U+007F"),
        ("first C1", "\u{80}".into(), "control_character 0 U+0080"),
        ("CSI (C1)", "ab\u{9b}".into(), "control_character 2 U+009B"),
        ("last C1", "\u{9f}".into(), "control_character 0 U+009F"),
        ("NBSP after C1", "\u{a0}".into(), "ok"),
        ("space", " ".into(), "ok"),
        (
            "TAB to a one-line address",
            "a\tb".into(),
            "control_character 1 U+0009",
        ),
        (
            "LF to a one-line address",
            "a\nb".into(),
            "control_character 1 U+000A",
        ),
        (
            "ESC wins over LF",
            "\n\x1b".into(),
            "control_character 1 U+001B",
        ),
    ];
    for (what, text, expected) in rows {
        assert_eq!(input(&loaded, "t1", &text), expected, "{what}");
    }
    // An address with a multi-line approval passes on to check_target.
    assert_eq!(input(&loaded, "t2", "a\nb\tc"), "ok");
}

#[test]
fn check_input_refuses_when_the_config_cannot_send() {
    let no_core = Loaded::Valid(Arc::new(config("")));
    assert_eq!(input(&no_core, "t1", "hi"), "no_core_id");
    let refused = Loaded::Refused {
        why: Arc::new(ConfigError::Invalid {
            path: "/test/config.json".into(),
            invalid: Invalid {
                key: "coreId".into(),
                problem: "must be 1-128 printable ASCII characters".into(),
            },
        }),
        last_valid: Arc::new(config(&format!(r#", "coreId": "{CORE}""#))),
    };
    assert_eq!(input(&refused, "t1", "hi"), "config_invalid");
    // The text is judged first.
    assert_eq!(input(&no_core, "t1", ""), "text_empty");
}

fn preflight(core_id: &str, created_ms: i64, status: TerminalStatus) -> Preflight {
    Preflight {
        core_id: core(core_id),
        created_ms,
        status,
        finished: false,
        program: None,
        title: None,
        cwd: None,
    }
}

/// `check_target`'s outcome: the guard it clears with, or the refusal code.
fn target(mode: &str, args: &SendPromptArgs, preflight: &Preflight) -> String {
    let config = config(&format!(r#", "coreId": "{CORE}", "sendMode": "{mode}""#));
    match check_target(&config, &core(CORE), args, preflight) {
        Ok(Cleared {
            lifetime, guard, ..
        }) => {
            assert_eq!(lifetime.address, args.address);
            assert_eq!(lifetime.created_ms, preflight.created_ms);
            format!("cleared guard={}", guard.map_or("none", SendGuard::as_str))
        }
        Err(refusal) => refusal.code().as_str().into(),
    }
}

#[test]
fn check_target_refuses_by_core_lifetime_approval_and_characters() {
    use TerminalStatus::Idle;
    let one_line = args("t1", "hi");
    let named = |created_ms| SendPromptArgs {
        created_ms: Some(created_ms),
        ..args("t1", "hi")
    };
    let mut finished = preflight(CORE, 100, Idle);
    finished.finished = true;
    let rows: [(&str, SendPromptArgs, Preflight, &str); 10] = [
        (
            "approved, idle",
            one_line.clone(),
            preflight(CORE, 100, Idle),
            "cleared guard=idle",
        ),
        (
            "another core",
            one_line.clone(),
            preflight("core-b", 100, Idle),
            "core_id_mismatch",
        ),
        (
            "created_ms named and live",
            named(100),
            preflight(CORE, 100, Idle),
            "cleared guard=idle",
        ),
        (
            "created_ms named, another lifetime",
            named(99),
            preflight(CORE, 100, Idle),
            "lifetime_mismatch",
        ),
        ("finished", one_line.clone(), finished, "finished"),
        (
            "a new lifetime at an approved address",
            one_line.clone(),
            preflight(CORE, 101, Idle),
            "not_approved",
        ),
        (
            "an address never approved",
            args("t3", "hi"),
            preflight(CORE, 100, Idle),
            "not_approved",
        ),
        (
            "LF to a multi-line lifetime",
            args("t2", "a\nb"),
            preflight(CORE, 200, Idle),
            "cleared guard=idle",
        ),
        (
            "TAB to a multi-line lifetime",
            args("t2", "a\tb"),
            preflight(CORE, 200, Idle),
            "cleared guard=idle",
        ),
        (
            "LF to a one-line lifetime",
            args("t1", "a\nb"),
            preflight(CORE, 100, Idle),
            "control_character",
        ),
    ];
    for (what, args, preflight, expected) in rows {
        assert_eq!(target("idle-only", &args, &preflight), expected, "{what}");
    }
}

#[test]
fn guard_for_is_the_send_mode_table() {
    use SendMode::{IdleOnly, Normal};
    use TerminalStatus::*;
    let rows = [
        (IdleOnly, Idle, "guard=idle"),
        (IdleOnly, Done, "guard=idle"),
        (IdleOnly, Working, "guard=idle"),
        (IdleOnly, Blocked, "guard=idle"),
        (IdleOnly, Error, "guard=idle"),
        (IdleOnly, Unknown, "guard=idle"),
        (Normal, Idle, "guard=idle"),
        (Normal, Done, "guard=none"),
        (Normal, Working, "status_not_allowed"),
        (Normal, Blocked, "status_not_allowed"),
        (Normal, Error, "status_not_allowed"),
        (Normal, Unknown, "status_not_allowed"),
    ];
    for (mode, status, expected) in rows {
        let got = match guard_for(mode, status) {
            Ok(guard) => format!("guard={}", guard.map_or("none", SendGuard::as_str)),
            Err(refusal) => refusal.code().as_str().into(),
        };
        assert_eq!(got, expected, "{mode:?} {status:?}");
        // check_target applies the same table.
        let via_target = target(
            mode.as_str(),
            &args("t1", "hi"),
            &preflight(CORE, 100, status),
        );
        assert_eq!(via_target.trim_start_matches("cleared "), expected);
    }
}
