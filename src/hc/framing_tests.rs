//! The reply envelope's rules, and the one-pass read held to the two
//! passes it stands in for.

use super::*;

fn parse(line: &str, id: u64) -> Result<&'static str, String> {
    parse_reply(line.as_bytes(), id).map(|r| match r {
        RpcReply::Result(_) => "result",
        RpcReply::Error(_) => "error",
    })
}

#[test]
fn accepts_exactly_one_of_result_and_error_with_matching_id() {
    assert_eq!(
        parse(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#, 3),
        Ok("result")
    );
    assert_eq!(
        parse(
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"not_found"}}"#,
            3
        ),
        Ok("error")
    );
}

/// The two passes the one-pass read stands in for.
fn two_passes<R: DeserializeOwned>(line: &[u8], id: u64) -> Option<R> {
    match parse_reply(line, id).ok()? {
        RpcReply::Result(raw) => serde_json::from_str(raw.get()).ok(),
        RpcReply::Error(_) => None,
    }
}

#[test]
fn the_one_pass_read_takes_exactly_what_the_two_passes_take() {
    let screen = r#"{"address":"t1","created_ms":5,"text":"a\u001b[1mb\nc","complete":true,"status":"idle","status_seq":2}"#;
    let mut lines: Vec<Vec<u8>> = [
        format!(r#"{{"jsonrpc":"2.0","id":3,"result":{screen}}}"#),
        format!(r#"  {{"result":{screen},"id":3,"jsonrpc":"2.0","extra":[1,{{"x":null}}]}} "#),
        format!(r#"{{"jsonrpc":"2.0","id":3,"result":{screen},"method":null}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":3,"result":{screen},"error":null}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":3,"result":{screen},"method":"x"}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":4,"result":{screen}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":"3","result":{screen}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":3.0,"result":{screen}}}"#),
        format!(r#"{{"jsonrpc":"1.0","id":3,"result":{screen}}}"#),
        format!(r#"{{"id":3,"result":{screen}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":3,"id":3,"result":{screen}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":3,"result":{screen},"result":{screen}}}"#),
        format!(r#"[{{"jsonrpc":"2.0","id":3,"result":{screen}}}]"#),
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"result":{screen},"error":{{"code":1,"message":"x"}}}}"#
        ),
        format!(r#"{{"jsonrpc":"2.0","id":3,"result":{screen}}} trailing"#),
        r#"{"jsonrpc":"2.0","id":3,"result":null}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":3,"result":{"address":"t1"}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"not_found"}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":3}"#.to_owned(),
        "not json".to_owned(),
    ]
    .into_iter()
    .map(String::into_bytes)
    .collect();
    // Bytes that are not UTF-8 in a member nobody reads.
    let mut bad_utf8 = format!(r#"{{"jsonrpc":"2.0","id":3,"result":{screen},"x":""#).into_bytes();
    bad_utf8.extend_from_slice(b"\xff\"}");
    lines.push(bad_utf8);
    let mut taken = 0;
    for line in &lines {
        let shown = String::from_utf8_lossy(line);
        let one = typed_result::<wire::ReadResult>(line, 3).map(|r| format!("{r:?}"));
        let two = two_passes::<wire::ReadResult>(line, 3).map(|r| format!("{r:?}"));
        assert_eq!(one, two, "typed: {shown}");
        let one = typed_result::<serde_json::Value>(line, 3);
        assert_eq!(
            one,
            two_passes::<serde_json::Value>(line, 3),
            "value: {shown}"
        );
        taken += usize::from(one.is_some());
    }
    // As a value: the good reply, the one with spare members, the one
    // with a null method, and the null and the partial result. Nothing
    // else is taken.
    assert_eq!(taken, 5);
}

#[test]
fn rejects_every_envelope_violation() {
    let bad = [
        r#"{"jsonrpc":"2.0","id":4,"result":{}}"#,
        r#"{"jsonrpc":"1.0","id":3,"result":{}}"#,
        r#"{"id":3,"result":{}}"#,
        r#"{"jsonrpc":"2.0","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"3","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":3}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":null,"error":{"code":1,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","method":"terminal.status","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"x","result":{}}"#,
        r#"[{"jsonrpc":"2.0","id":3,"result":{}}]"#,
        r#"{"jsonrpc":"2.0","id":3,"result":"#,
        r#"{"jsonrpc":"2.0","id":3,"id":3,"result":{}}"#,
        "not json",
    ];
    for line in bad {
        assert!(parse(line, 3).is_err(), "accepted: {line}");
    }
}
