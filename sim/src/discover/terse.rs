//! The `terse` document: each method's params with a bare type (the ones
//! a caller always sends anyway shown optional, `force` left out), and
//! each result as the `required` list of the fields this core always
//! sends, with no `properties`.

use serde_json::{Value, json};

use super::{DESCRIBED, frame, served};
use crate::sim::Sim;
use crate::wire::{Guard, Method, ParamKind, ParamSpec, params_of};

pub(super) fn document(sim: &Sim) -> Value {
    let methods = DESCRIBED
        .into_iter()
        .map(|method| {
            let params: Vec<Value> = params_of(method)
                .iter()
                .filter(|spec| shown(sim, spec))
                .map(param)
                .collect();
            let fields = match method {
                Method::Hello => served::hello(sim),
                Method::List => served::list(),
                Method::Get => served::record(sim),
                Method::Read => served::screen(sim),
                _ => served::sent(),
            };
            let required: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
            json!({
                "name": method.name(),
                "params": params,
                "result": {"name": "result", "schema": {"type": "object", "required": required}},
            })
        })
        .collect();
    frame(sim, methods)
}

/// Whether the terse document names this param: not `force`, and not `if`
/// on a core without the guard.
fn shown(sim: &Sim, spec: &ParamSpec) -> bool {
    match spec.kind {
        ParamKind::Force => false,
        ParamKind::Guard => sim.if_guard,
        _ => true,
    }
}

fn param(spec: &ParamSpec) -> Value {
    let schema = match spec.kind {
        ParamKind::Generation | ParamKind::Lines => json!({"type": "integer"}),
        ParamKind::Framing | ParamKind::Address | ParamKind::Text => json!({"type": "string"}),
        ParamKind::Client => json!({"type": "object"}),
        ParamKind::Flag | ParamKind::Force => json!({"type": "boolean"}),
        ParamKind::Guard => {
            let guards: Vec<&str> = Guard::ALL.iter().map(|g| g.status().as_str()).collect();
            json!({"type": "string", "enum": guards})
        }
    };
    // What a caller always sends anyway is shown optional here.
    let optional = matches!(
        spec.kind,
        ParamKind::Framing | ParamKind::Client | ParamKind::Flag
    );
    let mut param = json!({"name": spec.name, "schema": schema});
    if spec.required && !optional {
        param["required"] = json!(true);
    }
    param
}
