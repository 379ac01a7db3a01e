//! What the guard answers for each kind of bad message, and that good ones
//! pass unchanged.

use serde_json::Value;

use super::*;

fn answered(bytes: &str) -> Value {
    match check(bytes.as_bytes()) {
        Screened::Reply(answer) => serde_json::from_str(&answer.to_json()).unwrap(),
        other => panic!("{bytes}: {other:?}"),
    }
}

#[test]
fn not_json_is_a_parse_error_with_a_null_id() {
    for bad in ["not json", "{\"jsonrpc\":", "{} trailing", "\u{0}", "[1,"] {
        let answer = answered(bad);
        assert_eq!(answer["error"]["code"], -32700, "{bad}");
        assert_eq!(answer["id"], Value::Null, "{bad}");
        assert!(answer.as_object().unwrap().contains_key("id"), "{bad}");
    }
}

#[test]
fn json_that_is_not_one_message_is_an_invalid_request_with_a_null_id() {
    for bad in [
        r#"{"foo":1}"#,
        r#"{"jsonrpc":"2.0","id":1}"#,
        "5",
        "[]",
        r#"[{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":5}"#,
    ] {
        let answer = answered(bad);
        assert_eq!(answer["error"]["code"], -32600, "{bad}");
        assert_eq!(answer["id"], Value::Null, "{bad}");
    }
    let batch = answered(r#"[{"jsonrpc":"2.0","id":2,"method":"ping"}]"#);
    assert!(
        batch["error"]["message"]
            .as_str()
            .unwrap()
            .contains("batch")
    );
}

#[test]
fn a_repeated_tool_argument_is_an_invalid_arguments_result() {
    let answer = answered(
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_prompt","arguments":{"address":"t3","text":"hi","address":"t4"}}}"#,
    );
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["result"]["isError"], true);
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("`address` in params.arguments"), "{text}");
    assert!(text.contains("[invalid_params]"), "{text}");
}

#[test]
fn repeated_keys_elsewhere_are_refused_with_what_can_be_trusted() {
    let deep = answered(
        r#"{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"cursor":"a","cursor":"b"}}"#,
    );
    assert_eq!(deep["id"], "x");
    assert_eq!(deep["error"]["code"], -32602);
    let top = answered(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#);
    assert_eq!(top["id"], Value::Null);
    assert_eq!(top["error"]["code"], -32600);
    let escaped = answered(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1,"\u0061":2}}}"#,
    );
    assert_eq!(escaped["result"]["isError"], true, "{escaped}");
    let in_array =
        answered(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"l":[{"k":1,"k":2}]}}"#);
    assert!(
        in_array["error"]["message"]
            .as_str()
            .unwrap()
            .contains("params.l.0")
    );
}

#[test]
fn valid_messages_pass_and_bad_notifications_are_ignored() {
    for good in [
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":{"a":1}}}}"#,
    ] {
        assert!(
            matches!(check(good.as_bytes()), Screened::Message(_)),
            "{good}"
        );
    }
    assert!(matches!(
        check(br#"{"jsonrpc":"2.0","method":"$/weird","params":5}"#),
        Screened::Ignore
    ));
}
