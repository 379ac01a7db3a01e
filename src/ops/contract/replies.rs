//! One reply as the checker reads it, below what the model says of its
//! result: whether it is one JSON line at all, its JSON-RPC envelope, an
//! error object's code, `data.kind` and `message`, and the hello's pins.

use serde_json::{Value, json};

use super::probe::{self, Ask, Received};
use super::report::Findings;
use super::{Difference, Group, Rule};
use crate::hc::wire::{ErrorKind, PINNED_FRAMING, PINNED_GENERATION, PINNED_VERSION};

/// The version is reported first, in the header; generation and framing
/// other than the pins are differences.
pub(super) fn check_pins(hello: &Value, findings: &mut Findings) {
    if let Some(version) = hello.get("version").and_then(Value::as_str)
        && version != PINNED_VERSION
    {
        findings.add(Difference::new(
            Rule::ReplyOther,
            Group::Handshake,
            Ask::Hello.method(),
            "version",
            format!(
                "{} (not the built-in {PINNED_VERSION}: spoken once accepted, with --accept when nothing below would make a call fail)",
                crate::escape::bounded(version, 64)
            ),
        ));
    }
    if hello.get("generation").and_then(Value::as_u64) != Some(PINNED_GENERATION) {
        findings.add(Difference::new(
            Rule::Pins,
            Group::Handshake,
            Ask::Hello.method(),
            "generation",
            format!(
                "{} (the pin is {PINNED_GENERATION})",
                shown(hello.get("generation"))
            ),
        ));
    }
    if hello.get("framing").and_then(Value::as_str) != Some(PINNED_FRAMING) {
        findings.add(Difference::new(
            Rule::Pins,
            Group::Handshake,
            Ask::Hello.method(),
            "framing",
            format!(
                "{} (the pin is {PINNED_FRAMING})",
                shown(hello.get("framing"))
            ),
        ));
    }
}

fn shown(value: Option<&Value>) -> String {
    value.map_or("absent".to_owned(), |v| {
        crate::escape::bounded(&v.to_string(), 64).into_owned()
    })
}

/// The reply as JSON, or the difference it makes.
pub(super) fn received_json(
    method: &str,
    received: Received,
    findings: &mut Findings,
) -> Option<Value> {
    let why = match received {
        Received::Json(value) => return Some(value),
        Received::NotJson { bytes, first } => {
            findings.lost = true;
            findings.add(Difference::new(
                Rule::Unreachable,
                Group::NotJson,
                method,
                "",
                format!(
                    "{bytes} byte(s) that are not one JSON line, starting {}{}",
                    probe::hex(&first),
                    suggestion(&first)
                ),
            ));
            return None;
        }
        Received::Closed => "the core closed the connection instead of answering",
        Received::TimedOut => "no reply within timeoutMs",
        Received::TooLarge => "the reply passed 1 MiB without a line end",
    };
    findings.lost = true;
    findings.add(Difference::new(
        Rule::Unreachable,
        Group::Unreachable,
        method,
        "",
        format!(
            "{why}; the check stops here (replies on this connection can no longer be paired with requests)"
        ),
    ));
    None
}

/// What bytes that are not JSON suggest.
fn suggestion(first: &[u8]) -> &'static str {
    // [channel u32 LE][kind u8][len u32 LE]: channel 0 carries JSON-RPC in
    // the binary framed mode public clients of hc describe.
    if first.len() >= 9 && first[..4] == [0, 0, 0, 0] {
        return ": this looks like hc's binary framed mode (channel 0, then a kind byte and a length), which the core switched this connection to after the hello; this adapter speaks only plain line framing";
    }
    if first.first().is_some_and(|b| *b == b'{') {
        return ": JSON cut short or malformed";
    }
    ""
}

/// The JSON-RPC envelope: `Ok(result)`, `Err(error object)`, or the
/// difference it makes.
pub(super) fn envelope(
    method: &str,
    id: u64,
    reply: Value,
    findings: &mut Findings,
) -> Option<Result<Value, Value>> {
    let broken = |findings: &mut Findings, rule: Rule, detail: String| {
        findings.add(Difference::new(rule, Group::Envelope, method, "", detail));
    };
    if reply.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        broken(
            findings,
            Rule::Envelope,
            "`jsonrpc` is not \"2.0\"".to_owned(),
        );
    }
    if reply.get("id") != Some(&json!(id)) {
        broken(
            findings,
            Rule::Unreachable,
            format!(
                "the reply's id is {}, the request's {id}: it answers another request, so it is not compared, and the check stops here",
                shown(reply.get("id"))
            ),
        );
        findings.lost = true;
        return None;
    }
    match (reply.get("result"), reply.get("error")) {
        (Some(result), None) => Some(Ok(result.clone())),
        (None, Some(error)) => Some(Err(error.clone())),
        _ => {
            broken(
                findings,
                Rule::Envelope,
                "not exactly one of `result` and `error`".to_owned(),
            );
            None
        }
    }
}

/// An error object: a code and `data.kind` the model names, and whether
/// its `message` is the kind's name. `expected_code` is the code it must
/// have, when the call was meant to fail.
pub(super) fn error_object(
    method: &str,
    error: &Value,
    expected_code: Option<i64>,
    findings: &mut Findings,
) {
    let code = error.get("code").and_then(Value::as_i64);
    let data_kind = error
        .get("data")
        .and_then(|d| d.get("kind"))
        .and_then(Value::as_str);
    let message = error.get("message").and_then(Value::as_str);
    if let Some(expected) = expected_code
        && code != Some(expected)
    {
        findings.add(Difference::new(
            Rule::ErrorShape,
            Group::ErrorShape,
            method,
            "code",
            format!(
                "{} (the standard code is {expected})",
                shown(error.get("code"))
            ),
        ));
    }
    let modelled = code.and_then(|c| ErrorKind::all().into_iter().find(|k| k.code() == c));
    match (modelled, data_kind) {
        (Some(kind), Some(data_kind)) if data_kind != kind.name() => findings.add(Difference::new(
            Rule::ErrorShape,
            Group::ErrorShape,
            method,
            "data.kind",
            format!(
                "{} for code {}; the model has {}",
                crate::escape::bounded(data_kind, 64),
                kind.code(),
                kind.name()
            ),
        )),
        (_, None) => findings.add(Difference::new(
            Rule::ErrorShape,
            Group::ErrorShape,
            method,
            "data.kind",
            "absent: the adapter tells hc's error kinds apart by code and data.kind".to_owned(),
        )),
        _ => {}
    }
    if let (Some(message), Some(kind)) = (message, data_kind)
        && message != kind
    {
        findings.add(Difference::new(
            Rule::ErrorMessage,
            Group::ErrorMessage,
            method,
            "message",
            format!(
                "{:?} for kind {} (the adapter shows message, never reads it)",
                crate::escape::bounded(message, 80),
                crate::escape::bounded(kind, 64)
            ),
        ));
    }
}
