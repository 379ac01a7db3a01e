//! The config's parsing and validation rules.

use std::path::Path;
use std::time::Duration;

use super::*;
use crate::hc::CoreId;

fn parse(text: &str) -> Result<Config, ConfigError> {
    let path = Path::new("/test/config.json");
    Config::validate(path, RawConfig::parse(path, text)?)
}

fn core(id: &str) -> CoreId {
    CoreId::try_from(id.to_owned()).unwrap()
}

#[test]
fn it_applies_the_documented_defaults() {
    let config = parse(r#"{"socketPath": "/run/hc.sock"}"#).unwrap();
    assert_eq!(config.transport(), &Transport::Stdio);
    assert_eq!(config.send_mode(), SendMode::IdleOnly);
    assert_eq!(config.timeout(), Duration::from_millis(15_000));
    assert_eq!(config.wait_max(), Duration::from_millis(600_000));
    assert!(config.core_id().is_none());
    assert_eq!(config.approved_count(), 0);
}

#[test]
fn it_rejects_unknown_keys_naming_them() {
    let err = parse(r#"{"socketPath": "/run/hc.sock", "sendmode": "normal"}"#).unwrap_err();
    assert!(err.to_string().contains("sendmode"), "{err}");
    let err = parse(r#"{"socketPath": "/a", "http": {"host": "0.0.0.0"}}"#).unwrap_err();
    assert!(err.to_string().contains("host"), "{err}");
    let err = parse(
        r#"{"socketPath": "/a", "sendAllowlist": [{"address": "t1", "created_ms": 1, "x": 2}]}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains('x'), "{err}");
}

#[test]
fn it_rejects_out_of_range_and_relative_values() {
    for (text, key) in [
        (r#"{"socketPath": "hc.sock"}"#, "socketPath"),
        (r#"{"socketPath": "/a", "timeoutMs": 99}"#, "timeoutMs"),
        (r#"{"socketPath": "/a", "timeoutMs": 60001}"#, "timeoutMs"),
        (r#"{"socketPath": "/a", "waitMaxMs": 600001}"#, "waitMaxMs"),
        (
            r#"{"socketPath": "/a", "transport": "http", "http": {"port": 0}}"#,
            "http.port",
        ),
        (
            r#"{"socketPath": "/a", "transport": "http", "http": {"port": 65536}}"#,
            "http.port",
        ),
        (r#"{"socketPath": "/a", "coreId": ""}"#, "coreId"),
        (r#"{"socketPath": "/a", "sendMode": "force"}"#, "sendMode"),
        (r#"{"socketPath": "/a", "transport": "tcp"}"#, "transport"),
        (r#"{"socketPath": "/a", "http": {"port": 0}}"#, "http.port"),
        (
            r#"{"socketPath": "/a", "transport": "http", "http": {"allowedHosts": []}}"#,
            "http.allowedHosts",
        ),
        (
            r#"{"socketPath": "/a", "http": {"allowedOrigins": ["https://a.example/mcp"]}}"#,
            "http.allowedOrigins[0]",
        ),
    ] {
        let err = parse(text).expect_err(text);
        assert!(err.to_string().contains(key), "{text}: {err}");
    }
}

#[test]
fn the_shipped_examples_are_valid() {
    let stdio = parse(include_str!("../../examples/config.stdio.json")).unwrap();
    assert_eq!(stdio.transport(), &Transport::Stdio);
    assert_eq!(stdio.approved_count(), 1);
    let http = parse(include_str!("../../examples/config.http.json")).unwrap();
    assert!(matches!(
        http.transport(),
        Transport::Http(config) if config.port() == 8765
    ));
    let oauth = parse(include_str!("../../examples/config.oauth.json")).unwrap();
    let Transport::Http(config) = oauth.transport() else {
        panic!("expected http")
    };
    let super::HttpAuth::OAuth(auth) = config.auth() else {
        panic!("expected oauth")
    };
    assert_eq!(auth.resource().as_str(), "https://mcp.example.net/mcp");
}

#[test]
fn http_defaults_pin_hosts_to_the_port() {
    let config =
        parse(r#"{"socketPath": "/a", "transport": "http", "http": {"port": 9000}}"#).unwrap();
    let Transport::Http(http) = config.transport() else {
        panic!("expected http")
    };
    assert_eq!(http.allowed_hosts(), ["127.0.0.1:9000", "localhost:9000"]);
    assert!(http.allowed_origins().is_empty());
}

#[test]
fn approval_needs_the_core_id_and_the_exact_lifetime() {
    let config = parse(
        r#"{"socketPath": "/a", "coreId": "c1", "sendAllowlist": [{"address": "t1", "created_ms": 5}]}"#,
    )
    .unwrap();
    let lifetime = |a: &str, c| TerminalLifetime {
        address: a.into(),
        created_ms: c,
    };
    assert!(config.is_send_approved(&core("c1"), &lifetime("t1", 5)));
    assert!(!config.is_send_approved(&core("c2"), &lifetime("t1", 5)));
    assert!(!config.is_send_approved(&core("c1"), &lifetime("t1", 6)));
    assert!(!config.is_send_approved(&core("c1"), &lifetime("t2", 5)));
}

#[test]
fn it_rejects_a_repeated_key_naming_it_and_both_lines() {
    let text = "{\n  \"socketPath\": \"/run/hc.sock\",\n  \"sendMode\": \"idle-only\",\n  \"sendMode\": \"normal\"\n}\n";
    let err = parse(text).unwrap_err().to_string();
    assert!(
        err.contains("`sendMode` is given twice (lines 3 and 4)"),
        "{err}"
    );
    let nested = r#"{"socketPath": "/a", "sendAllowlist": [{"address": "t1", "created_ms": 1, "address": "t2"}]}"#;
    let err = parse(nested).unwrap_err().to_string();
    assert!(
        err.contains("`sendAllowlist[0].address` is given twice (lines 1 and 1)"),
        "{err}"
    );
}

#[test]
fn it_rejects_a_nul_inside_a_path() {
    let err = parse(r#"{"socketPath": "/run/hc.sock\u0000/other"}"#)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`socketPath` contains a NUL character"),
        "{err}"
    );
    let err = parse(r#"{"socketPath": "/run/hc.sock", "auditLog": "/a\u0000b"}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("`auditLog` contains a NUL character"), "{err}");
}

#[test]
fn approvals_are_counted_by_the_mode_their_sends_use() {
    let config = parse(
        r#"{"socketPath": "/run/hc.sock", "sendMode": "idle-only", "coreId": "c1", "sendAllowlist": [
            {"address": "t1", "created_ms": 1, "sendMode": "normal"},
            {"address": "t2", "created_ms": 2},
            {"address": "t3", "created_ms": 3, "sendMode": "idle-only"}
        ]}"#,
    )
    .unwrap();
    assert_eq!(config.approved_by_mode(), (2, 1));
    let all_normal = parse(
        r#"{"socketPath": "/run/hc.sock", "sendMode": "normal", "coreId": "c1", "sendAllowlist": [
            {"address": "t1", "created_ms": 1}
        ]}"#,
    )
    .unwrap();
    assert_eq!(all_normal.approved_by_mode(), (0, 1));
}

#[test]
fn a_config_that_is_not_json_names_the_file_and_the_fix() {
    let err = parse("{\"socketPath\": \n").unwrap_err().to_string();
    assert!(
        err.starts_with("config /test/config.json: it is not valid JSON ("),
        "{err}"
    );
    assert!(err.ends_with("fix the JSON in that file"), "{err}");
}

#[test]
fn hints_name_the_config_unless_it_is_the_default() {
    let config = parse(r#"{"socketPath": "/run/hc.sock"}"#).unwrap();
    assert_eq!(config.operator_flag(), " --config /test/config.json");
}

#[test]
fn a_hand_edited_allowlist_is_named_in_the_configs_words() {
    let cases = [
        (
            r#"{"socketPath": "/a", "sendAllowlist": ["t1"]}"#,
            "`sendAllowlist[0]`: must be an approved lifetime: an object with \"address\" and \"created_ms\" (what `allow` writes), got the string \"t1\"",
        ),
        (
            r#"{"socketPath": "/a", "sendAllowlist": [{"address": "t1", "created_ms": 1}, {"address": "t2"}]}"#,
            "`sendAllowlist[1]`: missing field `created_ms`",
        ),
        (
            r#"{"socketPath": "/a", "sendAllowlist": [{"address": "t1", "createdMs": 1}]}"#,
            "unknown key \"createdMs\" in \"sendAllowlist[0]\" (a misspelling?); the keys here are: address, created_ms",
        ),
        (
            r#"{"socketPath": "/a", "http": 8765}"#,
            "`http`: must be the HTTP settings: an object such as {\"port\": 8765}, got 8765",
        ),
    ];
    for (text, said) in cases {
        let err = parse(text).expect_err(text).to_string();
        assert!(err.contains(said), "{text}: {err}");
        assert!(!err.contains("Raw"), "{text}: {err}");
    }
}

#[test]
fn every_numeric_key_names_its_range_and_meaning_whatever_the_wrong_value() {
    let keys = [
        ("timeoutMs", "from 100 to 60000", "call to hc"),
        ("sendTimeoutMs", "from 1000 to 300000", "terminal.send"),
        ("waitMaxMs", "from 100 to 600000", "wait"),
        ("confirmTimeoutMs", "from 1000 to 600000", "confirmation"),
        (
            "confirmCallTimeoutMs",
            "from 1000 to 600000",
            "confirmation",
        ),
    ];
    let wrong = [
        "\"15000\"",
        "null",
        "-1",
        "1.5",
        "true",
        "{}",
        "[]",
        "5",
        "99999999999999999999",
    ];
    for (key, range, meaning) in keys {
        for value in wrong {
            let text = format!(r#"{{"socketPath": "/a", "{key}": {value}}}"#);
            let err = parse(&text).expect_err(&text).to_string();
            assert!(err.contains(&format!("`{key}`")), "{text}: {err}");
            assert!(err.contains(range), "{text}: {err}");
            assert!(err.contains(meaning), "{text}: {err}");
            assert!(err.contains("milliseconds"), "{text}: {err}");
            for rust in [
                "u64",
                "i64",
                "u16",
                "unit",
                "signed int",
                "float",
                "sequence",
                " map",
            ] {
                assert!(!err.contains(rust), "{text}: {rust} in {err}");
            }
        }
    }
    let quoted = parse(r#"{"socketPath": "/a", "sendTimeoutMs": "15000"}"#).unwrap_err();
    assert!(
        quoted
            .to_string()
            .contains("write it as a number, without quotes"),
        "{quoted}"
    );
    for (text, said) in [
        (
            r#"{"socketPath": "/a", "http": {"port": "80"}}"#,
            "from 1 to 65535",
        ),
        (
            r#"{"socketPath": "/a", "http": {"port": 0}}"#,
            "from 1 to 65535",
        ),
        (
            r#"{"socketPath": "/a", "sendAllowlist": [{"address": "t1", "created_ms": "5"}]}"#,
            "hc's created_ms",
        ),
    ] {
        let err = parse(text).expect_err(text).to_string();
        assert!(err.contains(said), "{text}: {err}");
        assert!(
            !err.contains("i64") && !err.contains("u64"),
            "{text}: {err}"
        );
    }
}

#[test]
fn json_slips_and_case_slips_are_named() {
    for (text, said) in [
        ("{\"socketPath\": \"/a\",}", "no comma before a closing"),
        (
            "{\"socketPath\": \"/a\",\n  \"sendAllowlist\": [],\n}",
            "no comma before a closing",
        ),
        (
            "{\"socketPath\": \"/a\" // hc's socket\n}",
            "JSON has no comments",
        ),
        (
            "{\"socketPath\": \"/a\", \"sendmode\": \"normal\"}",
            "did you mean \"sendMode\"",
        ),
    ] {
        let err = parse(text).expect_err(text).to_string();
        assert!(err.contains(said), "{text}: {err}");
    }
}

#[test]
fn an_accepted_version_may_omit_force_only_when_bound_to_a_document() {
    let sha = "a".repeat(64);
    let config = parse(&format!(
        r#"{{"socketPath": "/a", "hcVersions": [{{"version": "0.1.20", "document_sha256": "{sha}",
            "checked_ms": 1, "guard": "document", "params_omitted": ["force"]}}]}}"#
    ))
    .unwrap();
    let acceptance = config.acceptance();
    assert!(!acceptance.sends_force("0.1.20"));
    assert!(acceptance.sends_force("0.1.15"));
    let err = parse(
        r#"{"socketPath": "/a", "hcVersions": [{"version": "0.1.17", "document_sha256": null,
            "checked_ms": 1, "guard": "live-check", "params_omitted": ["force"]}]}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("params_omitted"), "{err}");
    let err = parse(&format!(
        r#"{{"socketPath": "/a", "hcVersions": [{{"version": "0.1.20", "document_sha256": "{sha}",
            "checked_ms": 1, "guard": "document", "params_omitted": ["submit"]}}]}}"#
    ))
    .unwrap_err();
    assert!(err.to_string().contains("hcVersions"), "{err}");
}
