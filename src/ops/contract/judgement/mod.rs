//! The one judgement of an OpenRPC document (a core's own, or a
//! `--schema` one), in the direction each side of the exchange goes: for
//! each method the adapter calls, the params it sends (by its own
//! encoders) against those the document declares, the fields its decoders
//! need (`wire::needs`) against those the document promises and, where it
//! promises none, against every live reply the probe saw; then the `if`
//! guard, and what in the document cannot be read. Every line names its
//! rule (`rules`), which alone says whether it breaks. Pure: no I/O.
//!
//! By side: `params` what the adapter sends, `results` what it reads;
//! here, the requests it makes and the guard.

mod params;
mod results;

use serde::Serialize;
use serde_json::Value;

use super::guard::{self, Fault};
use super::model::Document;
use super::observed::Observed;
use super::rules::Rule;
use super::{Difference, Group, schema_diff};
use crate::hc::wire::{GetParams, ListParams, Method, ReadParams, SendGuard, SendParams};

/// What one document was judged to be.
pub(super) struct Judged {
    pub differences: Vec<Difference>,
    /// Sends to this core leave `force` out.
    pub omits_force: bool,
    /// Whether it declares the `if` guard, soundly.
    pub guard: Result<(), Fault>,
}

/// Judges `document`, with the replies the probe saw; `model` names the
/// fields and methods the notes for correcting the model compare with.
pub(super) fn judge(model: &Document, document: &Document, observed: &Observed) -> Judged {
    let mut found = Vec::new();
    for what in document.unreadable_methods() {
        found.push(Difference::new(
            Rule::UnreadableOther,
            Group::Unreadable,
            "",
            "",
            format!("{what}: a method entry that cannot be read"),
        ));
    }
    let mut omits_force = false;
    for (method, variants) in requests() {
        let name = method.as_str();
        let results = match document.methods_named(name).into_iter().next() {
            Some((entry, at)) => {
                omits_force |= params::judge(document, method, entry, &at, &variants, &mut found);
                document.result(entry, &at).map(|shape| (true, shape))
            }
            None => {
                found.push(Difference::new(
                    Rule::MethodMissing,
                    Group::Missing,
                    name,
                    "",
                    "the document has no such method: what the adapter sends it is not judged, and what it reads of it counts as not promised".to_owned(),
                ));
                Ok((false, None))
            }
        };
        results::judge(document.reader(), method, results, observed, &mut found);
    }
    let guard = guard::declared(document);
    found.extend(guard_line(&guard));
    found.extend(schema_diff::notes(model, document));
    Judged {
        differences: found,
        omits_force,
        guard,
    }
}

/// A terminal address the adapter might send (any string does).
const SAMPLE_ADDRESS: &str = "t1";
/// A prompt the adapter might send (any string does).
const SAMPLE_TEXT: &str = "a prompt";

/// The params objects the adapter sends each method it calls, every way it
/// sends them, built by its own encoders.
fn requests() -> Vec<(Method, Vec<Value>)> {
    let send = |guard: Option<SendGuard>| SendParams {
        address: SAMPLE_ADDRESS,
        text: SAMPLE_TEXT,
        submit: true,
        guard,
        force: Some(false),
    };
    vec![
        (
            Method::Hello,
            vec![encoded(crate::hc::conn::hello_params())],
        ),
        (
            Method::List,
            vec![
                encoded(ListParams {
                    include_finished: false,
                }),
                encoded(ListParams {
                    include_finished: true,
                }),
            ],
        ),
        (
            Method::Get,
            vec![encoded(GetParams {
                address: SAMPLE_ADDRESS,
            })],
        ),
        (
            Method::Read,
            vec![encoded(ReadParams {
                address: SAMPLE_ADDRESS,
                lines: crate::hc::client::SCREEN_ONLY_LINES,
            })],
        ),
        // Idle-only sends carry `if`; a normal-mode send after a `done`
        // preflight does not.
        (
            Method::Send,
            vec![encoded(send(Some(SendGuard::Idle))), encoded(send(None))],
        ),
    ]
}

/// A params struct as the adapter writes it. They hold strings, numbers
/// and booleans only, which always encode.
fn encoded(params: impl Serialize) -> Value {
    serde_json::to_value(params).unwrap_or_default()
}

/// The guard's line, unless the guard is declared soundly.
fn guard_line(guard: &Result<(), Fault>) -> Option<Difference> {
    let send = Method::Send.as_str();
    let (rule, group, detail) = match guard {
        Ok(()) => return None,
        Err(Fault::NotDeclared(why)) => (
            Rule::GuardNotDeclared,
            Group::Missing,
            format!(
                "the document {why}: it does not show the guard idle-only sends rest on, so the core must show it live (--guard-check ADDRESS) before it is accepted"
            ),
        ),
        Err(Fault::Unsound(why)) => (
            Rule::GuardUnsound,
            Group::Guard,
            format!(
                "the document {why}: an idle-only send to this core would go unguarded, so it is never accepted"
            ),
        ),
        Err(fault @ Fault::Unreadable(_)) => (
            Rule::UnreadableNeeded,
            Group::Unreadable,
            format!(
                "the document {}: the guard idle-only sends rest on depends on it",
                fault.why()
            ),
        ),
    };
    Some(Difference::new(rule, group, send, "params.if", detail))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn model_json() -> Value {
        serde_json::from_str(crate::hc::wire::CONTRACT_DOCUMENT).unwrap()
    }

    fn judged(document: Value, observed: &Observed) -> Judged {
        judge(
            &Document::model(),
            &Document::from_value(document).unwrap(),
            observed,
        )
    }

    /// (rule, method, field) of each line.
    fn lines(judged: &Judged) -> Vec<(Rule, String, String)> {
        judged
            .differences
            .iter()
            .map(|d| (d.rule, d.method.clone(), d.field.clone()))
            .collect()
    }

    fn breaking(judged: &Judged) -> Vec<(Rule, String, String)> {
        judged
            .differences
            .iter()
            .filter(|d| d.breaks)
            .map(|d| (d.rule, d.method.clone(), d.field.clone()))
            .collect()
    }

    fn method_mut<'a>(doc: &'a mut Value, name: &str) -> &'a mut Value {
        doc["methods"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|m| m["name"] == name)
            .unwrap()
    }

    fn param_mut<'a>(doc: &'a mut Value, method: &str, name: &str) -> &'a mut Value {
        method_mut(doc, method)["params"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|p| p["name"] == name)
            .unwrap()
    }

    /// What a probe of a core with two terminals sees.
    fn two_terminals() -> Observed {
        let record = |address: &str| {
            json!({"address": address, "created_ms": 5, "status": "idle", "status_seq": 1,
                "title": "t", "cwd": "/"})
        };
        let mut observed = Observed::default();
        observed.add(
            Method::Hello,
            &json!({"core_id": "c", "version": "0.1.20", "generation": 1, "framing": "plain",
                "pid": 1, "started_ms": 2}),
        );
        observed.add(
            Method::List,
            &json!({"terminals": [record("t1"), record("t2")]}),
        );
        for address in ["t1", "t2"] {
            observed.add(Method::Get, &record(address));
            observed.add(
                Method::Read,
                &json!({"address": address, "created_ms": 5, "text": "", "complete": true,
                    "status": "idle", "status_seq": 1}),
            );
        }
        observed
    }

    #[test]
    fn the_model_judged_against_itself_is_clean() {
        let judged = judged(model_json(), &Observed::default());
        assert_eq!(lines(&judged), []);
        assert!(!judged.omits_force);
        assert_eq!(judged.guard, Ok(()));
    }

    #[test]
    fn a_terse_document_breaks_nothing_and_leaves_force_out() {
        let mut doc = model_json();
        let required = |names: &[&str]| json!({"type": "object", "required": names});
        for method in doc["methods"].as_array_mut().unwrap() {
            for param in method["params"].as_array_mut().unwrap() {
                if ["framing", "client", "include_finished", "submit"]
                    .contains(&param["name"].as_str().unwrap())
                {
                    param["required"] = json!(false);
                }
            }
            method["params"]
                .as_array_mut()
                .unwrap()
                .retain(|p| p["name"] != "force");
        }
        method_mut(&mut doc, "hc.hello")["result"]["schema"] =
            required(&["core_id", "version", "generation", "framing"]);
        method_mut(&mut doc, "terminal.list")["result"]["schema"] = required(&["terminals"]);
        method_mut(&mut doc, "terminal.get")["result"]["schema"] =
            required(&["address", "created_ms", "status", "status_seq", "cwd"]);
        method_mut(&mut doc, "terminal.read")["result"]["schema"] = required(&[
            "address",
            "created_ms",
            "text",
            "complete",
            "status",
            "status_seq",
        ]);
        method_mut(&mut doc, "terminal.send")["result"]["schema"] = required(&[
            "address",
            "created_ms",
            "accepted",
            "status",
            "status_seq",
            "started",
        ]);
        let judged = judged(doc, &two_terminals());
        assert_eq!(breaking(&judged), [], "{:#?}", judged.differences);
        assert!(judged.omits_force);
        assert_eq!(judged.guard, Ok(()));
        let found = lines(&judged);
        let has = |rule, method: &str, field: &str| {
            found.contains(&(rule, method.to_owned(), field.to_owned()))
        };
        assert!(
            has(Rule::ForceOmitted, "terminal.send", "params.force"),
            "{found:?}"
        );
        assert!(
            has(
                Rule::FieldSeen,
                "terminal.list",
                "result.terminals[].created_ms"
            ),
            "{found:?}"
        );
        let seen = judged
            .differences
            .iter()
            .find(|d| d.field == "result.terminals[].status_seq")
            .unwrap();
        assert_eq!(
            seen.detail,
            "not promised by the document; seen in all 2 records of 1 replies"
        );
    }

    #[test]
    fn a_document_of_refs_type_arrays_and_all_of_breaks_nothing() {
        let doc = json!({
            "openrpc": "1.3.2", "x-additional-params": false,
            "methods": [
                {"name": "hc.hello", "paramStructure": "by-name",
                 "params": [{"$ref": "#/components/contentDescriptors/Generation"},
                    {"name": "framing", "schema": {"$ref": "#/components/schemas/Framing"}},
                    {"name": "client", "schema": {"$ref": "#/components/schemas/Client"}}],
                 "result": {"name": "hello", "schema": {"$ref": "#/components/schemas/Hello"}}},
                {"name": "terminal.list", "paramStructure": "by-name",
                 "params": [{"name": "include_finished", "schema": {"type": "boolean"}}],
                 "result": {"name": "list", "schema": {"$ref": "#/components/schemas/List"}}},
                {"name": "terminal.get", "paramStructure": "by-name",
                 "params": [{"$ref": "#/components/contentDescriptors/Address"}],
                 "result": {"$ref": "#/components/contentDescriptors/Record"}},
                {"name": "terminal.read", "paramStructure": "by-name",
                 "params": [{"$ref": "#/components/contentDescriptors/Address"},
                    {"name": "lines", "required": true, "schema": {"type": "integer", "minimum": 0}}],
                 "result": {"name": "screen", "schema": {"$ref": "#/components/schemas/Screen"}}},
                {"name": "terminal.send", "paramStructure": "by-name",
                 "params": [{"$ref": "#/components/contentDescriptors/Address"},
                    {"name": "text", "required": true, "schema": {"type": "string"}},
                    {"name": "submit", "schema": {"type": "boolean", "default": true}},
                    {"name": "if", "schema": {"$ref": "#/components/schemas/Guard"}},
                    {"name": "force", "schema": {"type": ["boolean", "null"]}}],
                 "result": {"name": "sent", "schema": {"$ref": "#/components/schemas/Sent"}}}
            ],
            "components": {
                "contentDescriptors": {
                    "Generation": {"name": "generation", "required": true, "schema": {"const": 1}},
                    "Address": {"name": "address", "required": true,
                        "schema": {"$ref": "#/components/schemas/Address"}},
                    "Record": {"name": "record", "schema": {"$ref": "#/components/schemas/Record"}}
                },
                "schemas": {
                    "Framing": {"type": "string", "enum": ["plain", "framed"]},
                    "Client": {"type": "object", "properties": {"name": {"type": "string"},
                        "version": {"type": "string"}}, "x-rust": "ClientInfo"},
                    "Hello": {"type": "object", "required": ["core_id", "version", "generation", "framing"],
                        "properties": {"core_id": {"type": "string"}, "version": {"type": "string"},
                        "generation": {"type": "integer", "format": "uint64"},
                        "framing": {"$ref": "#/components/schemas/Framing"},
                        "pid": {"type": ["integer", "null"]}}},
                    "Address": {"type": "string", "pattern": "^[a-z0-9/.-]+$"},
                    "Status": {"type": "string", "description": "what the program reported"},
                    "Lifetime": {"type": "object", "required": ["address", "created_ms"],
                        "properties": {"address": {"$ref": "#/components/schemas/Address"},
                        "created_ms": {"type": "integer"}}},
                    "Record": {"allOf": [{"$ref": "#/components/schemas/Lifetime"},
                        {"type": "object", "required": ["status", "status_seq"],
                         "properties": {"status": {"$ref": "#/components/schemas/Status"},
                         "status_seq": {"type": "integer"},
                         "finished_ms": {"type": ["integer", "null"]},
                         "cwd": {"type": "string", "nullable": true}}}]},
                    "List": {"type": "object", "required": ["terminals"], "properties":
                        {"terminals": {"type": "array", "items": {"$ref": "#/components/schemas/Record"}}}},
                    "Screen": {"allOf": [{"$ref": "#/components/schemas/Lifetime"},
                        {"required": ["text", "complete", "status", "status_seq"],
                         "properties": {"text": {"type": "string"}, "complete": {"type": "boolean"},
                         "status": {"$ref": "#/components/schemas/Status"},
                         "status_seq": {"type": "integer"}, "rows": {"type": ["integer", "null"]}}}]},
                    "Guard": {"oneOf": [{"const": "idle"}, {"const": "working"}]},
                    "Sent": {"allOf": [{"$ref": "#/components/schemas/Lifetime"},
                        {"required": ["accepted", "status", "status_seq"],
                         "properties": {"accepted": {"const": true}, "status": {"type": "string"},
                         "status_seq": {"type": "integer"}, "started": {"type": "boolean"}}}]}
                }
            }
        });
        let judged = judged(doc, &Observed::default());
        assert_eq!(breaking(&judged), [], "{:#?}", judged.differences);
        assert!(!judged.omits_force);
        assert_eq!(judged.guard, Ok(()));
    }

    #[test]
    fn each_breaking_rule_is_named_with_its_place() {
        type Edit = fn(&mut Value);
        let cases: [(Edit, Rule, &str, &str); 11] = [
            (
                |d| {
                    method_mut(d, "terminal.send")["params"].as_array_mut().unwrap().push(
                        json!({"name": "session", "required": true, "schema": {"type": "string"}}),
                    );
                },
                Rule::ParamRequiredNotSent,
                "terminal.send",
                "params.session",
            ),
            (
                |d| param_mut(d, "terminal.send", "if")["required"] = json!(true),
                Rule::ParamRequiredNotSent,
                "terminal.send",
                "params.if",
            ),
            (
                |d| {
                    d["components"]["schemas"]["TerminalRecord"]["properties"]["created_ms"] =
                        json!({"type": ["integer", "string"]});
                },
                Rule::FieldWider,
                "terminal.get",
                "result.created_ms",
            ),
            (
                |d| {
                    d["components"]["schemas"]["Record"] =
                        json!({"$ref": "#/components/schemas/TerminalRecord"});
                    d["components"]["schemas"]["TerminalRecord"] =
                        json!({"$ref": "#/components/schemas/Record"});
                },
                Rule::UnreadableNeeded,
                "terminal.list",
                "result.terminals[].address",
            ),
            (
                |d| param_mut(d, "terminal.read", "lines")["schema"] = json!({"const": 1}),
                Rule::ParamRefusedValue,
                "terminal.read",
                "params.lines",
            ),
            (
                |d| {
                    d["x-additional-params"] = json!(false);
                    method_mut(d, "terminal.send")["params"]
                        .as_array_mut()
                        .unwrap()
                        .retain(|p| p["name"] != "submit");
                },
                Rule::ParamUndeclaredRefused,
                "terminal.send",
                "params.submit",
            ),
            (
                |d| method_mut(d, "terminal.get")["paramStructure"] = json!("by-position"),
                Rule::ParamsByPosition,
                "terminal.get",
                "params",
            ),
            (
                |d| {
                    method_mut(d, "terminal.send")["result"]["schema"]["properties"]["started"] =
                        json!({"type": ["boolean", "null"]});
                },
                Rule::OptionalWider,
                "terminal.send",
                "result.started",
            ),
            (
                |d| {
                    let record = &mut d["components"]["schemas"]["TerminalRecord"];
                    record["properties"]
                        .as_object_mut()
                        .unwrap()
                        .remove("created_ms");
                    record["required"] = json!(["address", "status", "status_seq"]);
                },
                Rule::FieldNotSeen,
                "terminal.get",
                "result.created_ms",
            ),
            (
                |d| {
                    d["components"]["schemas"]["TerminalRecord"]["properties"]["status"] =
                        json!({"not": {"type": "null"}});
                },
                Rule::UnreadableNeeded,
                "terminal.get",
                "result.status",
            ),
            (
                |d| param_mut(d, "terminal.send", "if")["schema"] = json!({"enum": ["working"]}),
                Rule::GuardUnsound,
                "terminal.send",
                "params.if",
            ),
        ];
        for (edit, rule, method, field) in cases {
            let mut doc = model_json();
            edit(&mut doc);
            let judged = judged(doc, &Observed::default());
            let found = breaking(&judged);
            assert!(
                found.contains(&(rule, method.to_owned(), field.to_owned())),
                "{rule:?} {method} {field}: {found:?}"
            );
            assert!(
                found.iter().all(|(r, ..)| r.breaks()),
                "only breaking rules: {found:?}"
            );
        }
    }

    #[test]
    fn a_needed_field_not_promised_counts_only_if_every_reply_carried_it() {
        let mut doc = model_json();
        let record = &mut doc["components"]["schemas"]["TerminalRecord"];
        record["properties"]
            .as_object_mut()
            .unwrap()
            .remove("created_ms");
        record["required"] = json!(["address", "status", "status_seq"]);
        let judged_with = |observed: &Observed| {
            judged(doc.clone(), observed)
                .differences
                .into_iter()
                .find(|d| d.method == "terminal.get" && d.field == "result.created_ms")
                .unwrap()
        };
        let seen = judged_with(&two_terminals());
        assert_eq!(seen.rule, Rule::FieldSeen);
        assert_eq!(
            seen.detail,
            "not promised by the document; seen in 2 replies"
        );
        let mut partly = two_terminals();
        partly.add(
            Method::Get,
            &json!({"address": "t3", "status": "idle", "status_seq": 1}),
        );
        let unseen = judged_with(&partly);
        assert_eq!(unseen.rule, Rule::FieldNotSeen);
        assert!(
            unseen.detail.contains("only 2 of 3 replies"),
            "{}",
            unseen.detail
        );
    }

    #[test]
    fn differences_the_adapter_does_without_are_notes_for_the_model() {
        let mut doc = model_json();
        let methods = doc["methods"].as_array_mut().unwrap();
        methods.push(json!({"name": "pane.report_agent", "params": [],
            "result": {"name": "r", "schema": {"type": "object"}}}));
        let record = &mut doc["components"]["schemas"]["TerminalRecord"]["properties"];
        record.as_object_mut().unwrap().remove("submit_key");
        record["cwd"] = json!({"type": "string"});
        record["labels"] = json!({"type": "object"});
        let judged = judged(doc, &Observed::default());
        assert_eq!(breaking(&judged), []);
        let found: Vec<(Group, String, String)> = judged
            .differences
            .iter()
            .map(|d| (d.group, d.method.clone(), d.field.clone()))
            .collect();
        let has = |g: Group, m: &str, f: &str| found.contains(&(g, m.to_owned(), f.to_owned()));
        assert!(has(Group::Extra, "pane.report_agent", ""), "{found:?}");
        assert!(
            has(Group::Missing, "terminal.get", "result.submit_key"),
            "{found:?}"
        );
        assert!(
            has(Group::WrongType, "terminal.get", "result.cwd"),
            "{found:?}"
        );
        assert!(
            has(Group::Extra, "terminal.get", "result.labels"),
            "{found:?}"
        );
        assert!(
            has(
                Group::Missing,
                "terminal.list",
                "result.terminals[].submit_key"
            ),
            "{found:?}"
        );
    }
}
