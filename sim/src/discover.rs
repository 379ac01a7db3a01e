//! `rpc.discover`: the core's own OpenRPC document (model from public
//! clients, unverified: a client that wraps hc's API lists its methods from
//! it). The simulator answers the modelled document itself, with the
//! version it plays, and changed where this core differs from the model:
//! with `--evidence`, records as real cores send them (the fields they add,
//! without the ones they lack); with `--no-if-guard`, a `terminal.send`
//! without `if`. The document describes what this core does, nothing else.

use serde_json::{Map, Value, json};

use crate::evidence::DROPPED_FIELDS;
use crate::sim::Sim;

/// The modelled contract, as the adapter reads it.
const MODEL: &str = include_str!("../../src/hc/hc-0.1.15.openrpc.json");

/// Fields an evidence core's records add, with their types.
fn added_record_fields() -> [(&'static str, Value); 6] {
    [
        (
            "argv",
            json!({"type": "array", "items": {"type": "string"}}),
        ),
        ("app", json!({"type": ["string", "null"]})),
        ("foreground", json!({"type": ["string", "null"]})),
        (
            "state",
            json!({"type": "string", "enum": ["running", "exited"]}),
        ),
        ("labels", json!({"type": "object"})),
        ("parent", json!({"type": ["string", "null"]})),
    ]
}

/// The document this core answers `rpc.discover` with.
pub(crate) fn document(sim: &Sim) -> Value {
    let mut document: Value = serde_json::from_str(MODEL).expect("the model is JSON");
    document["info"]["version"] = json!(sim.version);
    if sim.evidence {
        let record = &mut document["components"]["schemas"]["TerminalRecord"];
        if let Some(properties) = record["properties"].as_object_mut() {
            for field in DROPPED_FIELDS {
                properties.remove(field);
            }
            for (name, schema) in added_record_fields() {
                properties.insert(name.to_owned(), schema);
            }
        }
        if let Some(screen) = method(&mut document, "terminal.read")
            .and_then(|m| m["result"]["schema"]["properties"].as_object_mut())
        {
            screen.remove("rows");
            screen.remove("cols");
        }
    }
    if !sim.if_guard
        && let Some(params) =
            method(&mut document, "terminal.send").and_then(|m| m["params"].as_array_mut())
    {
        params.retain(|p| p["name"] != "if");
    }
    document
}

fn method<'a>(document: &'a mut Value, name: &str) -> Option<&'a mut Map<String, Value>> {
    document["methods"]
        .as_array_mut()?
        .iter_mut()
        .filter_map(Value::as_object_mut)
        .find(|m| m.get("name").and_then(Value::as_str) == Some(name))
}
