//! The contract types' rules: what a record needs, how statuses, errors
//! and addresses are read.

use super::*;
use serde_json::{Value, json};

#[test]
fn status_mismatch_needs_code_and_kind_to_agree_whatever_the_message() {
    let data = json!({"kind": "status_mismatch", "address": "t1"});
    assert_eq!(
        ErrorKind::classify(-32000, Some(&data)),
        Some(ErrorKind::StatusMismatch)
    );
    assert_eq!(ErrorKind::classify(-32000, None), None);
    assert_eq!(ErrorKind::classify(-32001, Some(&data)), None);
    let other = json!({"kind": "busy"});
    assert_eq!(ErrorKind::classify(-32000, Some(&other)), None);
}

#[test]
fn a_record_needs_only_its_four_fields_and_reads_strange_statuses_as_unknown() {
    let minimal = json!({"address": "machine/t7", "created_ms": 5, "status": "idle",
        "status_seq": 2, "argv": ["claude"], "labels": {"a": "b"}});
    let record: TerminalRecord = serde_json::from_value(minimal).unwrap();
    assert_eq!(record.address, "machine/t7");
    assert_eq!(
        (&record.submit_key, record.rows, &record.title),
        (&None, None, &None)
    );
    assert!(!record.is_finished());
    let strange = json!({"address": "t2", "created_ms": 6, "status": "thinking", "status_seq": 1});
    let record: TerminalRecord = serde_json::from_value(strange).unwrap();
    assert_eq!(record.status, TerminalStatus::Unknown);
    assert_eq!(record.reported_status.as_deref(), Some("thinking"));
    let hostile =
        json!({"address": "t3", "created_ms": 6, "status": "idle\u{202e}", "status_seq": 1});
    let record: TerminalRecord = serde_json::from_value(hostile).unwrap();
    assert_eq!(record.status, TerminalStatus::Unknown);
    assert_eq!(record.reported_status.as_deref(), Some("(5 characters)"));
    for missing in ["address", "created_ms", "status", "status_seq"] {
        let mut record =
            json!({"address": "t1", "created_ms": 1, "status": "idle", "status_seq": 1});
        record.as_object_mut().unwrap().remove(missing);
        let err = serde_json::from_value::<TerminalRecord>(record).unwrap_err();
        assert!(err.to_string().contains(missing), "{missing}: {err}");
    }
}

#[test]
fn one_unreadable_record_never_hides_the_others() {
    let listed: ListResult = serde_json::from_value(json!({"terminals": [
        {"address": "t1", "created_ms": 1, "status": "idle", "status_seq": 1},
        {"address": "t2", "status": "idle", "status_seq": 1},
        {"address": "t3\u{1b}[2J", "created_ms": 3, "status": "idle", "status_seq": 1},
        {"address": "t4", "created_ms": 4, "status": "done", "status_seq": 9},
    ]}))
    .unwrap();
    let (records, unreadable, count) = read_records(listed);
    assert_eq!(count, 2);
    let addresses: Vec<&str> = records.iter().map(|r| r.address.as_str()).collect();
    assert_eq!(addresses, ["t1", "t4"]);
    assert_eq!(unreadable.len(), 2);
    assert_eq!(unreadable[0].address.as_deref(), Some("t2"));
    assert!(
        unreadable[0].problem.contains("created_ms"),
        "{:?}",
        unreadable[0]
    );
    assert_eq!(
        unreadable[1].address, None,
        "a hostile address is not passed on"
    );
}

#[test]
fn addresses_are_opaque_bounded_and_printable() {
    for good in ["t1", "t1b", "machine/t7", "build-box.local/t12"] {
        assert_eq!(check_address(good), Ok(()), "{good}");
    }
    for bad in [
        "",
        "t1\u{1b}",
        "t\u{202e}1",
        "t 1",
        "t\u{200b}1",
        "t\u{3164}1",
        "t1\u{301}",
        "t\u{2800}",
        "t1\u{fe0f}",
    ] {
        assert!(check_address(bad).is_err(), "{bad:?}");
    }
    assert!(check_address(&"t".repeat(MAX_ADDRESS_CHARS + 1)).is_err());
}

#[test]
fn send_params_spell_if_and_omit_it_when_unguarded() {
    let guarded = SendParams {
        address: "t1",
        text: "hi",
        submit: true,
        guard: Some(SendGuard::Idle),
        force: Some(false),
    };
    assert_eq!(
        serde_json::to_value(&guarded).unwrap(),
        json!({"address":"t1","text":"hi","submit":true,"if":"idle","force":false})
    );
    let unguarded = SendParams {
        guard: None,
        ..guarded
    };
    assert_eq!(
        serde_json::to_value(&unguarded).unwrap(),
        json!({"address":"t1","text":"hi","submit":true,"force":false})
    );
    let unforced = SendParams {
        force: None,
        ..unguarded
    };
    let value = serde_json::to_value(&unforced).unwrap();
    assert_eq!(value, json!({"address":"t1","text":"hi","submit":true}));
    assert!(serde_json::to_value(&guarded).unwrap()[SendParams::FORCE] == json!(false));
}

#[test]
fn optional_fields_of_another_type_are_absent_and_unreadable_records_are_bounded() {
    let odd = json!({"address": "t1", "created_ms": 1, "status": "idle", "status_seq": 1,
        "rows": -1, "title": {"a": 1}, "finished_ms": "soon"});
    let record: TerminalRecord = serde_json::from_value(odd).unwrap();
    assert_eq!(
        (record.rows, &record.title, record.finished_ms),
        (None, &None, None)
    );
    let broken: Vec<Value> = (0..50)
        .map(|i| json!({"address": format!("t{i}")}))
        .collect();
    let listed: ListResult = serde_json::from_value(json!({ "terminals": broken })).unwrap();
    let (records, unreadable, count) = read_records(listed);
    assert!(records.is_empty());
    assert_eq!(unreadable.len(), MAX_UNREADABLE);
    assert_eq!(count, 50);
}

#[test]
fn started_is_true_false_or_absent_and_anything_else_breaks_the_result() {
    let result = |started: Option<Value>| {
        let mut value = json!({"address": "t1", "created_ms": 1, "accepted": true,
            "status": "working", "status_seq": 2});
        if let Some(started) = started {
            value["started"] = started;
        }
        serde_json::from_value::<SendResult>(value).map(|r| r.started)
    };
    assert_eq!(result(None).unwrap(), None);
    assert_eq!(result(Some(json!(true))).unwrap(), Some(true));
    assert_eq!(result(Some(json!(false))).unwrap(), Some(false));
    for malformed in [json!(null), json!("false"), json!(0), json!({})] {
        assert!(result(Some(malformed.clone())).is_err(), "{malformed}");
    }
}
