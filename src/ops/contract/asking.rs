//! Asking the core: the handshake (its pins checked, the version first),
//! its own document (`rpc.discover`), the list, each terminal's record and
//! screen, and one unknown method; every reply's envelope, result and error
//! objects held against the model.

use serde_json::{Value, json};

use super::model::Document;
use super::probe::{self, Ask, Probe, Received};
use super::report::Findings;
use super::{
    Difference, Discovery, Group, Guard, MAX_TERMINALS, Source, compare, guard, schema_diff,
};
use crate::hc::wire::{self, ErrorKind, Method, PINNED_FRAMING, PINNED_GENERATION, PINNED_VERSION};

/// Asks the core each read method and the unknown one, comparing every
/// reply with the model.
/// With `guard_check` (a terminal, and the bound of one send), the live
/// guard check runs last.
pub(super) async fn probe_core(
    model: &Document,
    mut probe: Probe,
    guard_check: Option<(&str, std::time::Duration)>,
    findings: &mut Findings,
) {
    let hello = serde_json::to_value(crate::hc::conn::hello_params()).expect("params encode");
    let Some(result) = call(model, &mut probe, findings, Ask::Hello, hello).await else {
        return;
    };
    let fact = |key: &str| {
        result
            .get(key)
            .and_then(Value::as_str)
            .map(|v| crate::escape::bounded(v, 128).into_owned())
    };
    findings.version = fact("version");
    findings.raw_version = result
        .get("version")
        .and_then(Value::as_str)
        .map(str::to_owned);
    findings.core_id = fact("core_id");
    check_pins(&result, findings);
    discover(model, &mut probe, findings).await;
    if findings.lost {
        return;
    }
    let listed = call(
        model,
        &mut probe,
        findings,
        Ask::List,
        json!({"include_finished": true}),
    )
    .await;
    let addresses: Vec<String> = listed
        .as_ref()
        .and_then(|l| l.get("terminals"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("address").and_then(Value::as_str))
        .filter(|a| wire::check_address(a).is_ok())
        .take(MAX_TERMINALS)
        .map(str::to_owned)
        .collect();
    for address in &addresses {
        if findings.lost {
            return;
        }
        findings.terminals += 1;
        let _ = call(
            model,
            &mut probe,
            findings,
            Ask::Get,
            json!({"address": address}),
        )
        .await;
        if findings.lost {
            return;
        }
        let params = json!({"address": address, "lines": 0});
        let _ = call(model, &mut probe, findings, Ask::Read, params).await;
    }
    if !findings.lost {
        unknown_method(&mut probe, findings).await;
    }
    if let Some((address, send_timeout)) = guard_check
        && !findings.lost
    {
        *findings.calls.entry(Method::Send.as_str()).or_default() += 1;
        match guard::live(&mut probe, address, send_timeout).await {
            refused @ guard::Live::Refused { .. } => findings.guard = Guard::LiveCheck(refused),
            guard::Live::Ignored(what) => {
                findings.add(
                    Difference::new(Group::Guard, Method::Send.as_str(), "params.if", what)
                        .breaking(),
                );
                findings.guard = Guard::NotShown;
            }
            guard::Live::Inconclusive(why) => {
                findings.guard_notes.push(format!("the live check: {why}"));
            }
        }
    } else if findings.guard == Guard::NotShown && !findings.lost {
        findings
            .guard_notes
            .push("no live check was asked for (--guard-check ADDRESS)".to_owned());
    }
}

/// The version is reported first, in the header; generation and framing
/// other than the pins are differences.
fn check_pins(hello: &Value, findings: &mut Findings) {
    if let Some(version) = hello.get("version").and_then(Value::as_str)
        && version != PINNED_VERSION
    {
        findings.add(
            Difference::new(
                Group::Handshake,
                Ask::Hello.method(),
                "version",
                format!(
                    "{} (not the built-in {PINNED_VERSION}: spoken once accepted, with --accept when nothing below would make a call fail)",
                    crate::escape::bounded(version, 64)
                ),
            )
            .tolerated(),
        );
    }
    if hello.get("generation").and_then(Value::as_u64) != Some(PINNED_GENERATION) {
        findings.add(Difference::new(
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

/// One call: the reply's envelope and result held against the model. The
/// result, when there is one.
async fn call(
    model: &Document,
    probe: &mut Probe,
    findings: &mut Findings,
    ask: Ask,
    params: Value,
) -> Option<Value> {
    let method = ask.method();
    *findings.calls.entry(method).or_default() += 1;
    let (id, received) = probe.ask(ask, params).await;
    let reply = received_json(method, received, findings)?;
    let result = envelope(method, id, reply, findings)?;
    match result {
        Ok(result) => {
            if let Some(schema) = model.result(method) {
                for difference in compare::reply(model, method, schema, &result) {
                    findings.add(difference);
                }
            }
            Some(result)
        }
        Err(error) => {
            error_object(method, &error, None, findings);
            None
        }
    }
}

/// The reply as JSON, or the difference it makes.
fn received_json(method: &str, received: Received, findings: &mut Findings) -> Option<Value> {
    let why = match received {
        Received::Json(value) => return Some(value),
        Received::NotJson { bytes, first } => {
            findings.lost = true;
            findings.add(Difference::new(
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
fn envelope(
    method: &str,
    id: u64,
    reply: Value,
    findings: &mut Findings,
) -> Option<Result<Value, Value>> {
    let broken = |findings: &mut Findings, detail: String| {
        findings.add(Difference::new(Group::Envelope, method, "", detail));
    };
    if reply.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        broken(findings, "`jsonrpc` is not \"2.0\"".to_owned());
    }
    if reply.get("id") != Some(&json!(id)) {
        broken(
            findings,
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
                "not exactly one of `result` and `error`".to_owned(),
            );
            None
        }
    }
}

/// An error object: a code and `data.kind` the model names, and whether
/// its `message` is the kind's name. `expected_code` is the code it must
/// have, when the call was meant to fail.
fn error_object(method: &str, error: &Value, expected_code: Option<i64>, findings: &mut Findings) {
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

/// The core's own document, when it gives one: compared with the model as
/// a `--schema` document is, its digest kept for `--accept`. A core that
/// answers with an error does not describe itself, and is judged on the
/// observed shapes alone.
async fn discover(model: &Document, probe: &mut Probe, findings: &mut Findings) {
    let method = Ask::Discover.method();
    *findings.calls.entry(method).or_default() += 1;
    let (id, received) = probe.ask(Ask::Discover, json!({})).await;
    let Some(reply) = received_json(method, received, findings) else {
        return;
    };
    match envelope(method, id, reply, findings) {
        Some(Ok(document)) => {
            let sha256 = crate::hc::document_sha256(&document);
            match Document::from_value(document) {
                Ok(theirs) => {
                    for difference in schema_diff::documents(model, &theirs) {
                        findings.add(Difference {
                            source: Source::Discovered,
                            ..difference
                        });
                    }
                    match guard::declared(&theirs) {
                        Ok(()) => findings.guard = Guard::Document,
                        Err(fault) => findings
                            .guard_notes
                            .push(format!("its own document {}", fault.why())),
                    }
                    findings.discovery = Discovery::Described { sha256 };
                }
                Err(why) => findings.add(Difference::new(
                    Group::WrongType,
                    method,
                    "",
                    format!("the result is {why}: the core claims to describe itself, and cannot be read"),
                )),
            }
        }
        Some(Err(error)) => {
            let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
            findings.discovery = Discovery::NotOffered(code);
            findings
                .guard_notes
                .push("it does not describe itself (no rpc.discover document)".to_owned());
        }
        None => {}
    }
}

/// The error a core gives for a method it does not have.
async fn unknown_method(probe: &mut Probe, findings: &mut Findings) {
    let method = Ask::Unknown.method();
    *findings.calls.entry(method).or_default() += 1;
    let (id, received) = probe.ask(Ask::Unknown, json!({})).await;
    let Some(reply) = received_json(method, received, findings) else {
        return;
    };
    match envelope(method, id, reply, findings) {
        Some(Err(error)) => {
            const METHOD_NOT_FOUND: i64 = -32601;
            error_object(method, &error, Some(METHOD_NOT_FOUND), findings);
        }
        Some(Ok(_)) => findings.add(Difference::new(
            Group::ErrorShape,
            method,
            "",
            "a method no core has was answered with a result".to_owned(),
        )),
        None => {}
    }
}
