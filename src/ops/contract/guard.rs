//! Whether a core has shown its `if` guard, the one an idle-only send rests
//! on: a core is accepted only when it has, never on the model's word.
//! Two ways count:
//!
//! - its own document (`rpc.discover`) declares, once and not deprecated,
//!   a `terminal.send` whose `if` can take `"idle"` ([`declared`]);
//! - a live check on a terminal the operator names (`--guard-check
//!   ADDRESS`), [`live`]: one `terminal.send` with empty text, no submit,
//!   no force, and `if` set to the status the terminal is NOT in (`working`
//!   when it is idle, else `idle`). A core that honours `if` refuses it
//!   with `status_mismatch` before writing anything; a core that ignores
//!   `if` writes the empty text and no Enter, which types nothing (with
//!   bracketed paste on, an empty paste: the two markers, no character
//!   between). Empty text and no submit were chosen over any other probe
//!   because they are what types nothing on every core, guarded or not;
//!   a mismatching status because only a refusal shows the guard. Only
//!   `status_mismatch` (its code and `data.kind`) passes; a write, another
//!   error, a held send or no answer does not, and says why.

use serde_json::Value;

use super::model::{Document, Param};
use super::probe::{Probe, Received};
use super::schema::Unreadable;
use crate::hc::wire::{ErrorKind, Method, TerminalStatus};

/// The guard's param, and the one writer it guards.
const GUARD: &str = "if";

/// Why a document does not show the guard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Fault {
    /// It does not declare one (no `terminal.send`, or no `if` param): the
    /// core may still show it live.
    NotDeclared(String),
    /// It declares one ambiguously (twice), withdrawn (deprecated) or
    /// unable to take `"idle"`: a refusal, whatever a live check shows.
    Unsound(String),
    /// What it declares cannot be read (see `schema`): a refusal too, never
    /// a guess.
    Unreadable(Unreadable),
}

impl Fault {
    /// What is wrong, worded to follow "the document".
    pub(super) fn why(&self) -> String {
        match self {
            Fault::NotDeclared(why) | Fault::Unsound(why) => why.clone(),
            Fault::Unreadable(what) => format!(
                "declares an `{GUARD}` for {} that cannot be read ({what})",
                Method::Send
            ),
        }
    }
}

/// Whether `document` declares the guard soundly: one `terminal.send`, not
/// deprecated, with one `if` param that is not deprecated and can take
/// `"idle"` (as its schema reads: an enum or a `const` holding it, a plain
/// `string`, through `$ref`s and combinators).
pub(super) fn declared(document: &Document) -> Result<(), Fault> {
    let send = Method::Send.as_str();
    let methods = document.methods_named(send);
    let (method, at) = match methods.as_slice() {
        [] => return Err(Fault::NotDeclared(format!("has no {send}"))),
        [one] => one,
        more => {
            return Err(Fault::Unsound(format!(
                "declares {send} {} times: which one the core follows cannot be known, so neither guard counts",
                more.len()
            )));
        }
    };
    if deprecated(method) {
        return Err(Fault::Unsound(format!("marks {send} deprecated")));
    }
    let params = document.params(method, at).map_err(Fault::Unreadable)?;
    let guards: Vec<&Param<'_>> = params.iter().filter(|p| p.name == GUARD).collect();
    let param = match guards.as_slice() {
        [] => {
            return Err(Fault::NotDeclared(format!(
                "declares no `{GUARD}` param for {send}"
            )));
        }
        [one] => *one,
        more => {
            return Err(Fault::Unsound(format!(
                "declares `{GUARD}` {} times for {send}",
                more.len()
            )));
        }
    };
    if param.deprecated {
        return Err(Fault::Unsound(format!(
            "marks the `{GUARD}` param of {send} deprecated: a withdrawn guard is no guard"
        )));
    }
    let Some(schema) = param.schema else {
        return Err(Fault::Unsound(format!(
            "gives the `{GUARD}` param of {send} no schema"
        )));
    };
    let reader = document.reader();
    let shape = reader.shape(schema, &param.at).map_err(Fault::Unreadable)?;
    let idle = Value::from(TerminalStatus::Idle.as_str());
    match reader.takes(&shape, &idle) {
        Ok(true) => Ok(()),
        Ok(false) => Err(Fault::Unsound(format!(
            "declares an `{GUARD}` for {send} that cannot take \"idle\""
        ))),
        Err(what) => Err(Fault::Unreadable(what)),
    }
}

fn deprecated(value: &Value) -> bool {
    value.get("deprecated").and_then(Value::as_bool) == Some(true)
}

/// What the live check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Live {
    /// The core refused the mismatching send with `status_mismatch`.
    Refused {
        address: String,
        /// The `if` sent.
        sent_if: &'static str,
        /// The status the terminal was in.
        status: TerminalStatus,
    },
    /// The core wrote although the terminal was not in the `if` status:
    /// it ignores the guard (what it did, in words).
    Ignored(String),
    /// The check showed nothing either way; why, in words.
    Inconclusive(String),
}

/// The live check on `address`, on the probe's connection; `send_timeout`
/// bounds the one send (hc may hold it while a draft sits in the input);
/// `force`: whether it carries `force: false` (not when the core's own
/// document does not declare `force`).
pub(super) async fn live(
    probe: &mut Probe,
    address: &str,
    send_timeout: std::time::Duration,
    force: bool,
) -> Live {
    let not_shown = Live::Inconclusive;
    let (_, received) = probe.ask_record(address).await;
    let record = match received {
        Received::Json(reply) => match reply.get("result") {
            Some(record) => record.clone(),
            None => {
                return not_shown(format!(
                    "terminal.get {} was answered {}: name a live terminal of this core",
                    shown(address),
                    shown_value(reply.get("error"))
                ));
            }
        },
        other => return not_shown(format!("terminal.get {} got {other:?}", shown(address))),
    };
    if record.get("finished_ms").is_some_and(|f| !f.is_null())
        || record.get("exit_code").is_some_and(|c| !c.is_null())
    {
        return not_shown(format!(
            "{} has finished: name a live terminal",
            shown(address)
        ));
    }
    let word = record.get("status").and_then(Value::as_str).unwrap_or("");
    let status = TerminalStatus::from_reported(word).0;
    if status == TerminalStatus::Blocked {
        return not_shown(format!(
            "{} is blocked, and a core may refuse a blocked terminal before it reads `if`: name a terminal that is not blocked",
            shown(address)
        ));
    }
    let sent_if = if status == TerminalStatus::Idle {
        TerminalStatus::Working.as_str()
    } else {
        TerminalStatus::Idle.as_str()
    };
    let (id, received) = probe.ask_guard(address, sent_if, send_timeout, force).await;
    let reply = match received {
        Received::Json(reply) => reply,
        other => {
            return not_shown(format!(
                "the guard check's send got {other:?}: no refusal, so the guard is not shown"
            ));
        }
    };
    if reply.get("id") != Some(&Value::from(id)) {
        return not_shown("the guard check's send was answered under another id".to_owned());
    }
    if let Some(error) = reply.get("error") {
        let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
        return match ErrorKind::classify(code, error.get("data")) {
            Some(ErrorKind::StatusMismatch) => Live::Refused {
                address: address.to_owned(),
                sent_if,
                status,
            },
            _ => not_shown(format!(
                "the core refused the guard check's send with {}, not status_mismatch: whether it honours `if` is not shown",
                shown_value(Some(error))
            )),
        };
    }
    let result = reply.get("result");
    let field = |key: &str| result.and_then(|r| r.get(key));
    if field("started") == Some(&Value::Bool(false)) {
        return not_shown(format!(
            "the core held the guard check's send and did not start it (a draft in {}'s input?): run the check again once the input is clear",
            shown(address)
        ));
    }
    if field("status").and_then(Value::as_str) == Some(sent_if) {
        return not_shown(format!(
            "{}'s status became {sent_if} during the check, so the guard may have matched: run the check again",
            shown(address)
        ));
    }
    Live::Ignored(format!(
        "the core took the guard check's send (`if`: {sent_if}) although {} was {status}: it ignores `if`, so an idle-only send to it would type into a busy terminal; it is never accepted (the check typed nothing: empty text, no Enter)",
        shown(address)
    ))
}

fn shown(text: &str) -> String {
    crate::escape::bounded(text, 64).into_owned()
}

fn shown_value(value: Option<&Value>) -> String {
    value.map_or("nothing".to_owned(), |v| {
        crate::escape::bounded(&v.to_string(), 120).into_owned()
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The model's document with its `terminal.send` changed by `edit`.
    fn with_send(edit: impl FnOnce(&mut Vec<Value>)) -> Document {
        let mut doc: Value = serde_json::from_str(crate::hc::wire::CONTRACT_DOCUMENT).unwrap();
        edit(doc["methods"].as_array_mut().unwrap());
        Document::parse(&doc.to_string()).unwrap()
    }

    fn send_of(methods: &mut [Value]) -> &mut Value {
        methods
            .iter_mut()
            .find(|m| m["name"] == "terminal.send")
            .unwrap()
    }

    fn guard_of(methods: &mut [Value]) -> &mut Value {
        send_of(methods)["params"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|p| p["name"] == "if")
            .unwrap()
    }

    #[test]
    fn the_model_declares_its_guard() {
        assert_eq!(declared(&Document::model()), Ok(()));
    }

    #[test]
    fn a_guard_phrased_otherwise_still_counts() {
        for schema in [
            json!({"type": "string"}),
            json!({"const": "idle"}),
            json!({"type": ["string", "null"], "enum": ["idle", "working", null]}),
            json!({"anyOf": [{"const": "working"}, {"const": "idle"}]}),
            json!({"allOf": [{"type": "string"}, {"enum": ["idle"]}]}),
            json!({"$ref": "#/components/schemas/SendGuardTest"}),
        ] {
            let doc = {
                let mut doc: Value =
                    serde_json::from_str(crate::hc::wire::CONTRACT_DOCUMENT).unwrap();
                doc["components"]["schemas"]["SendGuardTest"] = json!({"enum": ["idle"]});
                let methods = doc["methods"].as_array_mut().unwrap();
                guard_of(methods)["schema"] = schema.clone();
                Document::parse(&doc.to_string()).unwrap()
            };
            assert_eq!(declared(&doc), Ok(()), "{schema}");
        }
    }

    #[test]
    fn an_ambiguous_withdrawn_or_idle_less_guard_is_unsound() {
        type Edit = Box<dyn FnOnce(&mut Vec<Value>)>;
        let cases: [(&str, Edit); 6] = [
            (
                "times",
                Box::new(|m: &mut Vec<Value>| {
                    let mut second = send_of(m).clone();
                    second["params"]
                        .as_array_mut()
                        .unwrap()
                        .retain(|p| p["name"] != "if");
                    m.push(second);
                }),
            ),
            (
                "deprecated",
                Box::new(|m: &mut Vec<Value>| guard_of(m)["deprecated"] = json!(true)),
            ),
            (
                "deprecated",
                Box::new(|m: &mut Vec<Value>| send_of(m)["deprecated"] = json!(true)),
            ),
            (
                "cannot take \"idle\"",
                Box::new(|m: &mut Vec<Value>| guard_of(m)["schema"] = json!({"enum": ["working"]})),
            ),
            (
                "cannot take \"idle\"",
                Box::new(|m: &mut Vec<Value>| guard_of(m)["schema"] = json!({"type": "integer"})),
            ),
            (
                "`if` 2 times",
                Box::new(|m: &mut Vec<Value>| {
                    let again = guard_of(m).clone();
                    send_of(m)["params"].as_array_mut().unwrap().push(again);
                }),
            ),
        ];
        for (said, edit) in cases {
            match declared(&with_send(edit)) {
                Err(Fault::Unsound(why)) => assert!(why.contains(said), "{said}: {why}"),
                other => panic!("{said}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_guard_that_cannot_be_read_is_never_taken_for_one() {
        for schema in [
            json!({"not": {"const": "working"}}),
            json!({"$ref": "guard.json#/Idle"}),
            json!({"$ref": "#/components/schemas/Nowhere"}),
        ] {
            let doc = with_send(|m| guard_of(m)["schema"] = schema.clone());
            assert!(
                matches!(declared(&doc), Err(Fault::Unreadable(_))),
                "{schema}"
            );
        }
    }

    #[test]
    fn a_document_without_the_guard_leaves_it_to_the_live_check() {
        let doc = with_send(|m| {
            send_of(m)["params"]
                .as_array_mut()
                .unwrap()
                .retain(|p| p["name"] != "if");
        });
        assert!(matches!(declared(&doc), Err(Fault::NotDeclared(_))));
        let doc = with_send(|m| m.retain(|m| m["name"] != "terminal.send"));
        assert!(matches!(declared(&doc), Err(Fault::NotDeclared(_))));
    }
}
