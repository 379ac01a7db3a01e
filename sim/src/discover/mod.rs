//! `rpc.discover`: the core's own OpenRPC document (model from public
//! clients, unverified: a client that wraps hc's API lists its methods from
//! it). Nobody here has seen hc's real one, and it will not be worded like
//! the model, so the simulator can describe itself in more than one way
//! (`--discover-style`):
//!
//! - `model` (the default): the modelled document itself, with the version
//!   played;
//! - `terse`: results as `required` lists without `properties`, the params
//!   a caller always sends anyway (`framing`, `client`, `include_finished`,
//!   `submit`) shown optional, as a document generated from defaults might,
//!   and no `force` (this core still reads them all: the document is
//!   terse, the core the same);
//! - `refs`: every schema in `components`, pointed at with `$ref`, params
//!   as content descriptors, type lists for nullable fields, `allOf`,
//!   `paramStructure: "by-name"`, and `"x-additional-params": false`
//!   (this core refuses params it does not name);
//! - `required-extra`, `wider-field`, `ref-cycle`: `refs` described wrongly
//!   on purpose, one way each that a check must refuse: a required param
//!   no client sends (`session`), `created_ms` typed integer or string, a
//!   `$ref` cycle around the record.
//!
//! `terse` and `refs` are built from what this core serves (`served`, and
//! the params of `wire::params_of`), not from the model's file. In every
//! style: with `--evidence`, records as real cores send them (the fields
//! they add, without the ones they lack); with `--no-if-guard`, a
//! `terminal.send` without `if`.

mod refs;
mod served;
pub(crate) mod style;
mod terse;

use serde_json::{Map, Value, json};

use crate::evidence::{DROPPED_FIELDS, DROPPED_SCREEN_FIELDS};
use crate::sim::Sim;
use crate::wire::Method;
pub use style::DiscoverStyle;

/// The modelled contract, as the adapter reads it.
const MODEL: &str = include_str!("../../../src/hc/hc-0.1.15.openrpc.json");

/// The document this core answers `rpc.discover` with.
pub(crate) fn document(sim: &Sim) -> Value {
    let mut document = match sim.discover_style {
        DiscoverStyle::Model => model(sim),
        DiscoverStyle::Terse => terse::document(sim),
        DiscoverStyle::Refs
        | DiscoverStyle::RequiredExtra
        | DiscoverStyle::WiderField
        | DiscoverStyle::RefCycle => refs::document(sim),
    };
    match sim.discover_style {
        DiscoverStyle::RequiredExtra => refs::require_session(&mut document),
        DiscoverStyle::WiderField => refs::widen_created_ms(&mut document),
        DiscoverStyle::RefCycle => refs::cycle_the_record(&mut document),
        _ => {}
    }
    document
}

/// The modelled document, changed where this core differs from the model.
fn model(sim: &Sim) -> Value {
    let mut document: Value = serde_json::from_str(MODEL).unwrap_or_default();
    document["info"]["version"] = json!(sim.version);
    if sim.evidence {
        let record = &mut document["components"]["schemas"]["TerminalRecord"];
        if let Some(properties) = record["properties"].as_object_mut() {
            for field in DROPPED_FIELDS {
                properties.remove(field);
            }
            for (name, schema) in served::added_record_fields() {
                properties.insert(name.to_owned(), schema);
            }
        }
        if let Some(screen) = method(&mut document, Method::Read)
            .and_then(|m| m["result"]["schema"]["properties"].as_object_mut())
        {
            for field in DROPPED_SCREEN_FIELDS {
                screen.remove(field);
            }
        }
    }
    if !sim.if_guard
        && let Some(params) =
            method(&mut document, Method::Send).and_then(|m| m["params"].as_array_mut())
    {
        params.retain(|p| p["name"] != "if");
    }
    document
}

/// The method of `document` named as `method` is.
fn method(document: &mut Value, method: Method) -> Option<&mut Map<String, Value>> {
    document["methods"]
        .as_array_mut()?
        .iter_mut()
        .filter_map(Value::as_object_mut)
        .find(|m| m.get("name").and_then(Value::as_str) == Some(method.name()))
}

/// The methods every style describes, in the contract's order.
const DESCRIBED: [Method; 5] = [
    Method::Hello,
    Method::List,
    Method::Get,
    Method::Read,
    Method::Send,
];

/// The document's frame: its version, title and methods.
fn frame(sim: &Sim, methods: Vec<Value>) -> Value {
    json!({
        "openrpc": "1.3.2",
        "info": {"title": "herdr-core (hc-sim)", "version": sim.version},
        "methods": methods,
    })
}

#[cfg(test)]
mod tests;
