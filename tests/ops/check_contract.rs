//! `inspect-core --check-contract`: the first real user's one command. It
//! finds no difference against the modelled simulator, names each kind of
//! difference against `hc-sim --evidence` and against a core of another
//! version, compares an OpenRPC document with `--schema`, prints one JSON
//! document with `--json`, writes a shareable record with `--record`, and
//! never sends anything to any terminal.

use serde_json::{Value, json};

use crate::support::{Sim, SimOptions, run_adapter};

/// `inspect-core --check-contract` with `extra` flags against `sim`; it
/// must send nothing to any terminal.
fn check(sim: &Sim, extra: &[&str]) -> (i32, String, String) {
    let answer = check_config(&sim.config(json!({})), extra);
    assert_eq!(sim.calls("terminal.send"), 0, "the check sent something");
    answer
}

/// `inspect-core --check-contract` with `extra` flags and the config at `config`.
fn check_config(config: &std::path::Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        "inspect-core",
        "--config",
        config.to_str().unwrap(),
        "--check-contract",
    ];
    args.extend_from_slice(extra);
    run_adapter(&args, &[])
}

#[test]
fn the_modelled_simulator_shows_no_difference() {
    let sim = Sim::start(SimOptions {
        agents: 1,
        shells: 1,
        idle_records: 1,
        ..SimOptions::default()
    });
    let (code, out, err) = check(&sim, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("no difference from the model"), "{out}");
    assert!(out.contains("3 terminal(s) looked at"), "{out}");
}

#[test]
fn an_evidence_core_shows_each_kind_of_difference() {
    let sim = Sim::start(SimOptions {
        agents: 1,
        evidence: true,
        ..SimOptions::default()
    });
    let (code, out, err) = check(&sim, &[]);
    assert_eq!(code, 1, "{out}{err}");
    for heading in [
        "modelled fields missing",
        "extra fields present",
        "status values outside the model",
        "error objects whose message is not the kind's name",
    ] {
        assert!(out.contains(heading), "no {heading:?} in\n{out}");
    }
    for detail in [
        "terminal.list terminals[].title: missing",
        "terminal.get argv: present, not in the model",
        "\"paused\" is not one of the model's values",
        "unknown method",
    ] {
        assert!(out.contains(detail), "no {detail:?} in\n{out}");
    }
    assert!(
        err.contains("difference(s) between this core and the modelled contract"),
        "{err}"
    );
}

#[test]
fn a_core_of_another_version_is_reported_first_and_still_checked() {
    let sim = Sim::start(SimOptions {
        agents: 1,
        faults: vec!["wrong-version:hc.hello".to_owned()],
        ..SimOptions::default()
    });
    let (code, out, err) = check(&sim, &[]);
    assert_eq!(code, 1, "{out}{err}");
    let version = out.lines().nth(1).unwrap_or_default();
    assert!(
        version.starts_with("version: 0.1.14 (not accepted: serve, allow and the tools refuse"),
        "{out}"
    );
    assert!(
        out.contains("terminal.read x1"),
        "the check stopped at the pin: {out}"
    );
    // The pin's own refusal names the check.
    let config = sim.config(json!({}));
    let (code, _, err) = run_adapter(&["inspect-core", "--config", config.to_str().unwrap()], &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("inspect-core --check-contract --accept --config"),
        "{err}"
    );
}

#[test]
fn json_record_and_schema_behave_as_documented() {
    let sim = Sim::start(SimOptions {
        agents: 1,
        evidence: true,
        ..SimOptions::default()
    });
    // --json: one document, differences grouped and counted.
    let (code, out, _) = check(&sim, &["--json"]);
    assert_eq!(code, 1);
    let doc: Value = serde_json::from_str(&out).expect("one JSON document");
    assert_eq!(doc["version_matches"], true);
    let groups: Vec<&str> = doc["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["group"].as_str().unwrap())
        .collect();
    for group in ["missing", "extra", "status_outside", "error_message"] {
        assert!(groups.contains(&group), "{group} in {groups:?}");
    }
    // --record: JSON lines of the exchange, nothing private in them.
    let record = sim.dir.path().join("exchange.jsonl");
    let (_, out, err) = check(&sim, &["--record", record.to_str().unwrap()]);
    assert!(out.contains("recorded the exchange"), "{out}{err}");
    let written = std::fs::read_to_string(&record).unwrap();
    let lines: Vec<Value> = written
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert!(lines.iter().any(|l| l["direction"] == "request"));
    assert!(
        lines
            .iter()
            .any(|l| l["message"]["result"]["text"]["redacted"] == true),
        "a screen kept as length and digest"
    );
    let cwd = std::env::current_dir().unwrap();
    for private in [
        "sim-agent>",
        cwd.to_str().unwrap(),
        hc_sim::evidence::LABEL,
        "see `hc schema`",
    ] {
        assert!(!written.contains(private), "{private} is in the record");
    }
    // --schema: the model itself differs in nothing; a changed one shows it.
    let model = sim.dir.path().join("model.json");
    std::fs::write(&model, herdr_core_mcp::wire::CONTRACT_DOCUMENT).unwrap();
    let plain = Sim::start(SimOptions::agents(1));
    let (code, out, _) = check(&plain, &["--schema", model.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    let mut changed: Value = serde_json::from_str(herdr_core_mcp::wire::CONTRACT_DOCUMENT).unwrap();
    changed["methods"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "events.subscribe",
        "params": [], "result": {"name": "r", "schema": {"type": "object"}}}));
    changed["components"]["schemas"]["Hello"]["properties"]["generation"] =
        json!({"type": "string"});
    let theirs = sim.dir.path().join("theirs.json");
    std::fs::write(&theirs, changed.to_string()).unwrap();
    let (code, out, _) = check(&plain, &["--schema", theirs.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("(the --schema document)"), "{out}");
    assert!(
        out.contains("events.subscribe: a method the model does not name"),
        "{out}"
    );
    assert!(
        out.contains(
            "! [results read] hc.hello result.generation: typed string there: the adapter decodes integer only"
        ),
        "{out}"
    );
    // Not an OpenRPC document: a usage error, and nothing asked.
    let bad = sim.dir.path().join("bad.json");
    std::fs::write(&bad, "{\"openrpc\": \"1.3.2\"}").unwrap();
    let (code, _, err) = check(&plain, &["--schema", bad.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("has no `methods` array"), "{err}");
}

#[test]
fn a_core_that_cannot_be_reached_is_a_runtime_failure() {
    let dir = tempfile::tempdir().unwrap();
    let config = crate::support::write_config(
        dir.path(),
        &json!({"socketPath": dir.path().join("no-hc.sock")}),
    );
    let (code, out, _) = check_config(&config, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("the core could not be reached"), "{out}");
}

#[test]
fn a_core_that_stops_answering_ends_the_check_at_that_call() {
    let sim = Sim::start(SimOptions {
        agents: 2,
        faults: vec!["no-reply:terminal.read".to_owned()],
        ..SimOptions::default()
    });
    let (code, out, _) = check_config(&sim.config(json!({"timeoutMs": 300})), &[]);
    assert_eq!(sim.calls("terminal.send"), 0, "the check sent something");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("terminal.read: no reply within timeoutMs; the check stops here"),
        "{out}"
    );
    assert_eq!(sim.calls("terminal.read"), 1, "it went on asking: {out}");
    assert!(out.contains("1 terminal(s) looked at"), "{out}");
}

#[tokio::test]
async fn a_fifo_or_a_device_as_schema_or_record_is_refused_at_once() {
    use std::time::Duration;

    use crate::support::commands::{adapter, finished_within};

    let sim = Sim::start(SimOptions::default());
    let config = sim.config(json!({}));
    let fifo = sim.dir.path().join("schema.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let big = sim.dir.path().join("big.json");
    std::fs::write(&big, vec![b' '; 2 * 1024 * 1024]).unwrap();
    let fifo = fifo.to_str().unwrap();
    let cases: [(&str, &str, &str); 5] = [
        ("--schema", fifo, "is a FIFO, not a regular file"),
        ("--schema", "/dev/zero", "is a device, not a regular file"),
        ("--schema", big.to_str().unwrap(), "is over 1048576 bytes"),
        ("--record", fifo, "cannot write the record"),
        ("--record", "/dev/zero", "cannot write the record"),
    ];
    for (flag, path, said) in cases {
        let output = finished_within(
            adapter(&[
                "inspect-core",
                "--config",
                config.to_str().unwrap(),
                "--check-contract",
                flag,
                path,
            ]),
            Duration::from_secs(5),
        )
        .await;
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{flag} {path}: {err}");
        assert!(err.contains(said), "{flag} {path}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    }
    assert_eq!(sim.calls("terminal.send"), 0);
}

/// A hostile core's words are printed bounded: a 10 KB version, and a
/// document of 10,000 methods (each listed kind cut at 20 lines, with a
/// count of the rest).
#[test]
fn a_huge_version_and_a_document_of_ten_thousand_methods_print_bounded() {
    let sim = Sim::start(SimOptions {
        agents: 1,
        version: Some("9".repeat(10_000)),
        ..SimOptions::default()
    });
    let (code, out, err) = check(&sim, &["--accept"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.len() + err.len() < 8 * 1024,
        "{} bytes",
        out.len() + err.len()
    );
    assert!(!out.contains(&"9".repeat(200)), "{out}");
    assert!(!err.contains(&"9".repeat(200)), "{err}");
    assert!(out.contains("[10000 chars]"), "{out}");

    let plain = Sim::start(SimOptions::agents(1));
    let mut document: Value =
        serde_json::from_str(herdr_core_mcp::wire::CONTRACT_DOCUMENT).unwrap();
    let methods = document["methods"].as_array_mut().unwrap();
    for i in 0..10_000 {
        methods.push(json!({"name": format!("extra.method_{i:05}"), "params": [],
            "result": {"name": "r", "schema": {"type": "object"}}}));
    }
    let path = plain.dir.path().join("huge.json");
    std::fs::write(&path, document.to_string()).unwrap();
    let (code, out, _) = check(&plain, &["--schema", path.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.len() < 16 * 1024, "{} bytes", out.len());
    assert!(out.contains("… and 9980 more of this kind"), "{out}");
    let (_, json_out, _) = check(&plain, &["--schema", path.to_str().unwrap(), "--json"]);
    let report: Value = serde_json::from_str(&json_out).unwrap();
    assert_eq!(report["differences"].as_array().map(Vec::len), Some(500));
    assert_eq!(report["differences_not_listed"], 9_500);
    assert!(json_out.len() < 256 * 1024, "{} bytes", json_out.len());
}

/// It says whether a core passes on why a status holds, and what
/// `machine.list` answers; neither is a difference.
#[tokio::test]
async fn it_says_whether_reasons_are_passed_on_and_what_machine_list_answers() {
    let build = Sim::start(SimOptions::agents(1));
    let sim = Sim::start(SimOptions::agents(1).machine("build", &build.socket));
    let hc = herdr_core_mcp::HcClient::new(&sim.socket, std::time::Duration::from_secs(5));
    crate::support::waits::wait_status(&hc, "t1", herdr_core_mcp::wire::TerminalStatus::Idle).await;
    let core = hc.hello().await.unwrap().core_id.clone();
    let ask = herdr_core_mcp::SendRequest {
        address: "t1",
        text: "ask me /block",
        guard: None,
    };
    hc.send(ask, &core).await.unwrap();
    crate::support::waits::wait_status(&hc, "t1", herdr_core_mcp::wire::TerminalStatus::Blocked)
        .await;
    // The arranging send is not the check's.
    sim.control("reset_stats", json!({}));
    let (code, out, err) = check(&sim, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("machines: machine.list answered 1 machine(s): build connected"),
        "{out}"
    );
    assert!(out.contains("why a status holds: passed on"), "{out}");

    let silent = Sim::start(SimOptions {
        no_status_reasons: true,
        ..SimOptions::agents(1)
    });
    let (code, out, err) = check(&silent, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("why a status holds: not passed on"), "{out}");
    assert!(
        out.contains("machines: machine.list answered 0 machine(s)"),
        "{out}"
    );
}
