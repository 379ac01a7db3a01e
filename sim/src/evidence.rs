//! `--evidence`: the simulator answers the way public clients of real
//! cores show hc answering, where that differs from the modelled contract
//! (`docs/hc-evidence.md`), so the adapter's tolerance and
//! `inspect-core --check-contract` can be proven against it:
//! - error objects carry human text in `message`, the kind in `data.kind`
//!   (`unknown_method` for an unknown method) and a `data.hint`;
//! - records carry fields the model does not name (`argv`, `state`,
//!   `labels`, `parent`, `foreground`, `app`) and lack `title`,
//!   `submit_key`, `rows` and `cols`; screens lack `rows` and `cols`;
//! - an agent runs at `machine/t7`, an address of a connected machine,
//!   listed by `machine.list` with fields the model does not name;
//! - one record shows a status outside the six ([`ODD_STATUS`]).
//!
//! The calls themselves behave exactly as without it (the guard, the
//! blocked refusal, the input log): only what the replies say differs.

use std::io;

use serde_json::{Map, Value, json};

use crate::sim::Sim;
use crate::wire::{Method, RpcError};

/// The address of the agent on a "connected machine".
pub const REMOTE_AGENT: &str = "machine/t7";
/// That machine's name, as `machine.list` lists it.
pub const REMOTE_MACHINE: &str = "machine";
/// The status word the odd record shows: none of the six.
pub const ODD_STATUS: &str = "paused";
/// A label each record carries (real cores carry the user's labels, which
/// a shareable record must not keep).
pub const LABEL: &str = "evidence-label";
/// What real cores put in `data.hint`.
const HINT: &str = "see `hc schema`";
/// Record fields the model names that real cores' records lack.
pub(crate) const DROPPED_FIELDS: [&str; 4] = ["title", "submit_key", "rows", "cols"];
/// Screen fields the model names that real cores' screens lack.
pub(crate) const DROPPED_SCREEN_FIELDS: [&str; 2] = ["rows", "cols"];

/// The terminals only an evidence core has, after the usual ones.
pub async fn add_terminals(sim: &Sim) -> io::Result<()> {
    sim.spawn_agent_at(REMOTE_AGENT).await?;
    // Its machine, listed as a real core might: with fields the model does
    // not name (`host`, `transport`).
    sim.machines.play(json!({
        "name": REMOTE_MACHINE,
        "state": "connected",
        "core_id": uuid::Uuid::new_v4().to_string(),
        "version": sim.version,
        "since_ms": sim.identity.started_ms,
        "host": "build.example",
        "transport": "ssh",
    }));
    sim.add_record_showing(ODD_STATUS);
    Ok(())
}

/// Rewrites one reply as a real core would send it.
pub fn reshape(sim: &Sim, method: Option<Method>, reply: &mut Result<Value, RpcError>) {
    match reply {
        Err(error) => humanize(error),
        Ok(result) => match method {
            Some(Method::List) => {
                if let Some(terminals) = result.get_mut("terminals").and_then(Value::as_array_mut) {
                    for record in terminals {
                        reshape_record(sim, record);
                    }
                }
            }
            Some(Method::Get) => reshape_record(sim, result),
            Some(Method::Read) => {
                if let Some(screen) = result.as_object_mut() {
                    for field in DROPPED_SCREEN_FIELDS {
                        screen.remove(field);
                    }
                }
                show_status(sim, result);
            }
            Some(Method::Send) => show_status(sim, result),
            Some(Method::Hello | Method::Discover | Method::MachineList) | None => {}
        },
    }
}

/// One record: the extra fields real cores send, without the ones they lack.
fn reshape_record(sim: &Sim, record: &mut Value) {
    show_status(sim, record);
    let Some(fields) = record.as_object_mut() else {
        return;
    };
    let program = fields.get("program").cloned().unwrap_or(Value::Null);
    let running = fields.get("finished_ms").is_none_or(Value::is_null);
    for field in DROPPED_FIELDS {
        fields.remove(field);
    }
    fields.insert("argv".into(), json!([program]));
    fields.insert("app".into(), program.clone());
    fields.insert("foreground".into(), program);
    fields.insert(
        "state".into(),
        json!(if running { "running" } else { "exited" }),
    );
    fields.insert("labels".into(), json!({ "team": LABEL }));
    fields.insert("parent".into(), Value::Null);
}

/// The status word of a terminal that shows one outside the six.
fn show_status(sim: &Sim, result: &mut Value) {
    let Some(address) = result.get("address").and_then(Value::as_str) else {
        return;
    };
    if let Some(word) = sim.registry.get(address).and_then(|t| t.shown_status) {
        result["status"] = json!(word);
    }
}

/// Human text in `message`, the kind in `data.kind`, and a hint.
fn humanize(error: &mut RpcError) {
    if error.kind == RpcError::FROM_MACHINE {
        // Another core's answer, passed on as that core phrased it.
        return;
    }
    let data = &error.data;
    let text = |key: &str| {
        data.get(key)
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned()
    };
    let (kind, message) = match error.kind {
        "method_not_found" => (
            "unknown_method",
            format!("unknown method \"{}\"", text("method")),
        ),
        "status_mismatch" => (
            "status_mismatch",
            format!(
                "terminal {} is {}, not {}",
                text("address"),
                text("actual"),
                text("expected")
            ),
        ),
        "not_found" => ("not_found", format!("no terminal {}", text("address"))),
        "finished" => (
            "finished",
            format!("terminal {} has exited", text("address")),
        ),
        "blocked" => (
            "blocked",
            format!("terminal {} is waiting for a decision", text("address")),
        ),
        "busy" => ("busy", format!("terminal {} is busy", text("address"))),
        other => (
            other,
            match data.get("detail").and_then(Value::as_str) {
                Some(detail) => detail.to_owned(),
                None => other.replace('_', " "),
            },
        ),
    };
    let mut data: Map<String, Value> = error.data.clone();
    data.insert("kind".into(), json!(kind));
    data.insert("hint".into(), json!(HINT));
    error.data = data;
    error.message = Some(message);
}
