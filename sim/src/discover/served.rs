//! What this core serves, as its documents describe it: the fields of each
//! result with the JSON types they carry, read off the very structs it
//! answers with (in two samples: optional fields set, and not), records
//! and screens as `--evidence` reshapes them, and what each field is
//! (a terminal's address, a status, anything else). The params come from
//! `wire::params_of`.

use serde_json::{Value, json};

use crate::evidence::{DROPPED_FIELDS, DROPPED_SCREEN_FIELDS};
use crate::sim::Sim;
use crate::wire::{
    FRAMING_PLAIN, GENERATION, HelloResult, ListResult, ReadResult, Record, SUBMIT_KEY_ENTER,
    SendResult, Status, StatusWhy, TERMINAL_COLS, TERMINAL_ROWS,
};

/// The address the samples carry, to tell an address field by.
const SAMPLE_ADDRESS: &str = "t1";
/// The status the samples carry, to tell a status field by.
const SAMPLE_STATUS: Status = Status::Working;

/// What a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Holds {
    Address,
    Status,
    Other,
}

/// One field of a result.
#[derive(Debug, Clone)]
pub(super) struct Field {
    pub name: String,
    /// Its schema, without what `holds` says.
    pub schema: Value,
    pub holds: Holds,
}

/// The fields the samples of one result carry, by name, each with the
/// JSON types it carried (a list when more than one).
fn fields_of(samples: &[Value]) -> Vec<Field> {
    let mut names: Vec<&String> = samples
        .iter()
        .filter_map(Value::as_object)
        .flat_map(|o| o.keys())
        .collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let values: Vec<&Value> = samples.iter().filter_map(|s| s.get(name)).collect();
            let mut types: Vec<&str> = values.iter().map(|v| type_name(v)).collect();
            types.sort_unstable();
            types.dedup();
            let holds = match values.first().and_then(|v| v.as_str()) {
                Some(SAMPLE_ADDRESS) => Holds::Address,
                Some(word) if word == SAMPLE_STATUS.as_str() => Holds::Status,
                _ => Holds::Other,
            };
            let schema = match types.as_slice() {
                [one] => json!({ "type": one }),
                more => json!({ "type": more }),
            };
            Field {
                name: name.clone(),
                schema,
                holds,
            }
        })
        .collect()
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_u64() || n.is_i64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn sample(value: impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or_default()
}

/// The hello's fields.
pub(super) fn hello(sim: &Sim) -> Vec<Field> {
    fields_of(&[sample(HelloResult {
        core_id: &sim.identity.core_id,
        version: &sim.version,
        generation: GENERATION,
        framing: FRAMING_PLAIN,
        pid: sim.identity.pid,
        started_ms: sim.identity.started_ms,
    })])
}

/// Why a sample's status holds: all of it when `known`, else nothing.
fn sample_why(known: bool) -> StatusWhy {
    if known {
        StatusWhy {
            kind: Some("permission"),
            msg: Some("approve?".to_owned()),
            since_ms: Some(1),
        }
    } else {
        StatusWhy::default()
    }
}

/// The field of a list that holds its records.
pub(super) fn list() -> Vec<Field> {
    fields_of(&[sample(ListResult {
        terminals: Vec::new(),
    })])
}

/// A record's fields, as this core sends them.
pub(super) fn record(sim: &Sim) -> Vec<Field> {
    // Why a status holds is sent when known (and by a core that passes it
    // on): present in one sample, absent in the other, so optional.
    let record = |finished: Option<u64>, code: Option<i32>| {
        let why = finished.is_some() && sim.status_reasons;
        sample(Record {
            address: SAMPLE_ADDRESS.to_owned(),
            created_ms: 1,
            finished_ms: finished,
            exit_code: code,
            status: SAMPLE_STATUS,
            status_seq: 1,
            why: sample_why(why),
            title: String::new(),
            cwd: String::new(),
            program: String::new(),
            submit_key: SUBMIT_KEY_ENTER,
            rows: TERMINAL_ROWS,
            cols: TERMINAL_COLS,
        })
    };
    let mut fields = fields_of(&[record(Some(2), Some(0)), record(None, None)]);
    if sim.evidence {
        fields.retain(|f| !DROPPED_FIELDS.contains(&f.name.as_str()));
        fields.extend(
            added_record_fields()
                .into_iter()
                .map(|(name, schema)| Field {
                    name: name.to_owned(),
                    schema,
                    holds: Holds::Other,
                }),
        );
    }
    fields
}

/// A screen's fields.
pub(super) fn screen(sim: &Sim) -> Vec<Field> {
    let screen = |why: bool| {
        sample(ReadResult {
            address: SAMPLE_ADDRESS.to_owned(),
            created_ms: 1,
            text: String::new(),
            complete: true,
            rows: TERMINAL_ROWS,
            cols: TERMINAL_COLS,
            status: SAMPLE_STATUS,
            status_seq: 1,
            why: sample_why(why),
        })
    };
    let mut fields = fields_of(&[screen(sim.status_reasons), screen(false)]);
    if sim.evidence {
        fields.retain(|f| !DROPPED_SCREEN_FIELDS.contains(&f.name.as_str()));
    }
    fields
}

/// A send result's fields.
pub(super) fn sent() -> Vec<Field> {
    fields_of(&[sample(SendResult {
        address: SAMPLE_ADDRESS.to_owned(),
        created_ms: 1,
        accepted: true,
        status: SAMPLE_STATUS,
        status_seq: 1,
        started: true,
    })])
}

/// Fields an evidence core's records add, with their schemas.
pub(super) fn added_record_fields() -> [(&'static str, Value); 6] {
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
