//! The contract as data: `src/hc/hc-0.1.15.openrpc.json` and its Rust
//! mirror `src/hc/wire.rs` name the same methods and fields, and every
//! request the adapter sends and every reply the simulator gives in a
//! session of every tool validates against the document (checked with a
//! JSON Schema validator, through a relay that records both directions).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use herdr_core_mcp::wire::{
    self, CONTRACT_DOCUMENT, GetParams, Hello, ListParams, Method, ReadParams, ReadResult,
    SendGuard, SendParams, SendResult, TerminalRecord,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

use crate::support::mcp::{self, call, structured};
use crate::support::world::approve_all;
use crate::support::{Sim, SimOptions, in_process};

fn document() -> Value {
    serde_json::from_str(CONTRACT_DOCUMENT).expect("the document is JSON")
}

/// The document's method `name` and its index.
fn method<'a>(doc: &'a Value, name: &str) -> (usize, &'a Value) {
    doc["methods"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .find(|(_, m)| m["name"] == name)
        .unwrap_or_else(|| panic!("the document has no {name}"))
}

/// The properties a schema (after `$ref`s) names.
fn property_names(doc: &Value, schema: &Value) -> BTreeSet<String> {
    let mut schema = schema;
    while let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        schema = doc.pointer(&reference[1..]).expect("a local $ref");
    }
    schema["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// The properties of the schema schemars derives for `T`.
fn rust_fields<T: schemars::JsonSchema>() -> BTreeSet<String> {
    let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap();
    schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

fn keys(value: impl serde::Serialize) -> BTreeSet<String> {
    serde_json::to_value(value)
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[test]
fn wire_and_the_document_name_the_same_methods_and_fields() {
    let doc = document();
    let names: Vec<&str> = doc["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, Method::ALL.map(Method::as_str));

    let params = |name: &str| -> BTreeSet<String> {
        method(&doc, name).1["params"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let hello = herdr_core_mcp::hello_params();
    assert_eq!(keys(&hello), params("hc.hello"));
    assert_eq!(
        keys(ListParams {
            include_finished: true
        }),
        params("terminal.list")
    );
    assert_eq!(keys(GetParams { address: "t1" }), params("terminal.get"));
    assert_eq!(
        keys(ReadParams {
            address: "t1",
            lines: 0
        }),
        params("terminal.read")
    );
    let send = SendParams {
        address: "t1",
        text: "x",
        submit: true,
        guard: Some(SendGuard::Idle),
        force: Some(false),
    };
    assert_eq!(keys(&send), params("terminal.send"));

    let result = |name: &str| property_names(&doc, &method(&doc, name).1["result"]["schema"]);
    assert_eq!(rust_fields::<Hello>(), result("hc.hello"));
    let mut record = rust_fields::<TerminalRecord>();
    // The adapter's own: the word hc reported when it is none of the six.
    assert!(record.remove("reported_status"));
    // hc's `status_msg` and `status_ms`, as the adapter shows them: the
    // reason escaped, the age read when the record was.
    assert!(record.remove("status_reason") && record.remove("status_age_ms"));
    record.extend(["status_msg".to_owned(), "status_ms".to_owned()]);
    assert_eq!(record, result("terminal.get"));
    // A machine's terminal's answers name its machine (contract §8): the
    // adapter reads which from the address.
    let with_machine = |mut fields: BTreeSet<String>| {
        fields.insert("machine".to_owned());
        fields
    };
    assert_eq!(
        with_machine(rust_fields::<ReadResult>()),
        result("terminal.read")
    );
    assert_eq!(
        with_machine(rust_fields::<SendResult>()),
        result("terminal.send")
    );
    let error_kinds: BTreeSet<&str> = doc["components"]["errors"]
        .as_object()
        .unwrap()
        .values()
        .map(|e| e["data"]["kind"].as_str().unwrap())
        .collect();
    // The machine kinds are contract §8's model, outside the 0.1.15
    // document.
    let machine_kinds = [
        wire::ErrorKind::MachineUnavailable,
        wire::ErrorKind::MachineLost,
    ];
    let codes: BTreeSet<&str> = wire::ErrorKind::all()
        .iter()
        .filter(|k| !machine_kinds.contains(k))
        .map(|k| k.name())
        .collect();
    assert_eq!(error_kinds, codes);
}

/// One line through the relay: which way, on which connection.
#[derive(Debug, Clone)]
struct Seen {
    to_core: bool,
    connection: usize,
    line: Value,
}

/// A Unix socket at `path` that passes every connection on to `core`,
/// keeping each line it carries.
async fn relay(path: &Path, core: PathBuf) -> Arc<Mutex<Vec<Seen>>> {
    let listener = UnixListener::bind(path).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    tokio::spawn(async move {
        let mut connection = 0;
        while let Ok((client, _)) = listener.accept().await {
            connection += 1;
            let Ok(upstream) = UnixStream::connect(&core).await else {
                continue;
            };
            let (client_read, client_write) = client.into_split();
            let (core_read, core_write) = upstream.into_split();
            tokio::spawn(pass(
                client_read,
                core_write,
                true,
                connection,
                Arc::clone(&kept),
            ));
            tokio::spawn(pass(
                core_read,
                client_write,
                false,
                connection,
                Arc::clone(&kept),
            ));
        }
    });
    seen
}

async fn pass(
    from: tokio::net::unix::OwnedReadHalf,
    mut to: tokio::net::unix::OwnedWriteHalf,
    to_core: bool,
    connection: usize,
    seen: Arc<Mutex<Vec<Seen>>>,
) {
    let mut lines = BufReader::new(from).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let value = serde_json::from_str(&line).expect("every line on the socket is JSON");
        seen.lock().unwrap().push(Seen {
            to_core,
            connection,
            line: value,
        });
        if to.write_all(format!("{line}\n").as_bytes()).await.is_err() {
            return;
        }
    }
}

/// A validator for the schema at `pointer` inside the document (so its
/// `$ref`s resolve).
fn validator_at(pointer: &str) -> jsonschema::Validator {
    let mut schema = document();
    schema["$ref"] = json!(format!("#{pointer}"));
    jsonschema::validator_for(&schema).expect("a valid JSON Schema")
}

/// The params of `name` as one object schema, the document around it.
fn params_validator(name: &str) -> jsonschema::Validator {
    let doc = document();
    let (index, found) = method(&doc, name);
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    for (i, param) in found["params"].as_array().unwrap().iter().enumerate() {
        let param_name = param["name"].as_str().unwrap().to_owned();
        properties.insert(
            param_name.clone(),
            json!({"$ref": format!("#/methods/{index}/params/{i}/schema")}),
        );
        if param["required"] == true {
            required.push(param_name);
        }
    }
    let mut schema = doc;
    schema["type"] = json!("object");
    schema["properties"] = Value::Object(properties);
    schema["required"] = json!(required);
    schema["additionalProperties"] = json!(false);
    jsonschema::validator_for(&schema).expect("a valid JSON Schema")
}

#[tokio::test]
async fn every_request_and_reply_of_a_session_validates_against_the_document() {
    let sim = Sim::start(SimOptions {
        agents: 1,
        shells: 1,
        agent_delay_ms: Some(100),
        ..SimOptions::default()
    });
    let relay_path = sim.dir.path().join("relay.sock");
    let seen = relay(&relay_path, sim.socket.clone()).await;
    let hc = herdr_core_mcp::HcClient::new(&sim.socket, std::time::Duration::from_secs(5));
    crate::support::waits::wait_status(&hc, "t1", wire::TerminalStatus::Idle).await;
    let config = crate::support::write_config(
        sim.dir.path(),
        &json!({"socketPath": relay_path, "coreId": sim.core_id,
            "sendAllowlist": approve_all(&hc).await, "timeoutMs": 5000}),
    );
    let client = in_process::stdio(&config).await;
    // Every tool, and each kind of reply: a record, a list, a screen, an
    // acceptance, a status_mismatch, a not_found.
    call(&client, "list_sessions", json!({"include_finished": true})).await;
    call(&client, "read_output", json!({"address": "t1"})).await;
    let sent = mcp::send_prompt(&client, "t1", "validate me").await;
    assert_eq!(sent["outcome"], "sent", "{sent}");
    let waited = call(
        &client,
        "wait_for_status",
        json!({"targets": [{"address": "t1", "after_seq": sent["core_status_seq"]}],
            "until": ["done"], "timeout_ms": 20000, "include_output": true}),
    )
    .await;
    assert_eq!(structured(&waited)["outcome"], "reached");
    call(
        &client,
        "wait_for_output",
        json!({"address": "t2", "quiet_ms": 100, "timeout_ms": 300}),
    )
    .await;
    let refused = mcp::send_prompt(&client, "t1", "done, not idle").await;
    assert_eq!(refused["reason_code"], "status_mismatch", "{refused}");
    call(&client, "read_output", json!({"address": "t9"})).await;

    // The validator does refuse what the document does not allow.
    let (get, _) = method(&document(), "terminal.get");
    let record = validator_at(&format!("/methods/{get}/result/schema"));
    assert!(!record.is_valid(&json!({"address": "t1", "status": "idle", "status_seq": 1})));
    assert!(
        !params_validator("terminal.read").is_valid(&json!({"address": "t1", "lines": 0, "x": 1}))
    );

    let seen = seen.lock().unwrap().clone();
    let mut asked: HashMap<(usize, Value), String> = HashMap::new();
    let mut checked = BTreeSet::new();
    for Seen {
        to_core,
        connection,
        line,
    } in &seen
    {
        if *to_core {
            let name = line["method"].as_str().expect("a request names its method");
            if name == "machine.list" {
                // Contract §8's model, outside the 0.1.15 document.
                asked.insert((*connection, line["id"].clone()), name.to_owned());
                continue;
            }
            let valid = params_validator(name);
            let errors: Vec<String> = valid
                .iter_errors(&line["params"])
                .map(|e| e.to_string())
                .collect();
            assert!(
                errors.is_empty(),
                "the adapter's {name} request: {errors:?}\n{line}"
            );
            asked.insert((*connection, line["id"].clone()), name.to_owned());
            checked.insert(format!("request {name}"));
            continue;
        }
        let name = asked
            .get(&(*connection, line["id"].clone()))
            .unwrap_or_else(|| panic!("a reply to no request: {line}"));
        if name == "machine.list" {
            continue;
        }
        if let Some(result) = line.get("result") {
            let (index, _) = method(&document(), name);
            let valid = validator_at(&format!("/methods/{index}/result/schema"));
            let errors: Vec<String> = valid.iter_errors(result).map(|e| e.to_string()).collect();
            assert!(
                errors.is_empty(),
                "the simulator's {name} result: {errors:?}\n{line}"
            );
            checked.insert(format!("result {name}"));
        } else {
            // An error object as the document's errors list them: the
            // code of its kind, a message, and `data.kind`.
            let error = &line["error"];
            let kind = error["data"]["kind"].as_str().expect("data.kind");
            let modelled = &document()["components"]["errors"][kind];
            assert_eq!(modelled["code"], error["code"], "{line}");
            assert!(error["message"].is_string(), "{line}");
            checked.insert(format!("error {kind}"));
        }
    }
    for expected in [
        "request hc.hello",
        "request terminal.list",
        "request terminal.get",
        "request terminal.read",
        "request terminal.send",
        "result hc.hello",
        "result terminal.list",
        "result terminal.get",
        "result terminal.read",
        "result terminal.send",
        "error status_mismatch",
        "error not_found",
    ] {
        assert!(
            checked.contains(expected),
            "never saw {expected}: {checked:?}"
        );
    }
}
