//! The `refs` document: every schema in `components` and pointed at with
//! `$ref` (params as content descriptors too), nullable fields as type
//! lists, the fields a record, a screen and a send result share as one
//! `Lifetime` each of them takes with `allOf`, `paramStructure: "by-name"`,
//! and `"x-additional-params": false`: this core refuses a param it does
//! not name. Also the three ways it can be described wrongly on purpose.

use serde_json::{Map, Value, json};

use super::served::{self, Field, Holds};
use super::{DESCRIBED, frame};
use crate::sim::Sim;
use crate::wire::{Guard, Method, ParamKind, ParamSpec, Status, params_of};

const SCHEMAS: &str = "#/components/schemas/";
const DESCRIPTORS: &str = "#/components/contentDescriptors/";

fn to(schema: &str) -> Value {
    json!({ "$ref": format!("{SCHEMAS}{schema}") })
}

pub(super) fn document(sim: &Sim) -> Value {
    let (record, screen, sent) = (served::record(sim), served::screen(sim), served::sent());
    let shared: Vec<Field> = record
        .iter()
        .filter(|f| {
            screen.iter().any(|s| s.name == f.name) && sent.iter().any(|s| s.name == f.name)
        })
        .cloned()
        .collect();
    let rest = |fields: &[Field]| -> Vec<Field> {
        fields
            .iter()
            .filter(|f| !shared.iter().any(|s| s.name == f.name))
            .cloned()
            .collect()
    };
    let list = served::list();
    let list_field = list.first().map_or(String::new(), |f| f.name.clone());
    let statuses: Vec<&str> = Status::ALL.iter().map(|s| s.as_str()).collect();
    let guards: Vec<Value> = Guard::ALL
        .iter()
        .map(|g| json!({"const": g.status().as_str()}))
        .collect();
    let schemas = json!({
        "Address": {"type": "string", "description": "a terminal: t1, or machine/t7 on another machine"},
        "Status": {"type": "string", "enum": statuses, "x-sim": "self-reported over OSC 7501"},
        "Guard": {"oneOf": guards},
        "Client": {"type": "object", "description": "who is calling: name and version"},
        "Hello": object(&served::hello(sim)),
        "Lifetime": object(&shared),
        "Record": {"allOf": [to("Lifetime"), object(&rest(&record))]},
        "Screen": {"allOf": [to("Lifetime"), object(&rest(&screen))]},
        "Sent": {"allOf": [to("Lifetime"), object(&rest(&sent))]},
        "List": {"type": "object", "required": [list_field],
            "properties": {list_field.clone(): {"type": "array", "items": to("Record")}}},
    });
    let mut descriptors = Map::new();
    let methods = DESCRIBED
        .into_iter()
        .map(|method| {
            let params: Vec<Value> = params_of(method)
                .iter()
                .filter(|spec| spec.kind != ParamKind::Guard || sim.if_guard)
                .map(|spec| {
                    descriptors.insert(spec.name.to_owned(), descriptor(spec));
                    json!({ "$ref": format!("{DESCRIPTORS}{}", spec.name) })
                })
                .collect();
            let result = match method {
                Method::Hello => "Hello",
                Method::List => "List",
                Method::Get => "Record",
                Method::Read => "Screen",
                _ => "Sent",
            };
            json!({
                "name": method.name(),
                "paramStructure": "by-name",
                "params": params,
                "result": {"name": "result", "schema": to(result)},
            })
        })
        .collect();
    let mut document = frame(sim, methods);
    document["x-additional-params"] = json!(false);
    document["components"] = json!({"schemas": schemas, "contentDescriptors": descriptors});
    document
}

/// An object of `fields`, every one of them always sent.
fn object(fields: &[Field]) -> Value {
    let properties: Map<String, Value> = fields
        .iter()
        .map(|f| {
            let schema = match f.holds {
                Holds::Address => to("Address"),
                Holds::Status => to("Status"),
                Holds::Other => f.schema.clone(),
            };
            (f.name.clone(), schema)
        })
        .collect();
    let required: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    json!({"type": "object", "required": required, "properties": properties})
}

fn descriptor(spec: &ParamSpec) -> Value {
    let schema = match spec.kind {
        ParamKind::Generation | ParamKind::Lines => json!({"type": "integer", "minimum": 0}),
        ParamKind::Framing | ParamKind::Text => json!({"type": "string"}),
        ParamKind::Address => to("Address"),
        ParamKind::Client => to("Client"),
        ParamKind::Flag | ParamKind::Force => json!({"type": "boolean"}),
        ParamKind::Guard => to("Guard"),
    };
    json!({"name": spec.name, "required": spec.required, "schema": schema})
}

/// `required-extra`: `terminal.send` requires a `session` no client sends.
pub(super) fn require_session(document: &mut Value) {
    document["components"]["contentDescriptors"]["session"] =
        json!({"name": "session", "required": true, "schema": {"type": "string"}});
    if let Some(params) = document["methods"]
        .as_array_mut()
        .and_then(|m| m.iter_mut().find(|m| m["name"] == Method::Send.name()))
        .and_then(|send| send["params"].as_array_mut())
    {
        params.push(json!({ "$ref": format!("{DESCRIPTORS}session") }));
    }
}

/// `wider-field`: the first whole-number field every result shares (a
/// lifetime's `created_ms`) typed integer or string.
pub(super) fn widen_created_ms(document: &mut Value) {
    if let Some(properties) =
        document["components"]["schemas"]["Lifetime"]["properties"].as_object_mut()
        && let Some(field) = properties
            .values_mut()
            .find(|schema| schema["type"] == "integer")
    {
        *field = json!({"type": ["integer", "string"]});
    }
}

/// `ref-cycle`: the record is a `$ref` to a schema that takes the record.
pub(super) fn cycle_the_record(document: &mut Value) {
    let schemas = &mut document["components"]["schemas"];
    schemas["Record"] = to("TerminalRecord");
    schemas["TerminalRecord"] = json!({"allOf": [to("Record")]});
}
